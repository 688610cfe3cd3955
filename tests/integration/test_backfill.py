"""Backfill on DynamoDB Local: 1,000 items written under v1, rolled out to v2 and backfilled
(``CONSTRUCTS_LIB_BACKFILL_ITEMS`` sets the count; ``make soak`` runs 100,000).

The job runs in a separate process that is killed twice (SIGKILL, mid-page) and resumed; a
writer changes items while it runs. Every item's derived keys must then equal what the v2
codec builds, the write budget must hold over every sliding second of all runs together
(measured from ConsumedCapacity), and no concurrent write may be lost.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from constructs_lib import SingleTable
from constructs_lib.evolution.lock import ModelLock, TableLock
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.patterns.backfill import BackfillSpec, BackfillWorker, WriteBudget, progress
from constructs_lib.testing.backfill import (
    CapacityTrace,
    max_window_wcu,
    read_trace,
    run_backfill,
)
from constructs_lib.testing.local_update import update_template
from examples.evolution.model import model_v1, model_v2
from examples.evolution.scenario import LONG_SKU_ORDERS, mismatches, seed_v1

pytestmark = pytest.mark.integration

ITEMS = int(os.environ.get("CONSTRUCTS_LIB_BACKFILL_ITEMS", "1000"))
BUDGET = 1000.0


def _template(model, lock=None):
    app = cdk.App(context={"constructs_lib:lock": str(lock)} if lock else {})
    stack = cdk.Stack(app, "Store")
    SingleTable(stack, "Data", model=model)
    return Template.from_stack(stack).to_json()


@pytest.fixture(scope="module")
def store(dynamodb_client, tmp_path_factory):
    """v1 deployed with ITEMS items, then v2 rolled out one GSI per deployment."""
    from constructs_lib.testing import deploy_template

    deployment = deploy_template(_template(model_v1()), client=dynamodb_client)
    name = deployment.table_name("DataTable")
    counts = seed_v1(dynamodb_client, name, ITEMS)
    lock = tmp_path_factory.mktemp("lock") / "constructs_lib.lock.json"
    ModelLock({"Store/Data": TableLock.of(model_v1())}).save(lock)
    steps = []
    for _ in range(2):
        steps.append(update_template(deployment, _template(model_v2(), lock))[deployment.logical_id("DataTable")])
        table = ModelLock.load(lock).tables["Store/Data"]
        ModelLock({"Store/Data": table.advance(model_v2())[0]}).save(lock)
    assert steps == [["create GSI2"], ["create GSI3"]]
    yield name, counts
    deployment.delete()


def _start(endpoint, table, spec, trace):
    cmd = [sys.executable, "-m", "constructs_lib.testing.backfill", "--endpoint-url", endpoint, "--table", table,
           "--model", "examples.evolution.model:model_v2", "--spec", spec.to_json(), "--trace", str(trace)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.getcwd()})


def _wait_for_writes(trace, count, proc, timeout=120.0 + ITEMS / 50):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if trace.exists() and sum(1 for r in read_trace(trace) if r[1] == "update_item") >= count:
            return
        if proc.poll() is not None:
            pytest.fail(f"backfill exited early: {proc.communicate()}")
        time.sleep(0.05)
    pytest.fail(f"backfill made fewer than {count} writes in {timeout} s")


def test_backfill_killed_twice_resumes_to_exact_v2_keys_within_budget(store, dynamodb_local, dynamodb_client, tmp_path):
    table, counts = store
    # GIVEN v1 items that do not carry v2's derived keys
    bad, checked, _ = mismatches(dynamodb_client, table, model_v2())
    assert len(bad) > ITEMS * 0.9
    spec = BackfillSpec(job_id="v2", segments=4, wcu_per_second=BUDGET, page_size=50)
    trace = tmp_path / "trace.jsonl"
    # WHEN the job is killed twice mid-run (SIGKILL: no chance to checkpoint) and resumed
    for writes in (ITEMS // 5, ITEMS // 2):
        proc = _start(dynamodb_local.endpoint, table, spec, trace)
        _wait_for_writes(trace, writes, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not progress(dynamodb_client, table, model_v2(), spec)["done"]
    # AND a writer changes orders while the last run completes it
    writer = TableClient(model_v2(), table, client=dynamodb_client)
    written: dict[str, tuple[str, str]] = {}
    stop = threading.Event()

    def write_concurrently():
        rng = random.Random(3)
        n = 0
        while not stop.is_set():
            i = rng.randrange(LONG_SKU_ORDERS, counts["orders"])
            order = writer.query("order by id", order_id=f"o{i:07d}").items
            if not order:
                continue
            o = order[0]
            status, note = rng.choice(["PENDING", "SHIPPED", "PAID"]), f"w{n}"
            writer.update("Order", {k: o[k] for k in ("customer_id", "created_at", "order_id")},
                          set={"status": status, "note": note, "sku": f"SKU-{n % 7:04d}"})
            written[o["order_id"]] = (status, note)
            n += 1

    thread = threading.Thread(target=write_concurrently)
    thread.start()
    proc = _start(dynamodb_local.endpoint, table, spec, trace)
    out, err = proc.communicate(timeout=300 + ITEMS / 20)
    stop.set()
    thread.join()
    assert proc.returncode == 0, err
    report = json.loads(out)
    # THEN the job is done and reports exactly the orders whose SKU cannot be indexed, and why
    assert report["done"] and report["segments_done"] == 4
    assert report["failed"] == LONG_SKU_ORDERS
    assert {f["index"] for f in report["failures"]} == {"GSI2"}
    assert all("2048 bytes" in f["reason"] for f in report["failures"])
    # AND every item's derived keys equal the v2 codec's, item by item
    bad, checked, unindexable = mismatches(dynamodb_client, table, model_v2())
    assert bad == [] and checked == ITEMS - LONG_SKU_ORDERS and unindexable == LONG_SKU_ORDERS
    # AND no concurrent write was lost
    assert len(written) > 10
    for order_id, (status, note) in written.items():
        [item] = writer.query("order by id", order_id=order_id).items
        assert (item["status"], item["note"]) == (status, note)
    # AND no sliding second of the three runs wrote more than the budget (a failed condition,
    # for which DynamoDB reports no capacity, counted as one unit)
    records = read_trace(trace)
    writes = [(t, c) for t, n, c in records if n in ("update_item", "put_item")]
    assert max_window_wcu(writes, unknown=1.0) <= BUDGET
    used = sum(c for _, c in writes if c > 0)
    print(f"\nbackfill: {ITEMS} items, {report['updated']} rewritten (checkpointed counts), {used:.0f} WCU over 3 runs, "
          f"max {max_window_wcu(writes, unknown=1.0):.0f} WCU in any second (budget {BUDGET:.0f})")


def test_a_write_racing_the_backfill_is_kept_and_the_item_recomputed(store, dynamodb_client):
    # GIVEN a client that lets another writer change each item right before the backfill writes it
    table, _ = store
    writer = TableClient(model_v2(), table, client=dynamodb_client)
    spec = BackfillSpec(job_id="race", segments=1, wcu_per_second=10_000, page_size=25)
    raced: dict[str, str] = {}

    class Racing:
        def __getattr__(self, name):
            method = getattr(dynamodb_client, name)
            if name != "update_item" or len(raced) >= 5:
                return method

            def update_item(**params):
                key = {k: v["S"] for k, v in params["Key"].items()}
                order = key["SK"].startswith("ORDER#")
                item = writer.get("Order", consistent=True, **writer.parse_keys({**key, "_type": "Order"})[1]) if order else None
                if item is not None and item["order_id"] not in raced:
                    note = f"raced-{len(raced)}"
                    writer.update("Order", {k: item[k] for k in ("customer_id", "created_at", "order_id")},
                                  set={"note": note, "status": "SHIPPED", "sku": item.get("sku") or "SKU-0001"})
                    raced[item["order_id"]] = note
                return method(**params)

            return update_item

    # Make some items stale again so the job has work: put GSI1 keys back to their v1 form.
    for item in writer.query("orders of a customer", customer_id="c000001").items[:5]:
        dynamodb_client.update_item(
            TableName=table, Key={"PK": {"S": "CUSTOMER#c000001"}, "SK": {"S": writer.keys("Order", **{
                k: item[k] for k in ("customer_id", "created_at", "order_id")})["SK"]}},
            UpdateExpression="SET GSI1SK = :v", ExpressionAttributeValues={":v": {"S": "ORDER"}})
    # WHEN the backfill runs through it
    report = BackfillWorker(Racing(), table, model_v2(), spec).run_segment(0)
    # THEN each raced item failed its condition once, was re-read and recomputed, and kept the write
    assert report.counts["conflicts"] >= len(raced) >= 1
    for order_id, note in raced.items():
        [item] = writer.query("order by id", order_id=order_id).items
        assert (item["note"], item["status"]) == (note, "SHIPPED")
    bad, _, _ = mismatches(dynamodb_client, table, model_v2())
    assert bad == []


def test_budget_never_admits_more_than_its_rate_in_a_window_and_backs_off_on_throttling():
    # GIVEN a budget of 10 WCU/s on a fake clock
    now = [100.0]
    budget = WriteBudget(10, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    times = []
    for _ in range(40):
        budget.acquire(1)
        times.append(now[0])
    # THEN no sliding second holds more than 10 writes, and the first waited for a full window
    assert max_window_wcu([(t, 1) for t in times]) <= 10
    assert times[0] >= 101.1
    # AND throttling halves the rate, which recovers additively
    budget.throttled()
    assert budget.rate == 5
    for _ in range(100):
        budget.succeeded()
    assert budget.rate == 10


def test_in_process_helper_reports_progress(store, dynamodb_client):
    table, _ = store
    first = run_backfill(dynamodb_client, table, model_v2(), spec=BackfillSpec(job_id="again", segments=2,
                         wcu_per_second=5000, page_size=500))
    assert first["done"] and first["failed"] == LONG_SKU_ORDERS
    assert mismatches(dynamodb_client, table, model_v2())[0] == []
    # Everything is current now: another job scans all and rewrites nothing.
    trace = CapacityTrace(dynamodb_client)
    report = run_backfill(dynamodb_client, table, model_v2(), spec=BackfillSpec(job_id="again2", segments=2,
                          wcu_per_second=5000, page_size=500), trace=trace)
    assert report["done"] and report["updated"] == 0 and report["unchanged"] > 0
    assert all(n != "update_item" for _, n, _ in trace.records)


def test_cli_backfill_runs_and_reports_status(store, dynamodb_local, monkeypatch, capsys):
    from constructs_lib.__main__ import main

    table, _ = store
    for name, value in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    args = ["examples/evolution/app.py", "--table", table, "--endpoint-url", dynamodb_local.endpoint,
            "--job", "cli", "--segments", "2", "--wcu", "5000"]
    assert main(["backfill", *args]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["done"] and report["failed"] == LONG_SKU_ORDERS
    assert mismatches(dynamodb_local.client(), table, model_v2())[0] == []
    assert main(["backfill", *args, "--status"]) == 0
    assert json.loads(capsys.readouterr().out)["segments_done"] == 2


def test_handler_fans_out_and_re_invokes_itself_until_done(store, dynamodb_client):
    from constructs_lib.runtime.handlers.backfill import RESERVE_MS, dispatch

    table, _ = store
    spec = BackfillSpec(job_id="lambda", segments=3, wcu_per_second=30_000, page_size=200)
    invoked: list[dict] = []

    class Context:
        def __init__(self, remaining_ms):
            self.remaining_ms = remaining_ms

        def get_remaining_time_in_millis(self):
            return self.remaining_ms

    def run(event, remaining_ms=900_000):
        return dispatch(event, client=dynamodb_client, table=table, model=model_v2(), spec=spec,
                        context=Context(remaining_ms), invoke=invoked.append)

    # WHEN started THEN one asynchronous invocation per segment is made
    assert run({"action": "start"}) == {"started": 3, "job": "lambda"}
    assert invoked == [{"action": "segment", "segment": n} for n in range(3)]
    # WHEN a segment has less time left than its reserve THEN it stops and re-invokes itself
    invoked.clear()
    reply = run({"action": "segment", "segment": 1}, remaining_ms=RESERVE_MS - 1)
    assert reply["done"] is False and invoked == [{"action": "segment", "segment": 1}]
    # WHEN each segment runs with time to spare THEN it finishes without re-invoking itself
    invoked.clear()
    for n in range(3):
        assert run({"action": "segment", "segment": n})["done"] is True
    assert invoked == []
    status = run({"action": "status"})
    assert status["done"] and status["failed"] == LONG_SKU_ORDERS
    with pytest.raises(Exception, match="action 'nope'"):
        run({"action": "nope"})
