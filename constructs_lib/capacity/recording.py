"""Rates from a traffic recording: what a ``TrafficRecorder`` sampled, as reads per access pattern.

The recorder counts sampled requests per declared pattern and, per Query shape, the items each
returned; scaled by ``1 / sample_rate`` over the recording's duration they are the pattern rates
of a rates file. Writes are recorded per operation, not per entity: they come back as
:class:`UnattributedWrites` (measured requests/s and capacity units per request) for the caller
to place under an entity, never dropped. See docs/adr/0053-monthly-cost.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .exceptions import CapacityInputError
from .rates import PatternRate, TableRates

if TYPE_CHECKING:
    from ..runtime.stats import Snapshot

__all__ = ["UnattributedWrites", "rates_from_snapshot"]

_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWrite", "TransactWrite")


@dataclass(frozen=True)
class UnattributedWrites:
    """A write operation the recording saw: requests/s and the capacity units each consumed."""

    operation: str
    per_second: float
    units_per_request: float


def rates_from_snapshot(snapshot: Snapshot, key: str) -> tuple[TableRates, list[UnattributedWrites]]:
    """The read rates of table ``key`` (a rates file's table name) from a recorder's snapshot,
    and its write operations, measured but not attributed to an entity.

    Raises
    ------
    CapacityInputError
        The recording covers no time, or names a pattern its model does not declare.
    """
    if snapshot.duration_seconds <= 0:
        raise CapacityInputError(f"recording duration {snapshot.duration_seconds!r} s must be more than 0")
    scale = 1 / snapshot.sample_rate / snapshot.duration_seconds
    declared = snapshot.model.access_patterns if snapshot.model is not None else {}
    reads = []
    for pattern, sampled in sorted(snapshot.patterns.items()):
        if pattern not in declared:
            raise CapacityInputError(f"recorded pattern {pattern!r} is not declared by the recorder's model; "
                                     f"its patterns: {sorted(declared)}")
        shapes = [s for s in snapshot.shapes if s.pattern == pattern and s.requests]
        requests = sum(s.requests for s in shapes)
        items = max(1, round(sum(s.returned for s in shapes) / requests)) if requests else 1
        reads.append(PatternRate(pattern, sampled * scale, items))
    writes = [UnattributedWrites(label, requests * scale, units / requests if requests else 0.0)
              for label, (requests, _, units) in sorted(snapshot.operations.items()) if label in _WRITES and requests]
    return TableRates(key, tuple(reads)), writes
