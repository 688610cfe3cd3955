"""The consumer repository's CDK app: a report on the support desk's table, which another
repository owns and deploys (the producer, publishing its contract under ``/desk/data``).

The table is imported with the shared model from the published SSM parameters; the report
function may only Query the index ``GSI1``. The producer's model fingerprint is pinned in
``cdk.json`` (context ``desk:model-fingerprint``, printed in the producer's repository by
``python -m constructs_lib fingerprint model``): a shared model that no longer matches it fails
``cdk synth``. Without the pin, the check runs when the function is first called. cdk-nag's
``AwsSolutionsChecks`` run on every synth: a finding fails it.

    npx cdk synth            # cdk.json: {"app": "python app.py", "context": {...}}
    npx cdk deploy DeskReports       # after the producer's DeskData
"""

from __future__ import annotations

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks
from constructs import Construct
from model import desk_model

from constructs_lib import SingleTable, TableFunction

#: Where the producer publishes the table's contract.
CONTRACT_PREFIX = "/desk/data"


class DeskReportsStack(cdk.Stack):
    """An agent's unresolved tickets by priority, read from the desk's ``GSI1``."""

    def __init__(self, scope: Construct, id: str, *, expected_fingerprint: str | None = None, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.desk = SingleTable.from_parameters(
            self, "Desk", model=desk_model, parameter_prefix=CONTRACT_PREFIX, expected_fingerprint=expected_fingerprint,
        )
        self.report = TableFunction(
            self, "TicketReport", table=self.desk, entry="handlers/report", index="index.py",
            access=None,  # no table-wide grant: Query on GSI1 below is all it needs
            description="An agent's unresolved tickets by priority, from the desk's GSI1",
        )
        self.desk.grant_query(self.report.function, index="GSI1")


app = cdk.App()
DeskReportsStack(app, "DeskReports", expected_fingerprint=app.node.try_get_context("desk:model-fingerprint") or None,
                 description="Support desk reports on the desk's table, imported from its contract")
cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
app.synth()
