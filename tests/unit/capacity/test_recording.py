"""Rates from a traffic recording: a recorder's sampled pattern reads become the rates file's
reads (scaled by the sample rate and the duration); write operations come back measured, not
attributed to an entity."""

from __future__ import annotations

import pytest

from constructs_lib.capacity import CapacityInputError
from constructs_lib.capacity.recording import UnattributedWrites, rates_from_snapshot
from constructs_lib.runtime.stats import TrafficRecorder
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
    # THEN 2 queries/s of 10 items and 0.5 GetItems/s; the puts measured at 0.4/s, 1 WCU each
    reads = {r.pattern: r for r in table.reads}
    assert (reads["user's orders newest first"].per_second, reads["user's orders newest first"].items) == (2.0, 10)
    assert (reads["product by sku"].per_second, reads["product by sku"].items) == (0.5, 1)
    assert writes == [UnattributedWrites("PutItem", 0.4, 1.0)]


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
