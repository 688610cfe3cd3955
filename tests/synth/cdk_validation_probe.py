"""Run as a script by test_cdk_builtin_validation.py, in a process whose environment has the CDK's
built-in CloudFormation validation on (the suite turns it off, tests/conftest.py): synthesizes
``app.py`` into ``argv[1]`` and a control stack with three known template defects into ``argv[2]``,
one jsii start for both, and prints each assembly's ``validation-report.json`` as one JSON object."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_sqs as sqs

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from app import build_app  # noqa: E402


def control(outdir: str) -> None:
    """A stack the validation must flag: a queue timeout over its maximum, a billing mode that
    does not exist, and (following from it) a table without the throughput PROVISIONED needs."""
    app = cdk.App(outdir=outdir)
    stack = cdk.Stack(app, "Control")
    sqs.CfnQueue(stack, "Queue", visibility_timeout=999_999)
    table = dynamodb.CfnTable(
        stack, "Table",
        key_schema=[dynamodb.CfnTable.KeySchemaProperty(attribute_name="pk", key_type="HASH")],
        attribute_definitions=[dynamodb.CfnTable.AttributeDefinitionProperty(attribute_name="pk",
                                                                              attribute_type="S")])
    table.add_property_override("BillingMode", "NOPE")
    app.synth()


def report(outdir: str) -> object:
    path = Path(outdir) / "validation-report.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def main(app_out: str, control_out: str) -> None:
    build_app(app_out).synth()
    control(control_out)
    print(json.dumps({"app": report(app_out), "control": report(control_out)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
