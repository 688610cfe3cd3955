"""A documents function for the global-tables end-to-end test: put, update and delete a Doc
through ``TableClient.from_environment()``, as a deployed function would."""

from __future__ import annotations

from typing import Any

from constructs_lib.runtime import TableClient

_table: TableClient | None = None


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """``{"op": "put"|"update"|"delete", "doc_id": ..., "title": ...}`` -> the stored item (or the deleted one)."""
    global _table
    if _table is None:
        _table = TableClient.from_environment()
    key = {"doc_id": event["doc_id"]}
    if event["op"] == "put":
        return _table.put("Doc", {**key, "title": event["title"]})
    if event["op"] == "update":
        return _table.update("Doc", key, set={"title": event["title"]}, must_exist=True)
    return {"deleted": _table.delete("Doc", key)}
