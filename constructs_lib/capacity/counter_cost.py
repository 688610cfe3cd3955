"""The steady load a ``ShardedCounter`` family puts on its table, in either layout.

Per call from :class:`~.counters.CounterCalls`; per second from the family's rates and its
stream mapping (batch size and window) as deployed. The recompute layout re-reads every shard
of each counter a batch touched (ADR 0053 row 8). The stream layout writes each touched
counter's total once per 25 shards a batch touched it on, and reads nothing: how many records
of one counter a batch holds comes from :func:`stream_aggregation`. The model and its
assumptions: docs/cost.md ("The counter's aggregation").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..runtime.limits import PARTITION_WCU
from .counters import SHARDS_PER_TOTAL_WRITE
from .exceptions import CapacityInputError
from .pricing import stream_invocations

__all__ = ["StreamAggregation", "hot_stream_shards", "recompute_aggregation", "stream_aggregation", "watermarks_held"]


@dataclass(frozen=True)
class StreamAggregation:
    """The aggregator's work per second for one family in the stream layout.

    ``hot_writes`` / ``cold_writes``: total writes/s of the hottest counter / of all the others;
    ``hot_lanes`` / ``cold_lanes``: watermarks one such total holds; ``invocations``: batches/s;
    ``stream_shards`` / ``hot_stream_shards``: the stream shards the family's records arrive on /
    those carrying the hottest counter's; ``hot_per_batch``: the hottest counter's increments in
    one batch of a stream shard carrying them; ``records_per_batch``: mean records per batch."""

    invocations: float
    hot_writes: float
    cold_writes: float
    hot_lanes: float
    cold_lanes: float
    stream_shards: int
    hot_stream_shards: int
    hot_per_batch: float
    records_per_batch: float
    notes: tuple[str, ...] = field(default=())


def hot_stream_shards(hottest: float, shards: int, stream_shards: int, wcu_per_increment: float) -> int:
    """Stream shards the hottest counter's shards spread over: the table's (``stream_shards``),
    or more once a partition can hold fewer of its shards than it has (a stream shard per
    partition, a partition takes 1,000 WCU/s); at most one per counter shard."""
    per_shard = hottest * wcu_per_increment / shards
    if per_shard <= 0:
        return max(1, min(shards, stream_shards))
    fit = max(1, math.floor(PARTITION_WCU / per_shard))  # counter shards one partition can take
    return max(1, min(shards, max(stream_shards, math.ceil(shards / fit))))


def watermarks_held(rate: float, shards: int, guard_seconds: float) -> float:
    """Watermarks a stream-layout total holds for a counter incremented ``rate`` times a second
    on random shards: the shards touched in each of two generations of ``guard_seconds``."""
    if rate <= 0:
        return 0.0
    return 2 * shards * -math.expm1(-rate * guard_seconds / shards)


def _writes_given(records: float, lanes: float) -> int:
    """Total writes for a counter present in a batch with ``records`` records on ``lanes`` of its
    shards (each record on a random one): ⌈shards touched / 25⌉."""
    touched = lanes * -math.expm1(-records / lanes)
    return max(1, math.ceil(round(touched / SHARDS_PER_TOTAL_WRITE, 9)))


def _writes_per_batch(records: float, lanes: float) -> float:
    """Expected total writes in one batch for a counter with ``records`` records there on
    average (Poisson): the chance it is there times the writes it then needs."""
    if records <= 0:
        return 0.0
    present = -math.expm1(-records)
    return present * _writes_given(records / present, lanes)


def _cold_per_batch(records: float, counters: float, lanes: float) -> float:
    """Total writes for ``records`` of ``counters`` equally busy counters in one batch: one per
    counter present (at most one per 25 of its shards)."""
    if records <= 0 or counters <= 0:
        return 0.0
    distinct = counters * -math.expm1(-records / counters)
    return distinct * _writes_given(records / distinct, lanes)


def stream_aggregation(*, increments: float, hottest: float, counters: float, shards: int, batch_size: int,
                       window_seconds: float, stream_shards: int, guard_seconds: float, expiries: bool,
                       wcu_per_increment: float = 1.0) -> StreamAggregation:
    """The stream layout's aggregation load for a family's rates (see docs/cost.md).

    Parameters
    ----------
    increments, hottest, counters
        Increments/s of the family, of its hottest counter, and how many counters share them.
    shards
        The family's shards per counter.
    batch_size, window_seconds
        The mapping's batch size and batching window.
    stream_shards
        The table's stream shards for its own load (its partitions).
    guard_seconds
        The family's watermark generation.
    expiries
        Whether every increment's item later expires into the stream (idempotent increments:
        the ``KEY#`` item's TTL deletion reaches the aggregator as a record without effect).
    wcu_per_increment
        Units one increment writes (sizes the partitions a hot counter needs).
    """
    for name, value in (("increments", increments), ("hottest", hottest), ("counters", counters)):
        if not math.isfinite(value) or value < 0:
            raise CapacityInputError(f"{name} {value!r} must be a finite number, 0 or more")
    if increments == 0:
        return StreamAggregation(0.0, 0.0, 0.0, 0.0, 0.0, max(1, stream_shards), 1, 0.0, 0.0)
    hot = min(hottest, increments) if counters > 1 else increments
    others = max(0.0, counters - 1)
    cold = increments - hot if others else 0.0
    hot_shards = hot_stream_shards(hot, shards, stream_shards, wcu_per_increment)
    all_shards = max(stream_shards, hot_shards)
    factor = 2.0 if expiries else 1.0  # records per increment reaching the aggregator
    invocations = hot_writes = cold_writes = records = 0.0
    per_batch_hot = 0.0
    for count, hot_rate in ((hot_shards, hot / hot_shards), (all_shards - hot_shards, 0.0)):
        rate = hot_rate + cold / all_shards  # increments/s on one such stream shard
        if count <= 0 or rate <= 0:
            continue
        batch = min(float(batch_size), max(1.0, factor * rate * window_seconds))
        batches = factor * rate / batch
        span = batch / (factor * rate)  # seconds of this shard's records one batch holds
        hot_in, cold_in = hot_rate * span, cold / all_shards * span
        if hot_rate:
            per_batch_hot = hot_in
        invocations += count * batches
        records += count * batches * batch
        hot_writes += count * batches * _writes_per_batch(hot_in, shards / hot_shards)
        cold_writes += count * batches * _cold_per_batch(cold_in, others, max(1.0, shards / all_shards))
    return StreamAggregation(
        invocations, hot_writes, cold_writes, watermarks_held(hot, shards, guard_seconds),
        watermarks_held(cold / others if others else 0.0, shards, guard_seconds), all_shards, hot_shards,
        per_batch_hot, records / invocations if invocations else 0.0,
    )


def recompute_aggregation(*, increments: float, counters: float, batch_size: int, window_seconds: float,
                          stream_shards: int) -> tuple[float, float]:
    """The recompute layout's ``(invocations/s, recomputes/s)``: each batch recomputes every
    counter it touched, at most one per record and never more than there are counters."""
    invocations = stream_invocations(increments, batch_size=batch_size, window_seconds=window_seconds,
                                     stream_shards=stream_shards)
    per_batch = increments / invocations if invocations else 0.0
    return invocations, invocations * min(per_batch, counters)
