"""Traffic insight on DynamoDB Local, on the synthesized ShopStack table: a skewed workload (one
hot user, a few scans, a filter-heavy query) is recorded and the detector must name exactly the
hot key, the scan, the filter-heavy query and the unused GSI — while every call returns what it
returns without recording."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model import Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime import stats as stats_package
from constructs_lib.runtime.stats import FILTER_HEAVY, HOT_PARTITION, SCAN, UNUSED_INDEX, RecordingClient, TrafficRecorder
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

T0 = datetime(2025, 1, 1, tzinfo=UTC)
HOT = "hot"
USERS = [f"u{i:02d}" for i in range(30)]
HOT_ORDERS, CANCELLED_EVERY = 150, 30
FILTER_QUERIES, SCANS = 8, 6
STATS_DIR = str(Path(stats_package.__file__).parent)


def order(user: str, i: int, status: str = "PAID") -> dict[str, Any]:
    return {"user_id": user, "order_id": f"{user}-o{i:03d}", "created_at": T0 + timedelta(minutes=i), "status": status}


def plain(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


def workload(table: TableClient, raw: Any, other_table: str) -> list[Any]:
    """The skewed workload; returns the result of every call, in order.

    Writes: 31 profiles, 150 orders of the hot user (100 of them in 4 BatchWrites), 3 orders
    for each other user — the hot user's partition takes 151 of 271 table writes. Reads are
    spread: 6 gets + 1 query per user, 10 "order by id" on GSI1, plus 8 raw queries that read
    all 150 orders of the hot user to keep the 5 cancelled ones, and 6 raw scans. GSI2 (pending
    orders) is never written nor read: every order is PAID or CANCELLED. GSI3 (orders by status,
    write-sharded over 4 partitions) takes every order and is never read.
    """
    results: list[Any] = []
    for user in [*USERS, HOT]:
        results.append(table.put("User", {"user_id": user, "email": f"{user}@example.com"}))
    hot_orders = [order(HOT, i, "CANCELLED" if i % CANCELLED_EVERY == 0 else "PAID") for i in range(HOT_ORDERS)]
    results += [table.put("Order", o) for o in hot_orders[:50]]
    results.append(table.batch_write(puts=[("Order", o) for o in hot_orders[50:]]))
    results += [table.put("Order", order(user, i)) for user in USERS for i in range(3)]
    for user in USERS:
        results += [table.get("User", user_id=user) for _ in range(6)]
        results.append(table.query("user's orders newest first", user_id=user).items)
    results.append(table.get("User", user_id=HOT))
    results += [table.query("order by id", order_id=f"{user}-o000").items for user in USERS[:10]]
    for _ in range(FILTER_QUERIES):  # the hot user's cancelled orders, filtered out of its whole collection
        results.append(plain(raw.query(
            TableName=table.table_name, KeyConditionExpression="PK = :pk AND begins_with(SK, :orders)",
            FilterExpression="#s = :cancelled", ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":pk": {"S": f"USER#{HOT}"}, ":orders": {"S": "ORDER#"},
                                       ":cancelled": {"S": "CANCELLED"}},
        )))
    results += [plain(raw.scan(TableName=table.table_name, Select="COUNT")) for _ in range(SCANS)]
    results.append(plain(raw.scan(TableName=other_table, Select="COUNT")))  # another table: never recorded
    return results


@pytest.fixture
def fresh_shop(local_deploy: Callable[..., LocalDeployment], shop_template: dict[str, Any], bundled_model: Model,
               dynamodb_client: Any) -> Callable[[str], tuple[TableClient, str]]:
    """Factory: a TableClient on a new copy of the shop table (+ the name of another table of the stack)."""

    def make(prefix: str) -> tuple[TableClient, str]:
        deployment = local_deploy(shop_template, name_prefix=prefix)
        name = deployment.table_name("DataTable")
        other = next(n for n in deployment.tables.values() if n != name)
        return TableClient(bundled_model, name, client=dynamodb_client), other

    return make


@pytest.mark.parametrize(("rate", "seed"), [(1.0, None), (0.5, 7)])
def test_skewed_workload_yields_exactly_the_expected_findings(
    shop_table: TableClient, shop_deployment: LocalDeployment, fresh_shop: Callable[[str], tuple[TableClient, str]],
    dynamodb_client: Any, rate: float, seed: int | None,
) -> None:
    # GIVEN the synthesized shop table recording at `rate`, and a second copy not recording
    recorder = shop_table.record_traffic(sample_rate=rate, seed=seed)
    assert shop_table.hooks == (recorder.hook,) and not isinstance(shop_table.client, RecordingClient)
    other = next(n for n in shop_deployment.tables.values() if n != shop_table.table_name)
    unrecorded, unrecorded_other = fresh_shop("shop-off-")
    # WHEN the same skewed workload runs on both (raw calls through the recorder's wrapper)
    on = workload(shop_table, recorder.wrap(dynamodb_client), other)
    off = workload(unrecorded, dynamodb_client, unrecorded_other)
    report = recorder.report()
    print(report.to_markdown())
    # THEN every call returned exactly what it returns without recording (no ConsumedCapacity added)
    assert on == off
    assert off[-2] == {"Count": 31 + HOT_ORDERS + 90, "ScannedCount": 31 + HOT_ORDERS + 90}
    # AND the detector finds exactly: the hot user's partition, PAID in the sharded GSI3 (its 4 shards
    # judged as one key), the filter-heavy query, the scans, unused GSI2 and GSI3
    assert [(f.kind, f.index, f.subject) for f in report.findings] == [
        (HOT_PARTITION, "table", f"USER#{HOT}"),
        (HOT_PARTITION, "GSI3", "STATUS#PAID#{shard}"),
        (FILTER_HEAVY, "table", "table: PK = :pk AND begins_with(SK, :orders) FILTER status = :cancelled"),
        (SCAN, "table", "the table"),
        (UNUSED_INDEX, "GSI2", "GSI2"),
        (UNUSED_INDEX, "GSI3", "GSI3"),
    ]
    hot, sharded, heavy, _, unused, _ = report.findings
    assert sharded.evidence["declared_shards"] == 4 and sharded.evidence["shards"] > 4
    assert sharded.evidence["shard_keys"] == [f"STATUS#PAID#{n:02d}" for n in range(4)]
    assert "already write-sharded (IndexKey(shards=4)): raise shards=" in sharded.recommendation
    assert hot.evidence["direction"] == "write" and hot.evidence["share"] > 0.3
    assert hot.evidence["capacity_assumed"] is False  # DynamoDB reported the units
    assert heavy.evidence["read_per_returned"] == HOT_ORDERS / (HOT_ORDERS // CANCELLED_EVERY)
    assert unused.evidence["declared_patterns"] == ["pending orders by date"]
    # AND the scan of the stack's other table (empty: Count 0) was not recorded
    scans = [r for r in recorder.records() if r.operation == "Scan"]
    assert scans and all(r.count == r.scanned_count == 31 + HOT_ORDERS + 90 for r in scans)
    assert report.estimated_requests == recorder.sampled_requests / rate
    if rate == 1.0:  # exact totals
        assert recorder.sampled_requests == 31 + 50 + 4 + 90 + 30 * 7 + 1 + 10 + FILTER_QUERIES + SCANS
        assert (hot.evidence["estimated_requests"], hot.evidence["index_estimated_requests"]) == (151, 271)
        assert report.operations["BatchWrite"] == 4 and report.operations["Scan"] == SCANS
        by_id = [r for r in recorder.records() if r.pattern == "order by id"]
        assert [(r.operation, r.index, r.partition_keys) for r in by_id[:1]] == [("Query", "GSI1", ("ORDER#u00-o000",))]
    else:  # about half was sampled, and every estimate is scaled by 2
        assert 0.3 < recorder.sampled_requests / 418 < 0.7
        assert hot.evidence["estimated_requests"] == 2 * hot.evidence["sampled_hits"]


def test_recording_off_leaves_the_request_path_alone(
    fresh_shop: Callable[[str], tuple[TableClient, str]], dynamodb_client: Any
) -> None:
    # GIVEN a client that never recorded and one whose recording was stopped
    table, _ = fresh_shop("shop-plain-")
    table.put("User", {"user_id": "u1", "email": "u1@example.com"})
    stopped, _ = fresh_shop("shop-stopped-")
    recorder = stopped.record_traffic(sample_rate=1.0)
    stopped.stop_recording()
    # THEN both use the boto3 client itself, with no hook at the AWS-call seam
    assert table.client is dynamodb_client and stopped.client is dynamodb_client and table.traffic is None
    assert table.hooks == stopped.hooks == ()
    # WHEN reads and writes run with tracemalloc watching
    tracemalloc.start()
    try:
        for client in (table, stopped):
            client.get("User", user_id="u1")
            client.query("user's orders newest first", user_id="u1")
            client.put("Order", order("u1", 1))
        snapshot = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # THEN no object was allocated by the recording code, and the stopped recorder saw nothing
    from_stats = snapshot.filter_traces([tracemalloc.Filter(True, f"{STATS_DIR}/*")]).statistics("filename")
    assert from_stats == []
    assert recorder.sampled_requests == 0


def test_tenant_clients_record_into_their_tables_recorder(
    synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., LocalDeployment],
    dynamodb_client: Any,
) -> None:
    # GIVEN the multi-tenant documents table recording every request
    from examples.saas.model import saas_model

    deployment = local_deploy(synth_table_template(saas_model), name_prefix="saas-insight-")
    (name,) = deployment.tables.values()
    docs = TableClient(saas_model, name, client=dynamodb_client, traffic=TrafficRecorder(1.0))
    # WHEN a tenant client writes and reads
    acme = docs.for_tenant("acme")
    acme.put("Doc", {"doc_id": "d1", "owner": "ann", "status": "DRAFT"})
    assert acme.query("docs of an owner", owner="ann").items[0]["doc_id"] == "d1"
    # THEN its requests are in the table's recorder, on tenant-prefixed keys, with the pattern named
    assert docs.traffic is not None
    records = docs.traffic.records()
    assert [(r.operation, r.index, r.pattern) for r in records] == [
        ("PutItem", "table", None), ("Query", "ByOwner", "docs of an owner")]
    assert all(k.startswith("TENANT#acme#") for r in records for k in r.partition_keys)
