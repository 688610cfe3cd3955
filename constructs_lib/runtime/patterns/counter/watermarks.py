"""Lane watermarks: the sequence number of the last stream record applied from a shard's lane.

A total keeps them in four maps ``wa``..``wd``, one per generation of ``guard_seconds`` (its number
modulo 4); a write sets its generation's map (creating it when missing), checks it and the previous
one, and removes the one before the previous: a total remembers about two generations, long enough
for any redelivery (docs/adr/0070-counters-at-their-cost-floor.md). Shipped with the aggregator only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
