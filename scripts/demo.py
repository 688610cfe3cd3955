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
   a month boundary, TTL retention;
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

Then stops the server. Run it with ``make demo`` (which synthesizes first), or
``.venv/bin/python scripts/demo.py --cdk-out cdk.out``; ``--only shop,iot`` runs a subset.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app import STACKS
from constructs_lib.testing import DynamoDBLocal
from examples._scenario import show
from examples.evolution import scenario as evolution_scenario
from examples.iot import scenario as iot_scenario
from examples.reporting import scenario as reporting_scenario
from examples.saas import scenario as saas_scenario
from examples.shop import scenario as shop_scenario
from examples.viral import scenario as viral_scenario

global_scenario = importlib.import_module("examples.global.scenario")  # `global` is a keyword

SCENARIOS = {
    "shop": lambda cdk_out, server: shop_scenario.run(cdk_out, server),
    "saas": lambda cdk_out, server: saas_scenario.run(cdk_out, server.client(), server.streams_client()),
    "iot": lambda cdk_out, server: iot_scenario.run(cdk_out, server),
    "viral": lambda cdk_out, server: viral_scenario.run(cdk_out, server),
    "reporting": lambda cdk_out, server: reporting_scenario.run(cdk_out, server),
    "evolution": lambda cdk_out, server: evolution_scenario.run(cdk_out, server),
    "global": lambda cdk_out, server: global_scenario.run(cdk_out, server),
    "cost": lambda cdk_out, server: shop_cost(),
}


def shop_cost() -> None:
    """Print the shop's monthly cost table for its committed traffic mix (no DynamoDB needed)."""
    from constructs_lib.__main__ import main as cli

    status = cli(["cost", str(ROOT / "app.py"), "--rates", str(ROOT / "examples" / "shop" / "rates.json")])
    if status:
        raise SystemExit(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cdk-out", default=str(ROOT / "cdk.out"), help="cloud assembly directory (default cdk.out)")
    parser.add_argument("--only", default=",".join(SCENARIOS), help=f"comma-separated subset of {','.join(SCENARIOS)}")
    args = parser.parse_args()
    cdk_out = Path(args.cdk_out)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(SCENARIOS))
    if unknown:
        parser.error(f"--only: unknown scenario(s) {unknown}; choose from {sorted(SCENARIOS)}")
    missing = [stack for stack in STACKS if not (cdk_out / f"{stack}.template.json").is_file()]
    if missing:
        print(f"error: {missing} not synthesized in {cdk_out}; run 'make synth' first", file=sys.stderr)
        return 2

    timings = {}
    with DynamoDBLocal() as server:
        show(f"DynamoDB Local {server.endpoint}; cloud assembly {cdk_out}")
        for name in chosen:
            show(f"Example: {name}")
            started = time.perf_counter()
            SCENARIOS[name](cdk_out, server)
            timings[name] = time.perf_counter() - started
        show("Done")
        print("scenarios run: " + ", ".join(f"{n} ({s:.1f} s)" for n, s in timings.items())
              + "; tables deleted, DynamoDB Local stopping")
        docs = sorted(p.name for p in cdk_out.glob("*.model.md"))
        print(f"data-model docs written at synth (Markdown + Mermaid; NoSQL Workbench .workbench.json beside them): "
              f"{', '.join(f'{cdk_out.name}/{d}' for d in docs)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
