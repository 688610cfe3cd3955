"""A pattern returns its own entity's items only (DynamoDB Local, tables from the synthesized
template): where another entity's keys may satisfy its key condition (an identical overloaded
GSI key, a partition template starting with a field, a begins_with/between range) the Query
filters on the entity attribute, and every read path drops another entity's item besides."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model
from constructs_lib.runtime import TableClient, _aws
from constructs_lib.runtime.exceptions import ForeignItemError

pytestmark = pytest.mark.integration

# Order keys "ORDER#{day}" and their notes "ORDER#{day}#NOTE#{n}" share the user's partition and
# the "ORDER#" prefix; the profile "PROFILE" does not.
RANGES = Model(
    "shared_ranges",
    entities=[
        Entity("Order", pk="USER#{user_id}", sk="ORDER#{day}", fields=["user_id", "day"]),
        Entity("OrderNote", pk="USER#{user_id}", sk="ORDER#{day}#NOTE#{n}", fields=["user_id", "day", "n"]),
        Entity("Profile", pk="USER#{user_id}", sk="PROFILE", fields=["user_id"]),
    ],
    access_patterns=[
        AccessPattern("orders in a range", entity="Order", sk="between"),
        AccessPattern("order of a day", entity="Order", sk="begins_with", sk_fields=("day",)),
        AccessPattern("all orders", entity="Order", sk="begins_with"),
        AccessPattern("notes of an order", entity="OrderNote", sk="begins_with", sk_fields=("day",)),
        AccessPattern("profile", entity="Profile", sk="begins_with"),
    ],
)

# The two shapes of the defect on overloaded GSIs:
# * GSI1: Order and Refund build identical keys (EMAIL#{email} / ID#{id}), so an "=" reads both;
# * GSI2: Order's partition "{region}#ORDERS" is Box's "EU#{kind}" for region EU, kind ORDERS.
# Ticket is alone on the write-sharded GSI3 (no filter needed: the client's own check is tested).
OVERLOADED = Model(
    "overloaded",
    entities=[
        Entity("Order", pk="ORDER#{id}", sk="ORDER", fields={"id": "string", "email": "string", "region": "string",
                                                             "day": "date"},
               indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="ID#{id}"),
                        "GSI2": IndexKey(pk="{region}#ORDERS", sk="AT#{day}")}),
        Entity("Refund", pk="REFUND#{id}", sk="REFUND", fields=["id", "email"],
               indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="ID#{id}")}),
        Entity("Box", pk="BOX#{id}", sk="BOX", fields={"id": "string", "kind": "string", "day": "date"},
               indexes={"GSI2": IndexKey(pk="EU#{kind}", sk="AT#{day}")}),
        Entity("Ticket", pk="TICKET#{id}", sk="TICKET", fields={"id": "string", "queue": "string", "n": "number:3"},
               indexes={"GSI3": IndexKey(pk="QUEUE#{queue}#{shard}", sk="T#{n}", shards=2, shard_by="id")}),
    ],
    indexes=[Index("GSI1"), Index("GSI2"), Index("GSI3")],
    access_patterns=[
        AccessPattern("order by id", entity="Order", sk="="),
        AccessPattern("order of email", entity="Order", index="GSI1", sk="="),
        AccessPattern("refund of email", entity="Refund", index="GSI1", sk="="),
        AccessPattern("orders of region", entity="Order", index="GSI2", sk="begins_with"),
        AccessPattern("orders of region between", entity="Order", index="GSI2", sk="between", sk_fields=("day",)),
        AccessPattern("boxes of kind", entity="Box", index="GSI2", sk="begins_with"),
        AccessPattern("tickets of queue", entity="Ticket", index="GSI3", sk="begins_with"),
    ],
)


def _deploy(synth: Callable[..., dict[str, Any]], dynamodb_local: Any, model: Model, prefix: str) -> Any:
    from constructs_lib.testing import deploy_template

    client = dynamodb_local.client()
    deployment = deploy_template(synth(model), client=client, name_prefix=prefix)
    (name,) = deployment.tables.values()
    return deployment, TableClient(model, name, client=client)


@pytest.fixture(scope="module")
def table(synth_table_template: Callable[..., dict[str, Any]], dynamodb_local: Any) -> Iterator[TableClient]:
    deployment, table = _deploy(synth_table_template, dynamodb_local, RANGES, "shared-ranges-")
    table.put("Profile", {"user_id": "u1"})
    for day in ("2026-01-05", "2026-01-20", "2026-02-03"):
        table.put("Order", {"user_id": "u1", "day": day})
        for n in ("1", "2"):
            table.put("OrderNote", {"user_id": "u1", "day": day, "n": n})
    try:
        yield table
    finally:
        deployment.delete()


@pytest.fixture(scope="module")
def overloaded(synth_table_template: Callable[..., dict[str, Any]], dynamodb_local: Any) -> Iterator[TableClient]:
    deployment, table = _deploy(synth_table_template, dynamodb_local, OVERLOADED, "overloaded-")
    table.put("Order", {"id": "1", "email": "a@x", "region": "EU", "day": "2026-03-01"})
    table.put("Refund", {"id": "1", "email": "a@x"})
    table.put("Box", {"id": "b1", "kind": "ORDERS", "day": "2026-03-02"})
    for n, ticket in enumerate(("t1", "t2", "t3", "t4")):
        table.put("Ticket", {"id": ticket, "queue": "q", "n": n})
    try:
        yield table
    finally:
        deployment.delete()


def _put_raw(table: TableClient, item: dict[str, str]) -> None:
    """An item written outside the model (another layout, a hand-made item) at the given keys."""
    table.client.put_item(TableName=table.table_name, Item=_aws.serialize(item))


def test_an_equal_key_on_an_overloaded_index_returns_its_own_entity_only(overloaded: TableClient) -> None:
    # GIVEN an Order and a Refund whose GSI1 keys are identical (EMAIL#a@x / ID#1)
    # WHEN each entity's "=" pattern is read, as a page and to the end
    orders = overloaded.query("order of email", email="a@x", id="1").items
    refunds = list(overloaded.query_all("refund of email", email="a@x", id="1"))
    # THEN each returns its own entity only
    assert [(i["_type"], i["id"]) for i in orders] == [("Order", "1")]
    assert [(i["_type"], i["id"]) for i in refunds] == [("Refund", "1")]


def test_a_partition_template_starting_with_a_field_returns_its_own_entity_only(overloaded: TableClient) -> None:
    # GIVEN an Order in partition "EU#ORDERS" and a Box of kind ORDERS in the same partition ("EU#{kind}")
    # WHEN the orders of region EU are read by begins_with and by between
    by_prefix = overloaded.query("orders of region", region="EU").items
    by_range = list(overloaded.query_all("orders of region between", region="EU", day=("2026-01-01", "2026-12-31")))
    boxes = overloaded.query("boxes of kind", kind="ORDERS").items
    # THEN each returns its own entity only
    assert [(i["_type"], i["id"]) for i in by_prefix] == [("Order", "1")]
    assert [(i["_type"], i["id"]) for i in by_range] == [("Order", "1")]
    assert [(i["_type"], i["id"]) for i in boxes] == [("Box", "b1")]


def test_the_model_filters_where_it_cannot_prove_isolation() -> None:
    # GIVEN the overloaded model
    resolved = OVERLOADED.resolved_patterns
    # THEN the patterns other entities' keys may satisfy filter on the entity attribute, naming who
    assert resolved["order of email"].intruders == ("Refund",)
    assert resolved["orders of region"].intruders == ("Box",)
    assert resolved["boxes of kind"].intruders == ("Order",)
    assert all(resolved[p].entity_filter for p in ("order of email", "refund of email", "orders of region",
                                                   "orders of region between", "boxes of kind"))
    # AND the ones it proves isolated send no filter
    assert not resolved["tickets of queue"].entity_filter and not resolved["order by id"].entity_filter
    # AND keys that can be identical (GSI1 always, GSI2 for region EU and kind ORDERS) are design warnings
    assert [w.where for w in OVERLOADED.warnings() if w.code == "IdenticalIndexKeys"] == [
        "index 'GSI1': entities 'Order' and 'Refund'", "index 'GSI2': entities 'Order' and 'Box'"]


def test_every_read_path_drops_an_item_of_another_entity(overloaded: TableClient) -> None:
    # GIVEN items written outside the model into the partitions of isolated patterns: one claiming
    # another entity, one with no entity attribute (GSI3 is write-sharded: shards 00 and 01)
    for shard in ("00", "01"):
        _put_raw(overloaded, {"PK": f"X#{shard}", "SK": "X", "_type": "Refund", "GSI3PK": f"QUEUE#q#{shard}",
                              "GSI3SK": "T#005"})
        _put_raw(overloaded, {"PK": f"Y#{shard}", "SK": "Y", "GSI3PK": f"QUEUE#q#{shard}", "GSI3SK": "T#006"})
    # WHEN the isolated pattern (no FilterExpression) is read: a merged page, limited pages, query_all
    page = overloaded.query("tickets of queue", queue="q")
    limited = overloaded.query("tickets of queue", queue="q", limit=3)
    rest = overloaded.query("tickets of queue", queue="q", limit=3, cursor=limited.cursor)
    every = list(overloaded.query_all("tickets of queue", queue="q"))
    # THEN only the tickets come back, in order, and a limit counts tickets only
    tickets = [0, 1, 2, 3]
    assert [i["n"] for i in page.items] == tickets and {i["_type"] for i in page.items} == {"Ticket"}
    assert [i["n"] for i in limited.items + rest.items] == tickets and rest.cursor is None
    assert [i["n"] for i in every] == tickets


def test_a_get_at_a_key_holding_another_entitys_item_is_a_typed_error(overloaded: TableClient) -> None:
    # GIVEN an item of another entity stored (outside the model) at the key Order 9 would have
    _put_raw(overloaded, {"PK": "ORDER#9", "SK": "ORDER", "_type": "Refund", "id": "9"})
    # WHEN it is read as an Order: by get, by a GetItem pattern, by batch_get
    # THEN each raises ForeignItemError naming the key, the entity asked for and the one found
    with pytest.raises(ForeignItemError, match=r"'Order'.*ORDER#9.*'Refund'"):
        overloaded.get("Order", id="9")
    with pytest.raises(ForeignItemError, match="'Refund'"):
        overloaded.query("order by id", id="9")
    with pytest.raises(ForeignItemError, match="'Refund'"):
        overloaded.batch_get([("Order", {"id": "1"}), ("Order", {"id": "9"})])
    # AND the entity's own item still reads
    assert overloaded.get("Order", id="1")["email"] == "a@x"


def test_a_range_returns_only_its_entitys_items_however_the_page_is_cut(table: TableClient) -> None:
    # WHEN the orders of a day range are read (the notes of those days sort inside the range)
    page = table.query("orders in a range", user_id="u1", day=("2026-01-01", "2026-01-31"))
    # THEN only the orders come back
    assert [(i["_type"], i["day"]) for i in page.items] == [("Order", "2026-01-05"), ("Order", "2026-01-20")]
    # AND a limit still counts orders only, with a cursor that resumes after the last one returned
    first = table.query("all orders", user_id="u1", limit=2)
    rest = table.query("all orders", user_id="u1", limit=2, cursor=first.cursor)
    assert [i["day"] for i in first.items + rest.items] == ["2026-01-05", "2026-01-20", "2026-02-03"]
    assert {i["_type"] for i in first.items + rest.items} == {"Order"}
    # AND the order of one day (its key and everything under it: its notes too) is the order alone
    assert [(i["_type"], i["day"]) for i in table.query_all("order of a day", user_id="u1", day="2026-01-20")] == [
        ("Order", "2026-01-20")]
    # AND the notes of one order are only notes
    notes = table.query("notes of an order", user_id="u1", day="2026-01-20").items
    assert [(i["_type"], i["n"]) for i in notes] == [("OrderNote", "1"), ("OrderNote", "2")]


def test_an_isolated_range_sends_no_filter(table: TableClient) -> None:
    from constructs_lib.runtime import request_params

    # GIVEN the table-key ranges: the notes' "ORDER#{day}#NOTE#" lies inside the orders' "ORDER#"
    flags = {name: (r.entity_filter, r.intruders) for name, r in RANGES.resolved_patterns.items()}
    # THEN the order and note ranges filter (naming each other), "PROFILE" is provably alone
    assert flags == {"orders in a range": (True, ("OrderNote",)), "order of a day": (True, ("OrderNote",)),
                     "all orders": (True, ("OrderNote",)), "notes of an order": (False, ()),
                     "profile": (False, ())}
    params = request_params.query_params(table.mapper, table.table_name, RANGES.resolved_patterns["profile"], {"user_id": "u1"})
    assert "FilterExpression" not in params
    shared = request_params.query_params(
        table.mapper, table.table_name, RANGES.resolved_patterns["all orders"], {"user_id": "u1"})
    assert "FilterExpression" in shared
    assert table.query("profile", user_id="u1").items[0]["_type"] == "Profile"
