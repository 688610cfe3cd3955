"""The e-commerce stack: the shop single table with its stream, a sharded product-view counter,
an audit trail of every change (counter items excluded), an orders API, the operations
dashboard with alarms for all of them, and the table's contract published for consumers."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from constructs_lib import (
    ModelContract,
    OperationsSettings,
    ShardedCounter,
    SingleTable,
    StreamAudit,
    TableFunction,
)
from examples.shop.model import shop_model

HERE = Path(__file__).resolve().parent
#: Where the shop publishes its table's contract (name, ARNs, model and fingerprint) in SSM.
CONTRACT_PREFIX = "/constructs-lib-showcase/shop/data"


class ShopStack(cdk.Stack):
    """Users, orders, order items, products and sessions in one table; see ``examples/shop/README.md``."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.data = SingleTable(
            self,
            "Data",
            model=shop_model,
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            # A CloudWatch dashboard and alarms (throttles, errors, latency); the counter and the
            # audit below add their rows and alarms to it.
            operations=OperationsSettings(),
            # Consumers in other stacks or repositories import the table from these SSM parameters
            # (SingleTable.from_parameters; see examples/reporting).
            publish=ModelContract(parameter_prefix=CONTRACT_PREFIX),
        )
        # Product pages can go viral: size the view counter for 50,000 views/s of one product.
        # An idempotent increment (a request id per view) is one conditional PutItem, 1 WCU like
        # any other: 50,000 x 1.2 headroom / 1,000 WCU per partition = 60 shards. The aggregator
        # adds what the table's stream delivers (its new images carry each write's amount).
        self.product_views = ShardedCounter(
            self,
            "ProductViews",
            table=self.data,
            name="product_views",
            expected_writes_per_second=50_000,
            idempotency_window=cdk.Duration.hours(24),
        )
        # Every change to users, orders, products and sessions, answerable for a year; counter
        # items are filtered out before they invoke anything; emails are never stored in clear.
        self.audit = StreamAudit(
            self,
            "Audit",
            source=self.data,
            exclude_entities=ShardedCounter.ENTITIES,
            redact=["email"],
            retention=cdk.Duration.days(365),
        )
        self.orders_api = TableFunction(
            self,
            "OrdersApi",
            table=self.data,
            entry=HERE / "handlers" / "orders_api.py",
            handler="handler",
            # The declared scope: the role gets exactly these (Query on the table and GSI1 for
            # USER#/ORDER# keys, on GSI3 for STATUS#*#* — every shard —, transaction-only puts,
            # one update), and the bundled client
            # refuses anything else before it reaches AWS.
            patterns=["user's orders newest first", "order by id", "items of an order", "orders by status newest first"],
            writes={"Order": ["transaction_put", "update"], "OrderItem": ["transaction_put"]},
            description="Orders API on the shop single table",
            counters=[self.product_views],
        )
        cdk.CfnOutput(self, "TableName", value=self.data.table_name)
        cdk.CfnOutput(self, "OrdersApiFunction", value=self.orders_api.function.function_name)
        cdk.CfnOutput(self, "ProductViewsAggregator", value=self.product_views.aggregator_function.function_name)
        cdk.CfnOutput(self, "AuditTableName", value=self.audit.table.table_name)
