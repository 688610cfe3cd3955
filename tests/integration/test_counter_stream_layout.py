"""The counter's stream layout, path by path, on a table created from the synthesized template and
its real stream: a batch applied as a prefix (taken back after a failure), records of no effect,
re-drives from the stream, the fold of a table written by the recompute layout, per-region totals
and what each path costs (the model-based test covers their interleavings)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from constructs_lib.runtime import CounterClient
from constructs_lib.runtime.exceptions import DynamoDBError
from constructs_lib.runtime.handlers.counter import aggregate
from constructs_lib.runtime.patterns.counter.aggregation import StreamAggregator
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

VAR = "CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS"


@pytest.fixture
def table(shop_deployment: LocalDeployment) -> dict[str, Any]:
    env = shop_deployment.function_environment("ProductViewsFunction")
    return {"env": env, "name": shop_deployment.table_name("DataTable"), "stream": shop_deployment.stream_arn("DataTable")}


def counter(table: dict[str, Any], client: Any, *, _kw: dict[str, Any] | None = None, **spec_changes: Any) -> CounterClient:
    """The synthesized family's client, its spec changed by ``spec_changes`` (client options in ``_kw``)."""
    env = dict(table["env"])
    if spec_changes:
        env[VAR] = json.dumps({**json.loads(env[VAR]), **spec_changes})
    return CounterClient.from_environment("product_views", environ=env, client=client, **(_kw or {}))


class Stream:
    """The table's stream records read in order, from where the last read stopped."""

    def __init__(self, streams: Any, arn: str) -> None:
        self.streams, self.arn = streams, arn
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][-1]["ShardId"]
        self.shard = shard
        self.iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                                   ShardIteratorType="TRIM_HORIZON")["ShardIterator"]

    def read(self) -> list[dict[str, Any]]:
        return [r for r in self.read_all() if r["dynamodb"]["Keys"]["PK"]["S"].startswith("COUNTER#")]

    def read_all(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while self.iterator:
            page = self.streams.get_records(ShardIterator=self.iterator, Limit=1000)
            self.iterator = page.get("NextShardIterator")
            out += page.get("Records") or []
            if not page.get("Records"):
                break
        return out


def refuse(pk: str) -> Any:
    """A hook at the seam that fails every write of one total (throttled past the client's retries)."""
    def hook(send: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation == "update_item" and params["Key"]["PK"]["S"] == pk:
            raise DynamoDBError("throttled", code="ProvisionedThroughputExceededException", operation=operation)
        return send(**params)
    return hook


def test_a_failed_counter_stops_the_batch_and_what_came_after_it_is_taken_back(
    table: dict[str, Any], dynamodb_client: Any, dynamodb_streams_client: Any,
) -> None:
    views = counter(table, dynamodb_client)
    stream = Stream(dynamodb_streams_client, table["stream"])
    # GIVEN a batch A+1, B+10, A+100 (A's records before and after B's)
    views.increment("A", 1)
    views.increment("B", 10)
    views.increment("A", 100)
    batch = stream.read()
    assert len(batch) == 3
    # WHEN B's total cannot be written
    failing = counter(table, dynamodb_client)
    failing.hooks = (refuse(views.spec.total_key("B")["PK"]),)
    outcome = StreamAggregator(failing).apply(batch)
    # THEN B's first record is reported and only the prefix before it counts: A+1, not A+100
    assert outcome.failures == (batch[1]["dynamodb"]["SequenceNumber"],)
    assert (views.get("A", consistent=True).total, views.get("B", consistent=True).total) == (1, 0)
    # WHEN Lambda retries from the reported record with a healthy table THEN everything counts once
    assert StreamAggregator(views).apply(batch[1:]).failures == ()
    assert StreamAggregator(views).apply(batch).failures == ()  # and a redelivery of all of it changes nothing
    assert (views.get("A", consistent=True).total, views.get("B", consistent=True).total) == (101, 10)


def test_records_with_no_effect_and_of_unknown_shape(
    table: dict[str, Any], dynamodb_client: Any, dynamodb_streams_client: Any,
) -> None:
    views = counter(table, dynamodb_client)
    stream = Stream(dynamodb_streams_client, table["stream"])
    # GIVEN an increment, an increment item deleted when its window ends (DynamoDB's TTL; DynamoDB
    # Local 3.3.1 expires no item missing from one of the table's GSIs, so it is deleted here, the
    # same REMOVE record), a changed increment item, and a foreign item under a shard's partition
    # key (a record of unknown shape)
    views.increment("C", 2, idempotency_key="r1")
    gone = views.increment("C", 3, idempotency_key="old")
    key = {k: {"S": v} for k, v in views.spec.increment_key("C", gone.shard, "old").items()}
    dynamodb_client.update_item(TableName=table["name"], Key=key, UpdateExpression="SET note = :n",
                                ExpressionAttributeValues={":n": {"S": "changed"}})
    dynamodb_client.delete_item(TableName=table["name"], Key=key)
    shard_pk = views.spec.shard_key("C", 0)["PK"]
    dynamodb_client.put_item(TableName=table["name"], Item={"PK": {"S": shard_pk}, "SK": {"S": "NOTE#1"}})
    views.increment("C", 5)
    batch = stream.read()
    assert [r["eventName"] for r in batch] == ["INSERT", "INSERT", "MODIFY", "REMOVE", "INSERT", "INSERT"]
    # WHEN the batch is applied
    outcome = StreamAggregator(views).apply(batch)
    # THEN the foreign record is reported; before it the two increments count once (the change and
    # the deletion of an increment item count nothing)
    foreign = next(r for r in batch if r["dynamodb"]["Keys"]["SK"]["S"] == "NOTE#1")
    assert outcome.failures == (foreign["dynamodb"]["SequenceNumber"],)
    assert [u.sequence_number for u in outcome.unknown] == [foreign["dynamodb"]["SequenceNumber"]]
    assert views.get("C", consistent=True).total == 5


def test_a_failure_queue_range_is_re_driven_from_the_stream_once(
    table: dict[str, Any], dynamodb_client: Any, dynamodb_streams_client: Any,
) -> None:
    views = counter(table, dynamodb_client)
    stream = Stream(dynamodb_streams_client, table["stream"])
    for n in range(1, 6):
        views.increment("D", n, idempotency_key=f"d{n}")
        if n == 3:  # another item of the table changes inside the range (the mapping filtered it out)
            dynamodb_client.put_item(TableName=table["name"], Item={"PK": {"S": "NOTE#1"}, "SK": {"S": "N"}})
    batch = stream.read_all()
    info = {"streamArn": table["stream"], "shardId": stream.shard,
            "startSequenceNumber": batch[0]["dynamodb"]["SequenceNumber"],
            "endSequenceNumber": batch[-1]["dynamodb"]["SequenceNumber"]}
    event = {"source": "constructs_lib.counter.redrive", "ranges": [info]}
    # WHEN the range is re-driven through the aggregator's handler, twice (a message received twice)
    first = aggregate(views, event, streams_client=dynamodb_streams_client)
    second = aggregate(views, event, streams_client=dynamodb_streams_client)
    # THEN it read the range from the stream and applied it once; the other item's change is no
    # record of the family, not one of unknown shape
    assert [(r["applied"], r["counters"], r["unknown"]) for r in first["redriven"]] == [(5, 1, [])]
    assert [(r["applied"], r["counters"]) for r in second["redriven"]] == [(5, 0)]
    assert (views.get("D", consistent=True).total, views.get("D", exact=True).total) == (15, 15)
    # AND a range that names records the stream no longer holds is refused, not half applied
    gone = {**info, "endSequenceNumber": str(int(info["endSequenceNumber"]) + 10**6)}
    with pytest.raises(Exception, match="no longer complete"):
        aggregate(views, {"source": "constructs_lib.counter.redrive", "ranges": [gone]},
                  streams_client=dynamodb_streams_client)


def test_a_table_written_by_the_recompute_layout_keeps_every_total(
    table: dict[str, Any], dynamodb_client: Any, dynamodb_streams_client: Any,
) -> None:
    # GIVEN counters written with the recompute layout: SHARD items, transactional idempotent
    # increments with dedup markers, and a recomputed total
    old = counter(table, dynamodb_client, aggregation="recompute")
    for _ in range(7):
        old.increment("E", 2)
    old.increment("E", 5, idempotency_key="legacy-1")
    old.recompute("E")
    old.increment("E", 1)  # not yet aggregated when the new version deploys
    old.increment("F", 4)  # a counter whose total was never written
    assert (old.get("E").total, old.get("E", exact=True).total) == (19, 20)
    stream = Stream(dynamodb_streams_client, table["stream"])
    stream.read()  # the old records were handled by the old aggregator
    # WHEN the new version reads exactly before anything was folded THEN the old shards count
    new = counter(table, dynamodb_client)
    assert new.get("E", exact=True).total == 20
    # WHEN the new version increments and aggregates (an old writer still runs during the deploy)
    new.increment("E", 10)
    new.increment("E", 3, idempotency_key="new-1")
    old.increment("F", 6)
    new.increment("F", 1)
    outcome = StreamAggregator(new).apply(stream.read())
    # THEN every total holds the old shards, folded in once, and the new increments
    assert outcome.failures == ()
    assert (new.get("E", consistent=True).total, new.get("E", exact=True).total) == (33, 33)
    assert (new.get("F", consistent=True).total, new.get("F", exact=True).total) == (11, 11)
    # AND a redelivery folds nothing twice
    StreamAggregator(new).apply(stream.read())
    assert new.get("E", consistent=True).total == 33


def test_each_region_keeps_its_own_writes_and_a_read_sums_the_regions(
    table: dict[str, Any], dynamodb_client: Any, dynamodb_streams_client: Any,
) -> None:
    regions = ("us-east-1", "eu-west-1")
    east = counter(table, dynamodb_client, regions=list(regions), _kw={"region": "us-east-1"})
    west = counter(table, dynamodb_client, regions=list(regions), _kw={"region": "eu-west-1"})
    stream = Stream(dynamodb_streams_client, table["stream"])
    # GIVEN increments written in each region (one table stands for the converged replicas)
    east.increment("G", 2)
    west.increment("G", 30)
    east.increment("G", 1, idempotency_key="g1")
    west.increment("G", 1, idempotency_key="g1")  # the same key before replication: counted per region
    batch = stream.read()
    # WHEN each region's aggregator sees the whole stream
    assert StreamAggregator(east).apply(batch).failures == ()
    assert StreamAggregator(west).apply(batch).failures == ()
    # THEN each total holds its own region's writes, and a read sums them
    east_total = dynamodb_client.get_item(TableName=table["name"], Key={
        k: {"S": v} for k, v in east.spec.total_key("G", "us-east-1").items()})["Item"]
    assert east_total["count"] == {"N": "3"}
    assert (east.get("G").total, west.get("G").total, east.get("G", exact=True).total) == (33, 33, 33)


def test_what_the_aggregator_reads_and_writes_per_batch(
    table: dict[str, Any], dynamodb_client: Any, dynamodb_streams_client: Any,
) -> None:
    views = counter(table, dynamodb_client)
    stream = Stream(dynamodb_streams_client, table["stream"])
    for n in range(40):
        views.increment("H", 1, idempotency_key=f"h{n}")
        views.increment(f"spread-{n}", 1)
    batch = stream.read()
    seen: list[str] = []

    def count(send: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        seen.append(operation)
        return send(**params)
    aggregator_counter = counter(table, dynamodb_client)
    aggregator_counter.hooks = (count,)
    aggregator = StreamAggregator(aggregator_counter)
    # WHEN a batch of 40 increments of a hot counter and 40 spread counters is applied
    assert aggregator.apply(batch).failures == ()
    # THEN no read at all, and per counter one write per 25 shards (+ the first write of a total
    # creating its watermark map: refused as invalid, uncharged)
    assert "get_item" not in seen and "batch_get_item" not in seen and "query" not in seen
    hot_writes = -(-len({views.shard_for("H", f"h{n}") for n in range(40)}) // 25)
    assert seen.count("update_item") <= 2 * (40 + hot_writes)
    assert views.get("H", exact=True).total == 40
