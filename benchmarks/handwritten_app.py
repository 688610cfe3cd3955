"""The synth-cost baseline: ``app.py``'s two stacks written by hand with plain aws-cdk-lib.

The same resources as ``app.py`` — checked by the benchmark, resource by resource
(``template_parity.py``): ``ShopStack``, the single table with its three GSIs, TTL, stream and
PITR; its contract published in six SSM parameters; the audit table and its redaction-salt
secret; the counter aggregator, audit writer and orders API functions with their log groups,
roles and least-privilege policies (the orders API's declared scope, one statement per action
and key shape); the failure queues with TLS-only policies; the two stream mappings with their
event filters; the consumers' alarms, the table's throttle / system-error / latency alarms and
its operations dashboard — ``SaasStack``, the documents table, the tenant, back-office and editor
roles, the audit table, writer, queue, mapping and alarms. Written the way one would without
``constructs_lib``: ``TableV2`` with literal attribute definitions, ``Code.from_asset`` on plain
directories, hand-written IAM statements and filter patterns, environment variables as literal JSON.

It imports nothing but aws-cdk-lib and constructs when it runs. The functions' code comes from
plain asset directories under ``$HANDWRITTEN_ASSETS`` — like a build step that copies a vendored
runtime into ``lambda/`` — and the contract's literal values (model JSON, fingerprints) from
``shop-contract.json`` there. The synth benchmark fills them, before timing, with copies of the
asset directories app.py's functions get and of its parameter values, so both apps hash and copy
the same bytes; run on its own, the app stages them with :func:`stage_assets` into a temp dir.
``python benchmarks/handwritten_app.py`` writes to ``$CDK_OUTDIR`` (as ``cdk synth`` sets it) or a
temp dir.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_ssm as ssm
from constructs import Construct

#: Environment variable naming the asset root (see :func:`stage_assets`).
ASSETS_ENV = "HANDWRITTEN_ASSETS"
#: Asset directories under the root: the shop's counter aggregator and audit writer, the orders
#: API (runtime + handler module), the SaaS audit writer — each function ships only the runtime
#: modules its handler can import, so each has its own directory.
SHOP_COUNTER, SHOP_AUDIT, ORDERS_API, SAAS_AUDIT = "shop-counter", "shop-audit", "orders-api", "saas-audit"
#: The shop table's published contract under the root: the SSM parameters' literal values
#: (``model``, ``model-fingerprint``, ``contract``), JSON — what a build step would generate.
SHOP_CONTRACT = "shop-contract.json"
CONTRACT_PREFIX = "/constructs-lib-showcase/shop/data"
#: An SSM parameter above this many bytes needs the advanced tier.
SSM_STANDARD_LIMIT = 4096
REPO = Path(__file__).resolve().parent.parent

COUNTER_SPEC = json.dumps({
    "entity_attribute": "_type", "family": "product_views", "format": "constructs_lib.counter",
    "idempotency_ttl_seconds": 86400, "pk_attribute": "PK", "shards": 120, "sk_attribute": "SK",
    "ttl_attribute": "expires_at", "version": 1,
}, separators=(",", ":"), sort_keys=True)
SHARDS_DERIVATION = ("50000 writes/s x 1 WCU (ceil(1024 B / 1024 B)) x2 (transactional) x headroom 1.2 = 120000 WCU; "
                     "/ 1000 WCU per partition = 120 shard(s)")
COUNTER_ENTITIES = ["CounterDedup", "CounterShard", "CounterTotal"]
#: The orders API's declared scope, which its bundled client enforces.
ORDERS_SCOPE = json.dumps({
    "batch_gets": [], "patterns": ["user's orders newest first", "order by id", "items of an order",
                                   "orders by status newest first"],
    "tenant": None, "writes": {"Order": ["update", "transaction_put"], "OrderItem": ["transaction_put"]},
}, separators=(",", ":"))


def _audit_spec(redact: list[str], retention_seconds: int) -> str:
    return json.dumps({
        "actor_attribute": "updated_by", "audit_ttl_attribute": "expires_at", "day_shards": 8,
        "entity_attribute": "_type", "format": "constructs_lib.audit", "redact": redact, "redaction": "hash",
        "retention_seconds": retention_seconds, "source_pk_attribute": "PK", "source_sk_attribute": "SK", "version": 1,
    }, separators=(",", ":"), sort_keys=True)


# -----------------------------------------------------------------------------------------------
# Building blocks, as one writes them by hand
# -----------------------------------------------------------------------------------------------
def _string(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


def _table(
    scope: Construct, id: str, *, gsis: list[dynamodb.GlobalSecondaryIndexPropsV2], ttl: str | None, stream: bool,
) -> dynamodb.TableV2:
    return dynamodb.TableV2(
        scope, id,
        partition_key=_string("PK"), sort_key=_string("SK"),
        billing=dynamodb.Billing.on_demand(),
        global_secondary_indexes=gsis,
        time_to_live_attribute=ttl,
        dynamo_stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES if stream else None,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True),
        deletion_protection=True,
        removal_policy=cdk.RemovalPolicy.RETAIN,
    )


def _leading_keys(*shapes: str, tag: str | None = None) -> dict[str, object]:
    """Partition keys limited to ``shapes``, and required (``ForAllValues`` alone passes a request without one)."""
    present = {"dynamodb:LeadingKeys": "false", **({f"aws:PrincipalTag/{tag}": "false"} if tag else {})}
    return {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": list(shapes)}, "Null": present}


def _in_transaction(conditions: dict[str, object]) -> dict[str, object]:
    return {**conditions, "StringEquals": {"dynamodb:EnclosingOperation": "TransactWriteItems"}}


def _gsi(name: str, pk: str, sk: str, *, include_type: bool = False) -> dynamodb.GlobalSecondaryIndexPropsV2:
    return dynamodb.GlobalSecondaryIndexPropsV2(
        index_name=name, partition_key=_string(pk), sort_key=_string(sk),
        projection_type=dynamodb.ProjectionType.INCLUDE if include_type else dynamodb.ProjectionType.ALL,
        non_key_attributes=["_type"] if include_type else None,
    )


def _function(
    scope: Construct, id: str, *, asset: Path, handler: str, environment: dict[str, str], timeout: int,
    description: str,
) -> lambda_.Function:
    """Log group (one month), role with write access to that group only, and the function, grouped under ``id``."""
    group = Construct(scope, id)
    log_group = logs.LogGroup(group, "Logs", retention=logs.RetentionDays.ONE_MONTH,
                              removal_policy=cdk.RemovalPolicy.RETAIN)
    role = iam.Role(group, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                    description=f"Execution role of {group.node.path}")
    role.add_to_principal_policy(iam.PolicyStatement(
        actions=["logs:CreateLogStream", "logs:PutLogEvents"], resources=[log_group.log_group_arn]))
    return lambda_.Function(
        group, "Function",
        runtime=lambda_.Runtime.PYTHON_3_13, architecture=lambda_.Architecture.ARM_64,
        handler=handler, code=lambda_.Code.from_asset(str(asset)), environment=environment,
        memory_size=256, timeout=cdk.Duration.seconds(timeout), log_group=log_group, role=role,
        description=description,
    )


def _queue(scope: Construct, id: str) -> sqs.Queue:
    return sqs.Queue(scope, id, encryption=sqs.QueueEncryption.KMS_MANAGED, enforce_ssl=True,
                     retention_period=cdk.Duration.days(14))


def _stream_mapping(
    scope: Construct, id: str, *, function: lambda_.Function, table: dynamodb.TableV2, queue: sqs.Queue,
    filters: list[dict[str, object]], max_record_age: cdk.Duration,
) -> lambda_.EventSourceMapping:
    table.grant_stream_read(function)
    return lambda_.EventSourceMapping(
        scope, id, target=function, event_source_arn=table.table_stream_arn,
        starting_position=lambda_.StartingPosition.TRIM_HORIZON, batch_size=100,
        max_batching_window=cdk.Duration.seconds(1), bisect_batch_on_error=True, retry_attempts=5,
        max_record_age=max_record_age, parallelization_factor=1, report_batch_item_failures=True,
        on_failure=sources.SqsDlq(queue),
        filters=[lambda_.FilterCriteria.filter(f) for f in filters] or None,
    )


#: DynamoDB data-plane operations, one line each on the dashboard.
OPERATIONS = ("GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems",
              "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")


def _table_metric(table: dynamodb.TableV2, name: str, *, statistic: str = "Sum", index: str | None = None,
                  operation: str | None = None, label: str | None = None) -> cloudwatch.Metric:
    dimensions = {"TableName": table.table_name}
    if index:
        dimensions["GlobalSecondaryIndexName"] = index
    if operation:
        dimensions["Operation"] = operation
    return cloudwatch.Metric(namespace="AWS/DynamoDB", metric_name=name, dimensions_map=dimensions,
                             statistic=statistic, period=cdk.Duration.minutes(5), label=label)


def _graph(title: str, left: list[cloudwatch.IMetric], *, width: int = 12, unit: str,
           annotations: list[tuple[float, str]] | None = None) -> cloudwatch.GraphWidget:
    return cloudwatch.GraphWidget(
        title=title, left=left, width=width, height=6,
        left_y_axis=cloudwatch.YAxisProps(label=unit, show_units=False, min=0),
        left_annotations=[cloudwatch.HorizontalAnnotation(value=v, label=t) for v, t in annotations or []] or None,
    )


def _operations(scope: Construct, table: dynamodb.TableV2, *, gsis: list[str],
                consumers: list[tuple[str, lambda_.Function, sqs.Queue, int]]) -> None:
    """The table's alarms (throttles per table/GSI, system errors, p99 latency) and an operations dashboard."""
    what = f"DynamoDB table {scope.node.path}/Data"

    def alarm(id: str, metric: cloudwatch.IMetric, threshold: float, periods: int, text: str) -> None:
        metric.create_alarm(
            scope, f"DataOperations{id}Alarm", threshold=threshold, evaluation_periods=periods,
            datapoints_to_alarm=periods, comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING, alarm_description=f"{what}: {text}",
        )

    for index in (None, *gsis):
        for kind in ("Read", "Write"):
            alarm(f"{index or ''}{kind}ThrottleEvents", _table_metric(table, f"{kind}ThrottleEvents", index=index), 0, 1,
                  f"more than 0 {kind.lower()} throttle event(s) in 5 minutes" + (f" on index {index}" if index else ""))
    system = {op.lower(): _table_metric(table, "SystemErrors", operation=op) for op in OPERATIONS}
    alarm("SystemErrors", cloudwatch.MathExpression(
        expression=" + ".join(f"FILL({m}, 0)" for m in system), using_metrics=system,
        label="SystemErrors, all operations", period=cdk.Duration.minutes(5)), 0, 1,
        "more than 0 system error(s) (HTTP 500) in 5 minutes")
    for op in ("GetItem", "Query"):
        alarm(f"Latency{op}", _table_metric(table, "SuccessfulRequestLatency", operation=op, statistic="p99"), 50, 3,
              f"{op} p99 latency above 50.0 ms for 3 consecutive 5-minute periods")

    dashboard = cloudwatch.Dashboard(scope, "DataOperationsDashboard")
    dashboard.add_widgets(cloudwatch.TextWidget(
        markdown=f"## {what}\nOn-demand billing, GSIs: {', '.join(gsis)}.", width=24, height=2))

    def capacity(index: str | None) -> list[cloudwatch.IWidget]:
        name = index or "table"
        widgets: list[cloudwatch.IWidget] = []
        for kind in ("Read", "Write"):
            consumed = _table_metric(table, f"Consumed{kind}CapacityUnits", index=index)
            widgets.append(_graph(f"{name}: {kind.lower()} capacity (units/s)", [cloudwatch.MathExpression(
                expression="consumed / PERIOD(consumed)", using_metrics={"consumed": consumed},
                label=f"consumed {kind.lower()} units/s", period=cdk.Duration.minutes(5))], width=8, unit="units/s"))
        widgets.append(_graph(f"{name}: throttle events", [
            _table_metric(table, f"{k}ThrottleEvents", index=index, label=f"{k.lower()} throttle events")
            for k in ("Read", "Write")], width=8, unit="count", annotations=[(0, "alarm above")]))
        return widgets

    dashboard.add_widgets(*capacity(None))
    dashboard.add_widgets(
        _graph("Throttled requests by operation",
               [_table_metric(table, "ThrottledRequests", operation=op, label=op) for op in OPERATIONS], unit="count"),
        _graph("System errors (HTTP 500) by operation",
               [_table_metric(table, "SystemErrors", operation=op, label=op) for op in OPERATIONS], unit="count"),
    )
    dashboard.add_widgets(*[
        _graph(f"Latency {p} by operation (ms)", [
            _table_metric(table, "SuccessfulRequestLatency", operation=op, statistic=p, label=f"{op} {p}")
            for op in OPERATIONS], unit="ms", annotations=[(50, "p99 alarm above")] if p == "p99" else None)
        for p in ("p50", "p99")])
    dashboard.add_widgets(_graph("Client-side failures", [
        cloudwatch.Metric(namespace="AWS/DynamoDB", metric_name="UserErrors", statistic="Sum",
                          label="UserErrors (HTTP 400, whole account and region)"),
        _table_metric(table, "ConditionalCheckFailedRequests", label="conditional check failed (this table)"),
        _table_metric(table, "TransactionConflict", label="transaction conflicts (this table)"),
    ], width=24, unit="count"))
    for index in gsis:
        dashboard.add_widgets(*capacity(index))
    for title, fn, queue, iterator_age_minutes in consumers:
        dashboard.add_widgets(
            _graph(f"{title}: invocations", [fn.metric_invocations(label="invocations"),
                                             fn.metric_errors(label="errors"), fn.metric_throttles(label="throttles")],
                   width=6, unit="count", annotations=[(1, "errors alarm at")]),
            _graph(f"{title}: duration (ms)", [fn.metric_duration(statistic=st, label=lb) for st, lb in
                                               (("p50", "p50"), ("p99", "p99"), ("Maximum", "max"))],
                   width=6, unit="ms"),
            _graph(f"{title}: iterator age (ms)", [fn.metric("IteratorAge", statistic="Maximum",
                                                             label="iterator age, max")], width=6, unit="ms",
                   annotations=[(iterator_age_minutes * 60_000, "alarm above")]),
            _graph(f"{title}: failure queue depth", [queue.metric_approximate_number_of_messages_visible(
                statistic="Maximum", label="messages visible")], width=6, unit="count",
                annotations=[(1, "alarm at")]),
        )


def _alarms(scope: Construct, id: str, *, what: str, function: lambda_.Function, queue: sqs.Queue,
            iterator_age_minutes: int) -> None:
    five_minutes = cdk.Duration.minutes(5)
    cloudwatch.Alarm(
        scope, f"{id}ErrorsAlarm", metric=function.metric_errors(period=five_minutes, statistic="Sum"),
        threshold=1, evaluation_periods=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=f"{what}: the function failed at least once in 5 minutes",
    )
    cloudwatch.Alarm(
        scope, f"{id}IteratorAgeAlarm",
        metric=cloudwatch.Metric(namespace="AWS/Lambda", metric_name="IteratorAge",
                                 dimensions_map={"FunctionName": function.function_name},
                                 statistic="Maximum", period=five_minutes),
        threshold=iterator_age_minutes * 60_000, evaluation_periods=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=f"{what}: the function lags its stream by more than {iterator_age_minutes} minute(s)",
    )
    cloudwatch.Alarm(
        scope, f"{id}FailedBatchesAlarm",
        metric=queue.metric_approximate_number_of_messages_visible(statistic="Maximum", period=five_minutes),
        threshold=1, evaluation_periods=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=f"{what}: failed batches reached the failure queue",
    )


def _audit(
    scope: Construct, *, source: dynamodb.TableV2, asset: Path, redact: list[str], retention_days: int,
    filters: list[dict[str, object]],
) -> tuple[dynamodb.TableV2, lambda_.Function, sqs.Queue]:
    """Audit table (+ salt secret when redacting), writer function, queue, mapping, alarms."""
    audit_table = _table(scope, "AuditTable", gsis=[_gsi("ByDay", "GSI1PK", "GSI1SK")], ttl="expires_at", stream=False)
    environment = {
        "CONSTRUCTS_LIB_AUDIT": _audit_spec(redact, retention_days * 86_400),
        "AUDIT_TABLE_NAME": audit_table.table_name,
        "SOURCE_TABLE_NAME": source.table_name,
    }
    salt = None
    if redact:
        salt = secretsmanager.Secret(
            scope, "AuditRedactionSalt", description=f"Salt of the redaction hashes in the audit trail of {scope.node.path}",
            generate_secret_string=secretsmanager.SecretStringGenerator(exclude_punctuation=True, password_length=48),
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        environment["CONSTRUCTS_LIB_AUDIT_SALT_SECRET_ARN"] = salt.secret_arn
    writer = _function(scope, "Audit", asset=asset, handler="constructs_lib.runtime.handlers.audit.handler",
                       environment=environment, timeout=60,
                       description=f"Writes the audit trail of {scope.node.path} from its stream")
    writer.add_to_role_policy(iam.PolicyStatement(
        actions=["dynamodb:BatchWriteItem", "dynamodb:PutItem"], resources=[audit_table.table_arn]))
    if salt is not None:
        salt.grant_read(writer)
    queue = _queue(scope, "AuditFailedBatches")
    _stream_mapping(scope, "AuditStreamMapping", function=writer, table=source, queue=queue, filters=filters,
                    max_record_age=cdk.Duration.days(1))
    _alarms(scope, "Audit", what=f"Audit of {scope.node.path}", function=writer, queue=queue, iterator_age_minutes=5)
    return audit_table, writer, queue


def _contract(scope: Construct, table: dynamodb.TableV2, *, contract: dict[str, str]) -> None:
    """The table's contract published in SSM for consumers: name, ARNs, the model and its fingerprints."""
    values = {"table-name": table.table_name, "table-arn": table.table_arn,
              "model-fingerprint": contract["model-fingerprint"], "stream-arn": table.table_stream_arn or "",
              "model": contract["model"], "contract": contract["contract"]}
    for name, value in values.items():
        ssm.StringParameter(
            scope, "DataContract" + ("" if name == "contract" else "".join(p.title() for p in name.split("-"))),
            parameter_name=f"{CONTRACT_PREFIX}/{name}", string_value=value,
            tier=ssm.ParameterTier.STANDARD if len(value.encode()) <= SSM_STANDARD_LIMIT else ssm.ParameterTier.ADVANCED,
            description=f"Contract of {scope.node.path}/Data: {name}",
        )


# -----------------------------------------------------------------------------------------------
# The two stacks
# -----------------------------------------------------------------------------------------------
class HandwrittenShopStack(cdk.Stack):
    """``app.py``'s ShopStack by hand: table, counter aggregator, audit trail, orders API."""

    def __init__(self, scope: Construct, id: str, *, assets: Path, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        data = _table(self, "DataTable", gsis=[_gsi("GSI1", "GSI1PK", "GSI1SK"),
                                                _gsi("GSI2", "GSI2PK", "GSI2SK", include_type=True),
                                                _gsi("GSI3", "GSI3PK", "GSI3SK")],
                      ttl="expires_at", stream=True)
        counter_env = {"CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS": COUNTER_SPEC,
                       "CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS_TABLE": data.table_name}
        counter_keys = _leading_keys("COUNTER#product_views#*")

        # The sharded counter's aggregator.
        aggregator = _function(
            self, "ProductViews", asset=assets / SHOP_COUNTER, handler="constructs_lib.runtime.handlers.counter.handler",
            environment={**counter_env, "CONSTRUCTS_LIB_COUNTER_FAMILY": "product_views",
                         "COUNTER_SHARDS_DERIVATION": SHARDS_DERIVATION},
            timeout=30, description=f"Recomputes totals of counter family product_views (120 shards: {SHARDS_DERIVATION})",
        )
        aggregator.add_to_role_policy(iam.PolicyStatement(
            actions=["dynamodb:BatchGetItem", "dynamodb:UpdateItem"], resources=[data.table_arn], conditions=counter_keys))
        views_queue = _queue(self, "ProductViewsFailedBatches")
        _stream_mapping(
            self, "ProductViewsStreamMapping", function=aggregator, table=data, queue=views_queue,
            filters=[{"dynamodb": {"Keys": {"PK": {"S": lambda_.FilterRule.begins_with("COUNTER#product_views#")},
                                            "SK": {"S": lambda_.FilterRule.is_equal("SHARD")}}}}],
            max_record_age=cdk.Duration.hours(1),
        )
        _alarms(self, "ProductViews", what="Counter family product_views", function=aggregator, queue=views_queue,
                iterator_age_minutes=1)

        # The audit trail, counter items filtered out, emails redacted.
        not_counter = [{"anything-but": COUNTER_ENTITIES}]
        untyped = {"PK": {"S": [{"exists": True}]}, "_type": {"S": [{"exists": False}]}}
        audit_table, audit_writer, audit_queue = _audit(
            self, source=data, asset=assets / SHOP_AUDIT, redact=["email", "GSI1PK"], retention_days=365,
            filters=[
                {"dynamodb": {"NewImage": {"_type": {"S": not_counter}}}},
                {"eventName": ["REMOVE"], "dynamodb": {"OldImage": {"_type": {"S": not_counter}}}},
                {"dynamodb": {"NewImage": untyped}},
                {"eventName": ["REMOVE"], "dynamodb": {"OldImage": untyped}},
            ],
        )

        # The orders API.
        api = _function(self, "OrdersApi", asset=assets / ORDERS_API, handler="orders_api.handler",
                        environment={"TABLE_NAME": data.table_name, "CONSTRUCTS_LIB_ACCESS_SCOPE": ORDERS_SCOPE,
                                     **counter_env}, timeout=10,
                        description="Orders API on the shop single table")
        # Its declared scope, one statement per action and key shape: Query on the table and GSI1 for
        # USER#/ORDER# keys, on GSI3 for STATUS#*#*, transaction-only puts, one update; the counter.
        for actions, resource, conditions in (
            (["dynamodb:Query"], data.table_arn, _leading_keys("ORDER#*", "USER#*")),
            (["dynamodb:UpdateItem"], data.table_arn, _leading_keys("USER#*")),
            (["dynamodb:PutItem"], data.table_arn, _in_transaction(_leading_keys("ORDER#*", "USER#*"))),
            (["dynamodb:Query"], f"{data.table_arn}/index/GSI1", _leading_keys("ORDER#*")),
            (["dynamodb:Query"], f"{data.table_arn}/index/GSI3", _leading_keys("STATUS#*#*")),
            (["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"], data.table_arn,
             counter_keys),
        ):
            api.add_to_role_policy(iam.PolicyStatement(actions=actions, resources=[resource], conditions=conditions))

        # The operations view: table alarms and one dashboard with the stream consumers' rows.
        _contract(self, data, contract=json.loads((assets / SHOP_CONTRACT).read_text(encoding="utf-8")))
        _operations(self, data, gsis=["GSI1", "GSI2", "GSI3"], consumers=[
            ("ShardedCounter ProductViews (product_views)", aggregator, views_queue, 1),
            ("StreamAudit Audit", audit_writer, audit_queue, 5)])

        cdk.CfnOutput(self, "TableName", value=data.table_name)
        cdk.CfnOutput(self, "OrdersApiFunction", value=api.function_name)
        cdk.CfnOutput(self, "ProductViewsAggregator", value=aggregator.function_name)
        cdk.CfnOutput(self, "AuditTableName", value=audit_table.table_name)


class HandwrittenSaasStack(cdk.Stack):
    """``app.py``'s SaasStack by hand: documents table, tenant and back-office roles, audit trail."""

    def __init__(self, scope: Construct, id: str, *, assets: Path, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        docs = _table(self, "DocsTable", gsis=[_gsi("ByOwner", "ByOwnerPK", "ByOwnerSK"),
                                               _gsi("ByStatus", "ByStatusPK", "ByStatusSK", include_type=True)],
                      ttl=None, stream=True)
        item_actions = ["dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem",
                        "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query",
                        "dynamodb:UpdateItem"]
        tenant = iam.Role(self, "TenantRole", assumed_by=iam.AccountPrincipal(self.account).with_session_tags(),
                          description="Tenant-facing access to the documents table, confined to the caller's tenant tag")
        tenant_key = "TENANT#${aws:PrincipalTag/tenant}"
        tenant.add_to_principal_policy(iam.PolicyStatement(
            actions=item_actions, resources=[docs.table_arn, f"{docs.table_arn}/index/ByOwner"],
            conditions=_leading_keys(tenant_key, f"{tenant_key}#*", tag="tenant")))
        tenant.add_to_principal_policy(iam.PolicyStatement(
            effect=iam.Effect.DENY,
            actions=["dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:Query"],
            resources=[f"{docs.table_arn}/index/ByStatus"]))
        back_office = iam.Role(self, "BackOfficeRole", assumed_by=iam.AccountPrincipal(self.account),
                               description="Operators: documents by status across tenants (Query on ByStatus only)")
        back_office.add_to_principal_policy(iam.PolicyStatement(
            actions=["dynamodb:Query"], resources=[f"{docs.table_arn}/index/ByStatus"]))
        # Editors: documents and their versions, an owner's documents, transactional writes, own tenant.
        editor = iam.Role(self, "EditorRole", assumed_by=iam.AccountPrincipal(self.account).with_session_tags(),
                          description="Document editors: the declared editor scope, confined to the caller's tenant tag")
        docs_keys = _leading_keys(f"{tenant_key}#DOC#*", tag="tenant")
        for actions, resource, conditions in (
            (["dynamodb:GetItem", "dynamodb:Query"], docs.table_arn, docs_keys),
            (["dynamodb:PutItem", "dynamodb:UpdateItem"], docs.table_arn, _in_transaction(docs_keys)),
            (["dynamodb:Query"], f"{docs.table_arn}/index/ByOwner", _leading_keys(f"{tenant_key}#OWNER#*", tag="tenant")),
        ):
            editor.add_to_principal_policy(iam.PolicyStatement(actions=actions, resources=[resource],
                                                               conditions=conditions))
        _audit(self, source=docs, asset=assets / SAAS_AUDIT, redact=[], retention_days=730, filters=[])
        cdk.CfnOutput(self, "DocsTableName", value=docs.table_name)
        cdk.CfnOutput(self, "TenantRoleArn", value=tenant.role_arn)
        cdk.CfnOutput(self, "EditorRoleArn", value=editor.role_arn)


def build_app(outdir: str | None = None, *, assets: str | os.PathLike[str] | None = None) -> cdk.App:
    """Build (but do not synthesize) the hand-written app.

    Parameters
    ----------
    outdir
        Cloud assembly directory. Default ``$CDK_OUTDIR``, else a new temp dir.
    assets
        Root of the staged asset directories. Default ``$HANDWRITTEN_ASSETS``, else
        :func:`stage_assets` into a temp dir.
    """
    root = Path(assets or os.environ.get(ASSETS_ENV) or stage_assets(Path(tempfile.mkdtemp(prefix="handwritten-assets-"))))
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or tempfile.mkdtemp(prefix="handwritten-cdk.out-"))
    HandwrittenShopStack(app, "ShopStack", assets=root, description="hand-written baseline: e-commerce single table")
    HandwrittenSaasStack(app, "SaasStack", assets=root, description="hand-written baseline: multi-tenant documents")
    return app


def stage_assets(root: Path) -> Path:
    """Write the plain asset directories under *root* (replacing them) and return *root*.

    Each holds what the function needs at run time — the runtime and model packages copied from
    this repository, the model JSON, and for the orders API its handler module — and
    :data:`SHOP_CONTRACT` the shop's published contract, generated from its model. This is the build
    step of the hand-written app when it runs on its own; the benchmark stages copies of
    ``app.py``'s synthesized assets and parameter values instead (byte-identical to what it ships).
    """
    sys.path.insert(0, str(REPO))
    try:
        from constructs_lib.model.slices import published_json
        from constructs_lib.runtime.contract import fingerprint
        from examples.saas.model import saas_model
        from examples.shop.model import shop_model
    finally:
        sys.path.remove(str(REPO))
    package = REPO / "constructs_lib"
    handler = REPO / "examples" / "shop" / "handlers" / "orders_api.py"
    for name, model, extra in ((SHOP_COUNTER, shop_model, None), (SHOP_AUDIT, shop_model, None),
                               (ORDERS_API, shop_model, handler), (SAAS_AUDIT, saas_model, None)):
        target = root / name
        shutil.rmtree(target, ignore_errors=True)
        for sub in ("model", "runtime"):
            shutil.copytree(package / sub, target / "constructs_lib" / sub,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (target / "constructs_lib" / "__init__.py").write_text('"""constructs_lib: model + runtime only."""\n')
        (target / "model.json").write_text(model.to_json(), encoding="utf-8")
        if extra is not None:
            shutil.copyfile(extra, target / extra.name)
    (root / SHOP_CONTRACT).write_text(json.dumps({
        "model": shop_model.to_json(compact=True), "model-fingerprint": fingerprint(shop_model),
        "contract": published_json(shop_model, include_model=True)}), encoding="utf-8")
    return root


if __name__ == "__main__":
    build_app().synth()
