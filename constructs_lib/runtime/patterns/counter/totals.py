"""The stream layout's total item: its attributes, lane watermarks and their generations.

A total (``SK = TOTAL``) holds ``count`` (the counter's value), ``e`` (what idempotent increments
added), ``f`` (the recompute layout's shards, folded in once) and, per shard, the sequence number
of the last stream record applied from that shard's partition key: its lane watermark. Watermarks
live in four maps ``wa``..``wd``, one per generation of ``guard_seconds`` (by its number modulo 4);
a write sets its own generation's map (creating it when missing), checks it and the previous one,
and removes the one before the previous, so a total keeps watermarks for about two generations:
long enough for any redelivery (docs/adr/0070-counters-at-their-cost-floor.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

#: Attributes of a total in the stream layout (``count`` and ``aggregated_at`` keep their names:
#: readers of either layout read the value the same way).
FORMAT_ATTR, STREAM_FORMAT = "fmt", 2
APPLIED_EVENTS, FOLDED, FOLD_TIME, REDRIVEN = "e", "f", "ft", "rd"
_LETTERS = "abcd"


def generation(now: float, guard_seconds: int) -> int:
    """The watermark generation of a moment (seconds since the epoch)."""
    return int(now // guard_seconds)


def generation_maps(gen: int) -> tuple[str, str, str]:
    """``(current, previous, expired)`` watermark map names of generation ``gen``."""
    def name(g: int) -> str:
        return "w" + _LETTERS[g % len(_LETTERS)]

    return name(gen), name(gen - 1), name(gen - 2)


def encode_seq(sequence_number: str) -> bytes:
    """A stream sequence number as bytes that compare as the numbers do: its length, then its
    big-endian digits (DynamoDB compares binary values byte by byte, unsigned)."""
    number = int(sequence_number)
    if number < 0:
        raise ValueError(f"sequence number {sequence_number!r} is negative")
    body = number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")
    return bytes((len(body),)) + body


def decode_seq(value: Any) -> int | None:
    """The number :func:`encode_seq` wrote (a ``bytes`` or boto3 ``Binary``), None if absent."""
    if value is None:
        return None
    raw = bytes(getattr(value, "value", value))
    return int.from_bytes(raw[1:], "big")


def watermark(item: Mapping[str, Any] | None, gen: int, shard: int) -> int | None:
    """The highest sequence number applied from ``shard``'s lane that a total still remembers."""
    if not item:
        return None
    current, previous, _ = generation_maps(gen)
    marks = [decode_seq((item.get(name) or {}).get(str(shard))) for name in (current, previous)]
    known = [m for m in marks if m is not None]
    return max(known) if known else None


def format_time(dt: datetime) -> str:
    """Fixed-width ISO-8601 UTC with microseconds: sorts as text in time order."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def applied_base(item: Mapping[str, Any] | None) -> int:
    """What a stream-layout total holds besides its shards' sums: idempotent increments applied
    plus the folded recompute-layout shards."""
    if not item:
        return 0
    return int(item.get(APPLIED_EVENTS, 0)) + int(item.get(FOLDED, 0))
