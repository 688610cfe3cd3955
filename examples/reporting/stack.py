"""The reporting stack: a consumer of the shop's table, deployable on its own (e.g. from another
repository). It owns no table: it imports ``ShopStack``'s from the contract the shop publishes in
SSM, with its view of the shop's committed contract file (``consumer_model.shop_view``), and runs a
pending-orders report granted one index."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from constructs import Construct

from constructs_lib import SingleTable, TableFunction
from examples.reporting.consumer_model import CONTRACT, SINCE, shop_view

HERE = Path(__file__).resolve().parent
#: Where the shop publishes its contract in SSM (its ``examples.shop.stack.CONTRACT_PREFIX``).
CONTRACT_PREFIX = "/constructs-lib-showcase/shop/data"


class ShopReportingStack(cdk.Stack):
    """Pending-orders reporting on the shop's table, imported with ``SingleTable.from_parameters``.

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    parameter_prefix
        Where the shop published its contract. Default :data:`CONTRACT_PREFIX`.
    description
        Stack description. Default none.
    env
        Stack environment. Default none (environment-agnostic).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        parameter_prefix: str = CONTRACT_PREFIX,
        description: str | None = None,
        env: cdk.Environment | None = None,
    ) -> None:
        super().__init__(scope, id, description=description, env=env)
        # Name and ARN are read from SSM at deploy time. The committed contract file is the pin:
        # each function's slice (the entities and indexes it uses) is checked against it at synth,
        # and against the shop's published contract at every cold start (a view keeps every
        # fingerprint of the contract it was made from).
        self.shop = SingleTable.from_parameters(self, "Shop", model=shop_view, contract=CONTRACT,
                                                parameter_prefix=parameter_prefix)
        self.pending_orders = TableFunction(
            self,
            "PendingOrdersReport",
            table=self.shop,
            entry=HERE / "handlers" / "pending_orders.py",
            # The shop's pattern and the view's own: Query on GSI2 for STATUS#* keys is all it
            # needs (and all its client may run).
            patterns=["pending orders by date", SINCE],
            description="Pending orders by day, from the shop's sparse GSI2",
        )
        cdk.CfnOutput(self, "PendingOrdersFunction", value=self.pending_orders.function.function_name)
