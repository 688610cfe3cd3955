"""Fixtures shared by the example tests: each example app synthesized once per session, with
cdk-nag's ``AwsSolutionsChecks`` attached, and cfn-lint on the templates it wrote.

``synth_example("examples.iot.app")`` imports the module, calls its ``build_app(outdir)`` (every
example app and the root ``app`` module have one) with cdk-nag attached, synthesizes it and
caches the result for the session. jsii costs ~3 s per process and each app a few more, so
every test of an example shares that one cloud assembly. Each module runs on its own
DynamoDB Local (tests/module_dynamodb_local.py).
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cfn_lint_check import lint_findings
from module_dynamodb_local import dynamodb_client, dynamodb_local, dynamodb_streams_client  # noqa: F401

# Quiet the jsii/Node notices in test output (same settings as the Makefile).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


@dataclass(frozen=True)
class ExampleSynth:
    """One example app synthesized with ``AwsSolutionsChecks``.

    Attributes
    ----------
    module : str
        The app module, e.g. ``"examples.iot.app"``.
    outdir : Path
        The cloud assembly directory (``cdk.out``).
    error : str or None
        The synthesis error if cdk-nag findings (or anything else) failed it, else None.
    report : dict
        ``validation-report.json`` of the assembly.
    """

    module: str
    outdir: Path
    error: str | None
    report: dict[str, Any]

    def template_file(self, stack: str) -> Path:
        """Path of ``<stack>.template.json``; fails the test with the synthesis error if absent."""
        path = self.outdir / f"{stack}.template.json"
        if not path.is_file():
            pytest.fail(f"{self.module}: no template for {stack!r} in {self.outdir} (synthesis error: {self.error})")
        return path

    def template(self, stack: str) -> dict[str, Any]:
        """The stack's synthesized template."""
        return dict(json.loads(self.template_file(stack).read_text(encoding="utf-8")))

    def violations(self) -> list[dict[str, Any]]:
        """cdk-nag findings left unacknowledged (errors and warnings)."""
        return [v for plugin in self.report.get("pluginReports", []) for v in plugin.get("violations", [])]

    def suppressed(self) -> list[dict[str, Any]]:
        """cdk-nag findings acknowledged in the construct tree, with the acknowledgment's reason."""
        return [v for plugin in self.report.get("pluginReports", []) for v in plugin.get("suppressedViolations", [])]

    def resources(self, stack: str, cfn_type: str) -> dict[str, dict[str, Any]]:
        """Logical id -> resource, for every resource of ``cfn_type`` in the stack."""
        return {lid: r for lid, r in self.template(stack)["Resources"].items() if r["Type"] == cfn_type}

    def function_id(self, stack: str, handler: str) -> str:
        """Logical id of the stack's one ``AWS::Lambda::Function`` whose ``Handler`` is ``handler``."""
        found = [lid for lid, r in self.resources(stack, "AWS::Lambda::Function").items()
                 if r["Properties"]["Handler"] == handler]
        assert len(found) == 1, f"expected one function with handler {handler!r}, found {found}"
        return found[0]

    def assert_nag_clean(self) -> None:
        """No cdk-nag finding left, and every suppressed one acknowledged by constructs_lib itself
        (``constructs_lib.constructs.nag``), with the library's reason, on the one resource concerned —
        nothing acknowledged by the example."""
        from constructs_lib.constructs import nag as _nag

        library = {
            "AwsSolutions-L1": _nag.PINNED_RUNTIME,
            "AwsSolutions-SQS3": _nag.QUEUE_IS_THE_DLQ,
            "AwsSolutions-SMG4": _nag.SALT_MUST_NOT_ROTATE,
        }
        assert self.error is None, self.error
        assert [p["pluginName"] for p in self.report["pluginReports"]] == ["AwsSolutions"]
        assert self.violations() == []
        suppressed = self.suppressed()
        assert suppressed, "AwsSolutionsChecks did not run (nothing suppressed at all)"
        for finding in suppressed:
            rule = finding["ruleName"]
            assert rule in library, f"{rule} suppressed by an acknowledgment that is not the library's: {finding}"
            assert finding["reason"] == library[rule], finding
            (resource,) = finding["violatingConstructs"]
            assert finding["acknowledgedAt"] == resource["constructPath"], finding


@pytest.fixture(scope="session")
def synth_example(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], ExampleSynth]:
    """Factory ``synth_example(module_name) -> ExampleSynth``, one synthesis per module per session."""
    cache: dict[str, ExampleSynth] = {}

    def synth(module_name: str) -> ExampleSynth:
        if module_name not in cache:
            import aws_cdk as cdk
            from cdk_nag import AwsSolutionsChecks

            build_app = importlib.import_module(module_name).build_app
            outdir = tmp_path_factory.mktemp(module_name.replace(".", "-") + "-cdk-out")
            app = build_app(str(outdir))
            cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
            error = None
            try:
                app.synth()
            except RuntimeError as exc:  # jsii raises a validation failure as RuntimeError
                error = str(exc)
            report_file = outdir / "validation-report.json"
            report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.is_file() else {}
            cache[module_name] = ExampleSynth(module_name, outdir, error, report)
        return cache[module_name]

    return synth


@pytest.fixture(scope="session")
def cfn_lint() -> Callable[[Path], list[str]]:
    """``cfn_lint(template_file) -> [finding, ...]``: cfn-lint's errors and warnings (``E``/``W``
    rules; informational ``I`` rules are not reported), as readable lines (tests/cfn_lint_check.py)."""
    return lint_findings
