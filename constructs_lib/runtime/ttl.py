"""TTL helpers: expiry times as epoch seconds, the unit DynamoDB's TTL reads.

:func:`expiry` turns ``expires_in``/``expires_at`` into an int; :func:`validate_ttl_value`
rejects values DynamoDB would silently ignore (milliseconds, years in the past, non-numbers).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from .exceptions import KeyValueError
from .key_segments import _show, _type_name, require_aware

__all__ = ["MAX_TTL_AGE", "epoch_seconds", "expiry", "now_utc", "validate_ttl_value"]

MAX_TTL_AGE = timedelta(days=5 * 365)
"""DynamoDB TTL ignores expiry times more than five years in the past."""

_MS_THRESHOLD = 10**11
"""Epoch seconds above this (year 5138) almost certainly are epoch milliseconds."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

def now_utc() -> datetime:
    """Return the current time as a timezone-aware UTC ``datetime``."""
    return datetime.now(UTC)




def epoch_seconds(dt: datetime) -> int:
    """Return whole seconds since the Unix epoch (floored) for an aware ``datetime``.

    Parameters
    ----------
    dt : datetime
        A timezone-aware datetime.

    Returns
    -------
    int
        ``floor((dt - 1970-01-01T00:00Z).total_seconds())``, computed exactly.

    Raises
    ------
    KeyValueError
        If ``dt`` is not a timezone-aware ``datetime``.
    """
    dt = require_aware(dt, "datetime")
    return (dt - _EPOCH) // timedelta(seconds=1)


def expiry(
    expires_in: timedelta | None = None,
    expires_at: datetime | None = None,
    *,
    now: datetime | None = None,
) -> int:
    """Return a TTL attribute value (epoch seconds) for an item.

    Give exactly one of ``expires_in`` and ``expires_at``. The result is rounded up to the
    next whole second, so an item never becomes eligible for deletion before the requested
    moment (DynamoDB deletes expired items some time after expiry, not exactly at it).

    Parameters
    ----------
    expires_in : timedelta, optional
        Positive time from ``now`` until expiry. Default ``None``.
    expires_at : datetime, optional
        Timezone-aware moment of expiry, after ``now``. Default ``None``.
    now : datetime, optional
        Timezone-aware current time. Default :func:`now_utc()`.

    Returns
    -------
    int
        Epoch seconds.

    Raises
    ------
    KeyValueError
        If both or neither are given, ``expires_in`` is not a positive ``timedelta``,
        ``expires_at`` / ``now`` are naive or not datetimes, or ``expires_at`` is not in the
        future.
    """
    if (expires_in is None) == (expires_at is None):
        raise KeyValueError(
            f"expires_in={_show(expires_in)} and expires_at={_show(expires_at)}: give exactly "
            "one of expires_in and expires_at"
        )
    current = now_utc() if now is None else require_aware(now, "now")
    if expires_in is not None:
        if not isinstance(expires_in, timedelta):
            raise KeyValueError(
                f"expires_in {_show(expires_in)} is a {_type_name(expires_in)}; it must be a "
                "positive timedelta"
            )
        if expires_in <= timedelta(0):
            raise KeyValueError(
                f"expires_in {_show(expires_in)} is not positive; an expiry must be in the future"
            )
        target = current + expires_in
    else:
        target = require_aware(expires_at, "expires_at")
        if target <= current:
            raise KeyValueError(
                f"expires_at {_show(expires_at)} is not after now ({current.isoformat()}); an "
                "expiry must be in the future"
            )
    # Ceiling division, exact (no float rounding): -floor(-x) == ceil(x).
    return -((_EPOCH - target) // timedelta(seconds=1))


def validate_ttl_value(value: Any, *, attribute: str, now: datetime | None = None) -> int:
    """Check a value about to be written to a TTL attribute.

    Parameters
    ----------
    value : int
        Epoch seconds. An integral ``Decimal`` (what boto3 returns when reading a number) is
        accepted and converted to ``int``; ``bool``, ``float``, ``str`` and the rest are not.
    attribute : str
        Name of the TTL attribute, used in error messages.
    now : datetime, optional
        Timezone-aware current time. Default :func:`now_utc()`.

    Returns
    -------
    int
        ``value`` as an ``int``.

    Raises
    ------
    KeyValueError
        If the value is not an integer, looks like epoch milliseconds (``> 10**11``), or is
        more than five years in the past (DynamoDB TTL ignores such items, so they would
        never expire).
    """
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        number = int(value)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise KeyValueError(
            f"TTL attribute {attribute!r}: {_show(value)} is a {_type_name(value)}; TTL values "
            "must be an int of epoch seconds"
        )
    else:
        number = value
    if number > _MS_THRESHOLD:
        raise KeyValueError(
            f"TTL attribute {attribute!r}: {_show(value)} looks like epoch milliseconds; TTL "
            "values must be epoch seconds (divide by 1000)"
        )
    current = now_utc() if now is None else require_aware(now, "now")
    oldest = epoch_seconds(current - MAX_TTL_AGE)
    if number < oldest:
        raise KeyValueError(
            f"TTL attribute {attribute!r}: {_show(value)} is more than five years in the past; "
            "DynamoDB TTL ignores such values, so the item would never expire"
        )
    return number
