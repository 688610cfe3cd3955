"""The CDK's built-in CloudFormation validation finds nothing in ``app.py``.

aws-cdk-lib validates every template at synth (``CloudFormationValidatePlugin``, reported as
warnings) unless ``CDK_VALIDATION=false``. Starting its engine costs about 5 s of CPU in each
process that synthesizes, so the suite turns it off (tests/conftest.py; docs/testing.md) and checks
it here instead, once, in a process with it on: every stack of the showcase, and a control stack
with known defects to show the check sees findings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

PROBE = Path(__file__).resolve().parent / "cdk_validation_probe.py"


def findings(report: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """``(plugin, rule, construct path)`` of every violation in a validation report."""
    assert report is not None, "no validation-report.json: the built-in validation did not run"
    return sorted((r["pluginName"], v["ruleName"], c["constructPath"])
                  for r in report["pluginReports"] for v in r.get("violations", []) for c in v["violatingConstructs"])


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "CDK_VALIDATION" and not k.startswith("PYTEST_")}
    out = tmp_path_factory.mktemp("validation")
    done = subprocess.run([sys.executable, PROBE, out / "app", out / "control"], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_the_builtin_validation_finds_nothing_in_the_showcase(reports: dict[str, Any]) -> None:
    # GIVEN app.py synthesized in a process with the CDK's built-in validation on
    # THEN it wrote its report, and the report holds no finding, not even a warning
    assert findings(reports["app"]) == []


def test_the_builtin_validation_flags_a_control_stack_with_known_defects(reports: dict[str, Any]) -> None:
    # GIVEN a control stack with a queue timeout over its maximum and a billing mode that does not exist,
    # synthesized in the same process
    # THEN the report names each defect (so an empty report above means the validation ran and found nothing)
    assert findings(reports["control"]) == [
        ("CloudFormation Validate", "F3003", "Control/Table"),
        ("CloudFormation Validate", "F3034", "Control/Queue"),
        ("CloudFormation Validate", "W3030", "Control/Table"),
    ]
