"""What a recorder hands to the report: a copy of its aggregates, and the checks both share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..exceptions import TrafficInsightError

if TYPE_CHECKING:
    from ...model import Model
    from .sketch import KeyCount


def check(name: str, value: Any, rule: str, ok: bool) -> None:
    """Raise :class:`TrafficInsightError` naming ``value`` and ``rule`` unless ``ok``."""
    if not ok:
        raise TrafficInsightError(f"{name} {value!r} must be {rule}")


def is_int(value: Any, low: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value >= low


def is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


@dataclass(frozen=True)
class TrafficRecord:
    """One sampled DynamoDB request.

    ``partition_keys`` has one entry per item the request touched on ``index`` (the table's
    partition key for item operations and batches, the index's for a Query; empty for a
    Scan). ``capacity_units`` is what DynamoDB reported (None if nothing); ``count`` and
    ``scanned_count`` are ``Count``/``ScannedCount`` (items returned vs read); ``pattern`` is
    the declared access pattern the request served, if any.
    """

    operation: str
    index: str
    partition_keys: tuple[str, ...]
    pattern: str | None
    capacity_units: float | None
    count: int | None
    scanned_count: int | None
    error_code: str | None


@dataclass
class QueryShape:
    """Totals of one Query/Scan shape: a declared pattern, or an index + key condition + filter
    (placeholders ``:v`` stay unresolved, so no data values appear)."""

    operation: str
    index: str
    label: str
    pattern: str | None
    requests: int = 0
    scanned: int = 0
    returned: int = 0
    capacity_units: float = 0.0


@dataclass(frozen=True)
class Snapshot:
    """A consistent copy of a recorder's aggregates, in sampled units (see :meth:`TrafficRecorder.snapshot`)."""

    table_name: str | None
    model: Model | None
    sample_rate: float
    sampled_requests: int
    duration_seconds: float
    sketches: dict[tuple[str, str], tuple[list[KeyCount], int, bool, float]]  # (index, kind) -> (top, hits, exact, bound)
    operations: dict[str, tuple[int, int, float]]  # label -> (requests, key hits, capacity units)
    errors: dict[str, int]
    index_reads: dict[str, int]
    index_writes: dict[str, tuple[int, float]]  # GSI -> (item writes, capacity units)
    patterns: dict[str, int]
    shapes: list[QueryShape]
    #: (entity, write kind) -> (item writes, capacity units), for writes named at the AWS-call seam
    entity_writes: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)
    #: write kind -> (item writes, capacity units), for items written with no entity named (raw calls)
    unattributed_writes: dict[str, tuple[int, float]] = field(default_factory=dict)
