"""Rates from a traffic recording: what a ``TrafficRecorder`` sampled, as a table's rates.

The recorder counts sampled requests per declared pattern (and, per Query shape, the items each
returned) and item writes per entity and write kind; scaled by ``1 / sample_rate`` over the
recording's duration they are the pattern and write rates of a rates file. Writes no entity was
named for (raw calls through ``RecordingClient``) come back as :class:`UnattributedWrites`, for
the caller to place under an entity, never dropped. A rates file given with a recording
overrides and extends it (:func:`merge_rates`). See docs/adr/0053-monthly-cost.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .estimate import WRITE_KINDS
from .exceptions import CapacityInputError, RecordingError
from .rates import PatternRate, Rates, Settings, TableRates, WriteRate

if TYPE_CHECKING:
    from ..runtime.stats import Snapshot

__all__ = ["UnattributedWrites", "load_recording", "merge_rates", "rates_from_snapshot", "unattributed_note"]


@dataclass(frozen=True)
class UnattributedWrites:
    """Items written by one write kind with no entity named: items/s and the capacity units each consumed."""

    kind: str
    per_second: float
    units_per_write: float


def rates_from_snapshot(snapshot: Snapshot, key: str) -> tuple[TableRates, list[UnattributedWrites]]:
    """The read and write rates of table ``key`` (a rates file's table name) from a recorder's
    snapshot, and the writes it measured without an entity.

    Raises
    ------
    CapacityInputError
        The recording covers no time, or names a pattern or entity its model does not declare.
    """
    if snapshot.duration_seconds <= 0:
        raise CapacityInputError(f"recording duration {snapshot.duration_seconds!r} s must be more than 0")
    def scale(sampled: float) -> float:
        return sampled / snapshot.sample_rate / snapshot.duration_seconds

    model = snapshot.model
    declared = model.access_patterns if model is not None else {}
    reads = []
    for pattern, sampled in sorted(snapshot.patterns.items()):
        if pattern not in declared:
            raise CapacityInputError(f"recorded pattern {pattern!r} is not declared by the recorder's model; "
                                     f"its patterns: {sorted(declared)}")
        shapes = [s for s in snapshot.shapes if s.pattern == pattern and s.requests]
        requests = sum(s.requests for s in shapes)
        items = max(1, round(sum(s.returned for s in shapes) / requests)) if requests else 1
        reads.append(PatternRate(pattern, scale(sampled), items))
    entities = model.entities if model is not None else {}
    writes = []
    for (entity, kind), (count, _) in sorted(snapshot.entity_writes.items()):
        if entity not in entities:
            raise CapacityInputError(f"recorded writes of entity {entity!r} but the recorder's model declares no such "
                                     f"entity; its entities: {sorted(entities)}")
        if kind not in WRITE_KINDS:
            raise CapacityInputError(f"recorded write kind {kind!r} of {entity!r} is not one of {', '.join(WRITE_KINDS)}")
        if count:
            writes.append(WriteRate(entity, kind, scale(count)))
    unattributed = [UnattributedWrites(kind, scale(count), units / count)
                    for kind, (count, units) in sorted(snapshot.unattributed_writes.items()) if count]
    return TableRates(key, tuple(reads), tuple(writes)), unattributed


def load_recording(path: str | Path, key: str | None = None) -> tuple[Rates, list[UnattributedWrites]]:
    """The rates of a snapshot file (``runtime.stats.write_snapshot``) under table name ``key``
    (default: the recorded model's name), and its writes without an entity.

    Raises
    ------
    RecordingError
        The file cannot be read as a snapshot, has no model and no ``key``, covers no time, or
        names a pattern or entity its model does not declare (the message names the file).
    """
    from ..runtime.exceptions import SnapshotFileError
    from ..runtime.stats import read_snapshot

    source = str(path)
    try:
        snapshot = read_snapshot(path)
    except SnapshotFileError as exc:
        raise RecordingError(source, exc.problem) from exc
    if key is None:
        if snapshot.model is None:
            raise RecordingError(source, "the snapshot holds no model: name its table with --table")
        key = snapshot.model.name
    try:
        table, unattributed = rates_from_snapshot(snapshot, key)
    except CapacityInputError as exc:
        raise RecordingError(source, str(exc)) from exc
    return Rates(source, Settings(), {key: table}, None, source), unattributed


def merge_rates(recorded: Rates, given: Rates) -> Rates:
    """``recorded`` with ``given`` (a rates file) laid over it: the file's settings; per table,
    the file's rate of a pattern, of an entity's write kind, its counters, audit and storage
    replace the recording's, and what the file names that the recording lacks is added."""
    tables = dict(recorded.tables)
    for key, mine in given.tables.items():
        seen = tables.get(key)
        if seen is None:
            tables[key] = mine
            continue
        reads = {r.pattern: r for r in seen.reads} | {r.pattern: r for r in mine.reads}
        writes = {(w.entity, w.kind): w for w in seen.writes} | {(w.entity, w.kind): w for w in mine.writes}
        tables[key] = TableRates(
            key, tuple(reads.values()), tuple(writes.values()), mine.counters or seen.counters,
            mine.audit_changes_per_second if mine.audit_changes_per_second is not None else seen.audit_changes_per_second,
            mine.storage or seen.storage, mine.line,
        )
    return Rates(given.source, given.settings, tables, given.document, recorded.recording)


def unattributed_note(writes: list[UnattributedWrites]) -> str | None:
    """The estimate's note on recorded writes it could not price (no entity), or None if none."""
    if not writes:
        return None
    parts = ", ".join(f"{w.per_second:g} {w.kind}/s ({w.units_per_write:g} units each)" for w in writes)
    return (f"recorded writes with no entity named (raw calls) are not priced: {parts}; "
            "give them under an entity in --rates")
