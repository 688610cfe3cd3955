"""Correct use of the shop's typed module: the type checker must find nothing here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from constructs_lib.runtime import TableClient
from constructs_lib.runtime.conditions import attr
from examples.shop.models_typed import EntityName, OrderItem, PatternName, ShopTable, UserItem


def use(client: TableClient) -> list[str]:
    shop = ShopTable(client)
    user: UserItem = shop.put_user({"user_id": "u1", "email": "ada@example.com", "name": "Ada"}, create_only=True)
    shop.put_product({"sku": "SKU-1", "name": "Teapot", "price_cents": 2500})
    created = datetime(2024, 6, 1, tzinfo=UTC)
    order: OrderItem = {"user_id": "u1", "order_id": "o1", "created_at": created, "status": "PENDING"}
    shop.put_order(order)
    shop.put_session({"session_id": "s1", "user_id": "u1"}, expires_in=timedelta(hours=1))
    found = shop.get_order(user_id="u1", created_at=created, order_id="o1", consistent=True)
    if found is not None:
        status: str = found["status"]
    shop.update_order(user_id="u1", created_at=created, order_id="o1", set={"status": "PAID"}, remove=["line_count"])
    shop.update_product(sku="SKU-1", add={"price_cents": 100})
    page = shop.users_orders_newest_first(user_id="u1", limit=10)
    names = [o["order_id"] for o in page.items]
    more = shop.users_orders_newest_first(user_id="u1", limit=10, cursor=page.cursor)
    names += [o["order_id"] for o in more]
    ranged = shop.orders_in_a_date_range(user_id="u1", created_at=(created, created + timedelta(days=7)))
    names += [o["order_id"] for o in ranged]
    for entry in shop.user_with_orders_all(user_id="u1"):
        if entry.get("_type") == "User":
            names.append(str(entry["user_id"]))
    paid = shop.orders_by_status_newest_first(status="PAID", limit=5)  # a merged read over the shards
    names += [o["order_id"] for o in paid]
    pending = shop.pending_orders_by_date(status="PENDING", created_at=("2024-01-01T00:00:00Z", created))
    names += [o["order_id"] for o in pending]
    with shop.transaction(client_request_token="req-1") as tx:
        tx.put_order({"user_id": "u1", "order_id": "o2", "created_at": created, "status": "PENDING"}, create_only=True)
        tx.put_order_item({"order_id": "o2", "line": 1, "sku": "SKU-1", "quantity": 1}).condition_check_user(user_id="u1")
    # Conditions, filters and projections, typed: attribute names of the entity only
    shop.update_order(user_id="u1", created_at=created, order_id="o1", set={"status": "SHIPPED"},
                      condition=attr("status") == "PAID")
    big = shop.users_orders_newest_first(user_id="u1", filter=attr("line_count") > 1, attributes=["order_id"])
    names += [o["order_id"] for o in big]
    email = shop.get_user(user_id="u1", attributes=["email", "name"])
    shop.delete_order(user_id="u1", created_at=created, order_id="o1", condition=attr("status").is_in("PAID"))
    # The untyped client, with the literal types of names:
    entity: EntityName = "Product"
    pattern: PatternName = "product by sku"
    client.get(entity, sku="SKU-1")
    client.query(pattern, sku="SKU-1")
    return [user["email"], status, *names, str(email)]
