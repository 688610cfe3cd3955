"""Runtime client overhead: ``TableClient`` vs the identical requests sent with raw boto3.

For each of put, get, query and update on the shop table of ``app.py`` (created in DynamoDB
Local from the synthesized template), ``TableClient`` runs interleaved against the baseline: the
very request ``TableClient`` sends (captured once through a recording client, so expression,
names, values and keys are identical), replayed with the low-level boto3 client. Both share one
client object; the difference is the library's own Python — validation, key building,
serialization and decoding. Goal ≥ 0.95× throughput for every operation.

Then the same four operations against the peers a user would pick instead — raw boto3, the boto3
resource API and PynamoDB, each with its idiomatic code (see :mod:`benchmarks.peers`) — on
clients whose botocore ``before-send`` hook answers with each peer's own recorded response: the
client-side CPU per call, as a ratio against raw boto3 in the same run. Goal: TableClient at or
below both peers for every operation.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import peers
from benchmarks._harness import Context, Row, Section, Stats, interleave, log
from constructs_lib.runtime import TableClient, _aws
from constructs_lib.runtime.client import DEFAULT_RETRY_MODE
from constructs_lib.runtime.contract import load_bundled_model

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from constructs_lib.model import Model
    from constructs_lib.testing.dynamodb_local import DynamoDBLocal

NAME = "client"
TITLE = "Runtime client overhead"
NEEDS_DYNAMODB = True

FUNCTION_PREFIX = "OrdersApi"
#: Throughput goal: TableClient within 5 % of the identical raw request.
THROUGHPUT_GOAL = 0.95
USERS, ORDERS_PER_USER = 20, 10
QUERY_PATTERN, QUERY_LIMIT = "user's orders newest first", 10
RETRY_MODE, MAX_ATTEMPTS = DEFAULT_RETRY_MODE, 10


@dataclass(frozen=True)
class Plan:
    """Rounds, requests per timed block, untimed warm-up requests per variant."""

    rounds: int
    ops: int
    warmup: int
    cpu_calls: int

    cpu_rounds: int = 10
    cpu_block: int = 300

    @classmethod
    def for_context(cls, ctx: Context) -> Plan:
        return cls(3, 30, 30, 200, 4, 100) if ctx.quick else cls(12, 60, 150, 1000, 10, 300)


class RecordingClient:
    """A stand-in boto3 client: records each call's parameters and answers with a canned response."""

    def __init__(self, responses: dict[str, dict[str, Any]], record: bool = True) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._responses = responses
        self._record = record

    def __getattr__(self, operation: str) -> Callable[..., dict[str, Any]]:
        if operation.startswith("_"):
            raise AttributeError(operation)

        def call(**params: Any) -> dict[str, Any]:
            if self._record:
                self.calls.append((operation, params))
            return self._responses.get(operation, {})

        return call


def _orders() -> list[dict[str, Any]]:
    """USERS × ORDERS_PER_USER orders with fixed ids and times (statuses cycle, PENDING ones join GSI2)."""
    start = datetime(2026, 11, 1, tzinfo=UTC)
    statuses = ("PENDING", "PAID", "SHIPPED", "CANCELLED")
    return [
        {"user_id": f"bench-u{u:03d}", "order_id": f"bench-o{u:03d}-{n:02d}",
         "created_at": start + timedelta(hours=u, minutes=n), "status": statuses[(u + n) % len(statuses)],
         "total_cents": 1000 + n, "note": "benchmark order"}
        for u in range(USERS) for n in range(ORDERS_PER_USER)
    ]


def _key(order: dict[str, Any]) -> dict[str, Any]:
    return {k: order[k] for k in ("user_id", "created_at", "order_id")}


@contextmanager
def _deployed(ddb: DynamoDBLocal) -> Iterator[tuple[str, Model]]:
    """The shop table in DynamoDB Local (from the synthesized template) and the model the orders API bundles."""
    from app import build_app
    from constructs_lib.testing import asset_dir, deploy_template

    with tempfile.TemporaryDirectory(prefix="bench-client-") as outdir:
        build_app(outdir).synth()
        template = json.loads((Path(outdir) / "ShopStack.template.json").read_text(encoding="utf-8"))
        model = load_bundled_model(asset_dir(outdir, template, FUNCTION_PREFIX) / "model.json")
    with deploy_template(template, client=ddb.client(), name_prefix="bench-client-") as deployment:
        yield deployment.function_environment(FUNCTION_PREFIX)["TABLE_NAME"], model


def _client(ddb: DynamoDBLocal) -> BaseClient:
    """A DynamoDB Local client configured like TableClient's default (``RETRY_MODE`` retries, 10 attempts,
    no client-side parameter validation)."""
    import boto3

    kwargs = ddb.client_kwargs()
    kwargs["config"] = kwargs["config"].merge(_aws.client_config(retry_mode=RETRY_MODE, max_attempts=MAX_ATTEMPTS))
    return boto3.session.Session().client("dynamodb", **kwargs)


def _operations(table: TableClient, orders: list[dict[str, Any]]) -> dict[str, Callable[[dict[str, Any]], object]]:
    """The four library calls, each on one order (the same calls captured and timed)."""
    users = sorted({o["user_id"] for o in orders})
    return {
        "put": lambda o: table.put("Order", o),
        "get": lambda o: table.get("Order", **_key(o)),
        "query": lambda o: table.query(QUERY_PATTERN, user_id=users[orders.index(o) % len(users)], limit=QUERY_LIMIT),
        "update": lambda o: table.update("Order", _key(o), set={"status": "SHIPPED", "note": "updated"}),
    }


def _capture(model: Model, table_name: str, orders: list[dict[str, Any]]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each operation's exact boto3 call (method, parameters) for every order, via a recording client."""
    recorder = RecordingClient({})
    table = TableClient(model, table_name, client=recorder)  # type: ignore[arg-type]
    captured: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, op in _operations(table, orders).items():
        captured[name] = []
        for order in orders:
            recorder.calls.clear()
            op(order)
            if len(recorder.calls) != 1:
                raise RuntimeError(f"{name} made {len(recorder.calls)} calls; expected 1")
            captured[name].append(recorder.calls[0])
    return captured


def _library_us(
    model: Model, table_name: str, orders: list[dict[str, Any]], captured: dict[str, list[tuple[str, dict[str, Any]]]],
    calls: int,
) -> dict[str, float]:
    """Median µs of TableClient's own Python per call, on a client that sends nothing.

    Its answers are stored items (the captured put items), so decoding costs what it does for real.
    """
    items = [params["Item"] for _, params in captured["put"]]
    canned = {"get_item": {"Item": items[0]}, "query": {"Items": items[:QUERY_LIMIT]},
              "update_item": {"Attributes": items[0]}}
    table = TableClient(model, table_name, client=RecordingClient(canned, record=False))  # type: ignore[arg-type]
    out = {}
    for name, op in _operations(table, orders).items():
        samples = []
        for _ in range(5):
            cycle = itertools.cycle(orders)
            started = time.perf_counter()
            for _ in range(calls):
                op(next(cycle))
            samples.append((time.perf_counter() - started) / calls * 1e6)
        out[name] = Stats.of(samples).median
    return out



#: The peers of the stub-transport figure, in table order (raw boto3 is the baseline).
RAW, OURS, RESOURCE, PYNAMODB = "raw boto3 (the identical request, pre-built)", "TableClient", \
    "boto3 resource API", "PynamoDB"
#: Context row of each throughput figure: the baseline again, as a third variant of the same rounds.
CONTROL = "A/A control"

#: Context: TableClient on a client with botocore's adaptive retry mode instead of its default standard one.
OURS_ADAPTIVE = "TableClient, retry_mode='adaptive'"


def _peer_cpu(
    ddb: DynamoDBLocal, model: Model, table_name: str, orders: list[dict[str, Any]],
    captured: dict[str, list[tuple[str, dict[str, Any]]]], plan: Plan,
) -> tuple[list[Row], list[str]]:
    """Client-side CPU per call of each peer on a stub transport answering with its own recorded response."""
    import boto3
    import pynamodb

    users = sorted({o["user_id"] for o in orders})

    def query_user(o: dict[str, Any]) -> str:
        return users[orders.index(o) % len(users)]

    # Each peer as a user gets it: boto3's default configuration for raw boto3 and the resource API,
    # TableClient's own default client configuration, PynamoDB's own.
    kwargs = {k: v for k, v in ddb.client_kwargs().items() if k != "config"}
    raw_client = boto3.session.Session().client("dynamodb", **kwargs)
    ours_client = boto3.session.Session().client("dynamodb", **kwargs,
                                                 config=_aws.client_config(retry_mode=RETRY_MODE))
    ours = TableClient(model, table_name, client=ours_client)
    adaptive_client = boto3.session.Session().client("dynamodb", **kwargs,
                                                     config=_aws.client_config(retry_mode="adaptive"))
    ours_adaptive = TableClient(model, table_name, client=adaptive_client)
    resource_table = boto3.session.Session().resource("dynamodb", **kwargs).Table(table_name)
    order_model = peers.pynamodb_model(table_name, ddb.endpoint, "us-east-1")
    cycles = {name: itertools.cycle(captured[name]) for name in captured}

    def raw_op(name: str) -> Callable[[dict[str, Any]], object]:
        def call(_: dict[str, Any]) -> object:
            method, params = next(cycles[name])
            return getattr(raw_client, method)(**params)
        return call

    ops_of = {
        RAW: ({name: raw_op(name) for name in captured}, raw_client),
        OURS: (_operations(ours, orders), ours_client),
        RESOURCE: (peers.resource_ops(resource_table, query_user), resource_table.meta.client),
        PYNAMODB: (peers.pynamodb_ops(order_model, query_user), peers.pynamodb_client(order_model)),
        OURS_ADAPTIVE: (_operations(ours_adaptive, orders), adaptive_client),
    }
    # Record each peer's own answers from DynamoDB Local (put first: the later calls read what it wrote).
    # Each peer's put and update must leave the same stored item as TableClient's ("the same work").
    stored: dict[str, list[dict[str, Any]]] = {}
    key = captured["get"][0][1]["Key"]
    reader = boto3.session.Session().client("dynamodb", **kwargs)  # never stubbed
    stubs = {}
    for peer, (ops, client) in ops_of.items():
        recorder = peers.ResponseRecorder(client)
        stored[peer] = []
        for name in ("put", "get", "query", "update"):
            ops[name](orders[0])
            if name in ("put", "update"):
                stored[peer].append(reader.get_item(TableName=table_name, Key=key, ConsistentRead=True)["Item"])
        stubs[peer] = peers.StubTransport(client, recorder.bodies)
    differ = {peer: sorted({a for before, after in zip(items, stored[OURS], strict=True)
                            for a in set(before) | set(after) if before.get(a) != after.get(a)})
              for peer, items in stored.items() if items != stored[OURS]}
    rows: list[Row] = []
    medians: dict[str, dict[str, float]] = {}
    for name in ("put", "get", "query", "update"):
        variants: dict[str, Callable[[], object]] = {}
        for peer, (ops, _) in ops_of.items():
            cycle = itertools.cycle(orders)
            variants[peer] = lambda op=ops[name], cycle=cycle: op(next(cycle))
        sent_before = {peer: stub.sent for peer, stub in stubs.items()}
        log(f"client: {name} on a stub transport, {plan.cpu_rounds} rounds x {plan.cpu_block} calls x {len(variants)} peers")
        t = interleave(variants, baseline=RAW, rounds=plan.cpu_rounds, ops=plan.cpu_block, warmup_ops=plan.cpu_block,
                       clock=time.thread_time)
        calls = plan.cpu_block * (plan.cpu_rounds + 1)
        for peer, stub in stubs.items():
            if stub.sent - sent_before[peer] != calls:
                raise RuntimeError(f"{peer} {name}: {stub.sent - sent_before[peer]} requests for {calls} calls")
        figure = f"{name}: client-side CPU per call, stub transport"
        medians[name] = {peer: Stats.of(t.time_ratio(peer)).median for peer in variants}
        best_peer = min(medians[name][RESOURCE], medians[name][PYNAMODB])
        for peer in variants:
            us = [x * 1e6 for x in t.per_op(peer)]
            if peer == RAW:
                rows.append(Row.measured(figure, peer, "µs", us, baseline=True))
            elif peer == OURS:
                rows.append(Row.measured(figure, peer, "µs", us, ratios=t.time_ratio(peer),
                                         goal="≤ PynamoDB and resource API", met=medians[name][OURS] <= best_peer))
            elif peer == OURS_ADAPTIVE:
                rows.append(Row.measured(figure, peer, "µs", us, ratios=t.time_ratio(peer),
                                         goal="none (context: the retry mode's share)"))
            else:
                rows.append(Row.measured(figure, peer, "µs", us, ratios=t.time_ratio(peer)))
    notes = [
        (f"Client-side CPU per call: every peer's botocore client gets a `before-send` hook that answers with that "
         f"peer's own response to the same call, recorded once from DynamoDB Local, so each call is validated, "
         f"serialized, signed and its answer parsed and decoded as usual, with no socket. {RAW}: the captured "
         f"TableClient request replayed with `client.<method>(**params)`. {RESOURCE}: `boto3.resource(\"dynamodb\")"
         f".Table(...)` with f-string keys, `Key`/`Attr` conditions, items as dicts (`put_item`, `get_item`, "
         f"`query`, `update_item(ReturnValues=\"ALL_NEW\")`). {PYNAMODB} {pynamodb.__version__}: an `Order` model "
         f"with the stored attributes, f-string keys, `save()`, `get()`, `list(query(..., limit=10))`, "
         f"`update(actions=[...], condition=...)`. Same work per order: the same item with its GSI keys (GSI2 only "
         f"while `PENDING`, GSI3's write-sharded key with its shard hashed from `order_id`), the same key condition "
         f"and limit, the same update (two attributes set, GSI2 left, GSI3 moved to the new status, "
         f"`attribute_exists` condition, new item returned). Each client is configured as its users get it: raw "
         f"boto3 and the resource API with boto3's defaults, TableClient with its default client's configuration "
         f"(`_aws.client_config(retry_mode='{RETRY_MODE}')`: retries `{RETRY_MODE}` / {MAX_ATTEMPTS} attempts, no "
         "client-side parameter "
         f"validation), PynamoDB with its own (no parameter validation either). "
         f"{plan.cpu_rounds} Williams-ordered rounds × {plan.cpu_block:,} calls per peer and operation, after "
         f"{plan.cpu_block} untimed calls, each block timed with `time.thread_time()` (this thread's CPU: other "
         f"processes on a busy machine do not inflate it); *ratio* = CPU per call ÷ raw boto3's in the same round "
         f"(< 1 is cheaper). TableClient's own share (its ratio − 1) vs the cheaper peer's: "
         + "; ".join(f"{name} {m[OURS] - 1:+.0%} vs {min(m[RESOURCE], m[PYNAMODB]) - 1:+.0%}" for name, m in medians.items())
         + f". Context row *{OURS_ADAPTIVE}*: the same client with botocore's adaptive retry mode (a client-side "
         f"rate limiter updated on every response, which costs CPU on every call) instead of TableClient's "
         f"default `{RETRY_MODE}` one; PynamoDB retries in standard mode too."),
        ("Sanity check: every peer's put and update leave the same stored item as TableClient's: "
         + ("yes" if not differ else "**no** — " + "; ".join(f"{peer}: {', '.join(a)}" for peer, a in differ.items()))
         + "."),
    ]
    return rows, notes


def run(ctx: Context) -> Section:
    """Interleave TableClient and raw boto3 per operation against DynamoDB Local."""
    if ctx.ddb is None:
        raise ValueError("the client benchmark needs DynamoDB Local (Context.ddb)")
    plan = Plan.for_context(ctx)
    orders = _orders()
    rows: list[Row] = []
    request_ms: dict[str, float] = {}
    log("client: synthesizing app.py and creating the shop table in DynamoDB Local")
    with _deployed(ctx.ddb) as (table_name, model):
        client = _client(ctx.ddb)
        table = TableClient(model, table_name, client=client)
        for order in orders:  # the items get, query and update read
            table.put("Order", order)
        captured = _capture(model, table_name, orders)
        operations = _operations(table, orders)
        for name, op in operations.items():
            lib_cycle = itertools.cycle(orders)
            raw_cycle, control_cycle = itertools.cycle(captured[name]), itertools.cycle(captured[name])

            def raw(cycle: Iterator[tuple[str, dict[str, Any]]] = raw_cycle) -> object:
                method, params = next(cycle)
                return getattr(client, method)(**params)

            variants: dict[str, Callable[[], object]] = {
                f"raw boto3 {captured[name][0][0]}, the identical request": raw,
                f"TableClient.{name}": lambda op=op, cycle=lib_cycle: op(next(cycle)),
                f"raw boto3 {captured[name][0][0]} again ({CONTROL})": lambda cycle=control_cycle: raw(cycle),
            }
            base, ours, control = variants
            log(f"client: {name}, {plan.rounds} rounds x {plan.ops} requests x {len(variants)} variants")
            t = interleave(variants, baseline=base, rounds=plan.rounds, ops=plan.ops, warmup_ops=plan.warmup)
            figure = f"{name} throughput, 1 thread"
            ratio = Stats.of(t.rate_ratio(ours)).median
            request_ms[name] = 1000 / Stats.of(t.rate(base)).median
            rows += [
                Row.measured(figure, base, "ops/s", t.rate(base), baseline=True),
                Row.measured(figure, ours, "ops/s", t.rate(ours), ratios=t.rate_ratio(ours),
                             goal=f"≥ {THROUGHPUT_GOAL:.2f}×", met=ratio >= THROUGHPUT_GOAL),
                Row.measured(figure, control, "ops/s", t.rate(control), ratios=t.rate_ratio(control),
                             goal="none (context: the noise floor)"),
            ]
        # Sanity: both paths read the same items; the table holds what the updates wrote.
        probe = orders[3]
        method, params = captured["get"][3]
        raw_item = table.mapper.decode(_aws.deserialize(getattr(client, method)(**params)["Item"]))
        same_read = raw_item == table.get("Order", **_key(probe))
        page = table.query(QUERY_PATTERN, user_id=probe["user_id"], limit=QUERY_LIMIT)
        shipped = all(i.get("status") == "SHIPPED" for i in page.items) and len(page.items) == QUERY_LIMIT
        peer_rows, peer_notes = _peer_cpu(ctx.ddb, model, table_name, orders, captured, plan)
    cpu = _library_us(model, table_name, orders, captured, plan.cpu_calls)
    notes = [
        (f"Data: {USERS * ORDERS_PER_USER} orders of {USERS} users written first with TableClient. Each operation "
         f"cycles over them: put `Order` (whole item, derived GSI keys), get by table key, query "
         f"`{QUERY_PATTERN}` (limit {QUERY_LIMIT}: one Query returning {QUERY_LIMIT} items, decoded), update "
         f"`status` + `note` (the sparse GSI2 and write-sharded GSI3 keys recomputed in the same UpdateItem, `attribute_exists` "
         f"condition, `ReturnValues=ALL_NEW`)."),
        (f"Baseline: the request TableClient sends for the same order, captured once through a recording client "
         f"(so it is byte-for-byte the same call) and replayed with `client.<method>(**params)`, pre-built. One boto3 "
         f"client object (DynamoDB Local endpoint, dummy credentials, retries `{RETRY_MODE}` / {MAX_ATTEMPTS} "
         f"attempts — TableClient's default) serves both. {plan.rounds} Williams-ordered rounds × {plan.ops} "
         f"requests per variant and operation, after {plan.warmup} untimed requests each."),
        ("TableClient's own Python per call (median of 5 × "
         f"{plan.cpu_calls:,} calls on a client that sends nothing: validation, keys, serialization, decoding of the "
         f"answer), against the baseline's median time per request on DynamoDB Local: "
         + "; ".join(f"{name} {us:.0f} µs of {request_ms[name]:.2f} ms" for name, us in cpu.items())
         + ". That share is what the throughput ratio can lose; the rest is noise of a shared machine."),
        (f"*{CONTROL}*: the baseline's request run again as a third variant of the same rounds — what its ratio "
         f"strays from 1× is the noise of this machine, against which to read TableClient's ratio."),
        (f"Sanity checks: the raw get and TableClient.get decode to the same item: {'yes' if same_read else '**no**'}; "
         f"after the run the query returns {QUERY_LIMIT} orders, all `SHIPPED` by the updates: "
         f"{'yes' if shipped else '**no**'}."),
    ]
    return Section(
        name=NAME,
        title=TITLE,
        summary=(
            "`TableClient` put / get / query / update on the shop table of `app.py` (created in DynamoDB Local from "
            "the synthesized template) against the identical requests sent with the raw boto3 client, throughput on "
            "one thread, interleaved; then the client-side CPU per call of TableClient, raw boto3, the boto3 resource "
            "API and PynamoDB on a transport that answers each with its own recorded response."
        ),
        rows=rows + peer_rows,
        notes=notes + peer_notes,
        meta={"plan": plan.__dict__, "library_us_per_call": {k: round(v, 1) for k, v in cpu.items()}},
    )
