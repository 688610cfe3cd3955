"""``constructs_lib.testing`` exports what docs/testing-your-stacks.md documents, and importing it stays light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import constructs_lib.testing as testing
from constructs_lib.testing import handlers

REPO = Path(__file__).resolve().parents[3]


def test_every_exported_name_resolves_and_fault_is_the_handlers_fault() -> None:
    # GIVEN the package's __all__
    # WHEN every name is looked up
    missing = [name for name in testing.__all__ if getattr(testing, name, None) is None]
    # THEN all resolve, and Fault (documented for fault injection) is exported
    assert missing == []
    assert "Fault" in testing.__all__ and testing.Fault is handlers.Fault
    assert testing.Fault("BatchWriteItem", "poison").code == "ValidationException"


def test_importing_fault_loads_neither_the_cdk_nor_boto3() -> None:
    # GIVEN a fresh interpreter
    code = (
        "import json, sys\n"
        "from constructs_lib.testing import Fault, LocalFunction  # noqa: F401\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('aws_cdk', 'jsii', 'constructs', 'boto3', 'botocore'))))\n"
    )
    # WHEN Fault and LocalFunction are imported from the testing package
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    # THEN no heavy module was loaded
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
