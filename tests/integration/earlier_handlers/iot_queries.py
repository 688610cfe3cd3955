"""Query API of the IoT example: sensor metadata, a site's sensors, and time ranges of readings.

Events (direct invocation)::

    {"op": "sensor", "sensor_id": "s-1"}
    {"op": "sensors_of_site", "site_id": "plant-a"}
    {"op": "last_hour", "sensor_id": "s-1", "now": "2024-07-01T00:20:00Z"}      (now optional)
    {"op": "readings_between", "sensor_id": "s-1", "start": "...", "end": "..."}
    {"op": "month", "sensor_id": "s-1", "month": "2024-07"}

Readings live in one partition per sensor and calendar month (``SENSOR#s-1#2024-07``). A
time range is read by :func:`readings_between`: the pattern "readings of a sensor in a time
range" (``SK BETWEEN start AND end``) on each month partition the range touches
(``TableClient.range_partitions``) — two when the last hour straddles midnight at the turn of a
month — in time order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from constructs_lib.runtime import KeyValueError, TableClient, bucket

#: Granularity of the readings' partition key (``{ts:month}`` in the model).
BUCKET = "month"
#: Readings read per Query page.
PAGE_SIZE = 100
#: The access pattern of a time range (``BETWEEN`` on the sort key, per month partition).
TIME_RANGE = "readings of a sensor in a time range"

_table: TableClient | None = None


def _client() -> TableClient:
    global _table
    if _table is None:  # built once per container, reused across invocations
        _table = TableClient.from_environment()
    return _table


def _bucket_start(bucket: str) -> datetime:
    """First instant of a ``YYYY-MM`` month bucket, UTC."""
    year, month = bucket.split("-")
    return datetime(int(year), int(month), 1, tzinfo=UTC)


def _instant(value: Any, name: str) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise KeyValueError(f"{name} {value!r} is not an ISO-8601 timestamp") from None
    else:
        raise KeyValueError(f"{name} {value!r} must be an ISO-8601 timestamp string or an aware datetime")
    if moment.tzinfo is None:
        raise KeyValueError(f"{name} {value!r} has no UTC offset; give one (e.g. 'Z')")
    return moment.astimezone(UTC)


def _plain(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items as JSON-ready dicts (non-integral numbers come back from DynamoDB as Decimal)."""
    return [{k: float(v) if isinstance(v, Decimal) else v for k, v in item.items()} for item in items]


def readings_between(
    table: TableClient, sensor_id: str, start: datetime, end: datetime, *, page_size: int = PAGE_SIZE
) -> tuple[list[dict[str, Any]], list[str], int]:
    """Every reading of ``sensor_id`` with ``start <= ts <= end``, oldest first.

    Parameters
    ----------
    table : TableClient
        A client on the IoT table (model ``iot``).
    sensor_id : str
        The sensor.
    start, end : datetime
        Timezone-aware bounds, inclusive; ``start <= end``. The range may span any number of
        month buckets (at most 10,000, :data:`constructs_lib.runtime.buckets.MAX_BUCKETS`).
    page_size : int, optional
        Items per Query page. Default :data:`PAGE_SIZE` (100).

    Returns
    -------
    tuple[list[dict], list[str], int]
        The readings, the month buckets queried (one partition each) and the number of Query
        calls made.

    Raises
    ------
    KeyValueError
        Naive datetimes, ``start`` after ``end``, or a sensor id that cannot be keyed.
    """
    ts = (start, end)
    # One instant per month partition the range touches (None: the range's own bucket). A range
    # over several partitions is read partition by partition with partition_at= (query_all does
    # the same in one call).
    partitions = table.range_partitions(TIME_RANGE, sensor_id=sensor_id, ts=ts) or [start]
    found: list[dict[str, Any]] = []
    queries = 0
    for at in partitions:
        cursor: str | None = None
        while True:
            page = table.query(TIME_RANGE, sensor_id=sensor_id, ts=ts, partition_at=at, limit=page_size, cursor=cursor)
            queries += 1
            found += page.items
            cursor = page.cursor
            if cursor is None:
                break
    return found, [bucket(at, BUCKET, field="Reading.ts") for at in partitions], queries


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    op = event.get("op") if isinstance(event, dict) else None
    table = _client()
    try:
        if op == "sensor":
            sensor = table.query("sensor metadata", sensor_id=event["sensor_id"]).items
            return {"ok": bool(sensor), "sensor": _plain(sensor)[0] if sensor else None}
        if op == "sensors_of_site":
            sensors = list(table.query_all("sensors of a site", site_id=event["site_id"]))
            return {"ok": True, "sensors": _plain(sensors)}
        if op in ("last_hour", "readings_between"):
            if op == "last_hour":
                end = _instant(event["now"], "now") if event.get("now") else datetime.now(UTC)
                start = end - timedelta(hours=1)
            else:
                start, end = _instant(event.get("start"), "start"), _instant(event.get("end"), "end")
            readings, buckets, queries = readings_between(table, event["sensor_id"], start, end)
            return {"ok": True, "readings": _plain(readings), "buckets": buckets, "queries": queries,
                    "start": start.isoformat(), "end": end.isoformat()}
        if op == "month":
            month = str(event["month"])
            # Any instant of the month selects its bucket; the whole partition is the month.
            readings = list(table.query_all("readings of a sensor in a month", sensor_id=event["sensor_id"],
                                            ts=f"{month}-01"))
            return {"ok": True, "readings": _plain(readings), "partition": table.keys(
                "Reading", sensor_id=event["sensor_id"], ts=_bucket_start(month))["PK"]}
    except KeyError as exc:
        return {"ok": False, "error": f"op {op!r} needs field {exc.args[0]!r}"}
    except (KeyValueError, ValueError) as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": False, "error": f"unknown op {op!r}"}
