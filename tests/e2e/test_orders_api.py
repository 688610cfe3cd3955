"""End to end: synthesize app.py → create its tables from the template in DynamoDB Local →
run the bundled orders API handler from its cdk.out asset, in a process that can import
only what the asset contains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from constructs_lib.runtime import TableClient
from constructs_lib.testing import LocalDeployment
from constructs_lib.testing.handlers import HandlerError, invoke_handler

pytestmark = pytest.mark.e2e


@pytest.fixture
def invoke(shop_deployment: LocalDeployment, shop_template: dict[str, Any], orders_api_logical_id: str,
           orders_api_asset: Path, dynamodb_local: Any) -> Any:
    env = shop_deployment.function_environment(orders_api_logical_id)
    handler = shop_template["Resources"][orders_api_logical_id]["Properties"]["Handler"]

    def run(event: dict[str, Any]) -> Any:
        invocation = invoke_handler(orders_api_asset, handler, event, environment=env, endpoint=dynamodb_local.endpoint)
        # Every run: the runtime came from the asset, and no CDK module was loaded.
        assert invocation.cdk_modules == []
        assert invocation.package_file and Path(invocation.package_file).is_relative_to(orders_api_asset)
        return invocation.result

    return run


def test_function_environment_points_at_the_deployed_table(shop_deployment: LocalDeployment, orders_api_logical_id: str) -> None:
    # GIVEN the function's TABLE_NAME (a Ref in the template) WHEN resolved THEN it names the local table
    env = shop_deployment.function_environment(orders_api_logical_id)
    assert env["TABLE_NAME"] in shop_deployment.tables.values()


def test_orders_api_places_lists_reads_and_updates_orders(invoke: Any, shop_table: TableClient) -> None:
    # GIVEN an empty table WHEN two orders are placed through the handler
    first = invoke({"op": "place_order", "user_id": "u1", "lines": [{"sku": "A", "quantity": 2}]})
    second = invoke({"op": "place_order", "user_id": "u1", "lines": [{"sku": "B", "quantity": 1}, {"sku": "C", "quantity": 3}]})
    assert first["ok"] and second["ok"]
    # THEN list_orders pages newest first with a cursor
    page1 = invoke({"op": "list_orders", "user_id": "u1", "limit": 1})
    assert [o["order_id"] for o in page1["orders"]] == [second["order_id"]] and page1["cursor"]
    page2 = invoke({"op": "list_orders", "user_id": "u1", "limit": 1, "cursor": page1["cursor"]})
    assert [o["order_id"] for o in page2["orders"]] == [first["order_id"]]
    # AND get_order reads the order through the inverted GSI1 plus its lines
    got = invoke({"op": "get_order", "order_id": second["order_id"]})
    assert got["order"]["status"] == "PENDING" and [i["sku"] for i in got["items"]] == ["B", "C"]
    # AND the items written by the handler carry the keys the model defines (read back by the test's client)
    raw = shop_table.query("order by id", order_id=second["order_id"], raw=True).items[0]
    assert raw["PK"] == "USER#u1" and raw["GSI1PK"] == f"ORDER#{second['order_id']}" and raw["GSI2PK"] == "STATUS#PENDING"
    # WHEN it is marked paid THEN it leaves the sparse pending index
    key = {"user_id": "u1", "order_id": second["order_id"], "created_at": got["order"]["created_at"]}
    paid = invoke({"op": "mark_paid", **key})
    assert paid["order"]["status"] == "PAID"
    pending = shop_table.query("pending orders by date", status="PENDING",
                               created_at=("2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z")).items
    assert [o["order_id"] for o in pending] == [first["order_id"]]
    # WHEN it is shipped (only if PAID) THEN it ships once; a second attempt is refused with the stored status
    shipped = invoke({"op": "mark_shipped", **key})
    assert shipped["ok"] and shipped["order"]["status"] == "SHIPPED"
    assert invoke({"op": "mark_shipped", **key}) == {
        "ok": False, "error": "only a PAID order can be shipped", "status": "SHIPPED"}
    # AND a PENDING order is refused too, unchanged
    first_key = {"user_id": "u1", "order_id": first["order_id"],
                 "created_at": invoke({"op": "get_order", "order_id": first["order_id"]})["order"]["created_at"]}
    assert invoke({"op": "mark_shipped", **first_key})["status"] == "PENDING"


def test_handler_errors_surface_with_the_cause(invoke: Any) -> None:
    # WHEN the handler raises (missing user_id) THEN the error carries its traceback
    with pytest.raises(HandlerError, match="KeyError: 'user_id'"):
        invoke({"op": "list_orders"})
    assert invoke({"op": "nope"}) == {"ok": False, "error": "unknown op 'nope'"}


def test_running_the_handler_leaves_the_asset_unchanged(invoke: Any, orders_api_asset: Path) -> None:
    # GIVEN the asset's files (sources, and the bytecode synthesized into __pycache__ when a Python 3.13
    # interpreter exists) WHEN the handler runs THEN no file (e.g. a new .pyc) is added to what would deploy
    before = sorted(p.relative_to(orders_api_asset) for p in orders_api_asset.rglob("*"))
    invoke({"op": "list_orders", "user_id": "nobody"})
    assert sorted(p.relative_to(orders_api_asset) for p in orders_api_asset.rglob("*")) == before
    assert not [p for p in orders_api_asset.rglob("*.pyc") if not p.name.endswith(".cpython-313.pyc")]
