"""Backfill throughput on DynamoDB Local: items/s per Scan segment and WCU per item.

The store scenario (``examples/evolution``): N items written with the v1 codec into the v2
table (three GSIs), then a backfill job with the v2 model and 1, 2 and 4 segments, its budget
set high enough that DynamoDB Local, not the budget, sets the pace. Figures: items/s for the
job and per segment, the WCU each rewritten item consumed (ConsumedCapacity: the table write
plus the GSI entries it moves), and the most WCU any sliding second consumed. Every item is
then checked against the v2 codec. DynamoDB Local is one JVM on this machine's shared cores,
so absolute rates say little about AWS; per-item WCU is what a budget needs.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks._harness import Context, Row, Section, Table, log

NAME = "backfill"
TITLE = "Backfill of derived keys (DynamoDB Local)"
NEEDS_DYNAMODB = True
SEGMENTS = (1, 2, 4)


def _table(ctx: Context, template: dict[str, Any]) -> tuple[Any, str]:
    from constructs_lib.testing import deploy_template

    assert ctx.ddb is not None
    deployment = deploy_template(template, client=ctx.ddb.client(), name_prefix="bench-backfill-")
    return deployment, deployment.table_name("DataTable")


def run(ctx: Context) -> Section:
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from constructs_lib import SingleTable
    from constructs_lib.runtime.patterns.backfill import BackfillSpec
    from constructs_lib.testing.backfill import (
        CapacityTrace,
        max_window_wcu,
        run_backfill,
    )
    from examples.evolution.model import model_v2
    from examples.evolution.scenario import mismatches, seed_v1

    items = 1000 if ctx.quick else 10_000
    app = cdk.App()
    stack = cdk.Stack(app, "Store")
    SingleTable(stack, "Data", model=model_v2())
    template = Template.from_stack(stack).to_json()
    assert ctx.ddb is not None
    client = ctx.ddb.client()
    rows: list[Row] = []
    lines: list[list[str]] = []
    meta: dict[str, Any] = {"items": items, "runs": []}
    for segments in SEGMENTS:
        deployment, table = _table(ctx, template)
        try:
            log(f"backfill: seeding {items} v1 items ({segments} segment(s))")
            seed_v1(client, table, items)
            trace = CapacityTrace(client)
            started = time.perf_counter()
            report = run_backfill(client, table, model_v2(), trace=trace,
                                  spec=BackfillSpec(job_id="bench", segments=segments, wcu_per_second=100_000))
            elapsed = time.perf_counter() - started - 1.1  # the budget's first window (a fixed wait)
            bad, checked, _ = mismatches(client, table, model_v2())
        finally:
            deployment.delete()
        writes = [(t, c) for t, n, c in trace.records if n == "update_item"]
        wcu = sum(c for _, c in writes if c > 0)
        rate = report["scanned"] / elapsed
        per_item = wcu / max(report["updated"], 1)
        peak = max_window_wcu(writes)
        log(f"backfill: {segments} segment(s): {rate:.0f} items/s, {per_item:.2f} WCU/item, mismatches {len(bad)}")
        rows.append(Row.measured("items/s per segment", f"{segments} segment(s)", "items/s", [rate / segments]))
        rows.append(Row.measured("job throughput", f"{segments} segment(s)", "items/s", [rate]))
        rows.append(Row.measured("WCU per rewritten item", f"{segments} segment(s)", "WCU", [per_item]))
        lines.append([str(segments), f"{report['scanned']:,}", f"{report['updated']:,}", f"{elapsed:.1f}",
                      f"{rate:.0f}", f"{rate / segments:.0f}", f"{per_item:.2f}", f"{peak:.0f}", str(len(bad)),
                      str(report["failed"])])
        meta["runs"].append({"segments": segments, "seconds": elapsed, "report": {k: v for k, v in report.items()
                                                                               if k != "failures"},
                             "checked": checked, "mismatches": len(bad), "peak_wcu_per_second": peak})
    return Section(
        name=NAME, title=TITLE,
        summary=(f"{items:,} items written under v1, backfilled to v2 (GSI1 template changed, GSI2 and GSI3 new) "
                 "with 1, 2 and 4 Scan segments; every item checked against the v2 codec afterwards."),
        rows=rows,
        tables=[Table("Runs", ["segments", "scanned", "rewritten", "s", "items/s", "items/s per segment",
                               "WCU/item", "max WCU in a second", "mismatches", "unindexable"], lines)],
        notes=[
            ("WCU per item is ConsumedCapacity of the UpdateItem calls: 1 for the table write plus 1 per GSI "
             "entry written and 1 per GSI entry removed (a changed GSI key moves the entry: 2)."),
            ("The budget was set to 100,000 WCU/s so the rate is DynamoDB Local's; the integration test "
             "tests/integration/test_backfill.py checks a binding budget over every sliding second."),
        ],
        meta=meta,
    )
