"""Views API of the viral-video example: count a view, read the views of a video.

Events (direct invocation, or an API Gateway integration's payload)::

    {"op": "view", "video_id": "v-1", "request_id": "9f1c..."}
    {"op": "views", "video_id": "v-1", "exact": false}
    {"op": "video", "video_id": "v-1"}

A view is one idempotent increment of the ``video_views`` counter (bound to this function with
``TableFunction(counters=[...])``): one conditional PutItem of an item keyed by the request id on
one of the family's shard partitions, so a retried request — same ``request_id`` — is counted
once (for the counter's idempotency window); the aggregator adds it to the video's total from
the table's stream. ``views`` reads that total (one GetItem, seconds behind) or, with ``exact``,
sums every shard and what the total holds (one strongly consistent BatchGetItem: exact once the
stream is drained, but N reads).

The function reads the table but writes only the counter's items: its role allows writes on
keys starting with ``COUNTER#video_views#`` and nothing else (videos are published by the
catalog, not by this API).
"""

from __future__ import annotations

from typing import Any

from constructs_lib.runtime import (
    CounterClient,
    IdempotencyKeyReusedError,
    KeyValueError,
    TableClient,
)

#: The counter family bound to this function (``ShardedCounter(name=...)``).
FAMILY = "video_views"

_table: TableClient | None = None
_views: CounterClient | None = None


def _clients() -> tuple[TableClient, CounterClient]:
    global _table, _views
    if _table is None or _views is None:  # built once per container, reused across invocations
        _table = TableClient.from_environment()
        _views = CounterClient.from_environment(FAMILY)
    return _table, _views


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    op = event.get("op") if isinstance(event, dict) else None
    table, views = _clients()
    try:
        if op == "view":
            request_id = event.get("request_id")
            if not isinstance(request_id, str) or not request_id:
                return {"ok": False, "error": f"request_id {request_id!r} must be a non-empty string: it makes a "
                                              "retried view count once"}
            done = views.increment(event["video_id"], idempotency_key=request_id)
            return {"ok": True, "shard": done.shard, "duplicate": done.duplicate}
        if op == "views":
            value = views.get(event["video_id"], exact=bool(event.get("exact")))
            at = value.aggregated_at.isoformat() if value.aggregated_at else None
            return {"ok": True, "views": value.total, "exact": value.exact, "aggregated_at": at}
        if op == "video":
            video = table.get("Video", video_id=event["video_id"])
            if video is None:
                return {"ok": False, "error": f"video {event['video_id']!r} not found"}
            return {"ok": True, "video": video, "views": views.get(event["video_id"]).total}
    except KeyError as exc:
        return {"ok": False, "error": f"op {op!r} needs field {exc.args[0]!r}"}
    except (IdempotencyKeyReusedError, KeyValueError) as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": False, "error": f"unknown op {op!r}"}
