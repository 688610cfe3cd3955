"""Ingest API of the IoT example: writes a batch of sensor readings.

Event (direct invocation, or the body of a device gateway's request)::

    {"readings": [{"sensor_id": "s-1", "ts": "2024-06-30T23:55:00Z", "value": 21.5}, ...]}

Each reading goes to ``SENSOR#{sensor_id}#{ts:month}`` / ``{ts}`` (keys built by the bundled
runtime from the model) with ``expires_at`` = the reading's time + ``RETENTION_DAYS`` (the
runtime's TTL helper, epoch seconds). Readings are written with BatchWriteItem, 25 per call,
unprocessed items retried by the runtime. A reading that is malformed, or already older than
the retention (DynamoDB would delete it at once), is rejected and reported; the others are
written. Two readings of one sensor at the same instant are one item: the last one wins.

Reply::

    {"ok": true, "written": 118, "rejected": [{"index": 3, "error": "..."}], "partitions": ["SENSOR#s-1#2024-06", ...]}
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from constructs_lib.runtime import KeyValueError, TableClient, expiry

#: Environment variable holding the retention in days (set by the stack from the model).
ENV_RETENTION_DAYS = "RETENTION_DAYS"
#: Most readings one invocation accepts (a larger batch should be split by the caller).
MAX_READINGS = 1000

_table: TableClient | None = None


def _client() -> TableClient:
    global _table
    if _table is None:  # built once per container, reused across invocations
        _table = TableClient.from_environment()
    return _table


def retention() -> timedelta:
    """The retention from ``RETENTION_DAYS`` (a positive integer)."""
    text = os.environ.get(ENV_RETENTION_DAYS, "")
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"environment variable {ENV_RETENTION_DAYS}={text!r} must be a positive number of days")
    return timedelta(days=int(text))


def _reading(raw: Any, keep: timedelta, now: datetime) -> dict[str, Any]:
    """Validate one reading and add its TTL; raises ValueError/KeyValueError naming the problem."""
    if not isinstance(raw, dict):
        raise ValueError(f"reading {raw!r:.60} must be an object with sensor_id, ts and value")
    sensor_id, ts, value = raw.get("sensor_id"), raw.get("ts"), raw.get("value")
    if not isinstance(sensor_id, str) or not sensor_id:
        raise ValueError(f"sensor_id {sensor_id!r} must be a non-empty string")
    if not isinstance(ts, str):
        raise ValueError(f"ts {ts!r} must be an ISO-8601 timestamp string with a UTC offset")
    try:
        taken = datetime.fromisoformat(ts)
    except ValueError:
        raise ValueError(f"ts {ts!r} is not an ISO-8601 timestamp") from None
    if taken.tzinfo is None:
        raise ValueError(f"ts {ts!r} has no UTC offset; readings must say their time zone (e.g. 'Z')")
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise ValueError(f"value {value!r} must be a number")
    taken = taken.astimezone(UTC)
    if taken + keep <= now:
        raise ValueError(f"ts {ts!r} is older than the retention of {keep.days} days; it would expire at once")
    # The runtime's TTL helper: epoch seconds, rounded up, `keep` after the reading was taken.
    expires_at = expiry(expires_in=keep, now=taken)
    return {"sensor_id": sensor_id, "ts": taken, "value": value, "expires_at": expires_at}


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    readings = event.get("readings") if isinstance(event, dict) else None
    if not isinstance(readings, list) or not readings:
        return {"ok": False, "error": "event needs a non-empty list 'readings'"}
    if len(readings) > MAX_READINGS:
        return {"ok": False, "error": f"{len(readings)} readings in one event; at most {MAX_READINGS} are accepted"}
    table, keep, now = _client(), retention(), datetime.now(UTC)
    accepted: dict[tuple[str, datetime], dict[str, Any]] = {}
    rejected: list[dict[str, Any]] = []
    for index, raw in enumerate(readings):
        try:
            item = _reading(raw, keep, now)
            table.keys("Reading", **item)  # builds the key now: a bad sensor id is reported, not raised
        except (ValueError, KeyValueError) as exc:
            rejected.append({"index": index, "error": str(exc)})
            continue
        accepted[(item["sensor_id"], item["ts"])] = item  # same sensor and instant: last one wins
    if accepted:
        table.batch_write(puts=[("Reading", item) for item in accepted.values()])
    partitions = sorted({table.keys("Reading", **item)["PK"] for item in accepted.values()})
    return {"ok": not rejected, "written": len(accepted), "rejected": rejected, "partitions": partitions}
