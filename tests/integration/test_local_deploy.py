"""Deploying a synthesized CDK template to DynamoDB Local (constructs_lib.testing.local_deploy)
through the plugin's ``local_deploy`` fixture."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.testing import (
    LocalDeployError,
    UnresolvableIntrinsicError,
    asset_dir,
    deploy_assembly_stack,
    deploy_template,
)

pytestmark = pytest.mark.integration

STACK = "LocalDeployTestStack"
HANDLER_SOURCE = "def handler(event, context):\n    return 'from-asset'\n"


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One synthesized app per module (jsii start-up costs ~3 s per process)."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as ddb
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_sqs as sqs

    base = tmp_path_factory.mktemp("local-deploy")
    code_dir = base / "handler-src"
    code_dir.mkdir()
    (code_dir / "index.py").write_text(HANDLER_SOURCE)

    app = cdk.App(outdir=str(base / "cdk.out"))
    stack = cdk.Stack(app, STACK)
    data = ddb.TableV2(
        stack,
        "DataTable",
        partition_key=ddb.Attribute(name="PK", type=ddb.AttributeType.STRING),
        sort_key=ddb.Attribute(name="SK", type=ddb.AttributeType.STRING),
        global_secondary_indexes=[
            ddb.GlobalSecondaryIndexPropsV2(
                index_name="GSI1",
                partition_key=ddb.Attribute(name="GSI1PK", type=ddb.AttributeType.STRING),
                sort_key=ddb.Attribute(name="GSI1SK", type=ddb.AttributeType.STRING),
                projection_type=ddb.ProjectionType.KEYS_ONLY,
            ),
            ddb.GlobalSecondaryIndexPropsV2(
                index_name="GSI2",
                partition_key=ddb.Attribute(name="GSI2PK", type=ddb.AttributeType.STRING),
                projection_type=ddb.ProjectionType.INCLUDE,
                non_key_attributes=["status", "total"],
            ),
        ],
        local_secondary_indexes=[
            ddb.LocalSecondaryIndexProps(
                index_name="LSI1",
                sort_key=ddb.Attribute(name="LSI1SK", type=ddb.AttributeType.NUMBER),
            )
        ],
        time_to_live_attribute="expiresAt",
        dynamo_stream=ddb.StreamViewType.NEW_AND_OLD_IMAGES,
        point_in_time_recovery_specification=ddb.PointInTimeRecoverySpecification(point_in_time_recovery_enabled=True),
        deletion_protection=True,
        encryption=ddb.TableEncryptionV2.aws_managed_key(),
        removal_policy=cdk.RemovalPolicy.DESTROY,
    )
    ddb.TableV2(
        stack,
        "CounterTable",
        partition_key=ddb.Attribute(name="id", type=ddb.AttributeType.STRING),
        billing=ddb.Billing.provisioned(
            read_capacity=ddb.Capacity.fixed(4),
            write_capacity=ddb.Capacity.autoscaled(min_capacity=2, max_capacity=10),
        ),
        global_secondary_indexes=[
            ddb.GlobalSecondaryIndexPropsV2(
                index_name="ByShard",
                partition_key=ddb.Attribute(name="shard", type=ddb.AttributeType.NUMBER),
                read_capacity=ddb.Capacity.fixed(3),
                write_capacity=ddb.Capacity.autoscaled(min_capacity=1, max_capacity=5),
            )
        ],
        removal_policy=cdk.RemovalPolicy.DESTROY,
    )
    queue = sqs.Queue(stack, "FailedBatches")
    lambda_.Function(
        stack,
        "ReaderFn",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
        environment={
            "TABLE_NAME": data.table_name,
            "TABLE_ARN": data.table_arn,
            "STREAM_ARN": data.table_stream_arn or "",
            "QUEUE_URL": queue.queue_url,
            "QUEUE_ARN": queue.queue_arn,
            "LOG_LEVEL": "INFO",
        },
    )
    lambda_.Function(
        stack,
        "AssetFn",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_asset(str(code_dir)),
    )
    assembly = app.synth()
    template_path = Path(assembly.directory) / f"{STACK}.template.json"
    return {
        "cdk_out": Path(assembly.directory),
        "template_path": template_path,
        "template": json.loads(template_path.read_text()),
    }


@pytest.fixture
def deployed(synthesized, local_deploy):
    return local_deploy(synthesized["template"], name_prefix="it-")


def _all_tables(client: Any) -> set[str]:
    pages = client.get_paginator("list_tables").paginate()
    return {name for page in pages for name in page["TableNames"]}


def _by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {i["IndexName"]: i for i in items}


# ---------------------------------------------------------------------------------------------
# What gets created
# ---------------------------------------------------------------------------------------------
def test_table_v2_synthesizes_global_tables(synthesized):
    # GIVEN the synthesized template  THEN TableV2 became AWS::DynamoDB::GlobalTable resources
    types = [r["Type"] for r in synthesized["template"]["Resources"].values()]
    assert types.count("AWS::DynamoDB::GlobalTable") == 2


def test_key_schema_indexes_stream_and_ttl_match_the_template(deployed, dynamodb_client):
    # GIVEN the deployed stack
    # WHEN we describe the data table
    name = deployed.table_name("DataTable")
    table = dynamodb_client.describe_table(TableName=name)["Table"]
    ttl = dynamodb_client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]

    # THEN the name is generated from the prefix and logical id
    assert name.startswith("it-DataTable")
    # AND keys, indexes, projections, stream and TTL are those of the template
    assert table["KeySchema"] == [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    gsis = _by_name(table["GlobalSecondaryIndexes"])
    assert set(gsis) == {"GSI1", "GSI2"}
    assert gsis["GSI1"]["KeySchema"] == [
        {"AttributeName": "GSI1PK", "KeyType": "HASH"},
        {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
    ]
    assert gsis["GSI1"]["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert gsis["GSI2"]["KeySchema"] == [{"AttributeName": "GSI2PK", "KeyType": "HASH"}]
    assert gsis["GSI2"]["Projection"]["ProjectionType"] == "INCLUDE"
    assert sorted(gsis["GSI2"]["Projection"]["NonKeyAttributes"]) == ["status", "total"]
    lsis = _by_name(table["LocalSecondaryIndexes"])
    assert lsis["LSI1"]["KeySchema"] == [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "LSI1SK", "KeyType": "RANGE"},
    ]
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}
    assert deployed.stream_arn("DataTable") == table["LatestStreamArn"]


def test_provisioned_global_table_gets_numbers_from_replica_and_autoscaling(deployed, dynamodb_client):
    # GIVEN a PROVISIONED TableV2: fixed reads (replica settings), autoscaled writes
    table = dynamodb_client.describe_table(TableName=deployed.table_name("CounterTable"))["Table"]

    # THEN reads use the replica's fixed capacity and writes the autoscaling minimum
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 4
    assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 2
    index = _by_name(table["GlobalSecondaryIndexes"])["ByShard"]
    assert index["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    assert index["ProvisionedThroughput"]["WriteCapacityUnits"] == 1
    # AND the autoscaling that cannot run locally is reported, not dropped
    ignored = deployed.ignored[deployed.logical_id("CounterTable")]
    assert "WriteProvisionedThroughputSettings.WriteCapacityAutoScalingSettings" in ignored
    assert any(p.startswith("GlobalSecondaryIndexes[ByShard].WriteProvisionedThroughputSettings") for p in ignored)
    # AND no TTL was configured on a table without TimeToLiveSpecification
    ttl = dynamodb_client.describe_time_to_live(TableName=deployed.table_name("CounterTable"))
    assert ttl["TimeToLiveDescription"]["TimeToLiveStatus"] == "DISABLED"


def test_unreproducible_properties_are_listed_and_other_resources_skipped(deployed):
    # GIVEN a table with SSE, PITR and deletion protection
    ignored = deployed.ignored[deployed.logical_id("DataTable")]

    # THEN each is listed as ignored
    assert "SSESpecification" in ignored
    assert any(p.endswith("PointInTimeRecoverySpecification") for p in ignored)
    assert any(p.endswith("DeletionProtectionEnabled") for p in ignored)
    # AND non-table resources are skipped, by type
    skipped_types = set(deployed.skipped.values())
    assert {"AWS::Lambda::Function", "AWS::IAM::Role"} <= skipped_types
    assert set(deployed.tables).isdisjoint(deployed.skipped)


# ---------------------------------------------------------------------------------------------
# Resolving the template against the deployment
# ---------------------------------------------------------------------------------------------
def test_function_environment_resolves_table_references(deployed):
    # GIVEN the function whose environment refers to the data table
    # WHEN its environment is resolved
    env = deployed.function_environment("ReaderFn")

    # THEN Ref/GetAtt became the local name and ARNs, and literals are kept
    assert env["TABLE_NAME"] == deployed.table_name("DataTable")
    assert env["TABLE_ARN"] == deployed.table_arn("DataTable")
    assert env["TABLE_ARN"].endswith(f":table/{env['TABLE_NAME']}")
    assert env["STREAM_ARN"] == deployed.stream_arn("DataTable")
    assert env["LOG_LEVEL"] == "INFO"


def test_a_queue_is_not_deployed_but_functions_are_told_where_it_would_be(deployed):
    # GIVEN a function told its failure queue's URL and ARN (an SQS queue DynamoDB Local cannot hold)
    queue = next(lid for lid, t in deployed.skipped.items() if t == "AWS::SQS::Queue")
    # WHEN its environment is resolved
    env = deployed.function_environment("ReaderFn")
    # THEN they are the URL and ARN AWS would give a queue CloudFormation named after the stack and logical id
    # (a template deployed without a stack name: "local")
    assert deployed.stack_name is None
    name = f"local-{queue}"
    assert env["QUEUE_URL"] == f"https://sqs.us-east-1.amazonaws.com/000000000000/{name}"
    assert env["QUEUE_ARN"] == f"arn:aws:sqs:us-east-1:000000000000:{name}"
    assert deployed.resolve({"Fn::GetAtt": [queue, "QueueName"]}) == name
    with pytest.raises(UnresolvableIntrinsicError, match="attribute 'Nope' of an SQS queue"):
        deployed.resolve({"Fn::GetAtt": [queue, "Nope"]})


def test_function_environment_overrides_replace_drop_and_add_variables(deployed):
    # GIVEN overrides for a variable, a variable to leave out, and one the template lacks
    env = deployed.function_environment(
        "ReaderFn", overrides={"LOG_LEVEL": "DEBUG", "STREAM_ARN": None, "EXTRA": "x"}
    )
    # THEN they win over the template, and the rest is still resolved
    assert env["LOG_LEVEL"] == "DEBUG" and env["EXTRA"] == "x" and "STREAM_ARN" not in env
    assert env["TABLE_NAME"] == deployed.table_name("DataTable")


def test_put_and_get_through_the_resolved_table_name(deployed, dynamodb_client):
    # GIVEN the table name the Lambda would see
    table = deployed.function_environment("ReaderFn")["TABLE_NAME"]
    item = {
        "PK": {"S": "ORDER#1"},
        "SK": {"S": "META"},
        "GSI2PK": {"S": "STATUS#open"},
        "status": {"S": "open"},
        "total": {"N": "42"},
        "secret": {"S": "not projected"},
    }

    # WHEN an item is written, read back, and the INCLUDE index is queried
    dynamodb_client.put_item(TableName=table, Item=item)
    got = dynamodb_client.get_item(TableName=table, Key={"PK": item["PK"], "SK": item["SK"]}, ConsistentRead=True)
    via_index = dynamodb_client.query(
        TableName=table,
        IndexName="GSI2",
        KeyConditionExpression="GSI2PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "STATUS#open"}},
    )["Items"]

    # THEN the item round-trips, and the index projects only keys + the INCLUDE attributes
    assert got["Item"] == item
    assert len(via_index) == 1
    assert set(via_index[0]) == {"PK", "SK", "GSI2PK", "status", "total"}


def test_resolve_supports_join_sub_and_pseudo_parameters(deployed):
    # GIVEN intrinsics mixing table references and pseudo parameters
    data = deployed.logical_id("DataTable")
    join = {"Fn::Join": ["/", [{"Ref": data}, {"Ref": "AWS::Region"}, "x"]]}
    sub = {"Fn::Sub": "${" + data + "}|${" + data + ".Arn}|${AWS::AccountId}|${!Literal}"}

    # WHEN they are resolved  THEN they produce local values
    name = deployed.table_name(data)
    assert deployed.resolve(join) == f"{name}/us-east-1/x"
    assert deployed.resolve(sub) == f"{name}|{deployed.table_arn(data)}|000000000000|${{Literal}}"
    assert deployed.resolve({"Ref": data}) == name
    assert deployed.resolve(["plain", 3]) == ["plain", 3]


def test_unresolvable_intrinsics_raise_naming_them(deployed):
    # GIVEN references to a skipped resource, an unknown attribute, an unsupported function
    role = next(lid for lid, t in deployed.skipped.items() if t == "AWS::IAM::Role")
    data = deployed.logical_id("DataTable")

    # WHEN they are resolved  THEN a typed error names the intrinsic and the reason
    with pytest.raises(UnresolvableIntrinsicError, match=f"{role}.*AWS::IAM::Role"):
        deployed.resolve({"Fn::GetAtt": [role, "Arn"]})
    with pytest.raises(UnresolvableIntrinsicError, match="NotAnAttribute"):
        deployed.resolve({"Fn::GetAtt": [data, "NotAnAttribute"]})
    with pytest.raises(UnresolvableIntrinsicError, match="Fn::Select"):
        deployed.resolve({"Fn::Select": [0, ["a"]]})
    with pytest.raises(UnresolvableIntrinsicError, match=r"BootstrapVersion.*parameter"):
        deployed.resolve({"Ref": "BootstrapVersion"})


def test_logical_id_lookup_by_exact_id_or_unique_prefix(local_deploy):
    # GIVEN hand-written tables whose logical ids share prefixes (one is a CDK-style hash)
    template = {
        "Resources": {
            "OrdersA1B2C3D4": _plain_table(),
            "OrdersArchive0F0F0F0F": _plain_table(),
        }
    }
    deployment = local_deploy(template)

    # THEN an exact id or a prefix followed by exactly a CDK hash resolves
    assert deployment.logical_id("OrdersArchive0F0F0F0F") == "OrdersArchive0F0F0F0F"
    assert deployment.logical_id("Orders") == "OrdersA1B2C3D4"
    assert deployment.logical_id("OrdersArch") == "OrdersArchive0F0F0F0F"
    # AND an ambiguous or unknown prefix is a clear error naming it
    with pytest.raises(LocalDeployError, match="'Ord' is ambiguous"):
        deployment.table_name("Ord")
    with pytest.raises(LocalDeployError, match="'Customers'"):
        deployment.table_name("Customers")


def _plain_table(**extra: Any) -> dict[str, Any]:
    return {
        "Type": "AWS::DynamoDB::Table",
        "Properties": {
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": "3"},
            **extra,
        },
    }


def test_classic_table_keeps_fixed_name_and_provisioned_default(local_deploy, dynamodb_client):
    # GIVEN an AWS::DynamoDB::Table with a fixed TableName, no BillingMode, and tags
    fixed = f"fixed-{uuid.uuid4().hex[:12]}"
    deployment = local_deploy(
        {"Resources": {"Fixed": _plain_table(TableName=fixed, Tags=[{"Key": "k", "Value": "v"}])}}
    )

    # THEN the template name is used verbatim, capacity is provisioned, tags are ignored
    assert deployment.table_name("Fixed") == fixed
    table = dynamodb_client.describe_table(TableName=fixed)["Table"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 3
    assert deployment.ignored == {"Fixed": ["Tags"]}


def test_global_table_uses_the_stack_region_replica_and_lists_the_rest(local_deploy, dynamodb_client):
    # GIVEN a hand-written on-demand global table with two replicas, per-replica extras, a
    # condition, and a stray provisioned setting that on-demand tables cannot use
    template = {
        "Conditions": {"Always": {"Fn::Equals": ["a", "a"]}},
        "Resources": {
            "Global": {
                "Type": "AWS::DynamoDB::GlobalTable",
                "Condition": "Always",
                "Properties": {
                    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                    "BillingMode": "PAY_PER_REQUEST",
                    "WriteProvisionedThroughputSettings": {"WriteCapacityAutoScalingSettings": {"MinCapacity": 1}},
                    "Replicas": [
                        {"Region": "eu-west-1"},
                        {
                            "Region": {"Ref": "AWS::Region"},
                            "ContributorInsightsSpecification": {"Enabled": True},
                            "Tags": [{"Key": "team", "Value": "data"}],
                        },
                    ],
                },
            }
        },
    }

    # WHEN deployed
    deployment = local_deploy(template)

    # THEN the table exists on demand, and everything not reproduced is listed
    table = dynamodb_client.describe_table(TableName=deployment.table_name("Global"))["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert set(deployment.ignored["Global"]) == {
        "Condition",
        "Replicas[0]",
        "Replicas[1].ContributorInsightsSpecification",
        "Replicas[1].Tags",
        "WriteProvisionedThroughputSettings",
    }


# ---------------------------------------------------------------------------------------------
# Failures and teardown
# ---------------------------------------------------------------------------------------------
def test_intrinsic_in_key_schema_names_logical_id_and_property(dynamodb_client):
    # GIVEN a table whose key attribute is an intrinsic
    table = _plain_table()
    table["Properties"]["KeySchema"] = [{"AttributeName": {"Ref": "KeyParam"}, "KeyType": "HASH"}]

    # WHEN deployed  THEN the error names the resource and the property path
    with pytest.raises(LocalDeployError, match=r"'BadKeys'.*KeySchema\[0\]\.AttributeName"):
        deploy_template({"Resources": {"BadKeys": table}}, client=dynamodb_client)


def test_failed_deploy_deletes_tables_created_before_the_failure(local_deploy, dynamodb_client):
    # GIVEN a table name that already exists
    taken = f"taken-{uuid.uuid4().hex[:12]}"
    local_deploy({"Resources": {"First": _plain_table(TableName=taken)}})
    before = _all_tables(dynamodb_client)

    # WHEN a template creates one new table, then collides on that name
    template = {"Resources": {"Fresh": _plain_table(), "Clash": _plain_table(TableName=taken)}}
    with pytest.raises(LocalDeployError, match=taken):
        deploy_template(template, client=dynamodb_client, name_prefix="rollback-")

    # THEN the new table was removed again (and the existing one untouched)
    after = _all_tables(dynamodb_client)
    assert after == before


def test_delete_removes_tables_and_is_idempotent(synthesized, dynamodb_client):
    # GIVEN a deployment made without the fixture
    deployment = deploy_template(synthesized["template_path"], client=dynamodb_client, name_prefix="del-")
    names = set(deployment.tables.values())
    assert names <= _all_tables(dynamodb_client)

    # WHEN it is deleted twice
    deployment.delete()
    deployment.delete()

    # THEN its tables are gone
    assert names.isdisjoint(_all_tables(dynamodb_client))


# ---------------------------------------------------------------------------------------------
# Cloud assembly helpers
# ---------------------------------------------------------------------------------------------
def test_deploy_assembly_stack_reads_the_stack_template(synthesized, dynamodb_client):
    # GIVEN the cloud assembly directory
    # WHEN the stack is deployed by name
    with deploy_assembly_stack(synthesized["cdk_out"], STACK, client=dynamodb_client) as deployment:
        # THEN both tables exist
        assert len(deployment.tables) == 2
        described = dynamodb_client.describe_table(TableName=deployment.table_name("DataTable"))
        assert described["Table"]["TableStatus"] == "ACTIVE"
    # AND leaving the context deleted them
    assert set(deployment.tables.values()).isdisjoint(_all_tables(dynamodb_client))

    with pytest.raises(LocalDeployError, match="NoSuchStack"):
        deploy_assembly_stack(synthesized["cdk_out"], "NoSuchStack", client=dynamodb_client)


def test_asset_dir_finds_the_function_code(synthesized):
    # GIVEN the assembly and its template
    cdk_out, template = synthesized["cdk_out"], synthesized["template"]

    # WHEN the asset directory of the asset-backed function is looked up
    path = asset_dir(cdk_out, template, "AssetFn")

    # THEN it is inside cdk.out and holds the handler source
    assert path.is_dir()
    assert path.is_relative_to(cdk_out.resolve())
    assert (path / "index.py").read_text() == HANDLER_SOURCE
    # AND inline code has no asset directory
    with pytest.raises(LocalDeployError, match="inline code"):
        asset_dir(cdk_out, template, "ReaderFn")


def test_asset_dir_prefers_asset_path_metadata(synthesized, tmp_path):
    # GIVEN a template whose function carries aws:asset:path metadata (as the CDK CLI writes)
    template = json.loads(json.dumps(synthesized["template"]))
    fn_id = next(lid for lid in template["Resources"] if lid.startswith("AssetFn") and "ServiceRole" not in lid)
    (tmp_path / "asset.custom").mkdir()
    template["Resources"][fn_id]["Metadata"] = {"aws:asset:path": "asset.custom"}

    # WHEN looked up  THEN the metadata path, relative to cdk.out, wins
    assert asset_dir(tmp_path, template, "AssetFn") == (tmp_path / "asset.custom").resolve()
