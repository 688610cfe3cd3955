"""Capacity of a sharded counter's calls, in both layouts: the items as the runtime writes them
and what each call costs.

Stream layout (ADR 0064): an increment is one UpdateItem of a ``SUM`` shard, an idempotent one a
conditional PutItem of a ``KEY#`` item (a duplicate: that put refused, still charged); the
aggregator writes a touched total once per 25 shards, priced by the total, which grows with its
watermarks; reads are GetItem of the total (one per region when replicated) and, exact, a
BatchGetItem of every shard and the total. Recompute layout (ADR 0012): an idempotent increment
is a transaction; aggregation reads every shard. The monthly model: docs/cost.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..runtime.patterns.counter.spec import (
    AGGREGATED_AT,
    AMOUNT,
    APPLIED_EVENTS,
    BY,
    COUNT,
    COUNTER_ID,
    DEDUP_TYPE,
    FAMILY,
    FORMAT_ATTR,
    IDEMPOTENCY_KEY,
    INCREMENT_TYPE,
    ORIGIN,
    SHARD,
    SHARD_TYPE,
    SHARDS,
    STREAM_FORMAT,
    TOTAL_TYPE,
    VERSION_ATTR,
    CounterSpec,
)
from ..runtime.patterns.counter.watermarks import encode_seq, generation_maps
from .entries import item_bytes
from .reads import batch_get, get
from .units import Capacity
from .writes import put, refused, transaction, update

if TYPE_CHECKING:
    from ..model import Model

__all__ = [
    "EXAMPLE_COUNTER_ID",
    "EXAMPLE_IDEMPOTENCY_KEY",
    "SEQUENCE_DIGITS",
    "SHARDS_PER_TOTAL_WRITE",
    "CounterCalls",
    "increment_item",
    "recompute_total_item",
    "shard_item",
    "total_item",
]

#: Digits of a stream sequence number as priced: AWS documents 21 to 40 (``StreamRecord``); a
#: watermark holds one, so totals are priced with the longest.
SEQUENCE_DIGITS = 40
#: Shards one total write of the aggregator covers (``aggregation.SHARDS_PER_WRITE``).
SHARDS_PER_TOTAL_WRITE = 25
#: A representative counter id and idempotency key (a request id).
EXAMPLE_COUNTER_ID = "counter-id-0001"
EXAMPLE_IDEMPOTENCY_KEY = "request-id-0123456789abcdef"
_COUNT = 123_456_789_012  # a total in the hundreds of billions: 7 bytes
_SHARD_COUNT = 123_456_789
_TIME = "2026-01-01T00:00:00.000000Z"  # the runtime's fixed-width aggregated_at
_EXPIRES = 1_800_000_000
#: An increment item's per-call nonce: its name and length as ``CounterClient`` writes it.
NONCE_ATTRIBUTE, NONCE_LENGTH = "n", 12

Item = dict[str, Any]


# Items -------------------------------------------------------------------------------------------
def shard_item(spec: CounterSpec, counter_id: str = EXAMPLE_COUNTER_ID, shard: int | None = None, *,
               region: str | None = None, count: int = _SHARD_COUNT, writes: int = _SHARD_COUNT,
               amount: int = 1) -> Item:
    """A shard as the family's layout stores it: ``SUM`` (``count``, ``v`` = writes so far, ``b``
    = the last write's amount) or, recomputed, ``SHARD`` (``count``). ``shard`` defaults to the
    last one (the longest number)."""
    shard = spec.shards - 1 if shard is None else shard
    item: Item = {**spec.shard_key(counter_id, shard, region), COUNT: count, spec.entity_attribute: SHARD_TYPE}
    if spec.deltas:
        item.update({VERSION_ATTR: writes, AMOUNT: amount})
    return item


def increment_item(spec: CounterSpec, counter_id: str = EXAMPLE_COUNTER_ID,
                   idempotency_key: str = EXAMPLE_IDEMPOTENCY_KEY, *, by: int = 1, region: str | None = None,
                   shard: int | None = None, expires: int = _EXPIRES) -> Item:
    """An idempotent increment's item: the stream layout's ``KEY#`` item (``by``, the call's
    nonce, the TTL, and on a replicated table the origin region), or the recompute layout's
    dedup marker."""
    ttl = spec.ttl_attribute or "expires_at"
    shard = spec.shards - 1 if shard is None else shard
    if spec.deltas:
        item: Item = {**spec.increment_key(counter_id, shard, idempotency_key), spec.entity_attribute: INCREMENT_TYPE,
                      BY: by, NONCE_ATTRIBUTE: "0" * NONCE_LENGTH, ttl: expires}
        if spec.replicated:
            item[ORIGIN] = region or spec.regions[0]
        return item
    return {**spec.dedup_key(counter_id, idempotency_key), spec.entity_attribute: DEDUP_TYPE, FAMILY: spec.family,
            COUNTER_ID: counter_id, IDEMPOTENCY_KEY: idempotency_key, BY: by, SHARD: shard, ttl: expires}


def total_item(spec: CounterSpec, counter_id: str = EXAMPLE_COUNTER_ID, *, region: str | None = None,
               watermarks: Sequence[Mapping[int, int]] = (), count: int = _COUNT,
               applied_events: int | None = None, generation: int = 0) -> Item:
    """A stream-layout total: ``count``, ``e`` (what idempotent increments added; present once
    one was applied), the time, ``fmt`` and one watermark map per generation (``watermarks[0]``
    is generation ``generation``'s, ``watermarks[1]`` the one before): shard -> last sequence
    number applied."""
    item: Item = {**spec.total_key(counter_id, region), COUNT: count, AGGREGATED_AT: _TIME,
                  spec.entity_attribute: TOTAL_TYPE, FORMAT_ATTR: STREAM_FORMAT}
    if applied_events is not None:
        item[APPLIED_EVENTS] = applied_events
    current, previous, _ = generation_maps(generation)
    for name, marks in zip((current, previous), watermarks, strict=False):
        if marks:
            item[name] = {str(shard): encode_seq(str(seq)) for shard, seq in marks.items()}
    return item


def recompute_total_item(spec: CounterSpec, counter_id: str = EXAMPLE_COUNTER_ID, *, region: str | None = None,
                         count: int = _COUNT) -> Item:
    """A recompute-layout total as ``CounterClient.recompute`` writes it."""
    return {**spec.total_key(counter_id, region), COUNT: count, AGGREGATED_AT: _TIME, spec.entity_attribute: TOTAL_TYPE,
            FAMILY: spec.family, COUNTER_ID: counter_id, SHARDS: spec.shards}


def typical_watermarks(spec: CounterSpec, lanes: float, *, digits: int = SEQUENCE_DIGITS) -> list[dict[int, int]]:
    """Two generations' watermark maps holding ``lanes`` entries in all (split evenly, the
    highest shard numbers first: the longest names), each a ``digits``-digit sequence number."""
    total = max(0, min(round(lanes), 2 * spec.shards))
    seq = int("9" * digits)
    shards = list(range(spec.shards - 1, -1, -1))
    first = (total + 1) // 2
    return [{s: seq for s in shards[:first]}, {s: seq for s in shards[:total - first]}]


# Calls -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CounterCalls:
    """What each call of one counter family costs, from representative items of its layout.

    Parameters
    ----------
    model
        The table's model (a counter item may enter one of its indexes).
    spec
        The family's :class:`CounterSpec` (layout, shards, regions, TTL attribute).
    counter_id, idempotency_key
        The representative values sized. Defaults :data:`EXAMPLE_COUNTER_ID`,
        :data:`EXAMPLE_IDEMPOTENCY_KEY`.
    """

    model: Model
    spec: CounterSpec
    counter_id: str = EXAMPLE_COUNTER_ID
    idempotency_key: str = EXAMPLE_IDEMPOTENCY_KEY

    @property
    def _region(self) -> str | None:
        return self.spec.regions[0] if self.spec.replicated else None

    def shard(self) -> Item:
        return shard_item(self.spec, self.counter_id, region=self._region)

    def marker(self) -> Item:
        """The idempotent increment's item (``KEY#``) or, recomputed, its dedup marker."""
        return increment_item(self.spec, self.counter_id, self.idempotency_key, region=self._region)

    def total(self, lanes: float = 0.0) -> Item:
        """The counter's total; in the stream layout holding ``lanes`` watermarks."""
        if not self.spec.deltas:
            return recompute_total_item(self.spec, self.counter_id, region=self._region)
        return total_item(self.spec, self.counter_id, region=self._region, watermarks=typical_watermarks(
            self.spec, lanes), applied_events=_COUNT if self.spec.idempotent else None)

    def increment(self) -> Capacity:
        """UpdateItem ADD of one shard."""
        return update(self.model, self.shard(), self.shard())

    def idempotent_increment(self) -> Capacity:
        """Stream layout: the conditional PutItem of the ``KEY#`` item. Recomputed: a transaction
        of the dedup marker's put and the shard's update, each charged twice."""
        if self.spec.deltas:
            return put(self.model, self.marker())
        return transaction([put(self.model, self.marker()), self.increment()])

    def duplicate(self) -> Capacity | None:
        """A repeated idempotency key. Stream layout: the put refused by the stored item, charged
        its size. Recomputed: a transaction cancelled by the marker's condition, whose charge AWS
        does not document (None)."""
        return refused(self.model, self.marker()) if self.spec.deltas else None

    def aggregation_write(self, lanes: float) -> Capacity:
        """Stream layout: one UpdateItem of the total that holds ``lanes`` watermarks (the item
        before and after are the same size: a watermark is replaced by a later one). Recomputed:
        the UpdateItem of the total after reading every shard (see :meth:`recompute_reads`)."""
        total = self.total(lanes)
        return update(self.model, total, total)

    def recompute_reads(self) -> Capacity:
        """Recompute layout: the consistent BatchGetItem calls of every shard (of every region)."""
        return batch_get(self.model, [self._shard_of(k) for k in self.spec.all_shard_keys(self.counter_id)],
                         consistent=True)

    def read(self, lanes: float = 0.0) -> Capacity:
        """``get()``: a GetItem of the total, eventually consistent; a replicated stream-layout
        family reads every region's total in one BatchGetItem."""
        if self.spec.deltas and self.spec.replicated:
            return batch_get(self.model, [self._total_in(r, lanes) for r in self.spec.regions])
        return get(self.model, self.total(lanes))

    def exact_read(self, lanes: float = 0.0) -> Capacity:
        """``get(exact=True)``: consistent BatchGetItem calls of every shard (of every region)
        and, in the stream layout, the total(s); each item rounded to 4 KB on its own."""
        items: list[Item] = [self._shard_of(k) for k in self.spec.all_shard_keys(self.counter_id)]
        if self.spec.deltas:
            items += [self._total_in(r, lanes) for r in (self.spec.regions or (None,))]
        return batch_get(self.model, items, consistent=True)

    def _shard_of(self, key: Mapping[str, str]) -> Item:
        return {**self.shard(), **key}

    def _total_in(self, region: str | None, lanes: float) -> Item:
        return {**self.total(lanes), **self.spec.total_key(self.counter_id, region)}

    def sizes(self, lanes: float = 0.0) -> dict[str, int]:
        """Bytes of the representative shard, increment item (or marker) and total."""
        return {"shard": item_bytes(self.shard()), "marker": item_bytes(self.marker()),
                "total": item_bytes(self.total(lanes))}
