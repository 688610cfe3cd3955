"""ShardedCounter at synth time: the aggregator, its stream mapping, grants, queue, alarms, asset."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from constructs_lib import ConstructPropsError, ShardedCounter, SingleTable
from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.testing import asset_dir

FAMILY_FILTER = {"dynamodb": {"Keys": {"PK": {"S": [{"prefix": "COUNTER#video_views#"}]}, "SK": {"S": ["SHARD"]}}}}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@dataclass
class CounterStack:
    template: dict[str, Any]
    outdir: Path

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {lid: r for lid, r in self.template["Resources"].items() if r["Type"] == cfn_type}

    def one(self, cfn_type: str) -> tuple[str, dict[str, Any]]:
        (item,) = self.of_type(cfn_type).items()
        return item

    def statements_of_role(self, role_id: str) -> list[dict[str, Any]]:
        return [
            s for p in self.of_type("AWS::IAM::Policy").values() if {"Ref": role_id} in p["Properties"]["Roles"]
            for s in p["Properties"]["PolicyDocument"]["Statement"]
        ]

    @property
    def table_id(self) -> str:
        return self.one("AWS::DynamoDB::GlobalTable")[0]


def _synth(app: cdk.App, stack: cdk.Stack) -> CounterStack:
    assembly = app.synth()
    artifact = assembly.get_stack_by_name(stack.stack_name)
    return CounterStack(artifact.template, Path(assembly.directory))


@pytest.fixture(scope="module")
def viral(shop_model: Model, tmp_path_factory: pytest.TempPathFactory) -> CounterStack:
    """50,000 views/s on the shop table (stream on), plus two roles granted increment / read."""
    app = cdk.App(outdir=str(tmp_path_factory.mktemp("counter-out")))
    stack = cdk.Stack(app, "Viral")
    table = SingleTable(stack, "Data", model=shop_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    views = ShardedCounter(stack, "Views", table=table, name="video_views", expected_writes_per_second=50_000)
    for name, grant in (("Incrementer", views.grant_increment), ("Reader", views.grant_read)):
        grant(iam.Role(stack, name, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")))
    synthesized = _synth(app, stack)
    synthesized.construct = views  # type: ignore[attr-defined]
    return synthesized


@pytest.fixture(scope="module")
def idempotent(shop_model: Model, new_stack: Callable[[str], cdk.Stack]) -> CounterStack:
    stack = new_stack("Idempotent")
    table = SingleTable(stack, "Data", model=shop_model, stream=dynamodb.StreamViewType.NEW_IMAGE)
    views = ShardedCounter(stack, "Views", table=table, name="video_views", shards=8,
                           idempotency_window=cdk.Duration.hours(24))
    views.grant_increment(iam.Role(stack, "Incrementer", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")))
    return CounterStack(Template.from_stack(stack).to_json(), Path())


@pytest.fixture(scope="module")
def scheduled(shop_model: Model, new_stack: Callable[[str], cdk.Stack]) -> CounterStack:
    stack = new_stack("Scheduled")
    table = SingleTable(stack, "Data", model=shop_model)  # no stream
    ShardedCounter(stack, "Likes", table=table, name="likes", shards=4, schedule=cdk.Duration.minutes(5),
                   scheduled_counters=["home", "about"])
    return CounterStack(Template.from_stack(stack).to_json(), Path())


# The stream mapping ---------------------------------------------------------------------------------
def test_mapping_filters_to_this_familys_shards_with_safe_failure_handling(viral: CounterStack) -> None:
    # GIVEN the counter on a table with a stream WHEN synthesized
    _, mapping = viral.one("AWS::Lambda::EventSourceMapping")
    props = mapping["Properties"]
    queue_id, _ = viral.one("AWS::SQS::Queue")
    # THEN only this family's shard items invoke the aggregator (the filter is on the keys)
    assert [json.loads(f["Pattern"]) for f in props["FilterCriteria"]["Filters"]] == [FAMILY_FILTER]
    # AND failures are bisected, retried a capped number of times, aged out and sent to the queue
    assert props["BisectBatchOnFunctionError"] is True
    assert props["MaximumRetryAttempts"] == 5
    assert props["MaximumRecordAgeInSeconds"] == 3600
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["DestinationConfig"] == {"OnFailure": {"Destination": {"Fn::GetAtt": [queue_id, "Arn"]}}}
    # AND the documented batching defaults apply, starting from the oldest record
    assert (props["BatchSize"], props["MaximumBatchingWindowInSeconds"]) == (100, 1)
    assert props["StartingPosition"] == "TRIM_HORIZON"
    assert props["EventSourceArn"] == {"Fn::GetAtt": [viral.table_id, "StreamArn"]}


def test_derivation_is_visible_in_the_template(viral: CounterStack) -> None:
    # GIVEN 50,000 writes/s WHEN synthesized
    _, fn = viral.one("AWS::Lambda::Function")
    env = fn["Properties"]["Environment"]["Variables"]
    # THEN the aggregator's environment states the arithmetic and the spec carries 60 shards
    assert env["COUNTER_SHARDS_DERIVATION"].endswith("= 60000 WCU; / 1000 WCU per partition = 60 shard(s)")
    assert json.loads(env["CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS"])["shards"] == 60
    assert env["CONSTRUCTS_LIB_COUNTER_FAMILY"] == "video_views"
    assert env["CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS_TABLE"] == {"Ref": viral.table_id}
    assert "60 shards" in fn["Properties"]["Description"]
    assert fn["Properties"]["Handler"] == "constructs_lib.runtime.handlers.counter.handler"


# Permissions ----------------------------------------------------------------------------------------------
def _aggregator_statements(stack: CounterStack) -> list[dict[str, Any]]:
    _, fn = stack.one("AWS::Lambda::Function")
    return stack.statements_of_role(fn["Properties"]["Role"]["Fn::GetAtt"][0])


def test_aggregator_role_has_no_wildcards_and_only_this_tables_arns(viral: CounterStack) -> None:
    # GIVEN the aggregator's role WHEN synthesized
    statements = _aggregator_statements(viral)
    # THEN no action or resource is a wildcard
    assert all("*" not in a for s in statements for a in as_list(s["Action"]))
    assert all(r != "*" for s in statements for r in as_list(s["Resource"]))
    # AND its DynamoDB statements name only this table's ARN and stream ARN
    dynamo = [s for s in statements if any(a.startswith("dynamodb:") for a in as_list(s["Action"]))]
    resources = {json.dumps(r, sort_keys=True) for s in dynamo for r in as_list(s["Resource"])}
    assert resources == {json.dumps({"Fn::GetAtt": [viral.table_id, attr]}, sort_keys=True) for attr in ("Arn", "StreamArn")}
    # AND item access is limited to the family's keys: read shards, write totals, nothing else
    (items,) = [s for s in dynamo if "Condition" in s]
    assert sorted(as_list(items["Action"])) == ["dynamodb:BatchGetItem", "dynamodb:UpdateItem"]
    assert items["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["COUNTER#video_views#*"]},
                                  "Null": {"dynamodb:LeadingKeys": "false"}}
    # AND the rest is its log group and the failure queue
    others = {a for s in statements if s not in dynamo for a in as_list(s["Action"])}
    assert others == {"logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage", "sqs:GetQueueAttributes",
                      "sqs:GetQueueUrl"}


def _role_statements(stack: CounterStack, prefix: str) -> list[dict[str, Any]]:
    (role_id,) = [lid for lid in stack.of_type("AWS::IAM::Role") if lid.startswith(prefix)]
    return stack.statements_of_role(role_id)


def test_grant_increment_is_update_on_family_keys_only(viral: CounterStack) -> None:
    # GIVEN a role granted increment on a family without idempotency
    (statement,) = _role_statements(viral, "Incrementer")
    # THEN it may only UpdateItem, on the table, for partition keys of this family
    assert as_list(statement["Action"]) == ["dynamodb:UpdateItem"]
    assert statement["Resource"] == {"Fn::GetAtt": [viral.table_id, "Arn"]}
    assert statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"] == ["COUNTER#video_views#*"]


def test_grant_increment_adds_marker_actions_only_when_idempotent(idempotent: CounterStack) -> None:
    # GIVEN a family with idempotent increments WHEN a role is granted increment
    (statement,) = _role_statements(idempotent, "Incrementer")
    # THEN the transaction's marker Put and the reused-key GetItem are added, still on the family's keys
    assert sorted(as_list(statement["Action"])) == ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
    assert "dynamodb:LeadingKeys" in json.dumps(statement["Condition"])


def test_grant_read_is_get_and_batch_get_on_family_keys(viral: CounterStack) -> None:
    (statement,) = _role_statements(viral, "Reader")
    assert sorted(as_list(statement["Action"])) == ["dynamodb:BatchGetItem", "dynamodb:GetItem"]
    assert statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"] == ["COUNTER#video_views#*"]


# Queue, alarms -----------------------------------------------------------------------------------------------
def test_failure_queue_is_encrypted_and_tls_only(viral: CounterStack) -> None:
    _, queue = viral.one("AWS::SQS::Queue")
    assert queue["Properties"]["KmsMasterKeyId"] == "alias/aws/sqs"
    assert queue["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600
    _, policy = viral.one("AWS::SQS::QueuePolicy")
    (deny,) = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_alarms_on_errors_iterator_age_and_queue_depth(viral: CounterStack) -> None:
    # GIVEN the stream-mode counter WHEN synthesized
    alarms = {a["Properties"]["MetricName"]: a["Properties"] for a in viral.of_type("AWS::CloudWatch::Alarm").values()}
    # THEN three alarms exist, with the documented thresholds
    assert set(alarms) == {"Errors", "IteratorAge", "ApproximateNumberOfMessagesVisible"}
    assert (alarms["Errors"]["Threshold"], alarms["Errors"]["ComparisonOperator"]) == (1, "GreaterThanOrEqualToThreshold")
    assert alarms["IteratorAge"]["Threshold"] == 60_000 and alarms["IteratorAge"]["Statistic"] == "Maximum"
    assert alarms["ApproximateNumberOfMessagesVisible"]["Threshold"] == 1
    # AND they are exposed on the construct
    views = viral.construct  # type: ignore[attr-defined]
    assert views.errors_alarm and views.iterator_age_alarm and views.dlq_alarm


# Schedule mode ----------------------------------------------------------------------------------------------
def test_schedule_mode_recomputes_named_counters(scheduled: CounterStack) -> None:
    # GIVEN a table without a stream and a 5-minute schedule
    _, rule = scheduled.one("AWS::Events::Rule")
    (target,) = rule["Properties"]["Targets"]
    # THEN a rule invokes the aggregator with the fixed list
    assert rule["Properties"]["ScheduleExpression"] == "rate(5 minutes)"
    assert json.loads(target["Input"]) == {"source": "constructs_lib.counter.schedule", "counters": ["home", "about"]}
    # AND a failed run is retried twice, then recorded in the failure queue
    _, invoke_config = scheduled.one("AWS::Lambda::EventInvokeConfig")
    queue_id, _ = scheduled.one("AWS::SQS::Queue")
    assert invoke_config["Properties"]["MaximumRetryAttempts"] == 2
    assert invoke_config["Properties"]["DestinationConfig"] == {
        "OnFailure": {"Destination": {"Fn::GetAtt": [queue_id, "Arn"]}}}
    # AND there is no stream mapping (and so no iterator-age alarm)
    assert scheduled.of_type("AWS::Lambda::EventSourceMapping") == {}
    metrics = {a["Properties"]["MetricName"] for a in scheduled.of_type("AWS::CloudWatch::Alarm").values()}
    assert metrics == {"Errors", "ApproximateNumberOfMessagesVisible"}


# The asset ---------------------------------------------------------------------------------------------------
def test_aggregator_asset_holds_the_runtime_and_no_cdk(viral: CounterStack) -> None:
    # GIVEN the aggregator's asset directory in the cloud assembly
    fn_id, _ = viral.one("AWS::Lambda::Function")
    asset = asset_dir(viral.outdir, viral.template, fn_id)
    files = sorted(p.relative_to(asset).as_posix() for p in asset.rglob("*") if p.is_file())
    # THEN the handler module is there, with the model, and nothing from the CDK
    assert "constructs_lib/runtime/handlers/counter.py" in files and "model.json" in files
    assert not [f for f in files if f.split("/")[0] in ("aws_cdk", "constructs", "jsii")]
    assert all(f.startswith(("constructs_lib/model/", "constructs_lib/runtime/", "constructs_lib/__pycache__/"))
               or f in ("constructs_lib/__init__.py", "model.json") for f in files)
    # AND the bytecode next to the sources (when a Python 3.13 interpreter exists) is the handler's import path
    compiled = [f for f in files if f.endswith(".pyc")]
    assert all(f.endswith(".cpython-313.pyc") for f in compiled)
    if compiled:
        assert "constructs_lib/runtime/handlers/__pycache__/counter.cpython-313.pyc" in compiled
        assert "constructs_lib/runtime/handlers/__pycache__/audit.cpython-313.pyc" not in compiled
    # AND it carries only what the aggregator can import: no table client, stream audit or traffic report
    assert not [f for f in files if f.startswith(("constructs_lib/runtime/client.py", "constructs_lib/runtime/items.py",
                                                  "constructs_lib/runtime/handlers/audit.py",
                                                  "constructs_lib/runtime/patterns/audit/",
                                                  "constructs_lib/runtime/stats/"))]
    # AND zipped as shipped, its sources stay under DESIGN.md's 100 KB, and with the bytecode (the
    # import path and the model package, docs/adr/0018) under 135 KB (125 KB until the model's
    # overlap analysis and the fingerprints the runtime's contract module loads joined that path)
    def zipped(names: list[str]) -> int:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in names:
                zf.write(asset / f, f)
        return len(buffer.getvalue())

    assert zipped([f for f in files if not f.endswith(".pyc")]) <= 100 * 1024
    assert zipped(files) <= 135 * 1024


# Bad props -----------------------------------------------------------------------------------------------------
def _no_ttl_model() -> Model:
    return Model("nottl", entities=[Entity("A", pk="A#{a}", sk="A", fields=["a"])],
                 access_patterns=[AccessPattern("a", entity="A", sk="=")])


def _clashing_model() -> Model:
    return Model("clash", entities=[Entity("Thing", pk="{a}#{b}#{c}#{d}", sk="{x}", fields=["a", "b", "c", "d", "x"])],
                 access_patterns=[AccessPattern("t", entity="Thing", sk="=")])


@pytest.fixture
def tables(new_stack: Callable[[str], cdk.Stack], shop_model: Model, pk_only_model: Model) -> Iterator[dict[str, Any]]:
    stack = new_stack("BadProps")
    stream = dynamodb.StreamViewType.NEW_IMAGE
    yield {
        "stack": stack,
        "shop": SingleTable(stack, "Shop", model=shop_model, stream=stream),
        "shop_no_stream": SingleTable(stack, "ShopNoStream", model=shop_model),
        "pk_only": SingleTable(stack, "PkOnly", model=pk_only_model, stream=stream),
        "no_ttl": SingleTable(stack, "NoTtl", model=_no_ttl_model(), stream=stream),
        "clash": SingleTable(stack, "Clash", model=_clashing_model(), stream=stream),
    }


@pytest.mark.parametrize(
    ("table", "kwargs", "message"),
    [
        ("shop", {"shards": 4, "expected_writes_per_second": 100}, "exactly one of shards=4 and expected_writes_per_second=100"),
        ("shop", {}, "exactly one of shards"),
        ("shop", {"shards": 0}, "shards 0 must be an int from 1 to 1000"),
        ("shop", {"shards": 1001}, "shards 1001"),
        ("shop", {"expected_writes_per_second": 5_000_000}, "the limit is 1000"),
        ("shop", {"shards": 2, "name": "Views"}, "counter family 'Views' must match"),
        ("shop", {"shards": 2, "batch_size": 0}, "batch_size 0 must be an int from 1 to 10000"),
        ("shop", {"shards": 2, "retry_attempts": -1}, "retry_attempts -1 must be an int from 0 to 10000"),
        ("shop", {"shards": 2, "max_record_age": cdk.Duration.seconds(10)}, "max_record_age 10 seconds"),
        ("shop", {"shards": 2, "schedule": cdk.Duration.minutes(1)}, "schedule and scheduled_counters go together"),
        ("shop", {"shards": 2, "idempotency_window": cdk.Duration.seconds(30)}, "idempotency_ttl_seconds 30"),
        ("shop_no_stream", {"shards": 2}, "has no stream.*pass schedule="),
        ("pk_only", {"shards": 2}, "has no sort key"),
        ("no_ttl", {"shards": 2, "idempotency_window": cdk.Duration.hours(1)}, "need the table's TTL attribute"),
        ("clash", {"shards": 2}, "entity 'Thing' could build the same key as a counter shard item"),
    ],
)
def test_bad_props_fail_at_construction(tables: dict[str, Any], table: str, kwargs: dict[str, Any], message: str) -> None:
    # GIVEN a bad combination of props WHEN the counter is constructed THEN a props error names the value and rule
    args = {"name": "views", **kwargs}
    with pytest.raises(ConstructPropsError, match=message):
        ShardedCounter(tables["stack"], "Bad", table=tables[table], **args)


def test_a_family_name_is_claimed_once_per_table(tables: dict[str, Any]) -> None:
    # GIVEN a family on a table WHEN a second family with the same name is added THEN it is refused
    ShardedCounter(tables["stack"], "First", table=tables["shop"], name="views", shards=2)
    with pytest.raises(ConstructPropsError, match="key prefix 'COUNTER#views#' .* overlaps"):
        ShardedCounter(tables["stack"], "Second", table=tables["shop"], name="views", shards=2)
    # AND a different family on the same table is fine
    ShardedCounter(tables["stack"], "Third", table=tables["shop"], name="views_2", shards=2)
