"""The sharded counter's calls priced by :mod:`constructs_lib.capacity` equal what DynamoDB Local
reports (``ReturnConsumedCapacity="INDEXES"``), at the size boundaries of each call kind.

The table is the shop's, created from ``app.py``'s synthesized template (three GSIs: a counter
item must enter none). Each test runs ``CounterClient`` and the aggregator
(``runtime.handlers.counter.aggregate`` over the table's real stream, ``StreamRunner``) with a hook
at the runtime's AWS-call seam that records every call's ``ConsumedCapacity``; the prediction is
made from the stored items before and after (read raw), or from the items the capacity package
builds, which must equal what the runtime stored.

Where DynamoDB Local departs from AWS's documented rules the test pins what Local reports and
what AWS charges, side by side (ADR 0051): a refused conditional write reports no
``ConsumedCapacity`` (AWS charges the stored item's size, 1 unit at least); a transaction of two
1-unit writes reports 2 units (AWS charges 2 per write: 4); a BatchGetItem key not found costs
nothing (AWS charges it the minimum read); a write DynamoDB refuses as invalid (the aggregator's
first write of a generation's watermark map) reports nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from constructs_lib import capacity
from constructs_lib.capacity import Capacity
from constructs_lib.capacity.counters import increment_item, shard_item, total_item
from constructs_lib.runtime import _aws
from constructs_lib.runtime.handlers.counter import aggregate
from constructs_lib.runtime.patterns.counter import CounterClient, CounterSpec
from constructs_lib.runtime.patterns.counter.watermarks import decode_seq, generation, generation_maps
from constructs_lib.runtime.values import item_size
from constructs_lib.testing.streams import MappingSettings, StreamRunner
from examples.shop.model import shop_model

pytestmark = pytest.mark.integration

MODEL = shop_model
TTL = 86_400
#: The increment items' expiry: a fixed clock makes it 1,795,977,615 (no trailing zero, 6 bytes).
EXPIRES = 1_795_977_615
CLOCK = datetime.fromtimestamp(EXPIRES - TTL, UTC)


class Call(NamedTuple):
    operation: str
    params: dict[str, Any]
    response: dict[str, Any] | None
    error: str | None


class Recorder:
    """A call hook: asks every call for ``ConsumedCapacity`` and keeps it (or the error code)."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def __call__(self, send: Callable[..., dict[str, Any]], operation: str, params: dict[str, Any]) -> dict[str, Any]:
        params = {**params, "ReturnConsumedCapacity": "INDEXES"}
        try:
            response = send(**params)
        except Exception as exc:
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
            with self._lock:
                self.calls.append(Call(operation, params, getattr(exc, "response", None), code))
            raise
        with self._lock:
            self.calls.append(Call(operation, params, response, None))
        return response

    def take(self) -> list[Call]:
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


def reported(response: Mapping[str, Any] | None) -> Capacity | None:
    """DynamoDB's ``ConsumedCapacity`` of one response (None when it reports none)."""
    consumed = (response or {}).get("ConsumedCapacity")
    if isinstance(consumed, list):
        consumed = consumed[0] if consumed else None
    if consumed is None:
        return None
    return Capacity("write", consumed["Table"]["CapacityUnits"],
                    {k: v["CapacityUnits"] for k, v in consumed.get("GlobalSecondaryIndexes", {}).items()},
                    {k: v["CapacityUnits"] for k, v in consumed.get("LocalSecondaryIndexes", {}).items()})


def assert_priced(what: str, predicted: Capacity, call: Call) -> None:
    got = reported(call.response)
    assert got is not None, f"{what}: DynamoDB Local reported no ConsumedCapacity ({call.error})"
    assert (got.table, dict(got.global_indexes), dict(got.local_indexes)) == \
        (predicted.table, dict(predicted.global_indexes), dict(predicted.local_indexes)), f"{what}: {call}"


class Table(NamedTuple):
    client: Any
    name: str
    stream_arn: str
    streams: Any

    def raw(self, key: Mapping[str, str]) -> dict[str, Any] | None:
        item = self.client.get_item(TableName=self.name, Key=_aws.serialize(dict(key)), ConsistentRead=True).get("Item")
        return _aws.deserialize(item) if item else None

    def counter(self, spec: CounterSpec, region: str | None = None) -> tuple[CounterClient, Recorder]:
        recorder = Recorder()
        client = CounterClient(spec, self.name, client=self.client, clock=lambda: CLOCK, region=region)
        client.hooks = (recorder,)
        return client, recorder

    def aggregator(self, counter: CounterClient, batch_size: int) -> StreamRunner:
        """The family's aggregator on the table's stream, behind a filter on its shards' and
        increment items' keys (not its totals')."""
        only = {"dynamodb": {"Keys": {counter.spec.pk_attribute: {"S": [{"prefix": counter.spec.key_prefix}]},
                                      counter.spec.sk_attribute: {"S": ["SUM", {"prefix": "KEY#"}]}}}}
        settings = MappingSettings(batch_size=batch_size, filters=(only,), report_batch_item_failures=True)
        return StreamRunner(self.streams, self.stream_arn, lambda event: aggregate(counter, event), settings=settings)


@pytest.fixture(scope="module")
def table(shop_cdk_out: Path, dynamodb_local: Any, dynamodb_streams_client: Any) -> Iterator[Table]:
    from constructs_lib.testing.local_deploy import deploy_template

    template = json.loads((shop_cdk_out / "ShopStack.template.json").read_text(encoding="utf-8"))
    client = dynamodb_local.client()
    deployment = deploy_template(template, client=client, name_prefix="counter-capacity-")
    (data,) = [lid for lid, r in template["Resources"].items()
               if r["Type"] in ("AWS::DynamoDB::GlobalTable", "AWS::DynamoDB::Table") and lid.startswith("DataTable")]
    yield Table(client, deployment.table_name(data), deployment.stream_arn(data), dynamodb_streams_client)
    deployment.delete()


def spec(family: str, shards: int, *, aggregation: str = "deltas", idempotent: bool = True,
         regions: tuple[str, ...] = ()) -> CounterSpec:
    return CounterSpec(family, shards, MODEL.pk_attribute, MODEL.sk_attribute, MODEL.entity_attribute,
                       MODEL.ttl_attribute, TTL if idempotent else None, regions, aggregation)


def padded(build: Callable[[int], Mapping[str, Any]], size: int) -> int:
    """The length of the padding text that makes ``build(length)`` exactly ``size`` bytes."""
    for length in range(1, 4097):
        if item_size(build(length)) == size:
            return length
    raise AssertionError(f"no padding makes the item {size} bytes")


# Increments ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("aggregation", ["deltas", "recompute"])
@pytest.mark.parametrize("size, units", [(1024, 1.0), (1025, 2.0)])
def test_an_increment_at_the_1_kb_boundary(table: Table, aggregation: str, size: int, units: float) -> None:
    # GIVEN a one-shard family and a counter id that makes its shard item exactly `size` bytes
    s = spec(f"inc_{aggregation}_{size}", 1, aggregation=aggregation)
    counter_id = "x" * padded(lambda n: shard_item(s, "x" * n, 0, count=1, writes=1, amount=1), size)
    counter, recorder = table.counter(s)
    # WHEN it is incremented (the shard is created) and incremented again
    counter.increment(counter_id)
    (first,) = recorder.take()
    stored = table.raw(s.shard_key(counter_id, 0))
    counter.increment(counter_id)
    (second,) = recorder.take()
    after = table.raw(s.shard_key(counter_id, 0))
    # THEN the capacity package builds the very item the runtime stored
    assert stored == shard_item(s, counter_id, 0, count=1, writes=1, amount=1)
    assert stored is not None and item_size(stored) == size
    # AND each UpdateItem costs what DynamoDB Local reports: the larger item, nothing on an index
    assert_priced("UpdateItem shard created", capacity.update(MODEL, None, stored), first)
    assert_priced("UpdateItem shard", capacity.update(MODEL, stored, after), second)  # type: ignore[arg-type]
    assert reported(first.response) == Capacity("write", units)


@pytest.mark.parametrize("size, units", [(1024, 1.0), (1025, 2.0)])
def test_an_idempotent_increment_and_its_duplicate_at_the_1_kb_boundary(table: Table, size: int, units: float) -> None:
    # GIVEN a stream-layout family, a 400-byte idempotency key and a counter id that make the
    # increment item `size` bytes
    s = spec(f"key_{size}", 1)
    key = "k" * 400
    video = "v" * padded(lambda n: increment_item(s, "v" * n, key, shard=0, expires=EXPIRES), size)
    counter, recorder = table.counter(s)
    # WHEN the increment is sent
    assert not counter.increment(video, idempotency_key=key).duplicate
    (put,) = recorder.take()
    stored = table.raw(s.increment_key(video, 0, key))
    # THEN it is one conditional PutItem of the item the capacity package builds (its nonce aside)
    assert put.operation == "put_item" and stored is not None
    built = increment_item(s, video, key, shard=0, expires=EXPIRES)
    assert {**stored, "n": "0" * 12} == built and len(stored["n"]) == 12
    # AND it costs the item's size, reported as predicted: `units`
    assert_priced("PutItem increment item", capacity.put(MODEL, stored), put)
    assert reported(put.response) == Capacity("write", units)
    # WHEN the key is sent again THEN it is a duplicate: the put refused by its condition
    assert counter.increment(video, idempotency_key=key).duplicate
    (refused,) = recorder.take()
    assert refused.error == "ConditionalCheckFailedException"
    # AND DynamoDB Local reports no capacity for it, where AWS charges the stored item's size
    assert reported(refused.response) is None
    assert capacity.refused(MODEL, stored) == Capacity("write", units)


def test_the_recompute_layouts_idempotent_increments_are_transactions(table: Table) -> None:
    # GIVEN a recompute-layout family with idempotent increments
    s = spec("recompute_tx", 120, aggregation="recompute")
    counter, recorder = table.counter(s)
    # WHEN 200 idempotent increments of one counter are sent
    for n in range(200):
        counter.increment("video-1", idempotency_key=f"request-{n:04d}")
    calls = recorder.take()
    assert [c.operation for c in calls] == ["transact_write_items"] * 200
    # THEN AWS's rule charges each write of each transaction twice: 4 units each, 800 in all
    marker = table.raw(s.dedup_key("video-1", "request-0000"))
    shard = table.raw(s.shard_key("video-1", counter.shard_for("video-1", "request-0000")))
    assert marker is not None and shard is not None
    per_call = capacity.transaction([capacity.put(MODEL, marker), capacity.update(MODEL, shard, shard)])
    assert per_call == Capacity("write", 4.0)
    # AND DynamoDB Local reports 2 for each, 400 in all (it counts equal figures once: ADR 0051)
    assert sum(reported(c.response).table for c in calls) == 400  # type: ignore[union-attr]
    # WHEN a key is sent again THEN the transaction is cancelled and Local reports no capacity
    assert counter.increment("video-1", idempotency_key="request-0007").duplicate
    (cancelled,) = recorder.take()
    assert cancelled.error == "TransactionCanceledException" and reported(cancelled.response) is None
    # WHEN the counter is recomputed THEN every shard is read strongly consistently (1 unit each
    # found) and the total written, as predicted
    before = table.raw(s.total_key("video-1"))
    counter.recompute("video-1")
    *reads, write = recorder.take()
    aws = 0.0
    for call in reads:
        keys = [_aws.deserialize(k) for k in call.params["RequestItems"][table.name]["Keys"]]
        items = [table.raw(k) for k in keys]
        found = [item for item in items if item is not None]
        assert_priced("BatchGetItem shards", capacity.batch_get(MODEL, found, consistent=True), call)
        aws += capacity.batch_get(MODEL, items, consistent=True).table
    written = len({counter.shard_for("video-1", f"request-{n:04d}") for n in range(200)})
    assert sum(reported(c.response).table for c in reads) == written  # type: ignore[union-attr]
    # AND Local charges a shard never written nothing, where AWS charges it the minimum read
    assert aws == 120 and written < 120
    assert_priced("UpdateItem recomputed total", capacity.update(MODEL, before, table.raw(s.total_key("video-1"))),
                  write)


# Aggregation -----------------------------------------------------------------------------------------
def test_aggregation_writes_are_priced_by_the_total_across_the_1_kb_boundary(table: Table) -> None:
    # GIVEN a stream-layout family of 60 shards and a counter id that makes its total 760 bytes
    # before any watermark: each shard's watermark adds 5 or 6 bytes (the 1 KB line is crossed
    # once about 45 shards have one)
    s = spec("agg_sizes", 60)
    counter_id = "x" * padded(lambda n: total_item(s, "x" * n, count=1, applied_events=1), 760)
    counter, recorder = table.counter(s)
    runner = table.aggregator(counter, batch_size=40)
    seen: set[float] = set()
    invalid = 0
    for round_ in range(6):
        # WHEN increments (idempotent and not) reach the aggregator in batches of 40
        for n in range(40):
            if n % 2:
                counter.increment(counter_id, idempotency_key=f"r{round_}-{n}")
            else:
                counter.increment(counter_id)
        recorder.take()
        report = runner.run()
        assert report.errors == [] and runner.dead_letters == []
        calls = recorder.take()
        # THEN the aggregator reads nothing: only UpdateItem calls of the total
        assert {c.operation for c in calls} == {"update_item"}, [c.operation for c in calls]
        writes = [c for c in calls if c.error is None]
        invalid += sum(c.error == "ValidationException" for c in calls)
        assert all(c.error in (None, "ValidationException") for c in calls), [c.error for c in calls]
        # AND each write costs the larger of the total before it (its ALL_OLD) and after it (the
        # next write's before, or the stored total), as DynamoDB Local reports
        befores = [_aws.deserialize(c.response.get("Attributes") or {}) or None for c in writes]  # type: ignore[union-attr]
        afters = [*befores[1:], table.raw(s.total_key(counter_id))]
        for call, before, after in zip(writes, befores, afters, strict=True):
            assert after is not None
            assert_priced("UpdateItem total", capacity.update(MODEL, before, after), call)
            seen.add(reported(call.response).table)  # type: ignore[union-attr]
    # THEN the totals crossed 1 KB on the way: writes of 1 and of 2 units were both priced
    assert {1.0, 2.0} <= seen, seen
    # AND a write DynamoDB refused as invalid (the generation's first watermark map) reported nothing
    assert invalid >= 1
    # AND the capacity package's total of the same values is the stored total's size
    stored = table.raw(s.total_key(counter_id))
    assert stored is not None and counter.get(counter_id, exact=True).total == stored["count"] == 240
    gen = generation(datetime.now(UTC).timestamp(), s.guard_seconds)
    maps = [{int(k): decode_seq(v) for k, v in (stored.get(name) or {}).items()} for name in generation_maps(gen)[:2]]
    built = total_item(s, counter_id, watermarks=maps, count=240, applied_events=120, generation=gen)  # type: ignore[arg-type]
    assert item_size(built) == item_size(stored)


# Reads ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size, eventual, strong", [(4096, 0.5, 1.0), (4097, 1.0, 2.0)])
def test_a_read_of_the_total_at_the_4_kb_boundary(table: Table, size: int, eventual: float, strong: float) -> None:
    # GIVEN a stream-layout total of exactly `size` bytes (its 200 shards' watermarks and its id)
    s = spec(f"read_{size}", 200)
    marks = [{n: 10**29 + n for n in range(100)}, {n: 10**29 + n for n in range(100, 200)}]
    counter_id = "x" * padded(lambda n: total_item(s, "x" * n, watermarks=marks), size)
    total = total_item(s, counter_id, watermarks=marks)
    table.client.put_item(TableName=table.name, Item=_aws.serialize(total))
    counter, recorder = table.counter(s)
    # WHEN it is read eventually and strongly consistently
    counter.get(counter_id)
    counter.get(counter_id, consistent=True)
    loose, tight = recorder.take()
    # THEN each GetItem costs what the capacity package predicts for the stored total
    assert_priced("GetItem total", capacity.get(MODEL, total, consistent=False), loose)
    assert_priced("GetItem total consistent", capacity.get(MODEL, total, consistent=True), tight)
    assert (reported(loose.response).table, reported(tight.response).table) == (eventual, strong)  # type: ignore[union-attr]


def test_a_replicated_family_reads_one_total_per_region(table: Table) -> None:
    # GIVEN a stream-layout family replicated to two regions, each region's total stored
    s = spec("read_regions", 10, regions=("us-east-1", "eu-west-1"))
    marks = [{n: 10**30 + n for n in range(10)}]
    totals = [total_item(s, "video-1", region=r, watermarks=marks) for r in s.regions]
    for item in totals:
        table.client.put_item(TableName=table.name, Item=_aws.serialize(item))
    counter, recorder = table.counter(s, region="us-east-1")
    # WHEN it is read THEN one BatchGetItem reads both totals, priced item by item
    assert counter.get("video-1").total == 2 * totals[0]["count"]
    (call,) = recorder.take()
    assert call.operation == "batch_get_item"
    assert_priced("BatchGetItem totals", capacity.batch_get(MODEL, totals), call)


def test_an_exact_read_of_every_shard_and_a_large_total(table: Table) -> None:
    # GIVEN a stream-layout family of 150 shards: a counter with 60 increments on random shards
    # and a 4,097-byte total
    s = spec("exact_read", 150)
    counter, recorder = table.counter(s)
    for _ in range(60):
        counter.increment("video-1")
    marks = [{n: 10**29 + n for n in range(75)}, {n: 10**29 + n for n in range(75, 150)}]
    pad = padded(lambda n: {**total_item(s, "video-1", watermarks=marks), "zz": "p" * n}, 4097)
    total = {**total_item(s, "video-1", watermarks=marks), "zz": "p" * pad}
    table.client.put_item(TableName=table.name, Item=_aws.serialize(total))
    recorder.take()
    # WHEN it is read exactly
    assert counter.get("video-1", exact=True).total == 60 + total["count"] - total["count"]
    calls = recorder.take()
    # THEN two consistent BatchGetItem calls read the 150 shard keys and the total, each found item
    # rounded up to 4 KB on its own (1 unit a shard, 2 for the total), as DynamoDB Local reports
    assert [c.operation for c in calls] == ["batch_get_item", "batch_get_item"]
    aws = 0.0
    for call in calls:
        keys = [_aws.deserialize(k) for k in call.params["RequestItems"][table.name]["Keys"]]
        items = [table.raw(k) for k in keys]
        found = [item for item in items if item is not None]
        assert_priced("BatchGetItem exact", capacity.batch_get(MODEL, found, consistent=True), call)
        aws += capacity.batch_get(MODEL, items, consistent=True).table
    written = len([n for n in range(150) if table.raw(s.shard_key("video-1", n))])
    assert sum(reported(c.response).table for c in calls) == 2 + written  # type: ignore[union-attr]
    # AND AWS charges each shard never written the minimum read too: what CounterCalls prices
    assert aws == 2 + 150 and written < 150
