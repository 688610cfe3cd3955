"""SingleTable synthesizes the table its model describes, with safe defaults.

Stacks are built once per module; each test asserts one aspect of a synthesized template.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Annotations, Match, Template

from constructs_lib import ConstructPropsError, SingleTable
from constructs_lib.model import (
    AccessPattern,
    AccessPatternError,
    Entity,
    Index,
    IndexKey,
    Model,
    ModelError,
)

GLOBAL_TABLE = "AWS::DynamoDB::GlobalTable"
LOW_CARDINALITY = r"STATUS#\{status\}.*low-cardinality"


def table_props(template: Template) -> dict[str, Any]:
    """Properties of the one table in *template* (fails if there is not exactly one)."""
    template.resource_count_is(GLOBAL_TABLE, 1)
    (table,) = template.find_resources(GLOBAL_TABLE).values()
    return table["Properties"]


def table_resource(template: Template) -> dict[str, Any]:
    (table,) = template.find_resources(GLOBAL_TABLE).values()
    return table


def gsis_by_name(props: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["IndexName"]: g for g in props.get("GlobalSecondaryIndexes", [])}


# Stacks ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shop_cfn(shop) -> Template:  # noqa: ANN001 - ShopSynth from conftest
    """The SingleTable of app.py (shop model, stream NEW_AND_OLD_IMAGES, everything else default);
    the audit trail's own table is left out (see test_stream_audit.py)."""
    resources = {lid: r for lid, r in shop.template["Resources"].items()
                 if r["Type"] != GLOBAL_TABLE or lid.startswith("DataTable")}
    return Template.from_json({**shop.template, "Resources": resources})


@pytest.fixture(scope="module")
def pk_only_stack(new_stack, pk_only_model: Model) -> cdk.Stack:
    stack = new_stack("PkOnly")
    SingleTable(stack, "Data", model=pk_only_model)
    return stack


@pytest.fixture(scope="module")
def pk_only_template(pk_only_stack: cdk.Stack) -> Template:
    """All defaults; a model with a partition key only, no index, no TTL."""
    return Template.from_stack(pk_only_stack)


@pytest.fixture(scope="module")
def options_template(mixed_index_model: Model) -> Template:
    """Every option away from its default, on a model with GSIs of each shape and an LSI."""
    stack = cdk.Stack(cdk.App(), "Options", env=cdk.Environment(region="eu-west-1"))
    key = kms.Key(stack, "TableKey")
    SingleTable(
        stack,
        "Data",
        model=mixed_index_model,
        billing=dynamodb.Billing.provisioned(
            read_capacity=dynamodb.Capacity.fixed(5),
            write_capacity=dynamodb.Capacity.autoscaled(max_capacity=20),
        ),
        index_read_capacity=dynamodb.Capacity.fixed(3),
        index_write_capacity=dynamodb.Capacity.autoscaled(max_capacity=10),
        encryption=dynamodb.TableEncryptionV2.customer_managed_key(key),
        table_class=dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS,
        point_in_time_recovery=False,
        deletion_protection=False,
        removal_policy=cdk.RemovalPolicy.DESTROY,
        stream=dynamodb.StreamViewType.KEYS_ONLY,
    )
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def status_gsi_stack(new_stack, status_gsi_model: Model) -> cdk.Stack:
    stack = new_stack("Tickets")
    SingleTable(stack, "Data", model=status_gsi_model)
    return stack


# Key schema and attributes -----------------------------------------------------------------------
def test_table_key_schema_is_pk_hash_and_sk_range(shop_cfn: Template) -> None:
    # GIVEN the shop model, whose entities declare sk templates
    # WHEN it is synthesized
    # THEN the table key is PK (HASH) + SK (RANGE)
    shop_cfn.has_resource_properties(
        GLOBAL_TABLE,
        {"KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]},
    )


def test_model_without_sort_key_gives_a_table_without_sort_key(pk_only_template: Template) -> None:
    # GIVEN a model whose only entity has no sk template
    # WHEN it is synthesized
    props = table_props(pk_only_template)
    # THEN the table has a partition key only, and only that attribute is defined
    assert props["KeySchema"] == [{"AttributeName": "PK", "KeyType": "HASH"}]
    assert props["AttributeDefinitions"] == [{"AttributeName": "PK", "AttributeType": "S"}]


@pytest.mark.parametrize(
    ("template_fixture", "model_fixture"),
    [("shop_cfn", "shop_model"), ("options_template", "mixed_index_model"), ("pk_only_template", "pk_only_model")],
)
def test_attribute_definitions_are_exactly_the_model_key_attributes(
    request: pytest.FixtureRequest, template_fixture: str, model_fixture: str
) -> None:
    # GIVEN a synthesized model
    template: Template = request.getfixturevalue(template_fixture)
    model: Model = request.getfixturevalue(model_fixture)
    # WHEN reading the table's attribute definitions
    definitions = table_props(template)["AttributeDefinitions"]
    # THEN they are the key attributes the table and its indexes use, each once, all strings
    names = [d["AttributeName"] for d in definitions]
    assert sorted(names) == sorted(model.key_attributes())
    assert len(names) == len(set(names))
    assert {d["AttributeType"] for d in definitions} == {"S"}


# Secondary indexes ------------------------------------------------------------------------------
def test_shop_gsis_have_generic_keys_and_projections(shop_cfn: Template, shop_model: Model) -> None:
    # GIVEN the shop model: GSI1 (ALL), GSI2 (KEYS_ONLY) and the write-sharded GSI3 (ALL)
    # WHEN it is synthesized
    gsis = gsis_by_name(table_props(shop_cfn))
    # THEN there is one GSI per model index, with generic key attributes (shards are in the key
    # values only: a sharded GSI is an ordinary GSI to CloudFormation)
    assert set(gsis) == {i.name for i in shop_model.gsis} == {"GSI1", "GSI2", "GSI3"}
    for name in ("GSI1", "GSI2", "GSI3"):
        assert gsis[name]["KeySchema"] == [
            {"AttributeName": f"{name}PK", "KeyType": "HASH"},
            {"AttributeName": f"{name}SK", "KeyType": "RANGE"},
        ]
    # AND GSI1 and GSI3 project everything
    assert gsis["GSI1"]["Projection"] == gsis["GSI3"]["Projection"] == {"ProjectionType": "ALL"}
    # AND KEYS_ONLY became INCLUDE of the entity attribute, so items parse back into entities
    assert gsis["GSI2"]["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["_type"]}


def test_gsi_count_equals_model_gsis(options_template: Template, mixed_index_model: Model) -> None:
    # GIVEN a model with three GSIs and one LSI
    # WHEN it is synthesized
    props = table_props(options_template)
    # THEN the table has exactly the three GSIs (the LSI is not among them)
    assert len(props["GlobalSecondaryIndexes"]) == len(mixed_index_model.gsis) == 3
    assert set(gsis_by_name(props)) == {"ByOwner", "ByTitle", "ByFolder"}


def test_gsi_without_sort_key_has_hash_key_only(options_template: Template) -> None:
    # GIVEN the ByTitle GSI declared with sort_key=False and KEYS_ONLY
    # WHEN it is synthesized
    by_title = gsis_by_name(table_props(options_template))["ByTitle"]
    # THEN its key is the partition key only, and it projects the entity attribute
    assert by_title["KeySchema"] == [{"AttributeName": "ByTitlePK", "KeyType": "HASH"}]
    assert by_title["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["_type"]}


def test_include_projection_gets_the_entity_attribute_added(options_template: Template) -> None:
    # GIVEN the ByFolder GSI declared with projection=("title", "size")
    # WHEN it is synthesized
    by_folder = gsis_by_name(table_props(options_template))["ByFolder"]
    # THEN it is an INCLUDE projection of the entity attribute plus the declared attributes (a set: sorted)
    assert by_folder["Projection"]["ProjectionType"] == "INCLUDE"
    assert by_folder["Projection"]["NonKeyAttributes"] == ["_type", "size", "title"]


def test_include_projection_naming_the_entity_attribute_lists_it_once(new_stack) -> None:
    # GIVEN an INCLUDE projection that already names the entity attribute
    model = Model(
        "dupe",
        entities=[Entity("A", pk="A#{a}", sk="A", fields=["a", "b"], indexes={"GSI1": IndexKey(pk="B#{b}", sk="A")})],
        indexes=[Index("GSI1", projection=("_type", "note"))],
    )
    stack = new_stack("Dupe")
    # WHEN it is synthesized
    SingleTable(stack, "Data", model=model)
    gsi = gsis_by_name(table_props(Template.from_stack(stack)))["GSI1"]
    # THEN NonKeyAttributes has no duplicate (CloudFormation rejects duplicates)
    assert gsi["Projection"]["NonKeyAttributes"] == ["_type", "note"]


def test_lsi_is_present_when_declared(options_template: Template) -> None:
    # GIVEN a model declaring the LSI ByUpdated
    # WHEN it is synthesized
    # THEN the table has that one LSI on the table partition key and its own sort key
    props = table_props(options_template)
    assert props["LocalSecondaryIndexes"] == [
        {
            "IndexName": "ByUpdated",
            "KeySchema": [
                {"AttributeName": "PK", "KeyType": "HASH"},
                {"AttributeName": "ByUpdatedSK", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    ]


def test_no_lsi_and_no_gsi_when_model_has_no_indexes(pk_only_template: Template) -> None:
    # GIVEN a model without indexes
    # WHEN it is synthesized
    props = table_props(pk_only_template)
    # THEN the table has no secondary index
    assert "GlobalSecondaryIndexes" not in props
    assert "LocalSecondaryIndexes" not in props


# TTL and stream ---------------------------------------------------------------------------------
def test_ttl_uses_the_model_ttl_attribute(shop_cfn: Template) -> None:
    # GIVEN the shop model with ttl_attribute="expires_at"
    # WHEN it is synthesized
    # THEN TTL is enabled on that attribute
    shop_cfn.has_resource_properties(
        GLOBAL_TABLE, {"TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True}}
    )


def test_no_ttl_without_ttl_attribute(pk_only_template: Template) -> None:
    # GIVEN a model without ttl_attribute
    # WHEN it is synthesized
    # THEN the table has no TTL specification
    assert "TimeToLiveSpecification" not in table_props(pk_only_template)


def test_stream_spec_present_when_stream_given(shop_cfn: Template, options_template: Template) -> None:
    # GIVEN tables built with stream=NEW_AND_OLD_IMAGES (app.py) and stream=KEYS_ONLY
    # WHEN they are synthesized
    # THEN each has a stream of the requested view type
    shop_cfn.has_resource_properties(GLOBAL_TABLE, {"StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"}})
    options_template.has_resource_properties(GLOBAL_TABLE, {"StreamSpecification": {"StreamViewType": "KEYS_ONLY"}})


def test_no_stream_spec_by_default(pk_only_template: Template) -> None:
    # GIVEN a table built without stream=
    # WHEN it is synthesized
    # THEN it has no stream
    pk_only_template.has_resource_properties(GLOBAL_TABLE, {"StreamSpecification": Match.absent()})


# Safe defaults ----------------------------------------------------------------------------------
def test_pitr_enabled_by_default(pk_only_template: Template) -> None:
    # GIVEN a table with default props
    # WHEN it is synthesized
    # THEN point-in-time recovery is on in its (only) replica
    replicas = table_props(pk_only_template)["Replicas"]
    assert len(replicas) == 1
    assert replicas[0]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


def test_pitr_can_be_disabled(options_template: Template) -> None:
    # GIVEN point_in_time_recovery=False
    # WHEN it is synthesized
    (replica,) = table_props(options_template)["Replicas"]
    # THEN the replica says so explicitly
    assert replica["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": False}


def test_deletion_protection_and_retain_by_default(pk_only_template: Template) -> None:
    # GIVEN a table with default props
    # WHEN it is synthesized
    table = table_resource(pk_only_template)
    # THEN deletion protection is on and CloudFormation retains the table on delete and replace
    assert table["Properties"]["Replicas"][0]["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == "Retain"
    assert table["UpdateReplacePolicy"] == "Retain"


def test_destroy_without_deletion_protection(options_template: Template) -> None:
    # GIVEN removal_policy=DESTROY with deletion_protection=False
    # WHEN it is synthesized
    table = table_resource(options_template)
    # THEN the table is deletable and deleted with the stack
    assert table["Properties"]["Replicas"][0]["DeletionProtectionEnabled"] is False
    assert table["DeletionPolicy"] == "Delete"


def test_default_encryption_is_dynamodb_owned_key(pk_only_template: Template) -> None:
    # GIVEN a table with default encryption
    # WHEN it is synthesized
    props = table_props(pk_only_template)
    # THEN there is no SSE specification (DynamoDB-owned key) and no KMS key in the stack
    assert "SSESpecification" not in props
    assert "SSESpecification" not in props["Replicas"][0]
    pk_only_template.resource_count_is("AWS::KMS::Key", 0)


def test_customer_managed_key_gives_kms_sse_with_that_key(options_template: Template) -> None:
    # GIVEN encryption=TableEncryptionV2.customer_managed_key(kms.Key(...))
    # WHEN it is synthesized
    props = table_props(options_template)
    (key_id,) = options_template.find_resources("AWS::KMS::Key")
    # THEN SSE is KMS and the replica names the key's ARN
    assert props["SSESpecification"] == {"SSEEnabled": True, "SSEType": "KMS"}
    assert props["Replicas"][0]["SSESpecification"] == {"KMSMasterKeyId": {"Fn::GetAtt": [key_id, "Arn"]}}


def test_on_demand_billing_by_default(pk_only_template: Template) -> None:
    # GIVEN default billing
    # WHEN it is synthesized
    # THEN the table is pay-per-request
    pk_only_template.has_resource_properties(GLOBAL_TABLE, {"BillingMode": "PAY_PER_REQUEST"})


def test_provisioned_billing_sets_table_and_index_capacity(options_template: Template) -> None:
    # GIVEN provisioned billing (read 5, write autoscaled ≤ 20) and index capacity (read 3, write ≤ 10)
    # WHEN it is synthesized
    props = table_props(options_template)
    # THEN the table is provisioned with that capacity
    assert props["BillingMode"] == "PROVISIONED"
    assert props["WriteProvisionedThroughputSettings"]["WriteCapacityAutoScalingSettings"]["MaxCapacity"] == 20
    replica = props["Replicas"][0]
    assert replica["ReadProvisionedThroughputSettings"] == {"ReadCapacityUnits": 5}
    # AND every GSI gets the index capacity
    for gsi in props["GlobalSecondaryIndexes"]:
        assert gsi["WriteProvisionedThroughputSettings"]["WriteCapacityAutoScalingSettings"]["MaxCapacity"] == 10
    assert sorted(g["IndexName"] for g in replica["GlobalSecondaryIndexes"]) == ["ByFolder", "ByOwner", "ByTitle"]
    for gsi in replica["GlobalSecondaryIndexes"]:
        assert gsi["ReadProvisionedThroughputSettings"] == {"ReadCapacityUnits": 3}


def test_table_class_option(options_template: Template, pk_only_template: Template) -> None:
    # GIVEN table_class=STANDARD_INFREQUENT_ACCESS on one table and the default on another
    # WHEN they are synthesized
    # THEN the first replica carries the class and the default one sets none (STANDARD)
    assert table_props(options_template)["Replicas"][0]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert "TableClass" not in table_props(pk_only_template)["Replicas"][0]


# Props errors -----------------------------------------------------------------------------------
def test_destroy_with_deletion_protection_is_rejected(scratch_stack: cdk.Stack, pk_only_model: Model) -> None:
    # GIVEN removal_policy=DESTROY with deletion protection left on
    # WHEN the table is built
    # THEN construction fails, naming the rule
    with pytest.raises(ConstructPropsError, match="DESTROY.*deletion_protection"):
        SingleTable(scratch_stack, "Destroy", model=pk_only_model, removal_policy=cdk.RemovalPolicy.DESTROY)


def test_provisioned_billing_without_index_write_capacity_is_rejected(
    scratch_stack: cdk.Stack, shop_model: Model
) -> None:
    # GIVEN provisioned billing for a model with GSIs but no index_write_capacity
    billing = dynamodb.Billing.provisioned(
        read_capacity=dynamodb.Capacity.fixed(5), write_capacity=dynamodb.Capacity.fixed(5)
    )
    # WHEN the table is built
    # THEN construction fails, naming the GSIs that need capacity
    with pytest.raises(ConstructPropsError, match=r"index_write_capacity.*GSI1, GSI2"):
        SingleTable(scratch_stack, "NoIndexCapacity", model=shop_model, billing=billing)


@pytest.mark.parametrize("prop", ["index_read_capacity", "index_write_capacity"])
def test_index_capacity_with_on_demand_billing_is_rejected(
    scratch_stack: cdk.Stack, shop_model: Model, prop: str
) -> None:
    # GIVEN index capacity with (default) on-demand billing
    # WHEN the table is built
    # THEN construction fails: capacity only applies to provisioned billing
    with pytest.raises(ConstructPropsError, match="only apply to provisioned billing"):
        SingleTable(scratch_stack, f"OnDemand-{prop}", model=shop_model, **{prop: dynamodb.Capacity.fixed(3)})


def test_non_model_is_rejected(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    # GIVEN the model's JSON dict instead of a Model
    # WHEN the table is built
    # THEN construction fails with a props error naming the expected type
    with pytest.raises(ConstructPropsError, match="must be a constructs_lib.model.Model"):
        SingleTable(scratch_stack, "NotAModel", model=shop_model.to_dict())  # type: ignore[arg-type]


def test_customer_managed_key_in_region_agnostic_stack_is_rejected(
    scratch_stack: cdk.Stack, pk_only_model: Model
) -> None:
    # GIVEN a customer-managed key in a stack without a region (CDK cannot render the replica key)
    key = kms.Key(scratch_stack, "CmkNoRegionKey")
    # WHEN the table is built
    # THEN construction fails with a props error saying what to do
    with pytest.raises(ConstructPropsError, match="concrete region"):
        SingleTable(
            scratch_stack,
            "CmkNoRegion",
            model=pk_only_model,
            encryption=dynamodb.TableEncryptionV2.customer_managed_key(key),
        )


def test_unservable_access_pattern_fails_naming_the_pattern() -> None:
    # GIVEN an access pattern reading Orders from an index the Order entity has no keys in
    # WHEN the model (and so the stack) is built
    # THEN it fails with an error naming the pattern
    with pytest.raises(AccessPatternError, match="'orders by status'") as failure:
        Model(
            "unservable",
            entities=[
                Entity("Order", pk="ORDER#{order_id}", sk="ORDER", fields=["order_id", "email"],
                       indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="ORDER")}),
                Entity("Customer", pk="CUSTOMER#{customer_id}", sk="C", fields=["customer_id"]),
            ],
            indexes=[Index("GSI1")],
            access_patterns=[AccessPattern("orders by status", entity="Customer", index="GSI1")],
        )
    assert isinstance(failure.value, ModelError)
    assert "Scan" in str(failure.value)


# Design warnings --------------------------------------------------------------------------------
def test_low_cardinality_gsi_partition_key_warns(status_gsi_stack: cdk.Stack) -> None:
    # GIVEN a model whose GSI partition key is STATUS#{status}
    # WHEN the stack is synthesized
    annotations = Annotations.from_stack(status_gsi_stack)
    # THEN the table construct carries a low-cardinality warning
    annotations.has_warning("*", Match.string_like_regexp(LOW_CARDINALITY))
    annotations.has_warning("/Tickets/Data", Match.string_like_regexp(r"LowCardinalityPartitionKey"))


def test_healthy_model_has_no_warning(pk_only_stack: cdk.Stack) -> None:
    # GIVEN a model keyed by ids only
    # WHEN the stack is synthesized
    # THEN there is no warning at all
    Annotations.from_stack(pk_only_stack).has_no_warning("*", Match.any_value())
