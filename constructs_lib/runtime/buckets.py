"""Time buckets: ``SENSOR#1#2024-06`` — partition time series by year/month/day/hour/minute/ISO week.

A ``{field:month}`` placeholder in a key template encodes its timestamp or date field through
:func:`bucket`; :func:`bucket_range` lists the buckets a time range spans, for fanning a
range read out over bucketed partitions. Timestamps are bucketed in UTC.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any, Literal, get_args

from .exceptions import KeyValueError
from .key_segments import _DATE_TEXT, _date, _fail, _show, _timestamp, _type_name, _where

__all__ = ["GRANULARITIES", "MAX_BUCKETS", "Granularity", "bucket", "bucket_range"]

Granularity = Literal["year", "month", "day", "hour", "minute", "week"]
GRANULARITIES: tuple[str, ...] = get_args(Granularity)

MAX_BUCKETS = 10_000
"""Most buckets :func:`bucket_range` returns before refusing (a fan-out that large is a bug)."""

def _check_granularity(granularity: Any, field: str) -> None:
    if granularity not in GRANULARITIES:
        raise KeyValueError(
            f"{_where(field)}unknown bucket granularity {_show(granularity)}; granularity "
            f"must be one of {', '.join(GRANULARITIES)}"
        )


def _instant(value: Any, field: str) -> datetime | date:
    """An aware UTC datetime for timestamps, a date for dates and 'YYYY-MM-DD' strings."""
    if isinstance(value, datetime):
        return _timestamp(value, field)
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _DATE_TEXT.fullmatch(value):
        return _date(value, field)
    if isinstance(value, str):
        return _timestamp(value, field)
    raise _fail(
        field,
        value,
        f"is a {_type_name(value)}; buckets need a timezone-aware datetime, an ISO-8601 "
        "timestamp string, a date or a 'YYYY-MM-DD' string",
    )


def _format_bucket(value: datetime | date, granularity: str) -> str:
    if granularity == "year":
        return f"{value.year:04d}"
    if granularity == "month":
        return f"{value.year:04d}-{value.month:02d}"
    if granularity == "day":
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if granularity == "week":
        iso_year, week, _ = value.isocalendar()
        return f"{iso_year:04d}-W{week:02d}"
    assert isinstance(value, datetime)
    hour = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}"
    if granularity == "hour":
        return hour
    return f"{hour}:{value.minute:02d}"


def _require_time(value: datetime | date, original: Any, granularity: str, field: str) -> None:
    if not isinstance(value, datetime):
        raise _fail(
            field,
            original,
            f"is a date; {granularity!r} buckets need a timestamp (a date has no time of day)",
        )


def bucket(value: Any, granularity: Granularity, *, field: str = "?") -> str:
    """Return the time bucket a timestamp or date falls in.

    Parameters
    ----------
    value : datetime | date | str
        A timezone-aware ``datetime``, an ISO-8601 timestamp string with offset, a ``date`` or
        a ``"YYYY-MM-DD"`` string. Timestamps are bucketed in UTC.
    granularity : {"year", "month", "day", "hour", "minute", "week"}
        Bucket size. ``"week"`` is the ISO week (weeks start on Monday; the ISO year may
        differ from the calendar year around New Year).
    field : str, optional
        Field name used in error messages. Default ``"?"``.

    Returns
    -------
    str
        ``2024``, ``2024-06``, ``2024-06-01``, ``2024-06-01T13``, ``2024-06-01T13:05`` or
        ``2024-W23``. Buckets of one granularity sort in time order.

    Raises
    ------
    KeyValueError
        For an unknown granularity, a value that is not a valid timestamp/date, or a date
        with ``"hour"``/``"minute"``.
    """
    _check_granularity(granularity, field)
    instant = _instant(value, field)
    if granularity in ("hour", "minute"):
        _require_time(instant, value, granularity, field)
    return _format_bucket(instant, granularity)


def bucket_range(
    start: Any,
    end: Any,
    granularity: Granularity,
    *,
    field: str = "?",
    max_buckets: int = MAX_BUCKETS,
) -> list[str]:
    """List the buckets covering ``[start, end]`` inclusive, in time order.

    Use it to fan a time-bucketed query out over every partition a period touches.

    Parameters
    ----------
    start, end : datetime | date | str
        As for :func:`bucket`. ``start`` must not be after ``end``.
    granularity : {"year", "month", "day", "hour", "minute", "week"}
        Bucket size.
    field : str, optional
        Field name used in error messages. Default ``"?"``.
    max_buckets : int, optional
        Refuse ranges needing more buckets than this. Default ``MAX_BUCKETS`` (10,000).

    Returns
    -------
    list[str]
        ``[bucket(start), ..., bucket(end)]`` with every bucket in between, no duplicates.

    Raises
    ------
    KeyValueError
        For invalid values, ``start`` after ``end``, or more than ``max_buckets`` buckets.
    """
    _check_granularity(granularity, field)
    lo, hi = _instant(start, field), _instant(end, field)
    if granularity in ("hour", "minute"):
        _require_time(lo, start, granularity, field)
        _require_time(hi, end, granularity, field)
    if type(lo) is type(hi) or (isinstance(lo, datetime) and isinstance(hi, datetime)):
        after = lo > hi
    else:  # one date, one timestamp: compare by UTC day
        lo_day = lo.date() if isinstance(lo, datetime) else lo
        hi_day = hi.date() if isinstance(hi, datetime) else hi
        after = lo_day > hi_day
    if after:
        raise KeyValueError(
            f"{_where(field)}start {_show(start)} is after end {_show(end)}; a bucket range "
            "needs start <= end"
        )

    count, first = _bucket_count_and_first(lo, hi, granularity)
    if count > max_buckets:
        raise KeyValueError(
            f"{_where(field)}range {_show(start)} .. {_show(end)} spans {count} "
            f"{granularity} buckets; at most {max_buckets} buckets are allowed (use a coarser "
            "granularity or a shorter range)"
        )
    return [_format_bucket(item, granularity) for item in _bucket_steps(first, count, granularity)]


def _day(value: datetime | date) -> date:
    return value.date() if isinstance(value, datetime) else value


def _bucket_count_and_first(
    lo: datetime | date, hi: datetime | date, granularity: str
) -> tuple[int, datetime | date]:
    if granularity == "year":
        return hi.year - lo.year + 1, date(lo.year, 1, 1)
    if granularity == "month":
        return (hi.year - lo.year) * 12 + hi.month - lo.month + 1, date(lo.year, lo.month, 1)
    if granularity == "day":
        return (_day(hi) - _day(lo)).days + 1, _day(lo)
    if granularity == "week":
        lo_monday = _day(lo) - timedelta(days=_day(lo).weekday())
        hi_monday = _day(hi) - timedelta(days=_day(hi).weekday())
        return (hi_monday - lo_monday).days // 7 + 1, lo_monday
    assert isinstance(lo, datetime) and isinstance(hi, datetime)
    if granularity == "hour":
        lo_t, hi_t, step = lo.replace(minute=0, second=0, microsecond=0), hi, timedelta(hours=1)
    else:
        lo_t, hi_t, step = lo.replace(second=0, microsecond=0), hi, timedelta(minutes=1)
    return (hi_t - lo_t) // step + 1, lo_t


def _bucket_steps(first: datetime | date, count: int, granularity: str) -> list[datetime | date]:
    if granularity in ("year", "month"):
        months = 12 if granularity == "year" else 1
        out: list[datetime | date] = []
        index = first.year * 12 + first.month - 1
        for _ in range(count):
            out.append(date(index // 12, index % 12 + 1, 1))
            index += months
        return out
    step = {
        "day": timedelta(days=1),
        "week": timedelta(days=7),
        "hour": timedelta(hours=1),
        "minute": timedelta(minutes=1),
    }[granularity]
    return [first + step * i for i in range(count)]



def range_partitions(template: Any, field: str, pair: Any) -> list[datetime | date] | None:
    """The partitions a ``between`` range on ``field`` touches when the partition-key ``template``
    buckets that same field (``SENSOR#{id}#{ts:month}`` with ``ts`` in ``(low, high)``).

    Returns one instant per bucket, in time order — the first instant of each bucket (``low``
    itself for the first) — to build each partition key from; or None when the template does not
    bucket ``field`` or ``pair`` is not a ``(low, high)`` pair (the caller reports that).
    """
    granularity = next(
        (seg.bucket for seg in getattr(template, "segments", ()) if getattr(seg, "field", None) == field
         and getattr(seg, "bucket", None)), None,
    )
    if granularity is None or not isinstance(pair, (tuple, list)) or len(pair) != 2:
        return None
    names = bucket_range(pair[0], pair[1], granularity, field=field)  # validates both ends
    lo = _instant(pair[0], field)
    count, first = _bucket_count_and_first(lo, _instant(pair[1], field), granularity)
    starts = _bucket_steps(first, count, granularity)
    assert len(starts) == len(names)
    return [lo, *starts[1:]]
