"""CounterClient on DynamoDB Local, on the shop table created from the synthesized template, with
the family spec taken from the synthesized aggregator's environment (what would deploy), and its
totals kept by the aggregator from the table's stream through the synthesized mapping."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from constructs_lib.runtime import CounterClient, IdempotencyKeyReusedError
from constructs_lib.runtime.exceptions import SettingsError
from constructs_lib.runtime.handlers.counter import aggregate
from constructs_lib.runtime.patterns.counter.spec import COUNT
from constructs_lib.testing import LocalDeployment
from constructs_lib.testing.streams import StreamRunner

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


def drain(deployment: LocalDeployment, counter: CounterClient, streams_client: Any) -> None:
    """Run the family's stream mapping (settings and filters from the template) through the
    aggregator until the stream is caught up."""
    runner = StreamRunner.from_deployment(
        deployment, None, handler=lambda event: aggregate(counter, event), streams_client=streams_client,
        function_logical_id=next(lid for lid in deployment.template["Resources"] if lid.startswith("ProductViewsFunction")),
    )
    report = runner.run()
    assert report.dead_lettered == 0, report


def test_the_synthesized_spec_is_the_one_in_app_py(views_env: dict[str, str], dynamodb_client: Any) -> None:
    # GIVEN the spec from the synthesized environment WHEN loaded THEN it is the showcase's idempotent
    # family, aggregated from the table's stream
    counter = views(views_env, dynamodb_client)
    assert (counter.spec.family, counter.spec.idempotent, counter.spec.aggregation) == ("product_views", True, "deltas")
    assert counter.spec.shards > 1


def test_increments_spread_over_shards_and_exact_sum_reads_them_all(
    views_env: dict[str, str], calls: tuple[Any, Counter[str]]
) -> None:
    client, seen = calls
    counter = views(views_env, client)
    # GIVEN 300 increments (and one decrement) of one product
    shards = {counter.increment("SKU-1").shard for _ in range(300)}
    counter.increment("SKU-1", by=-1)
    # THEN they landed on many distinct shards, one UpdateItem each
    assert len(shards) > counter.spec.shards // 2
    assert seen["UpdateItem"] == 301
    # WHEN read exactly THEN the sum is exact, read with one BatchGetItem per 100 keys (shards and total)
    value = counter.get("SKU-1", exact=True)
    assert (value.total, value.exact, value.aggregated_at) == (299, True, None)
    assert seen["BatchGetItem"] == -(-(counter.spec.shards + 1) // 100)
    # AND before any aggregation the fast read says 0, never aggregated
    fast = counter.get("SKU-1")
    assert (fast.total, fast.aggregated_at) == (0, None)


def test_idempotent_increment_retried_five_times_is_one_conditional_put(
    shop_deployment: LocalDeployment, views_env: dict[str, str], calls: tuple[Any, Counter[str]],
    dynamodb_streams_client: Any,
) -> None:
    client, seen = calls
    counter = views(views_env, client, clock=lambda: T0)
    # GIVEN one increment retried 5 times with the same key
    results = [counter.increment("SKU-2", 3, idempotency_key="req-1") for _ in range(5)]
    # THEN every attempt is one PutItem and no transaction; the first counts, the others are duplicates
    assert seen == Counter({"PutItem": 5})
    assert [r.duplicate for r in results] == [False, True, True, True, True]
    assert len({r.shard for r in results}) == 1
    # AND one increment item holds it on its shard's partition key, expiring one window later
    key = counter.spec.increment_key("SKU-2", results[0].shard, "req-1")
    item = client.get_item(TableName=counter.table_name, Key={k: {"S": v} for k, v in key.items()})["Item"]
    assert (item["by"], item["_type"]) == ({"N": "3"}, {"S": "CounterIncrement"})
    assert int(item["expires_at"]["N"]) == int(T0.timestamp()) + 24 * 3600
    # WHEN the stream is aggregated THEN the counter moved by 3 once, fast and exact reads alike
    drain(shop_deployment, counter, dynamodb_streams_client)
    assert (counter.get("SKU-2").total, counter.get("SKU-2", exact=True).total) == (3, 3)


def test_retry_with_another_clock_is_still_a_duplicate(views_env: dict[str, str], dynamodb_client: Any) -> None:
    # GIVEN an increment made, then retried with the same key by a caller whose clock has moved on
    first = views(views_env, dynamodb_client, clock=lambda: T0).increment("SKU-3", idempotency_key="req-9")
    later = views(views_env, dynamodb_client, clock=lambda: T0 + timedelta(minutes=11))
    again = later.increment("SKU-3", idempotency_key="req-9")
    # THEN the retry is recognised as a duplicate
    assert (first.duplicate, again.duplicate) == (False, True)


def test_reusing_a_key_for_another_amount_is_an_error(
    shop_deployment: LocalDeployment, views_env: dict[str, str], dynamodb_client: Any, dynamodb_streams_client: Any,
) -> None:
    counter = views(views_env, dynamodb_client)
    counter.increment("SKU-4", 1, idempotency_key="req-7")
    # WHEN the same key is sent with a different amount THEN it fails naming the key, and nothing is added
    with pytest.raises(IdempotencyKeyReusedError, match="idempotency_key 'req-7' was already used to add 1"):
        counter.increment("SKU-4", 5, idempotency_key="req-7")
    drain(shop_deployment, counter, dynamodb_streams_client)
    assert counter.get("SKU-4", exact=True).total == 1


def test_a_stream_family_is_not_recomputed(views_env: dict[str, str], dynamodb_client: Any) -> None:
    counter = views(views_env, dynamodb_client)
    # WHEN recompute is asked of a family aggregated from the stream THEN it is refused, saying why
    with pytest.raises(SettingsError, match="aggregated from the table's stream"):
        counter.recompute("SKU-5")


def test_get_many_reads_totals_in_one_batch(
    shop_deployment: LocalDeployment, views_env: dict[str, str], calls: tuple[Any, Counter[str]],
    dynamodb_streams_client: Any,
) -> None:
    client, seen = calls
    counter = views(views_env, client)
    for sku, n in (("A", 2), ("B", 5)):
        for _ in range(n):
            counter.increment(sku)
    drain(shop_deployment, counter, dynamodb_streams_client)
    seen.clear()
    # WHEN three totals are read, one of them never counted
    values = counter.get_many(["A", "B", "never"])
    # THEN one BatchGetItem returns them, 0 for the unknown one
    assert {k: v.total for k, v in values.items()} == {"A": 2, "B": 5, "never": 0}
    assert seen == Counter({"BatchGetItem": 1})


def test_shard_items_carry_their_count_version_and_last_amount(views_env: dict[str, str], dynamodb_client: Any) -> None:
    counter = views(views_env, dynamodb_client)
    first = counter.increment("SKU-6", 4)
    key = counter.spec.shard_key("SKU-6", first.shard)
    wire_key = {k: {"S": v} for k, v in key.items()}
    item = dynamodb_client.get_item(TableName=counter.table_name, Key=wire_key)["Item"]
    # THEN the shard holds its count, its write count, this write's amount and its entity type (for
    # stream filters) and nothing else but its key
    assert item == {**wire_key, "_type": {"S": "CounterShard"}, COUNT: {"N": "4"}, "v": {"N": "1"}, "b": {"N": "4"}}
    # AND its key says which counter and shard it is; the stream layout's sort key is SUM
    assert counter.spec.parse_shard_key(key["PK"]) == ("SKU-6", first.shard)
    assert key["SK"] == "SUM"
