"""Monthly cost of a table from its model, what is deployed around it and a traffic mix.

Per-call capacity comes from a :class:`PerCall` (by default :class:`EstimatePerCall`, the
``capacity.estimate`` figures: typical item sizes, write and read estimates); this module turns
rates into the steady load each component puts on the table and each index, adds what the
patterns add (a counter's increments and aggregation in its layout, :mod:`.counters` and
:mod:`.counter_cost`; audit writes, Lambda invocations, stream reads), and prices it with
:mod:`.pricing`. docs/adr/0053-monthly-cost.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from ..runtime.limits import PARTITION_RCU, PARTITION_WCU
from ..runtime.patterns.counter.sizing import DEFAULT_HEADROOM, MAX_SHARDS, derive_shards
from ..runtime.patterns.counter.spec import (
    DEDUP_TYPE,
    DEFAULT_GUARD_SECONDS,
    DELTAS,
    INCREMENT_TYPE,
    RECOMPUTE,
    SHARD_TYPE,
    TOTAL_TYPE,
    CounterSpec,
)
from .counter_cost import recompute_aggregation, stream_aggregation
from .counters import CounterCalls
from .pricing import (
    SECONDS_PER_MONTH,
    Charge,
    Line,
    Stored,
    TableCost,
    lambda_monthly,
    price_table,
    stream_invocations,
)
from .rates import WRITE_KINDS, CounterRate, Rates, TableRates
from .units import Capacity, write_units

if TYPE_CHECKING:
    from ..model import Model, ResolvedEntity
    from .price_file import Prices

__all__ = [
    "AUDIT_ITEM_OVERHEAD",
    "POLLS_PER_SECOND",
    "AuditSetup",
    "CounterSetup",
    "PerCall",
    "TableSetup",
    "as_recompute",
    "estimate_table",
]

#: Lambda polls each stream shard for records this often per event source mapping.
POLLS_PER_SECOND = 4
#: Bytes an audit record adds to the changed item's image and changes (keys, day index key,
#: event, actor, time, sequence number, source table), assumed.
AUDIT_ITEM_OVERHEAD = 300
_PARTITION_BYTES = 10 * 1024**3
_DAYS_PER_MONTH = SECONDS_PER_MONTH / 86400


class PerCall(Protocol):
    """Capacity units of one call and typical sizes, for one model (see :class:`EstimatePerCall`)."""

    def item_bytes(self, entity: str) -> int: ...

    def write(self, entity: str, kind: str, item_bytes: int | None) -> Capacity: ...

    def read(self, pattern: str, items: int, item_bytes: int | None, consistent: bool) -> Capacity: ...

    def entry_bytes(self, entity: str, index: str) -> int: ...


@dataclass(frozen=True)
class CounterSetup:
    """A ``ShardedCounter`` on the table, as deployed: its spec's layout, shards, regions and
    idempotency window, and its stream mapping (:meth:`from_spec` reads a synthesized spec)."""

    family: str
    shards: int
    idempotent: bool = False
    batch_size: int = 100
    window_seconds: float = 1.0
    memory_mb: int = 256
    architecture: str = "arm64"
    stream: bool = True
    aggregation: str = DELTAS
    guard_seconds: int = DEFAULT_GUARD_SECONDS
    idempotency_ttl_seconds: int = 86_400
    regions: tuple[str, ...] = ()
    legacy_shards: int | None = None

    @classmethod
    def from_spec(cls, spec: CounterSpec, **deployed: Any) -> CounterSetup:
        """The setup of a synthesized ``spec`` with its mapping's ``deployed`` settings
        (``batch_size``, ``window_seconds``, ``memory_mb``, ``architecture``, ``stream``). A
        family without a stream is priced in the recompute layout, the one its schedule runs."""
        aggregation = spec.aggregation if deployed.get("stream", True) else RECOMPUTE
        return cls(spec.family, spec.shards, spec.idempotent, aggregation=aggregation,
                   guard_seconds=spec.guard_seconds, idempotency_ttl_seconds=spec.idempotency_ttl_seconds or 86_400,
                   regions=spec.regions, legacy_shards=spec.legacy_shards, **deployed)

    def spec(self, model: Model) -> CounterSpec:
        """The family's :class:`CounterSpec` on ``model``'s attribute names."""
        return CounterSpec(self.family, self.shards, model.pk_attribute, model.sk_attribute or "SK",
                           model.entity_attribute, model.ttl_attribute or "expires_at",
                           self.idempotency_ttl_seconds if self.idempotent else None, self.regions,
                           self.aggregation, self.guard_seconds)

    def as_recompute(self) -> CounterSetup:
        """The same family in the recompute layout (its shards as that layout sized them)."""
        if self.aggregation == RECOMPUTE:
            return self
        return replace(self, shards=self.legacy_shards or self.shards, aggregation=RECOMPUTE, legacy_shards=None)


@dataclass(frozen=True)
class AuditSetup:
    """A ``StreamAudit`` of the table, as deployed (its audit table: on-demand, one GSI ``ByDay``
    projecting ALL)."""

    batch_size: int = 100
    window_seconds: float = 1.0
    memory_mb: int = 256
    architecture: str = "arm64"
    retention_days: float | None = None
    include_entities: tuple[str, ...] = ()
    exclude_entities: tuple[str, ...] = ()
    index: str = "ByDay"

    def audits(self, entity: str) -> bool:
        if self.include_entities:
            return entity in self.include_entities
        return entity not in self.exclude_entities


@dataclass(frozen=True)
class TableSetup:
    """One table to price: its title, model and what consumes or adds to it."""

    title: str
    model: Model
    counters: tuple[CounterSetup, ...] = ()
    audit: AuditSetup | None = None
    stream: bool = False
    keys: tuple[str, ...] = field(default=())  # what a rates file may call it (model name, path, id)


def estimate_table(setup: TableSetup, rates: Rates, table: TableRates, prices: Prices,
                   per_call: PerCall) -> list[TableCost]:
    """The monthly cost of ``setup``'s table under ``table``'s rates (and of its audit table, when
    it has a ``StreamAudit``).

    Raises
    ------
    RatesError
        A rate names a pattern, entity, counter family or index the table does not have, or an
        audit the table does not run (names the rates file's line).
    """
    return _Estimate(setup, rates, table, prices, per_call).run()


class _Estimate:
    def __init__(self, setup: TableSetup, rates: Rates, table: TableRates, prices: Prices, per_call: PerCall) -> None:
        self.setup, self.rates, self.table, self.prices, self.per_call = setup, rates, table, prices, per_call
        self.model = setup.model
        self.lines: list[Line] = []
        self.stored: list[Stored] = []
        self.charges: list[Charge] = []
        self.notes: list[str] = []
        self.where = ("tables", table.key)

    # Inputs checked against the model -------------------------------------------------------------
    def check(self) -> None:
        model, t = self.model, self.table
        for r in t.reads:
            if r.pattern not in model.access_patterns:
                raise self.rates.fail_at(r.line, f"table {t.key!r}: unknown access pattern {r.pattern!r}; the model's "
                                                 f"patterns: {sorted(model.access_patterns)}")
        for w in t.writes:
            self.entity(w.entity, w.line)
            if w.kind not in WRITE_KINDS:  # pragma: no cover - the reader refuses them first
                raise self.rates.fail_at(w.line, f"unknown write kind {w.kind!r}")
        families = {c.family: c for c in self.setup.counters}
        for c in t.counters:
            if c.family not in families:
                raise self.rates.fail_at(c.line, f"table {t.key!r}: unknown counter family {c.family!r}; the table's "
                                                 f"ShardedCounter families: {sorted(families)}")
        if t.audit_changes_per_second is not None and self.setup.audit is None:
            raise self.rates.error((*self.where, "audit"), f"table {t.key!r} has no StreamAudit; remove 'audit'")
        for s in t.storage:
            entity = self.entity(s.entity, s.line)
            for index in s.in_index:
                if index not in entity.indexes:
                    raise self.rates.error((*self.where, "storage", s.entity, "in_index", index),
                                           f"entity {s.entity!r} has no key in index {index!r}; its indexes: "
                                           f"{sorted(entity.indexes)}")

    def entity(self, name: str, line: int) -> ResolvedEntity:
        try:
            return self.model.entities[name]
        except KeyError:
            raise self.rates.fail_at(line, f"table {self.table.key!r}: unknown entity {name!r}; the model's "
                                           f"entities: {sorted(self.model.entities)}") from None

    # Loads ----------------------------------------------------------------------------------------
    def add(self, component: str, capacity: Capacity, per_second: float) -> None:
        kind = "wcu" if capacity.kind == "write" else "rcu"
        parts = {"table": capacity.table, **capacity.global_indexes, **capacity.local_indexes}
        for where, units in parts.items():
            if units and per_second:
                self.lines.append(Line(component, where, **{kind: units * per_second}))

    def run(self) -> list[TableCost]:
        self.check()
        settings, t = self.rates.settings, self.table
        for r in t.reads:
            self.add(f"read: {r.pattern}", self.per_call.read(r.pattern, r.items, r.item_bytes, r.consistent),
                     r.per_second)
        for w in t.writes:
            self.add(f"write: {w.entity} {w.kind}", self.per_call.write(w.entity, w.kind, w.item_bytes), w.per_second)
        for s in t.storage:
            self.store(s.entity, s.items, s.in_index)
        stream_shards = self.partitions()
        counter_changes = sum(self.counter(c, stream_shards) for c in self.setup.counters)
        audit = self.audit(stream_shards, counter_changes) if self.setup.audit is not None else []
        consumers = len([c for c in self.setup.counters if c.stream]) + (1 if self.setup.audit is not None else 0)
        if consumers:
            polls = POLLS_PER_SECOND * stream_shards * consumers
            usd = 0.0 if self.prices.lambda_stream_reads_free else \
                polls * SECONDS_PER_MONTH * self.prices.unit("streams_read_request_unit")
            self.charges.append(Charge(
                "stream reads (GetRecords)",
                f"{polls:g}/s: {POLLS_PER_SECOND} polls/s x {stream_shards} stream shard(s) x {consumers} Lambda "
                f"consumer(s){', not billed (Lambda triggers)' if usd == 0 else ''}", usd))
        cost = price_table(
            self.setup.title, self.lines, self.prices, target_utilization=settings.target_utilization,
            stored=self.stored, charges=self.charges, indexes=[i.name for i in self.model.gsis],
            local_indexes=[i.name for i in self.model.lsis], notes=self.notes,
        )
        return [cost, *audit]

    def store(self, entity_name: str, items: float, shares: Mapping[str, float]) -> None:
        entity = self.model.entities[entity_name]
        self.stored.append(Stored(f"{entity_name} items", "table", items, self.per_call.item_bytes(entity_name)))
        for index_name in entity.indexes:
            self.stored.append(Stored(f"{entity_name} entries", index_name, items * shares.get(index_name, 1.0),
                                      self.per_call.entry_bytes(entity_name, index_name)))

    def partitions(self) -> int:
        """Partitions (= stream shards) the table needs: 1,000 WCU/s, 3,000 RCU/s, 10 GB each."""
        wcu = sum(x.wcu for x in self.lines if x.where == "table")
        rcu = sum(x.rcu for x in self.lines if x.where == "table")
        stored = sum(s.bytes for s in self.stored if s.where == "table")
        count = max(1, math.ceil(wcu / PARTITION_WCU), math.ceil(rcu / PARTITION_RCU), math.ceil(stored / _PARTITION_BYTES))
        self.notes.append(f"{count} partition(s) for the table's own load (1,000 WCU/s, 3,000 RCU/s, 10 GB each); "
                          "taken as the stream's shard count")
        return count

    # Counters ---------------------------------------------------------------------------------------
    def counter(self, setup: CounterSetup, stream_shards: int) -> float:
        """Load of one counter family; returns the stream records it adds per second."""
        rate = next((c for c in self.table.counters if c.family == setup.family), None)
        if rate is None:
            return 0.0
        spec = setup.spec(self.model)
        calls = CounterCalls(self.model, spec)
        name = f"counter {setup.family}"
        hottest = rate.hottest_per_second if rate.hottest_per_second is not None else \
            rate.increments_per_second / rate.counters
        if setup.aggregation == RECOMPUTE:
            invocations, changes, lanes = self.recompute(name, setup, calls, rate, stream_shards)
        else:
            invocations, changes, lanes = self.deltas(name, setup, calls, rate, hottest, stream_shards)
        self.add(f"{name}: reads of totals", calls.read(lanes), rate.reads_per_second)
        self.add(f"{name}: exact reads", calls.exact_read(lanes), rate.exact_reads_per_second)
        requests, compute = lambda_monthly(invocations, self.rates.settings.aggregator_ms, setup.memory_mb, self.prices,
                                           architecture=setup.architecture)
        self.charges.append(Charge(f"{name}: aggregator Lambda", f"{_figure(invocations)} invocations/s x "
                                   f"{self.rates.settings.aggregator_ms:g} ms x {setup.memory_mb} MB {setup.architecture}",
                                   requests + compute))
        sizes = calls.sizes(lanes)
        self.stored.append(Stored(f"{name} shard and total items", "table", rate.counters * (setup.shards + 1),
                                  (setup.shards * sizes["shard"] + sizes["total"]) / (setup.shards + 1)))
        if setup.idempotent:  # one increment item (or dedup marker) per increment, kept for the window
            kind = "increment items" if spec.deltas else "dedup markers"
            self.stored.append(Stored(f"{name} {kind}", "table",
                                      rate.increments_per_second * setup.idempotency_ttl_seconds, sizes["marker"]))
        if hottest > 0:
            transactional = setup.idempotent and not spec.deltas
            needed = derive_shards(hottest, headroom=DEFAULT_HEADROOM, transactional=transactional,
                                   item_size_bytes=max(1, sizes["shard"])).shards if hottest * 2 * DEFAULT_HEADROOM \
                / PARTITION_WCU <= MAX_SHARDS else MAX_SHARDS + 1
            verdict = "enough" if needed <= setup.shards else f"TOO FEW: {needed} needed"
            self.notes.append(f"{name}: hottest counter {hottest:g} increments/s needs {needed} shard partition(s) "
                              f"(1,000 WCU each, headroom {DEFAULT_HEADROOM:g}); deployed {setup.shards}: {verdict}")
        return changes

    def recompute(self, name: str, setup: CounterSetup, calls: CounterCalls, rate: CounterRate,
                  stream_shards: int) -> tuple[float, float, float]:
        """The recompute layout: (invocations/s, stream records/s, 0 watermarks)."""
        increment = calls.idempotent_increment() if setup.idempotent else calls.increment()
        self.add(f"{name}: shard increments", increment, rate.increments_per_second)
        # One invocation per stream batch; each recomputes every counter the batch touched (a
        # consistent read of every shard, then one update of the total).
        invocations, recomputes = recompute_aggregation(
            increments=rate.increments_per_second, counters=rate.counters, batch_size=setup.batch_size,
            window_seconds=setup.window_seconds, stream_shards=stream_shards)
        self.add(f"{name}: aggregator reads shards", calls.recompute_reads(), recomputes)
        self.add(f"{name}: aggregator writes totals", calls.aggregation_write(0), recomputes)
        changes = rate.increments_per_second + recomputes
        return invocations, changes + (rate.increments_per_second if setup.idempotent else 0.0), 0.0

    def deltas(self, name: str, setup: CounterSetup, calls: CounterCalls, rate: CounterRate, hottest: float,
               stream_shards: int) -> tuple[float, float, float]:
        """The stream layout: (invocations/s, stream records/s, watermarks of a typical total)."""
        increment = calls.idempotent_increment() if setup.idempotent else calls.increment()
        self.add(f"{name}: increments", increment, rate.increments_per_second)
        load = stream_aggregation(
            increments=rate.increments_per_second, hottest=hottest, counters=rate.counters, shards=setup.shards,
            batch_size=setup.batch_size, window_seconds=setup.window_seconds, stream_shards=stream_shards,
            guard_seconds=setup.guard_seconds, expiries=setup.idempotent, wcu_per_increment=increment.table)
        hot, cold = calls.aggregation_write(load.hot_lanes), calls.aggregation_write(load.cold_lanes)
        self.add(f"{name}: aggregator writes totals", hot.times(load.hot_writes) + cold.times(load.cold_writes), 1.0)
        self.notes.append(
            f"{name}: stream layout, no reads when aggregating; its records arrive on {load.stream_shards} stream "
            f"shard(s), the hottest counter's on {load.hot_stream_shards} (a partition holds 1,000 WCU/s of its "
            f"shards); batches of {_figure(load.records_per_batch)} records ({setup.batch_size} at most, "
            f"{setup.window_seconds:g} s window{', expiries of increment items included' if setup.idempotent else ''})"
            f", {_figure(load.hot_per_batch)} of the hottest counter's increments in one; totals written "
            f"{_figure(load.hot_writes)}/s for the hottest counter ({load.hot_lanes:.0f} watermarks, {hot.table:g} WCU "
            f"each) and {_figure(load.cold_writes)}/s for the others ({load.cold_lanes:.0f} watermarks, "
            f"{cold.table:g} WCU each)")
        expiries = rate.increments_per_second if setup.idempotent else 0.0
        writes = load.hot_writes + load.cold_writes
        lanes = load.hot_lanes if rate.counters <= 1 else load.cold_lanes
        return load.invocations, rate.increments_per_second + writes + expiries, lanes

    # The audit trail --------------------------------------------------------------------------------
    def audit(self, stream_shards: int, counter_changes: float) -> list[TableCost]:
        audit = self.setup.audit
        assert audit is not None
        settings = self.rates.settings
        audited = [w for w in self.table.writes if audit.audits(w.entity)]
        sizes = [(w.per_second, self.per_call.item_bytes(w.entity) if w.item_bytes is None else w.item_bytes)
                 for w in audited]
        counters_audited = not any(t in audit.exclude_entities
                                   for t in (SHARD_TYPE, TOTAL_TYPE, DEDUP_TYPE, INCREMENT_TYPE)) and \
            (not audit.include_entities)
        if counters_audited and counter_changes:
            sizes.append((counter_changes, 100))
        derived = sum(rate for rate, _ in sizes)
        changes = self.table.audit_changes_per_second if self.table.audit_changes_per_second is not None else derived
        mean = sum(rate * size for rate, size in sizes) / derived if derived else 500.0
        entry = int(2 * mean + AUDIT_ITEM_OVERHEAD)
        how = "given" if self.table.audit_changes_per_second is not None else "every audited write above"
        invocations = stream_invocations(changes, batch_size=audit.batch_size, window_seconds=audit.window_seconds,
                                         stream_shards=stream_shards)
        requests, compute = lambda_monthly(invocations, settings.audit_ms, audit.memory_mb, self.prices,
                                           architecture=audit.architecture)
        self.charges.append(Charge("audit writer Lambda", f"{_figure(invocations)} invocations/s x {settings.audit_ms:g} ms x "
                                   f"{audit.memory_mb} MB {audit.architecture}", requests + compute))
        units = write_units(entry)
        lines = [Line("audit records", "table", wcu=changes * units), Line("audit records", audit.index, wcu=changes * units)]
        days = audit.retention_days if audit.retention_days is not None else settings.audit_months * _DAYS_PER_MONTH
        kept = changes * days * 86400
        stored = [Stored("audit records", "table", kept, entry), Stored("audit records", audit.index, kept, entry)]
        kept_how = (f"{audit.retention_days:g} days' retention" if audit.retention_days is not None
                    else f"{settings.audit_months:g} months of a trail kept forever")
        notes = [f"{changes:g} changes/s ({how}); an audit record ≈ 2 x the item ({mean:.0f} B) + {AUDIT_ITEM_OVERHEAD} B "
                 f"= {entry} B, {units} WCU to the table and to {audit.index} (ALL)", f"storage: {kept_how}",
                 "the audit table is on-demand as deployed; its provisioned column is what it would cost provisioned"]
        return [price_table(f"audit of {self.setup.title}", lines, self.prices,
                            target_utilization=settings.target_utilization, stored=stored, indexes=[audit.index],
                            notes=notes)]


def _figure(value: float) -> str:
    """Three significant digits, thousands separated (1,000 rather than 1e+03)."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def as_recompute(setup: TableSetup) -> TableSetup:
    """``setup`` with every counter family in the recompute layout: what the table costs without
    the stream layout (``cost --counter-layout recompute``)."""
    return replace(setup, counters=tuple(c.as_recompute() for c in setup.counters))


def table_keys(setup: TableSetup) -> Sequence[str]:
    """What a rates file may call ``setup``'s table."""
    return setup.keys or (setup.title, setup.model.name)
