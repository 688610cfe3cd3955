"""The producer repository's CDK app: the support desk's table, owned and deployed here.

It owns the table (with a stream and the index ``GSI1`` the model declares), a sharded counter
of ticket updates and an audit trail of every change, and publishes the table's contract — name,
ARNs, the model and its fingerprint — as SSM parameters under ``/desk/data`` for the consumer
repository to import. cdk-nag's ``AwsSolutionsChecks`` run on every synth: a finding fails it.

    npx cdk synth            # cdk.json: {"app": "python app.py"}
    npx cdk deploy DeskData
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from cdk_nag import AwsSolutionsChecks
from constructs import Construct
from model import desk_model

from constructs_lib import ModelContract, ShardedCounter, SingleTable, StreamAudit

#: Where the contract is published; the consumer repository imports from the same prefix.
CONTRACT_PREFIX = "/desk/data"


class DeskDataStack(cdk.Stack):
    """The desk's table, its ticket-update counter and audit trail; publishes the contract."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.data = SingleTable(
            self, "Data", model=desk_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            publish=ModelContract(parameter_prefix=CONTRACT_PREFIX),
        )
        self.ticket_updates = ShardedCounter(self, "TicketUpdates", table=self.data, name="ticket_updates", shards=4)
        self.audit = StreamAudit(self, "Audit", source=self.data, exclude_entities=ShardedCounter.ENTITIES)


app = cdk.App()
DeskDataStack(app, "DeskData", description="Support desk: the tickets table and its published contract")
cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
app.synth()
