"""Merged reads of a write-sharded index vs one partition holding the same items (DynamoDB Local).

One table (created from its synthesized template) with three GSIs over the same orders of one
status: ``Single`` (``ALL#{status}``, one partition, the baseline), ``Sharded4`` and
``Sharded16`` (``STATUS#{status}#{shard}`` over 4 and 16 shards). Timed, interleaved: the first
page (``limit=100``) and the whole read (``query_all``), each through ``TableClient.query``; the
16-shard read once more with the pool cut to one thread (serial), to show what the bounded
parallelism buys. A hook at the AWS-call seam counts the Queries and the RCU DynamoDB reports
(``ReturnConsumedCapacity``) per read. Rationale of the design: docs/adr/0030.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks._harness import Context, Row, Section, Table, interleave, log

NAME = "sharded_read"
TITLE = "Merged read of a write-sharded index vs one partition (DynamoDB Local)"
NEEDS_DYNAMODB = True
PAGE = 100


def _model() -> Any:
    from constructs_lib.model import (
        AccessPattern,
        Entity,
        Field,
        Index,
        IndexKey,
        Model,
    )

    sk = "{placed}#{order_id}"
    return Model(
        "bench_sharded",
        entities=[Entity(
            "Order", pk="ORDER#{order_id}", sk="ORDER",
            fields={"order_id": "string", "status": Field.enum("PAID"), "placed": "timestamp"},
            indexes={
                "Single": IndexKey(pk="ALL#{status}", sk=sk),
                "Sharded4": IndexKey(pk="S4#{status}#{shard}", sk=sk, shards=4, shard_by="order_id"),
                "Sharded16": IndexKey(pk="S16#{status}#{shard}", sk=sk, shards=16, shard_by="order_id"),
            },
        )],
        indexes=[Index("Single"), Index("Sharded4"), Index("Sharded16")],
        access_patterns=[
            AccessPattern("single", "Order", index="Single", descending=True),
            AccessPattern("sharded 4", "Order", index="Sharded4", descending=True),
            AccessPattern("sharded 16", "Order", index="Sharded16", descending=True),
        ],
    )


def _server_cpu(pid: int | None) -> float | None:
    """CPU seconds (user + system) DynamoDB Local's JVM has used so far, or None where unknown
    (no pid, or no Linux ``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class _Meter:
    """A seam hook asking DynamoDB for the consumed capacity and counting it."""

    def __init__(self) -> None:
        self.calls = 0
        self.rcu = 0.0

    def hook(self, send: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        resp = send(**params, ReturnConsumedCapacity="TOTAL")
        self.calls += 1
        self.rcu += float(resp.get("ConsumedCapacity", {}).get("CapacityUnits", 0))
        return resp


def run(ctx: Context) -> Section:
    from datetime import UTC, datetime, timedelta

    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from constructs_lib import SingleTable
    from constructs_lib.runtime import TableClient, merged_reads
    from constructs_lib.testing import deploy_template

    assert ctx.ddb is not None
    items = 600 if ctx.quick else 3000
    rounds, ops, full_ops = (3, 5, 1) if ctx.quick else (9, 20, 2)
    cpu_reads = 10 if ctx.quick else 40
    model = _model()
    app = cdk.App()
    stack = cdk.Stack(app, "Bench")
    SingleTable(stack, "Data", model=model)
    template = Template.from_stack(stack).to_json()
    deployment = deploy_template(template, client=ctx.ddb.client(), name_prefix="bench-sharded-")
    try:
        table = TableClient(model, deployment.table_name("DataTable"), client=ctx.ddb.client())
        t0 = datetime(2026, 1, 1, tzinfo=UTC)
        log(f"sharded_read: writing {items} orders (each in all three GSIs)")
        table.batch_write(puts=[("Order", {"order_id": f"o{n:06d}", "status": "PAID", "placed": t0 + timedelta(seconds=n),
                                           "note": "x" * 200}) for n in range(items)])
        expected = [f"o{n:06d}" for n in reversed(range(items))]
        for pattern in ("single", "sharded 4", "sharded 16"):  # the merged reads equal the single partition's
            assert [o["order_id"] for o in table.query_all(pattern, status="PAID")] == expected, pattern
        serial_pool = ThreadPoolExecutor(max_workers=1)

        def page(pattern: str) -> Any:
            return lambda: table.query(pattern, status="PAID", limit=PAGE)

        def serial(fn: Any) -> Any:
            def run_serial() -> None:
                shared, merged_reads._pool = merged_reads._executor(), serial_pool
                try:
                    fn()
                finally:
                    merged_reads._pool = shared
            return run_serial

        def whole(pattern: str) -> Any:
            return lambda: sum(1 for _ in table.query_all(pattern, status="PAID"))

        variants = {
            "one partition (baseline)": page("single"),
            "4 shards, parallel": page("sharded 4"),
            "16 shards, parallel (8 at once)": page("sharded 16"),
            "16 shards, serial": serial(page("sharded 16")),
        }
        log(f"sharded_read: first page of {PAGE}, {rounds} rounds x {ops} reads")
        pages = interleave(variants, baseline="one partition (baseline)", rounds=rounds, ops=ops)
        full_variants = {
            "one partition (baseline)": whole("single"),
            "4 shards, parallel": whole("sharded 4"),
            "16 shards, parallel (8 at once)": whole("sharded 16"),
        }
        log(f"sharded_read: whole read of {items}, {rounds} rounds x {full_ops}")
        full = interleave(full_variants, baseline="one partition (baseline)", rounds=rounds, ops=full_ops)
        cost_rows = []
        for label, pattern, limit in (("first page", "single", PAGE), ("first page", "sharded 4", PAGE),
                                      ("first page", "sharded 16", PAGE), ("whole read", "single", None),
                                      ("whole read", "sharded 4", None), ("whole read", "sharded 16", None)):
            meter = _Meter()
            table.hooks = (meter.hook,)
            try:
                if limit is None:
                    n = sum(1 for _ in table.query_all(pattern, status="PAID"))
                else:
                    n = len(table.query(pattern, status="PAID", limit=limit))
            finally:
                table.hooks = ()
            cost_rows.append([label, pattern, str(n), str(meter.calls), f"{meter.rcu:g}"])
        cpu_rows = []
        for pattern in ("single", "sharded 4", "sharded 16"):  # where a first page's time goes
            reads = cpu_reads
            server, client = _server_cpu(ctx.ddb.pid), time.process_time()
            for _ in range(reads):
                table.query(pattern, status="PAID", limit=PAGE)
            client_ms = (time.process_time() - client) / reads * 1000
            after = _server_cpu(ctx.ddb.pid)
            server_ms = None if server is None or after is None else (after - server) / reads * 1000
            cpu_rows.append([pattern, f"{client_ms:.1f}", "—" if server_ms is None else f"{server_ms:.1f}"])
        serial_pool.shutdown()
    finally:
        deployment.delete()
    rows = []
    for name in variants:
        base = name == pages.baseline
        rows.append(Row.measured(f"first page (limit={PAGE})", name, "ms", [s * 1000 for s in pages.per_op(name)],
                                 ratios=None if base else pages.time_ratio(name), baseline=base,
                                 goal="" if base or "serial" in name else "≤ 2× (latency of the slowest shard, not N×)",
                                 met=None if base or "serial" in name else
                                 sorted(pages.time_ratio(name))[len(pages.time_ratio(name)) // 2] <= 2))
    for name in full_variants:
        base = name == full.baseline
        rows.append(Row.measured(f"whole read ({items} items)", name, "ms", [s * 1000 for s in full.per_op(name)],
                                 ratios=None if base else full.time_ratio(name), baseline=base))
    return Section(
        name=NAME, title=TITLE,
        summary=(f"{items:,} orders of one status, each in three GSIs: one partition, 4 shards, 16 shards. Time "
                 "ratio = sharded read ÷ one-partition read of the same items in the same round (> 1 is slower)."),
        rows=rows,
        tables=[Table("Queries and RCU per read (DynamoDB's ReturnConsumedCapacity)",
                      ["read", "pattern", "items", "Queries", "RCU"], cost_rows),
                Table(f"CPU per first page (limit={PAGE}), ms: this process (boto3 and the library) and DynamoDB Local",
                      ["pattern", "client CPU", "DynamoDB Local CPU"], cpu_rows)],
        notes=[
            ("A merged page costs one Query per shard; each shard's first read asks for its share of the page "
             f"with margin ({merged_reads.first_read_limit(PAGE, 4)} items of a page of {PAGE} over 4 shards, "
             f"{merged_reads.first_read_limit(PAGE, 16)} over 16: runtime.merged_reads.first_read_limit) and a shard that "
             "runs dry is read again, so a page reads more items than it returns, and every Query rounds its "
             "RCU up; the whole read costs about the same RCU as one partition (each item read once)."),
            ("Shards are read on a shared pool of at most 8 threads (runtime.merged_reads.MAX_PARALLEL); the serial "
             "row runs the same read with one thread, the cost the bounded parallelism avoids."),
            ("DynamoDB Local serves every partition from one JVM on this machine's 2 shared cores, so parallel "
             "Queries compete for the same CPU; these ratios describe this machine, not AWS."),
            (f"*CPU per first page*: {cpu_reads} reads of each pattern, one after another; client CPU is this "
             "process's (all threads: botocore builds each request and parses every item read, the library merges "
             "and decodes), DynamoDB Local's is its JVM's (user + system, from /proc, in 10 ms ticks). Both grow with "
             "the items read and the Queries sent, and on this machine they share the same cores: a merged page's "
             "time over one partition's is about their sums' ratio, whatever the parallelism."),
        ],
        meta={"items": items, "page": PAGE, "rounds": rounds, "ops": ops},
    )
