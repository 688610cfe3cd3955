"""Imported tables (SingleTable.from_table_name / from_table_attributes): the same constructs and
grants as an owned table, as tight (table ARN + named index ARNs, KMS on the key only), and
clear synth errors for what an import cannot do."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from constructs_lib import (
    ConstructPropsError,
    ImportedSingleTable,
    ModelBoundTable,
    OperationsSettings,
    ShardedCounter,
    SingleTable,
    StreamAudit,
    TableFunction,
)
from constructs_lib.model import Model
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.environment import ENV_MODEL_FINGERPRINT

HANDLER = Path(__file__).resolve().parents[2] / "examples" / "shop" / "handlers" / "orders_api.py"
NEW_AND_OLD = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES
ACCOUNT, REGION = "111122223333", "eu-central-1"
TABLE_ARN = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/shop-data"
STREAM_ARN = f"{TABLE_ARN}/stream/2024-06-01T00:00:00.000"
KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/11111111-2222-3333-4444-555555555555"
READ = ["dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:DescribeTable", "dynamodb:GetItem",
        "dynamodb:Query"]


def role(stack: cdk.Stack, id: str) -> iam.Role:
    return iam.Role(stack, id, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))


def statements(template: Template, role_id: str) -> list[dict[str, Any]]:
    return [s for p in template.find_resources("AWS::IAM::Policy").values()
            if {"Ref": role_id} in p["Properties"]["Roles"] for s in p["Properties"]["PolicyDocument"]["Statement"]]


def role_id(stack: cdk.Stack, construct: iam.Role) -> str:
    return str(stack.resolve(construct.node.default_child.logical_id))


# Grants ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def by_name(shop_model: Model) -> tuple[cdk.Stack, Template, dict[str, str]]:
    """A table imported by name: one role per grant."""
    stack = cdk.Stack(cdk.App(), "ByName")
    table = SingleTable.from_table_name(stack, "Shop", model=shop_model, table_name="shop-data")
    roles = {name: role(stack, name) for name in ("read", "write", "query", "items")}
    table.grant_read_data(roles["read"])
    table.grant_write_data(roles["write"])
    table.grant_query(roles["query"], index="GSI2")
    table.grant_items(roles["items"], ["dynamodb:UpdateItem"], leading_key_prefix="COUNTER#x#", write=True)
    return stack, Template.from_stack(stack), {k: role_id(stack, r) for k, r in roles.items()}


def local_arn(suffix: str = "") -> dict[str, Any]:
    """The ARN CDK builds for an imported name: this stack's partition, region and account."""
    return {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":dynamodb:", {"Ref": "AWS::Region"}, ":",
                              {"Ref": "AWS::AccountId"}, f":table/shop-data{suffix}"]]}


def test_imported_table_is_a_model_bound_table(by_name: Any, shop_model: Model) -> None:
    # GIVEN a table imported by name
    stack, template, _ = by_name
    (table,) = [c for c in stack.node.find_all() if isinstance(c, ImportedSingleTable)]
    # THEN it carries the model and creates no table
    assert isinstance(table, ModelBoundTable) and table.model is shop_model
    assert table.table_name == "shop-data" and table.table_stream_arn is None
    template.resource_count_is("AWS::DynamoDB::GlobalTable", 0)
    template.resource_count_is("AWS::DynamoDB::Table", 0)


def test_read_grant_names_the_table_and_each_index(by_name: Any, shop_model: Model) -> None:
    _, template, roles = by_name
    # GIVEN the read grant on the imported table
    (statement,) = statements(template, roles["read"])
    # THEN it has the exact read actions on the table ARN and each of the model's index ARNs, nothing more
    assert statement["Action"] == READ
    assert statement["Resource"] == [local_arn()] + [local_arn(f"/index/{i}") for i in shop_model.indexes]


def test_write_grant_names_the_table_only(by_name: Any) -> None:
    _, template, roles = by_name
    (statement,) = statements(template, roles["write"])
    assert statement["Action"] == ["dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:DescribeTable",
                                   "dynamodb:PutItem", "dynamodb:UpdateItem"]
    assert statement["Resource"] == local_arn()


def test_query_grant_names_exactly_one_index(by_name: Any) -> None:
    _, template, roles = by_name
    # GIVEN grant_query(index="GSI2") WHEN synthesized THEN Query on that index ARN alone
    (statement,) = statements(template, roles["query"])
    assert (statement["Action"], statement["Resource"]) == ("dynamodb:Query", local_arn("/index/GSI2"))


def test_item_grant_keeps_its_leading_keys_condition(by_name: Any) -> None:
    _, template, roles = by_name
    (statement,) = statements(template, roles["items"])
    assert statement["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["COUNTER#x#*"]},
                                      "Null": {"dynamodb:LeadingKeys": "false"}}
    assert statement["Resource"] == local_arn()


@pytest.fixture(scope="module")
def cross_account(shop_model: Model) -> tuple[cdk.Stack, Template, ImportedSingleTable]:
    """A table of another account and region, with its stream and customer-managed key, carrying
    a read-write function with a counter, a counter in stream mode and an audit."""
    stack = cdk.Stack(cdk.App(), "Consumer", env=cdk.Environment(account="444455556666", region="eu-west-1"))
    key = kms.Key.from_key_arn(stack, "ShopKey", KEY_ARN)
    table = SingleTable.from_table_attributes(
        stack, "Shop", model=shop_model, table_arn=TABLE_ARN, table_stream_arn=STREAM_ARN, encryption_key=key,
        stream_view_type=NEW_AND_OLD,
    )
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=4)
    StreamAudit(stack, "Audit", source=table, redact=["email"], exclude_entities=ShardedCounter.ENTITIES)
    TableFunction(stack, "Api", table=table, entry=HANDLER, counters=[views])
    return stack, Template.from_stack(stack), table


def _function_statements(template: Template, prefix: str) -> list[dict[str, Any]]:
    roles = [lid for lid in template.find_resources("AWS::IAM::Role") if lid.startswith(prefix)]
    assert len(roles) == 1, roles
    return statements(template, roles[0])


def test_cross_account_grants_name_the_given_arns_and_key(cross_account: Any, shop_model: Model) -> None:
    _, template, _ = cross_account
    found = _function_statements(template, "ApiRole")
    data = [s for s in found if "dynamodb:PutItem" in s["Action"]]
    kms_ = [s for s in found if any(a.startswith("kms:") for a in s["Action"])]
    # THEN the table grant names the literal ARN and its index ARNs
    (statement,) = data
    assert statement["Resource"] == [TABLE_ARN] + [f"{TABLE_ARN}/index/{i}" for i in shop_model.indexes]
    # AND the KMS permissions name the imported key only
    assert kms_ and all(s["Resource"] == KEY_ARN for s in kms_)
    assert {"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"} <= {a for s in kms_ for a in s["Action"]}


def test_stream_consumers_subscribe_to_the_imported_stream(cross_account: Any) -> None:
    _, template, _ = cross_account
    # GIVEN the counter and the audit on the imported table
    # THEN both event source mappings read the imported stream ARN
    mappings = template.find_resources("AWS::Lambda::EventSourceMapping")
    assert len(mappings) == 2
    assert all(m["Properties"]["EventSourceArn"] == STREAM_ARN for m in mappings.values())
    # AND the aggregator reads the stream on its ARN only and writes its family's keys only
    aggregator = _function_statements(template, "ViewsRole")
    (stream,) = [s for s in aggregator if "dynamodb:GetRecords" in s["Action"]]
    assert stream["Resource"] == STREAM_ARN
    (items,) = [s for s in aggregator if "dynamodb:UpdateItem" in s["Action"]]
    assert items["Resource"] == TABLE_ARN and items["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["COUNTER#views#*"]},
        "Null": {"dynamodb:LeadingKeys": "false"}}


def test_function_gets_the_literal_table_name(cross_account: Any) -> None:
    _, template, _ = cross_account
    # THEN TABLE_NAME is the table's name (from the ARN), and no fingerprint is claimed
    template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "orders_api.handler",
        "Environment": {"Variables": Match.object_like({"TABLE_NAME": "shop-data",
                                                        ENV_MODEL_FINGERPRINT: Match.absent()})},
    })


def test_imported_tenant_grant_matches_the_owned_one(saas_model: Model) -> None:
    # GIVEN the same tenant grant on an owned and on an imported table of the saas model
    def policy(importer: Callable[[cdk.Stack], ModelBoundTable]) -> list[dict[str, Any]]:
        stack = cdk.Stack(cdk.App(), "Tenant")
        grantee = role(stack, "Reader")
        importer(stack).grant_tenant_access(grantee, actions="read")
        return statements(Template.from_stack(stack), role_id(stack, grantee))

    owned = policy(lambda s: SingleTable(s, "Docs", model=saas_model))
    imported = policy(lambda s: SingleTable.from_table_attributes(s, "Docs", model=saas_model, table_arn=TABLE_ARN))
    # THEN the statements are identical but for the table ARN
    assert [(s["Effect"], s["Action"], s.get("Condition")) for s in imported] == [
        (s["Effect"], s["Action"], s.get("Condition")) for s in owned]
    assert all(str(r).startswith(TABLE_ARN) for s in imported for r in (s["Resource"] if isinstance(
        s["Resource"], list) else [s["Resource"]]))


@pytest.fixture(scope="session")
def saas_model() -> Model:
    from examples.saas.model import saas_model

    return saas_model


def test_operations_on_an_imported_table(shop_model: Model) -> None:
    # GIVEN an imported table with an operations view and a scheduled counter registered with it
    stack = cdk.Stack(cdk.App(), "ImportedOps")
    table = ImportedSingleTable(stack, "Shop", model=shop_model, table_name="shop-data", operations=OperationsSettings())
    ShardedCounter(stack, "Views", table=table, name="views", shards=2, schedule=cdk.Duration.minutes(5),
                   scheduled_counters=["home"])
    template = Template.from_stack(stack)
    # THEN one dashboard, throttle alarms on the imported name, the counter's alarms, no capacity alarms
    template.resource_count_is("AWS::CloudWatch::Dashboard", 1)
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ReadThrottleEvents", "Dimensions": [{"Name": "TableName", "Value": "shop-data"}]})
    assert table.operations is not None and "Views/Errors" in table.operations.alarms
    assert not [k for k in table.operations.alarms if "CapacityUtilization" in k]


# What an import cannot do ------------------------------------------------------------------------
@pytest.mark.parametrize(("props", "message"), [
    ({}, r"give table_name=\.\.\. or table_arn=\.\.\."),
    ({"table_name": "x"}, "table_name 'x' must be 3-255 characters"),
    ({"table_arn": "arn:aws:s3:::bucket"}, r"table_arn 'arn:aws:s3:::bucket' is not a DynamoDB table ARN"),
    ({"table_arn": STREAM_ARN}, "is not a DynamoDB table ARN"),
    ({"table_arn": TABLE_ARN, "table_stream_arn": TABLE_ARN}, "table_stream_arn .* is not a DynamoDB stream ARN"),
    ({"table_name": "other", "table_arn": TABLE_ARN}, r"name different tables \(\['other', 'shop-data'\]\)"),
    ({"table_name": "shop-data", "stream_view_type": NEW_AND_OLD}, r"needs table_stream_arn=\.\.\."),
    ({"table_name": "shop-data", "encryption_key": "alias/shop"}, "encryption_key 'alias/shop' must be an aws_kms.IKey"),
    ({"table_name": "shop-data", "model_fingerprint": "abc"}, "model_fingerprint 'abc' is not a model fingerprint"),
    ({"table_name": "shop-data", "model_fingerprint": "0" * 32},
     "has fingerprint [0-9a-f]{32}, but the deployed table's model has 0{32} \\(model_fingerprint\\)"),
])
def test_bad_import_props_are_refused(scratch_stack: cdk.Stack, shop_model: Model, props: dict[str, Any],
                                      message: str) -> None:
    # GIVEN import props that name no table, a malformed ARN, or another model
    # WHEN the table is imported THEN a props error names the value and what to pass
    with pytest.raises(ConstructPropsError, match=message):
        SingleTable.from_table_attributes(scratch_stack, f"Bad{abs(hash(str(props)))}", model=shop_model, **props)


def test_a_matching_literal_fingerprint_is_accepted(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    # GIVEN the deployed model's fingerprint, equal to the consumer's WHEN imported THEN no error
    table = SingleTable.from_table_attributes(scratch_stack, "Matching", model=shop_model, table_name="shop-data",
                                              model_fingerprint=fingerprint(shop_model))
    # AND functions on it will check it at run time
    assert table.runtime_environment == {ENV_MODEL_FINGERPRINT: fingerprint(shop_model)}


def test_the_model_must_be_a_model(scratch_stack: cdk.Stack) -> None:
    with pytest.raises(ConstructPropsError, match="model must be a constructs_lib.model.Model, got 'shop'"):
        SingleTable.from_table_name(scratch_stack, "NoModel", model="shop", table_name="shop-data")  # type: ignore[arg-type]


@pytest.fixture
def no_stream(scratch_stack: cdk.Stack, shop_model: Model) -> ImportedSingleTable:
    return SingleTable.from_table_name(scratch_stack, f"NoStream{len(scratch_stack.node.children)}",
                                       model=shop_model, table_name="shop-data")


def test_audit_without_an_imported_stream_is_refused(scratch_stack: cdk.Stack, no_stream: ImportedSingleTable) -> None:
    with pytest.raises(ConstructPropsError, match=r"stream is off; auditing needs .*table_stream_arn=\.\.\."):
        StreamAudit(scratch_stack, "AuditNoStream", source=no_stream)


def test_audit_with_an_undeclared_stream_view_is_refused(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    # GIVEN an imported stream whose view type was not declared
    table = SingleTable.from_table_attributes(scratch_stack, "Undeclared", model=shop_model, table_arn=TABLE_ARN,
                                              table_stream_arn=STREAM_ARN)
    # WHEN audited THEN the error says the view type is unknown and what to pass
    with pytest.raises(ConstructPropsError, match=r"ImportedSingleTable 'Undeclared'.*not declared.*pass "
                                                  r"stream_view_type=StreamViewType.NEW_AND_OLD_IMAGES"):
        StreamAudit(scratch_stack, "AuditUndeclared", source=table)


def test_audit_of_a_keys_only_stream_is_refused(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    table = SingleTable.from_table_attributes(scratch_stack, "KeysOnly", model=shop_model, table_arn=TABLE_ARN,
                                              table_stream_arn=STREAM_ARN,
                                              stream_view_type=dynamodb.StreamViewType.KEYS_ONLY)
    with pytest.raises(ConstructPropsError, match="stream is KEYS_ONLY"):
        StreamAudit(scratch_stack, "AuditKeysOnly", source=table)


def test_stream_counter_without_an_imported_stream_is_refused(
    scratch_stack: cdk.Stack, no_stream: ImportedSingleTable
) -> None:
    with pytest.raises(ConstructPropsError, match=r"has no stream.*pass schedule=.*table_stream_arn=\.\.\."):
        ShardedCounter(scratch_stack, "CounterNoStream", table=no_stream, name="views", shards=2)


def test_stream_grant_without_an_imported_stream_is_refused(
    scratch_stack: cdk.Stack, no_stream: ImportedSingleTable
) -> None:
    with pytest.raises(ConstructPropsError, match=r"ImportedSingleTable 'NoStream\d+' has no stream; import the "
                                                  r"table with its stream: table_stream_arn=\.\.\."):
        no_stream.grant_stream_read(role(scratch_stack, "StreamReader"))


def test_query_grant_on_an_unknown_index_is_refused(scratch_stack: cdk.Stack, no_stream: ImportedSingleTable) -> None:
    with pytest.raises(ConstructPropsError, match="grant_query index 'GSI9' is not in model 'shop'"):
        no_stream.grant_query(role(scratch_stack, "Querier"), index="GSI9")


def test_constructs_refuse_a_plain_table_v2(scratch_stack: cdk.Stack) -> None:
    # GIVEN a TableV2 import without a model
    plain = dynamodb.TableV2.from_table_name(scratch_stack, "Plain", "shop-data")
    # WHEN a construct of the library is built on it THEN the error says which importers to use
    with pytest.raises(ConstructPropsError, match=r"table must be a SingleTable or an imported one "
                                                  r"\(SingleTable.from_table_name"):
        TableFunction(scratch_stack, "PlainFn", table=plain, entry=HANDLER)  # type: ignore[arg-type]
    with pytest.raises(ConstructPropsError, match="source must be a SingleTable or an imported one"):
        StreamAudit(scratch_stack, "PlainAudit", source=plain)  # type: ignore[arg-type]
    with pytest.raises(ConstructPropsError, match="table must be a SingleTable or an imported one"):
        ShardedCounter(scratch_stack, "PlainCounter", table=plain, name="views", shards=2)  # type: ignore[arg-type]


def test_key_prefix_claims_on_an_import_are_checked(scratch_stack: cdk.Stack, no_stream: ImportedSingleTable) -> None:
    no_stream.claim_key_prefix("REPORT#", owner="reports")
    with pytest.raises(ConstructPropsError, match="key prefix 'REPORT#daily#' of daily overlaps 'REPORT#' of reports"):
        no_stream.claim_key_prefix("REPORT#daily#", owner="daily")
