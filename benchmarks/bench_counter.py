"""Sharded counter: modelled write ceiling, measured increment overhead, aggregator cost, and
capacity units per 1,000 increments before and after the stream layout.

Five figures (see ``benchmarks/README.md`` for how to read them):

1. **Modelled write ceiling** vs shard count — N × :data:`PARTITION_WCU` WCU/s divided by the
   WCU one increment costs (plain or idempotent: one write in the stream layout, a transaction
   in the recompute layout), with the library's own :func:`derive_shards` answers for the seed's
   writes/s. Every figure, in the tables and in the notes, comes from :func:`derive_shards` and
   :data:`PARTITION_WCU`; plotted to ``counter_write_ceiling.png``.
2. **Measured** single-thread ``CounterClient.increment`` ops/s against a hand-written boto3
   ``update_item(UpdateExpression="ADD #c :one")`` on the same DynamoDB Local table.
3. **Measured** idempotent increments (``idempotency_key=...``: one conditional PutItem each)
   against the identical hand-written request.
4. **Aggregator cost of the recompute layout**: BatchGetItem calls made by one ``recompute()``
   for 1…1,000 shards (counted by a botocore ``before-call`` hook; expected ⌈N/100⌉) and its
   wall time, relative to a 1-shard recompute.
5. **Units per 1,000 increments** with their aggregation, from ``ConsumedCapacity``
   (:mod:`benchmarks.counter_units`).

The table is created from the synthesized ``app.py`` template; the counter spec comes from
the ``ProductViewsFunction`` aggregator's environment, as in a deployed Lambda.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._harness import (
    Annotation,
    Context,
    Row,
    Section,
    Series,
    Stats,
    Table,
    Timings,
    interleave,
    log,
    save_line_plot,
)
from benchmarks.counter_units import UnitsBench, report, scenarios
from constructs_lib.runtime import _aws
from constructs_lib.runtime.limits import PARTITION_WCU, WCU_BYTES
from constructs_lib.runtime.patterns.counter import CounterClient, CounterSpec, derive_shards
from constructs_lib.runtime.patterns.counter.spec import COUNT, RECOMPUTE

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from constructs_lib.testing.dynamodb_local import DynamoDBLocal
    from constructs_lib.testing.local_deploy import LocalDeployment

NAME = "counter"
TITLE = "Sharded counter"
NEEDS_DYNAMODB = True

FAMILY = "product_views"
AGGREGATOR_PREFIX = "ProductViewsFunction"
PLOT_FILE = "counter_write_ceiling.png"
#: The seed's hot-counter target.
SEED_WRITES_PER_SECOND = 50_000
MODELLED_SHARDS = (1, 2, 5, 10, 50, 100)
RECOMPUTE_SHARDS = (1, 50, 100, 101, 250, 1000)
#: Increment throughput goal: CounterClient within 5 % of a raw UpdateItem.
INCREMENT_GOAL = 0.95
#: Keys per BatchGetItem call (DynamoDB's limit), for the expected call count.
BATCH_GET_KEYS = 100
#: Retry settings of CounterClient's default client (retry_mode="adaptive", max_attempts=10).
RETRY_MODE, MAX_ATTEMPTS = "adaptive", 10


@dataclass(frozen=True)
class Plan:
    """Rounds and operations per timed block of the measured figures."""

    increment_rounds: int
    increment_ops: int
    #: Untimed increments of each variant first: DynamoDB Local's JVM needs ~1,000 requests to settle.
    increment_warmup: int
    recompute_rounds: int
    recompute_ops: int

    #: Increments per scenario of the units figure.
    unit_increments: int = 1000

    @classmethod
    def for_context(cls, ctx: Context) -> Plan:
        return cls(3, 40, 40, 2, 1, 200) if ctx.quick else cls(21, 100, 300, 12, 2, 1000)


# -----------------------------------------------------------------------------------------------
# 1. Modelled ceiling
# -----------------------------------------------------------------------------------------------
def wcu_per_increment(*, transactional: bool) -> float:
    """WCU one increment of a shard item costs, as :func:`derive_shards` counts it (no headroom)."""
    return derive_shards(1, headroom=1.0, transactional=transactional).required_wcu


def increments_ceiling(shards: int, *, transactional: bool) -> float:
    """Increments/s *shards* partitions carry: the rate at which ``derive_shards`` (no headroom) asks
    for exactly that many."""
    return shards * PARTITION_WCU / wcu_per_increment(transactional=transactional)


def _modelled(ctx: Context, synthesized: int) -> tuple[list[Table], list[str], list[str]]:
    """Ceiling table, derive_shards table and the plot (no measurement: library arithmetic); *synthesized*
    is the shard count app.py's family is synthesized with."""
    plain_wcu = wcu_per_increment(transactional=False)  # a <= 1 KB UpdateItem
    tx_wcu = wcu_per_increment(transactional=True)  # the same write in a transaction (idempotent increment)

    def ceiling(shards: int, wcu_per_write: float) -> float:
        return shards * PARTITION_WCU / wcu_per_write

    seed = SEED_WRITES_PER_SECOND
    ceiling_rows = [
        [
            f"{n:,}",
            f"{n * PARTITION_WCU:,}",
            f"{increments_ceiling(n, transactional=False):,.0f}",
            f"{increments_ceiling(n, transactional=True):,.0f}",
            "yes" if increments_ceiling(n, transactional=False) >= seed else "no",
            "yes" if increments_ceiling(n, transactional=True) >= seed else "no",
        ]
        for n in MODELLED_SHARDS
    ]
    ceiling_table = Table(
        title=f"Modelled write ceiling of one counter (PARTITION_WCU = {PARTITION_WCU:,} WCU/s per shard partition)",
        headers=[
            "shards",
            "WCU/s",
            f"plain increments/s ({plain_wcu:g} WCU each)",
            f"idempotent increments/s, recompute layout ({tx_wcu:g} WCU each: a transaction)",
            f"plain ≥ {seed:,}/s?",
            f"recompute-layout idempotent ≥ {seed:,}/s?",
        ],
        rows=ceiling_rows,
    )
    sizings = {
        f"derive_shards({seed:_})": derive_shards(seed),
        f"derive_shards({seed:_}, transactional=True)": derive_shards(seed, transactional=True),
        f"derive_shards({seed:_}, headroom=1.0)": derive_shards(seed, headroom=1.0),
        f"derive_shards({seed:_}, headroom=1.0, transactional=True)": derive_shards(seed, headroom=1.0, transactional=True),
    }
    derive_table = Table(
        title=f"What the library derives for the seed's {seed:,} writes/s",
        headers=["call", "shards", "ShardSizing.explain()"],
        rows=[[f"`{call}`", str(s.shards), s.explain()] for call, s in sizings.items()],
    )

    xs = sorted({*MODELLED_SHARDS, 20, 200})
    plain_min = sizings[f"derive_shards({seed:_}, headroom=1.0)"].shards
    tx_min = sizings[f"derive_shards({seed:_}, headroom=1.0, transactional=True)"].shards
    default = sizings[f"derive_shards({seed:_})"].shards
    default_tx = sizings[f"derive_shards({seed:_}, transactional=True)"].shards
    headroom = sizings[f"derive_shards({seed:_})"].headroom
    save_line_plot(
        ctx.out_dir / PLOT_FILE,
        [
            Series(f"plain increments ({plain_wcu:g} WCU)", xs, [ceiling(n, plain_wcu) for n in xs]),
            Series(f"idempotent increments ({tx_wcu:g} WCU, transaction)", xs, [ceiling(n, tx_wcu) for n in xs], "s-"),
        ],
        title=f"Modelled write ceiling of one sharded counter ({PARTITION_WCU:,} WCU/s per partition)",
        xlabel="shards (log)",
        ylabel="increments/s (log)",
        log_x=True,
        log_y=True,
        hlines=[(seed, f"seed target {seed:,} writes/s")],
        vlines=[(plain_min, f"{plain_min} shards: plain ceiling = target"),
                (tx_min, f"{tx_min} shards: idempotent ceiling = target")],
        annotations=[
            Annotation(f"{plain_min} shards × {ceiling(1, plain_wcu):,.0f} = {ceiling(plain_min, plain_wcu):,.0f}/s\n"
                       f"(derive_shards default headroom {headroom:g} → {default})",
                       (plain_min, seed), (1.2, 150_000)),
            Annotation(f"idempotent: {tx_min} shards × {ceiling(1, tx_wcu):,.0f} = {ceiling(tx_min, tx_wcu):,.0f}/s\n"
                       f"(derive_shards(…, transactional=True) → {default_tx})",
                       (tx_min, seed), (1.2, 26_000)),
        ],
        xticks=xs,
        legend_loc="lower right",
    )
    notes = [
        (f"Modelled figures are DynamoDB's documented per-partition limit ({PARTITION_WCU:,} WCU/s) times the shard "
         f"count, divided by what one increment costs as `derive_shards` counts it: {plain_wcu:g} WCU for a plain "
         f"increment (a ≤ {WCU_BYTES // 1024} KB UpdateItem) and for an idempotent one in the stream layout (a "
         f"≤ 1 KB conditional PutItem), {tx_wcu:g} WCU for an idempotent one in the recompute layout (a "
         f"transaction, `transactional=True`) — so N shards carry N × {ceiling(1, plain_wcu):,.0f} increments/s, or "
         f"N × {ceiling(1, tx_wcu):,.0f} idempotent ones in the recompute layout. All from "
         f"`constructs_lib.runtime.patterns.counter`; nothing is measured: DynamoDB Local does not throttle."),
        (f"At exactly the seed's {seed:,} writes/s, increments need {plain_min} shards "
         f"(`derive_shards({seed:_}, headroom=1.0)`) and the recompute layout's idempotent ones {tx_min} "
         f"(`…, transactional=True`); `derive_shards` adds its default headroom ×{headroom:g} (burstiness and the "
         f"uneven spread of random shard choice) and answers {default} and {default_tx}. app.py's `product_views` "
         f"is synthesized with {synthesized} shards"
         + (f" (= `derive_shards({seed:_}, transactional=True)`)." if synthesized == default_tx
            else f" (`derive_shards({seed:_})` gives {default}, `…, transactional=True` {default_tx}).")),
    ]
    return [ceiling_table, derive_table], notes, [PLOT_FILE]


# -----------------------------------------------------------------------------------------------
# The deployed table
# -----------------------------------------------------------------------------------------------
def _synthesize() -> dict[str, Any]:
    """``ShopStack.template.json`` of ``app.py``, synthesized in-process into a temp dir."""
    from app import build_app

    with tempfile.TemporaryDirectory(prefix="bench-counter-") as outdir:
        build_app(outdir).synth()
        return json.loads((Path(outdir) / "ShopStack.template.json").read_text(encoding="utf-8"))


def _client(ddb: DynamoDBLocal) -> BaseClient:
    """A DynamoDB Local client with CounterClient's default retry settings (adaptive, 10 attempts)."""
    import boto3
    from botocore.config import Config

    kwargs = ddb.client_kwargs()
    kwargs["config"] = kwargs["config"].merge(Config(retries={"mode": RETRY_MODE, "max_attempts": MAX_ATTEMPTS}))
    return boto3.session.Session().client("dynamodb", **kwargs)


@contextmanager
def _deployed(ddb: DynamoDBLocal) -> Iterator[tuple[LocalDeployment, dict[str, str]]]:
    """The app's tables in DynamoDB Local and the aggregator's resolved environment; deleted on exit."""
    from constructs_lib.testing import deploy_template

    template = _synthesize()
    with deploy_template(template, client=ddb.client(), name_prefix="bench-counter-") as deployment:
        yield deployment, deployment.function_environment(AGGREGATOR_PREFIX)


# -----------------------------------------------------------------------------------------------
# 2 + 3. Increments
# -----------------------------------------------------------------------------------------------
def _library_python_us(spec: CounterSpec, table: str) -> float:
    """Median µs of CounterClient.increment's own Python per call: its client is a stub."""

    class StubClient:
        def update_item(self, **_: Any) -> dict[str, Any]:
            return {}

    counter = CounterClient(spec, table, client=StubClient(), rng=random.Random(4))  # type: ignore[arg-type]
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(2000):
            counter.increment("stub")
        samples.append((time.perf_counter() - started) / 2000 * 1e6)
    return Stats.of(samples).median


def _increments(ddb: DynamoDBLocal, env: dict[str, str], plan: Plan) -> tuple[list[Row], list[str]]:
    """Raw UpdateItem vs CounterClient.increment vs idempotent increment, interleaved."""
    client = _client(ddb)
    counter = CounterClient.from_environment(FAMILY, environ=env, client=client, rng=random.Random(1))
    spec, table = counter.spec, counter.table_name

    # The baseline: what one writes by hand — a pre-serialized key of a random shard, ADD only.
    raw_rng = random.Random(2)
    raw_keys = [_aws.serialize(spec.shard_key("raw-baseline", n)) for n in range(spec.shards)]
    raw_names, raw_values = {"#c": COUNT}, {":one": {"N": "1"}}

    def raw() -> None:
        client.update_item(
            TableName=table, Key=raw_rng.choice(raw_keys), UpdateExpression="ADD #c :one",
            ExpressionAttributeNames=raw_names, ExpressionAttributeValues=raw_values,
        )

    # A second baseline: the very request CounterClient sends (same expression, attributes and
    # values), pre-serialized by hand — separates the cost of the request from the library's.
    def counter_request(n: int) -> dict[str, Any]:
        request = counter._shard_update(1)
        return {"TableName": table, "Key": _aws.serialize(spec.shard_key("raw-same-request", n)), **request}

    same_requests = [counter_request(n) for n in range(spec.shards)]
    same_rng = random.Random(3)

    def raw_same() -> None:
        client.update_item(**same_rng.choice(same_requests))

    # The idempotent increment's own request, by hand: a conditional PutItem of the increment item
    # (a fresh key per call, pre-serialized; the item as CounterClient builds it, nonce and TTL included).
    expires = int(time.time()) + (spec.idempotency_ttl_seconds or 86_400)

    def put_request(n: int) -> dict[str, Any]:
        key = f"raw-{n}"
        item = {**spec.increment_key("raw-idempotent", counter.shard_for("raw-idempotent", key), key),
                spec.entity_attribute: "CounterIncrement", "by": 1, "n": f"{n:012x}", spec.ttl_attribute or "ttl": expires}
        return {"TableName": table, "Item": _aws.serialize(item), "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": spec.pk_attribute}, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}

    sent = plan.increment_warmup + plan.increment_rounds * plan.increment_ops
    put_requests = iter([put_request(n) for n in range(sent)])

    def raw_put() -> None:
        client.put_item(**next(put_requests))

    keys = (f"request-{n}" for n in itertools.count())
    variants: dict[str, Callable[[], object]] = {
        "raw update_item ADD": raw,
        "raw update_item, CounterClient's request": raw_same,
        "CounterClient.increment": lambda: counter.increment("plain"),
        "CounterClient.increment(idempotency_key=…)": lambda: counter.increment("idempotent", idempotency_key=next(keys)),
        "raw put_item, CounterClient's idempotent request": raw_put,
    }
    base, same, plain, idem, put = variants
    log(f"counter: increments, {plan.increment_rounds} rounds x {plan.increment_ops} ops x {len(variants)} variants")
    t = interleave(
        variants, baseline=base, rounds=plan.increment_rounds, ops=plan.increment_ops, warmup_ops=plan.increment_warmup
    )

    figure = "increment throughput, 1 thread"
    plain_ratio = Stats.of(t.rate_ratio(plain))
    rows = [
        Row.measured(figure, base, "ops/s", t.rate(base), baseline=True),
        Row.measured(figure, plain, "ops/s", t.rate(plain), ratios=t.rate_ratio(plain),
                     goal=f"≥ {INCREMENT_GOAL:.2f}×", met=plain_ratio.median >= INCREMENT_GOAL),
        Row.measured(figure, idem, "ops/s", t.rate(idem), ratios=t.rate_ratio(idem),
                     goal="none (one conditional put: about 1×)"),
        Row.measured(figure, same, "ops/s", t.rate(same), ratios=t.rate_ratio(same),
                     goal="none (explains the gap: the request itself)"),
        Row.measured(figure, put, "ops/s", t.rate(put), ratios=t.rate_ratio(put),
                     goal="none (the idempotent increment's request by hand)"),
    ]
    # The same samples against the second baseline: what the library's Python adds.
    same_t = Timings(seconds=t.seconds, ops=t.ops, baseline=same)
    figure = "increment throughput vs the identical hand-written request"
    rows += [
        Row.measured(figure, same, "ops/s", same_t.rate(same), baseline=True),
        Row.measured(figure, plain, "ops/s", same_t.rate(plain), ratios=same_t.rate_ratio(plain),
                     goal=f"≥ {INCREMENT_GOAL:.2f}×", met=Stats.of(same_t.rate_ratio(plain)).median >= INCREMENT_GOAL),
    ]
    put_t = Timings(seconds=t.seconds, ops=t.ops, baseline=put)
    figure = "idempotent increment throughput vs the identical hand-written request"
    rows += [
        Row.measured(figure, put, "ops/s", put_t.rate(put), baseline=True),
        Row.measured(figure, idem, "ops/s", put_t.rate(idem), ratios=put_t.rate_ratio(idem),
                     goal=f"≥ {INCREMENT_GOAL:.2f}×", met=Stats.of(put_t.rate_ratio(idem)).median >= INCREMENT_GOAL),
    ]

    # Sanity: every increment counted exactly once (the exact sum reads every shard; an
    # idempotent increment is counted by the aggregator, so its items are counted here).
    summed = {cid: counter.get(cid, exact=True).total for cid in ("raw-baseline", "raw-same-request", "plain")}
    summed["idempotent"] = _increment_items(client, table, spec, "idempotent")
    ok = all(v == sent for v in summed.values())
    notes = [
        (f"Increments: one boto3 client object (DynamoDB Local endpoint, dummy credentials, retries mode "
         f"`{RETRY_MODE}` / {MAX_ATTEMPTS} attempts — CounterClient's default) is shared by all five variants. "
         f"{plan.increment_rounds} rounds × {plan.increment_ops} ops per variant after {plan.increment_warmup} "
         "untimed warm-up ops each (DynamoDB Local's JVM needs ~1,000 requests to reach steady speed); round orders "
         "follow a Williams design. Baseline: `update_item` with a pre-serialized key of a "
         f"random one of {spec.shards} shard items and `UpdateExpression=\"ADD #c :one\"`. CounterClient's "
         f"request also SETs the shard's entity type (what stream filters and model readers key on) — "
         f"`raw update_item, CounterClient's request` "
         f"sends exactly that request pre-serialized, so the gap splits into the request (server + boto3) and "
         f"the library's own Python (key escaping, serialization: {_library_python_us(spec, table):.0f} µs per "
         f"call, median of 5 × 2,000 calls on a stub client that sends nothing). The idempotent increment (one "
         f"conditional PutItem of an increment item keyed by the idempotency key) is compared with that PutItem "
         f"written by hand, pre-serialized, a fresh key per call."),
        (f"Sanity check: exact sums after the run {summed} {'equal' if ok else '**differ from**'} the {sent} "
         f"increments sent per variant."),
    ]
    return rows, notes


# -----------------------------------------------------------------------------------------------
# 4. Aggregator recompute
# -----------------------------------------------------------------------------------------------
def _increment_items(client: BaseClient, table: str, spec: CounterSpec, counter_id: str) -> int:
    """Sum of ``by`` over a counter's increment items (every shard's ``KEY#`` items)."""
    total = 0
    for n in range(spec.shards):
        pk = spec.shard_key(counter_id, n)[spec.pk_attribute]
        pages = client.get_paginator("query").paginate(
            TableName=table, KeyConditionExpression="#pk = :pk AND begins_with(#sk, :key)",
            ExpressionAttributeNames={"#pk": spec.pk_attribute, "#sk": spec.sk_attribute},
            ExpressionAttributeValues={":pk": {"S": pk}, ":key": {"S": "KEY#"}}, ConsistentRead=True)
        total += sum(int(item["by"]["N"]) for page in pages for item in page["Items"])
    return total


def _fill_shards(client: BaseClient, table: str, spec: CounterSpec, counter_id: str) -> None:
    """Write every shard of *counter_id* with count 1 (BatchWriteItem, 25 per call)."""
    items = [{**spec.shard_key(counter_id, n), COUNT: 1} for n in range(spec.shards)]
    for start in range(0, len(items), 25):
        request = {table: [{"PutRequest": {"Item": _aws.serialize(i)}} for i in items[start:start + 25]]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


def _recompute(ddb: DynamoDBLocal, env: dict[str, str], plan: Plan) -> tuple[list[Row], list[str]]:
    """BatchGetItem calls and wall time of one recompute() per shard count, interleaved."""
    # A fresh client whose every BatchGetItem call is counted before it is sent.
    client = _client(ddb)
    deployed = CounterClient.from_environment(FAMILY, environ=env, client=client)
    base_spec, table = deployed.spec, deployed.table_name
    calls = [0]

    def count_call(**_: Any) -> None:
        calls[0] += 1

    client.meta.events.register("before-call.dynamodb.BatchGetItem", count_call)

    per_recompute: dict[int, list[int]] = {n: [] for n in RECOMPUTE_SHARDS}
    totals: dict[int, set[int]] = {n: set() for n in RECOMPUTE_SHARDS}
    variants: dict[str, Callable[[], object]] = {}
    for n in RECOMPUTE_SHARDS:
        spec = CounterSpec(
            family="bench_recompute", shards=n, pk_attribute=base_spec.pk_attribute,
            sk_attribute=base_spec.sk_attribute, entity_attribute=base_spec.entity_attribute,
            ttl_attribute=base_spec.ttl_attribute, aggregation=RECOMPUTE,
        )
        counter = CounterClient(spec, table, client=client)
        counter_id = f"shards-{n}"
        _fill_shards(client, table, spec, counter_id)

        def one(counter: CounterClient = counter, counter_id: str = counter_id, n: int = n) -> None:
            before = calls[0]
            totals[n].add(counter.recompute(counter_id).total)
            per_recompute[n].append(calls[0] - before)

        variants[f"{n:,} shard{'s' if n > 1 else ''}"] = one

    base = next(iter(variants))
    log(f"counter: recompute, {plan.recompute_rounds} rounds x {plan.recompute_ops} ops x {len(variants)} shard counts")
    t = interleave(variants, baseline=base, rounds=plan.recompute_rounds, ops=plan.recompute_ops, warmup_ops=1)

    rows: list[Row] = []
    for (name, _), n in zip(variants.items(), RECOMPUTE_SHARDS, strict=True):
        expected = math.ceil(n / BATCH_GET_KEYS)
        observed = per_recompute[n]
        rows.append(Row.measured(
            "BatchGetItem calls per recompute()", name, "calls", observed,
            goal=f"= ⌈{n}/100⌉ = {expected}", met=min(observed) == max(observed) == expected,
        ))
    for name in variants:
        ms = [s * 1000 for s in t.per_op(name)]
        if name == base:
            rows.append(Row.measured("recompute() wall time", name, "ms", ms, baseline=True))
        else:
            rows.append(Row.measured("recompute() wall time", name, "ms", ms, ratios=t.time_ratio(name),
                                     goal="none (grows with ⌈N/100⌉ calls)"))

    all_ok = all(totals[n] == {n} for n in RECOMPUTE_SHARDS)
    notes = [
        (f"Recompute: shard counts {', '.join(map(str, RECOMPUTE_SHARDS))} of a `bench_recompute` family built with "
         f"the synthesized spec's attribute names, every shard written with count 1. BatchGetItem calls counted by a "
         f"`before-call.dynamodb.BatchGetItem` hook on a fresh client (retries of unprocessed keys would show as "
         f"extra calls) over every recompute, warm-up included; wall time is per recompute (consistent BatchGetItem "
         f"reads + one conditional UpdateItem of the total), {plan.recompute_rounds} rounds × {plan.recompute_ops} "
         f"per shard count, ratio against the 1-shard recompute of the same round."),
        f"Sanity check: every recompute returned total = shard count: {'yes' if all_ok else '**no** ' + repr(totals)}.",
    ]
    return rows, notes


# -----------------------------------------------------------------------------------------------
# Entry point
# -----------------------------------------------------------------------------------------------
def run(ctx: Context) -> Section:
    """Run the counter benchmark against ``ctx.ddb`` and return its section."""
    if ctx.ddb is None:
        raise ValueError("the counter benchmark needs DynamoDB Local (Context.ddb)")
    plan = Plan.for_context(ctx)
    log("counter: synthesizing app.py and creating its tables in DynamoDB Local")
    with _deployed(ctx.ddb) as (deployment, env):
        spec = CounterSpec.from_json(env[CounterSpec(family=FAMILY, shards=1).env_var])
        tables, notes, plots = _modelled(ctx, spec.shards)
        increment_rows, increment_notes = _increments(ctx.ddb, env, plan)
        recompute_rows, recompute_notes = _recompute(ctx.ddb, env, plan)
        unit_rows, unit_table, unit_notes = _units(ctx.ddb, deployment, env, plan)
    return Section(
        name=NAME,
        title=TITLE,
        summary=(
            f"`{FAMILY}` counter of `app.py` ({spec.shards} shards, idempotent increments enabled, "
            f"aggregation={spec.aggregation!r}), tables created in DynamoDB Local from the synthesized template. "
            f"Modelled ceiling and shard sizing are arithmetic from `constructs_lib.runtime.patterns.counter`; "
            f"throughput and recompute figures are measured on one thread; units per 1,000 increments are DynamoDB "
            f"Local's ConsumedCapacity, with AWS's documented rule beside them where Local departs from it."
        ),
        rows=increment_rows + recompute_rows + unit_rows,
        tables=[*tables, unit_table],
        notes=notes + increment_notes + recompute_notes + unit_notes,
        plots=plots,
        meta={"plan": plan.__dict__, "shards": spec.shards},
    )


def _units(ddb: DynamoDBLocal, deployment: LocalDeployment, env: dict[str, str],
           plan: Plan) -> tuple[list[Row], Table, list[str]]:
    """Units per 1,000 increments with their aggregation, every scenario before and after."""
    from constructs_lib.testing.streams import MappingSettings
    from examples.shop.model import shop_model

    base = CounterSpec.from_json(env[CounterSpec(family=FAMILY, shards=1).env_var])
    template = deployment.template
    (aggregator,) = [lid for lid, r in template["Resources"].items()
                     if r["Type"] == "AWS::Lambda::Function" and lid.startswith(AGGREGATOR_PREFIX)]
    mapping = MappingSettings.from_template(template, function_logical_id=aggregator)
    table = mapping.table_logical_id or "DataTable"
    bench = UnitsBench(_client(ddb), ddb.streams_client(), deployment.table_name(table), deployment.stream_arn(table),
                       base, shop_model, mapping.batch_size, plan.unit_increments)
    return report([bench.run(s) for s in scenarios()])
