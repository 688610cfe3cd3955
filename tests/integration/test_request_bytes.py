"""Every request ``TableClient`` sends stays byte for byte what it was (golden/requests.json).

A fixed script of puts, gets, queries (plain, paged, filtered, projected, write-sharded), updates,
deletes, batch and transactional writes and refused calls runs on the shop model against DynamoDB
Local. A botocore ``before-call`` hook keeps the serialized body of every request (the JSON the
client would put on the wire, table name and client request token normalized) next to each call's
decoded result and, for refused calls, the error's type and message. The golden copy was written
by the code before its per-call work was cut, so a faster client must send, return and refuse
exactly the same. Regenerate (after a deliberate change only) with
``CONSTRUCTS_LIB_WRITE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.runtime import TableClient, attr
from constructs_lib.runtime.exceptions import RuntimeClientError
from examples.shop.model import shop_model

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden" / "requests.json"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _plain(value: Any) -> Any:
    """A JSON-able, deterministic form of a call's result (sets sorted, Decimals and bytes tagged)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"set": sorted(_plain(v) for v in value)}
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if hasattr(value, "items") and hasattr(value, "cursor"):  # a Page
        return {"items": _plain(list(value.items)), "has_cursor": value.cursor is not None}
    return {"repr": repr(value)}


def _orders() -> list[dict[str, Any]]:
    statuses = ("PENDING", "PAID", "SHIPPED", "CANCELLED")
    return [
        {"user_id": f"u{u}", "order_id": f"o{u}-{n}", "created_at": T0 + timedelta(minutes=7 * n + u),
         "status": statuses[(u + n) % 4], "total_cents": 990 + n, "note": f"order {n} of u{u}"}
        for u in range(2) for n in range(5)
    ]


def _script(table: TableClient) -> Iterator[tuple[str, Callable[[], Any], bool]]:
    """(step name, call, whether its requests run concurrently and are compared as a sorted list)."""
    orders = _orders()
    for o in orders:
        yield f"put {o['order_id']}", lambda o=o: table.put("Order", o), False
    yield "put order, every value kind", lambda: table.put("Order", {
        "user_id": "u9", "order_id": "o9#1%", "created_at": "2026-03-01T14:00:00+02:00", "status": "PAID",
        "total_cents": 10**20, "ratio": 0.25, "price": Decimal("12.50"), "flag": True, "off": False, "gone": None,
        "blob": b"\x00\x01", "tags": {"a"}, "nums": {3}, "lines": [1, "two", {"three": [Decimal("3.5")]}],
        "meta": {"nested": {"deep": "é ✓"}, "n": -7}, "line_count": 3, "big": 12345678901234567890,
    }), False
    yield "put create_only with condition", lambda: table.put(
        "Order", {**orders[0], "order_id": "o-new", "note": None}, create_only=True), False
    yield "put with condition", lambda: table.put(
        "Order", {**orders[1], "note": "conditional"}, condition=attr("status") == orders[1]["status"]), False
    yield "put product", lambda: table.put("Product", {"sku": "SKU-1", "name": "Pen", "price_cents": 150}), False
    yield "put line", lambda: table.put("OrderItem", {"order_id": "o0-0", "line": 7, "sku": "SKU-1", "quantity": 2}), False
    yield "put session with expiry", lambda: table.put(
        "Session", {"session_id": "s1", "user_id": "u0"}, expires_at=datetime(2030, 1, 1, tzinfo=UTC)), False
    yield "put user (creates version 1)", lambda: table.put("User", {"user_id": "u0", "email": "a@x.io", "name": "A"}), False
    yield "put user again (continues the stored version)", lambda: table.put(
        "User", {"user_id": "u0", "email": "b@x.io", "name": "B"}), False
    yield "put user expected_version", lambda: table.put(
        "User", {"user_id": "u0", "email": "c@x.io", "name": "C"}, expected_version=2), False
    key = {k: orders[2][k] for k in ("user_id", "created_at", "order_id")}
    yield "get", lambda: table.get("Order", **key), False
    yield "get consistent raw", lambda: table.get("Order", consistent=True, raw=True, **key), False
    yield "get projected", lambda: table.get("Order", attributes=["status", "line_count"], **key), False
    yield "get missing", lambda: table.get("Order", user_id="nobody", created_at=T0, order_id="x"), False
    yield "get user", lambda: table.get("User", user_id="u0"), False
    yield "query newest first", lambda: table.query("user's orders newest first", user_id="u0", limit=3), False

    def two_pages() -> Any:
        first = table.query("user's orders newest first", user_id="u1", limit=2)
        return [first, table.query("user's orders newest first", user_id="u1", limit=2, cursor=first.cursor)]

    yield "query two pages", two_pages, False
    yield "query date range", lambda: table.query(
        "orders in a date range", user_id="u0", created_at=(T0, T0 + timedelta(minutes=20))), False
    yield "query collection", lambda: table.query("user with orders", user_id="u0"), False
    yield "query by id", lambda: table.query("order by id", order_id="o1-3"), False
    yield "query pending", lambda: table.query(
        "pending orders by date", status="PENDING", created_at=(T0, T0 + timedelta(hours=1))), False
    yield "query filtered and projected", lambda: table.query(
        "user's orders newest first", user_id="u0", filter=attr("status") != "PAID", attributes=["status"]), False
    yield "query sharded", lambda: table.query("orders by status newest first", status="PAID", limit=2), True

    def sharded_pages() -> Any:
        first = table.query("orders by status newest first", status="SHIPPED", limit=1)
        return [first, table.query("orders by status newest first", status="SHIPPED", limit=1, cursor=first.cursor)]

    yield "query sharded two pages", sharded_pages, True
    yield "query_all sharded", lambda: list(table.query_all("orders by status newest first", status="CANCELLED")), True
    k3 = {k: orders[3][k] for k in ("user_id", "created_at", "order_id")}
    yield "update status", lambda: table.update("Order", key, set={"status": "SHIPPED", "note": "updated"}), False
    yield "update to pending, remove note", lambda: table.update("Order", k3, set={"status": "PENDING", "note": None}), False
    yield "update add and remove", lambda: table.update(
        "Order", k3, add={"views": 2}, remove=["ratio"], set={"total_cents": 5}), False
    yield "update with condition and expiry", lambda: table.update(
        "Order", k3, set={"note": "c"}, condition=attr("status") == "PENDING", expires_at=datetime(2031, 1, 1, tzinfo=UTC)), False
    yield "upsert", lambda: table.update(
        "Order", {"user_id": "u5", "created_at": T0, "order_id": "o5"}, set={"status": "PAID"}, must_exist=False), False
    yield "update user expected_version", lambda: table.update(
        "User", {"user_id": "u0"}, set={"name": "D"}, expected_version=3), False
    yield "delete", lambda: table.delete("Order", k3), False
    yield "delete must_exist with condition", lambda: table.delete(
        "Order", key, must_exist=True, condition=attr("status") == "SHIPPED"), False
    yield "delete user expected_version", lambda: table.delete("User", {"user_id": "u0"}, expected_version=4), False
    yield "batch_write", lambda: table.batch_write(
        puts=[("Order", o) for o in orders[5:8]], deletes=[("Product", {"sku": "SKU-1"})]), False
    yield "batch_get", lambda: table.batch_get(
        [("Order", {k: o[k] for k in ("user_id", "created_at", "order_id")}) for o in orders[4:7]]
        + [("Product", {"sku": "SKU-1"})]), False

    def transaction() -> None:
        with table.transaction(client_request_token="golden-request-bytes") as tx:
            tx.put("Order", {**orders[8], "note": "tx"}, create_only=False)
            tx.update("Order", {k: orders[9][k] for k in ("user_id", "created_at", "order_id")}, set={"note": "tx"})
            tx.condition_check("OrderItem", {"order_id": "o0-0", "line": 7})
            tx.delete("Session", {"session_id": "s1"})

    yield "transaction", transaction, False
    refused: list[tuple[str, Callable[[], Any]]] = [
        ("put missing required", lambda: table.put("Order", {"user_id": "u0", "order_id": "x", "created_at": T0})),
        ("put bad enum", lambda: table.put("Order", {**orders[0], "status": "LOST"})),
        ("put naive timestamp", lambda: table.put("Order", {**orders[0], "created_at": datetime(2026, 1, 1)})),
        ("put key attribute", lambda: table.put("Order", {**orders[0], "PK": "x"})),
        ("put oversize", lambda: table.put("Order", {**orders[0], "note": "x" * 410_000})),
        ("put oversize key", lambda: table.put("Order", {**orders[0], "order_id": "k" * 1100})),
        ("put nan", lambda: table.put("Order", {**orders[0], "ratio": float("nan")})),
        ("put empty set", lambda: table.put("Order", {**orders[0], "tags": set()})),
        ("put surrogate", lambda: table.put("Order", {**orders[0], "note": "\ud800"})),
        ("put surrogate key", lambda: table.put("Order", {**orders[0], "user_id": "\ud800"})),
        ("put not a str field", lambda: table.put("Order", {**orders[0], "user_id": 5})),
        ("put empty str field", lambda: table.put("Order", {**orders[0], "user_id": ""})),
        ("put number too wide", lambda: table.put("OrderItem", {"order_id": "o", "line": 10**5, "sku": "s", "quantity": 1})),
        ("put unknown entity", lambda: table.put("Nope", {})),
        ("put existing create_only", lambda: table.put("Product", {"sku": "SKU-2", "name": "P", "price_cents": 1},
                                                       create_only=True)),
        ("update key field", lambda: table.update("Order", key, set={"user_id": "u3"})),
        ("update partial index input", lambda: table.update("Order", key, set={"status": "PAID", "ratio": None,
                                                                              "views": None, "x": 1}) and None),
        ("get extra field", lambda: table.get("Order", status="PAID", **key)),
    ]
    for name, call in refused:
        yield name, call, False


def _run(table: TableClient, bodies: list[str]) -> list[dict[str, Any]]:
    out = []
    table.put("Product", {"sku": "SKU-2", "name": "P", "price_cents": 1})  # for "put existing create_only"
    for name, call, concurrent in _script(table):
        bodies.clear()
        try:
            result: Any = {"result": _plain(call())}
        except RuntimeClientError as exc:
            result = {"error": type(exc).__name__, "message": str(exc)}
        requests = sorted(bodies) if concurrent else list(bodies)
        out.append({"step": name, "requests": requests, **result})
    return out


@pytest.fixture
def recorded_table(
    synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., Any], dynamodb_local: Any,
) -> Iterator[tuple[TableClient, list[str]]]:
    deployment = local_deploy(synth_table_template(shop_model), name_prefix="golden-")
    (name,) = deployment.tables.values()
    client = dynamodb_local.client()  # a client of its own: the hook must not see other tests' calls
    bodies: list[str] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        body = params["body"].decode("utf-8").replace(name, "<table>")
        bodies.append(re.sub(r'"ClientRequestToken":\s*"[^"]*"', '"ClientRequestToken":"<token>"', body))

    client.meta.events.register("before-call.dynamodb", record)
    yield TableClient(shop_model, name, client=client), bodies


def test_requests_results_and_errors_match_the_golden_copy(recorded_table: tuple[TableClient, list[str]]) -> None:
    # GIVEN the shop model's table in DynamoDB Local and a hook keeping each serialized request body
    table, bodies = recorded_table
    # WHEN the fixed script of calls runs
    steps = _run(table, bodies)
    if os.environ.get("CONSTRUCTS_LIB_WRITE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(steps, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        pytest.skip(f"wrote {GOLDEN}")
    # THEN every step sent the same bytes, returned the same values and raised the same errors
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert [s["step"] for s in steps] == [s["step"] for s in golden]
    for got, want in zip(steps, golden, strict=True):
        assert got == want, got["step"]
