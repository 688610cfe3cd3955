"""The evolution scenario: items written under v1, checked against v2 after a backfill.

Shared by the integration test, the demo and the benchmark. :func:`seed_v1` writes customers
and orders with the v1 mapper (a few orders carry a SKU too long for any key: the backfill must
report them); :func:`mismatches` compares every item's derived keys with what the v2 mapper
builds, item by item.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `examples` and `constructs_lib` importable
    sys.path.insert(0, str(ROOT))

from constructs_lib.model import Model
from constructs_lib.runtime import _aws
from constructs_lib.runtime.environment import ENV_BACKFILL_SPEC
from constructs_lib.runtime.items import ItemMapper, from_dynamo
from constructs_lib.runtime.patterns.backfill.worker import CHECKPOINT_PREFIX
from examples.evolution.model import STATUS, model_v1

if TYPE_CHECKING:
    from constructs_lib.testing import DynamoDBLocal

#: Orders whose SKU builds a GSI2 partition key over 2,048 bytes (unindexable by design).
LONG_SKU_ORDERS = 3


def seed_v1(client: Any, table_name: str, count: int, *, seed: int = 7) -> dict[str, int]:
    """Write ``count`` items with the v1 mapper (1 customer per 4 orders); returns counts."""
    rng = random.Random(seed)
    model = model_v1()
    mapper = ItemMapper(model)
    customer, order = model.entity("Customer"), model.entity("Order")
    n_customers = max(1, count // 5)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    items: list[dict[str, Any]] = []
    for n in range(n_customers):
        attrs = {"customer_id": f"c{n:06d}", "email": f"user{n}@example.com", "country": rng.choice(["FR", "DE", "US"])}
        if n % 10:  # 1 in 10 customers has no name: absent from v2's GSI3
            attrs["name"] = f"Customer {n % 977}"
        items.append(mapper.build_item(customer, attrs))
    for n in range(count - n_customers):
        attrs = {
            "customer_id": f"c{rng.randrange(n_customers):06d}", "order_id": f"o{n:07d}",
            "created_at": (start + timedelta(minutes=n)).isoformat(), "status": rng.choice(STATUS),
            "total": rng.randrange(100, 100_000),
        }
        if n < LONG_SKU_ORDERS:
            attrs.update(status="PENDING", sku="S" * 2100)
        elif n % 20:
            attrs["sku"] = f"SKU-{rng.randrange(500):04d}"
        item = mapper.build_item(order, attrs)
        item["version"] = 1
        items.append(item)
    write_raw(client, table_name, items)
    return {"customers": n_customers, "orders": count - n_customers}


def write_raw(client: Any, table_name: str, items: list[dict[str, Any]], *, threads: int = 4) -> None:
    """BatchWriteItem ``items`` as they are (25 per call, ``threads`` calls at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    def write(chunk: list[dict[str, Any]]) -> None:
        request = {table_name: [{"PutRequest": {"Item": _aws.serialize(i)}} for i in chunk]}
        while request:
            request = _aws.call(client, "batch_write_item", RequestItems=request).get("UnprocessedItems") or {}

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(write, [items[start:start + 25] for start in range(0, len(items), 25)]))


def scan_all(client: Any, table_name: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"TableName": table_name, "ConsistentRead": True}
    while True:
        page = _aws.call(client, "scan", **params)
        items += [_aws.deserialize(i) for i in page.get("Items", [])]
        if not page.get("LastEvaluatedKey"):
            return items
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def expected_index_keys(mapper: ItemMapper, item: dict[str, Any]) -> dict[str, str | None] | None:
    """Every index key attribute the mapper gives ``item`` (None: absent); None if the item
    cannot be indexed (a key over DynamoDB's limits) or is not an entity item."""
    entity = mapper.entity_of(item)
    if entity is None:
        return None
    values = {k: from_dynamo(v) for k, v in item.items()}
    out: dict[str, str | None] = {}
    for index in mapper.model.indexes:
        attrs = mapper.index_attributes(index)
        if index not in entity.indexes:  # type: ignore[operator]
            out.update(dict.fromkeys(attrs))
            continue
        try:
            key = mapper.index_key(entity, index, values) or {}
        except ValueError:
            return None
        out.update({a: key.get(a) for a in attrs})
    return out


def mismatches(client: Any, table_name: str, model: Model) -> tuple[list[dict[str, Any]], int, int]:
    """(items whose derived keys differ from ``model``'s mapper, items checked, unindexable)."""
    mapper = ItemMapper(model)
    bad: list[dict[str, Any]] = []
    checked = unindexable = 0
    for item in scan_all(client, table_name):
        if str(item.get(model.pk_attribute, "")).startswith(CHECKPOINT_PREFIX):
            continue
        want = expected_index_keys(mapper, item)
        if want is None:
            unindexable += 1
            continue
        checked += 1
        got = {a: item.get(a) for a in want}
        if got != want:
            bad.append({"key": {model.pk_attribute: item[model.pk_attribute], model.sk_attribute: item.get(model.sk_attribute)},
                        "got": got, "want": want})
    return bad, checked, unindexable


# The demo -------------------------------------------------------------------------------------------
STACK = "StoreStack"
BACKFILL_HANDLER = "constructs_lib.runtime.handlers.backfill.handler"
LOCK = Path(__file__).resolve().parent / "constructs_lib.lock.json"


def run(cdk_out: Path, server: DynamoDBLocal, out: Callable[[str], None] = print, items: int = 1000) -> dict[str, Any]:
    """The evolution demo on tables created from ``cdk_out``'s ``StoreStack`` template."""
    from constructs_lib.evolution.lock import ModelLock
    from constructs_lib.runtime import TableClient
    from constructs_lib.testing import asset_dir, deploy_assembly_stack
    from constructs_lib.testing.handlers import LocalFunction
    from examples._scenario import function_id
    from examples.evolution.model import model_v2

    locked = ModelLock.load(LOCK).tables["StoreStack/Data"]
    out(f"== 1. `python -m constructs_lib diff examples/evolution/app.py`: v2 against the lock ({LOCK.name}, v1)")
    out(locked.diff(model_v2()).render().rstrip())
    deployment = deploy_assembly_stack(cdk_out, STACK, client=server.client(), name_prefix="store-")
    try:
        template = dict(deployment.template)
        table_name = deployment.table_name("DataTable")
        client = server.client()
        counts = seed_v1(client, table_name, items)
        bad, checked, _ = mismatches(client, table_name, model_v2())
        out(f"\n== 2. {items} items written with the v1 mapper ({counts['customers']} customers, {counts['orders']} "
            f"orders) into the table as the last rollout step leaves it: {len(bad)} of {checked} carry stale or "
            "missing v2 keys")
        store = TableClient(model_v2(), table_name, client=client)
        before = store.query("customers by name", name="Customer 1").items
        out(f"   'customers by name' (new GSI3) before the backfill: {len(before)} item(s) — old items are not in it")
        fid = function_id(template, BACKFILL_HANDLER)
        env = deployment.function_environment(fid)
        out(f"\n== 3. the generated backfill function ({fid}), run segment by segment from its cdk.out asset")
        started = time.perf_counter()
        with LocalFunction(asset_dir(cdk_out, template, fid), BACKFILL_HANDLER, environment=env,
                           endpoint=server.endpoint, timeout=600) as backfill:
            spec = json.loads(env[ENV_BACKFILL_SPEC])
            for segment in range(spec["segments"]):
                reply = backfill({"action": "segment", "segment": segment})
                out(f"   segment {segment}: {reply}")
            report = backfill({"action": "status"})
        elapsed = time.perf_counter() - started
        out(f"   report: { {k: v for k, v in report.items() if k != 'failures'} }")
        out(f"   {report['updated']} items rewritten in {elapsed:.1f} s ({report['consumed_wcu']:.0f} WCU, budget "
            f"{spec['wcu_per_second']:.0f} WCU/s); could not be indexed:")
        for failure in report["failures"]:
            out(f"     {failure['entity']} {failure['key']} in {failure['index']}: {failure['reason'][:90]}...")
        bad, checked, unindexable = mismatches(client, table_name, model_v2())
        after = store.query("customers by name", name="Customer 1").items
        out(f"\n== 4. checked item by item: {len(bad)} of {checked} differ from the v2 mapper ({unindexable} "
            f"unindexable); 'customers by name' now finds {len(after)} item(s)")
        if bad:
            raise AssertionError(f"backfill left {len(bad)} items with stale keys, e.g. {bad[:1]}")
        return {"report": report, "mismatches": len(bad), "checked": checked, "found_after": len(after)}
    finally:
        deployment.delete()


if __name__ == "__main__":
    from examples._scenario import run_standalone
    from examples.evolution.app import build_app

    raise SystemExit(run_standalone("evolution", build_app, run))
