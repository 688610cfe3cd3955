"""Monthly cost of a table from its model, what is deployed around it and a traffic mix.

Per-call capacity comes from a :class:`PerCall` (by default :class:`EstimatePerCall`, the
``capacity.estimate`` figures: typical item sizes, write and read estimates); this module turns
rates into the steady load each component puts on the table and each index, adds what the
patterns add (counter shard writes, aggregator reads and recomputes, audit writes, Lambda
invocations, stream reads), and prices it with :mod:`.pricing`. docs/adr/0053-monthly-cost.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..runtime.limits import PARTITION_RCU, PARTITION_WCU
from ..runtime.patterns.counter.sizing import DEFAULT_HEADROOM, MAX_SHARDS, derive_shards
from ..runtime.patterns.counter.spec import DEDUP_TYPE, SHARD_TYPE, TOTAL_TYPE, CounterSpec
from .entries import item_bytes
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
from .rates import WRITE_KINDS, Rates, TableRates
from .units import Capacity, read_units, write_units

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
    """A ``ShardedCounter`` on the table, as deployed."""

    family: str
    shards: int
    idempotent: bool = False
    batch_size: int = 100
    window_seconds: float = 1.0
    memory_mb: int = 256
    architecture: str = "arm64"
    stream: bool = True


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
        m = self.model
        spec = CounterSpec(setup.family, setup.shards, m.pk_attribute, m.sk_attribute or "SK", m.entity_attribute)
        shard_key = spec.shard_key("counter-id-0001", setup.shards - 1)
        shard = {**shard_key, "count": 123456789, m.entity_attribute: SHARD_TYPE}
        total = {**spec.total_key("counter-id-0001"), "count": 123456789012, "aggregated_at": "2026-01-01T00:00:00.000000Z",
                 m.entity_attribute: TOTAL_TYPE, "counter": setup.family, "counter_id": "counter-id-0001",
                 "shards": setup.shards}
        marker = {**spec.dedup_key("counter-id-0001", "request-id-0123456789abcdef"), m.entity_attribute: DEDUP_TYPE,
                  "counter": setup.family, "counter_id": "counter-id-0001", "idempotency_key": "request-id-0123456789abcdef",
                  "by": 1, "shard": setup.shards - 1, "expires_at": 1_800_000_000}
        name = f"counter {setup.family}"
        per_increment = write_units(item_bytes(shard))
        if setup.idempotent:  # a transaction: the dedup marker's put and the shard's update, each twice
            per_increment = 2 * (per_increment + write_units(item_bytes(marker)))
        self.lines.append(Line(f"{name}: shard increments", "table", wcu=rate.increments_per_second * per_increment))
        # The aggregator: one invocation per stream batch; each recomputes every counter the
        # batch touched (a consistent read of every shard, then one update of the total).
        invocations = stream_invocations(rate.increments_per_second, batch_size=setup.batch_size,
                                         window_seconds=setup.window_seconds, stream_shards=stream_shards)
        per_batch = rate.increments_per_second / invocations if invocations else 0.0
        recomputes = invocations * min(per_batch, rate.counters)
        shard_read = read_units(item_bytes(shard), consistent=True)
        self.lines.append(Line(f"{name}: aggregator reads shards", "table", rcu=recomputes * setup.shards * shard_read))
        self.lines.append(Line(f"{name}: aggregator writes totals", "table", wcu=recomputes * write_units(item_bytes(total))))
        self.lines.append(Line(f"{name}: reads of totals", "table",
                               rcu=rate.reads_per_second * read_units(item_bytes(total), consistent=False)))
        self.lines.append(Line(f"{name}: exact reads", "table",
                               rcu=rate.exact_reads_per_second * setup.shards * shard_read))
        requests, compute = lambda_monthly(invocations, self.rates.settings.aggregator_ms, setup.memory_mb, self.prices,
                                           architecture=setup.architecture)
        self.charges.append(Charge(f"{name}: aggregator Lambda", f"{invocations:.3g} invocations/s x "
                                   f"{self.rates.settings.aggregator_ms:g} ms x {setup.memory_mb} MB {setup.architecture}",
                                   requests + compute))
        self.stored.append(Stored(f"{name} shard and total items", "table", rate.counters * (setup.shards + 1),
                                  (setup.shards * item_bytes(shard) + item_bytes(total)) / (setup.shards + 1)))
        hottest = rate.hottest_per_second if rate.hottest_per_second is not None else \
            rate.increments_per_second / rate.counters
        if hottest > 0:
            needed = derive_shards(hottest, headroom=DEFAULT_HEADROOM, transactional=setup.idempotent,
                                   item_size_bytes=max(1, item_bytes(shard))).shards if hottest * 2 * DEFAULT_HEADROOM \
                / PARTITION_WCU <= MAX_SHARDS else MAX_SHARDS + 1
            verdict = "enough" if needed <= setup.shards else f"TOO FEW: {needed} needed"
            self.notes.append(f"{name}: hottest counter {hottest:g} increments/s needs {needed} shard partition(s) "
                              f"(1,000 WCU each, headroom {DEFAULT_HEADROOM:g}); deployed {setup.shards}: {verdict}")
        changes = rate.increments_per_second + recomputes
        return changes + (rate.increments_per_second if setup.idempotent else 0.0)

    # The audit trail --------------------------------------------------------------------------------
    def audit(self, stream_shards: int, counter_changes: float) -> list[TableCost]:
        audit = self.setup.audit
        assert audit is not None
        settings = self.rates.settings
        audited = [w for w in self.table.writes if audit.audits(w.entity)]
        sizes = [(w.per_second, self.per_call.item_bytes(w.entity) if w.item_bytes is None else w.item_bytes)
                 for w in audited]
        counters_audited = not any(t in audit.exclude_entities for t in (SHARD_TYPE, TOTAL_TYPE, DEDUP_TYPE)) and \
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
        self.charges.append(Charge("audit writer Lambda", f"{invocations:.3g} invocations/s x {settings.audit_ms:g} ms x "
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


def table_keys(setup: TableSetup) -> Sequence[str]:
    """What a rates file may call ``setup``'s table."""
    return setup.keys or (setup.title, setup.model.name)
