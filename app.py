#!/usr/bin/env python3
"""The showcase CDK app: every construct constructs_lib offers, on the e-commerce model.

``python app.py`` writes to ``cdk.out/`` (or ``$CDK_OUTDIR``, which ``cdk synth`` sets).
"""

from __future__ import annotations

import os
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_lib import ShardedCounter, SingleTable, StreamAudit, TableFunction
from constructs_lib.stream_audit import COUNTER_ENTITIES
from examples.saas.model import saas_model
from examples.shop.model import shop_model

HERE = Path(__file__).resolve().parent


class ShopStack(cdk.Stack):
    """The e-commerce single table, its stream, a sharded product-view counter, an audit trail of
    every change (counter items excluded), and an orders API."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.data = SingleTable(
            self,
            "Data",
            model=shop_model,
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
        )
        # Product pages can go viral: size the view counter for 50,000 views/s of one product.
        # Idempotent increments (a request id per view) double the WCU per write, hence 120 shards.
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
            exclude_entities=COUNTER_ENTITIES,
            redact=["email"],
            retention=cdk.Duration.days(365),
        )
        self.orders_api = TableFunction(
            self,
            "OrdersApi",
            table=self.data,
            entry=HERE / "examples" / "shop" / "handlers" / "orders_api.py",
            handler="handler",
            description="Orders API on the shop single table",
            counters=[self.product_views],
        )
        cdk.CfnOutput(self, "TableName", value=self.data.table_name)
        cdk.CfnOutput(self, "OrdersApiFunction", value=self.orders_api.function.function_name)
        cdk.CfnOutput(self, "ProductViewsAggregator", value=self.product_views.aggregator_function.function_name)
        cdk.CfnOutput(self, "AuditTableName", value=self.audit.table.table_name)


class SaasStack(cdk.Stack):
    """Multi-tenant documents: tenant-prefixed keys, a role confined to its caller's tenant, a
    per-index query grant for the back office, and an audit trail of every change."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.docs = SingleTable(self, "Docs", model=saas_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        # Assumed with a session tag "tenant" (sts:TagSession); IAM then confines every item
        # access to TENANT#<tag> keys and denies the tenant-mixing ByStatus index.
        self.tenant_role = iam.Role(
            self, "TenantRole", assumed_by=iam.AccountPrincipal(self.account).with_session_tags(),
            description="Tenant-facing access to the documents table, confined to the caller's tenant tag",
        )
        self.docs.grant_tenant_access(self.tenant_role, actions="read_write", tenant_tag="tenant")
        # The back office lists documents by status across tenants: Query on that one index.
        self.back_office_role = iam.Role(
            self, "BackOfficeRole", assumed_by=iam.AccountPrincipal(self.account),
            description="Operators: documents by status across tenants (Query on ByStatus only)",
        )
        self.docs.grant_query(self.back_office_role, index="ByStatus")
        self.audit = StreamAudit(self, "Audit", source=self.docs, retention=cdk.Duration.days(730))
        cdk.CfnOutput(self, "DocsTableName", value=self.docs.table_name)
        cdk.CfnOutput(self, "TenantRoleArn", value=self.tenant_role.role_arn)


def build_app(outdir: str | None = None) -> cdk.App:
    """Build (but do not synthesize) the app; tests call this in-process."""
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    ShopStack(app, "ShopStack", description="constructs_lib showcase: e-commerce single table")
    SaasStack(app, "SaasStack", description="constructs_lib showcase: multi-tenant documents")
    return app


if __name__ == "__main__":
    build_app().synth()
