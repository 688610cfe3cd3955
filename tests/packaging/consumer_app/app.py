"""The consumer repository's CDK app: a report on the support desk's table, which another
repository owns and deploys (the producer, publishing its contract under ``/desk/data``).

File first: the model comes from the producer's contract file, committed here as
``contracts/desk.contract.json`` (copied from the producer's ``cdk.out/desk.contract.json``, or
written by ``python -m constructs_lib contract export app.py`` in the producer's repository) —
no copy of the producer's code. A view adds the one access pattern only this repository reads.
The table is imported from the published SSM parameters; the report function declares the two
patterns it runs, so it may only Query the index ``GSI1``. The committed file is the pin
(``contract=``): at synth, what the function uses of the model (its slice: ``Ticket``, ``GSI1``)
is checked against it; at cold start, against the producer's *current* published contract, so an
additive producer change passes and a changed key of the slice is refused, naming it.
cdk-nag's ``AwsSolutionsChecks`` run on every synth: a finding fails it.

    npx cdk synth            # cdk.json: {"app": "python app.py"}
    python -m constructs_lib contract verify app.py --against contracts/desk.contract.json   # or ssm:/desk/data
    python -m constructs_lib contract slice app.py -o desk-reports.json   # the producer registers it
    npx cdk deploy DeskReports       # after the producer's DeskData
    python -m constructs_lib describe app.py     # the imported table, the function's scope and slice
"""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from constructs_lib import SingleTable, TableFunction
from constructs_lib.model import AccessPattern, Model

HERE = Path(__file__).resolve().parent
#: The producer's contract, committed in this repository.
CONTRACT = HERE / "contracts" / "desk.contract.json"
#: Where the producer publishes the table's contract.
CONTRACT_PREFIX = "/desk/data"

#: The producer's model plus the one pattern only this repository reads: an agent's queue from a
#: date on, open-ended (the producer declares the bounded "queue of an agent").
desk_view = Model.from_contract(CONTRACT).view(extra_patterns=[
    AccessPattern("queue of an agent since", entity="Ticket", index="GSI1", sk=">="),
])


class DeskReportsStack(cdk.Stack):
    """An agent's unresolved tickets by priority, read from the desk's ``GSI1``."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        # the view for its own pattern; the committed file as the pin every function's slice is checked against
        self.desk = SingleTable.from_parameters(
            self, "Desk", model=desk_view, contract=CONTRACT, parameter_prefix=CONTRACT_PREFIX,
        )
        self.report = TableFunction(
            self, "TicketReport", table=self.desk, entry=HERE / "handlers" / "report", index="index.py",
            # its scope: Query on GSI1 for AGENT#* keys is all it is granted (and all its client may run)
            patterns=["queue of an agent", "queue of an agent since"],
            description="An agent's unresolved tickets by priority, from the desk's GSI1",
        )


def build_app() -> cdk.App:
    """The app, with cdk-nag attached (not synthesized)."""
    app = cdk.App()
    DeskReportsStack(app, "DeskReports",
                     description="Support desk reports on the desk's table, imported from its contract")
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app().synth()
