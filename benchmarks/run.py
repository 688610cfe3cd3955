"""Run the benchmarks: ``python -m benchmarks.run [names...] [--quick] [--out-dir DIR]``.

With no names every benchmark runs. One DynamoDB Local (127.0.0.1, in memory) is started for
all the selected benchmarks that need it, and stopped at the end. Each benchmark's section is
merged into ``results.json`` and ``results.md`` as soon as it finishes, so a failure in one
keeps the others' results. Exit status: 0 if every selected benchmark produced its section
(whatever its figures — benchmarks are not pass/fail), 1 if one raised, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import cast

from benchmarks._harness import (
    BENCH_DIR,
    Benchmark,
    Context,
    Results,
    log,
    run_metadata,
)

#: Benchmark name → module. Add new benchmarks here.
BENCHMARKS: dict[str, str] = {
    "counter": "benchmarks.bench_counter",
    "audit": "benchmarks.bench_audit",
    "client": "benchmarks.bench_client",
    "keys": "benchmarks.bench_keys",
    "partitions": "benchmarks.bench_partitions",
    "cold_start": "benchmarks.bench_cold_start",
    "synth": "benchmarks.bench_synth",
    "backfill": "benchmarks.bench_backfill",
    "sharded_read": "benchmarks.bench_sharded",
}


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", metavar="name", help=f"benchmarks to run (default all: {', '.join(BENCHMARKS)})")
    parser.add_argument("--quick", action="store_true", help="few short rounds: a smoke run, numbers indicative only")
    parser.add_argument("--out-dir", type=Path, default=BENCH_DIR,
                        help="where results.{md,json} and plots go (default: benchmarks/)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected benchmarks; see the module docstring."""
    args = _parse(argv)
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    names = args.names or list(BENCHMARKS)
    modules = {name: cast(Benchmark, importlib.import_module(BENCHMARKS[name])) for name in names}
    results = Results(args.out_dir)
    failed: list[str] = []
    started = time.perf_counter()
    with ExitStack() as stack:
        ddb = None
        if any(m.NEEDS_DYNAMODB for m in modules.values()):
            from constructs_lib.testing import DynamoDBLocal

            log("starting DynamoDB Local")
            ddb = stack.enter_context(DynamoDBLocal())
            log(f"DynamoDB Local on {ddb.endpoint}")
        for name, module in modules.items():
            log(f"{name}: {module.TITLE}")
            ctx = Context(out_dir=args.out_dir, ddb=ddb if module.NEEDS_DYNAMODB else None, quick=args.quick)
            t0 = time.perf_counter()
            try:
                section = module.run(ctx)
            except Exception:  # noqa: BLE001 - report, keep the other benchmarks' results
                traceback.print_exc()
                log(f"{name}: FAILED (its previous results, if any, are left as they were)")
                failed.append(name)
                continue
            section.meta.update(run_metadata(), duration_s=round(time.perf_counter() - t0, 1), quick=args.quick)
            results.merge(section)
            log(f"{name}: done in {section.meta['duration_s']:.0f} s")
    log(f"wrote {results.md_path} and {results.json_path} in {time.perf_counter() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
