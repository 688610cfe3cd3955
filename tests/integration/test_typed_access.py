"""The shop's generated typed module on DynamoDB Local: every method goes through TableClient,
on a table created from the synthesized template, and gives what the untyped client gives."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Model
from constructs_lib.runtime import (
    ItemExistsError,
    TableClient,
    TransactionCanceledError,
    VersionConflictError,
)
from constructs_lib.runtime.exceptions import ModelMismatchError
from constructs_lib.testing import LocalDeployment
from examples.shop.model import shop_model
from examples.shop.models_typed import ShopTable

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 9, 30, tzinfo=UTC)


@pytest.fixture
def table(synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., LocalDeployment],
          dynamodb_client: Any) -> TableClient:
    deployment = local_deploy(synth_table_template(shop_model), name_prefix="typed-")
    (name,) = deployment.tables.values()
    return TableClient(shop_model, name, client=dynamodb_client)


def test_typed_writes_reads_and_queries_match_the_untyped_client(table: TableClient) -> None:
    # GIVEN the typed wrapper around the client
    shop = ShopTable(table)
    # WHEN items are written through it
    user = shop.put_user({"user_id": "u1", "email": "ada@example.com", "name": "Ada"}, create_only=True)
    for i in range(5):
        shop.put_order({"user_id": "u1", "order_id": f"o{i}", "created_at": T0 + timedelta(days=i),
                        "status": "PENDING" if i % 2 else "PAID", "line_count": i})
    shop.put_order_item({"order_id": "o1", "line": 1, "sku": "SKU-1", "quantity": 2})
    # THEN they are what the untyped client reads back
    assert user["version"] == 1 and table.get("User", user_id="u1") == shop.get_user(user_id="u1")
    assert shop.get_order_item(order_id="o1", line=1) == {"order_id": "o1", "line": 1, "sku": "SKU-1",
                                                          "quantity": 2, "_type": "OrderItem"}
    assert shop.get_user(user_id="nobody") is None
    # AND a pattern method is the pattern, with its options (limit, cursor) passed through
    first = shop.users_orders_newest_first(user_id="u1", limit=2)
    assert [o["order_id"] for o in first.items] == ["o4", "o3"] and first.cursor is not None
    rest = shop.users_orders_newest_first(user_id="u1", limit=10, cursor=first.cursor)
    assert [o["order_id"] for o in rest] == ["o2", "o1", "o0"]
    assert list(shop.users_orders_newest_first_all(user_id="u1", descending=False)) == \
        list(table.query_all("user's orders newest first", user_id="u1", descending=False))
    ranged = shop.orders_in_a_date_range(user_id="u1", created_at=(T0 + timedelta(days=1), T0 + timedelta(days=3)))
    assert [o["order_id"] for o in ranged] == ["o1", "o2", "o3"]
    pending = shop.pending_orders_by_date(status="PENDING", created_at=(T0, T0 + timedelta(days=9)))
    assert sorted(o["order_id"] for o in pending) == ["o1", "o3"]
    paid = shop.orders_by_status_newest_first(status="PAID", limit=2)  # merged over the GSI's shards
    assert [o["order_id"] for o in paid] == ["o4", "o2"]
    assert paid.items == table.query("orders by status newest first", status="PAID", limit=2).items
    mixed = list(shop.user_with_orders_all(user_id="u1"))
    assert [e.get("_type") for e in mixed].count("User") == 1 and len(mixed) == 6
    assert [i["line"] for i in shop.items_of_an_order_all(order_id="o1")] == [1]
    assert shop.product_by_sku(sku="none").items == []


def test_typed_updates_and_deletes_keep_the_runtime_semantics(table: TableClient) -> None:
    shop = ShopTable(table)
    shop.put_user({"user_id": "u1", "email": "ada@example.com"})
    order = shop.put_order({"user_id": "u1", "order_id": "o1", "created_at": T0, "status": "PENDING"})
    key = {"user_id": "u1", "created_at": order["created_at"], "order_id": "o1"}
    # WHEN an update moves the order out of the sparse index THEN the pattern no longer finds it
    paid = shop.update_order(**key, set={"status": "PAID", "line_count": 3})
    assert paid["status"] == "PAID" and paid["line_count"] == 3
    assert shop.pending_orders_by_date(status="PENDING", created_at=(T0, T0 + timedelta(days=1))).items == []
    shop.update_order(**key, remove=["line_count"])
    assert "line_count" not in (shop.get_order(**key) or {})
    # AND the runtime's conditions still hold: create-only and versions raise their errors
    with pytest.raises(ItemExistsError):
        shop.put_user({"user_id": "u1", "email": "x@example.com"}, create_only=True)
    with pytest.raises(VersionConflictError):
        shop.update_user(user_id="u1", set={"name": "stale"}, expected_version=7)
    deleted = shop.delete_order(**key, must_exist=True)
    assert deleted is not None and deleted["order_id"] == "o1" and deleted["status"] == "PAID"
    assert shop.get_order(**key) is None and shop.delete_order(**key) is None


def test_a_client_of_another_model_is_refused(table: TableClient) -> None:
    # GIVEN a client whose model differs from the one the module was generated from (one more pattern)
    data = shop_model.to_dict()
    data["access_patterns"].append(AccessPattern("every product", entity="Product").to_dict())
    changed = Model.from_dict(data)
    # WHEN it is wrapped THEN ModelMismatchError, before any call
    with pytest.raises(ModelMismatchError, match="regenerate"):
        ShopTable(TableClient(changed, table.table_name, client=table.client))


def test_a_typed_transaction_commits_all_or_nothing(table: TableClient) -> None:
    shop = ShopTable(table)
    shop.put_user({"user_id": "u1", "email": "ada@example.com"})
    # WHEN an order and its line are written in one typed transaction, checked against the user
    with shop.transaction() as tx:
        tx.put_order({"user_id": "u1", "order_id": "o1", "created_at": T0, "status": "PENDING"}, create_only=True)
        tx.put_order_item({"order_id": "o1", "line": 1, "sku": "SKU-1", "quantity": 2}, create_only=True)
        tx.condition_check_user(user_id="u1")
    # THEN both are there
    assert [o["order_id"] for o in shop.order_by_id(order_id="o1")] == ["o1"]
    assert [i["sku"] for i in shop.items_of_an_order(order_id="o1")] == ["SKU-1"]
    # AND a transaction whose check fails writes nothing
    with pytest.raises(TransactionCanceledError):
        with shop.transaction() as tx:
            tx.put_order_item({"order_id": "o1", "line": 2, "sku": "SKU-2", "quantity": 1})
            tx.condition_check_user(user_id="nobody")
    assert [i["line"] for i in shop.items_of_an_order(order_id="o1")] == [1]


def test_conditions_filters_and_projections_pass_through(table: TableClient) -> None:
    from constructs_lib.runtime import ConditionNotMetError
    from constructs_lib.runtime.conditions import attr

    shop = ShopTable(table)
    shop.put_user({"user_id": "u1", "email": "ada@example.com", "name": "Ada"})
    for i in range(4):
        shop.put_order({"user_id": "u1", "order_id": f"o{i}", "created_at": T0 + timedelta(days=i),
                        "status": "PAID" if i % 2 else "PENDING", "line_count": i})
    key = {"user_id": "u1", "order_id": "o0", "created_at": T0}
    # WHEN a condition does not hold THEN the runtime's typed error, and nothing changed
    with pytest.raises(ConditionNotMetError):
        shop.update_order(**key, set={"status": "SHIPPED"}, condition=attr("status") == "PAID")
    assert (shop.get_order(**key) or {}).get("status") == "PENDING"
    shop.update_order(**key, set={"status": "SHIPPED"}, condition=attr("status") == "PENDING")
    # AND a filtered, projected query keeps its limit over the matching items
    page = shop.users_orders_newest_first(user_id="u1", filter=attr("line_count") >= 1, limit=2,
                                          attributes=["status"])
    assert [o["order_id"] for o in page] == ["o3", "o2"] and all("line_count" not in o for o in page)
    assert [o["order_id"] for o in shop.users_orders_newest_first_all(user_id="u1", filter=attr("status") == "PAID")] \
        == ["o3", "o1"]
    assert shop.get_user(user_id="u1", attributes=["name"]) == table.get("User", user_id="u1", attributes=["name"])
