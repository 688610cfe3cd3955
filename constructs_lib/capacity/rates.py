"""The traffic mix a cost estimate prices: the rates file (JSON) and its reader.

One file describes steady rates per table (keyed by model name or construct path): reads per
access pattern, writes per entity and kind, increments per counter family, audited changes and
items stored per entity, plus settings (target utilization, assumed Lambda durations). JSON, read
with :mod:`.jsondoc` so that every error names the line; ``rates_from_snapshot`` turns a traffic
recording into the same shape. See docs/adr/0053-monthly-cost.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .estimate import WRITE_KINDS, WriteKind
from .exceptions import RatesError, RecordingError
from .jsondoc import Document, JsonSyntaxError, parse, read

__all__ = [
    "FORMAT",
    "VERSION",
    "WRITE_KINDS",
    "CounterRate",
    "PatternRate",
    "Rates",
    "Settings",
    "StorageRate",
    "TableRates",
    "WriteKind",
    "WriteRate",
    "load_rates",
    "parse_rates",
]

FORMAT, VERSION = "constructs_lib.rates", 1
Where = tuple[str | int, ...]


@dataclass(frozen=True)
class Settings:
    """How the estimate sizes what rates alone do not say.

    ``target_utilization``: auto-scaling's target (consumed ÷ provisioned), 0.7 by default, as
    AWS's default scaling policy; ``aggregator_ms`` / ``audit_ms``: assumed duration of one
    invocation of the counter aggregator / the audit writer; ``audit_months``: months of audit
    trail stored when the audit keeps records forever."""

    target_utilization: float = 0.7
    aggregator_ms: float = 40.0
    audit_ms: float = 80.0
    audit_months: float = 12.0


@dataclass(frozen=True)
class PatternRate:
    """Reads of one access pattern: requests/s, items each request reads, consistency."""

    pattern: str
    per_second: float
    items: int = 1
    consistent: bool = False
    item_bytes: int | None = None
    line: int = 0


@dataclass(frozen=True)
class WriteRate:
    """Writes of one entity by one write kind, per second (``item_bytes``: the item's size,
    default the entity's typical size)."""

    entity: str
    kind: str
    per_second: float
    item_bytes: int | None = None
    line: int = 0


@dataclass(frozen=True)
class CounterRate:
    """A ``ShardedCounter`` family's traffic: increments/s over all its counters, of the
    hottest counter, how many counters share them, and reads of totals (GetItem) or exact
    values (every shard)."""

    family: str
    increments_per_second: float
    hottest_per_second: float | None = None
    counters: float = 1.0
    reads_per_second: float = 0.0
    exact_reads_per_second: float = 0.0
    line: int = 0


@dataclass(frozen=True)
class StorageRate:
    """Items stored of one entity; ``in_index``: the share of them a (sparse) index holds."""

    entity: str
    items: float
    in_index: Mapping[str, float] = field(default_factory=dict)
    line: int = 0


@dataclass(frozen=True)
class TableRates:
    """The rates of one table (``key``: model name or construct path, as the file names it)."""

    key: str
    reads: tuple[PatternRate, ...] = ()
    writes: tuple[WriteRate, ...] = ()
    counters: tuple[CounterRate, ...] = ()
    audit_changes_per_second: float | None = None
    storage: tuple[StorageRate, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Rates:
    """A read rates file: its settings and the rates of each table it names."""

    source: str
    settings: Settings
    tables: Mapping[str, TableRates]
    document: Document | None = None
    #: The traffic recording some rates came from (they have line 0), or None.
    recording: str | None = None

    def error(self, where: Where, message: str) -> RatesError:
        """A :class:`RatesError` naming this file and the line of ``where`` (or of ``line``)."""
        line = self.document.line(where) if self.document is not None else 0
        return self.fail_at(line, message)

    def fail_at(self, line: int, message: str) -> RatesError:
        """A :class:`RatesError` naming this file and ``line``; line 0 of rates taken from a
        recording: a :class:`RecordingError` naming the recording."""
        if line == 0 and self.recording is not None:
            return RecordingError(self.recording, message)
        return RatesError(self.source, line, message)

    def scaled(self, factor: float) -> Rates:
        """The same mix with every rate (not sizes, not stored items) multiplied by ``factor``."""
        def table(t: TableRates) -> TableRates:
            return TableRates(
                t.key,
                tuple(PatternRate(r.pattern, r.per_second * factor, r.items, r.consistent, r.item_bytes, r.line)
                      for r in t.reads),
                tuple(WriteRate(w.entity, w.kind, w.per_second * factor, w.item_bytes, w.line) for w in t.writes),
                tuple(CounterRate(c.family, c.increments_per_second * factor,
                                  None if c.hottest_per_second is None else c.hottest_per_second * factor,
                                  c.counters, c.reads_per_second * factor, c.exact_reads_per_second * factor, c.line)
                      for c in t.counters),
                None if t.audit_changes_per_second is None else t.audit_changes_per_second * factor,
                t.storage, t.line,
            )
        return Rates(self.source, self.settings, {k: table(t) for k, t in self.tables.items()}, self.document,
                     self.recording)


def load_rates(path: str | Path) -> Rates:
    """Read a rates file (:class:`RatesError` naming the line when it breaks a rule)."""
    file = Path(path)
    try:
        doc = read(file)
    except OSError as exc:
        raise RatesError(str(file), 1, f"cannot read the rates file: {exc.strerror or exc}") from None
    except JsonSyntaxError as exc:
        raise RatesError(str(file), exc.line, str(exc).split(": ", 1)[1]) from None
    return _Reader(doc).rates()


def parse_rates(text: str, source: str = "<rates>") -> Rates:
    """Read rates from JSON text (see :func:`load_rates`)."""
    try:
        doc = parse(text, source)
    except JsonSyntaxError as exc:
        raise RatesError(source, exc.line, str(exc).split(": ", 1)[1]) from None
    return _Reader(doc).rates()


class _Reader:
    def __init__(self, doc: Document) -> None:
        self.doc = doc

    def fail(self, where: Where, message: str) -> RatesError:
        return RatesError(self.doc.source, self.doc.line(where), message)

    def obj(self, value: Any, where: Where, allowed: set[str], what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"{what} must be a JSON object, found {value!r}")
        for key in value:
            if key not in allowed:
                raise self.fail((*where, key), f"unknown key {key!r} in {what}; known keys: {sorted(allowed)}")
        return value

    def number(self, value: Any, where: Where, what: str, *, positive: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(where, f"{what} {value!r} must be a number")
        if value < 0 or (positive and value == 0):
            raise self.fail(where, f"{what} {value!r} must be {'more than 0' if positive else '0 or more'}")
        return float(value)

    def whole(self, value: Any, where: Where, what: str, low: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.fail(where, f"{what} {value!r} must be a whole number, {low} or more")
        return value

    def rates(self) -> Rates:
        top = self.obj(self.doc.value, (), {"format", "version", "settings", "tables", "note"}, "the rates file")
        if top.get("format") != FORMAT:
            raise self.fail(("format",), f"format {top.get('format')!r} is not a rates file's: expected {FORMAT!r}")
        if top.get("version") != VERSION:
            raise self.fail(("version",), f"rates file version {top.get('version')!r} is not supported: this library "
                                          f"reads version {VERSION}")
        settings = self.settings(top.get("settings", {}))
        tables = self.obj(top.get("tables"), ("tables",), set(top.get("tables") or {}), "tables")
        if not tables:
            raise self.fail(("tables",), "tables must name at least one table (model name or construct path)")
        out = {key: self.table(key, value) for key, value in tables.items()}
        return Rates(self.doc.source, settings, out, self.doc)

    def settings(self, value: Any) -> Settings:
        where: Where = ("settings",)
        raw = self.obj(value, where, {"target_utilization", "aggregator_ms", "audit_ms", "audit_months"}, "settings")
        default = Settings()
        target = default.target_utilization
        if "target_utilization" in raw:
            target = self.number(raw["target_utilization"], (*where, "target_utilization"), "target_utilization",
                                 positive=True)
            if target > 1:
                raise self.fail((*where, "target_utilization"), f"target_utilization {target!r} must be at most 1 "
                                                                "(consumed ÷ provisioned)")
        return Settings(
            target,
            *(self.number(raw[k], (*where, k), k, positive=True) if k in raw else getattr(default, k)
              for k in ("aggregator_ms", "audit_ms", "audit_months")),
        )

    def table(self, key: str, value: Any) -> TableRates:
        where: Where = ("tables", key)
        raw = self.obj(value, where, {"reads", "writes", "counters", "audit", "storage"}, f"table {key!r}")
        reads = tuple(self.read(name, v, (*where, "reads", name))
                      for name, v in self.obj(raw.get("reads", {}), (*where, "reads"), set(raw.get("reads") or {}),
                                              "reads").items())
        writes: list[WriteRate] = []
        for entity, kinds in self.obj(raw.get("writes", {}), (*where, "writes"), set(raw.get("writes") or {}),
                                      "writes").items():
            at: Where = (*where, "writes", entity)
            for kind, v in self.obj(kinds, at, set(WRITE_KINDS), f"writes of {entity!r}").items():
                writes.append(self.write(entity, kind, v, (*at, kind)))
        counters = tuple(self.counter(name, v, (*where, "counters", name))
                         for name, v in self.obj(raw.get("counters", {}), (*where, "counters"),
                                                 set(raw.get("counters") or {}), "counters").items())
        audit = None
        if "audit" in raw:
            at = (*where, "audit")
            audit_raw = self.obj(raw["audit"], at, {"changes_per_second"}, "audit")
            if "changes_per_second" in audit_raw:
                audit = self.number(audit_raw["changes_per_second"], (*at, "changes_per_second"), "changes_per_second")
        storage = tuple(self.stored(entity, v, (*where, "storage", entity))
                        for entity, v in self.obj(raw.get("storage", {}), (*where, "storage"),
                                                  set(raw.get("storage") or {}), "storage").items())
        return TableRates(key, reads, tuple(writes), counters, audit, storage, self.doc.line(where))

    def read(self, name: str, value: Any, where: Where) -> PatternRate:
        line = self.doc.line(where)
        if not isinstance(value, dict):
            return PatternRate(name, self.number(value, where, f"reads/s of pattern {name!r}"), line=line)
        raw = self.obj(value, where, {"per_second", "items", "consistent", "item_bytes"}, f"pattern {name!r}")
        if "per_second" not in raw:
            raise self.fail(where, f"pattern {name!r} has no 'per_second' (reads per second)")
        consistent = raw.get("consistent", False)
        if not isinstance(consistent, bool):
            raise self.fail((*where, "consistent"), f"consistent {consistent!r} must be true or false")
        size = raw.get("item_bytes")
        return PatternRate(
            name, self.number(raw["per_second"], (*where, "per_second"), f"reads/s of pattern {name!r}"),
            self.whole(raw.get("items", 1), (*where, "items"), "items"), consistent,
            None if size is None else self.whole(size, (*where, "item_bytes"), "item_bytes"), line,
        )

    def write(self, entity: str, kind: str, value: Any, where: Where) -> WriteRate:
        line = self.doc.line(where)
        if not isinstance(value, dict):
            return WriteRate(entity, kind, self.number(value, where, f"{kind}/s of {entity!r}"), line=line)
        raw = self.obj(value, where, {"per_second", "item_bytes"}, f"{kind} of {entity!r}")
        if "per_second" not in raw:
            raise self.fail(where, f"{kind} of {entity!r} has no 'per_second'")
        size = raw.get("item_bytes")
        return WriteRate(entity, kind, self.number(raw["per_second"], (*where, "per_second"), f"{kind}/s of {entity!r}"),
                         None if size is None else self.whole(size, (*where, "item_bytes"), "item_bytes"), line)

    def counter(self, family: str, value: Any, where: Where) -> CounterRate:
        keys = {"increments_per_second", "hottest_per_second", "counters", "reads_per_second", "exact_reads_per_second"}
        raw = self.obj(value, where, keys, f"counter {family!r}")
        if "increments_per_second" not in raw:
            raise self.fail(where, f"counter {family!r} has no 'increments_per_second'")

        def num(key: str, default: float, *, positive: bool = False) -> float:
            return self.number(raw[key], (*where, key), key, positive=positive) if key in raw else default

        hottest = num("hottest_per_second", -1.0)
        return CounterRate(family, num("increments_per_second", 0.0), None if hottest < 0 else hottest,
                           num("counters", 1.0, positive=True), num("reads_per_second", 0.0),
                           num("exact_reads_per_second", 0.0), self.doc.line(where))

    def stored(self, entity: str, value: Any, where: Where) -> StorageRate:
        line = self.doc.line(where)
        if not isinstance(value, dict):
            return StorageRate(entity, self.number(value, where, f"items of {entity!r}"), line=line)
        raw = self.obj(value, where, {"items", "in_index"}, f"storage of {entity!r}")
        if "items" not in raw:
            raise self.fail(where, f"storage of {entity!r} has no 'items'")
        shares = self.obj(raw.get("in_index", {}), (*where, "in_index"), set(raw.get("in_index") or {}), "in_index")
        in_index = {}
        for index, share in shares.items():
            value_ = self.number(share, (*where, "in_index", index), f"share of {entity!r} in {index!r}")
            if value_ > 1:
                raise self.fail((*where, "in_index", index), f"share {value_!r} of {entity!r} in {index!r} must be "
                                                             "at most 1")
            in_index[index] = value_
        return StorageRate(entity, self.number(raw["items"], (*where, "items"), f"items of {entity!r}"), in_index, line)
