"""Running a backfill job in this process: every segment in threads, its progress, its metrics."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .budget import WriteBudget
from .spec import BackfillSpec
from .worker import COUNTERS, BackfillWorker, SegmentState

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ....model import Model


def progress(client: BaseClient, table_name: str, model: Model, spec: BackfillSpec) -> dict[str, Any]:
    """The job's report from its checkpoints: totals, segments done, failures (items that
    could not be indexed, and why)."""
    job = BackfillWorker(client, table_name, model, spec)
    states = [job.load(s) for s in range(spec.segments)]
    report: dict[str, Any] = {"job": spec.job_id, "segments": spec.segments,
                              "segments_done": sum(s.done for s in states)}
    report.update({k: sum(s.counts[k] for s in states) for k in COUNTERS})
    report["consumed_wcu"] = round(sum(s.consumed_wcu for s in states), 3)
    report["done"] = report["segments_done"] == spec.segments
    report["failures"] = [f for s in states for f in s.failures]
    return report


def run_job(
    client: BaseClient,
    table_name: str,
    model: Model,
    spec: BackfillSpec,
    *,
    stop: threading.Event | None = None,
    log: Callable[[str], None] | None = None,
    budget: WriteBudget | None = None,
) -> dict[str, Any]:
    """Run (or resume) every segment in parallel threads sharing one write budget; returns
    :func:`progress` once they stop (all done, or ``stop`` set)."""
    job = BackfillWorker(client, table_name, model, spec, budget=budget)
    stop = stop or threading.Event()
    started = time.monotonic()

    def page_done(state: SegmentState) -> None:
        if log is not None:
            log(metrics_line(spec.job_id, state, time.monotonic() - started))

    with ThreadPoolExecutor(max_workers=min(spec.segments, 32)) as pool:
        futures = [pool.submit(job.run_segment, s, should_stop=stop.is_set, on_page=page_done)
                   for s in range(spec.segments)]
        for future in futures:
            future.result()
    return progress(client, table_name, model, spec)


def metrics_line(job_id: str, state: SegmentState, elapsed: float) -> str:
    """One CloudWatch Embedded Metric Format line of a segment's progress (JSON)."""
    import json

    names = ["scanned", "updated", "unchanged", "skipped", "conflicts", "failed"]
    return json.dumps({
        "_aws": {"Timestamp": int(time.time() * 1000), "CloudWatchMetrics": [{
            "Namespace": "constructs_lib/Backfill", "Dimensions": [["Job"]],
            "Metrics": [{"Name": f"Items{n.capitalize()}", "Unit": "Count"} for n in names]
            + [{"Name": "ConsumedWCU", "Unit": "Count"}],
        }]},
        "Job": job_id, "Segment": state.segment, "Done": state.done, "ElapsedSeconds": round(elapsed, 3),
        **{f"Items{n.capitalize()}": state.counts[n] for n in names}, "ConsumedWCU": round(state.consumed_wcu, 3),
    })
