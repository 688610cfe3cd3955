"""Model-based test of the sharded counter's stream layout on DynamoDB Local's real stream.

A hypothesis ``RuleBasedStateMachine`` runs random programs against the showcase's
``product_views`` family on a table created from the synthesized template:

- increments, plain and with idempotency keys (retried, duplicated, reused for another
  amount), some crashing after their write and then retried, and records of unknown shape;
- an event source mapping modelled step by step on the stream's real records: lanes by
  partition key (ParallelizationFactor 1 to 3), batches of random size from a lane's
  checkpoint, a reported failure retried from its record, batches that exhausted their retries
  sent to a failure queue, batches delivered again after they were checkpointed, and two
  aggregators sharing the work;
- faults injected at the aggregator's AWS-call seam: a crash after its n-th call (the whole
  batch is retried) and a counter whose total cannot be written (the batch stops there);
- the failure queue re-driven.

The reference (``counter_reference.py``) is written without the runtime. Whenever the lanes are
drained and the failure queue re-driven, every counter's aggregated total and its exact read
equal the reference. ``make test``: 30 programs of 25 steps, derandomized; ``make soak``
(``CONSTRUCTS_LIB_SOAK=1``): 300 of 40 from a random seed. Deliberately broken aggregators it
catches are listed in docs/testing.md ("The counter's model-based test").
"""

from __future__ import annotations

import os
import time
import uuid
import zlib
from collections.abc import Callable
from typing import Any

import pytest
import run_summary
from counter_reference import CounterReference
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from constructs_lib.runtime import CounterClient, IdempotencyKeyReusedError
from constructs_lib.runtime.exceptions import DynamoDBError
from constructs_lib.runtime.patterns.counter.aggregation import StreamAggregator
from constructs_lib.runtime.patterns.counter.redrive import redrive_range
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = int(os.environ.get("CONSTRUCTS_LIB_COUNTER_MBT_EXAMPLES") or (300 if SOAK else 30))
STEPS = int(os.environ.get("CONSTRUCTS_LIB_COUNTER_MBT_STEPS") or (40 if SOAK else 25))
#: Times a batch is retried after a reported failure before it goes to the failure queue.
RETRIES = 2
STATS: dict[str, int] = {}


class _Crash(Exception):
    """The aggregator's process dies after a call: Lambda retries the whole batch."""


class _Faults:
    """A hook at the AWS-call seam: crash after the n-th call, or refuse one counter's total."""

    def __init__(self) -> None:
        self.crash_after: int | None = None
        self.refuse_pk: str | None = None
        self.calls = 0

    def __call__(self, send: Callable[..., dict[str, Any]], operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.refuse_pk is not None and operation == "update_item" and params["Key"]["PK"]["S"] == self.refuse_pk:
            raise DynamoDBError("refused by the test", code="ProvisionedThroughputExceededException", operation=operation)
        result = send(**params)
        self.calls += 1
        if self.crash_after is not None and self.calls >= self.crash_after:
            self.crash_after = None
            raise _Crash(f"crash after call {self.calls} ({operation})")
        return result


class _Lane:
    """One ordered lane of the mapping: records in stream order from its checkpoint."""

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []
        self.done: list[list[dict[str, Any]]] = []  # checkpointed batches, for redelivery
        self.retry: list[dict[str, Any]] | None = None  # the batch Lambda retries next
        self.failures = 0
        self.refuse: int | None = None  # a counter whose total cannot be written while the batch is retried


class CounterMachine(RuleBasedStateMachine):
    env: dict[str, str]
    client: Any
    streams: Any
    stream_arn: str

    @initialize(lanes=st.integers(1, 3))
    def setup(self, lanes: int) -> None:
        STATS["examples"] = STATS.get("examples", 0) + 1
        run = uuid.uuid4().hex[:8]
        self.counters = [f"{run}-c{i}" for i in range(3)]
        self.reference = CounterReference()
        self.faults = [_Faults(), _Faults()]
        self.writer_fault = _Faults()
        self.writer = CounterClient.from_environment("product_views", environ=self.env, client=self.client)
        self.writer.hooks = (self.writer_fault,)
        self.aggregators = []
        for fault in self.faults:
            counter = CounterClient.from_environment("product_views", environ=self.env, client=self.client)
            counter.hooks = (fault,)
            self.aggregators.append(StreamAggregator(counter))
        self.lanes = [_Lane() for _ in range(lanes)]
        self.failed: list[list[dict[str, Any]]] = []  # the failure queue
        self.prefixes = tuple(f"{self.writer.spec.key_prefix}{c}#" for c in self.counters)
        self.iterators = self._iterators_at_end()

    # The stream, read as Lambda would -----------------------------------------------------------------------
    def _iterators_at_end(self) -> dict[str, str]:
        shards = self.streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        return {s["ShardId"]: self.streams.get_shard_iterator(
            StreamArn=self.stream_arn, ShardId=s["ShardId"], ShardIteratorType="LATEST")["ShardIterator"]
            for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]}

    def _fetch(self) -> None:
        for shard, iterator in list(self.iterators.items()):
            while iterator:
                page = self.streams.get_records(ShardIterator=iterator, Limit=1000)
                iterator = page.get("NextShardIterator")
                for rec in page.get("Records") or []:
                    pk = rec["dynamodb"]["Keys"]["PK"]["S"]
                    if pk.startswith(self.prefixes):
                        STATS["records"] = STATS.get("records", 0) + 1
                        self.lanes[zlib.crc32(pk.encode()) % len(self.lanes)].pending.append(rec)
                if not page.get("Records"):
                    break
            self.iterators[shard] = iterator

    # Increments --------------------------------------------------------------------------------------------------
    # One rule for the application's writes and one for the mapping, each choosing among its
    # actions with fixed weights (so no action is ever left out of a program).
    @rule(action=st.one_of(
        st.tuples(st.just("increment"), st.lists(st.tuples(st.integers(0, 2), st.integers(-3, 5)), min_size=1,
                                                 max_size=6)),
        st.tuples(st.just("keyed"), st.integers(0, 2), st.integers(0, 4), st.sampled_from([1, 1, 2]), st.booleans()),
        st.tuples(st.just("keyed"), st.integers(0, 2), st.integers(0, 4), st.sampled_from([1, 1, 2]), st.booleans()),
        st.tuples(st.just("touch"), st.integers(0, 2), st.integers(0, 4)),
        st.tuples(st.just("foreign"), st.integers(0, 2), st.integers(0, 3)),
    ))
    def write(self, action: tuple[Any, ...]) -> None:
        STATS["steps"] = STATS.get("steps", 0) + 1
        kind, *args = action
        {"increment": self.increment, "keyed": self.keyed_increment, "touch": self.touch_increment_item,
         "foreign": self.foreign_item}[kind](*args)

    @rule(action=st.one_of(
        st.tuples(st.just("deliver"), st.integers(0, 2), st.integers(1, 12), st.integers(0, 1), st.none(), st.none()),
        st.tuples(st.just("deliver"), st.integers(0, 2), st.integers(1, 12), st.integers(0, 1),
                  st.one_of(st.none(), st.integers(1, 3)), st.one_of(st.none(), st.integers(0, 2))),
        st.tuples(st.just("redeliver"), st.integers(0, 2), st.integers(0, 1), st.integers(1, 3)),
        st.tuples(st.just("redrive"), st.integers(0, 1)),
    ))
    def map_stream(self, action: tuple[Any, ...]) -> None:
        STATS["steps"] = STATS.get("steps", 0) + 1
        STATS["map " + action[0]] = STATS.get("map " + action[0], 0) + 1
        kind, *args = action
        {"deliver": self.deliver_with_faults, "redeliver": self.redeliver, "redrive": self.redrive}[kind](*args)

    def increment(self, counters: list[tuple[int, int]]) -> None:
        for counter, by in counters:
            self.writer.increment(self.counters[counter], by)
            self.reference.add(self.counters[counter], by)

    def keyed_increment(self, counter: int, key: int, by: int, crash: bool) -> None:
        name, idem = self.counters[counter], f"k{key}"
        expected = self.reference.add_keyed(name, idem, by)
        if crash:  # the write lands, the caller sees an error and retries the same call
            self.writer_fault.crash_after, self.writer_fault.calls = 1, 0
            try:
                self.writer.increment(name, by, idempotency_key=idem)
            except _Crash:
                STATS["writer crashes"] = STATS.get("writer crashes", 0) + 1
            except IdempotencyKeyReusedError:
                assert expected == "reused"
                return
            finally:
                self.writer_fault.crash_after = None
        if expected == "reused":
            with pytest.raises(IdempotencyKeyReusedError):
                self.writer.increment(name, by, idempotency_key=idem)
            return
        result = self.writer.increment(name, by, idempotency_key=idem)
        assert result.duplicate == (expected == "duplicate" or crash), (expected, result)

    def foreign_item(self, counter: int, shard: int) -> None:
        # An item under a shard's partition key that is no counter item: a record of unknown shape
        key = self.writer.spec.shard_key(self.counters[counter], shard)
        self.client.put_item(TableName=self.writer.table_name,
                             Item={"PK": {"S": key["PK"]}, "SK": {"S": "NOTE#" + uuid.uuid4().hex[:6]}})
        STATS["unknown records"] = STATS.get("unknown records", 0) + 1

    # The event source mapping ------------------------------------------------------------------------------------
    def deliver_with_faults(self, lane: int, size: int, which: int, crash_after: int | None, refuse: int | None) -> None:
        self._fetch()
        queue = self.lanes[lane % len(self.lanes)]
        if refuse is not None and queue.retry is None:
            queue.refuse = refuse  # until this batch succeeds or goes to the failure queue
        self._deliver(queue, which, size, crash_after)

    def _deliver(self, queue: _Lane, which: int, size: int, crash_after: int | None = None) -> None:
        batch = queue.retry if queue.retry is not None else queue.pending[:size]
        if not batch:
            return
        fault = self.faults[which]
        fault.calls, fault.crash_after = 0, crash_after
        fault.refuse_pk = None if queue.refuse is None else self.writer.spec.total_key(self.counters[queue.refuse])["PK"]
        STATS["deliveries"] = STATS.get("deliveries", 0) + 1
        try:
            outcome = self.aggregators[which].apply(batch)
        except _Crash:  # a function error: Lambda bisects the batch and retries its first half
            STATS["aggregator crashes"] = STATS.get("aggregator crashes", 0) + 1
            queue.retry = batch[:max(1, len(batch) // 2)]
            return
        finally:
            fault.crash_after, fault.refuse_pk = None, None
        handled = len(batch) if not outcome.failures else next(
            i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] == outcome.failures[0])
        if handled:
            queue.done.append(batch[:handled])
            del queue.pending[:handled]
        if not outcome.failures:
            queue.retry, queue.failures, queue.refuse = None, 0, None
            return
        STATS["stopped batches"] = STATS.get("stopped batches", 0) + 1
        queue.retry, queue.failures = batch[handled:], queue.failures + 1
        if queue.failures > RETRIES:  # retries exhausted: the retried records go to the failure queue
            self.failed.append(queue.retry)
            del queue.pending[:len(queue.retry)]
            queue.retry, queue.failures, queue.refuse = None, 0, None
            STATS["ranges to the failure queue"] = STATS.get("ranges to the failure queue", 0) + 1

    def touch_increment_item(self, counter: int, key: int) -> None:
        # An increment item changed after it was counted (e.g. a replica's overwrite): no new count
        if (self.counters[counter], f"k{key}") not in self.reference.keys:
            return
        by = self.reference.keys[(self.counters[counter], f"k{key}")]
        shard = self.writer.shard_for(self.counters[counter], f"k{key}")
        item_key = self.writer.spec.increment_key(self.counters[counter], shard, f"k{key}")
        self.client.update_item(TableName=self.writer.table_name, Key={k: {"S": v} for k, v in item_key.items()},
                                UpdateExpression="SET note = :n, #by = :by", ExpressionAttributeNames={"#by": "by"},
                                ExpressionAttributeValues={":n": {"S": uuid.uuid4().hex[:6]}, ":by": {"N": str(by)}})
        STATS["increment items changed"] = STATS.get("increment items changed", 0) + 1

    def redeliver(self, lane: int, which: int, back: int) -> None:
        # A batch delivered again after it was checkpointed (Lambda may deliver a record twice)
        queue = self.lanes[lane % len(self.lanes)]
        if len(queue.done) >= back:
            STATS["redeliveries"] = STATS.get("redeliveries", 0) + 1
            outcome = self.aggregators[which].apply(queue.done[-back])
            assert outcome.failures == () or outcome.unknown, outcome

    def redrive(self, which: int) -> None:
        if self.failed:
            self._redrive(self.failed.pop(0), which)

    def _redrive(self, records: list[dict[str, Any]], which: int) -> None:
        seqs = [r["dynamodb"]["SequenceNumber"] for r in records]
        info = {"shardId": "lane", "startSequenceNumber": seqs[0], "endSequenceNumber": seqs[-1],
                "streamArn": self.stream_arn}
        result = redrive_range(self.aggregators[which], records, info)
        again = redrive_range(self.aggregators[1 - which], records, info)  # the same message twice
        assert again.counters == 0, again
        STATS["re-drives"] = STATS.get("re-drives", 0) + 1
        del result

    # The check -------------------------------------------------------------------------------------------------
    def drain_and_check(self) -> None:
        for _ in range(200):
            self._fetch()
            busy = [q for q in self.lanes if q.pending]
            if not busy:
                break
            for queue in busy:
                self._deliver(queue, 0, 50)
        while self.failed:
            self._redrive(self.failed.pop(0), 0)
        reader = self.aggregators[0].counter
        for name in self.counters:
            expected = self.reference.total(name)
            assert reader.get(name, consistent=True).total == expected, name
            assert reader.get(name, exact=True).total == expected, name
        STATS["checks"] = STATS.get("checks", 0) + 1

    def teardown(self) -> None:
        if hasattr(self, "lanes"):
            self.drain_and_check()


def test_counter_totals_match_the_reference_under_redelivery_faults_and_lanes(
    shop_deployment: LocalDeployment, dynamodb_client: Any, dynamodb_streams_client: Any,
    record_property: Callable[[str, object], None], request: pytest.FixtureRequest,
) -> None:
    # GIVEN the showcase's product_views family on a table created from the synthesized template
    CounterMachine.env = shop_deployment.function_environment("ProductViewsFunction")
    CounterMachine.client = dynamodb_client
    CounterMachine.streams = dynamodb_streams_client
    CounterMachine.stream_arn = shop_deployment.stream_arn("DataTable")
    STATS.clear()
    started = time.monotonic()
    # WHEN hypothesis runs random programs of increments, deliveries, faults and re-drives
    # THEN every drained counter's total and exact read equal the reference
    run_state_machine_as_test(CounterMachine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None, derandomize=not SOAK,
        print_blob=True, report_multiple_bugs=False,
        phases=[p for p in Phase if p not in (Phase.shrink, Phase.explain)] if not SOAK else list(Phase),
        suppress_health_check=list(HealthCheck),
    ))
    elapsed = round(time.monotonic() - started, 1)
    record_property("counter mbt", {**STATS, "seconds": elapsed})
    counts = ", ".join(f"{name} {count}" for name, count in sorted(STATS.items()))
    run_summary.report(request.config, (
        f"counter model-based test: settings {EXAMPLES} x {STEPS}{', soak' if SOAK else ''}, "
        f"{elapsed} s; {counts}"))
    assert STATS.get("checks", 0) >= EXAMPLES
