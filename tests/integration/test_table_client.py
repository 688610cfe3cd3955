"""TableClient semantics on DynamoDB Local, on tables created from synthesized templates:
derived keys on partial updates, sparse membership, optimistic locking, batches,
pagination and transactions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model
from constructs_lib.runtime import (
    ItemExistsError,
    ItemNotFoundError,
    TableClient,
    TransactionCanceledError,
    VersionConflictError,
)
from constructs_lib.runtime.exceptions import UpdateRejectedError
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, tzinfo=UTC)

# A model with a presence-based sparse index ("flagged tickets") and an LSI.
TICKETS = Model(
    "tickets",
    entities=[
        Entity(
            "Ticket",
            pk="PROJECT#{project}",
            sk="TICKET#{ticket_id}",
            fields={"project": "string", "ticket_id": "string", "flagged_at": "timestamp", "priority": "number:3"},
            indexes={
                "Flagged": IndexKey(pk="FLAGGED#{project}", sk="{flagged_at}#{ticket_id}", when_present="flagged_at"),
                "ByPriority": IndexKey(sk="PRIO#{priority}#{ticket_id}"),
            },
        )
    ],
    indexes=[Index("Flagged", projection="KEYS_ONLY"), Index("ByPriority", kind="LSI")],
    access_patterns=[
        AccessPattern("flagged tickets of a project", entity="Ticket", index="Flagged"),
        AccessPattern("tickets by priority", entity="Ticket", index="ByPriority", sk="<=", sk_fields=("priority",)),
        AccessPattern("tickets of a project", entity="Ticket", sk="begins_with"),
    ],
)


@pytest.fixture
def tickets(synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., LocalDeployment],
            dynamodb_client: Any) -> TableClient:
    deployment = local_deploy(synth_table_template(TICKETS), name_prefix="tickets-")
    (name,) = deployment.tables.values()
    return TableClient(TICKETS, name, client=dynamodb_client)


def order(i: int, status: str = "PENDING", user: str = "u1") -> dict[str, Any]:
    return {"user_id": user, "order_id": f"o{i:04d}", "created_at": T0 + timedelta(minutes=i), "status": status}


def order_key(i: int, user: str = "u1") -> dict[str, Any]:
    o = order(i, user=user)
    return {k: o[k] for k in ("user_id", "order_id", "created_at")}


def test_partial_update_of_a_gsi_input_moves_the_item_in_that_gsi(shop_table: TableClient) -> None:
    # GIVEN a user found by email on GSI1
    shop_table.put("User", {"user_id": "u1", "email": "old@example.com"})
    assert len(shop_table.query("user by email", email="old@example.com")) == 1
    # WHEN only the email is updated
    shop_table.update("User", {"user_id": "u1"}, set={"email": "new@example.com"})
    # THEN the old GSI key finds nothing and the new one finds the user
    assert shop_table.query("user by email", email="old@example.com").items == []
    assert [u["user_id"] for u in shop_table.query("user by email", email="new@example.com")] == ["u1"]


def test_status_change_moves_order_out_of_and_back_into_sparse_gsi(shop_table: TableClient) -> None:
    # GIVEN a pending order (in sparse GSI2)
    shop_table.put("Order", order(1))
    window = {"status": "PENDING", "created_at": (T0, T0 + timedelta(days=1))}
    assert len(shop_table.query("pending orders by date", window)) == 1
    # WHEN it is marked shipped THEN it leaves GSI2 (its GSI2 keys are removed)
    shop_table.update("Order", order_key(1), set={"status": "SHIPPED"})
    assert shop_table.query("pending orders by date", window).items == []
    raw = shop_table.get("Order", raw=True, **order_key(1))
    assert raw is not None and "GSI2PK" not in raw and "GSI2SK" not in raw and raw["GSI1PK"] == "ORDER#o0001"
    # WHEN it goes back to pending THEN it is in GSI2 again
    shop_table.update("Order", order_key(1), set={"status": "PENDING"})
    assert [o["order_id"] for o in shop_table.query("pending orders by date", window)] == ["o0001"]


def test_removing_the_sparse_attribute_removes_the_item_from_the_sparse_gsi(tickets: TableClient) -> None:
    # GIVEN two tickets, one flagged
    tickets.put("Ticket", {"project": "p", "ticket_id": "t1", "priority": 1, "flagged_at": T0})
    tickets.put("Ticket", {"project": "p", "ticket_id": "t2", "priority": 5})
    assert [t["ticket_id"] for t in tickets.query("flagged tickets of a project", project="p")] == ["t1"]
    # WHEN the flag attribute is removed by a partial update
    tickets.update("Ticket", {"project": "p", "ticket_id": "t1"}, remove=["flagged_at"])
    # THEN the ticket is gone from the sparse index, and setting it again brings t2 in
    assert tickets.query("flagged tickets of a project", project="p").items == []
    tickets.update("Ticket", {"project": "p", "ticket_id": "t2"}, set={"flagged_at": T0 + timedelta(hours=1)})
    flagged = tickets.query("flagged tickets of a project", project="p").items
    # AND a KEYS_ONLY index still returns the entity with fields parsed back from its keys
    assert [(t["_type"], t["ticket_id"], t["project"]) for t in flagged] == [("Ticket", "t2", "p")]


def test_lsi_range_condition_and_update_of_lsi_input(tickets: TableClient) -> None:
    # GIVEN tickets with priorities 1, 5, 9
    for tid, prio in (("a", 1), ("b", 5), ("c", 9)):
        tickets.put("Ticket", {"project": "p", "ticket_id": tid, "priority": prio})
    # WHEN queried with priority <= 5 on the LSI THEN a and b, in priority order
    assert [t["ticket_id"] for t in tickets.query("tickets by priority", project="p", priority=5)] == ["a", "b"]
    # WHEN c's priority drops to 2 (an LSI input) THEN the LSI key follows
    tickets.update("Ticket", {"project": "p", "ticket_id": "c"}, set={"priority": 2})
    assert [t["ticket_id"] for t in tickets.query("tickets by priority", project="p", priority=5)] == ["a", "c", "b"]


def test_update_rejects_a_template_input_without_its_partner(tickets: TableClient) -> None:
    # GIVEN a model where the LSI sort key needs priority and ticket_id (ticket_id comes from the key)
    tickets.put("Ticket", {"project": "p", "ticket_id": "t1", "priority": 3})
    # WHEN a table-key field is updated THEN rejected before any call, item unchanged
    with pytest.raises(UpdateRejectedError, match="ticket_id"):
        tickets.update("Ticket", {"project": "p", "ticket_id": "t1"}, set={"ticket_id": "t9"})
    assert tickets.get("Ticket", project="p", ticket_id="t1") is not None


def test_optimistic_lock_conflict_raises_and_keeps_the_winner(shop_table: TableClient) -> None:
    # GIVEN a versioned user read by two writers at version 1
    shop_table.put("User", {"user_id": "u1", "email": "a@example.com", "name": "A"})
    seen = shop_table.get("User", user_id="u1")
    assert seen is not None and seen["version"] == 1
    # WHEN the first writer wins
    shop_table.update("User", {"user_id": "u1"}, set={"name": "first"}, expected_version=1)
    # THEN the second gets a typed conflict and the stored item keeps the first write
    with pytest.raises(VersionConflictError, match="expected version 1") as err:
        shop_table.update("User", {"user_id": "u1"}, set={"name": "second"}, expected_version=1)
    assert err.value.expected == 1
    stored = shop_table.get("User", user_id="u1", consistent=True)
    assert stored is not None and (stored["name"], stored["version"]) == ("first", 2)
    # AND guarded puts/deletes behave the same way
    with pytest.raises(VersionConflictError):
        shop_table.put("User", {"user_id": "u1", "email": "b@example.com"}, expected_version=1)
    with pytest.raises(VersionConflictError):
        shop_table.delete("User", {"user_id": "u1"}, expected_version=1)
    assert shop_table.delete("User", {"user_id": "u1"}, expected_version=2) is not None


def test_create_only_and_must_exist(shop_table: TableClient) -> None:
    shop_table.put("Product", {"sku": "S1", "name": "Cup", "price_cents": 800}, create_only=True)
    with pytest.raises(ItemExistsError, match="already exists"):
        shop_table.put("Product", {"sku": "S1", "name": "Other", "price_cents": 1}, create_only=True)
    assert shop_table.get("Product", sku="S1")["name"] == "Cup"  # type: ignore[index]
    with pytest.raises(ItemNotFoundError, match="no such item"):
        shop_table.update("Product", {"sku": "nope"}, set={"name": "x"})
    assert shop_table.get("Product", sku="nope") is None  # no partial item was created


def test_batch_write_of_1000_items_all_land(shop_table: TableClient) -> None:
    # GIVEN 1,000 orders for one user
    puts = [("Order", order(i)) for i in range(1000)]
    # WHEN written in one batch_write call (40 chunks of 25)
    assert shop_table.batch_write(puts=puts) == 1000
    # THEN every one is readable, via batch_get in chunks of 100 and via the pattern
    got = shop_table.batch_get([("Order", order_key(i)) for i in range(1000)])
    assert all(g is not None for g in got) and [g["order_id"] for g in got] == [f"o{i:04d}" for i in range(1000)]  # type: ignore[index]
    assert sum(1 for _ in shop_table.query_all("user's orders newest first", user_id="u1", limit=300)) == 1000
    # AND batch deletes remove them
    shop_table.batch_write(deletes=[("Order", order_key(i)) for i in range(1000)])
    assert shop_table.query("user's orders newest first", user_id="u1").items == []


def test_pagination_over_250_items_returns_each_item_once(shop_table: TableClient) -> None:
    # GIVEN 250 orders of u1 and a few of u2 (same table, other partition)
    shop_table.batch_write(puts=[("Order", order(i)) for i in range(250)] + [("Order", order(i, user="u2")) for i in range(5)])
    shop_table.put("User", {"user_id": "u1", "email": "a@example.com"})  # another entity in u1's partition
    # WHEN paged 40 at a time with the opaque cursor
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = shop_table.query("user's orders newest first", user_id="u1", limit=40, cursor=cursor)
        assert len(page) <= 40
        seen += [o["order_id"] for o in page]
        pages += 1
        cursor = page.cursor
        if cursor is None:
            break
    # THEN each of the 250 orders comes exactly once, newest first, and nothing else
    assert len(seen) == 250 and len(set(seen)) == 250
    assert seen == [f"o{i:04d}" for i in reversed(range(250))]
    assert pages == 7


def test_transaction_is_atomic_and_idempotent_with_a_client_request_token(shop_table: TableClient) -> None:
    # GIVEN an order placed in a transaction with a token
    def place(token: str) -> None:
        with shop_table.transaction(client_request_token=token) as tx:
            tx.put("Order", order(1), create_only=True)
            tx.put("OrderItem", {"order_id": "o0001", "line": 1, "sku": "S", "quantity": 1}, create_only=True)

    place("req-1")
    # WHEN the same request is retried with the same token THEN it is applied once, without error
    place("req-1")
    assert len(shop_table.query("items of an order", order_id="o0001")) == 1
    # WHEN a different request conflicts THEN nothing of it is written
    with pytest.raises(TransactionCanceledError, match="ConditionalCheckFailed") as err:
        with shop_table.transaction() as tx:
            tx.put("OrderItem", {"order_id": "o0001", "line": 2, "sku": "S", "quantity": 1}, create_only=True)
            tx.put("Order", order(1), create_only=True)
    assert len(err.value.reasons) == 2
    assert [i["line"] for i in shop_table.query("items of an order", order_id="o0001")] == [1]


def test_ttl_attribute_is_set_from_expires_in(shop_table: TableClient) -> None:
    before = int(datetime.now(UTC).timestamp())
    s = shop_table.put("Session", {"session_id": "s1", "user_id": "u1"}, expires_in=timedelta(minutes=5))
    assert before + 300 <= s["expires_at"] <= before + 302
    desc = shop_table.client.describe_time_to_live(TableName=shop_table.table_name)["TimeToLiveDescription"]
    assert desc["AttributeName"] == "expires_at" and desc["TimeToLiveStatus"] == "ENABLED"


#: Numbers DynamoDB stores that boto3's own number context cannot carry: 39 digits or more as
#: DynamoDB returns them (``decimal.Rounded`` on read) and 38 digits below 1E-128
#: (``decimal.Underflow`` on write).
FULL_RANGE = [10**38, -(10**40), Decimal("1E+100"), Decimal(f"9.{'9' * 37}E+125"),
              Decimal(f"1.{'2' * 37}E-129"), Decimal("1E-130")]
READINGS = Model("readings", entities=[Entity("Reading", pk="READING#{id}", fields={"id": "string"})],
                 access_patterns=[AccessPattern("reading by id", entity="Reading")])


@pytest.mark.parametrize("value", FULL_RANGE, ids=str)
def test_every_number_dynamodb_stores_is_written_and_read_back_exactly(
        synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., LocalDeployment],
        dynamodb_client: Any, value: int | Decimal) -> None:
    # GIVEN a table and an item holding a number at an edge of DynamoDB's range, alone and in a list
    (name,) = local_deploy(synth_table_template(READINGS), name_prefix="readings-").tables.values()
    readings = TableClient(READINGS, name, client=dynamodb_client)
    # WHEN it is put, and read back with get and with the access pattern
    readings.put("Reading", {"id": "r1", "value": value, "history": [value]})
    got = readings.get("Reading", id="r1")
    (queried,) = readings.query("reading by id", id="r1").items
    # THEN both reads return the number exactly
    assert got is not None
    assert got["value"] == value and got["history"] == [value]
    assert queried["value"] == value
