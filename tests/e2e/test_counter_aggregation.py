"""End to end: the showcase's product-view counter on DynamoDB Local.

The table is created from the synthesized template; 8 concurrent writers increment 5 counters
through clients that suffer injected throttling; the **real stream records** are fed by the local
stream runner — with the synthesized mapping's filters, batch size and failure settings — to the
**bundled aggregator handler from cdk.out**, running in a warm process that can import only its
asset: totals exact and equal to the exact reads, redelivered batches adding nothing, a record of
unknown shape reported, dead-lettered with the rest of its batch, and that range re-driven once.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import botocore.endpoint
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config

from constructs_lib.runtime import CounterClient
from constructs_lib.runtime.patterns.counter.spec import REDRIVE_SOURCE
from constructs_lib.testing import LocalDeployment, asset_dir
from constructs_lib.testing.handlers import LocalFunction
from constructs_lib.testing.streams import MappingSettings, StreamRunner

pytestmark = pytest.mark.e2e

AGGREGATOR_HANDLER = "constructs_lib.runtime.handlers.counter.handler"
#: ``make soak`` (CONSTRUCTS_LIB_SOAK=1) runs 8 x 2,000 increments; ``make test`` 8 x 250: still
#: two stream batches of 1,000, ~40 injected throttles, every counter hit by every writer.
SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
WRITERS, INCREMENTS, COUNTERS = 8, 2_000 if SOAK else 250, [f"VID-{i}" for i in range(5)]
#: Fraction of UpdateItem calls answered with an injected ProvisionedThroughputExceededException.
THROTTLE_RATE = 0.02
_THROTTLE_BODY = json.dumps({
    "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
    "message": "injected by the test: the request rate for the table exceeds its throughput",
}).encode()


#: botocore's backoff before a throttled call's retry, scaled down: the retry path is botocore's
#: own (standard mode, jittered exponential delays), only shorter, so ~340 injected throttles
#: cost ~1 s of sleeping instead of ~20 s per writer thread.
BACKOFF_SCALE = 0.05


class _ScaledSleep:
    """Stands in for the ``time`` module inside ``botocore.endpoint``, whose only use of it is
    ``time.sleep(delay)`` before a retry."""

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds * BACKOFF_SCALE)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


@pytest.fixture(scope="module")
def aggregator_id(shop_template: dict[str, Any]) -> str:
    (lid,) = [lid for lid, r in shop_template["Resources"].items()
              if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == AGGREGATOR_HANDLER]
    return lid


@pytest.fixture
def aggregator(shop_deployment: LocalDeployment, shop_cdk_out: Path, shop_template: dict[str, Any],
               aggregator_id: str, dynamodb_local: Any) -> Iterator[LocalFunction]:
    """The bundled aggregator, warm, from its cdk.out asset, with its resolved environment."""
    fn = LocalFunction(
        asset_dir(shop_cdk_out, shop_template, aggregator_id), AGGREGATOR_HANDLER,
        environment=shop_deployment.function_environment(aggregator_id), endpoint=dynamodb_local.endpoint,
    )
    with fn:
        yield fn


@pytest.fixture
def runner_for(shop_deployment: LocalDeployment, shop_template: dict[str, Any], aggregator_id: str,
               dynamodb_streams_client: Any) -> Any:
    """``runner_for(handler)``: a StreamRunner with the synthesized mapping's settings."""
    def make(handler: Any) -> StreamRunner:
        return StreamRunner.from_deployment(shop_deployment, shop_template, handler=handler,
                                            streams_client=dynamodb_streams_client, function_logical_id=aggregator_id)
    return make


@pytest.fixture
def env(shop_deployment: LocalDeployment, aggregator_id: str) -> dict[str, str]:
    return shop_deployment.function_environment(aggregator_id)


def throttled_counter(dynamodb_local: Any, env: dict[str, str], seed: int, injected: Counter[str]) -> CounterClient:
    """A CounterClient whose UpdateItem calls are throttled at THROTTLE_RATE before reaching the server.

    botocore retries them (standard mode, up to 10 attempts), as it would real throttling. A
    throttled request never reached DynamoDB, so the retry cannot double count.
    """
    client = dynamodb_local.client(Config(retries={"max_attempts": 10, "mode": "standard"}, connect_timeout=2,
                                          read_timeout=30))
    rng, lock = random.Random(seed), threading.Lock()

    def throttle(request: Any, **_: Any) -> AWSResponse | None:
        if rng.random() >= THROTTLE_RATE:
            return None
        with lock:
            injected["throttled"] += 1
        return AWSResponse(request.url, 400, {"Content-Type": "application/x-amz-json-1.0"}, _Body(_THROTTLE_BODY))

    client.meta.events.register("before-send.dynamodb.UpdateItem", throttle)
    return CounterClient.from_environment("product_views", environ=env, client=client, rng=random.Random(seed))


def test_mapping_settings_come_from_the_template(runner_for: Any) -> None:
    # GIVEN the runner built from the synthesized mapping THEN it applies the construct's documented defaults
    settings: MappingSettings = runner_for(lambda event: None).settings
    assert (settings.batch_size, settings.max_retry_attempts, settings.max_record_age_s) == (1000, 5, 3600)
    assert settings.bisect_on_error and settings.report_batch_item_failures and settings.on_failure
    family = {"PK": {"S": [{"prefix": "COUNTER#product_views#"}]}}
    assert settings.filters == (
        {"dynamodb": {"Keys": {**family, "SK": {"S": ["SUM", "SHARD"]}}}},
        {"eventName": ["INSERT"], "dynamodb": {"Keys": {**family, "SK": {"S": [{"prefix": "KEY#"}]}}}},
    )


def test_concurrent_throttled_increments_aggregate_to_exact_totals(
    dynamodb_local: Any, dynamodb_client: Any, env: dict[str, str], aggregator: LocalFunction, runner_for: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN 8 writers x INCREMENTS (2,000 under soak, 250 else) over 5 counters, with throttling
    # injected into their clients
    # (botocore's retry backoff scaled by BACKOFF_SCALE)
    monkeypatch.setattr(botocore.endpoint, "time", _ScaledSleep())
    injected: Counter[str] = Counter()

    def write(seed: int) -> Counter[str]:
        counter, rng, done = throttled_counter(dynamodb_local, env, seed, injected), random.Random(seed), Counter()
        for _ in range(INCREMENTS):
            counter_id = rng.choice(COUNTERS)
            counter.increment(counter_id)
            done[counter_id] += 1
        return done

    with ThreadPoolExecutor(WRITERS) as pool:
        expected = sum(pool.map(write, range(WRITERS)), Counter())
    assert sum(expected.values()) == WRITERS * INCREMENTS
    # the throttling really happened: at least half the expected ~2 % of the calls (~340 under
    # soak, ~40 else; the writers' generators are seeded, so the count is the same on every run)
    assert injected["throttled"] > WRITERS * INCREMENTS * THROTTLE_RATE / 2
    # AND one order, written to the same table, whose stream record the filter must keep away
    dynamodb_client.put_item(TableName=env["CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS_TABLE"],
                             Item={"PK": {"S": "PRODUCT#x"}, "SK": {"S": "PRODUCT"}, "_type": {"S": "Product"}})

    # WHEN the real stream records are fed to the bundled aggregator (events kept for replay)
    events: list[dict[str, Any]] = []

    def handler(event: dict[str, Any]) -> Any:
        events.append(event)
        return aggregator(event)

    runner = runner_for(handler)
    report = runner.run()
    # THEN every shard write was delivered in batches of <= 1,000, nothing failed, the order was filtered out
    assert report.delivered == WRITERS * INCREMENTS and report.filtered_out == 1
    assert max(len(b) for b in report.batches) == 1000
    assert (report.retries, report.dead_lettered, report.errors) == (0, 0, [])
    # AND every aggregated total equals the number of increments exactly, and the exact sum agrees
    reader = CounterClient.from_environment("product_views", environ=env, client=dynamodb_client)
    totals = {c: reader.get(c, consistent=True) for c in COUNTERS}
    assert {c: v.total for c, v in totals.items()} == dict(expected)
    assert all(v.aggregated_at is not None for v in totals.values())
    assert {c: reader.get(c, exact=True).total for c in COUNTERS} == dict(expected)

    # WHEN the same stream batches are delivered again (at-least-once delivery), twice
    for event in events[:3] + events[-2:]:
        for _ in range(2):
            assert aggregator(event) == {"batchItemFailures": []}
    # THEN the totals are unchanged: each total remembers the stream sequence numbers it applied per shard
    assert {c: reader.get(c, consistent=True).total for c in COUNTERS} == dict(expected)

    # AND the total items the aggregator wrote are on the stream too, but never invoke it
    again = runner.run()
    assert (again.invocations, again.delivered) == (0, 0)
    assert again.filtered_out >= len(COUNTERS)  # one record per stored total at least


def test_idempotent_view_retried_five_times_counts_once_after_aggregation(
    shop_deployment: LocalDeployment, orders_api_logical_id: str, orders_api_asset: Path, dynamodb_local: Any,
    env: dict[str, str], aggregator: LocalFunction, runner_for: Any, dynamodb_client: Any,
) -> None:
    # GIVEN the orders API (bound to the counter) from its asset
    with LocalFunction(orders_api_asset, "orders_api.handler", endpoint=dynamodb_local.endpoint,
                       environment=shop_deployment.function_environment(orders_api_logical_id)) as api:
        # WHEN one page view is sent 5 times with the same request id, and another once without
        replies = [api({"op": "view_product", "sku": "SKU-9", "request_id": "req-42"}) for _ in range(5)]
        api({"op": "view_product", "sku": "SKU-9"})
        # AND the stream is aggregated
        report = runner_for(aggregator).run()
        views = api({"op": "product_views", "sku": "SKU-9"})
        exact = api({"op": "product_views", "sku": "SKU-9", "exact": True})
    # THEN the retried view counted once: the aggregated total and the exact sum are both 2
    assert all(r["ok"] for r in replies) and len({r["shard"] for r in replies}) == 1
    assert report.dead_lettered == 0
    assert (views["views"], exact["views"], exact["exact"]) == (2, 2, True)
    assert views["aggregated_at"] is not None


def test_a_record_of_unknown_shape_is_reported_and_its_dead_lettered_range_re_driven_once(
    dynamodb_client: Any, env: dict[str, str], aggregator: LocalFunction, runner_for: Any,
) -> None:
    # GIVEN 20 increments of VID-0, then a shard write that carries no amount (a put by hand, not
    # an increment: the aggregator cannot know what it added), then 30 more increments of VID-0 and VID-1
    writer = CounterClient.from_environment("product_views", environ=env, client=dynamodb_client,
                                            rng=random.Random(3))
    for _ in range(20):
        writer.increment("VID-0")
    poison = writer.spec.shard_key("VID-P", 0)
    dynamodb_client.put_item(TableName=writer.table_name, Item={
        **{k: {"S": v} for k, v in poison.items()}, "_type": {"S": "CounterShard"}, "count": {"N": "0"}})
    later = [f"VID-{i % 2}" for i in range(30)]
    for counter_id in later:
        writer.increment(counter_id)
    made = Counter(["VID-0"] * 20 + later)

    # WHEN the stream goes through the synthesized mapping to the bundled aggregator
    runner = runner_for(aggregator)
    report = runner.run()
    # THEN the aggregator applied the records before the poison and reported the poison, every retry
    # again, until the mapping sent the poison and every record after it to the failure destination
    assert report.retries == 5 and report.dead_lettered == 1 + len(later) and report.errors == []
    (failed,) = runner.dead_letters
    info = failed["DDBStreamBatchInfo"]
    assert (failed["requestContext"]["condition"], info["batchSize"]) == ("RetryAttemptsExhausted", 1 + len(later))
    reader = CounterClient.from_environment("product_views", environ=env, client=dynamodb_client)
    assert reader.get("VID-0", consistent=True).total == 20 and reader.get("VID-1", consistent=True).total == 0
    # AND the exact read already has every increment: nothing was lost, only not yet applied
    assert {c: reader.get(c, exact=True).total for c in made} == dict(made)

    # WHEN the failed range is re-driven: {"source": ..., "ranges": [...]} with the on-failure record
    # (what the failure queue's message holds)
    event = {"source": REDRIVE_SOURCE, "ranges": [failed]}
    first = aggregator(event)
    # THEN its 30 increments are applied once; the poison is reported again, never dropped
    (done,) = first["redriven"]
    assert (done["applied"], done["counters"], done["unknown"]) == (len(later), 2, [info["startSequenceNumber"]])
    assert {c: reader.get(c, consistent=True).total for c in made} == dict(made)
    assert {c: reader.get(c, exact=True).total for c in made} == dict(made)
    # AND re-driving it again, or delivering the whole stream again, adds nothing
    (again,) = aggregator(event)["redriven"]
    assert (again["applied"], again["counters"]) == (len(later), 0)
    replay = runner_for(aggregator)
    replay.run()
    assert {c: reader.get(c, consistent=True).total for c in made} == dict(made)


def test_a_range_can_be_re_driven_from_its_bare_batch_info(
    dynamodb_client: Any, env: dict[str, str], aggregator: LocalFunction, runner_for: Any,
) -> None:
    # GIVEN a range dead-lettered behind a record of unknown shape
    writer = CounterClient.from_environment("product_views", environ=env, client=dynamodb_client)
    poison = writer.spec.shard_key("VID-P", 0)
    dynamodb_client.put_item(TableName=writer.table_name, Item={**{k: {"S": v} for k, v in poison.items()}})
    writer.increment("VID-0", by=3)
    runner = runner_for(aggregator)
    runner.run()
    (failed,) = runner.dead_letters
    # WHEN it is re-driven with the DDBStreamBatchInfo object itself, as documented
    result = aggregator({"source": REDRIVE_SOURCE, "ranges": [failed["DDBStreamBatchInfo"]]})
    # THEN its increment is applied
    assert result["redriven"][0]["applied"] == 1
    assert writer.get("VID-0", consistent=True).total == 3
