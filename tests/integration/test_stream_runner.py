"""The local stream runner (constructs_lib.testing.streams) on real DynamoDB Local streams, and
warm handler processes (constructs_lib.testing.handlers.LocalFunction).

Tables here are made by hand with the ``dynamodb_client`` fixture: the runner is generic. The
synthesized-template path is covered by the ``from_template``/``from_deployment`` tests.
"""

from __future__ import annotations

import base64
import json
import os
import textwrap
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.testing import (
    HandlerError,
    LocalFunction,
    MappingSettings,
    StreamRunner,
    StreamRunnerError,
    TestingError,
    to_lambda_record,
)
from constructs_lib.testing.handlers import Fault

pytestmark = pytest.mark.integration

COUNTER_PATTERN = {"dynamodb": {"Keys": {"PK": {"S": [{"prefix": "COUNTER#video_views#"}]}, "SK": {"S": ["SHARD"]}}}}
AUDIT_PATTERN = {"dynamodb": {"NewImage": {"_type": {"S": [{"anything-but": ["CounterShard"]}]}}}}


class Table:
    """A hand-made table with a NEW_AND_OLD_IMAGES stream."""

    def __init__(self, client: Any, name: str) -> None:
        self.client, self.name = client, name
        client.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": "PK", "AttributeType": "S"},
                {"AttributeName": "SK", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        self.stream_arn = client.describe_table(TableName=name)["Table"]["LatestStreamArn"]

    def put(self, pk: str, sk: str = "A", **attrs: Any) -> None:
        item = {"PK": {"S": pk}, "SK": {"S": sk}, **attrs}
        self.client.put_item(TableName=self.name, Item=item)

    def delete(self, pk: str, sk: str = "A") -> None:
        self.client.delete_item(TableName=self.name, Key={"PK": {"S": pk}, "SK": {"S": sk}})


@pytest.fixture
def table(dynamodb_client: Any):
    t = Table(dynamodb_client, f"stream-runner-{uuid.uuid4().hex[:12]}")
    yield t
    dynamodb_client.delete_table(TableName=t.name)


class Collector:
    """A plain-callable handler recording every event; *policy(event, call_no)* may raise or
    return a result."""

    def __init__(self, policy: Any = None) -> None:
        self.events: list[dict] = []
        self.policy = policy

    def __call__(self, event: dict) -> Any:
        self.events.append(event)
        if self.policy:
            return self.policy(event, len(self.events))
        return None

    @property
    def pks(self) -> list[list[str]]:
        return [[r["dynamodb"]["Keys"]["PK"]["S"] for r in e["Records"]] for e in self.events]


def _pk(record: dict) -> str:
    return record["dynamodb"]["Keys"]["PK"]["S"]


# ---------------------------------------------------------------------------------------------
# Event shape
# ---------------------------------------------------------------------------------------------
def test_records_have_the_lambda_event_shape(table, stream_runner):
    # GIVEN an insert (with binary values, also nested), a modify and a remove of one item
    table.put("item#1", blob={"B": b"\x00\xff"}, blobs={"BS": [b"x", b"y"]}, m={"M": {"b": {"B": b"\x01"}}}, n={"N": "1"})
    table.put("item#1", n={"N": "2"})
    table.delete("item#1")
    collector = Collector()
    before = time.time()

    # WHEN the runner delivers them
    report = stream_runner(table.stream_arn, collector, region="eu-west-1").run()

    # THEN one event holds three Lambda records, INSERT/MODIFY/REMOVE with their images
    assert report.invocations == 1 and report.delivered == 3
    (event,) = collector.events
    insert, modify, remove = event["Records"]
    assert [r["eventName"] for r in event["Records"]] == ["INSERT", "MODIFY", "REMOVE"]
    for record in event["Records"]:
        assert set(record) == {"eventID", "eventName", "eventVersion", "eventSource", "awsRegion", "dynamodb", "eventSourceARN"}
        assert record["eventSource"] == "aws:dynamodb"
        assert record["awsRegion"] == "eu-west-1"
        assert record["eventSourceARN"] == table.stream_arn
        assert record["dynamodb"]["Keys"] == {"PK": {"S": "item#1"}, "SK": {"S": "A"}}
        assert record["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
        assert isinstance(record["dynamodb"]["SizeBytes"], int)
        created = record["dynamodb"]["ApproximateCreationDateTime"]
        assert isinstance(created, int) and created % 60 == 0 and before - 120 < created <= time.time()
    assert "OldImage" not in insert["dynamodb"] and "NewImage" not in remove["dynamodb"]
    assert insert["dynamodb"]["NewImage"]["blob"] == {"B": base64.b64encode(b"\x00\xff").decode()}
    assert insert["dynamodb"]["NewImage"]["blobs"] == {"BS": ["eA==", "eQ=="]}
    assert insert["dynamodb"]["NewImage"]["m"] == {"M": {"b": {"B": "AQ=="}}}
    assert modify["dynamodb"]["OldImage"]["n"] == {"N": "1"} and modify["dynamodb"]["NewImage"]["n"] == {"N": "2"}
    assert remove["dynamodb"]["OldImage"]["n"] == {"N": "2"}
    seqs = [r["dynamodb"]["SequenceNumber"] for r in event["Records"]]
    assert seqs == sorted(seqs, key=int) and report.batches == [seqs]
    assert json.loads(json.dumps(event)) == event  # JSON-serializable, as Lambda sends it


def test_to_lambda_record_converts_boto3_types():
    # GIVEN a GetRecords record as boto3 returns it (datetime, bytes) with a user identity
    record = {
        "eventID": "id-1", "eventName": "REMOVE", "eventVersion": "1.1", "eventSource": "aws:dynamodb",
        "awsRegion": "ddblocal",
        "dynamodb": {
            "ApproximateCreationDateTime": datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
            "Keys": {"PK": {"B": b"\x00"}}, "OldImage": {"PK": {"B": b"\x00"}, "l": {"L": [{"B": b"\x02"}]}},
            "SequenceNumber": "7", "SizeBytes": 3, "StreamViewType": "OLD_IMAGE",
        },
        "userIdentity": {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"},
    }

    # WHEN converted
    out = to_lambda_record(record, stream_arn="arn:stream")

    # THEN epoch seconds, base64 binaries, Lambda's userIdentity casing, our region and ARN
    assert out["dynamodb"]["ApproximateCreationDateTime"] == int(datetime(2026, 1, 2, 3, 4, tzinfo=UTC).timestamp())
    assert out["dynamodb"]["Keys"] == {"PK": {"B": "AA=="}}
    assert out["dynamodb"]["OldImage"]["l"] == {"L": [{"B": "Ag=="}]}
    assert out["userIdentity"] == {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
    assert (out["awsRegion"], out["eventSourceARN"]) == ("us-east-1", "arn:stream")
    json.dumps(out)


# ---------------------------------------------------------------------------------------------
# Filters, batching, checkpoints
# ---------------------------------------------------------------------------------------------
def test_filters_drop_records_before_batching(table, stream_runner):
    # GIVEN counter shards of two counters, a counter total and an audited entity
    for shard in range(3):
        table.put(f"COUNTER#video_views#v1#{shard}", "SHARD", _type={"S": "CounterShard"})
    table.put("COUNTER#likes#v1#0", "SHARD", _type={"S": "CounterShard"})
    table.put("COUNTER#video_views#v1", "TOTAL", _type={"S": "CounterTotal"})
    table.put("ORDER#1", "ORDER", _type={"S": "Order"})
    counter, audit = Collector(), Collector()

    # WHEN a counter-filtered and an audit-filtered runner read the same stream
    counter_report = stream_runner(table.stream_arn, counter, settings=MappingSettings(filters=(COUNTER_PATTERN,))).run()
    audit_report = stream_runner(table.stream_arn, audit, settings=MappingSettings(filters=(AUDIT_PATTERN,))).run()

    # THEN each handler sees only its records; the others are counted, never delivered
    assert counter.pks == [[f"COUNTER#video_views#v1#{s}" for s in range(3)]]
    assert (counter_report.delivered, counter_report.filtered_out) == (3, 3)
    assert audit.pks == [["COUNTER#video_views#v1", "ORDER#1"]]
    assert (audit_report.delivered, audit_report.filtered_out) == (2, 4)


def test_batch_size_is_respected_in_stream_order(table, stream_runner):
    # GIVEN seven writes
    for i in range(7):
        table.put(f"k{i}")
    collector = Collector()

    # WHEN delivered with batch size 3
    report = stream_runner(table.stream_arn, collector, settings=MappingSettings(batch_size=3)).run()

    # THEN three invocations of 3, 3 and 1 records, in write order
    assert collector.pks == [["k0", "k1", "k2"], ["k3", "k4", "k5"], ["k6"]]
    flat = [s for batch in report.batches for s in batch]
    assert flat == sorted(flat, key=int) and len(set(flat)) == 7


def test_second_run_delivers_only_new_records_and_budget_resumes(table, stream_runner):
    # GIVEN a runner that has delivered the first two writes
    table.put("a")
    table.put("b")
    collector = Collector()
    runner = stream_runner(table.stream_arn, collector, settings=MappingSettings(batch_size=1))
    assert runner.run().delivered == 2

    # WHEN nothing is written, then three writes arrive and a run is limited to one batch
    idle = runner.run()
    table.put("c")
    table.put("d")
    table.put("e")
    limited = runner.run(max_batches=1)
    rest = runner.run()

    # THEN the idle run delivers nothing, later runs deliver only new records, exactly once
    assert idle.invocations == 0
    assert limited.invocations == 1 and rest.invocations == 2
    assert [pks[0] for pks in collector.pks] == ["a", "b", "c", "d", "e"]


def test_latest_starting_position_skips_existing_records(table, stream_runner):
    # GIVEN records written before the "mapping" exists
    table.put("old")
    collector = Collector()
    runner = stream_runner(table.stream_arn, collector, settings=MappingSettings(starting_position="LATEST"))

    # WHEN the runner starts, then a new record is written
    first = runner.run()
    table.put("new")
    second = runner.run()

    # THEN only the new record is delivered
    assert first.invocations == 0
    assert second.delivered == 1 and collector.pks == [["new"]]


# ---------------------------------------------------------------------------------------------
# Failures
# ---------------------------------------------------------------------------------------------
def _poison(event: dict, _call: int) -> None:
    if any(_pk(r) == "poison" for r in event["Records"]):
        raise ValueError("poison record")


def test_bisect_isolates_the_poison_record_and_dead_letters_it(table, stream_runner):
    # GIVEN eight records, the sixth of which always makes the handler raise
    names = ["k0", "k1", "k2", "k3", "k4", "poison", "k6", "k7"]
    for name in names:
        table.put(name)
    collector = Collector(_poison)
    settings = MappingSettings(bisect_on_error=True, max_retry_attempts=2, function_logical_id="AuditFn")

    # WHEN delivered with bisect on error
    runner = stream_runner(table.stream_arn, collector, settings=settings)
    report = runner.run()

    # THEN the batch is halved down to the poison record, which is retried twice, then
    # dead-lettered; every other record is delivered successfully, in order
    assert collector.pks == [
        names, names[:4], names[4:], ["k4", "poison"], ["k4"], ["poison"], ["poison"], ["poison"], ["k6", "k7"],
    ]
    assert report.retries == 2 and report.dead_lettered == 1
    assert report.errors == ["ValueError: poison record"] * 6
    (letter,) = runner.dead_letters
    assert letter["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert letter["requestContext"]["approximateInvokeCount"] == 3
    assert letter["requestContext"]["functionArn"].endswith(":function:AuditFn")
    assert letter["responseContext"] == {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"}
    assert letter["version"] == "1.0" and letter["timestamp"].endswith("Z")
    info = letter["DDBStreamBatchInfo"]
    poison_seq = collector.events[5]["Records"][0]["dynamodb"]["SequenceNumber"]
    assert info["startSequenceNumber"] == info["endSequenceNumber"] == poison_seq
    assert info["batchSize"] == 1 and info["streamArn"] == table.stream_arn and info["shardId"].startswith("shardId-")
    assert info["approximateArrivalOfFirstRecord"].endswith("Z")
    assert [_pk(r) for r in letter["records"]] == ["poison"]
    json.dumps(runner.dead_letters)
    # and the poison record is not delivered again by a later run
    assert runner.run().invocations == 0


def test_without_bisect_the_whole_batch_is_retried_then_dead_lettered(table, stream_runner):
    # GIVEN three records, one poison, and one allowed retry
    for name in ("a", "poison", "c"):
        table.put(name)
    collector = Collector(_poison)

    # WHEN delivered
    runner = stream_runner(table.stream_arn, collector, settings=MappingSettings(max_retry_attempts=1))
    report = runner.run()

    # THEN the same batch is tried twice, then the whole batch is dead-lettered
    assert collector.pks == [["a", "poison", "c"]] * 2
    assert (report.retries, report.dead_lettered) == (1, 3)
    assert [_pk(r) for r in runner.dead_letters[0]["records"]] == ["a", "poison", "c"]
    assert runner.dead_letters[0]["DDBStreamBatchInfo"]["batchSize"] == 3


def test_infinite_retries_are_capped(table, stream_runner):
    # GIVEN a handler that always fails and MaximumRetryAttempts -1 (infinite on AWS)
    table.put("poison")
    collector = Collector(_poison)

    # WHEN delivered
    runner = stream_runner(table.stream_arn, collector, settings=MappingSettings(retry_limit_when_infinite=3))
    report = runner.run()

    # THEN the runner stops after the local cap instead of looping forever
    assert report.invocations == 4 and report.retries == 3
    assert runner.dead_letters[0]["requestContext"]["approximateInvokeCount"] == 4


def test_partial_batch_response_redelivers_from_the_failed_record(table, stream_runner):
    # GIVEN five records; the first time it sees "c" the handler reports it as failed
    for name in "abcde":
        table.put(name)

    def policy(event: dict, call: int) -> dict:
        failing = [r for r in event["Records"] if _pk(r) == "c"]
        if call == 1:
            return {"batchItemFailures": [{"itemIdentifier": failing[0]["dynamodb"]["SequenceNumber"]}]}
        return {"batchItemFailures": []}

    collector = Collector(policy)

    # WHEN delivered with ReportBatchItemFailures
    settings = MappingSettings(report_batch_item_failures=True)
    report = stream_runner(table.stream_arn, collector, settings=settings).run()

    # THEN a and b are not redelivered; c and everything after it are
    assert collector.pks == [list("abcde"), list("cde")]
    assert (report.retries, report.dead_lettered, report.delivered) == (1, 0, 8)


def test_partial_batch_response_ignored_without_the_setting(table, stream_runner):
    # GIVEN a handler reporting a failure, on a mapping without ReportBatchItemFailures
    table.put("a")
    collector = Collector(lambda e, c: {"batchItemFailures": [{"itemIdentifier": "nope"}]})

    # WHEN delivered  THEN the result is ignored: one successful invocation
    report = stream_runner(table.stream_arn, collector).run()
    assert (report.invocations, report.retries) == (1, 0)


@pytest.mark.parametrize(
    "bad_result",
    [
        {"batchItemFailures": [{"itemIdentifier": "999999"}]},
        {"batchItemFailures": [{"itemIdentifier": ""}]},
        {"batchItemFailures": [{"id": "x"}]},
        "not an object",
    ],
    ids=["unknown-id", "empty-id", "bad-key", "non-object"],
)
def test_invalid_partial_response_retries_the_whole_batch(table, stream_runner, bad_result):
    # GIVEN a handler whose first response is invalid, then succeeds
    for name in "abc":
        table.put(name)
    collector = Collector(lambda e, call: bad_result if call == 1 else None)

    # WHEN delivered with ReportBatchItemFailures
    settings = MappingSettings(report_batch_item_failures=True)
    report = stream_runner(table.stream_arn, collector, settings=settings).run()

    # THEN the whole batch was treated as failed and retried
    assert collector.pks == [list("abc"), list("abc")]
    assert report.retries == 1 and report.errors == []


def test_per_item_order_is_preserved_through_failures(table, stream_runner):
    # GIVEN three items updated four times each, interleaved
    for version in range(1, 5):
        for key in ("x", "y", "z"):
            table.put(key, v={"N": str(version)})
    applied: dict[str, int] = {}
    gaps: list[tuple[str, int, int]] = []
    failed_once: set[str] = set()

    def apply(event: dict, _call: int) -> dict:
        for record in event["Records"]:
            key, version = _pk(record), int(record["dynamodb"]["NewImage"]["v"]["N"])
            seq = record["dynamodb"]["SequenceNumber"]
            if (key, version) in (("y", 2), ("x", 3)) and seq not in failed_once:
                failed_once.add(seq)
                if key == "x":
                    raise RuntimeError("transient")
                return {"batchItemFailures": [{"itemIdentifier": seq}]}
            if version > applied.get(key, 0) + 1:
                gaps.append((key, applied.get(key, 0), version))
            applied[key] = max(applied.get(key, 0), version)
        return {}

    # WHEN delivered in batches of 4 with partial responses and bisect
    settings = MappingSettings(batch_size=4, report_batch_item_failures=True, bisect_on_error=True)
    report = stream_runner(table.stream_arn, Collector(apply), settings=settings).run()

    # THEN no item ever saw a later version before an earlier one, and all versions landed
    assert gaps == []
    assert applied == {"x": 4, "y": 4, "z": 4}
    assert report.retries >= 1 and report.dead_lettered == 0


def test_records_older_than_max_age_are_dead_lettered_without_invoking(table, stream_runner):
    # GIVEN a record and a maximum record age of 0 s (AWS minimum is 60 s; allowed locally)
    table.put("stale")
    collector = Collector()

    # WHEN delivered
    runner = stream_runner(table.stream_arn, collector, settings=MappingSettings(max_record_age_s=0))
    report = runner.run()

    # THEN the handler is never called and the record lands on the failure path
    assert collector.events == [] and report.dead_lettered == 1
    (letter,) = runner.dead_letters
    assert letter["requestContext"]["condition"] == "RecordAgeExceeded"
    assert letter["requestContext"]["approximateInvokeCount"] == 0
    assert letter["responseContext"]["statusCode"] is None


def test_ttl_expiry_arrives_as_an_aws_shaped_remove(table, dynamodb_client, stream_runner):
    # PROVES: DynamoDB Local really expires items and streams the deletion, and the runner
    # delivers it as AWS does (REMOVE + service userIdentity) although DynamoDB Local reports
    # eventName UNKNOWN_TO_SDK_VERSION. DynamoDB Local expires items within seconds; wait <= 30 s.
    # GIVEN TTL on "expiresAt" and an item that expired ten seconds ago
    dynamodb_client.update_time_to_live(
        TableName=table.name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiresAt"}
    )
    table.put("session#1", expiresAt={"N": str(int(time.time()) - 10)})
    collector = Collector()
    runner = stream_runner(table.stream_arn, collector)

    # WHEN the runner polls until the deletion shows up
    deadline = time.monotonic() + 30
    removes: list[dict] = []
    while not removes and time.monotonic() < deadline:
        runner.run()
        removes = [r for e in collector.events for r in e["Records"] if r["eventName"] != "INSERT"]
        time.sleep(0.5)

    # THEN it is a REMOVE by the DynamoDB service with the expired item's old image
    assert removes, "DynamoDB Local did not stream the TTL deletion within 30 s"
    (remove,) = removes
    assert remove["eventName"] == "REMOVE"
    assert remove["userIdentity"] == {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
    assert remove["dynamodb"]["OldImage"]["PK"] == {"S": "session#1"}
    # and without normalization the raw DynamoDB Local quirk is visible
    raw = Collector()
    StreamRunner(runner.client, table.stream_arn, raw, normalize_ttl=False).run()
    assert [r["eventName"] for e in raw.events for r in e["Records"]] == ["INSERT", "UNKNOWN_TO_SDK_VERSION"]


# ---------------------------------------------------------------------------------------------
# Settings from a synthesized template
# ---------------------------------------------------------------------------------------------
def _template(**mapping_props: Any) -> dict:
    """Shaped exactly like CDK's DynamoEventSource output (see test_settings_from_a_real_cdk_synth)."""
    props = {
        "BatchSize": 10, "BisectBatchOnFunctionError": True,
        "DestinationConfig": {"OnFailure": {"Destination": {"Fn::GetAtt": ["DLQ581697C4", "Arn"]}}},
        "EventSourceArn": {"Fn::GetAtt": ["Data666C94C7", "StreamArn"]},
        "FilterCriteria": {"Filters": [{"Pattern": json.dumps(COUNTER_PATTERN)}]},
        "FunctionName": {"Ref": "Fn9270CBC0"}, "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "MaximumRecordAgeInSeconds": 120, "MaximumRetryAttempts": 3, "StartingPosition": "TRIM_HORIZON",
        **mapping_props,
    }
    return {
        "Resources": {
            "Data666C94C7": {
                "Type": "AWS::DynamoDB::Table",
                "Properties": {
                    "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
                    "AttributeDefinitions": [
                        {"AttributeName": "PK", "AttributeType": "S"},
                        {"AttributeName": "SK", "AttributeType": "S"},
                    ],
                    "BillingMode": "PAY_PER_REQUEST",
                    "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
                },
            },
            "Fn9270CBC0": {"Type": "AWS::Lambda::Function", "Properties": {"Handler": "index.handler"}},
            "FnDynamoDBEventSourceSData9342FAB40C35C2EB": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": props},
        }
    }


def test_settings_from_template():
    # GIVEN a template with one event source mapping  WHEN its settings are read
    settings = MappingSettings.from_template(_template())

    # THEN every supported property is mapped
    assert settings == MappingSettings(
        batch_size=10, filters=(COUNTER_PATTERN,), report_batch_item_failures=True, bisect_on_error=True,
        max_retry_attempts=3, max_record_age_s=120, starting_position="TRIM_HORIZON",
        on_failure='{"Fn::GetAtt": ["DLQ581697C4", "Arn"]}', function_logical_id="Fn9270CBC0",
        event_source={"Fn::GetAtt": ["Data666C94C7", "StreamArn"]},
    )
    assert settings.table_logical_id == "Data666C94C7"
    # AWS defaults when the properties are absent (-1 = infinite)
    infinite_age = MappingSettings.from_template(_template(MaximumRecordAgeInSeconds=-1), "FnDynamoDB")
    assert infinite_age.max_record_age_s is None


def test_choosing_a_mapping_in_a_template_with_several():
    # GIVEN a template with two mappings for two functions
    tpl = _template()
    second = json.loads(json.dumps(tpl["Resources"]["FnDynamoDBEventSourceSData9342FAB40C35C2EB"]))
    second["Properties"]["FunctionName"] = {"Fn::GetAtt": ["AuditFnABCDEF12", "Arn"]}
    second["Properties"]["BatchSize"] = 7
    tpl["Resources"]["AuditMapping"] = second

    # WHEN a mapping is chosen by function, by logical id, or not at all
    by_function = MappingSettings.from_template(tpl, function_logical_id="AuditFnABCDEF12")
    by_id = MappingSettings.from_template(tpl, "AuditMapping")

    # THEN the right one is read, and an ambiguous choice lists the candidates
    assert by_function.batch_size == 7 and by_id.batch_size == 7
    assert by_function.function_logical_id == "AuditFnABCDEF12"
    with pytest.raises(StreamRunnerError, match="AuditMapping, FnDynamoDBEventSource"):
        MappingSettings.from_template(tpl)
    with pytest.raises(StreamRunnerError, match="'NoSuchFn'"):
        MappingSettings.from_template(tpl, function_logical_id="NoSuchFn")


@pytest.mark.parametrize(
    ("props", "named"),
    [
        ({"TumblingWindowInSeconds": 30}, "TumblingWindowInSeconds"),
        ({"StartingPosition": "AT_TIMESTAMP"}, "AT_TIMESTAMP"),
        ({"BatchSize": 0}, "batch_size=0"),
        ({"MaximumRetryAttempts": -2}, "max_retry_attempts=-2"),
    ],
)
def test_unsupported_mapping_properties_raise(props, named):
    # GIVEN a mapping the runner cannot reproduce  WHEN read  THEN a typed error names it
    with pytest.raises(StreamRunnerError, match=named):
        MappingSettings.from_template(_template(**props))


def test_from_deployment_runs_the_templates_mapping(local_deploy, dynamodb_client, dynamodb_streams_client):
    # GIVEN the template's table deployed locally and a counter shard plus an unrelated write
    deployment = local_deploy(_template(), name_prefix="runner-")
    name = deployment.table_name("Data")
    dynamodb_client.put_item(TableName=name, Item={"PK": {"S": "COUNTER#video_views#v9#1"}, "SK": {"S": "SHARD"}})
    dynamodb_client.put_item(TableName=name, Item={"PK": {"S": "ORDER#1"}, "SK": {"S": "ORDER"}})
    collector = Collector()

    # WHEN a runner is built from the deployment and the template
    runner = StreamRunner.from_deployment(
        deployment, None, handler=collector, streams_client=dynamodb_streams_client, function_logical_id="Fn9270CBC0"
    )
    report = runner.run()

    # THEN it reads that table's stream with the template's filter
    assert runner.stream_arn == deployment.stream_arn("Data")
    assert collector.pks == [["COUNTER#video_views#v9#1"]] and report.filtered_out == 1


def test_settings_from_a_real_cdk_synth():
    # GIVEN a CDK DynamoEventSource with every supported option (jsii start costs ~3 s once)
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as ddb
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_lambda_event_sources as sources
    from aws_cdk import aws_sqs as sqs
    from aws_cdk.assertions import Template

    stack = cdk.Stack(cdk.App(), "RunnerSynth")
    table = ddb.TableV2(
        stack, "Data", partition_key=ddb.Attribute(name="PK", type=ddb.AttributeType.STRING),
        dynamo_stream=ddb.StreamViewType.NEW_AND_OLD_IMAGES,
    )
    fn = lambda_.Function(
        stack, "Fn", runtime=lambda_.Runtime.PYTHON_3_12, handler="index.handler", code=lambda_.Code.from_inline("x")
    )
    fn.add_event_source(
        sources.DynamoEventSource(
            table, starting_position=lambda_.StartingPosition.TRIM_HORIZON, batch_size=10, bisect_batch_on_error=True,
            retry_attempts=3, report_batch_item_failures=True, max_record_age=cdk.Duration.seconds(120),
            on_failure=sources.SqsDlq(sqs.Queue(stack, "DLQ")),
            filters=[lambda_.FilterCriteria.filter({"dynamodb": {"Keys": {"PK": {"S": lambda_.FilterRule.begins_with("A#")}}}})],
        )
    )

    # WHEN the synthesized mapping is read for that function
    tpl = Template.from_stack(stack).to_json()
    fn_id = stack.get_logical_id(fn.node.default_child)
    settings = MappingSettings.from_template(tpl, function_logical_id=fn_id)

    # THEN the settings are what was declared
    assert (settings.batch_size, settings.max_retry_attempts, settings.max_record_age_s) == (10, 3, 120)
    assert settings.bisect_on_error and settings.report_batch_item_failures
    assert settings.filters == ({"dynamodb": {"Keys": {"PK": {"S": [{"prefix": "A#"}]}}}},)
    assert settings.table_logical_id is not None and settings.table_logical_id.startswith("Data")
    assert settings.on_failure is not None and "DLQ" in settings.on_failure


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"batch_size": 10001}, "batch_size"),
        ({"max_record_age_s": -1}, "max_record_age_s"),
        ({"starting_position": "AT_TIMESTAMP"}, "starting_position"),
        ({"filters": ({"a": "b"},)}, "'b'"),
    ],
)
def test_invalid_settings_raise(kwargs, named):
    # GIVEN an out-of-range setting  WHEN constructed  THEN a TestingError names it
    with pytest.raises(TestingError, match=named):
        MappingSettings(**kwargs)


# ---------------------------------------------------------------------------------------------
# Warm handler processes
# ---------------------------------------------------------------------------------------------
WARM_HANDLER = textwrap.dedent(
    """
    import os, sys, time
    COUNT = 0
    print("cold start")

    def handler(event, context):
        global COUNT
        COUNT += 1
        print("invocation", COUNT)
        sys.stdout.write("{not json\\n")
        os.write(1, b"raw fd write\\n")
        if event.get("raise"):
            raise RuntimeError("kaboom %d" % COUNT)
        if event.get("exit"):
            os._exit(7)
        if event.get("sleep"):
            time.sleep(event["sleep"])
        if event.get("unserializable"):
            return {1, 2}
        return {
            "count": COUNT, "pid": os.getpid(), "request_id": context.aws_request_id,
            "env": {k: os.environ.get(k)
                    for k in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_ENDPOINT_URL_DYNAMODB", "PYTHONPATH")},
            "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("aws_cdk", "constructs", "jsii", "constructs_lib")),
            "cwd": os.getcwd(),
        }
    """
)


@pytest.fixture
def warm_asset(tmp_path: Path) -> Path:
    asset = tmp_path / "asset"
    asset.mkdir()
    (asset / "warm.py").write_text(WARM_HANDLER)
    return asset


def test_local_function_stays_warm_and_isolated(warm_asset, local_function, dynamodb_local, monkeypatch):
    # GIVEN caller AWS/PYTHON variables that must not leak, and a warm function
    monkeypatch.setenv("AWS_PROFILE", "someone-real")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    fn = local_function(warm_asset, "warm.handler")

    # WHEN it is invoked twice
    first, second = fn.invoke({}), fn.invoke({})

    # THEN module state persists in one process, prints stay out of the protocol and are
    # captured per invocation, and nothing of the caller's environment or CDK is loaded
    assert (first.result["count"], second.result["count"]) == (1, 2)
    assert first.result["pid"] == second.result["pid"] == fn.pid
    assert first.result["request_id"] != second.result["request_id"]
    assert "cold start" in fn.init_logs
    assert "invocation 2" in second.logs and "raw fd write" in second.logs and "{not json" in second.logs
    assert "invocation 1" not in second.logs
    assert second.result["env"] == {
        "AWS_PROFILE": None, "AWS_ACCESS_KEY_ID": "local",
        "AWS_ENDPOINT_URL_DYNAMODB": dynamodb_local.endpoint, "PYTHONPATH": None,
    }
    assert second.result["modules"] == [] and second.cdk_modules == [] and second.package_file is None
    assert Path(second.result["cwd"]) == warm_asset.resolve()
    assert fn({})["count"] == 3  # __call__ returns just the result
    assert not any(warm_asset.rglob("__pycache__"))


def test_local_function_errors_keep_or_restart_the_process(warm_asset, local_function):
    # GIVEN a warm function
    fn = local_function(warm_asset, "warm.handler", endpoint=None, timeout=2)
    pid = fn.invoke({}).result["pid"]

    # WHEN the handler raises  THEN HandlerError with the traceback, and the process stays warm
    with pytest.raises(HandlerError, match=r"(?s)Traceback.*RuntimeError: kaboom 2"):
        fn.invoke({"raise": True})
    after_error = fn.invoke({}).result
    assert (after_error["count"], after_error["pid"]) == (3, pid)

    # WHEN it returns something JSON cannot encode  THEN a marshal error, still warm
    with pytest.raises(HandlerError, match="MarshalError"):
        fn.invoke({"unserializable": True})
    assert fn.invoke({}).result["pid"] == pid

    # WHEN the process dies  THEN HandlerError, and the next invoke is a fresh cold start
    with pytest.raises(HandlerError, match=r"crashed \(exit 7\)"):
        fn.invoke({"exit": True})
    restarted = fn.invoke({}).result
    assert restarted["count"] == 1 and restarted["pid"] != pid and fn.starts == 2

    # WHEN an invocation exceeds the timeout  THEN HandlerError and again a fresh process
    with pytest.raises(HandlerError, match="did not finish within 2 s"):
        fn.invoke({"sleep": 10})
    assert fn.invoke({}).result["count"] == 1 and fn.starts == 3


def test_local_function_import_error_and_close(tmp_path):
    # GIVEN a handler module that fails at import
    (tmp_path / "broken.py").write_text("import not_in_the_asset\n")

    # WHEN started  THEN the import error is reported at once
    with pytest.raises(HandlerError, match="ModuleNotFoundError: No module named 'not_in_the_asset'"):
        LocalFunction(tmp_path, "broken.handler")

    # GIVEN a working function used as a context manager
    (tmp_path / "ok.py").write_text("def handler(event, context):\n    return event\n")
    with LocalFunction(tmp_path, "ok.handler") as fn:
        assert fn({"x": 1}) == {"x": 1}
    # THEN leaving the block stops it, and later invocations are refused
    assert not fn.running
    with pytest.raises(HandlerError, match="closed"):
        fn({})


RUNNER_HANDLER = textwrap.dedent(
    """
    SEEN = []  # idempotent consumer: a redelivered record is not applied twice
    FAILED = set()

    def handler(event, context):
        if "dump" in event:
            return SEEN
        print("batch of", len(event["Records"]))
        for record in event["Records"]:
            pk = record["dynamodb"]["Keys"]["PK"]["S"]
            seq = record["dynamodb"]["SequenceNumber"]
            if pk == "flaky" and seq not in FAILED:
                FAILED.add(seq)
                return {"batchItemFailures": [{"itemIdentifier": seq}]}
            if pk == "poison":
                raise ValueError("poison " + seq)
            if pk not in SEEN:
                SEEN.append(pk)
        return {"batchItemFailures": []}
    """
)


def test_runner_drives_a_warm_local_function(table, tmp_path, local_function, stream_runner):
    # GIVEN a warm handler process with partial batch responses, a flaky and a poison record
    (tmp_path / "consumer.py").write_text(RUNNER_HANDLER)
    fn = local_function(tmp_path, "consumer.handler")
    for name in ("a", "flaky", "b", "poison", "c"):
        table.put(name)
    settings = MappingSettings(report_batch_item_failures=True, bisect_on_error=True, max_retry_attempts=1)

    # WHEN the runner feeds the stream to it
    runner = stream_runner(table.stream_arn, fn, settings=settings)
    report = runner.run()

    # THEN the one warm process applied every good record, in order (state kept across
    # batches, redeliveries included), and the poison record was dead-lettered with the
    # handler's traceback in the errors
    assert fn.invoke({"dump": True}).result == ["a", "flaky", "b", "c"]
    # a,flaky,b,poison,c -> flaky reported: retry flaky,b,poison,c (retry 1) -> poison raises:
    # bisect flaky,b | poison,c -> poison,c raises: bisect poison | c -> poison out of retries
    assert [len(b) for b in report.batches] == [5, 4, 2, 2, 1, 1]
    assert report.retries == 1
    assert [_pk(r) for d in runner.dead_letters for r in d["records"]] == ["poison"]
    assert any("ValueError: poison" in e for e in report.errors)
    assert fn.starts == 1 and report.dead_lettered == 1


FAULTY_HANDLER = textwrap.dedent(
    """
    import boto3

    client = boto3.client("dynamodb")

    def handler(event, context):
        try:
            client.describe_table(TableName=event["table"])
        except client.exceptions.ClientError as exc:
            return {"error": exc.response["Error"]["Code"], "message": exc.response["Error"]["Message"]}
        return {"error": None}
    """
)


def test_local_function_injects_faults_into_matching_calls_only(tmp_path, dynamodb_local, dynamodb_client):
    # GIVEN a handler calling DescribeTable, with a fault for calls naming the "poison" table
    (tmp_path / "faulty.py").write_text(FAULTY_HANDLER)
    name = f"faults-{uuid.uuid4().hex[:8]}"
    dynamodb_client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
    )
    fault = Fault(operation="DescribeTable", contains="poison", code="InternalServerError", message="boom")
    try:
        with LocalFunction(tmp_path, "faulty.handler", endpoint=dynamodb_local.endpoint, faults=[fault]) as fn:
            # WHEN a matching call is made THEN it fails with the injected error, as the service would answer
            assert fn({"table": "poison-table"}) == {"error": "InternalServerError", "message": "boom"}
            # AND other calls reach DynamoDB Local untouched
            assert fn({"table": name}) == {"error": None}
    finally:
        dynamodb_client.delete_table(TableName=name)
