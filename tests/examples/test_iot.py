"""The IoT telemetry example (examples/iot): template shape, the readings' access patterns on
DynamoDB Local (tables from the synthesized template, bundled handlers from cdk.out), the
scenario end to end, cdk-nag and cfn-lint."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model import Model
from constructs_lib.runtime import KeyValueError, TableClient
from constructs_lib.testing import LocalDeployment, asset_dir
from constructs_lib.testing.handlers import LocalFunction
from examples.iot import scenario
from examples.iot.handlers.iot_queries import readings_between

STACK = "IotTelemetryStack"
#: ``make soak``: the scenario waits for DynamoDB Local's sweep over its whole table (about 70 s).
SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
#: One sweep pass over a table of at most 20 items: at most ~1 s to start, one page, then 10 s asleep.
SMALL_TABLE_SWEEP_S = 30.0
INGEST, QUERIES = "iot_ingest.handler", "iot_queries.handler"



@pytest.fixture(scope="module")
def iot(synth_example: Callable[[str], Any]) -> Any:
    return synth_example("examples.iot.app")


@pytest.fixture(scope="module")
def template(iot: Any) -> dict[str, Any]:
    return iot.template(STACK)


@pytest.fixture(scope="module")
def model(iot: Any, template: dict[str, Any]) -> Model:
    """The model as bundled into the ingest function's asset."""
    asset = asset_dir(iot.outdir, template, iot.function_id(STACK, INGEST))
    return Model.from_json((asset / "model.json").read_text(encoding="utf-8"))


@pytest.fixture
def deployment(local_deploy: Callable[..., LocalDeployment], template: dict[str, Any]) -> LocalDeployment:
    return local_deploy(template, name_prefix="iot-test-")


@pytest.fixture
def table(deployment: LocalDeployment, model: Model, dynamodb_client: Any) -> TableClient:
    return TableClient(model, deployment.table_name("DataTable"), client=dynamodb_client)


@pytest.fixture
def ingest(
    iot: Any, template: dict[str, Any], deployment: LocalDeployment, dynamodb_local: Any
) -> Iterator[LocalFunction]:
    lid = iot.function_id(STACK, INGEST)
    with LocalFunction(asset_dir(iot.outdir, template, lid), INGEST, environment=deployment.function_environment(lid),
                       endpoint=dynamodb_local.endpoint) as fn:
        yield fn


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def every(start: datetime, end: datetime, step: timedelta) -> list[datetime]:
    out, at = [], start
    while at <= end:
        out.append(at)
        at += step
    return out


def future_boundary() -> datetime:
    """A month boundary after now, so readings around it are inside the retention."""
    return scenario.next_month_start(datetime.now(UTC))


# Template --------------------------------------------------------------------------------------------
def test_table_has_month_buckets_ttl_and_no_index(template: dict[str, Any], iot: Any) -> None:
    # GIVEN the synthesized IoT stack
    (table,) = iot.resources(STACK, "AWS::DynamoDB::GlobalTable").values()
    props = table["Properties"]
    # THEN the table has exactly PK/SK, TTL on expires_at, no GSI and no stream
    assert [k["AttributeName"] for k in props["KeySchema"]] == ["PK", "SK"]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert "GlobalSecondaryIndexes" not in props and "StreamSpecification" not in props
    # AND two functions: ingest (retention from the model) and queries
    assert len(iot.resources(STACK, "AWS::Lambda::Function")) == 2
    ingest = template["Resources"][iot.function_id(STACK, INGEST)]
    assert ingest["Properties"]["Environment"]["Variables"]["RETENTION_DAYS"] == "30"
    assert set(template["Outputs"]) == {"TableName", "IngestFunction", "QueriesFunction"}


def test_ingest_may_only_write_and_queries_may_only_read(template: dict[str, Any], iot: Any) -> None:
    # GIVEN the IAM policies of the two functions
    roles = {lid: iot.function_id(STACK, h) for lid, h in (("ingest", INGEST), ("queries", QUERIES))}
    actions: dict[str, set[str]] = {}
    for name, fn_id in roles.items():
        role = template["Resources"][fn_id]["Properties"]["Role"]["Fn::GetAtt"][0]
        statements = [s for p in iot.resources(STACK, "AWS::IAM::Policy").values()
                      if {"Ref": role} in p["Properties"]["Roles"]
                      for s in p["Properties"]["PolicyDocument"]["Statement"]]
        actions[name] = {a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
                         if a.startswith("dynamodb:")}
    # THEN ingest writes (BatchWriteItem) and reads nothing; queries reads and writes nothing
    assert "dynamodb:BatchWriteItem" in actions["ingest"]
    assert not actions["ingest"] & {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:BatchGetItem"}
    assert {"dynamodb:Query", "dynamodb:GetItem"} <= actions["queries"]
    assert not actions["queries"] & {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
                                     "dynamodb:BatchWriteItem"}


# Access patterns on DynamoDB Local -----------------------------------------------------------------------------
def test_last_hour_across_a_month_boundary_reads_both_buckets(table: TableClient) -> None:
    # GIVEN readings every 10 minutes from 2 h before to 1 h after a month boundary, for two sensors
    boundary = future_boundary()
    times = every(boundary - timedelta(hours=2), boundary + timedelta(hours=1), timedelta(minutes=10))
    table.batch_write(puts=[("Reading", {"sensor_id": s, "ts": t, "value": i}) for s in ("s-1", "s-2")
                            for i, t in enumerate(times)])
    # WHEN the hour ending 20 minutes after the boundary is read
    now = boundary + timedelta(minutes=20)
    found, buckets, queries = readings_between(table, "s-1", now - timedelta(hours=1), now)
    # THEN both month buckets were queried, once each, and exactly the hour's readings came back in order
    assert buckets == [(boundary - timedelta(days=1)).strftime("%Y-%m"), boundary.strftime("%Y-%m")]
    assert queries == 2
    hour = [t for t in times if now - timedelta(hours=1) <= t <= now]
    assert [datetime.fromisoformat(r["ts"]) for r in found] == hour
    assert len(found) == 7
    assert {r["sensor_id"] for r in found} == {"s-1"}


def test_an_hour_inside_one_month_reads_one_bucket_with_inclusive_bounds(table: TableClient) -> None:
    # GIVEN readings every minute over three hours of one month
    start = future_boundary() + timedelta(days=3)
    times = every(start, start + timedelta(hours=3), timedelta(minutes=1))
    table.batch_write(puts=[("Reading", {"sensor_id": "s-9", "ts": t, "value": 1}) for t in times])
    # WHEN an hour in the middle is read, with a page size smaller than the result
    lo, hi = start + timedelta(hours=1), start + timedelta(hours=2)
    found, buckets, queries = readings_between(table, "s-9", lo, hi, page_size=25)
    # THEN one bucket, both bounds included, nothing outside, paged over several queries
    assert buckets == [start.strftime("%Y-%m")]
    assert len(found) == 61
    assert (datetime.fromisoformat(found[0]["ts"]), datetime.fromisoformat(found[-1]["ts"])) == (lo, hi)
    assert queries == 3


def test_a_range_over_three_months_reads_the_middle_bucket_whole(table: TableClient) -> None:
    # GIVEN one reading on the 15th of three consecutive months, and one just before the range
    first = future_boundary()
    months = [first, scenario.next_month_start(first), scenario.next_month_start(scenario.next_month_start(first))]
    mid_month = [("Reading", {"sensor_id": "s-3", "ts": m + timedelta(days=14), "value": n})
                 for n, m in enumerate(months)]
    table.batch_write(puts=[*mid_month, ("Reading", {"sensor_id": "s-3", "ts": first, "value": 9})])
    # WHEN the range from the 2nd of the first month to the 20th of the third is read
    found, buckets, _ = readings_between(table, "s-3", first + timedelta(days=1), months[2] + timedelta(days=19))
    # THEN three buckets were queried and exactly the three mid-month readings found
    assert buckets == [m.strftime("%Y-%m") for m in months]
    assert [r["value"] for r in found] == [0, 1, 2]


def test_a_plain_query_over_two_partitions_is_refused_and_query_all_reads_both(
    table: TableClient, dynamodb_client: Any
) -> None:
    # GIVEN readings on both sides of a month boundary
    boundary = future_boundary()
    times = every(boundary - timedelta(minutes=30), boundary + timedelta(minutes=30), timedelta(minutes=10))
    table.batch_write(puts=[("Reading", {"sensor_id": "s-4", "ts": t, "value": i}) for i, t in enumerate(times)])
    calls: list[str] = []
    dynamodb_client.meta.events.register("before-call.dynamodb.Query", lambda **kw: calls.append("Query"))
    ts = (boundary - timedelta(minutes=30), boundary + timedelta(minutes=30))
    # WHEN one Query is asked for the range THEN it is refused before any call, naming both partitions
    with pytest.raises(KeyValueError, match=r"spans 2 partitions \(SENSOR#s-4#\d{4}-\d{2} \.\. SENSOR#s-4#\d{4}-\d{2}\)"):
        table.query("readings of a sensor in a time range", sensor_id="s-4", ts=ts)
    assert calls == []
    # AND query_all reads each partition in key order: every reading, oldest first
    found = list(table.query_all("readings of a sensor in a time range", sensor_id="s-4", ts=ts, limit=2))
    assert [datetime.fromisoformat(r["ts"]) for r in found] == times
    # AND descending reads the partitions newest first too
    newest = list(table.query_all("readings of a sensor in a time range", sensor_id="s-4", ts=ts, descending=True))
    assert [datetime.fromisoformat(r["ts"]) for r in newest] == times[::-1]
    # AND partition_at reads the one partition holding that instant
    later = table.query("readings of a sensor in a time range", sensor_id="s-4", ts=ts, partition_at=boundary)
    assert [datetime.fromisoformat(r["ts"]) for r in later] == [t for t in times if t >= boundary]
    # AND partition_at on a pattern without a bucketed range is refused, naming the rule
    with pytest.raises(KeyValueError, match="partition_at only applies"):
        table.query("sensor metadata", sensor_id="s-4", partition_at=boundary)


def test_reversed_or_naive_ranges_are_refused(table: TableClient) -> None:
    # GIVEN a range whose start is after its end, and a naive datetime
    now = datetime.now(UTC)
    # WHEN they are read THEN the runtime's typed error names the values and the rule
    with pytest.raises(KeyValueError, match="start .* is after end"):
        readings_between(table, "s-1", now, now - timedelta(hours=1))
    with pytest.raises(KeyValueError, match="naive|timezone"):
        readings_between(table, "s-1", now.replace(tzinfo=None) - timedelta(hours=1), now.replace(tzinfo=None))


def test_ingest_sets_ttl_rejects_bad_readings_and_keeps_the_rest(ingest: LocalFunction, table: TableClient) -> None:
    # GIVEN a batch with good readings (two of them for the same instant), and bad ones
    taken = future_boundary() - timedelta(minutes=1)
    good = {"sensor_id": "s-1", "ts": iso(taken), "value": 20.5}
    batch = [good, {**good, "value": 21.0}, {"sensor_id": "s-1", "ts": iso(taken + timedelta(minutes=2)), "value": 3},
             {"sensor_id": "s-1", "ts": "2024-06-30T23:55:00", "value": 1},
             {"sensor_id": "", "ts": iso(taken), "value": 1},
             {"sensor_id": "s-1", "ts": iso(taken), "value": "hot"},
             {"sensor_id": "s-1", "ts": iso(datetime.now(UTC) - timedelta(days=31)), "value": 1}]
    # WHEN the bundled ingest handler receives it
    reply = ingest({"readings": batch})
    # THEN the four bad readings are reported by index with the rule they break, the rest written
    assert [r["index"] for r in reply["rejected"]] == [3, 4, 5, 6]
    errors = [r["error"] for r in reply["rejected"]]
    assert "no UTC offset" in errors[0] and "sensor_id ''" in errors[1] and "'hot' must be a number" in errors[2]
    assert "older than the retention of 30 days" in errors[3]
    assert reply["written"] == 2 and reply["ok"] is False
    assert reply["partitions"] == [f"SENSOR#s-1#{taken:%Y-%m}", f"SENSOR#s-1#{taken + timedelta(minutes=2):%Y-%m}"]
    # AND the duplicate instant kept the last value, with TTL = reading time + 30 days (epoch seconds)
    item = table.get("Reading", sensor_id="s-1", ts=taken)
    assert item is not None and float(item["value"]) == 21.0
    assert item["expires_at"] == int((taken + timedelta(days=30)).timestamp())


def test_ingest_refuses_an_event_without_readings(ingest: LocalFunction) -> None:
    # GIVEN events with no list of readings WHEN they arrive THEN they are refused with the rule
    for event in ({}, {"readings": []}, {"readings": "s-1"}):
        assert ingest(event) == {"ok": False, "error": "event needs a non-empty list 'readings'"}


def test_dynamodb_locals_ttl_sweep_deletes_an_expired_reading(table: TableClient) -> None:
    # GIVEN the table from the synthesized template, with TTL on expires_at, just created, holding a
    # reading whose expires_at passed a minute ago and a live one (a small table: DynamoDB Local's
    # sweep reads 20 items a page and sleeps 10 s after each, so the first pass reads them at once)
    now = datetime.now(UTC).replace(microsecond=0)
    expired = {"sensor_id": "s-9", "ts": iso(now - timedelta(days=30, minutes=1)), "value": 1.0,
               "expires_at": int((now - timedelta(minutes=1)).timestamp())}
    live = {"sensor_id": "s-9", "ts": iso(now), "value": 2.0, "expires_at": int((now + timedelta(days=30)).timestamp())}
    table.put("Reading", expired)
    table.put("Reading", live)
    # WHEN DynamoDB Local's own TTL sweep runs (no client deletes anything)
    deadline = time.monotonic() + SMALL_TABLE_SWEEP_S
    while table.get("Reading", sensor_id="s-9", ts=expired["ts"], consistent=True) is not None:
        assert time.monotonic() < deadline, f"DynamoDB Local did not delete the expired reading in {SMALL_TABLE_SWEEP_S} s"
        time.sleep(0.25)
    # THEN the expired reading is gone and the live one is untouched
    assert table.get("Reading", sensor_id="s-9", ts=live["ts"], consistent=True) is not None


# The scenario ---------------------------------------------------------------------------------------------------
def test_scenario_end_to_end(iot: Any, dynamodb_local: Any) -> None:
    # GIVEN the synthesized app and DynamoDB Local
    lines: list[str] = []
    # WHEN the scenario runs (it deploys the template's tables and deletes them again), polling
    # DynamoDB Local's sweep as the demo does (a few seconds), or under `make soak` long enough to
    # see it (a pass over this table is about 70 s; the test above shows the sweep on a small table)
    wait = scenario.EXPIRY_DEADLINE_S if SOAK else scenario.SWEEP_WAIT_S
    outcome = scenario.run(iot.outdir, dynamodb_local, out=lines.append, sweep_wait_s=wait)
    boundary = outcome.now - timedelta(minutes=20)
    # THEN 123 readings were written to two month partitions per sensor, one malformed reading refused
    assert outcome.written == 123 and len(outcome.rejected) == 1 and len(outcome.partitions) == 6
    # AND the last hour crossed the boundary: two buckets, two queries, 13 readings (every 5 min, inclusive)
    assert outcome.last_hour["buckets"] == [f"{boundary - timedelta(days=1):%Y-%m}", f"{boundary:%Y-%m}"]
    assert (outcome.last_hour["queries"], outcome.last_hour["count"]) == (2, 13)
    assert len(outcome.inside_month["buckets"]) == 1 and outcome.inside_month["count"] == 13
    # AND the months hold 36 and 5 readings of s-1; metadata and the site listing are found
    assert list(outcome.month_counts.values()) == [36, 5]
    assert outcome.sensor is not None and outcome.sensor["site_id"] == "plant-a"
    assert outcome.site_sensors == ["s-1", "s-2"]
    # AND every TTL is the reading's time + 30 days
    for ts, expires in outcome.ttl_samples:
        assert expires == int((datetime.fromisoformat(ts) + timedelta(days=30)).timestamp())
    # AND the reading that expired during the run was hidden at once by the client's filter on
    # expires_at (it was stored, and is returned without the filter, unless the sweep was quicker)
    assert outcome.expiring_at <= int(datetime.now(UTC).timestamp())
    assert outcome.client_read == []
    assert outcome.client_read_unfiltered == (1 if outcome.stored_after_expiry else 0)
    # AND the output says what DynamoDB Local's own sweep did, never a deletion it did not see
    deleted = any("deleted by DynamoDB Local's TTL sweep" in line for line in lines)
    kept = any("still stored" in line and "after expiry:" in line for line in lines)
    assert (deleted, kept) == (outcome.expired, not outcome.expired), "\n".join(lines)
    # AND under `make soak`, waiting long enough, the sweep deleted it
    if SOAK:
        assert outcome.expired, "\n".join(lines)
    assert any("last hour" in line for line in lines)


def test_passes_aws_solutions_checks(iot: Any) -> None:
    # GIVEN the app synthesized with cdk-nag's AwsSolutionsChecks THEN nothing is left unacknowledged,
    # and only the library's own acknowledgments suppress anything
    iot.assert_nag_clean()


def test_template_is_cfn_lint_clean(iot: Any, cfn_lint: Callable[[Path], list[str]]) -> None:
    # GIVEN the synthesized template WHEN cfn-lint checks it THEN no error and no warning
    assert cfn_lint(iot.template_file(STACK)) == []
