#!/usr/bin/env python3
"""End-to-end demo of the synthesized showcase app on DynamoDB Local (no AWS account needed).

Starts DynamoDB Local on 127.0.0.1 once, then runs each worked example's scenario against tables
created from **its synthesized CloudFormation template** in ``cdk.out/`` (not a hand-written
schema), with the bundled Lambda handlers run from their ``cdk.out`` asset directories:

1. e-commerce (``examples/shop/scenario.py``): every access pattern, the orders API handler,
   the sparse GSI, optimistic locking, the sharded product-view counter aggregated from the real
   stream, and the audit trail;
2. multi-tenant SaaS (``examples/saas/scenario.py``): tenant-scoped grants and client,
   versioned documents with optimistic locking, the audit trail of a document;
3. IoT time series (``examples/iot/scenario.py``): month-bucketed readings, "last hour" across
   a month boundary, TTL retention (an expired reading hidden by a read filtering on
   ``expires_at``; DynamoDB Local's own TTL sweep checked last);
4. viral video counter (``examples/viral/scenario.py``): 50,000 writes/s sizing, concurrent
   increments, aggregation from the stream, an idempotent retry counted once;
5. reporting (``examples/reporting/scenario.py``): a consumer stack importing the shop's table
   from its published contract, its model the shop's committed contract file plus a pattern of
   its own (a view) — its bundled handler queries GSI2 through both with a one-index grant, then
   refuses to run once the published model fingerprint is not its own;
6. evolution (``examples/evolution/scenario.py``): the classified diff of the store model v2
   against its lock (v1) with the one-GSI-per-deployment rollout plan, then v1 items rewritten
   by the generated backfill function and checked item by item against the v2 codec;
7. global tables (``examples/global/scenario.py``): the global stack's table in two regions on the
   ``GlobalTables`` harness (virtual time), writes in both, a partition that heals, then counter
   totals exact in every region and each change audited once in the region that wrote it, and the
   naive shared-shard layout losing increments for contrast;
8. cost (``examples/shop/rates.json``): what the shop table costs a month for a stated traffic mix,
   on-demand vs provisioned, per table, index and component, with the assumptions
   (``python -m constructs_lib cost app.py --rates examples/shop/rates.json``; docs/cost.md).

Each scenario runs in a worker process of its own against the one server, ``--jobs`` (default 2)
at a time, longest first; a worker's output is buffered and printed whole, in the order above,
followed by its exit status when it failed (the demo then exits 1). The IoT scenario starts
first: the reading whose expiry it shows is ingested at once, and its last step (DynamoDB
Local's own TTL sweep) waits in the background until every other scenario is done, then polls
for at most a few seconds; it is printed just before the cost table (docs/adr/0060-demo-time.md).

Then stops the server. Run it with ``make demo`` (which synthesizes first), or
``.venv/bin/python scripts/demo.py --cdk-out cdk.out``; ``--only shop,iot`` runs a subset.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from constructs_lib.testing import DynamoDBLocal
from constructs_lib.testing.dynamodb_local import TEST_JVM_ARGS
from examples._scenario import show

#: Printing order (the one the docstring describes).
SCENARIOS = ("shop", "saas", "iot", "viral", "reporting", "evolution", "global", "cost")
#: Starting order: IoT first (its TTL sweep then overlaps the rest), then longest first as measured.
START_ORDER = ("iot", "evolution", "shop", "viral", "global", "reporting", "saas", "cost")
#: The IoT worker prints this line when its steps 1-6 are done; the rest of its output (DynamoDB
#: Local's TTL sweep) comes once its standard input is closed, after every other scenario.
IOT_PAUSE = "--- iot: steps 1-6 done, the TTL sweep is checked after the other scenarios ---"
#: The IoT worker's final poll for DynamoDB Local's sweep.
IOT_SWEEP_WAIT_S = 5.0


class _Attached(DynamoDBLocal):
    """The demo's running server as a worker process sees it: used, never started or stopped."""

    def __init__(self, endpoint: str) -> None:
        super().__init__()
        self._attached_endpoint = endpoint

    @property
    def endpoint(self) -> str:
        return self._attached_endpoint

    @property
    def running(self) -> bool:
        return True


def run_scenario(name: str, cdk_out: Path, server: DynamoDBLocal) -> None:
    """Run one scenario in this process (a worker)."""
    if name == "cost":
        shop_cost()
        return
    module = importlib.import_module(f"examples.{name}.scenario")
    if name == "saas":
        module.run(cdk_out, server.client(), server.streams_client())
    elif name == "iot":
        def meanwhile() -> None:
            print(IOT_PAUSE, flush=True)
            sys.stdin.read()  # EOF: the other scenarios are done

        module.run(cdk_out, server, meanwhile=meanwhile, sweep_wait_s=IOT_SWEEP_WAIT_S)
    else:
        module.run(cdk_out, server)


def shop_cost() -> None:
    """Print the shop's monthly cost table for its committed traffic mix (no DynamoDB needed)."""
    from constructs_lib.__main__ import main as cli

    status = cli(["cost", str(ROOT / "app.py"), "--rates", str(ROOT / "examples" / "shop" / "rates.json")])
    if status:
        raise SystemExit(status)


class Worker:
    """One scenario in a child process; its output (stdout and stderr) buffered in a file."""

    def __init__(self, name: str, cdk_out: Path, endpoint: str, log: Path) -> None:
        self.name, self.log = name, log
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--cdk-out", str(cdk_out),
               "--endpoint", endpoint]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.started = time.perf_counter()
        with log.open("ab") as sink:  # the child appends; the parent reads the file afresh
            self.proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env,
                                         stdin=subprocess.PIPE if name == "iot" else subprocess.DEVNULL)
        self.seconds: float | None = None
        self.paused_after: float | None = None

    def output(self) -> str:
        return self.log.read_bytes().decode("utf-8", "replace")

    def poll(self) -> int | None:
        code = self.proc.poll()
        if code is not None and self.seconds is None:
            self.seconds = time.perf_counter() - self.started
        return code

    def paused(self) -> bool:
        """The IoT worker reached :data:`IOT_PAUSE` (its steps 1-6 can be printed)."""
        if self.paused_after is None and self.name == "iot" and IOT_PAUSE in self.output():
            self.paused_after = time.perf_counter() - self.started
        return self.paused_after is not None


def run_all(chosen: list[str], cdk_out: Path, endpoint: str, jobs: int,
            emit: Callable[[str], None] = print) -> tuple[dict[str, float], list[str]]:
    """Run ``chosen`` in workers, ``jobs`` at a time; print each one's output whole, in order.

    Returns each scenario's own wall time (they overlap; the IoT one up to its pause) and the names
    of those that failed."""
    to_start = [n for n in START_ORDER if n in chosen]
    order = [n for n in SCENARIOS if n in chosen]
    # IoT's last step is printed after every other scenario but before the cost table, the demo's last.
    tail_at = order.index("cost") if "cost" in order else len(order)
    workers: dict[str, Worker] = {}
    printed = 0
    iot_tail: str | None = None
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="demo-") as tmp:
        try:
            while printed < len(order) or (iot_tail is None and "iot" in workers):
                busy = sum(1 for w in workers.values() if w.poll() is None and not w.paused())
                while to_start and busy < jobs:
                    name = to_start.pop(0)
                    workers[name] = Worker(name, cdk_out, endpoint, Path(tmp) / f"{name}.log")
                    busy += 1
                while printed < len(order) and order[printed] in workers:
                    if printed == tail_at and "iot" in workers and iot_tail is None:
                        break
                    worker = workers[order[printed]]
                    code = worker.poll()
                    if code is None and not worker.paused():
                        break
                    text = worker.output()
                    if code is None:  # IoT paused: print steps 1-6, the sweep comes last
                        text = text.split(IOT_PAUSE)[0]
                    emit_section(emit, worker.name, text, code)
                    if code not in (None, 0):
                        failed.append(worker.name)
                    printed += 1
                iot = workers.get("iot")
                others_done = not to_start and all(w.poll() is not None for n, w in workers.items() if n != "iot")
                if iot is not None and iot.proc.stdin is not None and not iot.proc.stdin.closed and others_done:
                    iot.proc.stdin.close()  # the other scenarios are done: check the sweep now
                if iot is not None and iot_tail is None and printed >= tail_at and iot.poll() is not None:
                    code = iot.poll()
                    whole = iot.output()
                    iot_tail = whole.split(IOT_PAUSE, 1)[1] if IOT_PAUSE in whole else ""
                    if iot_tail.strip():
                        show("Example: iot, last step (after the other scenarios)")
                        emit(iot_tail.rstrip("\n"))
                    if code != 0 and "iot" not in failed:
                        emit(f"!! Example iot failed (exit status {code})")
                        failed.append("iot")
                    continue
                time.sleep(0.1)
        finally:
            for worker in workers.values():
                if worker.proc.poll() is None:
                    worker.proc.kill()
                    worker.proc.wait()
    return {n: workers[n].paused_after or workers[n].seconds or 0.0 for n in order}, failed


def emit_section(emit: Callable[[str], None], name: str, text: str, code: int | None) -> None:
    """One scenario's heading and output, and its exit status if it failed."""
    show(f"Example: {name}")
    if text.strip():
        emit(text.rstrip("\n"))
    if code not in (None, 0):
        emit(f"!! Example {name} failed (exit status {code}); its output is above")


def worker_main(name: str, cdk_out: Path, endpoint: str) -> int:
    run_scenario(name, cdk_out, _Attached(endpoint))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cdk-out", default=str(ROOT / "cdk.out"), help="cloud assembly directory (default cdk.out)")
    parser.add_argument("--only", default=",".join(SCENARIOS), help=f"comma-separated subset of {','.join(SCENARIOS)}")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios run at a time, each in its own process (default 2)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    args = parser.parse_args()
    cdk_out = Path(args.cdk_out)
    if args.worker:
        return worker_main(args.worker, cdk_out, args.endpoint)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SCENARIOS))
    if unknown:
        parser.error(f"--only: unknown scenario(s) {unknown}; choose from {sorted(SCENARIOS)}")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    from app import STACKS

    missing = [stack for stack in STACKS if not (cdk_out / f"{stack}.template.json").is_file()]
    if missing:
        print(f"error: {missing} not synthesized in {cdk_out}; run 'make synth' first", file=sys.stderr)
        return 2

    with DynamoDBLocal(jvm_args=TEST_JVM_ARGS) as server:
        show(f"DynamoDB Local {server.endpoint}; cloud assembly {cdk_out}")
        print(f"{len(chosen)} scenarios, {args.jobs} at a time, each in its own process on this server; "
              "each one's output is printed whole, in order")
        started = time.perf_counter()
        timings, failed = run_all(chosen, cdk_out, server.endpoint, args.jobs)
        show("Done" if not failed else f"Done, with failures: {', '.join(failed)}")
        print(f"scenarios run in {time.perf_counter() - started:.1f} s, {args.jobs} at a time (each one's own time, "
              "iot's to step 6: "
              + ", ".join(f"{n} {s:.1f} s" for n, s in timings.items())
              + "); tables deleted, DynamoDB Local stopping")
        docs = sorted(p.name for p in cdk_out.glob("*.model.md"))
        print(f"data-model docs written at synth (Markdown + Mermaid; NoSQL Workbench .workbench.json beside them): "
              f"{', '.join(f'{cdk_out.name}/{d}' for d in docs)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
