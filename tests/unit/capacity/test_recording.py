"""Rates from a traffic recording: a recorder's sampled pattern reads and per-entity writes become
the rates file's (scaled by the sample rate and the duration); writes no entity was named for come
back measured, not attributed; a rates file laid over a recording overrides and extends it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from constructs_lib.capacity import CapacityInputError
from constructs_lib.capacity.exceptions import RatesError, RecordingError
from constructs_lib.capacity.rates import PatternRate, WriteRate, parse_rates
from constructs_lib.capacity.recording import UnattributedWrites, load_recording, merge_rates, rates_from_snapshot
from constructs_lib.runtime.stats import TrafficRecorder, write_snapshot
from examples.shop.model import shop_model


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _query(pk: str) -> dict[str, object]:
    return {"TableName": "shop", "KeyConditionExpression": "#pk = :pk", "ExpressionAttributeNames": {"#pk": "PK"},
            "ExpressionAttributeValues": {":pk": {"S": pk}}}


def test_pattern_reads_and_measured_writes() -> None:
    # GIVEN 20 queries of "user's orders newest first" returning 10 items each, 5 GetItems of a
    # product and 4 puts of 1 WCU, recorded in full over 10 seconds
    clock = Clock()
    recorder = TrafficRecorder(1.0, model=shop_model, table_name="shop", clock=clock)
    for n in range(20):
        recorder.observe("query", _query(f"USER#u{n}"), {"Count": 10, "ScannedCount": 10, "Items": []},
                         pattern="user's orders newest first")
    for n in range(5):
        recorder.observe("get_item", {"TableName": "shop", "Key": {"PK": {"S": f"PRODUCT#{n}"}, "SK": {"S": "PRODUCT"}}},
                         {"Item": {}}, pattern="product by sku")
    for n in range(4):
        recorder.observe("put_item", {"TableName": "shop", "Item": {"PK": {"S": f"SESSION#{n}"}, "SK": {"S": "SESSION"}}},
                         {"ConsumedCapacity": {"TableName": "shop", "CapacityUnits": 1.0}})
    clock.now = 10.0
    # WHEN turned into rates
    table, writes = rates_from_snapshot(recorder.snapshot(), "shop")
    # THEN 2 queries/s of 10 items and 0.5 GetItems/s; the puts (no entity named) measured at 0.4/s, 1 WCU each
    reads = {r.pattern: r for r in table.reads}
    assert (reads["user's orders newest first"].per_second, reads["user's orders newest first"].items) == (2.0, 10)
    assert (reads["product by sku"].per_second, reads["product by sku"].items) == (0.5, 1)
    assert writes == [UnattributedWrites("put", 0.4, 1.0)] and table.writes == ()


def test_sampled_recordings_are_scaled() -> None:
    clock = Clock()
    recorder = TrafficRecorder(1.0, model=shop_model, table_name="shop", clock=clock)
    for n in range(3):
        recorder.observe("query", _query(f"ORDER#{n}"), {"Count": 4, "ScannedCount": 4, "Items": []},
                         pattern="items of an order")
    clock.now = 2.0
    snapshot = recorder.snapshot()
    sampled = type(snapshot)(**{**snapshot.__dict__, "sample_rate": 0.01})
    table, _ = rates_from_snapshot(sampled, "shop")
    assert table.reads[0].per_second == pytest.approx(3 / 0.01 / 2)


def test_an_empty_recording_is_refused() -> None:
    recorder = TrafficRecorder(1.0, model=shop_model, table_name="shop", clock=Clock())
    with pytest.raises(CapacityInputError, match="must be more than 0"):
        rates_from_snapshot(recorder.snapshot(), "shop")


def _key(pk: str, sk: str) -> dict[str, str]:
    return {"PK": pk, "SK": sk}


def _wire(key: dict[str, str]) -> dict[str, dict[str, str]]:
    return {name: {"S": value} for name, value in key.items()}


def _recorded_writes(clock: Clock) -> TrafficRecorder:
    """30 Order puts, 10 Order updates, 5 transactions of (Order put, Product update, OrderItem put +
    a condition check), a batch of 4 Product puts and 2 Order deletes, and 3 raw puts — over 10 s."""
    recorder = TrafficRecorder(1.0, model=shop_model, table_name="shop", clock=clock)
    one = {"ConsumedCapacity": {"TableName": "shop", "CapacityUnits": 2.0}}
    for n in range(30):
        key = _key(f"USER#u{n}", f"ORDER#o{n}")
        recorder.observe("put_item", {"TableName": "shop", "Item": _wire(key)}, one, entities=[("Order", key)])
    for n in range(10):
        key = _key(f"USER#u{n}", f"ORDER#o{n}")
        recorder.observe("update_item", {"TableName": "shop", "Key": _wire(key)}, one, entities=[("Order", key)])
    for n in range(5):
        order, product = _key(f"USER#t{n}", f"ORDER#t{n}"), _key(f"PRODUCT#p{n}", "PRODUCT")
        line, checked = _key(f"ORDER#t{n}", "ITEM#1"), _key(f"USER#t{n}", "USER")
        actions = [{"Put": {"TableName": "shop", "Item": _wire(order)}},
                   {"Update": {"TableName": "shop", "Key": _wire(product)}},
                   {"Put": {"TableName": "shop", "Item": _wire(line)}},
                   {"ConditionCheck": {"TableName": "shop", "Key": _wire(checked)}}]
        recorder.observe("transact_write_items", {"TransactItems": actions}, None,
                         entities=[("Order", order), ("Product", product), ("OrderItem", line), ("User", checked)])
    puts = [_key(f"PRODUCT#b{n}", "PRODUCT") for n in range(4)]
    deletes = [_key(f"USER#d{n}", f"ORDER#d{n}") for n in range(2)]
    batch = [{"PutRequest": {"Item": _wire(k)}} for k in puts] + [{"DeleteRequest": {"Key": _wire(k)}} for k in deletes]
    # the entities are named in another order than the batch's: they are matched by key
    named = [("Order", k) for k in reversed(deletes)] + [("Product", k) for k in puts]
    recorder.observe("batch_write_item", {"RequestItems": {"shop": batch}}, None, entities=named)
    for n in range(3):
        recorder.observe("put_item", {"TableName": "shop", "Item": _wire(_key(f"RAW#{n}", "RAW"))}, one)
    clock.now = 10.0
    return recorder


def test_writes_come_back_per_entity_and_kind() -> None:
    # GIVEN writes of every kind recorded in full over 10 s, each naming its entities
    recorder = _recorded_writes(Clock())
    # WHEN turned into rates
    table, unattributed = rates_from_snapshot(recorder.snapshot(), "shop")
    # THEN each entity's writes per kind and second; the condition check is no write
    assert {(w.entity, w.kind): w.per_second for w in table.writes} == {
        ("Order", "put"): 3.0, ("Order", "update"): 1.0, ("Order", "transaction_put"): 0.5,
        ("Product", "transaction_update"): 0.5, ("OrderItem", "transaction_put"): 0.5,
        ("Product", "batch_put"): 0.4, ("Order", "batch_delete"): 0.2,
    }
    # AND only the raw puts (no entity named) are unattributed, with their measured units
    assert unattributed == [UnattributedWrites("put", 0.3, 2.0)]


def test_a_recorded_entity_the_model_lacks_is_refused() -> None:
    recorder = TrafficRecorder(1.0, model=shop_model, table_name="shop", clock=(clock := Clock()))
    key = _key("USER#u1", "ORDER#o1")
    recorder.observe("put_item", {"TableName": "shop", "Item": _wire(key)}, None, entities=[("Ordr", key)])
    clock.now = 1.0
    with pytest.raises(CapacityInputError, match="'Ordr'.*its entities: \\['Order'"):
        rates_from_snapshot(recorder.snapshot(), "shop")


def test_a_rates_file_overrides_and_extends_a_recording(tmp_path: Path) -> None:
    # GIVEN a recording of writes (and one read pattern) saved to a file
    clock = Clock()
    recorder = _recorded_writes(clock)
    recorder.observe("query", _query("USER#u1"), {"Count": 3, "ScannedCount": 3, "Items": []},
                     pattern="user's orders newest first")
    path = write_snapshot(recorder.snapshot(), tmp_path / "traffic.json")
    recorded, unattributed = load_recording(path)
    # AND a rates file with another Order put rate, a pattern and an entity write the recording lacks
    given = parse_rates(json.dumps({"format": "constructs_lib.rates", "version": 1, "tables": {"shop": {
        "reads": {"product by sku": 40}, "writes": {"Order": {"put": 7}, "User": {"update": 1}}}}}), "rates.json")
    # WHEN merged
    merged = merge_rates(recorded, given).tables["shop"]
    # THEN the file's rate replaces the recorded one, its others are added, the rest is the recording's
    writes = {(w.entity, w.kind): w.per_second for w in merged.writes}
    assert writes[("Order", "put")] == 7 and writes[("User", "update")] == 1 and writes[("Order", "update")] == 1.0
    reads = {r.pattern: r for r in merged.reads}
    assert reads["product by sku"].per_second == 40 and reads["user's orders newest first"] == PatternRate(
        "user's orders newest first", 0.1, 3)
    assert recorded.tables["shop"].writes[0] == WriteRate("Order", "batch_delete", 0.2)
    assert unattributed == [UnattributedWrites("put", 0.3, 2.0)]


def test_a_bad_recording_file_is_named(tmp_path: Path) -> None:
    # GIVEN a file that is not a snapshot, and a snapshot covering no time
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"format": "constructs_lib.rates", "version": 1}', encoding="utf-8")
    empty = write_snapshot(TrafficRecorder(1.0, model=shop_model, table_name="shop", clock=Clock()).snapshot(),
                           tmp_path / "empty.json")
    # WHEN loaded as recordings / THEN a RecordingError (a RatesError) names the file and the problem
    with pytest.raises(RecordingError, match=f"recording {wrong}: format: 'constructs_lib.rates' is not a traffic"):
        load_recording(wrong)
    with pytest.raises(RatesError, match=f"recording {empty}: recording duration 0.0 s must be more than 0"):
        load_recording(empty)
