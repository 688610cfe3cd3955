"""Orders API: a Lambda handler that uses only the bundled runtime client.

Events (direct invocation)::

    {"op": "place_order", "user_id": "u1", "lines": [{"sku": "SKU-1", "quantity": 2}]}
    {"op": "list_orders", "user_id": "u1", "limit": 10, "cursor": null}
    {"op": "get_order", "order_id": "01J..."}
    {"op": "orders_by_status", "status": "PAID", "limit": 10, "cursor": null}
    {"op": "mark_paid", "user_id": "u1", "created_at": "...", "order_id": "01J..."}
    {"op": "mark_shipped", ...the same key}   (only a PAID order)
    {"op": "view_product", "sku": "SKU-1", "request_id": "req-123"}   (request_id optional)
    {"op": "product_views", "sku": "SKU-1", "exact": false}
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from constructs_lib.runtime import ConditionNotMetError, CounterClient, TableClient, attr, new_ulid

_table: TableClient | None = None
_views: CounterClient | None = None


def _client() -> TableClient:
    global _table
    if _table is None:  # built once per container, reused across invocations
        _table = TableClient.from_environment()
    return _table


def _view_counter() -> CounterClient:
    global _views
    if _views is None:  # the ShardedCounter bound to this function put its spec in the environment
        _views = CounterClient.from_environment("product_views")
    return _views


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    op = event.get("op")
    table = _client()
    if op == "place_order":
        lines = event.get("lines") or []
        if not lines:
            return {"ok": False, "error": "an order needs at least one line"}
        order_id = new_ulid()
        created_at = datetime.now(UTC)
        # The order and its lines are written atomically; create_only makes a duplicate id fail
        # instead of overwriting.
        with table.transaction() as tx:
            tx.put("Order", {"user_id": event["user_id"], "order_id": order_id, "created_at": created_at,
                             "status": "PENDING", "line_count": len(lines)}, create_only=True)
            for n, line in enumerate(lines, start=1):
                tx.put("OrderItem", {"order_id": order_id, "line": n, "sku": line["sku"],
                                     "quantity": int(line["quantity"])}, create_only=True)
        return {"ok": True, "order_id": order_id, "created_at": created_at.isoformat()}
    if op == "list_orders":
        page = table.query("user's orders newest first", user_id=event["user_id"],
                           limit=event.get("limit", 20), cursor=event.get("cursor"))
        return {"ok": True, "orders": page.items, "cursor": page.cursor}
    if op == "get_order":
        orders = table.query("order by id", order_id=event["order_id"]).items
        if not orders:
            return {"ok": False, "error": f"order {event['order_id']!r} not found"}
        items = table.query("items of an order", order_id=event["order_id"]).items
        return {"ok": True, "order": orders[0], "items": items}
    if op == "orders_by_status":
        # GSI3 is write-sharded: one Query per shard, in parallel, merged newest first.
        page = table.query("orders by status newest first", status=event["status"],
                           limit=event.get("limit", 20), cursor=event.get("cursor"))
        return {"ok": True, "orders": page.items, "cursor": page.cursor}
    if op == "mark_paid":
        key = {k: event[k] for k in ("user_id", "created_at", "order_id")}
        order = table.update("Order", key, set={"status": "PAID"})
        return {"ok": True, "order": order}
    if op == "mark_shipped":
        key = {k: event[k] for k in ("user_id", "created_at", "order_id")}
        try:  # a conditional write
            order = table.update("Order", key, set={"status": "SHIPPED"}, condition=attr("status") == "PAID")
        except ConditionNotMetError as exc:
            return {"ok": False, "error": "only a PAID order can be shipped", "status": (exc.item or {}).get("status")}
        return {"ok": True, "order": order}
    if op == "view_product":
        # A retried request (same request_id) is counted once.
        done = _view_counter().increment(event["sku"], idempotency_key=event.get("request_id"))
        return {"ok": True, "shard": done.shard, "duplicate": done.duplicate}
    if op == "product_views":
        value = _view_counter().get(event["sku"], exact=bool(event.get("exact")))
        at = value.aggregated_at.isoformat() if value.aggregated_at else None
        return {"ok": True, "views": value.total, "aggregated_at": at, "exact": value.exact}
    return {"ok": False, "error": f"unknown op {op!r}"}
