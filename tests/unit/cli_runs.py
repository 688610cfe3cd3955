"""Running the command line from tests: ``main()`` for several command lines in one fresh
interpreter (one jsii start for all of them), each case's exit status and output kept apart."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple


class Run(NamedTuple):
    code: int
    out: str
    err: str


#: Several command lines in one interpreter: [argv, exit status, stdout, stderr] per command line.
IN_ONE_PROCESS = """
import contextlib, io, json, sys
from constructs_lib.__main__ import main

out = []
for argv in json.loads(sys.argv[1]):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
        code = main(argv)
    out.append([argv, code, stdout.getvalue(), stderr.getvalue()])
print(json.dumps(out))
"""


def run_in_one_process(cases: Mapping[str, Sequence[str]], *, cwd: Path) -> dict[str, Run]:
    """Each named command line run by ``main()``, all in one new interpreter started in ``cwd``."""
    done = subprocess.run([sys.executable, "-c", IN_ONE_PROCESS, json.dumps([list(a) for a in cases.values()])],
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return {name: Run(code, stdout, stderr)
            for name, (_, code, stdout, stderr) in zip(cases, json.loads(done.stdout), strict=True)}
