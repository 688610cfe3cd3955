"""Pricing recorded traffic: real ``TableClient`` traffic on DynamoDB Local (the synthesized shop
table) is recorded in full, written as a snapshot file and priced by ``cost --recording``; the
rates it derives are exactly the rates sent (sample_rate=1.0, a fixed 100-second clock), and the
estimate equals the one of a rates file stating them."""

from __future__ import annotations

import contextlib
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.__main__ import main
from constructs_lib.capacity.recording import UnattributedWrites, load_recording
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.stats import TrafficRecorder, write_snapshot

pytestmark = pytest.mark.integration

T0 = datetime(2025, 1, 1, tzinfo=UTC)
SECONDS = 100.0
#: What the workload sends: (entity, write kind) -> item writes, pattern -> queries.
SENT_WRITES = {
    ("User", "put"): 10, ("Product", "put"): 5, ("Order", "put"): 20, ("Order", "update"): 8,
    ("Order", "transaction_put"): 5, ("OrderItem", "transaction_put"): 5, ("Product", "transaction_update"): 5,
    ("OrderItem", "batch_put"): 30, ("Order", "batch_delete"): 4, ("Session", "put"): 3, ("Session", "delete"): 3,
}
SENT_READS = {"user's orders newest first": 12, "order by id": 6}
RAW_PUTS = 2


class Clock:
    """0 s when the recording starts, SECONDS when its snapshot is taken."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _order(user: str, n: int) -> dict[str, Any]:
    return {"user_id": user, "order_id": f"{user}-o{n:03d}", "created_at": T0 + timedelta(minutes=n), "status": "PAID"}


def _key(order: dict[str, Any]) -> dict[str, Any]:
    return {k: order[k] for k in ("user_id", "order_id", "created_at")}


def workload(table: TableClient, raw: Any) -> None:
    """Puts, updates, deletes, transactions, a batch and queries through the TableClient (the
    counts of SENT_WRITES and SENT_READS), and RAW_PUTS puts made with the raw client."""
    users = [f"u{n}" for n in range(10)]
    for user in users:
        table.put("User", {"user_id": user, "email": f"{user}@example.com"})
    for n in range(5):
        table.put("Product", {"sku": f"p{n}", "name": f"product {n}", "price_cents": 100 + n})
    orders = [_order(users[n % 10], n) for n in range(20)]
    for order in orders:
        table.put("Order", order)
    for order in orders[:8]:
        table.update("Order", _key(order), set={"status": "SHIPPED"})
    for n in range(5):  # an order, its first line and the product's new price, together
        with table.transaction() as tx:
            order = _order("tx", 100 + n)
            tx.put("Order", order)
            tx.put("OrderItem", {"order_id": order["order_id"], "line": 1, "sku": f"p{n}", "quantity": 2})
            tx.update("Product", {"sku": f"p{n}"}, set={"price_cents": 200 + n})
    lines = [("OrderItem", {"order_id": orders[n // 3]["order_id"], "line": n % 3 + 1, "sku": "p0", "quantity": 1})
             for n in range(30)]
    gone = [("Order", _key(o)) for o in orders[16:]]
    assert table.batch_write(puts=lines, deletes=gone) == 34
    for n in range(3):
        table.put("Session", {"session_id": f"s{n}", "user_id": "u0"})
        table.delete("Session", {"session_id": f"s{n}"})
    for n in range(12):
        table.query("user's orders newest first", user_id=users[n % 10])
    for order in orders[:6]:
        table.query("order by id", order_id=order["order_id"])
    for n in range(RAW_PUTS):  # made without the TableClient: no entity is named for them
        raw.put_item(TableName=table.table_name, Item={"PK": {"S": f"RAW#{n}"}, "SK": {"S": "RAW"}})


def _cost(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["cost", "examples/shop/model.py", *argv, "--format", "json"])
    return code, out.getvalue(), err.getvalue()


def test_recorded_traffic_is_priced_at_the_rates_sent(
    shop_table: TableClient, dynamodb_client: Any, tmp_path: Path
) -> None:
    # GIVEN the shop table recording every request, on a clock that makes the recording 100 s long
    clock = Clock()
    recorder = shop_table.record_traffic(recorder=TrafficRecorder(1.0, clock=clock))
    # WHEN the workload runs and the snapshot is written to a file
    workload(shop_table, recorder.wrap(dynamodb_client))
    clock.now = SECONDS
    path = write_snapshot(recorder.snapshot(), tmp_path / "traffic.json")
    # THEN the rates read back from the file are exactly what was sent, per entity and kind and per pattern
    rates, unattributed = load_recording(path)
    table = rates.tables["shop"]
    assert {(w.entity, w.kind): w.per_second for w in table.writes} == {
        k: n / SECONDS for k, n in SENT_WRITES.items()}
    assert {r.pattern: r.per_second for r in table.reads} == {k: n / SECONDS for k, n in SENT_READS.items()}
    # AND only the raw puts are unattributed (1 WCU each: small items)
    assert unattributed == [UnattributedWrites("put", RAW_PUTS / SECONDS, 1.0)]

    # WHEN the cost command prices the recording, and a rates file stating the sent rates
    code, recorded, err = _cost("--recording", str(path))
    assert code == 0, err
    stated = tmp_path / "sent.json"
    writes: dict[str, dict[str, float]] = {}
    for (entity, kind), n in SENT_WRITES.items():
        writes.setdefault(entity, {})[kind] = n / SECONDS
    reads = {pattern: {"per_second": n / SECONDS, "items": round(table_reads_items(table, pattern))}
             for pattern, n in SENT_READS.items()}
    stated.write_text(json.dumps({"format": "constructs_lib.rates", "version": 1,
                                  "tables": {"shop": {"reads": reads, "writes": writes}}}), encoding="utf-8")
    code, expected, err = _cost("--rates", str(stated))
    assert code == 0, err
    # THEN both estimates price the same loads; the recording's also names the unpriced raw puts
    got, want = json.loads(recorded)["tables"][0], json.loads(expected)["tables"][0]
    def loads(table: dict[str, Any]) -> list[tuple[str, str, float, float]]:
        return sorted((c["component"], c["where"], c["wcu_per_second"], c["rcu_per_second"]) for c in table["components"])

    assert loads(got) == loads(want)
    assert [pytest.approx(row) for row in got["capacity"]] == want["capacity"]  # (sums in another order)
    assert {c["component"] for c in got["components"]} >= {"write: Order transaction_put", "write: OrderItem batch_put",
                                                          "read: order by id"}
    assert [n for n in got["notes"] if n not in want["notes"]] == [
        "recorded writes with no entity named (raw calls) are not priced: 0.02 put/s (1 units each); "
        "give them under an entity in --rates"]

    # WHEN a rates file is given with the recording / THEN its rates override the recorded ones
    override = tmp_path / "override.json"
    override.write_text(json.dumps({"format": "constructs_lib.rates", "version": 1,
                                    "tables": {"shop": {"writes": {"Order": {"put": 50}}}}}), encoding="utf-8")
    code, merged, err = _cost("--recording", str(path), "--rates", str(override), "--table", "shop")
    assert code == 0, err
    def order_puts(table: dict[str, Any]) -> dict[str, float]:
        return {c["where"]: c["wcu_per_second"] for c in table["components"] if c["component"] == "write: Order put"}

    was, now = order_puts(got), order_puts(json.loads(merged)["tables"][0])
    assert was and now.keys() == was.keys()
    assert all(now[where] == pytest.approx(was[where] * 50 / (SENT_WRITES[("Order", "put")] / SECONDS)) for where in was)


def table_reads_items(table: Any, pattern: str) -> float:
    return next(r.items for r in table.reads if r.pattern == pattern)


def test_a_recording_naming_no_table_of_the_target_is_an_error(tmp_path: Path) -> None:
    # GIVEN a recording of the shop model / WHEN priced as another table / THEN the file and the names
    from examples.shop.model import shop_model

    clock = Clock()
    recorder = TrafficRecorder(1.0, model=shop_model, table_name="shop-data", clock=clock)
    clock.now = 1.0
    path = write_snapshot(recorder.snapshot(), tmp_path / "traffic.json")
    code, _, err = _cost("--recording", str(path), "--table", "orders")
    assert code == 1
    assert f"recording {path}: 'orders' names no table of the target; name one of ['shop']" in err
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    code, _, err = _cost("--recording", str(bad))
    assert code == 1 and f"recording {bad}: must be a JSON object" in err
