"""Sharded counter, pure parts: shard-count derivation, key layout, shard choice, spec JSON."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from constructs_lib.runtime import CounterClient, KeyValueError
from constructs_lib.runtime.exceptions import SettingsError
from constructs_lib.runtime.patterns.counter import CounterSpec, derive_shards
from constructs_lib.runtime.patterns.counter.sizing import MAX_SHARDS


# Shard-count derivation (1 KB write = 1 WCU, 1,000 WCU per partition) ---------------------------
@pytest.mark.parametrize(
    ("rate", "kwargs", "shards"),
    [
        (1, {}, 1),
        (500, {}, 1),  # 600 WCU with the default 1.2 headroom
        (500, {"headroom": 1.0}, 1),
        (1_000, {"headroom": 1.0}, 1),  # exactly one partition's worth
        (1_000, {}, 2),  # 1,200 WCU: the headroom spills into a second shard
        (1_001, {"headroom": 1.0}, 2),
        (10_000, {"headroom": 1.0}, 10),
        (50_000, {"headroom": 1.0}, 50),
        (50_000, {}, 60),
        (50_000, {"transactional": True}, 120),  # transactional writes cost 2 WCU per KB
        (1_000, {"item_size_bytes": 1025, "headroom": 1.0}, 2),  # 2 WCU per write
        (1_000, {"item_size_bytes": 4096, "headroom": 1.0}, 4),
        (833.34, {"headroom": 1.2}, 2),  # 1000.008 WCU: just over one partition
        (833.33, {"headroom": 1.2}, 1),  # 999.996 WCU
    ],
)
def test_shard_count_derivation_table(rate: float, kwargs: dict[str, object], shards: int) -> None:
    # GIVEN an expected write rate (and optional item size / headroom / transactional writes)
    # WHEN the shard count is derived
    sizing = derive_shards(rate, **kwargs)  # type: ignore[arg-type]
    # THEN it is ceil(rate x WCU per write x headroom / 1000)
    assert sizing.shards == shards
    assert sizing.shards * 1000 >= sizing.required_wcu


def test_derivation_explains_itself() -> None:
    # GIVEN the seed's viral video: 50,000 views/s
    # WHEN derived with the default headroom
    text = derive_shards(50_000).explain()
    # THEN the explanation shows each factor and the result
    assert text == (
        "50000 writes/s x 1 WCU (ceil(1024 B / 1024 B)) x headroom 1.2 = 60000 WCU; "
        "/ 1000 WCU per partition = 60 shard(s)"
    )
    # AND idempotent (transactional) increments show the doubling once
    assert derive_shards(50_000, transactional=True).explain() == (
        "50000 writes/s x 1 WCU (ceil(1024 B / 1024 B)) x2 (transactional) x headroom 1.2 = 120000 WCU; "
        "/ 1000 WCU per partition = 120 shard(s)"
    )


@pytest.mark.parametrize(
    ("rate", "kwargs", "message"),
    [
        (0, {}, "expected_writes_per_second 0 must be a positive number"),
        (-5, {}, "must be a positive number"),
        (float("nan"), {}, "must be a positive number"),
        (True, {}, "must be a positive number"),
        ("1000", {}, "must be a positive number"),
        (100, {"headroom": 0.5}, "headroom 0.5 must be a number from 1 to 10"),
        (100, {"item_size_bytes": 0}, "item_size_bytes 0 must be an int from 1 to 409,600"),
        (100, {"item_size_bytes": 500_000}, "item_size_bytes 500000"),
        (2_000_000, {}, "needs 2400 shards .* the limit is 1000"),
    ],
)
def test_derivation_rejects_bad_input(rate: object, kwargs: dict[str, object], message: str) -> None:
    # GIVEN a bad rate / size / headroom WHEN derived THEN a typed error names the value and the rule
    with pytest.raises(SettingsError, match=message):
        derive_shards(rate, **kwargs)  # type: ignore[arg-type]


# Spec and keys ---------------------------------------------------------------------------------------
SPEC = CounterSpec(family="video_views", shards=16, ttl_attribute="expires_at", idempotency_ttl_seconds=86_400)


def test_shard_keys_are_on_distinct_partition_keys() -> None:
    # GIVEN a family of 16 shards WHEN every shard key of one counter is built
    keys = [SPEC.shard_key("VID-1", n) for n in range(16)]
    # THEN each shard has its own partition key, in the documented layout (the stream layout's SUM)
    assert keys[7] == {"PK": "COUNTER#video_views#VID-1#S007", "SK": "SUM"}
    assert len({k["PK"] for k in keys}) == 16
    # AND an idempotent increment's item is on its shard's partition key, keyed by the escaped key
    assert SPEC.increment_key("VID-1", 7, "req#1") == {"PK": "COUNTER#video_views#VID-1#S007", "SK": "KEY#req%231"}
    # AND the total has its own key; the recompute layout's SHARD and dedup items theirs
    assert SPEC.total_key("VID-1") == {"PK": "COUNTER#video_views#VID-1", "SK": "TOTAL"}
    assert SPEC.legacy_shard_key("VID-1", 7) == {"PK": "COUNTER#video_views#VID-1#S007", "SK": "SHARD"}
    assert SPEC.dedup_key("VID-1", "req#1") == {"PK": "COUNTER#video_views#VID-1#DEDUP#req%231", "SK": "DEDUP"}
    recomputed = CounterSpec(family="video_views", shards=16, aggregation="recompute")
    assert recomputed.shard_key("VID-1", 7)["SK"] == "SHARD"


@pytest.mark.parametrize("counter_id", ["VID-1", "a#b", "S007", "x#S001", "%23", "ünï", "$", " "])
def test_shard_keys_parse_back_and_cannot_be_forged(counter_id: str) -> None:
    # GIVEN counter ids containing the separator, escape characters or shard-like text
    # WHEN a shard key is built and parsed
    key = SPEC.shard_key(counter_id, 3)["PK"]
    # THEN parsing gives back exactly the id and shard (escaping keeps '#' out of the id segment)
    assert SPEC.parse_shard_key(key) == (counter_id, 3)


@pytest.mark.parametrize(
    "pk",
    ["COUNTER#video_views#VID-1", "COUNTER#other#VID-1#S001", "COUNTER#video_views#VID-1#S1",
     "COUNTER#video_views#VID-1#DEDUP#k", "USER#1", "COUNTER#video_views#a#b#S001"],
)
def test_non_shard_keys_are_refused(pk: str) -> None:
    # GIVEN a total key, another family's shard, a malformed shard number, a dedup key, an entity key
    # WHEN parsed as a shard key THEN it is rejected with the key named
    with pytest.raises(KeyValueError, match="is not a shard key of counter family 'video_views'"):
        SPEC.parse_shard_key(pk)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"family": "Video"}, "counter family 'Video' must match"),
        ({"family": "video#views"}, "must match"),
        ({"family": ""}, "must match"),
        ({"shards": 0}, "shards 0 must be an int from 1 to 1000"),
        ({"shards": MAX_SHARDS + 1}, "shards 1001"),
        ({"shards": 2.0}, "shards 2.0"),
        ({"idempotency_ttl_seconds": 30, "ttl_attribute": "ttl"}, "idempotency_ttl_seconds 30 must be an int >= 60"),
        ({"idempotency_ttl_seconds": 3600}, "need the table's TTL attribute"),
        ({"aggregation": "sum"}, "aggregation 'sum' must be 'deltas' or 'recompute'"),
        ({"guard_seconds": 60}, "guard_seconds 60 must be an int from 120"),
        ({"legacy_shards": 0}, "legacy_shards 0 must be None or an int from 1 to 1000"),
    ],
)
def test_spec_rejects_bad_values(kwargs: dict[str, object], message: str) -> None:
    # GIVEN a bad family name, shard count or idempotency setting WHEN the spec is built THEN it fails
    args = {"family": "views", "shards": 4, **kwargs}
    with pytest.raises(SettingsError, match=message):
        CounterSpec(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize("counter_id", ["", None, 7, "x" * 1025])
def test_bad_counter_ids_are_refused(counter_id: object) -> None:
    # GIVEN an empty, missing, non-string or oversized id WHEN a key is built THEN it fails naming it
    with pytest.raises(KeyValueError, match="counter id"):
        SPEC.shard_key(counter_id, 0)  # type: ignore[arg-type]


def test_spec_json_round_trips_and_refuses_other_documents() -> None:
    # GIVEN a spec WHEN serialized and read back THEN it is equal
    assert CounterSpec.from_json(SPEC.to_json()) == SPEC
    assert CounterSpec.from_json(CounterSpec("v", 2, legacy_shards=4, guard_seconds=600).to_json()).legacy_shards == 4
    # AND a version 1 document (written before the stream layout) is a recomputed family
    v1 = SPEC.to_json().replace('"version":2', '"version":1').replace('"aggregation":"deltas",', "")
    assert CounterSpec.from_json(v1).aggregation == "recompute"
    # AND a document of another format or version is refused
    with pytest.raises(SettingsError, match="is not a constructs_lib.counter version 1 or 2 document"):
        CounterSpec.from_json(SPEC.to_json().replace('"version":2', '"version":3'))
    with pytest.raises(SettingsError, match="is not a constructs_lib.counter"):
        CounterSpec.from_json("{}")


def test_from_environment_names_the_missing_variable() -> None:
    # GIVEN an environment without the family's spec WHEN the client is built from it THEN it says how to bind
    with pytest.raises(SettingsError, match="CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS.*ShardedCounter.bind"):
        CounterClient.from_environment("video_views", environ={})
    # AND with the spec but no table variable, that variable is named
    with pytest.raises(SettingsError, match="CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS_TABLE"):
        CounterClient.from_environment("video_views", environ={SPEC.env_var: SPEC.to_json()})


# Shard choice -----------------------------------------------------------------------------------------
def _client(shards: int, seed: int | None = None) -> CounterClient:
    spec = CounterSpec(family="views", shards=shards)
    return CounterClient(spec, "table", client=object(), rng=random.Random(seed))  # type: ignore[arg-type]


#: Tolerance for uniformity: every shard's share within ±5 % of 1/N. With 100,000 draws over
#: 10 shards the expected count is 10,000 and its standard deviation ~95, so ±500 is > 5 sigma.
TOLERANCE = 0.05


def test_random_shard_choice_is_uniform_within_tolerance() -> None:
    # GIVEN a family of 10 shards and an unseeded random source
    client = _client(10)
    # WHEN 100,000 increments choose their shard
    counts = Counter(client.shard_for("VID-1") for _ in range(100_000))
    # THEN every shard is used and each gets 10,000 ± 5 %
    assert sorted(counts) == list(range(10))
    assert all(abs(n - 10_000) <= 10_000 * TOLERANCE for n in counts.values()), counts


def test_idempotent_shard_choice_is_deterministic_and_uniform() -> None:
    # GIVEN 100,000 distinct idempotency keys on a 10-shard family
    client = _client(10)
    # WHEN each key picks its shard twice
    first = [client.shard_for("VID-1", f"req-{i}") for i in range(100_000)]
    again = [client.shard_for("VID-1", f"req-{i}") for i in range(100_000)]
    # THEN the choice is stable for a key (retries hit the same shard) and uniform within ±5 %
    assert first == again
    counts = Counter(first)
    assert all(abs(n - 10_000) <= 10_000 * TOLERANCE for n in counts.values()), counts


@pytest.mark.parametrize("by", [True, 1.5, "1", 10**18, -(10**18), None])
def test_increment_rejects_bad_amounts_before_any_call(by: object) -> None:
    # GIVEN a client whose boto3 client would fail on any call
    client = _client(4)
    # WHEN incrementing by a non-int or out-of-range amount THEN it fails naming the value, no call made
    with pytest.raises(KeyValueError, match=f"increment by {by!r}"):
        client.increment("VID-1", by)  # type: ignore[arg-type]


def test_idempotency_key_needs_idempotent_family() -> None:
    # GIVEN a family synthesized without idempotency WHEN an idempotency key is passed THEN it says how to enable it
    with pytest.raises(KeyValueError, match="pass idempotency_window"):
        _client(4).increment("VID-1", idempotency_key="req-1")
