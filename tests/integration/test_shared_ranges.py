"""A begins_with/between pattern whose range another entity's keys may fall in returns its own
entity's items only (DynamoDB Local, the table from the synthesized template)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.runtime import TableClient

# Order keys "ORDER#{day}" and their notes "ORDER#{day}#NOTE#{n}" share the user's partition and
# the "ORDER#" prefix; the profile "PROFILE" does not.
MODEL = Model(
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


@pytest.fixture(scope="module")
def table(synth_table_template: Callable[..., dict[str, Any]], dynamodb_local: Any) -> Iterator[TableClient]:
    from constructs_lib.testing import deploy_template

    client = dynamodb_local.client()
    deployment = deploy_template(synth_table_template(MODEL), client=client, name_prefix="shared-ranges-")
    (name,) = deployment.tables.values()
    table = TableClient(MODEL, name, client=client)
    table.put("Profile", {"user_id": "u1"})
    for day in ("2026-01-05", "2026-01-20", "2026-02-03"):
        table.put("Order", {"user_id": "u1", "day": day})
        for n in ("1", "2"):
            table.put("OrderNote", {"user_id": "u1", "day": day, "n": n})
    try:
        yield table
    finally:
        deployment.delete()


def test_the_model_knows_which_ranges_are_shared() -> None:
    shared = {name: r.shared_range for name, r in MODEL.resolved_patterns.items()}
    # the notes' "ORDER#{day}#NOTE#" range starts with the orders' "ORDER#": each may hold the other;
    # "PROFILE" overlaps neither
    assert shared == {"orders in a range": True, "order of a day": True, "all orders": True,
                      "notes of an order": True, "profile": False}


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


def test_an_unshared_range_sends_no_filter(table: TableClient) -> None:
    from constructs_lib.runtime import requests

    params = requests.query_params(table.codec, table.table_name, MODEL.resolved_patterns["profile"], {"user_id": "u1"})
    assert "FilterExpression" not in params
    shared = requests.query_params(table.codec, table.table_name, MODEL.resolved_patterns["all orders"], {"user_id": "u1"})
    assert "FilterExpression" in shared
    assert table.query("profile", user_id="u1").items[0]["_type"] == "Profile"
