"""Write-sharded index keys on DynamoDB Local: items land in the shard a stable hash of their
id picks, and a query merges every shard in sort-key order — equal, page after page, to an
independently sorted single-partition reference."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import CursorError, TableClient, _aws
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

SHARDS = 4
ORDERS = Model(
    "sharded",
    entities=[
        Entity(
            "Order",
            pk="ORDER#{order_id}",
            sk="ORDER",
            fields={"order_id": "string", "store": "string", "status": Field.enum("NEW", "PAID"), "placed": "number:4"},
            indexes={
                "ByStatus": IndexKey(pk="STORE#{store}#STATUS#{status}#{shard}", sk="{placed}",
                                     shards=SHARDS, shard_by="order_id"),
            },
        ),
        Entity(  # shares the sharded partitions: the pattern's entity filter drops refunds after Limit
            "Refund",
            pk="REFUND#{refund_id}",
            sk="REFUND",
            fields={"refund_id": "string", "store": "string", "status": Field.enum("NEW", "PAID"), "placed": "number:4"},
            indexes={
                "ByStatus": IndexKey(pk="STORE#{store}#STATUS#{status}#{shard}", sk="{placed}",
                                     shards=SHARDS, shard_by="refund_id"),
            },
        ),
    ],
    indexes=[Index("ByStatus")],
    access_patterns=[
        AccessPattern("orders by status", entity="Order", index="ByStatus"),
        AccessPattern("orders by status placed between", entity="Order", index="ByStatus", sk="between",
                      sk_fields=("placed",)),
    ],
)


def reference_shard(order_id: str) -> int:
    """Independent of the runtime: sha256 of the id (ids here need no escaping), first 8 bytes."""
    return int.from_bytes(hashlib.sha256(order_id.encode()).digest()[:8], "big") % SHARDS


@pytest.fixture(scope="module")
def orders(synth_table_template: Callable[..., dict[str, Any]], local_deploy_module: Any, dynamodb_client: Any) -> TableClient:
    deployment = local_deploy_module(synth_table_template(ORDERS), name_prefix="sharded-")
    (name,) = deployment.tables.values()
    return TableClient(ORDERS, name, client=dynamodb_client)


@pytest.fixture(scope="module")
def local_deploy_module(dynamodb_client: Any) -> Any:
    """One table for the module (hypothesis examples isolate their data by store id)."""
    from constructs_lib.testing.local_deploy import deploy_template

    deployments: list[LocalDeployment] = []

    def deploy(template: dict[str, Any], **kw: Any) -> LocalDeployment:
        deployment = deploy_template(template, client=dynamodb_client, **kw)
        deployments.append(deployment)
        return deployment

    yield deploy
    for deployment in deployments:
        deployment.delete()


def put_orders(table: TableClient, store: str, rows: list[tuple[str, str, int]]) -> None:
    table.batch_write(puts=[("Order", {"order_id": i, "store": store, "status": s, "placed": p}) for i, s, p in rows])


def read_pages(table: TableClient, pattern: str, limits: list[int], **kw: Any) -> list[list[dict[str, Any]]]:
    """Pages of ``pattern``, the n-th with ``limits[n % len(limits)]``, following cursors to the end."""
    pages, cursor = [], None
    while True:
        page = table.query(pattern, limit=limits[len(pages) % len(limits)], cursor=cursor, **kw)
        pages.append(page.items)
        cursor = page.cursor
        if cursor is None:
            return pages
        assert len(pages) < 500, "paging does not end"


def test_items_land_in_the_shard_of_their_id(orders: TableClient) -> None:
    # GIVEN orders of one status with different ids
    store = uuid.uuid4().hex[:8]
    ids = [f"o{n}" for n in range(12)]
    put_orders(orders, store, [(i, "NEW", 1) for i in ids])
    # WHEN their stored GSI keys are read raw
    raw = [orders.get("Order", raw=True, order_id=i) for i in ids]
    # THEN each carries the shard the reference hash picks, zero-padded, and the ids spread over shards
    assert [r["ByStatusPK"] for r in raw] == [f"STORE#{store}#STATUS#NEW#{reference_shard(i):02d}" for i in ids]
    assert len({reference_shard(i) for i in ids}) > 1


def test_update_moves_the_item_to_the_new_status_in_the_same_shard(orders: TableClient) -> None:
    # GIVEN a NEW order
    store = uuid.uuid4().hex[:8]
    put_orders(orders, store, [("x1", "NEW", 5)])
    # WHEN its status is updated (the shard input order_id is a table-key field, so known)
    orders.update("Order", {"order_id": "x1"}, set={"status": "PAID", "store": store, "placed": 5})
    # THEN it is read under PAID in the same shard, and no longer under NEW
    assert orders.get("Order", raw=True, order_id="x1")["ByStatusPK"] == f"STORE#{store}#STATUS#PAID#{reference_shard('x1'):02d}"
    assert [o["order_id"] for o in orders.query_all("orders by status", store=store, status="PAID")] == ["x1"]
    assert list(orders.query_all("orders by status", store=store, status="NEW")) == []


ROWS = st.lists(
    st.tuples(st.sampled_from(["NEW", "PAID"]), st.integers(min_value=0, max_value=30)), max_size=40,
)
REFUNDS = st.lists(st.tuples(st.just("PAID"), st.integers(min_value=0, max_value=30)), max_size=15)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, refunds=REFUNDS, limits=st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=4),
       descending=st.booleans(), between=st.none() | st.tuples(st.integers(0, 30), st.integers(0, 30)))
def test_merged_pages_equal_a_sorted_single_partition_reference(
    orders: TableClient, rows: list[tuple[str, int]], refunds: list[tuple[str, int]], limits: list[int],
    descending: bool, between: Any,
) -> None:
    # GIVEN random orders of one store (random statuses, sort keys with ties), and refunds in the
    # same sharded partitions, which the pattern (orders only) must filter out
    store = uuid.uuid4().hex[:8]
    data = [(f"id{n:03d}", status, placed) for n, (status, placed) in enumerate(rows)]
    put_orders(orders, store, data)
    if between is None:  # (a BETWEEN on a sort key without a literal prefix would read refunds too)
        orders.batch_write(puts=[("Refund", {"refund_id": f"r{n:03d}", "store": store, "status": s, "placed": p})
                                 for n, (s, p) in enumerate(refunds)])
    pattern, extra = "orders by status", {}
    if between is not None:
        low, high = sorted(between)
        pattern, extra = "orders by status placed between", {"placed": (low, high)}
    # WHEN the PAID orders are read page by page with random limits, in either order
    pages = read_pages(orders, pattern, limits, store=store, status="PAID", descending=descending, **extra)
    # THEN every page but the last is full, and nothing is lost or repeated across pages
    merged = [item for page in pages for item in page]
    assert all(len(page) == limits[n % len(limits)] for n, page in enumerate(pages[:-1]))
    ids = [o["order_id"] for o in merged]
    assert len(ids) == len(set(ids))
    # AND the merged order is the reference's: by sort key (reversed when descending), ties by shard
    expected = [r for r in data if r[1] == "PAID" and (between is None or extra["placed"][0] <= r[2] <= extra["placed"][1])]
    expected.sort(key=lambda r: (-r[2] if descending else r[2], reference_shard(r[0])))
    assert sorted(ids) == sorted(r[0] for r in expected)
    assert [(o["placed"], reference_shard(o["order_id"])) for o in merged] == [
        (r[2], reference_shard(r[0])) for r in expected
    ]
    # AND query_all yields the same sequence of (sort key, shard)
    every = list(orders.query_all(pattern, store=store, status="PAID", descending=descending, **extra))
    assert [(o["placed"], reference_shard(o["order_id"])) for o in every] == [(r[2], reference_shard(r[0])) for r in expected]


def test_each_shard_query_passes_the_seam_with_the_access_pattern(orders: TableClient) -> None:
    # GIVEN a hook at the AWS-call seam recording the access pattern each query is made for
    store = uuid.uuid4().hex[:8]
    put_orders(orders, store, [(f"h{n}", "NEW", n) for n in range(8)])
    seen: list[tuple[str, str | None, str]] = []

    def hook(send: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        seen.append((operation, _aws.ACCESS_PATTERN.get(), params["ExpressionAttributeValues"][":v0"]["S"]))
        return send(**params)

    orders.hooks = (hook,)
    try:
        # WHEN the sharded pattern is queried (shards read in parallel on worker threads)
        page = orders.query("orders by status", store=store, status="NEW")
    finally:
        orders.hooks = ()
    # THEN one Query per shard went through the hook, each naming the pattern
    assert len(page.items) == 8
    assert sorted(seen) == [("query", "orders by status", f"STORE#{store}#STATUS#NEW#{n:02d}") for n in range(SHARDS)]


def test_a_cursor_is_bound_to_its_query_and_its_shards(orders: TableClient) -> None:
    # GIVEN a first page of a sharded query
    store = uuid.uuid4().hex[:8]
    put_orders(orders, store, [(f"c{n}", "NEW", n) for n in range(10)])
    page = orders.query("orders by status", store=store, status="NEW", limit=3)
    assert page.cursor is not None
    # WHEN it is passed to the same query for another status, or to the other direction
    # THEN it is refused, as every cursor of another query is
    with pytest.raises(CursorError):
        orders.query("orders by status", store=store, status="PAID", cursor=page.cursor)
    with pytest.raises(CursorError):
        orders.query("orders by status", store=store, status="NEW", cursor=page.cursor, descending=True)
    # AND passed back unchanged it continues after the third item
    rest = list(orders.query_all("orders by status", store=store, status="NEW", cursor=page.cursor))
    assert [o["placed"] for o in page.items + rest] == list(range(10))
    # AND a validly signed cursor whose shard position lies outside that shard's partition is refused
    body = page.cursor.split(".")[0]
    bound = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))["q"]  # the query's context digests
    other = {"PK": {"S": "ORDER#c1"}, "SK": {"S": "ORDER"}, "ByStatusPK": {"S": f"STORE#{store}#STATUS#PAID#00"},
             "ByStatusSK": {"S": "0001"}}
    forged = orders.cursors.sign({"q": bound, "k": {"0": {"M": other}}})
    with pytest.raises(CursorError, match="outside the partition of shard 0"):
        orders.query("orders by status", store=store, status="NEW", cursor=forged)
    with pytest.raises(CursorError, match="names shard '7'"):
        orders.query("orders by status", store=store, status="NEW",
                     cursor=orders.cursors.sign({"q": bound, "k": {"7": {"NULL": True}}}))


def test_a_shard_page_emptied_by_the_entity_filter_does_not_end_the_shard(orders: TableClient) -> None:
    # GIVEN refunds sorting before every order in each shard partition (the pattern reads orders only,
    # and DynamoDB applies Limit before the filter)
    store = uuid.uuid4().hex[:8]
    orders.batch_write(puts=[("Refund", {"refund_id": f"r{n}", "store": store, "status": "PAID", "placed": 0})
                             for n in range(12)])
    put_orders(orders, store, [(f"e{n}", "PAID", 5 + n) for n in range(8)])
    replies: list[tuple[int, bool]] = []

    def hook(send: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        resp = send(**params)
        replies.append((len(resp.get("Items", [])), "LastEvaluatedKey" in resp))
        return resp

    orders.hooks = (hook,)
    try:
        # WHEN the orders are read one per page
        pages = read_pages(orders, "orders by status", [1], store=store, status="PAID")
    finally:
        orders.hooks = ()
    # THEN shard reads came back empty but not finished, and still every order came, in order, once
    assert (0, True) in replies
    assert [o["order_id"] for page in pages for o in page] == [f"e{n}" for n in range(8)]
