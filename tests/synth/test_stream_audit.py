"""StreamAudit at synth time: the audit table, the audit function's mapping, permissions, asset."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms

from constructs_lib import ConstructPropsError, ShardedCounter, SingleTable, StreamAudit
from constructs_lib.model import Model
from constructs_lib.testing import asset_dir

NEW_AND_OLD = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


class Synth:
    def __init__(self, template: dict[str, Any], outdir: Path, audit: StreamAudit) -> None:
        self.template, self.outdir, self.audit = template, outdir, audit

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {lid: r for lid, r in self.template["Resources"].items() if r["Type"] == cfn_type}

    def tables(self) -> dict[str, dict[str, Any]]:
        return self.of_type("AWS::DynamoDB::GlobalTable")

    def audit_table(self) -> tuple[str, dict[str, Any]]:
        (item,) = [(lid, r) for lid, r in self.tables().items() if lid.startswith("Audit")]
        return item

    def source_table_id(self) -> str:
        (lid,) = [lid for lid in self.tables() if lid.startswith("Data")]
        return lid

    def function(self) -> tuple[str, dict[str, Any]]:
        (item,) = [(lid, r) for lid, r in self.of_type("AWS::Lambda::Function").items() if lid.startswith("Audit")]
        return item

    def statements_of(self, role_id: str) -> list[dict[str, Any]]:
        return [s for p in self.of_type("AWS::IAM::Policy").values() if {"Ref": role_id} in p["Properties"]["Roles"]
                for s in p["Properties"]["PolicyDocument"]["Statement"]]


def synth(model: Model, tmp: Path, *, reader: bool = False, cmk: bool = False, region: str | None = None,
          **props: Any) -> Synth:
    app = cdk.App(outdir=str(tmp))
    region = region or ("eu-west-1" if cmk else None)
    stack = cdk.Stack(app, "Audited", env=cdk.Environment(region=region) if region else None)
    encryption = dynamodb.TableEncryptionV2.customer_managed_key(kms.Key(stack, "SourceKey")) if cmk else None
    table = SingleTable(stack, "Data", model=model, stream=NEW_AND_OLD, encryption=encryption)
    audit = StreamAudit(stack, "Audit", source=table, **props)
    if reader:
        audit.grant_read(iam.Role(stack, "Reader", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")))
    assembly = app.synth()
    return Synth(assembly.get_stack_by_name("Audited").template, Path(assembly.directory), audit)


@pytest.fixture(scope="module")
def shop(shop_model: Model, tmp_path_factory: pytest.TempPathFactory) -> Synth:
    return synth(shop_model, tmp_path_factory.mktemp("audit"), reader=True, exclude_entities=ShardedCounter.ENTITIES,
                 redact=["email"], retention=cdk.Duration.days(365))


# The audit table ------------------------------------------------------------------------------------
def test_audit_table_is_recoverable_protected_and_retained(shop: Synth) -> None:
    _, table = shop.audit_table()
    props = table["Properties"]
    # THEN PITR and deletion protection are on and CloudFormation keeps the table
    (replica,) = props["Replicas"]
    assert replica["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert replica["DeletionProtectionEnabled"] is True
    assert (table["DeletionPolicy"], table["UpdateReplacePolicy"]) == ("Retain", "Retain")
    # AND its keys: one partition per audited item, time-ordered; a sharded day index
    assert props["KeySchema"] == [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]
    (gsi,) = props["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "ByDay" and [k["AttributeName"] for k in gsi["KeySchema"]] == ["GSI1PK", "GSI1SK"]
    # AND retention is a TTL on the records
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}


def test_without_retention_records_never_expire(shop_model: Model, tmp_path: Path) -> None:
    _, table = synth(shop_model, tmp_path).audit_table()
    assert "TimeToLiveSpecification" not in table["Properties"]


def test_encryption_follows_the_source_or_uses_its_own_key(shop_model: Model, tmp_path: Path) -> None:
    # GIVEN a source encrypted with a customer-managed key WHEN audited with encryption="source"
    shared = synth(shop_model, tmp_path / "a", cmk=True)
    _, audit_table = shared.audit_table()
    (source_id,) = [lid for lid in shared.of_type("AWS::KMS::Key") if lid.startswith("SourceKey")]
    # THEN the audit table uses the same key
    assert audit_table["Properties"]["SSESpecification"]["SSEType"] == "KMS"
    assert audit_table["Properties"]["Replicas"][0]["SSESpecification"]["KMSMasterKeyId"] == {"Fn::GetAtt": [source_id, "Arn"]}
    # WHEN encryption="own_key" THEN a new rotating, retained key encrypts it
    own = synth(shop_model, tmp_path / "b", region="eu-west-1", encryption="own_key")
    ((key_id, key),) = [(lid, k) for lid, k in own.of_type("AWS::KMS::Key").items() if lid.startswith("Audit")]
    assert key["Properties"]["EnableKeyRotation"] is True and key["DeletionPolicy"] == "Retain"
    _, own_table = own.audit_table()
    assert own_table["Properties"]["Replicas"][0]["SSESpecification"]["KMSMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}


# The mapping ---------------------------------------------------------------------------------------------
def test_mapping_has_capped_retries_bisect_age_queue_and_partial_responses(shop: Synth) -> None:
    (mapping,) = shop.of_type("AWS::Lambda::EventSourceMapping").values()
    props = mapping["Properties"]
    ((queue_id, queue),) = shop.of_type("AWS::SQS::Queue").items()
    assert props["BisectBatchOnFunctionError"] is True and props["MaximumRetryAttempts"] == 5
    assert props["MaximumRecordAgeInSeconds"] == 86_400
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert props["EventSourceArn"] == {"Fn::GetAtt": [shop.source_table_id(), "StreamArn"]}
    # AND the failure queue is KMS-encrypted and refuses non-TLS requests
    assert queue["Properties"]["KmsMasterKeyId"] == "alias/aws/sqs"
    (policy,) = shop.of_type("AWS::SQS::QueuePolicy").values()
    assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
               for s in policy["Properties"]["PolicyDocument"]["Statement"])


def test_excluded_entities_become_event_filters(shop: Synth) -> None:
    (mapping,) = shop.of_type("AWS::Lambda::EventSourceMapping").values()
    patterns = [json.loads(f["Pattern"]) for f in mapping["Properties"]["FilterCriteria"]["Filters"]]
    skipped = sorted(ShardedCounter.ENTITIES)
    # THEN inserts/updates and removes of other entities pass, counter items never invoke the function
    assert {"dynamodb": {"NewImage": {"_type": {"S": [{"anything-but": skipped}]}}}} in patterns
    assert {"eventName": ["REMOVE"], "dynamodb": {"OldImage": {"_type": {"S": [{"anything-but": skipped}]}}}} in patterns
    # AND items without an entity attribute are still audited, with "exists" on the leaf
    # ("_type"."S"), never on the type map, whose result AWS leaves unspecified
    for image in ("NewImage", "OldImage"):
        without_type = [p for p in patterns if p["dynamodb"].get(image, {}).get("_type") == {"S": [{"exists": False}]}]
        assert len(without_type) == 1, patterns
    assert len(patterns) == 4


def test_every_synthesized_event_filter_is_written_on_leaves(shop_template: dict[str, Any]) -> None:
    # GIVEN every event source mapping of the showcase's shop stack
    mappings = [r for r in shop_template["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert mappings

    def attribute_leaves(pattern: dict[str, Any]) -> list[Any]:
        images = pattern.get("dynamodb", {})
        return [value for image in ("NewImage", "OldImage", "Keys") for value in images.get(image, {}).values()]

    # THEN each image attribute is matched through its type map ({"S": [...]}), never by a list
    # placed on the attribute itself (a non-leaf node)
    for mapping in mappings:
        for entry in mapping["Properties"].get("FilterCriteria", {}).get("Filters", []):
            for value in attribute_leaves(json.loads(entry["Pattern"])):
                assert isinstance(value, dict) and all(isinstance(v, list) for v in value.values()), entry


def test_included_entities_become_event_filters(shop_model: Model, tmp_path: Path) -> None:
    (mapping,) = synth(shop_model, tmp_path, include_entities=["Order", "User"]).of_type(
        "AWS::Lambda::EventSourceMapping").values()
    patterns = [json.loads(f["Pattern"]) for f in mapping["Properties"]["FilterCriteria"]["Filters"]]
    assert patterns == [{"dynamodb": {image: {"_type": {"S": ["Order", "User"]}}}} for image in ("NewImage", "OldImage")]


# Permissions -----------------------------------------------------------------------------------------------
def test_audit_function_can_only_add_records_and_read_the_stream(shop: Synth) -> None:
    _, fn = shop.function()
    statements = shop.statements_of(fn["Properties"]["Role"]["Fn::GetAtt"][0])
    audit_id, _ = shop.audit_table()
    # THEN no wildcard actions or resources
    assert all("*" not in a for s in statements for a in as_list(s["Action"]))
    assert all(r != "*" for s in statements for r in as_list(s["Resource"]))
    # AND on the audit table it may only PutItem/BatchWriteItem (no update, no delete), not on indexes
    on_audit = [s for s in statements if {"Fn::GetAtt": [audit_id, "Arn"]} in as_list(s["Resource"])]
    assert [sorted(as_list(s["Action"])) for s in on_audit] == [["dynamodb:BatchWriteItem", "dynamodb:PutItem"]]
    assert all(len(as_list(s["Resource"])) == 1 for s in on_audit)
    # AND on the source only its stream
    dynamo_resources = {json.dumps(r, sort_keys=True) for s in statements for r in as_list(s["Resource"])
                        if any(a.startswith("dynamodb:") for a in as_list(s["Action"]))}
    assert dynamo_resources == {json.dumps({"Fn::GetAtt": [x, y]}, sort_keys=True)
                                for x, y in ((audit_id, "Arn"), (shop.source_table_id(), "StreamArn"))}
    # AND it reads the redaction salt secret
    assert any("secretsmanager:GetSecretValue" in as_list(s["Action"]) for s in statements)


def test_nobody_else_may_write_the_audit_table(shop: Synth) -> None:
    audit_id, _ = shop.audit_table()
    _, fn = shop.function()
    audit_role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    writes = {"dynamodb:PutItem", "dynamodb:BatchWriteItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}
    for policy in shop.of_type("AWS::IAM::Policy").values():
        if {"Ref": audit_role} in policy["Properties"]["Roles"]:
            continue
        for s in policy["Properties"]["PolicyDocument"]["Statement"]:
            if audit_id in json.dumps(s["Resource"]):
                assert not writes & set(as_list(s["Action"])), s


def test_grant_read_is_query_and_get_on_table_and_day_index(shop: Synth) -> None:
    (reader_role,) = [lid for lid in shop.of_type("AWS::IAM::Role") if lid.startswith("Reader")]
    (statement,) = shop.statements_of(reader_role)
    audit_id, _ = shop.audit_table()
    arn = {"Fn::GetAtt": [audit_id, "Arn"]}
    assert sorted(as_list(statement["Action"])) == ["dynamodb:GetItem", "dynamodb:Query"]
    assert statement["Resource"] == [arn, {"Fn::Join": ["", [arn, "/index/ByDay"]]}]


def test_redacting_a_field_also_redacts_index_keys_built_from_it(shop: Synth) -> None:
    # GIVEN redact=["email"] on the shop model, whose GSI1PK is EMAIL#{email} for users
    _, fn = shop.function()
    spec = json.loads(fn["Properties"]["Environment"]["Variables"]["CONSTRUCTS_LIB_AUDIT"])
    # THEN the spec redacts the derived key attribute too
    assert spec["redact"] == ["email", "GSI1PK"] and spec["redaction"] == "hash"


def test_alarms_on_errors_iterator_age_and_queue_depth(shop: Synth) -> None:
    metrics = {a["Properties"]["MetricName"] for a in shop.of_type("AWS::CloudWatch::Alarm").values()}
    assert metrics == {"Errors", "IteratorAge", "ApproximateNumberOfMessagesVisible"}
    assert shop.audit.errors_alarm and shop.audit.iterator_age_alarm and shop.audit.dlq_alarm


def test_asset_holds_the_runtime_and_no_cdk(shop: Synth) -> None:
    fn_id, fn = shop.function()
    asset = asset_dir(shop.outdir, shop.template, fn_id)
    files = {p.relative_to(asset).as_posix() for p in asset.rglob("*") if p.is_file()}
    assert fn["Properties"]["Handler"] == "constructs_lib.runtime.handlers.audit.handler"
    assert "constructs_lib/runtime/handlers/audit.py" in files
    assert not [f for f in files if f.split("/")[0] in ("aws_cdk", "constructs", "jsii")]


# Bad props -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("stream", "kwargs", "message"),
    [
        (None, {}, "stream is off; auditing needs stream=StreamViewType.NEW_AND_OLD_IMAGES"),
        (dynamodb.StreamViewType.KEYS_ONLY, {}, "stream is KEYS_ONLY"),
        (dynamodb.StreamViewType.NEW_IMAGE, {}, "stream is NEW_IMAGE"),
        (NEW_AND_OLD, {"redact": ["PK"]}, "cannot redact 'PK': it is a key attribute"),
        (NEW_AND_OLD, {"redact": ["user_id"]}, "cannot redact field 'user_id': it is part of entity 'User'"),
        (NEW_AND_OLD, {"include_entities": ["User"], "exclude_entities": ["Order"]}, "not both"),
        (NEW_AND_OLD, {"exclude_entities": ["Nope"]}, r"entities \['Nope'\] are neither in model 'shop'"),
        (NEW_AND_OLD, {"retention": cdk.Duration.hours(2)}, "retention 2 hours must be at least 1 day"),
        (NEW_AND_OLD, {"encryption": "kms"}, "encryption 'kms' must be 'source' or 'own_key'"),
        (NEW_AND_OLD, {"encryption": "own_key"}, "own_key' needs a stack with a concrete region"),
        (NEW_AND_OLD, {"retry_attempts": -1}, "retry_attempts -1 must be an int from 0 to 10000"),
        (NEW_AND_OLD, {"day_shards": 0}, "day_shards"),
        (NEW_AND_OLD, {"redaction": "encrypt", "redact": ["email"]}, "redaction"),
    ],
)
def test_bad_props_fail_at_construction(
    shop_model: Model, new_stack: Callable[[str], cdk.Stack], stream: Any, kwargs: dict[str, Any], message: str
) -> None:
    stack = new_stack("BadAudit")
    table = SingleTable(stack, "Data", model=shop_model, stream=stream)
    with pytest.raises(ConstructPropsError, match=message):
        StreamAudit(stack, "Audit", source=table, **kwargs)


# Removal policy and deletion protection --------------------------------------------------------------------------
def test_audit_table_is_retained_and_protected_by_default(shop: Synth) -> None:
    # GIVEN the audit with default props
    _, table = shop.audit_table()
    # THEN CloudFormation keeps the table (and the salt) and DeleteTable is refused
    assert table["DeletionPolicy"] == "Retain" and table["UpdateReplacePolicy"] == "Retain"
    assert table["Properties"]["Replicas"][0]["DeletionProtectionEnabled"] is True
    (secret,) = shop.of_type("AWS::SecretsManager::Secret").values()
    assert secret["DeletionPolicy"] == "Retain"


def test_a_dev_stack_can_destroy_the_audit_table(shop_model: Model, tmp_path: Path) -> None:
    # GIVEN an audit with its own key, removal_policy=DESTROY and deletion protection off
    dev = synth(shop_model, tmp_path, redact=["email"], encryption="own_key", region="eu-west-1",
                removal_policy=cdk.RemovalPolicy.DESTROY, deletion_protection=False)
    _, table = dev.audit_table()
    # THEN the audit table, its key and the salt secret are deleted with the stack
    assert table["DeletionPolicy"] == "Delete"
    assert table["Properties"]["Replicas"][0]["DeletionProtectionEnabled"] is False
    (secret,) = dev.of_type("AWS::SecretsManager::Secret").values()
    (key,) = dev.of_type("AWS::KMS::Key").values()
    assert secret["DeletionPolicy"] == "Delete" and key["DeletionPolicy"] == "Delete"
    # AND the source table keeps its own (safe) defaults
    source = dev.tables()[dev.source_table_id()]
    assert source["DeletionPolicy"] == "Retain"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"removal_policy": cdk.RemovalPolicy.DESTROY},
     "removal_policy=DESTROY with deletion_protection=True would fail.*set deletion_protection=False"),
    ({"deletion_protection": "no"}, "deletion_protection 'no' must be True or False"),
    ({"removal_policy": "destroy"}, "removal_policy 'destroy' must be an aws_cdk.RemovalPolicy"),
])
def test_bad_removal_props_are_refused(
    shop_model: Model, new_stack: Callable[[str], cdk.Stack], kwargs: dict[str, Any], message: str
) -> None:
    # GIVEN a source table with a stream
    stack = new_stack("BadRemoval")
    table = SingleTable(stack, "Data", model=shop_model, stream=NEW_AND_OLD)
    # WHEN the audit gets a removal setting that would fail at deploy time or is not one
    # THEN a props error names the value and the rule
    with pytest.raises(ConstructPropsError, match=message):
        StreamAudit(stack, "Audit", source=table, **kwargs)
