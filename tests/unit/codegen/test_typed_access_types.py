"""A type checker (mypy) over code using the shop's generated typed module.

``typed_samples/ok_*.py`` use it correctly and must type-check with no error; each
``typed_samples/bad_*.py`` makes one mistake (a misspelled field, pattern or method, a value of
the wrong type) on a line marked ``# E: <error code>`` and must fail with exactly that code
there. One mypy run checks them all, with its cache in a temporary directory.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = Path(__file__).parent / "typed_samples"
# The samples and the typed module are checked strictly; the library's own modules are read
# for their types but not reported on, and the CDK (which a typed module never imports) is skipped.
CONFIG = """\
[mypy]
strict = True
follow_imports = silent
[mypy-aws_cdk.*,constructs.*,jsii.*,cdk_nag.*,botocore.*,boto3.*,constructs_lib.constructs.*,constructs_lib.testing.*]
follow_imports = skip
ignore_missing_imports = True
"""
_ERROR = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], set[str]]:
    tmp = tmp_path_factory.mktemp("mypy")
    config = tmp / "mypy.ini"
    config.write_text(CONFIG, encoding="utf-8")
    files = sorted(str(p.relative_to(ROOT)) for p in SAMPLES.glob("*.py"))
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp / "cache"),
         "--no-error-summary", "--show-error-codes", *files],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode in (0, 1), run.stderr or run.stdout  # 2 would be a crash or a usage error
    errors: dict[tuple[str, int], set[str]] = {}
    for line in run.stdout.splitlines():
        match = _ERROR.match(line)
        if match:
            errors.setdefault((Path(match["file"]).name, int(match["line"])), set()).add(match["code"])
        else:
            assert ": note: " in line, f"unexpected mypy output: {line}"
    return errors


def _expected(sample: Path) -> dict[tuple[str, int], set[str]]:
    found = {}
    for number, text in enumerate(sample.read_text(encoding="utf-8").splitlines(), start=1):
        marker = re.search(r"# E: ([a-z-]+)$", text)
        if marker:
            found[(sample.name, number)] = {marker.group(1)}
    return found


@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("ok_*.py")), ids=lambda p: p.stem)
def test_correct_use_type_checks_clean(sample: Path, mypy_errors: dict[tuple[str, int], set[str]]) -> None:
    # GIVEN code using the typed module as intended WHEN mypy --strict checks it THEN no error
    assert {k: v for k, v in mypy_errors.items() if k[0] == sample.name} == {}


@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("bad_*.py")), ids=lambda p: p.stem)
def test_each_mistake_is_caught_with_its_code(sample: Path, mypy_errors: dict[tuple[str, int], set[str]]) -> None:
    # GIVEN one deliberate mistake, marked WHEN mypy checks it THEN exactly that error, on that line
    expected = _expected(sample)
    assert expected, f"{sample.name} marks no expected error"
    assert {k: v for k, v in mypy_errors.items() if k[0] == sample.name} == expected
