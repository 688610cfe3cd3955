"""Two stacks of one CDK app, as a user composes them: a producer owning the table and publishing
its name in an SSM parameter, and a consumer whose handler package works on that table.

Synthesized by tests/e2e/test_cross_stack.py with the plugin's ``cdk_synth`` and with the CDK
CLI (``cdk synth`` in this directory reads cdk.json, which asks for weak cross-stack references).
"""

from __future__ import annotations

import sys
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_ssm as ssm

from constructs_lib import SingleTable, TableFunction
from constructs_lib.model import AccessPattern, Entity, Model

HERE = Path(__file__).resolve().parent
PARAMETER = "/notes/table-name"
NOTES = Model(
    "notes",
    entities=[Entity("Note", pk="USER#{user_id}", sk="NOTE#{note_id}", fields=["user_id", "note_id", "text"])],
    access_patterns=[AccessPattern("notes of a user", entity="Note", sk="begins_with")],
)


class ProducerStack(cdk.Stack):
    def __init__(self, scope: cdk.App, id: str) -> None:
        super().__init__(scope, id)
        self.data = SingleTable(self, "Data", model=NOTES)
        ssm.StringParameter(self, "TableNameParameter", parameter_name=PARAMETER, string_value=self.data.table_name)


class ConsumerStack(cdk.Stack):
    def __init__(self, scope: cdk.App, id: str, *, data: SingleTable) -> None:
        super().__init__(scope, id)
        TableFunction(
            self, "NotesApi", table=data, entry=HERE / "notes_api",
            environment={
                "TABLE_NAME_FROM_SSM": ssm.StringParameter.value_for_string_parameter(self, PARAMETER),
                "TABLE_NAME_DYNAMIC": "{{resolve:ssm:" + PARAMETER + "}}",
                "OWNER": str(self.node.try_get_context("notes:owner")),
                "STAGE": str(self.node.try_get_context("notes:stage")),
            },
        )


def build(app: cdk.App) -> ConsumerStack:
    producer = ProducerStack(app, "NotesProducer")
    return ConsumerStack(app, "NotesConsumer", data=producer.data)


if __name__ == "__main__":
    main = cdk.App(outdir=sys.argv[1]) if len(sys.argv) > 1 else cdk.App()
    build(main)
    main.synth()
