"""Traffic insight, pure parts: the heavy-hitters sketch and its error bound, thread-safe exact
totals, sampling scale, request breakdown per key, the detector's thresholds and rendering.

Requests are fed through ``TrafficRecorder.observe`` as DynamoDB typed JSON (what a boto3
client sends and receives); the DynamoDB side is exercised in
tests/integration/test_traffic_insight.py.
"""

from __future__ import annotations

import json
import math
import random
import threading
from collections import Counter
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model
from constructs_lib.runtime import TableClient, _aws
from constructs_lib.runtime.exceptions import TrafficInsightError
from constructs_lib.runtime.stats import (
    FILTER_HEAVY,
    HOT_PARTITION,
    LOW_CARDINALITY,
    SCAN,
    UNUSED_INDEX,
    SpaceSaving,
    TrafficRecorder,
)

MODEL = Model(
    "insight",
    entities=[
        Entity("User", pk="USER#{user_id}", sk="PROFILE", fields={"user_id": "string", "email": "string"},
               indexes={"ByEmail": IndexKey(pk="EMAIL#{email}", sk="USER")}),
        Entity("Order", pk="USER#{user_id}", sk="ORDER#{order_id}",
               fields={"user_id": "string", "order_id": "string", "status": "string"},
               indexes={"ByStatus": IndexKey(pk="STATUS#{status}", sk="{order_id}")}),
    ],
    indexes=[Index("ByEmail"), Index("ByStatus")],
    access_patterns=[
        AccessPattern("user by email", entity="User", index="ByEmail"),
        AccessPattern("orders by status", entity="Order", index="ByStatus"),
    ],
)
TABLE_NAME = "insight-table"


def recorder(rate: float = 1.0, **kw: Any) -> TrafficRecorder:
    return TrafficRecorder(rate, model=MODEL, table_name=TABLE_NAME, **kw)


def s(value: str) -> dict[str, str]:
    return {"S": value}


def put(pk: str, *, gsi: dict[str, str] | None = None, units: float | None = None) -> tuple[dict, dict]:
    item = {"PK": s(pk), "SK": s("PROFILE"), **{k: s(v) for k, v in (gsi or {}).items()}}
    response: dict[str, Any] = {}
    if units is not None:
        response["ConsumedCapacity"] = {"TableName": TABLE_NAME, "CapacityUnits": units, "Table": {"CapacityUnits": units}}
    return {"TableName": TABLE_NAME, "Item": item}, response


# The sketch --------------------------------------------------------------------------------------------
def test_sketch_is_exact_while_keys_fit() -> None:
    # GIVEN a sketch with room for every key
    sketch = SpaceSaving(10)
    stream = ["a"] * 5 + ["b"] * 3 + ["c"]
    # WHEN the stream is added
    for key in stream:
        sketch.add(key)
    # THEN counts are exact, errors zero, and the order is by count
    assert sketch.exact and sketch.error_bound == 0
    assert [(k.key, k.count, k.error) for k in sketch.top()] == [("a", 5, 0), ("b", 3, 0), ("c", 1, 0)]


@pytest.mark.parametrize("capacity", [10, 50])
def test_sketch_error_bound_holds_on_a_skewed_stream(capacity: int) -> None:
    # GIVEN a Zipf-like stream over 2,000 keys, much more than the sketch holds
    rng = random.Random(42)
    weights = [1 / (i + 1) for i in range(2000)]
    stream = rng.choices([f"k{i}" for i in range(2000)], weights=weights, k=20_000)
    true = Counter(stream)
    sketch = SpaceSaving(capacity)
    # WHEN every hit is added
    for key in stream:
        sketch.add(key)
    bound = len(stream) / capacity
    tracked = {k.key: k for k in sketch.top()}
    # THEN memory stayed bounded
    assert len(sketch) == capacity and not sketch.exact and sketch.error_bound == bound
    # AND every tracked count brackets the truth: count - error <= true <= count, error <= N/m
    for key, kc in tracked.items():
        assert kc.guaranteed <= true[key] <= kc.count, key
        assert kc.error <= bound
    # AND every key above N/m is tracked (the heavy hitters cannot be missed)
    assert all(key in tracked for key, n in true.items() if n > bound)
    # AND the top key is the true top key
    assert sketch.top(1)[0].key == true.most_common(1)[0][0]


def test_sketch_rejects_a_bad_capacity() -> None:
    # GIVEN / WHEN a sketch without counters is asked for / THEN a typed error names value and rule
    with pytest.raises(TrafficInsightError, match=r"capacity 0 must be an int ≥ 1"):
        SpaceSaving(0)


# Recording: totals, threads, sampling ----------------------------------------------------------------
def test_many_threads_recording_give_exact_totals_at_rate_one() -> None:
    # GIVEN a recorder at sample rate 1.0 shared by 8 threads
    rec = recorder(1.0)
    threads_n, per_thread = 8, 300

    def work(t: int) -> None:
        for i in range(per_thread):
            rec.observe("put_item", *put("USER#hot" if i % 2 else f"USER#t{t}-{i}"))
            writes = [{"PutRequest": {"Item": {"PK": s("USER#hot"), "SK": s(f"O{t}-{i}-{j}")}}} for j in range(3)]
            rec.observe("batch_write_item", {"RequestItems": {TABLE_NAME: writes}}, {})

    # WHEN they all record at once
    threads = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    # THEN no request and no key hit was lost
    assert rec.sampled_requests == threads_n * per_thread * 2
    hot = rec.top_keys("table", "write", 1)[0]
    assert hot.key == "USER#hot"
    # each thread: 150 single puts + 300 batches x 3 keys on USER#hot
    assert hot.count == threads_n * (per_thread // 2 + per_thread * 3) and hot.error == 0
    ops = rec.report(min_total_requests=10**9).operations
    assert ops == {"PutItem": threads_n * per_thread, "BatchWrite": threads_n * per_thread}


def test_sampling_scales_counts_by_the_inverse_rate() -> None:
    # GIVEN a 25 % seeded recorder and 4,000 writes to one key
    rec = recorder(0.25, seed=1)
    sampled = sum(rec.observe("put_item", *put("USER#a")) for _ in range(4000))
    # THEN about a quarter was sampled (binomial: 1,000 ± 5 sigma = 137)
    assert abs(sampled - 1000) < 5 * math.sqrt(4000 * 0.25 * 0.75)
    assert rec.sampled_requests == sampled
    # AND estimates are the sampled counts times 4
    assert rec.estimated_requests == sampled * 4
    top = rec.top_keys("table", "write", 1)[0]
    assert (top.count, top.estimated) == (sampled, sampled * 4)
    assert rec.report().operations == {"PutItem": sampled * 4}


def test_same_seed_samples_the_same_requests() -> None:
    # GIVEN two recorders with the same seed and one with another
    a, b, c = recorder(0.3, seed=9), recorder(0.3, seed=9), recorder(0.3, seed=10)
    # WHEN each sees the same 500 requests
    picks = [[r.observe("put_item", *put(f"USER#{i}")) for i in range(500)] for r in (a, b, c)]
    # THEN the seeded choices repeat exactly, and differ with another seed
    assert picks[0] == picks[1] and picks[0] != picks[2]


def test_requests_to_other_tables_are_not_sampled() -> None:
    # GIVEN a recorder of one table
    rec = recorder(1.0)
    # WHEN a request to another table is observed
    taken = rec.observe("put_item", {"TableName": "audit", "Item": {"PK": s("x")}}, {})
    # THEN it is ignored
    assert taken is False and rec.sampled_requests == 0


def test_memory_stays_bounded() -> None:
    # GIVEN small bounds
    rec = recorder(1.0, max_keys=10, keep_records=5)
    # WHEN 1,000 distinct keys and 300 distinct query shapes are recorded
    for i in range(1000):
        rec.observe("put_item", *put(f"USER#{i}"))
    for i in range(300):
        rec.observe("query", {"TableName": TABLE_NAME, "KeyConditionExpression": f"PK = :v AND SK > :s{i}",
                              "ExpressionAttributeValues": {":v": s("USER#1"), f":s{i}": s("A")}},
                    {"Count": 1, "ScannedCount": 1})
    snap = rec.snapshot()
    # THEN each sketch holds at most max_keys, shapes at most 256 (+ one pooled row), records 5
    assert all(len(top) <= 10 for top, *_ in snap.sketches.values())
    assert len(snap.shapes) == 257 and any(sh.label == "(other shapes)" for sh in snap.shapes)
    assert len(rec.records()) == 5


# Breaking requests down per key ------------------------------------------------------------------------------
def test_item_writes_count_on_the_table_and_on_each_gsi_they_touch() -> None:
    # GIVEN a put whose item carries a GSI key, and DynamoDB's INDEXES capacity report
    rec = recorder(1.0)
    params, _ = put("USER#u1", gsi={"ByEmailPK": "EMAIL#a@x"})
    response = {"ConsumedCapacity": {"TableName": TABLE_NAME, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                                     "GlobalSecondaryIndexes": {"ByEmail": {"CapacityUnits": 1.0}}}}
    # WHEN it is observed, then an update whose ALL_NEW image carries another GSI key
    rec.observe("put_item", params, response)
    rec.observe("update_item", {"TableName": TABLE_NAME, "Key": {"PK": s("USER#u1"), "SK": s("O1")},
                                "UpdateExpression": "SET #a = :a"},
                {"Attributes": {"PK": s("USER#u1"), "ByStatusPK": s("STATUS#PENDING")}})
    # THEN the table key and both GSI keys were hit once, with the reported units
    table = rec.top_keys("table", "write")
    assert [(k.key, k.count, k.capacity_units) for k in table] == [("USER#u1", 2, 1.0)]
    assert [(k.key, k.capacity_units) for k in rec.top_keys("ByEmail", "write")] == [("EMAIL#a@x", 1.0)]
    assert [k.key for k in rec.top_keys("ByStatus", "write")] == ["STATUS#PENDING"]
    # AND the records name operation, index, keys and capacity
    first, second = rec.records()
    assert (first.operation, first.index, first.partition_keys, first.capacity_units) == ("PutItem", "table", ("USER#u1",), 2.0)
    assert (second.operation, second.capacity_units) == ("UpdateItem", None)


def test_a_gsi_the_capacity_report_omits_was_not_written() -> None:
    # GIVEN a put whose capacity report lists no GSI (the item is not in any index)
    rec = recorder(1.0)
    params, response = put("USER#u1", gsi={"ByEmailPK": "EMAIL#a@x"}, units=1.0)
    # WHEN observed / THEN only the table key counts
    rec.observe("put_item", params, response)
    assert rec.top_keys("ByEmail", "write") == [] and rec.top_keys("table", "write")[0].count == 1


def test_batches_and_transactions_count_once_per_key() -> None:
    # GIVEN a batch get of 4 keys (2 on one partition) and a 3-action transaction (one on another table)
    rec = recorder(1.0)
    keys = [{"PK": s(pk), "SK": s(str(i))} for i, pk in enumerate(["USER#a", "USER#a", "USER#b", "USER#c"])]
    rec.observe("batch_get_item", {"RequestItems": {TABLE_NAME: {"Keys": keys}}},
                {"Responses": {TABLE_NAME: [{"PK": s("USER#a")}]},
                 "ConsumedCapacity": [{"TableName": TABLE_NAME, "CapacityUnits": 2.0}]})
    rec.observe("transact_write_items", {"TransactItems": [
        {"Put": {"TableName": TABLE_NAME, "Item": {"PK": s("USER#a"), "SK": s("X"), "ByStatusPK": s("STATUS#NEW")}}},
        {"Update": {"TableName": TABLE_NAME, "Key": {"PK": s("USER#d"), "SK": s("Y")}, "UpdateExpression": "SET n = :n",
                    "ExpressionAttributeValues": {":n": s("1")}}},
        {"ConditionCheck": {"TableName": "other", "Key": {"PK": s("USER#z")}, "ConditionExpression": "x"}},
    ]}, {})
    # THEN reads count per key with capacity split evenly; the record holds every key
    reads = {k.key: (k.count, k.capacity_units) for k in rec.top_keys("table", "read")}
    assert reads == {"USER#a": (2, 1.0), "USER#b": (1, 0.5), "USER#c": (1, 0.5)}
    assert rec.records()[0].partition_keys == ("USER#a", "USER#a", "USER#b", "USER#c")
    assert rec.records()[0].count == 1
    # AND transaction writes count per key of this table only (GSI key from the Put item)
    assert {k.key for k in rec.top_keys("table", "write")} == {"USER#a", "USER#d"}
    assert [k.key for k in rec.top_keys("ByStatus", "write")] == ["STATUS#NEW"]


def test_a_query_counts_on_its_index_partition_key() -> None:
    # GIVEN a query on a GSI with placeholder names
    rec = recorder(1.0)
    params = {"TableName": TABLE_NAME, "IndexName": "ByEmail", "KeyConditionExpression": "#p = :p",
              "ExpressionAttributeNames": {"#p": "ByEmailPK"}, "ExpressionAttributeValues": {":p": s("EMAIL#a@x")}}
    # WHEN observed with a pattern name
    rec.observe("query", params, {"Count": 1, "ScannedCount": 1}, pattern="user by email")
    # THEN the GSI's key is hit as a read and the record carries the pattern
    assert [k.key for k in rec.top_keys("ByEmail", "read")] == ["EMAIL#a@x"]
    record = rec.records()[0]
    assert (record.index, record.pattern, record.count, record.scanned_count) == ("ByEmail", "user by email", 1, 1)


# The detector -----------------------------------------------------------------------------------------------
def skewed(rec: TrafficRecorder, hot: int, cold_keys: int, per_cold: int = 1, units: float = 1.0) -> None:
    for _ in range(hot):
        rec.observe("put_item", *put("USER#hot", units=units))
    for i in range(cold_keys):
        for _ in range(per_cold):
            rec.observe("put_item", *put(f"USER#c{i}", units=units))


def test_hot_partition_is_found_with_shards_from_rate_and_share() -> None:
    # GIVEN 2,000 writes of 1 WCU on one key and 2,000 spread over 1,000 keys, in one second
    rec = recorder(1.0)
    skewed(rec, 2000, 1000, per_cold=2)
    # WHEN the report is made for a 1-second window
    report = rec.report(duration_seconds=1.0)
    # THEN exactly one hot partition: the hot key with half the writes
    (finding,) = report.of_kind(HOT_PARTITION)
    ev = finding.evidence
    assert (finding.index, finding.subject, ev["direction"], ev["share"]) == ("table", "USER#hot", "write", 0.5)
    # AND the shard count: capacity ceil(2000 WCU/s x 1.2 / 1000) = 3, share ceil(0.5 / 0.1) = 5 -> 5
    assert (ev["wcu_per_second"], ev["shards_for_capacity"], ev["shards_for_share"], ev["shards"]) == (2000.0, 3, 5, 5)
    assert ev["partition_utilization"] == 2.0 and ev["capacity_assumed"] is False
    assert "USER#hot#4" in finding.recommendation and "1,000 WCU" in finding.recommendation
    # AND no low-cardinality finding (1,001 distinct keys)
    assert report.of_kind(LOW_CARDINALITY) == []


def test_hot_share_and_min_requests_are_thresholds() -> None:
    # GIVEN one key with 8 % of 100 writes
    rec = recorder(1.0)
    skewed(rec, 8, 92)
    # THEN not hot at 10 %, hot at 5 %, and not judged below min_requests
    assert rec.report().of_kind(HOT_PARTITION) == []
    assert [f.subject for f in rec.report(hot_share=0.05).of_kind(HOT_PARTITION)] == ["USER#hot"]
    assert rec.report(hot_share=0.05, min_requests=101).of_kind(HOT_PARTITION) == []


def test_low_cardinality_keys_are_reported() -> None:
    # GIVEN 60 writes spread over only 3 partition keys
    rec = recorder(1.0)
    for i in range(60):
        rec.observe("put_item", *put(f"STATUS#{i % 3}"))
    # WHEN reported
    report = rec.report()
    # THEN one low-cardinality finding names the 3 keys; each key (33 %) is also hot
    (low,) = report.of_kind(LOW_CARDINALITY)
    assert low.evidence["distinct_keys"] == 3 and set(low.evidence["keys"]) == {"STATUS#0", "STATUS#1", "STATUS#2"}
    assert len(report.of_kind(HOT_PARTITION)) == 3
    # AND low_cardinality_keys=0 disables it
    assert rec.report(low_cardinality_keys=0).of_kind(LOW_CARDINALITY) == []


def test_scans_filter_heavy_queries_and_unused_gsis() -> None:
    # GIVEN 100 spread writes, one filtered Scan, a query reading 60 items to return 2, and a
    # ByEmail query; ByStatus is never read
    rec = recorder(1.0)
    skewed(rec, 0, 100)
    rec.observe("scan", {"TableName": TABLE_NAME, "FilterExpression": "#t = :t", "ExpressionAttributeNames": {"#t": "_type"}},
                {"Count": 3, "ScannedCount": 100})
    query = {"TableName": TABLE_NAME, "KeyConditionExpression": "PK = :p", "FilterExpression": "#s = :s",
             "ExpressionAttributeNames": {"#s": "status"}, "ExpressionAttributeValues": {":p": s("USER#c1"), ":s": s("X")}}
    rec.observe("query", query, {"Count": 2, "ScannedCount": 60})
    rec.observe("query", {"TableName": TABLE_NAME, "IndexName": "ByEmail", "KeyConditionExpression": "ByEmailPK = :e",
                          "ExpressionAttributeValues": {":e": s("EMAIL#x")}}, {"Count": 1, "ScannedCount": 1})
    # WHEN reported
    report = rec.report()
    # THEN the scan, the filter-heavy query (30 read per returned) and the unused ByStatus GSI are found
    assert [f.kind for f in report.findings] == [FILTER_HEAVY, SCAN, UNUSED_INDEX]
    heavy, scan, unused = report.findings
    assert heavy.subject == "table: PK = :p FILTER status = :s" and heavy.evidence["read_per_returned"] == 30
    assert scan.evidence["estimated_items_read"] == 100 and scan.evidence["scans"] == ["table: all items FILTER _type = :t"]
    assert unused.subject == "ByStatus" and unused.evidence["declared_patterns"] == ["orders by status"]
    # AND a stricter ratio or a higher min_scanned drops the query; too few requests hide the unused GSI
    assert rec.report(filter_ratio=31).of_kind(FILTER_HEAVY) == []
    assert rec.report(min_scanned=61).of_kind(FILTER_HEAVY) == []
    assert rec.report(min_total_requests=1000).of_kind(UNUSED_INDEX) == []


def test_report_renders_as_markdown_text_and_json() -> None:
    # GIVEN a report with a hot key
    rec = recorder(1.0)
    skewed(rec, 80, 20)
    report = rec.report(duration_seconds=10)
    # THEN Markdown has the operation table and a findings row with the key and its share
    md = report.to_markdown()
    assert "| PutItem | 100 |" in md
    assert "| 1 | hot partition | table | `USER#hot` | 'USER#hot' carried 80.0% of the table's sampled writes" in md
    assert "### Recommendations" in md and "Write-shard 'USER#hot'" in md
    # AND str() lists the findings; to_dict() is JSON
    assert str(report).startswith("Traffic report: 100 sampled of ~100 requests to table 'insight-table'")
    assert "[hot_partition]" in str(report)
    assert json.loads(json.dumps(report.to_dict()))["findings"][0]["evidence"]["partition_key"] == "USER#hot"


def test_an_empty_report_says_so() -> None:
    # GIVEN no traffic / WHEN reported / THEN no findings and a plain sentence
    report = recorder(1.0).report()
    assert report.findings == () and "No anti-patterns found" in report.to_markdown()


# Invalid parameters -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_rate": 0}, "sample_rate 0 must be a number in (0, 1]"),
        ({"sample_rate": 1.5}, "sample_rate 1.5 must be a number in (0, 1]"),
        ({"sample_rate": -0.1}, "sample_rate -0.1 must be a number in (0, 1]"),
        ({"sample_rate": float("nan")}, "sample_rate nan must be a number in (0, 1]"),
        ({"sample_rate": True}, "sample_rate True must be a number in (0, 1]"),
        ({"sample_rate": 0.5, "max_keys": 5}, "max_keys 5 must be an int ≥ 10"),
        ({"sample_rate": 0.5, "keep_records": -1}, "keep_records -1 must be an int ≥ 0"),
        ({"sample_rate": 0.5, "seed": "x"}, "seed 'x' must be an int or None"),
    ],
)
def test_recorder_parameters_are_checked(kwargs: dict[str, Any], message: str) -> None:
    # GIVEN / WHEN a recorder is built with a bad parameter / THEN the typed error names value and rule
    with pytest.raises(TrafficInsightError) as info:
        TrafficRecorder(**kwargs)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hot_share": -0.1}, "hot_share -0.1 must be a number in (0, 1]"),
        ({"hot_share": 0}, "hot_share 0 must be a number in (0, 1]"),
        ({"min_requests": 0}, "min_requests 0 must be an int ≥ 1"),
        ({"min_requests": 2.5}, "min_requests 2.5 must be an int ≥ 1"),
        ({"filter_ratio": 1}, "filter_ratio 1 must be a number > 1"),
        ({"min_scanned": -3}, "min_scanned -3 must be an int ≥ 1"),
        ({"min_total_requests": 0}, "min_total_requests 0 must be an int ≥ 1"),
        ({"low_cardinality_keys": -1}, "low_cardinality_keys -1 must be an int ≥ 0"),
        ({"duration_seconds": 0}, "duration_seconds 0 must be None or a number > 0"),
        ({"headroom": 0.5}, "headroom 0.5 must be a number from 1 to 10"),
    ],
)
def test_report_thresholds_are_checked(kwargs: dict[str, Any], message: str) -> None:
    # GIVEN / WHEN a report is asked with a bad threshold / THEN the typed error names value and rule
    with pytest.raises(TrafficInsightError) as info:
        recorder(1.0).report(**kwargs)
    assert str(info.value) == message


def test_one_recorder_records_one_table() -> None:
    # GIVEN a recorder bound to one table
    rec = recorder(1.0)
    # WHEN bound to another / THEN refused; the same table again is fine
    with pytest.raises(TrafficInsightError, match="records table 'insight-table'; it cannot also record table 'other'"):
        rec.bind(MODEL, "other")
    assert rec.bind(MODEL, TABLE_NAME) is rec
    # AND an unbound recorder cannot wrap a client or observe
    with pytest.raises(TrafficInsightError, match="not bound to a table"):
        TrafficRecorder(1.0).wrap(object())
    with pytest.raises(TrafficInsightError, match="operation 'get' must be one of get_item"):
        rec.observe("get", {}, {})


# The client hook (no request is made) --------------------------------------------------------------------
class _Unused:
    """Stands in for a boto3 client in tests that never make a call."""


def test_recording_is_off_by_default_and_hooks_in_at_the_seam_only_when_on() -> None:
    # GIVEN a client without recording
    raw = _Unused()
    table = TableClient(MODEL, TABLE_NAME, client=raw)  # type: ignore[arg-type]
    # THEN no hook sits at the AWS-call seam, and the request path uses the given client as is
    assert table.traffic is None and table.hooks == () and table.client is raw
    # WHEN recording starts
    rec = table.record_traffic(sample_rate=0.5, seed=3)
    # THEN the recorder's hook is the one hook of the client's calls, bound to the table; the boto3
    # client is untouched; recording again replaces the hook, never adds a second
    assert table.hooks == (rec.hook,) and table.client is raw
    assert (rec.table_name, rec.model, rec.sample_rate) == (TABLE_NAME, MODEL, 0.5)
    again = table.record_traffic(recorder=rec)
    assert again is rec and table.hooks == (rec.hook,)
    # AND a client handed in already wrapped is unwrapped, so no call is sampled twice
    wrapped = TableClient(MODEL, TABLE_NAME, client=rec.wrap(raw))  # type: ignore[arg-type]
    wrapped.record_traffic(recorder=rec)
    assert wrapped.client is raw and wrapped.hooks == (rec.hook,)
    # AND stopping removes the hook
    assert table.stop_recording() is rec and table.hooks == () and table.client is raw and table.traffic is None
    assert table.stop_recording() is None


def test_traffic_argument_and_tenant_clients_share_the_recorder() -> None:
    # GIVEN a tenant model and a client built with traffic=
    tenants = Model("tenants", entities=[Entity("Doc", pk="TENANT#{tenant_id}#DOC#{doc_id}", sk="DOC",
                                                fields={"tenant_id": "string", "doc_id": "string"})],
                    tenant_field="tenant_id")
    rec = TrafficRecorder(0.01)
    table = TableClient(tenants, "docs", client=_Unused(), traffic=rec)  # type: ignore[arg-type]
    # WHEN a tenant client is made
    tenant = table.for_tenant("acme")
    # THEN it records into the same recorder through the same hook and client
    assert table.traffic is rec and tenant._table.traffic is rec
    assert tenant._table.hooks == table.hooks == (rec.hook,) and tenant._table.client is table.client


class _Answering:
    """A boto3 client stand-in answering get_item and describe_table, keeping what it was sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def get_item(self, **params: Any) -> dict[str, Any]:
        self.sent.append(("get_item", params))
        return {"Item": {"PK": {"S": "USER#u1"}}, "ConsumedCapacity": {"TableName": TABLE_NAME, "CapacityUnits": 0.5}}

    def describe_table(self, **params: Any) -> dict[str, Any]:
        self.sent.append(("describe_table", params))
        return {"Table": {}}


def test_the_seam_hook_samples_data_plane_calls_and_returns_their_responses() -> None:
    # GIVEN a recorder bound to the table, hooked at the seam of calls to a client stand-in
    rec = recorder(1.0)
    client = _Answering()
    # WHEN a data-plane call and a control-plane call pass the seam
    got = _aws.call(client, "get_item", hooks=(rec.hook,), TableName=TABLE_NAME, Key={"PK": {"S": "USER#u1"}})
    described = _aws.call(client, "describe_table", hooks=(rec.hook,), TableName=TABLE_NAME)
    # THEN the get was sampled, asking for capacity it then removed from the response
    assert [r.operation for r in rec.records()] == ["GetItem"]
    assert client.sent[0][1]["ReturnConsumedCapacity"] == "INDEXES" and "ConsumedCapacity" not in got
    # AND the describe was made as it was, unrecorded
    assert described == {"Table": {}} and client.sent[1] == ("describe_table", {"TableName": TABLE_NAME})


def test_the_recording_client_passes_other_attributes_through() -> None:
    # GIVEN a wrapped object with its own attributes
    raw = _Unused()
    raw.meta = "meta"  # type: ignore[attr-defined]
    wrapped = recorder(1.0).wrap(raw)
    # THEN non-data-plane attributes are the wrapped client's, and wrapping twice does not nest
    assert wrapped.meta == "meta"
    assert recorder(1.0).wrap(wrapped).unwrapped is raw
