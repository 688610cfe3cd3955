"""Viral-video scenario on DynamoDB Local: sharded, idempotent view counting and aggregation.

What it does, against the table created **from the synthesized template**:

1. prints the shard count the construct derived for 50,000 views/s and its arithmetic, read from
   the synthesized aggregator's ``COUNTER_SHARDS_DERIVATION`` environment variable;
2. publishes three videos (the catalog's job: a ``TableClient`` with the bundled model);
3. counts 2,000 views from 4 concurrent threads (one video goes viral: 80 % of them), each view
   an idempotent increment with its own request id (one conditional PutItem of an item keyed by
   it), and shows how they spread over the shards;
4. reads the views before aggregation: the aggregated total (one GetItem) is still 0, and so is
   the exact read: an idempotent view joins it once the aggregator has applied it;
5. sends one view three times with the same request id through the **bundled views API handler**
   (from its ``cdk.out`` asset): one increment item, the retries reported as duplicates;
6. feeds the table's **real stream** to the **bundled aggregator** through the synthesized event
   source mapping (its filters let only the counter's shard writes and new increment items
   through), then shows every aggregated total equal to the exact read and to the views made,
   and a redelivered batch changing nothing.

Run it from the repository root: ``.venv/bin/python -m examples.viral.scenario`` (synthesizes the
app to a temporary directory, starts DynamoDB Local, runs, stops it). Tests call :func:`run`.
"""

from __future__ import annotations

import random
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `examples` and `constructs_lib` importable
    sys.path.insert(0, str(ROOT))

from constructs_lib.model import Model
from constructs_lib.runtime import CounterClient, TableClient
from constructs_lib.testing import asset_dir, deploy_assembly_stack
from constructs_lib.testing.handlers import LocalFunction
from constructs_lib.testing.streams import StreamRunner
from examples._scenario import function_id, run_standalone

if TYPE_CHECKING:
    from constructs_lib.testing import DynamoDBLocal, LocalDeployment

STACK = "ViralVideoStack"
FAMILY = "video_views"
API_HANDLER = "views_api.handler"
AGGREGATOR_HANDLER = "constructs_lib.runtime.handlers.counter.handler"
VIRAL = "v-cat-piano"
VIDEOS = {VIRAL: "Cat plays the piano", "v-recipe": "Bread in 5 minutes", "v-talk": "On DynamoDB partitions"}
#: Share of views going to the viral video; the rest split evenly between the others.
VIRAL_SHARE = 0.8
WORKERS, VIEWS_PER_WORKER = 4, 500


@dataclass
class ViralOutcome:
    """What the scenario observed (asserted by the tests)."""

    shards: int = 0
    derivation: str = ""
    views_made: Counter[str] = field(default_factory=Counter)
    viral_shards_touched: int = 0
    viral_per_shard: tuple[int, float, int] = (0, 0.0, 0)  # min, mean, max views per shard
    before: dict[str, tuple[int, int]] = field(default_factory=dict)  # video -> (aggregated, exact)
    retry_replies: list[dict[str, Any]] = field(default_factory=list)
    delivered: int = 0
    filtered_out: int = 0
    dead_lettered: int = 0
    invocations: int = 0
    after: dict[str, tuple[int, int]] = field(default_factory=dict)  # video -> (aggregated, exact)
    replayed: dict[str, int] = field(default_factory=dict)
    api_views: dict[str, Any] = field(default_factory=dict)
    retry_item: dict[str, Any] = field(default_factory=dict)  # the retried request's increment item



def run(cdk_out: Path, server: DynamoDBLocal, *, out: Callable[[str], None] = print, seed: int = 7) -> ViralOutcome:
    """Run the scenario on ``server`` with the stack synthesized into ``cdk_out``.

    Parameters
    ----------
    cdk_out : Path
        Cloud assembly holding ``ViralVideoStack``.
    server : DynamoDBLocal
        A running DynamoDB Local.
    out : Callable[[str], None], optional
        Where the narration goes. Default ``print``.
    seed : int, optional
        Seed of the video choice per view (shard choice is derived from the request id).
        Default 7.

    Returns
    -------
    ViralOutcome
        What was observed. The table is deleted before returning.
    """
    deployment = deploy_assembly_stack(cdk_out, STACK, client=server.client(), name_prefix="viral-")
    try:
        return _run(cdk_out, server, deployment, out, seed)
    finally:
        deployment.delete()


def _run(cdk_out: Path, server: DynamoDBLocal, deployment: LocalDeployment, out: Callable[[str], None],
         seed: int) -> ViralOutcome:
    template = dict(deployment.template)
    outcome = ViralOutcome()
    agg_id, api_id = function_id(template, AGGREGATOR_HANDLER), function_id(template, API_HANDLER)
    agg_env, api_env = deployment.function_environment(agg_id), deployment.function_environment(api_id)
    reader = CounterClient.from_environment(FAMILY, environ=agg_env, client=server.client())
    outcome.shards, outcome.derivation = reader.spec.shards, agg_env["COUNTER_SHARDS_DERIVATION"]
    (table_id,) = deployment.tables
    desc = deployment.describe(table_id)
    out(f"== table {desc['TableName']} created from {STACK}.template.json, stream "
        f"{desc['StreamSpecification']['StreamViewType']}")
    out(f"== counter family {FAMILY!r}: {outcome.shards} shards")
    out(f"   COUNTER_SHARDS_DERIVATION = {outcome.derivation}")
    out(f"   per shard at peak: 50,000 / {outcome.shards} = {50_000 / outcome.shards:.0f} views/s x 1 WCU "
        "(one conditional PutItem per view, no transaction) of a partition's 1,000")

    api_asset = asset_dir(cdk_out, template, api_id)
    model = Model.from_json((api_asset / "model.json").read_text(encoding="utf-8"))
    catalog = TableClient(model, api_env["TABLE_NAME"], client=server.client())
    with LocalFunction(api_asset, API_HANDLER, environment=api_env, endpoint=server.endpoint) as api:
        out("\n== 1. the catalog publishes three videos (TableClient with the model bundled in the API's asset)")
        for video_id, title in VIDEOS.items():
            catalog.put("Video", {"video_id": video_id, "title": title, "channel_id": "c-1"}, create_only=True)
            out(f"   {video_id}: {title!r} at {catalog.keys('Video', video_id=video_id)}")

        out(f"\n== 2. {WORKERS} threads x {VIEWS_PER_WORKER} views, each with its own request id "
            f"({VIRAL_SHARE:.0%} on {VIRAL})")
        others = [v for v in VIDEOS if v != VIRAL]

        def watch(worker: int) -> tuple[Counter[str], Counter[int]]:
            rng = random.Random(seed * 1000 + worker)
            client = CounterClient.from_environment(FAMILY, environ=api_env, client=server.client())
            made: Counter[str] = Counter()
            shards: Counter[int] = Counter()
            for i in range(VIEWS_PER_WORKER):
                video = VIRAL if rng.random() < VIRAL_SHARE else rng.choice(others)
                done = client.increment(video, idempotency_key=f"req-{worker}-{i}")
                made[video] += 1
                if video == VIRAL:
                    shards[done.shard] += 1
            return made, shards

        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(watch, range(WORKERS)))
        outcome.views_made = sum((made for made, _ in results), Counter())
        per_shard: Counter[int] = sum((shards for _, shards in results), Counter())
        counts = [per_shard.get(s, 0) for s in range(outcome.shards)]
        outcome.viral_shards_touched = sum(1 for c in counts if c)
        outcome.viral_per_shard = (min(counts), statistics.fmean(counts), max(counts))
        out(f"   views made: {dict(sorted(outcome.views_made.items()))}")
        low, mean, high = outcome.viral_per_shard
        out(f"   {VIRAL}: {outcome.views_made[VIRAL]} views on {outcome.viral_shards_touched} of {outcome.shards} "
            f"shards, {low}..{high} per shard (mean {mean:.1f})")
        per_second = 50_000 / outcome.shards
        out(f"   (random spread is wide at {mean:.0f} views a shard; at {per_second:.0f} views/s a shard it is "
            f"+-{100 / per_second ** 0.5:.1f} % a second (Poisson), 3 sigma = {300 / per_second ** 0.5:.0f} % "
            "< the 20 % headroom)")

        out("\n== 3. before aggregation")
        for video_id in VIDEOS:
            aggregated, exact = api({"op": "views", "video_id": video_id}), api(
                {"op": "views", "video_id": video_id, "exact": True})
            outcome.before[video_id] = (aggregated["views"], exact["views"])
            out(f"   {video_id}: aggregated total {aggregated['views']} (GetItem of the total item), exact "
                f"{exact['views']} (BatchGetItem of {outcome.shards} shards and the total)")
        out("   (each view is an increment item keyed by its request id, not yet in any total: the exact read "
            "counts it once the aggregator has applied it from the stream)")

        out("\n== 4. one view, its request retried twice (same request id)")
        outcome.retry_replies = [api({"op": "view", "video_id": "v-talk", "request_id": "req-retry-1"})
                                 for _ in range(3)]
        outcome.views_made["v-talk"] += 1
        for n, reply in enumerate(outcome.retry_replies, start=1):
            out(f"   attempt {n}: shard {reply['shard']}, duplicate={reply['duplicate']}")
        shard = outcome.retry_replies[0]["shard"]
        key = reader.spec.increment_key("v-talk", shard, "req-retry-1")
        item = server.client().get_item(TableName=reader.table_name,
                                        Key={k: {"S": v} for k, v in key.items()}, ConsistentRead=True)["Item"]
        outcome.retry_item = {k: next(iter(v.values())) for k, v in item.items()}
        out(f"   the request id's one increment item: {key['PK']} / {key['SK']}, by={outcome.retry_item['by']}")
        out("   (the first attempt created it with one conditional PutItem, 1 WCU; each retry is refused by it "
            "and reported as a duplicate, with the same amount — another amount would raise "
            "IdempotencyKeyReusedError)")

        out("\n== 5. the table's stream -> bundled aggregator, through the synthesized mapping")
        agg_asset = asset_dir(cdk_out, template, agg_id)
        with LocalFunction(agg_asset, AGGREGATOR_HANDLER, environment=agg_env, endpoint=server.endpoint) as aggregator:
            events: list[dict[str, Any]] = []

            def deliver(event: dict[str, Any]) -> Any:
                events.append(event)
                return aggregator(event)

            runner = StreamRunner.from_deployment(deployment, template, handler=deliver,
                                                  streams_client=server.streams_client(), function_logical_id=agg_id)
            for rule in runner.settings.filters:
                out(f"   mapping filter: {rule}")
            report = runner.run()
            outcome.delivered, outcome.filtered_out = report.delivered, report.filtered_out
            outcome.dead_lettered, outcome.invocations = report.dead_lettered, report.invocations
            out(f"   {report.invocations} invocations (batches of <= {runner.settings.batch_size}), "
                f"{report.delivered} increment items delivered, {report.filtered_out} other records filtered out "
                f"(videos), {report.dead_lettered} dead-lettered")
            for video_id in VIDEOS:
                total = reader.get(video_id, consistent=True)
                exact = reader.get(video_id, exact=True)
                outcome.after[video_id] = (total.total, exact.total)
                out(f"   {video_id}: aggregated {total.total} (at {total.aggregated_at:%H:%M:%S}), "
                    f"exact {exact.total}, "
                    f"views made {outcome.views_made[video_id]}")
            aggregator(events[0])
            outcome.replayed = {v: reader.get(v, consistent=True).total for v in VIDEOS}
            out(f"   first batch delivered again (at-least-once): totals {outcome.replayed} — unchanged: each "
                "total remembers the last stream sequence number it applied per shard, so a record adds once")
        outcome.api_views = api({"op": "video", "video_id": VIRAL})
        out(f"   views API: {outcome.api_views['video']['title']!r} has {outcome.api_views['views']} views")
    return outcome


def main() -> int:
    """Synthesize the app to a temporary directory, start DynamoDB Local, run, stop."""
    from examples.viral.app import build_app

    return run_standalone("viral", build_app, run)


if __name__ == "__main__":
    raise SystemExit(main())
