#!/usr/bin/env python3
"""``pip install ARGS`` into the running virtualenv, done by uv when pip's configuration allows.

The Makefile runs it with ``.venv/bin/python`` after installing the pinned uv into the venv. uv
installs the same requirements about twice as fast as pip (parallel downloads and bytecode
compilation), but it does not read pip's configuration, so this translates it: the values
``pip config list`` reports (pip's own view: its config files and ``PIP_*`` variables, the
variables winning) become uv's options. An option with no uv equivalent listed here is never
dropped: the install is then done by pip itself, with a note saying which option forced it.
Rationale and figures: docs/adr/0060-demo-time.md.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: pip options that change nothing about what gets installed (output, prompts, pip's own cache).
IGNORED = frozenset({
    "disable-pip-version-check", "no-input", "progress-bar", "quiet", "verbose", "no-color", "root-user-action",
    "cache-dir", "no-cache-dir", "retries", "require-virtualenv", "no-python-version-warning",
})
#: pip options whose value lists several entries separated by whitespace.
_LISTS = frozenset({"extra-index-url", "find-links", "constraint", "trusted-host"})
_LINE = re.compile(r"^(?P<section>:env:|[\w-]+)\.(?P<option>[\w-]+)=(?P<value>.*)$")
#: Later sections win: ``install`` over ``global``, ``PIP_*`` variables over both.
_PRECEDENCE = {"global": 0, "install": 1, ":env:": 2}


def pip_options(listing: str) -> dict[str, str]:
    """pip's effective options from ``pip config list`` output (``global.find-links='/opt/wheels'``).

    Sections other than ``global``, ``install`` and the environment (``:env:``) configure other
    pip commands and are left out."""
    chosen: dict[str, tuple[int, str]] = {}
    for line in listing.splitlines():
        match = _LINE.match(line.strip())
        if not match or match["section"] not in _PRECEDENCE:
            continue
        rank = _PRECEDENCE[match["section"]]
        raw = match["value"]
        value = ast.literal_eval(raw) if raw[:1] in "'\"" else raw
        option = match["option"]
        if option not in chosen or rank >= chosen[option][0]:
            chosen[option] = (rank, str(value))
    return {option: value for option, (_, value) in chosen.items()}


def _true(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def uv_arguments(options: Mapping[str, str]) -> tuple[list[str], dict[str, str]] | str:
    """uv's arguments and environment for pip's ``options``, or the first option uv cannot take.

    ``--index-strategy unsafe-best-match`` makes uv choose among every index the way pip does (the
    best version found anywhere), not from the first index that has the package."""
    args = ["--compile-bytecode", "--index-strategy", "unsafe-best-match"]
    env: dict[str, str] = {}
    flags = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links",
             "constraint": "--constraint", "trusted-host": "--allow-insecure-host"}
    for option, value in sorted(options.items()):
        if option in IGNORED:
            continue
        if option in flags:
            for entry in value.split() if option in _LISTS else [value]:
                args += [flags[option], entry]
        elif option == "no-index":
            args += ["--no-index"] if _true(value) else []
        elif option == "pre":
            args += ["--prerelease", "allow"] if _true(value) else []
        elif option == "cert":
            env["SSL_CERT_FILE"] = value
        elif option == "client-cert":
            env["SSL_CLIENT_CERT"] = value
        elif option in ("timeout", "default-timeout"):
            env["UV_HTTP_TIMEOUT"] = value
        elif option == "proxy":
            env["HTTPS_PROXY"] = env["HTTP_PROXY"] = value
        else:
            return option
    return args, env


def main(argv: Sequence[str]) -> int:
    """Install ``argv`` (pip-install arguments) into this interpreter's environment."""
    python = sys.executable
    uv = Path(python).parent / "uv"
    listing = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    translated = uv_arguments(pip_options(listing.stdout))
    if isinstance(translated, str) or not uv.is_file():
        why = f"pip option {translated!r} has no uv equivalent here" if isinstance(translated, str) else f"no {uv}"
        print(f"venv_install: {why}; installing with pip", file=sys.stderr)
        return subprocess.run([python, "-m", "pip", "install", *argv], check=False).returncode
    args, env = translated
    command = [str(uv), "pip", "install", "--python", python, *args, *argv]
    print(" ".join(shlex.quote(part) for part in command))
    return subprocess.run(command, env={**os.environ, **env}, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
