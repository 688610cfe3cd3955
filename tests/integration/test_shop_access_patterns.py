"""Every declared access pattern of the shop model, on a table created from the synthesized
template in DynamoDB Local, returns exactly the expected items."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from constructs_lib.runtime import CursorError, KeyValueError, TableClient
from constructs_lib.runtime.exceptions import UnknownAccessPatternError

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def seeded(shop_table: TableClient) -> TableClient:
    """GIVEN two users, five orders of u1 over five days (two PENDING), one order of u2,
    order lines, a product and a session."""
    t = shop_table
    t.put("User", {"user_id": "u1", "email": "ada@example.com", "name": "Ada"})
    t.put("User", {"user_id": "u2", "email": "linus@example.com", "name": "Linus"})
    statuses = ["SHIPPED", "PENDING", "PAID", "PENDING", "CANCELLED"]
    for day, status in enumerate(statuses):
        t.put("Order", {"user_id": "u1", "order_id": f"o{day}", "created_at": T0 + timedelta(days=day), "status": status})
    t.put("Order", {"user_id": "u2", "order_id": "p0", "created_at": T0, "status": "PENDING"})
    for line in (1, 2, 10):
        t.put("OrderItem", {"order_id": "o1", "line": line, "sku": f"SKU-{line}", "quantity": line})
    t.put("OrderItem", {"order_id": "o10", "line": 1, "sku": "SKU-X", "quantity": 1})  # o10 must not leak into o1
    t.put("Product", {"sku": "SKU-1", "name": "Teapot", "price_cents": 2500})
    t.put("Session", {"session_id": "s1", "user_id": "u1"}, expires_in=timedelta(hours=1))
    return t


def ids(items: list[dict[str, Any]], field: str = "order_id") -> list[Any]:
    return [i[field] for i in items]


# Expected results per pattern: (values, check).
CASES: dict[str, tuple[dict[str, Any], Any]] = {
    "user profile": ({"user_id": "u1"}, lambda items: ids(items, "email") == ["ada@example.com"]),
    "user by email": ({"email": "linus@example.com"}, lambda items: ids(items, "user_id") == ["u2"]),
    "user's orders newest first": ({"user_id": "u1"}, lambda items: ids(items) == ["o4", "o3", "o2", "o1", "o0"]),
    "orders in a date range": (
        {"user_id": "u1", "created_at": (T0 + timedelta(days=1), T0 + timedelta(days=3))},
        lambda items: ids(items) == ["o1", "o2", "o3"],
    ),
    "user with orders": (
        {"user_id": "u1"},
        lambda items: sorted(i["_type"] for i in items) == ["Order"] * 5 + ["User"],
    ),
    "order by id": ({"order_id": "o3"}, lambda items: [(i["user_id"], i["status"]) for i in items] == [("u1", "PENDING")]),
    "items of an order": ({"order_id": "o1"}, lambda items: ids(items, "line") == [1, 2, 10]),
    "pending orders by date": (
        {"status": "PENDING", "created_at": (T0, T0 + timedelta(days=30))},
        lambda items: ids(items) == ["p0", "o1", "o3"],
    ),
    "orders by status newest first": (  # write-sharded GSI3: every shard read, merged newest first
        {"status": "PENDING"}, lambda items: ids(items) == ["o3", "o1", "p0"],
    ),
    "product by sku": ({"sku": "SKU-1"}, lambda items: ids(items, "name") == ["Teapot"]),
    "session by id": ({"session_id": "s1"}, lambda items: ids(items, "user_id") == ["u1"]),
}


def test_every_declared_pattern_has_a_case(seeded: TableClient) -> None:
    # GIVEN the model shipped in the asset WHEN compared with this file's cases
    # THEN every declared access pattern is covered (a new pattern must get a test)
    assert set(seeded.model.access_patterns) == set(CASES)


@pytest.mark.parametrize("pattern", sorted(CASES))
def test_access_pattern_returns_exactly_expected_items(seeded: TableClient, pattern: str) -> None:
    values, check = CASES[pattern]
    # WHEN the pattern is queried by name
    items = seeded.query(pattern, values).items
    # THEN exactly the expected items come back, as their entity
    assert check(items), items
    entity = seeded.model.access_patterns[pattern].entities
    assert {i["_type"] for i in items} <= set(entity)


def test_pending_orders_are_sorted_by_creation_time(seeded: TableClient) -> None:
    # WHEN the sparse index is read THEN items of all users come in created_at order
    items = seeded.query("pending orders by date", status="PENDING", created_at=(T0, T0 + timedelta(days=30))).items
    assert [i["created_at"] for i in items] == sorted(i["created_at"] for i in items)
    # AND no non-pending order is in the sparse index
    assert {i["order_id"] for i in items} == {"o1", "o3", "p0"}


def test_range_conditions_stay_within_the_entity(seeded: TableClient) -> None:
    # GIVEN the user partition holds a User item and Orders
    # WHEN the descending pattern is limited THEN pages hold only orders, newest first
    page = seeded.query("user's orders newest first", user_id="u1", limit=2)
    assert ids(page.items) == ["o4", "o3"] and page.cursor
    rest = seeded.query("user's orders newest first", user_id="u1", limit=10, cursor=page.cursor)
    assert ids(rest.items) == ["o2", "o1", "o0"]
    # AND ascending order can be requested per call
    asc = seeded.query("user's orders newest first", user_id="u1", descending=False)
    assert ids(asc.items) == ["o0", "o1", "o2", "o3", "o4"]


def test_cursor_of_another_query_is_rejected(seeded: TableClient) -> None:
    # GIVEN a cursor from u1's orders
    page = seeded.query("user's orders newest first", user_id="u1", limit=1)
    assert page.cursor
    # WHEN it is used for u2's orders THEN CursorError names it
    with pytest.raises(CursorError, match="different query"):
        seeded.query("user's orders newest first", user_id="u2", cursor=page.cursor)
    with pytest.raises(CursorError, match="malformed"):
        seeded.query("user's orders newest first", user_id="u1", cursor="not-a-cursor")


def test_unknown_pattern_and_missing_values_fail_before_any_call(seeded: TableClient) -> None:
    with pytest.raises(UnknownAccessPatternError, match="'all orders'"):
        seeded.query("all orders")
    with pytest.raises(KeyValueError, match="user_id"):
        seeded.query("user's orders newest first")
    with pytest.raises(KeyValueError, match=r"\(low, high\)"):
        seeded.query("orders in a date range", user_id="u1", created_at=T0)
