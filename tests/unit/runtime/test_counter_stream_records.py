"""The stream layout's pure parts: what a record means (classify), how a sequence number is kept
(encode_seq), which watermark a total remembers, and what an aggregator writes for a batch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructs_lib.runtime.patterns.counter.aggregation import Change, Legacy, StreamAggregator, Unknown, classify
from constructs_lib.runtime.patterns.counter.client import CounterClient
from constructs_lib.runtime.patterns.counter.spec import CounterSpec
from constructs_lib.runtime.patterns.counter.watermarks import (
    decode_seq,
    encode_seq,
    generation,
    generation_maps,
    watermark,
)

SPEC = CounterSpec("views", 8, ttl_attribute="ttl", idempotency_ttl_seconds=600)
REGIONAL = CounterSpec("views", 8, regions=("us-east-1", "eu-west-1"))


def record(pk: str, sk: str, name: str = "INSERT", seq: str = "101", image: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"Keys": {"PK": {"S": pk}, "SK": {"S": sk}}, "SequenceNumber": seq}
    if image is not None:
        body["NewImage"] = image
    return {"eventName": name, "dynamodb": body}


SHARD_PK = "COUNTER#views#v1#S003"


@pytest.mark.parametrize(
    ("rec", "expected"),
    [
        (record(SHARD_PK, "SUM", "MODIFY", image={"b": {"N": "-4"}}), Change("v1", 3, 101, -4, False)),
        (record(SHARD_PK, "KEY#r1", image={"by": {"N": "2"}}), Change("v1", 3, 101, 2, True)),
        (record(SHARD_PK, "KEY#r1", "MODIFY", image={"by": {"N": "2"}}), None),
        (record(SHARD_PK, "KEY#r1", "REMOVE"), None),
        (record(SHARD_PK, "KEY#r1", "UNKNOWN_TO_SDK_VERSION"), None),  # DynamoDB Local's TTL deletion
        (record("COUNTER#views#v1", "TOTAL", "MODIFY"), None),
        (record("COUNTER#views#v1#DEDUP#k", "DEDUP"), None),
        (record(SHARD_PK, "SHARD", "MODIFY"), Legacy("v1", 101, None)),
    ],
)
def test_what_a_record_means(rec: dict[str, Any], expected: Any) -> None:
    # GIVEN a stream record of the family WHEN classified THEN it adds, does nothing or refolds
    assert classify(SPEC, None, rec) == expected


@pytest.mark.parametrize(
    ("rec", "reason"),
    [
        (record(SHARD_PK, "SUM", "REMOVE"), "was REMOVE: its count would be lost"),
        (record(SHARD_PK, "SUM", image={"count": {"N": "3"}}), "no integer 'b'"),
        (record(SHARD_PK, "KEY#r1", image={"by": {"S": "2"}}), "no integer 'by'"),
        (record(SHARD_PK, "NOTE#1"), "sort key 'NOTE#1' is not a counter item's"),
        (record("COUNTER#other#v1#S003", "SUM"), "not a shard key of counter family 'views'"),
        (record("USER#1", "SUM"), "not a shard key"),
    ],
)
def test_records_of_unknown_shape_say_why(rec: dict[str, Any], reason: str) -> None:
    # GIVEN a record the aggregator cannot account for WHEN classified THEN it is unknown, with the reason
    result = classify(SPEC, None, rec)
    assert isinstance(result, Unknown) and reason in result.reason and result.sequence_number == "101"


def test_a_region_counts_only_its_own_writes() -> None:
    east, west = "us-east-1", "eu-west-1"
    mine = record(SHARD_PK, f"SUM#{east}", image={"b": {"N": "5"}})
    theirs = record(SHARD_PK, f"SUM#{west}", image={"b": {"N": "5"}})
    keyed = record(SHARD_PK, "KEY#k", image={"by": {"N": "1"}, "r": {"S": west}})
    # WHEN the east region's aggregator classifies each THEN only east's shard write counts there
    assert [classify(REGIONAL, east, r) for r in (mine, theirs, keyed)] == [Change("v1", 3, 101, 5, False), None, None]
    assert classify(REGIONAL, west, keyed) == Change("v1", 3, 101, 1, True)


@given(st.integers(0, 10**40), st.integers(0, 10**40))
def test_encoded_sequence_numbers_compare_as_the_numbers(a: int, b: int) -> None:
    # GIVEN two sequence numbers of any length WHEN encoded THEN bytes compare as the numbers do
    # (DynamoDB compares binary values byte by byte) and decode back
    ea, eb = encode_seq(str(a).zfill(21)), encode_seq(str(b))
    assert (ea < eb) == (a < b) and (ea == eb) == (a == b)
    assert decode_seq(ea) == a


def test_a_total_remembers_two_generations_of_watermarks() -> None:
    gen = generation(10_000.0, 1000)
    current, previous, expired = generation_maps(gen)
    assert (gen, current, previous, expired) == (10, "wc", "wb", "wa")
    item = {current: {"3": encode_seq("40")}, previous: {"3": encode_seq("55"), "4": encode_seq("7")},
            expired: {"5": encode_seq("99")}}
    # THEN a shard's watermark is the higher of the two generations; an expired map is not read
    assert [watermark(item, gen, s) for s in (3, 4, 5, 6)] == [55, 7, None, None]


class _Recorder:
    """A client stand-in that records every request and answers as an empty table would."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def update_item(self, **params: Any) -> dict[str, Any]:
        self.calls.append(("update_item", params))
        return {}


def test_a_batch_is_one_conditional_write_per_counter_and_25_shards() -> None:
    client = _Recorder()
    spec = CounterSpec("views", 60)
    aggregator = StreamAggregator(CounterClient(spec, "tbl", client=client), clock=lambda: 10_000.0)
    batch = [record(f"COUNTER#views#hot#S{n:03d}", "SUM", seq=str(100 + n), image={"b": {"N": "1"}}) for n in range(60)]
    batch.append(record("COUNTER#views#cold#S001", "SUM", seq="500", image={"b": {"N": "7"}}))
    # WHEN a batch touching 60 shards of one counter and one of another is applied
    outcome = aggregator.apply(batch)
    # THEN three writes cover the hot counter (25 + 25 + 10 shards) and one the cold one, no read,
    # each conditioned on every shard's watermarks and adding the batch's amounts
    assert (outcome.failures, outcome.applied, outcome.counters) == ((), 61, 2)
    assert [op for op, _ in client.calls] == ["update_item"] * 4
    first = client.calls[0][1]
    assert first["Key"] == {"PK": {"S": "COUNTER#views#hot"}, "SK": {"S": "TOTAL"}}
    assert first["ExpressionAttributeValues"][":d"] == {"N": "25"}
    assert first["ConditionExpression"].count("#prev.#s") == 25 * 2
    assert len(first["ConditionExpression"]) < 4096 and len(first["UpdateExpression"]) < 4096
