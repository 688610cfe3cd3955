"""Time-sortable identifiers (ULIDs), standard library only.

26 characters of Crockford base32: a 48-bit millisecond timestamp, then 80 random bits. ULIDs sort
by creation time as plain strings (and byte-wise, as DynamoDB compares keys) and contain no
character the key codec escapes, so they make good sort-key components (``ORDER#01HZX3...``).
Ids from the clock are strictly increasing across the threads of a process, even if the clock
steps back; only canonical ULIDs are accepted, so an id has one spelling.

See docs/adr/0004-sortable-key-values.md.
"""

from __future__ import annotations

import os
import re
import threading
from datetime import UTC, datetime, timedelta

from .exceptions import KeyValueError
from .key_segments import require_aware

__all__ = ["CROCKFORD_ALPHABET", "ULID_LENGTH", "is_ulid", "new_ulid", "ulid_timestamp"]

CROCKFORD_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_LENGTH = 26

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_RANDOM_BITS = 80
_RANDOM_BYTES = _RANDOM_BITS // 8
_MAX_RANDOM = (1 << _RANDOM_BITS) - 1
_DECODE = {ch: i for i, ch in enumerate(CROCKFORD_ALPHABET)}
_ULID_TEXT = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")


class _MonotonicState:
    """Last millisecond and random part handed out, guarded by a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last_ms = -1
        self.last_random = 0

    def next(self, ms: int | None) -> tuple[int, int]:
        """Return ``(ms, random_part)`` for the next id.

        ``ms=None`` reads the clock *inside* the lock and never goes below the last
        millisecond handed out (a clock stepping back keeps the previous millisecond), so
        every id is strictly greater than the one before it in this process.
        """
        with self.lock:
            if ms is None:
                ms = max(_now_ms(), self.last_ms)
            if ms == self.last_ms:
                random_part = self.last_random + 1
                if random_part > _MAX_RANDOM:
                    raise KeyValueError(
                        f"timestamp {ms} ms: the random part overflowed 80 bits; no more "
                        "monotonic ULIDs can be generated in this millisecond"
                    )
            else:
                random_part = int.from_bytes(os.urandom(_RANDOM_BYTES), "big")
            self.last_ms, self.last_random = ms, random_part
            return ms, random_part


def _now_ms() -> int:
    return (datetime.now(UTC) - _EPOCH) // timedelta(milliseconds=1)


# Ids from the clock and ids for explicit timestamps keep separate state, so an explicit
# timestamp in the future can never drag clock-based ids forward.
_CLOCK = _MonotonicState()
_EXPLICIT = _MonotonicState()


def _reset_after_fork() -> None:
    # A forked child must not continue the parent's sequence: both would increment the same
    # random part in the same millisecond and produce identical ids.
    global _CLOCK, _EXPLICIT
    _CLOCK, _EXPLICIT = _MonotonicState(), _MonotonicState()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _encode(number: int) -> str:
    chars = []
    for _ in range(ULID_LENGTH):
        chars.append(CROCKFORD_ALPHABET[number & 0x1F])
        number >>= 5
    return "".join(reversed(chars))


def _timestamp_ms(timestamp: datetime) -> int:
    require_aware(timestamp, "ULID timestamp")
    ms = (timestamp - _EPOCH) // timedelta(milliseconds=1)
    if ms < 0:
        raise KeyValueError(
            f"timestamp {_show(timestamp)} is before 1970-01-01T00:00:00Z; ULID timestamps "
            "cannot be negative"
        )
    return ms  # datetime's year 9999 limit is far below the 48-bit limit (year 10889)


def new_ulid(timestamp: datetime | None = None, *, randomness: bytes | None = None) -> str:
    """Return a new ULID.

    Parameters
    ----------
    timestamp : datetime, optional
        Timezone-aware moment the id stands for (truncated to the millisecond, not before
        1970). Default: now.
    randomness : bytes, optional
        Exactly 10 bytes to use as the random part, for reproducible ids (tests, fixtures).
        When given, the id is exactly ``timestamp`` + ``randomness`` and the monotonic state
        is neither used nor updated. Default: 80 bits from :func:`os.urandom`.

    Returns
    -------
    str
        26 uppercase Crockford base32 characters. Ids generated from the clock (no
        ``timestamp``, no ``randomness``) are strictly increasing within the process;
        ids for the same explicit millisecond are strictly increasing too.

    Raises
    ------
    KeyValueError
        If ``timestamp`` is naive, not a datetime or before 1970; if ``randomness`` is not
        10 bytes; or, in the astronomically unlikely case, if the random part overflows
        while keeping ids monotonic within one millisecond.
    """
    ms = None if timestamp is None else _timestamp_ms(timestamp)
    if randomness is not None:
        if not isinstance(randomness, (bytes, bytearray)) or len(randomness) != _RANDOM_BYTES:
            raise KeyValueError(
                f"randomness {_show(randomness)} is invalid; it must be exactly "
                f"{_RANDOM_BYTES} bytes"
            )
        ms = _now_ms() if ms is None else ms
        return _encode((ms << _RANDOM_BITS) | int.from_bytes(randomness, "big"))
    ms, random_part = (_CLOCK if ms is None else _EXPLICIT).next(ms)
    return _encode((ms << _RANDOM_BITS) | random_part)


def is_ulid(text: object) -> bool:
    """Return whether ``text`` is a canonical ULID (26 uppercase Crockford base32 characters).

    Parameters
    ----------
    text : object
        Anything; non-strings give ``False``.

    Returns
    -------
    bool
        ``True`` for canonical ULIDs only: lowercase, ``I``/``L``/``O``/``U``, wrong length
        and values above ``7ZZZZZZZZZZZZZZZZZZZZZZZZZ`` give ``False``.
    """
    return isinstance(text, str) and _ULID_TEXT.fullmatch(text) is not None


def ulid_timestamp(ulid: str) -> datetime:
    """Return the moment a ULID was created, as an aware UTC datetime (millisecond precision).

    Parameters
    ----------
    ulid : str
        A canonical ULID.

    Returns
    -------
    datetime
        Timezone-aware UTC datetime.

    Raises
    ------
    KeyValueError
        If ``ulid`` is not a canonical ULID, or its timestamp is beyond year 9999.
    """
    if not is_ulid(ulid):
        raise KeyValueError(
            f"{_show(ulid)} is not a ULID; a ULID is 26 uppercase Crockford base32 characters "
            "(0-9, A-Z without I, L, O, U) starting with 0-7"
        )
    ms = 0
    for ch in ulid[:10]:
        ms = (ms << 5) | _DECODE[ch]
    try:
        return _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        raise KeyValueError(
            f"{_show(ulid)} has a timestamp beyond year 9999; its time cannot be represented "
            "as a datetime"
        ) from None
