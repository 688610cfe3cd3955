"""Documents API of the global example, deployed in every region of the table.

Events (direct invocation, or an API Gateway integration's payload)::

    {"op": "save", "doc_id": "d-1", "title": "Plan", "author": "ada"}
    {"op": "rename", "doc_id": "d-1", "title": "Plan v2"}
    {"op": "delete", "doc_id": "d-1"}
    {"op": "view", "doc_id": "d-1"}            # one view: an increment of doc_views
    {"op": "get", "doc_id": "d-1"}             # the document and its views (this region's total)

``TableClient.from_environment()`` reads ``CONSTRUCTS_LIB_REPLICA_REGIONS`` (set by the
construct on a replicated table) and ``AWS_REGION``: every write names the region it was made in.
``CounterClient.from_environment`` writes this region's shards only.
"""

from __future__ import annotations

from typing import Any

from constructs_lib.runtime import CounterClient, TableClient

#: The counter family bound to this function (``ShardedCounter(name=...)``).
FAMILY = "doc_views"

_table: TableClient | None = None
_views: CounterClient | None = None


def _clients() -> tuple[TableClient, CounterClient]:
    global _table, _views
    if _table is None or _views is None:  # built once per container, reused across invocations
        _table = TableClient.from_environment()
        _views = CounterClient.from_environment(FAMILY)
    return _table, _views


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    table, views = _clients()
    op, doc_id = event.get("op"), event.get("doc_id")
    key = {"doc_id": doc_id}
    if op == "save":
        item = table.put("Doc", {**key, "title": event["title"], "author": event.get("author", "unknown")})
        return {"ok": True, "doc": item}
    if op == "rename":
        return {"ok": True, "doc": table.update("Doc", key, set={"title": event["title"]}, must_exist=True)}
    if op == "delete":
        return {"ok": True, "deleted": table.delete("Doc", key) is not None}
    if op == "view":
        done = views.increment(str(doc_id))
        return {"ok": True, "shard": done.shard}
    if op == "get":
        doc = table.get("Doc", consistent=True, doc_id=doc_id)
        return {"ok": True, "doc": doc, "views": views.get(str(doc_id), consistent=True).total}
    return {"ok": False, "error": f"op {op!r} must be one of save, rename, delete, view, get"}
