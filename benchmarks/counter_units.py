"""Capacity units of the sharded counter, measured: WCU and RCU per 1,000 increments with their
aggregation included, before (the recompute layout) and after (the stream layout).

Each scenario — plain or idempotent increments, one hot counter or spread over many — writes its
increments through ``CounterClient`` into the table of ``app.py`` (created in DynamoDB Local from
the synthesized template), then runs the aggregator handler
(``constructs_lib.runtime.handlers.counter.aggregate``) over the table's real stream with
``StreamRunner`` behind the filter each layout's mapping uses. A hook at the runtime's AWS-call
seam asks every call for ``ConsumedCapacity``. Where DynamoDB Local departs from AWS's documented
rules a second figure applies the rule to the same calls (``constructs_lib.capacity``): a
transaction of two writes costs 2 units per write (Local counts equal figures once); a BatchGetItem
key not found costs the minimum read (Local: nothing); a watermark holds a sequence number of up
to 40 digits (Local's are small numbers), so each aggregator write is priced again with 40-digit
watermarks. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import random
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchmarks._harness import Row, Table, log
from constructs_lib import capacity
from constructs_lib.capacity.counters import SEQUENCE_DIGITS
from constructs_lib.runtime import _aws
from constructs_lib.runtime.handlers.counter import aggregate
from constructs_lib.runtime.patterns.counter import CounterClient, CounterSpec, derive_shards
from constructs_lib.runtime.patterns.counter.spec import KEY_PREFIX, SHARD_SK, SUM_SK
from constructs_lib.runtime.patterns.counter.watermarks import encode_seq
from constructs_lib.testing.streams import MappingSettings, StreamRunner

if TYPE_CHECKING:
    from constructs_lib.model import Model

#: The seed's hot-counter rate: each layout sizes its shards for it.
SEED_WRITES_PER_SECOND = 50_000
#: Records per batch of the recompute layout's mapping as it was deployed.
BEFORE_BATCH_SIZE = 100
SPREAD_COUNTERS = 1_000
READS = ("get_item", "batch_get_item", "query")
#: Targets: an idempotent increment at most 1.1 WCU; a hot counter's aggregation at most 5 % of
#: its increments; spread counters at most one total write per touched counter and batch, no reads.
IDEMPOTENT_GOAL_WCU, HOT_GOAL = 1.1, 0.05


@dataclass(frozen=True)
class Scenario:
    layout: str  # "recompute" (before) or "deltas" (after)
    idempotent: bool
    counters: int

    @property
    def name(self) -> str:
        kind = "idempotent" if self.idempotent else "plain"
        where = "1 hot counter" if self.counters == 1 else f"{self.counters:,} counters"
        return f"{kind}, {where}"

    @property
    def family(self) -> str:
        return f"units_{self.layout}_{'idem' if self.idempotent else 'plain'}_{self.counters}"


@dataclass
class Measured:
    """One scenario's figures, per the increments it sent (``sent``)."""

    scenario: Scenario
    shards: int
    batch_size: int
    sent: int
    increment_wcu: float = 0.0
    increment_wcu_aws: float = 0.0
    aggregation_wcu: float = 0.0
    aggregation_wcu_aws: float = 0.0
    aggregation_rcu: float = 0.0
    aggregation_rcu_aws: float = 0.0
    invocations: int = 0
    writes: int = 0
    invalid: int = 0
    read_calls: int = 0
    writes_per_counter_batch: Counter[int] = field(default_factory=Counter)
    exact: bool = False

    def per_1000(self, value: float) -> float:
        return value * 1000 / self.sent


class Recorder:
    """A call hook: asks every call for ``ConsumedCapacity``; keeps (operation, params, response
    or None, error code or None, batch number)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any] | None, str | None, int]] = []
        self.batch = -1
        self._lock = threading.Lock()

    def __call__(self, send: Callable[..., dict[str, Any]], operation: str, params: dict[str, Any]) -> dict[str, Any]:
        params = {**params, "ReturnConsumedCapacity": "TOTAL"}
        try:
            response = send(**params)
        except Exception as exc:
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
            with self._lock:
                self.calls.append((operation, params, None, code, self.batch))
            raise
        with self._lock:
            self.calls.append((operation, params, response, None, self.batch))
        return response

    def take(self) -> list[tuple[str, dict[str, Any], dict[str, Any] | None, str | None, int]]:
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


def units(response: Mapping[str, Any] | None) -> float:
    consumed = (response or {}).get("ConsumedCapacity")
    if isinstance(consumed, list):
        return float(sum(c.get("CapacityUnits", 0.0) for c in consumed))
    return float((consumed or {}).get("CapacityUnits", 0.0))


def _aws_watermarks(item: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``item`` with every watermark a 40-digit sequence number (AWS's longest)."""
    if item is None:
        return None
    longest = encode_seq("9" * SEQUENCE_DIGITS)
    return {k: ({s: longest for s in v} if isinstance(v, Mapping) else v) for k, v in item.items()}


class UnitsBench:
    """Runs the scenarios on one deployed table."""

    def __init__(self, client: Any, streams: Any, table: str, stream_arn: str, base: CounterSpec, model: Model,
                 after_batch_size: int, increments: int, seed: int = 7) -> None:
        self.client, self.streams, self.table, self.stream_arn = client, streams, table, stream_arn
        self.base, self.model, self.after_batch_size, self.increments = base, model, after_batch_size, increments
        self.rng = random.Random(seed)

    def spec(self, s: Scenario) -> CounterSpec:
        transactional = s.idempotent and s.layout == "recompute"
        shards = derive_shards(SEED_WRITES_PER_SECOND, transactional=transactional).shards
        return CounterSpec(s.family, shards, self.base.pk_attribute, self.base.sk_attribute, self.base.entity_attribute,
                           self.base.ttl_attribute, 86_400 if s.idempotent else None, aggregation=s.layout)

    def runner(self, counter: CounterClient, recorder: Recorder, batch_size: int) -> StreamRunner:
        """The aggregator on the table's stream, behind the layout's filter, from the stream's end."""
        spec = counter.spec
        sort_keys: list[Any] = [SUM_SK, {"prefix": KEY_PREFIX}] if spec.deltas else [SHARD_SK]
        only = {"dynamodb": {"Keys": {spec.pk_attribute: {"S": [{"prefix": spec.key_prefix}]},
                                      spec.sk_attribute: {"S": sort_keys}}}}
        settings = MappingSettings(batch_size=batch_size, filters=(only,), report_batch_item_failures=True,
                                   starting_position="LATEST")

        def handler(event: dict[str, Any]) -> dict[str, Any]:
            recorder.batch += 1
            return aggregate(counter, event)

        runner = StreamRunner(self.streams, self.stream_arn, handler, settings=settings)
        runner.run()  # LATEST: start after every record already in the stream
        return runner

    def run(self, s: Scenario) -> Measured:
        spec = self.spec(s)
        batch = BEFORE_BATCH_SIZE if s.layout == "recompute" else self.after_batch_size
        recorder = Recorder()
        counter = CounterClient(spec, self.table, client=self.client, rng=random.Random(11))
        counter.hooks = (recorder,)
        runner = self.runner(counter, recorder, batch)
        ids = ["hot"] if s.counters == 1 else [f"c{n:04d}" for n in range(s.counters)]
        order = [ids[n % len(ids)] for n in range(self.increments)]
        self.rng.shuffle(order)
        log(f"counter: units, {s.layout} {s.name}: {self.increments} increments, {spec.shards} shards, batch {batch}")
        for n, counter_id in enumerate(order):
            counter.increment(counter_id, idempotency_key=f"{s.family}-{n}" if s.idempotent else None)
        m = Measured(s, spec.shards, batch, self.increments)
        self._increments(m, spec, recorder.take())
        report = runner.run()
        if report.errors or runner.dead_letters:
            raise RuntimeError(f"aggregator failed in {s.family}: {report.errors[:3]} {runner.dead_letters[:1]}")
        m.invocations = report.invocations
        self._aggregation(m, spec, recorder.take())
        expected = Counter(order)
        totals = counter.get_many(list(expected), consistent=True)
        m.exact = all(totals[i].total == n for i, n in expected.items())
        return m

    def _raw(self, key: Mapping[str, Any]) -> dict[str, Any] | None:
        item = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item")
        return _aws.deserialize(item) if item else None

    def _increments(self, m: Measured, spec: CounterSpec, calls: list[Any]) -> None:
        shards: dict[str, dict[str, Any] | None] = {}
        for operation, params, response, error, _ in calls:
            if error is not None:
                raise RuntimeError(f"increment {operation} failed: {error}")
            m.increment_wcu += units(response)
            if operation != "transact_write_items":
                m.increment_wcu_aws += units(response)
                continue
            put, update = (params["TransactItems"][0]["Put"], params["TransactItems"][1]["Update"])
            key = repr(update["Key"])
            if key not in shards:
                shards[key] = self._raw(update["Key"])
            shard = shards[key] or {}
            m.increment_wcu_aws += capacity.transaction([
                capacity.put(self.model, _aws.deserialize(put["Item"])), capacity.update(self.model, shard, shard),
            ]).table

    def _aggregation(self, m: Measured, spec: CounterSpec, calls: list[Any]) -> None:
        writes = [c for c in calls if c[0] == "update_item" and c[3] is None]
        m.invalid = sum(1 for c in calls if c[3] == "ValidationException")
        m.writes = len(writes)
        per: Counter[tuple[int, str]] = Counter()
        for operation, params, response, error, batch in calls:
            if operation in READS and error is None:
                m.read_calls += 1
                m.aggregation_rcu += units(response)
                found = (response or {}).get("Responses", {}).get(self.table, [])
                keys = params["RequestItems"][self.table]["Keys"] if operation == "batch_get_item" else [params["Key"]]
                items: list[dict[str, Any] | None] = [_aws.deserialize(i) for i in found]
                items += [None] * (len(keys) - len(found))
                consistent = (params["RequestItems"][self.table] if operation == "batch_get_item" else params).get(
                    "ConsistentRead", False)
                m.aggregation_rcu_aws += capacity.batch_get(self.model, items, consistent=bool(consistent)).table
            elif operation == "update_item" and error is None:
                m.aggregation_wcu += units(response)
                per[(batch, params["Key"][spec.pk_attribute]["S"])] += 1
            elif error not in (None, "ValidationException"):  # nothing runs concurrently: nothing is refused
                raise RuntimeError(f"aggregator {operation} failed: {error}")
        m.writes_per_counter_batch = Counter(per.values())
        if spec.deltas:  # each write again, with AWS-length watermarks (the total before: ALL_OLD)
            by_total: dict[str, list[Any]] = defaultdict(list)
            for call in writes:
                by_total[repr(call[1]["Key"])].append(call)
            for group in by_total.values():
                befores = [_aws.deserialize(c[2].get("Attributes") or {}) or None for c in group]
                afters = [*befores[1:], self._raw(group[-1][1]["Key"])]
                for before, after in zip(befores, afters, strict=True):
                    m.aggregation_wcu_aws += capacity.update(self.model, _aws_watermarks(before),
                                                             _aws_watermarks(after) or {}).table
        else:
            m.aggregation_wcu_aws = m.aggregation_wcu


def scenarios() -> list[Scenario]:
    return [Scenario(layout, idempotent, counters) for idempotent in (False, True) for counters in (1, SPREAD_COUNTERS)
            for layout in ("recompute", "deltas")]


def report(results: list[Measured]) -> tuple[list[Row], Table, list[str]]:
    """The rows with goals, the before → after table and its notes."""
    rows: list[Row] = []
    table_rows = []
    for m in results:
        s = m.scenario
        inc, inc_aws = m.per_1000(m.increment_wcu), m.per_1000(m.increment_wcu_aws)
        agg_w, agg_w_aws = m.per_1000(m.aggregation_wcu), m.per_1000(m.aggregation_wcu_aws)
        agg_r, agg_r_aws = m.per_1000(m.aggregation_rcu), m.per_1000(m.aggregation_rcu_aws)
        most = max(m.writes_per_counter_batch) if m.writes_per_counter_batch else 0
        layout = "before (recompute)" if s.layout == "recompute" else "after (stream)"
        table_rows.append([
            s.name, layout, str(m.shards), str(m.batch_size), f"{inc:,.0f} / {inc_aws:,.0f}",
            f"{agg_w:,.0f} / {agg_w_aws:,.0f}", f"{agg_r:,.0f} / {agg_r_aws:,.0f}",
            f"{inc + agg_w + agg_r:,.0f} / {inc_aws + agg_w_aws + agg_r_aws:,.0f}",
            f"{(agg_w_aws + agg_r_aws) / inc_aws:.1%}" if inc_aws else "-", str(m.invocations), f"{m.writes:,}",
            str(most), "yes" if m.exact else "**no**",
        ])
        if s.layout != "deltas":
            continue
        figure = "units per 1,000 increments, stream layout (AWS rule)"
        if s.idempotent:
            rows.append(Row.measured(figure, f"idempotent increment WCU ({s.name})", "WCU per increment",
                                     [inc_aws / 1000], goal=f"≤ {IDEMPOTENT_GOAL_WCU}",
                                     met=inc_aws / 1000 <= IDEMPOTENT_GOAL_WCU))
        if s.counters == 1:
            share = (agg_w_aws + agg_r_aws) / inc_aws
            rows.append(Row.measured(figure, f"hot counter aggregation ÷ increments ({s.name})", "share",
                                     [share], goal=f"≤ {HOT_GOAL:.0%}", met=share <= HOT_GOAL))
        else:
            rows.append(Row.measured(figure, f"total writes per touched counter and batch, max ({s.name})",
                                     "writes", [most], goal="≤ 1", met=most <= 1))
            rows.append(Row.measured(figure, f"aggregator reads ({s.name})", "RCU per 1,000", [agg_r_aws],
                                     goal="0", met=m.read_calls == 0))
    table = Table(
        title="Units per 1,000 increments with their aggregation, measured on DynamoDB Local "
              "(Local / AWS rule where Local departs)",
        headers=["scenario", "layout", "shards", "batch", "increments WCU", "aggregation WCU", "aggregation RCU",
                 "total units", "aggregation ÷ increments (AWS)", "batches", "total writes",
                 "writes per counter and batch, max", "totals exact?"],
        rows=table_rows,
    )
    notes = [
        (f"Units: every call of `CounterClient` and of the aggregator asked for `ConsumedCapacity`; figures are per "
         f"1,000 increments ({results[0].sent:,} sent per scenario), shown as DynamoDB Local's report / AWS's "
         "documented rule applied to the same calls. The two differ where Local departs from AWS: a transaction of two "
         "1-unit writes (the recompute layout's idempotent increment) is reported as 2 units, AWS charges 2 per write "
         "(4); a BatchGetItem key not found (a shard never written) costs Local nothing, AWS the minimum read; a "
         f"watermark holds Local's short sequence numbers, AWS's have up to {SEQUENCE_DIGITS} digits, so each total "
         "write is priced again with 40-digit watermarks. Writes DynamoDB refused as invalid (the first write of a "
         "total's watermark map, before it exists) are not charged by either and are counted apart: "
         + ", ".join(f"{m.scenario.name} {m.invalid}" for m in results if m.scenario.layout == "deltas") + "."),
        (f"Before: the recompute layout as deployed before the stream layout — shards sized for the seed's "
         f"{SEED_WRITES_PER_SECOND:,} writes/s as transactional when idempotent, idempotent increments in a "
         f"transaction with a dedup marker, mapping batches of {BEFORE_BATCH_SIZE}, filter SK = SHARD, the handler's "
         "recompute path (every shard read strongly consistently per counter a batch touched). After: the stream "
         "layout — shards sized without transactions, the synthesized mapping's batch size, filter SK = SUM or "
         "KEY#…, the handler's stream path. DynamoDB Local has one stream shard: every shard of the hot counter is in "
         "every batch (up to ⌈shards/25⌉ writes per batch), where AWS spreads a hot counter's shards over a stream "
         "shard each (one write per batch). Totals start empty: their watermarks are the ones the run sets."),
    ]
    return rows, table, notes
