"""ShardedCounter at synth time: the aggregator, its stream mapping and filters, the spec it hands
to the runtime, grants (re-drive included), queue, alarms, asset, and the functions bound to it."""

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

from constructs_lib import ConstructPropsError, ShardedCounter, SingleTable, TableFunction
from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.runtime.environment import ENV_COUNTER_FAILURE_QUEUE
from constructs_lib.runtime.patterns.counter import CounterSpec
from constructs_lib.testing import asset_dir
from constructs_lib.testing.event_filters import matches_any

#: A handler that uses the counter client (``CounterClient.from_environment("product_views")``).
HANDLER = Path(__file__).resolve().parents[2] / "examples" / "shop" / "handlers" / "orders_api.py"
RECOMPUTE = "constructs_lib/runtime/patterns/counter/recompute.py"
CLIENT = "constructs_lib/runtime/patterns/counter/client.py"
FAMILY = {"PK": {"S": [{"prefix": "COUNTER#video_views#"}]}}
#: Writes of the family's shards (the recompute layout's SHARD items too: they are folded in).
SHARD_FILTER = {"dynamodb": {"Keys": {**FAMILY, "SK": {"S": ["SUM", "SHARD"]}}}}
#: Increment items when created, never their expiry or an overwrite.
INCREMENT_FILTER = {"eventName": ["INSERT"], "dynamodb": {"Keys": {**FAMILY, "SK": {"S": [{"prefix": "KEY#"}]}}}}


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


def _spec_of(stack: CounterStack, family: str = "VIDEO_VIEWS") -> dict[str, Any]:
    _, fn = stack.one("AWS::Lambda::Function")
    return json.loads(fn["Properties"]["Environment"]["Variables"][f"CONSTRUCTS_LIB_COUNTER_{family}"])


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
    # THEN only this family's shard writes and created increment items invoke the aggregator
    # (filters on the keys and the event name, two of the mapping's five)
    assert [json.loads(f["Pattern"]) for f in props["FilterCriteria"]["Filters"]] == [SHARD_FILTER, INCREMENT_FILTER]
    # AND failures are bisected, retried a capped number of times, aged out and sent to the queue
    assert props["BisectBatchOnFunctionError"] is True
    assert props["MaximumRetryAttempts"] == 5
    assert props["MaximumRecordAgeInSeconds"] == 3600
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["DestinationConfig"] == {"OnFailure": {"Destination": {"Fn::GetAtt": [queue_id, "Arn"]}}}
    # AND the documented batching defaults apply (1,000 records: each touched total is written once
    # per batch), starting from the oldest record
    assert (props["BatchSize"], props["MaximumBatchingWindowInSeconds"]) == (1000, 1)
    assert props["StartingPosition"] == "TRIM_HORIZON"
    assert props["EventSourceArn"] == {"Fn::GetAtt": [viral.table_id, "StreamArn"]}


def _record(event: str, pk: str, sk: str) -> dict[str, Any]:
    return {"eventName": event, "dynamodb": {"Keys": {"PK": {"S": pk}, "SK": {"S": sk}}}}


@pytest.mark.parametrize(("record", "invokes"), [
    (_record("MODIFY", "COUNTER#video_views#v1#S007", "SUM"), True),  # an increment of a shard
    (_record("INSERT", "COUNTER#video_views#v1#S007", "SUM"), True),  # a shard's first increment
    (_record("REMOVE", "COUNTER#video_views#v1#S007", "SUM"), True),  # a lost count: reported, never dropped
    (_record("MODIFY", "COUNTER#video_views#v1#S007", "SHARD"), True),  # an earlier writer: folded in
    (_record("INSERT", "COUNTER#video_views#v1#S007", "KEY#req-1"), True),  # an idempotent increment
    (_record("REMOVE", "COUNTER#video_views#v1#S007", "KEY#req-1"), False),  # its TTL expiry
    (_record("MODIFY", "COUNTER#video_views#v1#S007", "KEY#req-1"), False),  # an overwrite, counted once already
    (_record("MODIFY", "COUNTER#video_views#v1", "TOTAL"), False),  # the aggregator's own write
    (_record("INSERT", "COUNTER#video_views#v1#DEDUP#req-1", "DEDUP"), False),  # an earlier writer's marker
    (_record("MODIFY", "COUNTER#likes#v1#S000", "SUM"), False),  # another family
    (_record("INSERT", "PRODUCT#p1", "PRODUCT"), False),  # the model's items
])
def test_filters_let_through_exactly_what_changes_a_count(viral: CounterStack, record: dict[str, Any],
                                                          invokes: bool) -> None:
    # GIVEN the synthesized filters WHEN a stream record is evaluated as Lambda would
    _, mapping = viral.one("AWS::Lambda::EventSourceMapping")
    filters = [json.loads(f["Pattern"]) for f in mapping["Properties"]["FilterCriteria"]["Filters"]]
    # THEN only records that carry (or may carry) a count invoke the aggregator
    assert matches_any(filters, record) is invokes


def test_spec_is_aggregated_from_the_stream_with_its_guard_and_legacy_shards(viral: CounterStack,
                                                                            scheduled: CounterStack) -> None:
    # GIVEN a family on a table with a stream and one on a table without
    deltas, recompute = _spec_of(viral), _spec_of(scheduled, "LIKES")
    # THEN the first is aggregated from the stream, its guard outlasting a record's maximum age
    # plus the function's timeout plus a minute (3,600 + 30 + 60 s)
    assert (deltas["aggregation"], deltas["guard_seconds"], deltas["version"]) == ("deltas", 3690, 2)
    # AND the recompute layout's shard count is the same (increments were never transactional)
    assert deltas["legacy_shards"] == deltas["shards"] == 60
    # AND the second recomputes its totals from the shards, with nothing to fold
    assert recompute["aggregation"] == "recompute" and "legacy_shards" not in recompute
    # AND both read back as the runtime's CounterSpec
    assert CounterSpec.from_json(json.dumps(deltas)).deltas and not CounterSpec.from_json(json.dumps(recompute)).deltas


def test_guard_follows_the_mappings_record_age_and_the_functions_timeout(
    shop_model: Model, new_stack: Callable[[str], cdk.Stack]
) -> None:
    # GIVEN a counter whose records may be 2 hours old and whose function runs up to 45 s
    stack = new_stack("Guard")
    table = SingleTable(stack, "Data", model=shop_model, stream=dynamodb.StreamViewType.NEW_IMAGE)
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=2,
                           max_record_age=cdk.Duration.hours(2), timeout=cdk.Duration.seconds(45))
    # THEN its watermarks are kept for 7,200 + 45 + 60 seconds a generation
    assert views.spec.guard_seconds == 7305


@pytest.mark.parametrize(("stream", "shards", "legacy", "derivation"), [
    # on a table with a stream an idempotent increment is one conditional PutItem: 1 WCU
    (dynamodb.StreamViewType.NEW_IMAGE, 60, 120,
     "50000 writes/s x 1 WCU (ceil(1024 B / 1024 B)) x headroom 1.2 = 60000 WCU; / 1000 WCU per partition = 60 shard(s)"),
    # without one (recomputed) it is still a two-item transaction: 2 WCU
    (None, 120, None,
     "50000 writes/s x 1 WCU (ceil(1024 B / 1024 B)) x2 (transactional) x headroom 1.2 = 120000 WCU; "
     "/ 1000 WCU per partition = 120 shard(s)"),
])
def test_idempotent_sizing_counts_a_transaction_only_in_the_recompute_layout(
    shop_model: Model, new_stack: Callable[[str], cdk.Stack], stream: Any, shards: int, legacy: int | None,
    derivation: str,
) -> None:
    # GIVEN 50,000 idempotent increments/s of one counter
    stack = new_stack(f"Sizing{shards}")
    table = SingleTable(stack, "Data", model=shop_model, stream=stream)
    extra: dict[str, Any] = {} if stream else {"schedule": cdk.Duration.minutes(5), "scheduled_counters": ["home"]}
    views = ShardedCounter(stack, "Views", table=table, name="views", expected_writes_per_second=50_000,
                           idempotency_window=cdk.Duration.hours(24), **extra)
    # THEN the shard count and the derivation stated in the template follow the layout
    assert (views.spec.shards, views.derivation) == (shards, derivation)
    fn = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
    (env,) = [r["Properties"]["Environment"]["Variables"] for r in fn.values()
              if r["Properties"].get("Handler") == "constructs_lib.runtime.handlers.counter.handler"]
    assert env["COUNTER_SHARDS_DERIVATION"] == derivation
    # AND the fold of a family aggregated from the stream reads every shard the transactional layout had
    assert views.spec.legacy_shards == legacy


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
    # AND item access is limited to the family's keys: write totals, read a total and the recompute
    # layout's shards when folding them in, nothing else
    (items,) = [s for s in dynamo if "Condition" in s]
    assert sorted(as_list(items["Action"])) == ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:UpdateItem"]
    assert items["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["COUNTER#video_views#*"]},
                                  "Null": {"dynamodb:LeadingKeys": "false"}}
    # AND the rest is its log group and the failure queue (sending to it; receiving and deleting to re-drive)
    others = {a for s in statements if s not in dynamo for a in as_list(s["Action"])}
    assert others == {"logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage", "sqs:GetQueueAttributes",
                      "sqs:GetQueueUrl", "sqs:ReceiveMessage", "sqs:DeleteMessage"}


def test_aggregator_can_redrive_its_failure_queue_and_nothing_else(viral: CounterStack) -> None:
    # GIVEN the aggregator of a family aggregated from the stream
    statements = _aggregator_statements(viral)
    queue_id, _ = viral.one("AWS::SQS::Queue")
    _, fn = viral.one("AWS::Lambda::Function")
    # THEN it is told its failure queue's URL (what a re-drive event reads)
    assert fn["Properties"]["Environment"]["Variables"][ENV_COUNTER_FAILURE_QUEUE] == {"Ref": queue_id}
    # AND it may receive and delete messages of that queue only
    (redrive,) = [s for s in statements if "sqs:ReceiveMessage" in as_list(s["Action"])]
    assert sorted(as_list(redrive["Action"])) == ["sqs:DeleteMessage", "sqs:ReceiveMessage"]
    assert redrive["Resource"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    # AND read a failed range back from the table's stream, on the stream ARN only
    reading = [s for s in statements if "dynamodb:GetRecords" in as_list(s["Action"])]
    assert {"dynamodb:GetShardIterator", "dynamodb:GetRecords", "dynamodb:DescribeStream"} <= {
        a for s in reading for a in as_list(s["Action"])}
    assert all(s["Resource"] == {"Fn::GetAtt": [viral.table_id, "StreamArn"]} for s in reading)


def test_a_recomputed_family_keeps_the_recompute_grants_and_no_redrive(scheduled: CounterStack) -> None:
    # GIVEN the aggregator of a family on a table without a stream
    statements = _aggregator_statements(scheduled)
    _, fn = scheduled.one("AWS::Lambda::Function")
    # THEN it reads every shard and writes the total, and has nothing to re-drive
    (items,) = [s for s in statements if "Condition" in s]
    assert sorted(as_list(items["Action"])) == ["dynamodb:BatchGetItem", "dynamodb:UpdateItem"]
    assert not [s for s in statements if "sqs:ReceiveMessage" in as_list(s["Action"])]
    assert ENV_COUNTER_FAILURE_QUEUE not in fn["Properties"]["Environment"]["Variables"]


def test_redrive_may_decrypt_a_failure_queue_under_the_stacks_own_key(shop_model: Model) -> None:
    from constructs_lib.constructs.hardening import CMK_CONTEXT

    # GIVEN a stack whose failure queues are encrypted with its own key
    stack = cdk.Stack(cdk.App(), "CmkRedrive", env=cdk.Environment(region="eu-west-1"))
    stack.node.set_context(CMK_CONTEXT, True)
    table = SingleTable(stack, "Data", model=shop_model, stream=dynamodb.StreamViewType.NEW_IMAGE)
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=2)
    synthesized = CounterStack(Template.from_stack(stack).to_json(), Path())
    key = views.dlq.encryption_master_key
    assert key is not None
    key_arn = {"Fn::GetAtt": [stack.get_logical_id(key.node.default_child), "Arn"]}
    # THEN the re-drive's own grant lets the aggregator decrypt what it receives with that key
    # (the key's other statements serve the table and sending), and no statement names a wildcard
    statements = _aggregator_statements(synthesized)
    assert {"Action": "kms:Decrypt", "Effect": "Allow", "Resource": key_arn} in statements
    assert all(r != "*" for s in statements for r in as_list(s["Resource"]))


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


def test_grant_increment_adds_put_and_get_only_when_idempotent(idempotent: CounterStack) -> None:
    # GIVEN a family with idempotent increments WHEN a role is granted increment
    (statement,) = _role_statements(idempotent, "Incrementer")
    # THEN the increment item's conditional Put and the reused-key GetItem are added, still on the family's keys
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
    # AND the stream layout's aggregation, re-drive and total modules beside the client
    counter = "constructs_lib/runtime/patterns/counter/"
    assert {f"{counter}{m}.py" for m in ("aggregation", "redrive", "watermarks", "recompute", "spec", "client")} <= set(files)
    assert not [f for f in files if f.split("/")[0] in ("aws_cdk", "constructs", "jsii")]
    assert all(f.startswith(("constructs_lib/model/", "constructs_lib/runtime/", "constructs_lib/__pycache__/"))
               or f in ("constructs_lib/__init__.py", "model.json") for f in files)
    # AND the bytecode next to the sources (when a Python 3.13 interpreter exists) is the handler's import path
    compiled = [f for f in files if f.endswith(".pyc")]
    assert all(f.endswith(".cpython-313.pyc") for f in compiled)
    if compiled:
        assert "constructs_lib/runtime/handlers/__pycache__/counter.cpython-313.pyc" in compiled
        assert f"{counter}__pycache__/aggregation.cpython-313.pyc" in compiled
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



# Functions bound to the family --------------------------------------------------------------------------------
@pytest.fixture
def two_layouts(shop_model: Model, new_stack: Callable[[str], cdk.Stack]) -> dict[str, Any]:
    """A family on a table without a stream (recomputed) and one on a table with a stream."""
    stack = new_stack("TwoLayouts")
    plain = SingleTable(stack, "Plain", model=shop_model)
    streamed = SingleTable(stack, "Streamed", model=shop_model, stream=dynamodb.StreamViewType.NEW_IMAGE)
    return {
        "stack": stack, "plain": plain, "streamed": streamed,
        "recomputed": ShardedCounter(stack, "Likes", table=plain, name="product_views", shards=4,
                                     idempotency_window=cdk.Duration.hours(1), schedule=cdk.Duration.minutes(5),
                                     scheduled_counters=["home"]),
        "deltas": ShardedCounter(stack, "Views", table=streamed, name="product_views", shards=4,
                                 idempotency_window=cdk.Duration.hours(1)),
    }


def _variables(function: TableFunction) -> dict[str, Any]:
    """The synthesized environment variables of a TableFunction's Lambda function."""
    stack = cdk.Stack.of(function)
    logical_id = stack.get_logical_id(function.function.node.default_child)  # type: ignore[arg-type]
    resource = Template.from_stack(stack).to_json()["Resources"][logical_id]
    return dict(resource["Properties"]["Environment"]["Variables"])


def test_a_function_bound_to_a_recomputed_family_ships_the_recompute_layout(two_layouts: dict[str, Any]) -> None:
    # GIVEN functions using the counter client, bound through counters=[...] to a family on a table
    # without a stream and to one on a table with a stream
    stack = two_layouts["stack"]
    recomputed = TableFunction(stack, "OnPlain", table=two_layouts["plain"], entry=HANDLER,
                               counters=[two_layouts["recomputed"]])
    deltas = TableFunction(stack, "OnStreamed", table=two_layouts["streamed"], entry=HANDLER,
                           counters=[two_layouts["deltas"]])
    assert two_layouts["recomputed"].spec.aggregation == "recompute" and two_layouts["deltas"].spec.deltas
    # THEN the first ships the recompute layout's code (its idempotent increments are transactions)
    assert {CLIENT, RECOMPUTE} <= set(recomputed.bundle.runtime_files)
    assert (recomputed.bundle.directory / RECOMPUTE).is_file()
    # AND the second, with the same client, leaves it out of its asset
    assert CLIENT in deltas.bundle.runtime_files and RECOMPUTE not in deltas.bundle.runtime_files
    assert not (deltas.bundle.directory / RECOMPUTE).exists()


def test_bind_refuses_a_function_bundled_without_the_recompute_layout(two_layouts: dict[str, Any]) -> None:
    # GIVEN a function using the counter client, bundled without counters=[...]
    stack = two_layouts["stack"]
    unbound = TableFunction(stack, "Unbound", table=two_layouts["plain"], entry=HANDLER)
    assert RECOMPUTE not in unbound.bundle.runtime_files
    # WHEN a recomputed family is bound to it afterwards
    # THEN the bind is refused, naming the family, the function and the fix
    with pytest.raises(ConstructPropsError, match=(
            r"ShardedCounter 'Likes': family 'product_views' is recomputed from its shards .*function "
            r"'TwoLayouts/Unbound/Function' was bundled without that layout's code: bind it with "
            r"TableFunction\(counters=\[\.\.\.\]\), which ships it")):
        two_layouts["recomputed"].bind(unbound.function)
    # AND a family aggregated from the stream binds to such a function (it needs no more code)
    also_unbound = TableFunction(stack, "AlsoUnbound", table=two_layouts["streamed"], entry=HANDLER)
    two_layouts["deltas"].bind(also_unbound.function)
    assert "CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS" in _variables(also_unbound)


def test_a_function_that_never_uses_the_client_binds_a_recomputed_family(
    two_layouts: dict[str, Any], tmp_path: Path,
) -> None:
    # GIVEN a handler that never imports the counter client (it only needs the family's grants)
    entry = tmp_path / "relay.py"
    entry.write_text("def handler(event, context):\n    return event\n", encoding="utf-8")
    # WHEN it is bound to a recomputed family through counters=[...]
    function = TableFunction(two_layouts["stack"], "Relay", table=two_layouts["plain"], entry=entry,
                             counters=[two_layouts["recomputed"]])
    # THEN the bind succeeds: with no counter client in its asset, no recompute code is missing
    assert CLIENT not in function.bundle.runtime_files
    assert "CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS" in _variables(function)

# Bad props -----------------------------------------------------------------------------------------------------
def _no_ttl_model() -> Model:
    return Model("nottl", entities=[Entity("A", pk="A#{a}", sk="A", fields=["a"])],
                 access_patterns=[AccessPattern("a", entity="A", sk="=")])


def _clashing_model() -> Model:
    return Model("clash", entities=[Entity("Thing", pk="{a}#{b}#{c}#{d}", sk="{x}", fields=["a", "b", "c", "d", "x"])],
                 access_patterns=[AccessPattern("t", entity="Thing", sk="=")])


def _increment_clash_model() -> Model:
    """An entity whose keys could be a stream-layout increment item's (and no other counter item's)."""
    return Model("keyclash", entities=[Entity("Ticket", pk="COUNTER#{a}#{b}#{c}", sk="KEY#{k}", fields=["a", "b", "c", "k"])],
                 access_patterns=[AccessPattern("t", entity="Ticket", sk="=")])


STREAM_ARN = "arn:aws:dynamodb:us-east-1:111122223333:table/shop-data/stream/2024-06-01T00:00:00.000"


@pytest.fixture
def tables(new_stack: Callable[[str], cdk.Stack], shop_model: Model, pk_only_model: Model) -> Iterator[dict[str, Any]]:
    stack = new_stack("BadProps")
    stream = dynamodb.StreamViewType.NEW_IMAGE
    yield {
        "stack": stack,
        "shop": SingleTable(stack, "Shop", model=shop_model, stream=stream),
        "shop_no_stream": SingleTable(stack, "ShopNoStream", model=shop_model),
        "keys_only": SingleTable(stack, "KeysOnly", model=shop_model, stream=dynamodb.StreamViewType.KEYS_ONLY),
        "old_image": SingleTable(stack, "OldImage", model=shop_model, stream=dynamodb.StreamViewType.OLD_IMAGE),
        "undeclared": SingleTable.from_table_attributes(stack, "Undeclared", model=shop_model,
                                                        table_stream_arn=STREAM_ARN,
                                                        table_arn=STREAM_ARN.split("/stream/")[0]),
        "pk_only": SingleTable(stack, "PkOnly", model=pk_only_model, stream=stream),
        "no_ttl": SingleTable(stack, "NoTtl", model=_no_ttl_model(), stream=stream),
        "clash": SingleTable(stack, "Clash", model=_clashing_model(), stream=stream),
        "increment_clash": SingleTable(stack, "IncrementClash", model=_increment_clash_model(), stream=stream),
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
        ("shop", {"shards": 2, "schedule": cdk.Duration.minutes(5), "scheduled_counters": ["home"]},
         "'Shop' has a stream, so the family is aggregated from it.*cannot be recomputed on a schedule"),
        ("keys_only", {"shards": 2}, "stream of SingleTable 'KeysOnly' is KEYS_ONLY.*must be NEW_IMAGE or "
         "NEW_AND_OLD_IMAGES: pass stream=StreamViewType.NEW_IMAGE"),
        ("old_image", {"shards": 2}, "stream of SingleTable 'OldImage' is OLD_IMAGE.*must be NEW_IMAGE"),
        ("undeclared", {"shards": 2}, "view type of ImportedSingleTable 'Undeclared''s stream is not declared.*"
         "pass stream_view_type=StreamViewType.NEW_IMAGE"),
        ("pk_only", {"shards": 2}, "has no sort key"),
        ("no_ttl", {"shards": 2, "idempotency_window": cdk.Duration.hours(1)}, "need the table's TTL attribute"),
        ("clash", {"shards": 2}, "entity 'Thing' could build the same key as a counter shard item"),
        ("increment_clash", {"shards": 2}, r"entity 'Ticket' could build the same key as a counter increment item "
         r"\(COUNTER#views#\{counter_id\}#\{shard\} / KEY#\{key\}\)"),
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
