"""CounterClient on DynamoDB Local, on the shop table created from the synthesized template, with
the family spec taken from the synthesized aggregator's environment (what would deploy)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from constructs_lib.runtime import CounterClient, IdempotencyKeyReusedError
from constructs_lib.runtime.patterns.counter.spec import COUNT
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def views_env(shop_deployment: LocalDeployment) -> dict[str, str]:
    """The aggregator's resolved environment: spec + local table name of the product_views family."""
    return shop_deployment.function_environment("ProductViewsFunction")


@pytest.fixture
def calls(dynamodb_local: Any) -> tuple[Any, Counter[str]]:
    """A fresh boto3 client whose API calls are counted by operation name."""
    client = dynamodb_local.client()
    seen: Counter[str] = Counter()
    client.meta.events.register("before-call.dynamodb", lambda model, **_: seen.update([model.name]))
    return client, seen


def views(env: dict[str, str], client: Any, **kw: Any) -> CounterClient:
    return CounterClient.from_environment("product_views", environ=env, client=client, **kw)


def test_the_synthesized_spec_is_the_one_in_app_py(views_env: dict[str, str], dynamodb_client: Any) -> None:
    # GIVEN the spec from the synthesized environment WHEN loaded THEN it is the showcase's 120-shard family
    counter = views(views_env, dynamodb_client)
    assert (counter.spec.family, counter.spec.shards, counter.spec.idempotent) == ("product_views", 120, True)


def test_increments_spread_over_shards_and_exact_sum_reads_them_all(
    views_env: dict[str, str], calls: tuple[Any, Counter[str]]
) -> None:
    client, seen = calls
    counter = views(views_env, client)
    # GIVEN 300 increments (and one decrement) of one product
    shards = {counter.increment("SKU-1").shard for _ in range(300)}
    counter.increment("SKU-1", by=-1)
    # THEN they landed on many distinct shards, one UpdateItem each
    assert len(shards) > 60
    assert seen["UpdateItem"] == 301
    # WHEN read exactly THEN the sum is exact, read with ceil(120 / 100) = 2 BatchGetItem calls
    value = counter.get("SKU-1", exact=True)
    assert (value.total, value.exact, value.aggregated_at) == (299, True, None)
    assert seen["BatchGetItem"] == 2
    # AND before any aggregation the fast read says 0, never aggregated
    fast = counter.get("SKU-1")
    assert (fast.total, fast.aggregated_at) == (0, None)


def test_idempotent_increment_retried_five_times_counts_once(views_env: dict[str, str], dynamodb_client: Any) -> None:
    counter = views(views_env, dynamodb_client, clock=lambda: T0)
    # GIVEN one increment retried 5 times with the same key (inside the token window)
    results = [counter.increment("SKU-2", 3, idempotency_key="req-1") for _ in range(5)]
    # THEN every attempt reports the same deterministic shard and the counter moved by 3 once
    assert len({r.shard for r in results}) == 1
    assert counter.get("SKU-2", exact=True).total == 3
    # AND the dedup marker carries a TTL one window later (epoch seconds)
    marker = dynamodb_client.get_item(
        TableName=counter.table_name, Key={k: {"S": v} for k, v in counter.spec.dedup_key("SKU-2", "req-1").items()}
    )["Item"]
    assert int(marker["expires_at"]["N"]) == int(T0.timestamp()) + 24 * 3600


def test_retry_after_the_token_window_is_detected_by_the_marker(views_env: dict[str, str], dynamodb_client: Any) -> None:
    # GIVEN an increment made, then retried with the same key by a caller whose clock has moved on
    # (different marker TTL: a new token would be a parameter mismatch, an old marker a failed condition)
    first = views(views_env, dynamodb_client, clock=lambda: T0).increment("SKU-3", idempotency_key="req-9")
    later = views(views_env, dynamodb_client, clock=lambda: T0 + timedelta(minutes=11))
    again = later.increment("SKU-3", idempotency_key="req-9")
    # THEN the retry is recognised as a duplicate and the counter moved once
    assert (first.duplicate, again.duplicate) == (False, True)
    assert later.get("SKU-3", exact=True).total == 1


def test_reusing_a_key_for_another_amount_is_an_error(views_env: dict[str, str], dynamodb_client: Any) -> None:
    counter = views(views_env, dynamodb_client)
    counter.increment("SKU-4", 1, idempotency_key="req-7")
    # WHEN the same key is sent with a different amount THEN it fails naming the key, and nothing is added
    with pytest.raises(IdempotencyKeyReusedError, match="idempotency_key 'req-7' was already used to add 1"):
        counter.increment("SKU-4", 5, idempotency_key="req-7")
    assert counter.get("SKU-4", exact=True).total == 1


def test_recompute_stores_the_sum_and_never_moves_aggregated_at_backwards(
    views_env: dict[str, str], dynamodb_client: Any
) -> None:
    early = views(views_env, dynamodb_client, clock=lambda: T0)
    late = views(views_env, dynamodb_client, clock=lambda: T0 + timedelta(seconds=5))
    for _ in range(7):
        early.increment("SKU-5")
    # GIVEN a recompute that read the shards at T0+5s
    assert late.recompute("SKU-5").total == 7
    early.increment("SKU-5")
    # WHEN a recompute that started earlier (T0) finishes later
    stale = early.recompute("SKU-5")
    # THEN its write is refused: the stored total and time are still the T0+5s ones
    assert (stale.total, stale.aggregated_at) == (7, T0 + timedelta(seconds=5))
    stored = early.get("SKU-5", consistent=True)
    assert (stored.total, stored.aggregated_at) == (7, T0 + timedelta(seconds=5))
    # AND recomputing twice at the same moment is harmless (idempotent)
    later = views(views_env, dynamodb_client, clock=lambda: T0 + timedelta(seconds=9))
    assert [later.recompute("SKU-5").total for _ in range(2)] == [8, 8]


def test_get_many_reads_totals_in_one_batch(views_env: dict[str, str], calls: tuple[Any, Counter[str]]) -> None:
    client, seen = calls
    counter = views(views_env, client)
    for sku, n in (("A", 2), ("B", 5)):
        for _ in range(n):
            counter.increment(sku)
        counter.recompute(sku)
    seen.clear()
    # WHEN three totals are read, one of them never counted
    values = counter.get_many(["A", "B", "never"])
    # THEN one BatchGetItem returns them, 0 for the unknown one
    assert {k: v.total for k, v in values.items()} == {"A": 2, "B": 5, "never": 0}
    assert seen == Counter({"BatchGetItem": 1})


def test_shard_items_are_typed_for_stream_filters(views_env: dict[str, str], dynamodb_client: Any) -> None:
    counter = views(views_env, dynamodb_client)
    done = counter.increment("SKU-6", 4)
    key = counter.spec.shard_key("SKU-6", done.shard)
    item = dynamodb_client.get_item(TableName=counter.table_name, Key={k: {"S": v} for k, v in key.items()})["Item"]
    # THEN the shard holds its count and entity type (for stream filters) and nothing else but its key
    assert item == {**{k: {"S": v} for k, v in key.items()}, "_type": {"S": "CounterShard"}, COUNT: {"N": "4"}}
    # AND its key says which counter and shard it is
    assert counter.spec.parse_shard_key(key["PK"]) == ("SKU-6", done.shard)
