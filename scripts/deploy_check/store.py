"""``StoreStack`` evolved through CloudFormation updates: v1 deployed and written to, each rollout
step of v2 deployed (one GSI per update, as the rollout plan says), the deployed backfill
invoked, and every v2 access pattern answering exactly the items v1 wrote.

The steps are synthesized from ``store_app.py`` (app.py's ``StoreStack`` alone) against a lock
kept in a temporary file, advanced after each step as ``python -m
constructs_lib lock --advance`` would; the committed lock is not touched.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from scripts.deploy_check.aws import Aws, expect, wait_for
from scripts.deploy_check.cdk import Cdk

STACK, TABLE = "StoreStack", "StoreStack/Data"
APP = f"{sys.executable} scripts/deploy_check/store_app.py"
CUSTOMERS, ORDERS = 20, 80


def _gsis(aws: Aws, table: str) -> list[str]:
    described = aws.client("dynamodb").describe_table(TableName=table)["Table"]
    return sorted(i["IndexName"] for i in described.get("GlobalSecondaryIndexes", []))


def _table(aws: Aws) -> str:
    return next(r["PhysicalResourceId"] for r in aws.resources(STACK) if r["ResourceType"] == "AWS::DynamoDB::GlobalTable")


def seed_v1(aws: Aws, table: str) -> dict[str, list[dict[str, Any]]]:
    """Customers and orders written with the v1 mapper (v1 knows no ``name`` and no ``sku``: kept
    as plain attributes, as v1's writers stored them); returns their attributes."""
    from constructs_lib.runtime.items import ItemMapper
    from examples.evolution.model import STATUS, model_v1
    from examples.evolution.scenario import write_raw

    rng = random.Random(38)
    model = model_v1()
    mapper = ItemMapper(model)
    customers = [{"customer_id": f"c{n:03d}", "email": f"c{n}@example.com", "name": f"Customer {n % 7}"}
                 for n in range(CUSTOMERS)]
    start = datetime(2024, 1, 1, tzinfo=UTC)
    orders = [{"customer_id": f"c{rng.randrange(CUSTOMERS):03d}", "order_id": f"o{n:04d}",
               "created_at": (start + timedelta(hours=n)).isoformat(), "status": rng.choice(STATUS),
               "sku": f"SKU-{rng.randrange(6)}"} for n in range(ORDERS)]
    items = [mapper.build_item(model.entity("Customer"), c) for c in customers]
    items += [{**mapper.build_item(model.entity("Order"), o), "version": 1} for o in orders]
    write_raw(aws.client("dynamodb"), table, items)
    return {"customers": customers, "orders": orders}


def evolve(aws: Aws, cdk: Cdk, work: Path) -> tuple[str, list[str], dict[str, list[dict[str, Any]]]]:
    """Deploy v1, write to it, deploy each rollout step; returns (table, one line per step, what
    was written)."""
    from constructs_lib.evolution.lock import ModelLock, TableLock
    from examples.evolution.model import model_v1, model_v2

    lock = work / "constructs_lib.lock.json"
    ModelLock({TABLE: TableLock.of(model_v1())}).save(lock)
    out = str(work / "store.out")
    cdk.deploy([STACK], "--app", APP, "-o", out, "-c", "store:model=v1", log="deploy-store-v1")
    table = _table(aws)
    steps = [f"v1 deployed: GSIs {_gsis(aws, table)}"]
    expect(_gsis(aws, table) == ["GSI1"], f"v1 table GSIs: {_gsis(aws, table)}")
    seeded = seed_v1(aws, table)
    for n, want in enumerate((["GSI1", "GSI2"], ["GSI1", "GSI2", "GSI3"]), start=1):
        cdk.deploy([STACK], "--app", APP, "-o", out, "-c", f"constructs_lib:lock={lock}", log=f"deploy-store-step{n}")
        expect(_gsis(aws, table) == want, f"after rollout step {n}: GSIs {_gsis(aws, table)}, expected {want}")
        steps.append(f"step {n} deployed: GSIs {want}")
        locked = ModelLock.load(lock).tables[TABLE]
        ModelLock({TABLE: locked.advance(model_v2())[0]}).save(lock)
    expect(ModelLock.load(lock).tables[TABLE].model == model_v2(), "the lock did not reach v2 in two steps")
    return table, steps, seeded


def backfill_and_read(aws: Aws, table: str, seeded: dict[str, list[dict[str, Any]]]) -> str:
    """Invoke the deployed backfill; every v2 access pattern returns exactly the items v1 wrote."""
    from constructs_lib.runtime import TableClient
    from examples.evolution.model import model_v2

    function = next(r["PhysicalResourceId"] for r in aws.resources(STACK) if r["ResourceType"] == "AWS::Lambda::Function")
    v2 = TableClient(model_v2(), table, client=aws.client("dynamodb"))
    before = list(v2.query_all("customers by name", name="Customer 1"))
    expect(before == [], f"v1 customers are in GSI3 before the backfill: {before}")
    started = aws.invoke(function, {"action": "start"})
    report = wait_for("the backfill's segments done", lambda: (lambda r: r if r["done"] else None)(
        aws.invoke(function, {"action": "status"})), timeout=120, interval=1.0)
    expect(not report["failures"], f"backfill failures: {report['failures']}")
    by_name: dict[str, set[str]] = defaultdict(set)
    for c in seeded["customers"]:
        by_name[c["name"]].add(c["customer_id"])
        got = v2.get("Customer", customer_id=c["customer_id"])
        expect(got is not None and got["email"] == c["email"], f"customer by id {c['customer_id']}: {got}")
        found = v2.query_all("customer by email", email=c["email"])
        expect([f["customer_id"] for f in found] == [c["customer_id"]], f"customer by email {c['email']}: {found}")
    for name, ids in by_name.items():
        found = {f["customer_id"] for f in v2.query_all("customers by name", name=name)}
        expect(found == ids, f"customers by name {name!r}: {sorted(found)}, expected {sorted(ids)}")
    by_customer: dict[str, set[str]] = defaultdict(set)
    open_by_sku: dict[str, set[str]] = defaultdict(set)
    for o in seeded["orders"]:
        by_customer[o["customer_id"]].add(o["order_id"])
        if o["status"] in ("PENDING", "SHIPPED"):
            open_by_sku[o["sku"]].add(o["order_id"])
        found = v2.query_all("order by id", order_id=o["order_id"])
        expect([f["customer_id"] for f in found] == [o["customer_id"]], f"order by id {o['order_id']}: {found}")
    for customer, ids in by_customer.items():
        found = {f["order_id"] for f in v2.query_all("orders of a customer", customer_id=customer)}
        expect(found == ids, f"orders of a customer {customer}: {sorted(found)}, expected {sorted(ids)}")
    latest = datetime.fromisoformat(max(o["created_at"] for o in seeded["orders"])) + timedelta(days=1)
    for sku, ids in open_by_sku.items():
        found = {f["order_id"] for f in v2.query_all("open orders by sku", sku=sku, created_at=latest)}
        expect(found == ids, f"open orders by sku {sku}: {sorted(found)}, expected {sorted(ids)}")
    raw = aws.client("dynamodb").query(TableName=table, IndexName="GSI1", KeyConditionExpression="GSI1PK = :k",
                                       ExpressionAttributeValues={":k": {"S": "ORDER#o0000"}})["Items"]
    owner = seeded["orders"][0]["customer_id"]
    expect(raw and raw[0]["GSI1SK"]["S"] == f"CUSTOMER#{owner}", f"o0000's GSI1SK after the backfill: {raw}")
    return (f"backfill ({started.get('started')} segments, {report.get('updated', '?')} items rewritten): "
            f"{len(seeded['customers'])} customers and {len(seeded['orders'])} orders written under v1 answer "
            f"customer by id/email, customers by name ({len(by_name)} names), order by id, orders of a customer, "
            f"open orders by sku ({len(open_by_sku)} SKUs) exactly")

