#!/usr/bin/env python3
"""Model evolution example: the ``store`` table, v1 deployed and v2 rolled out.

``StoreStack`` holds a ``SingleTable`` of the ``store`` model (v2 unless the context key
``store:model`` is ``v1``) and, for v2, a ``Backfill`` that rewrites derived keys of existing
items. With the lock in ``examples/evolution/cdk.json``, each synth emits one GSI step::

    cd examples/evolution
    python -m constructs_lib diff app.py            # classified changes + rollout plan
    npx cdk synth -c store:model=v1                 # what is deployed
    python -m constructs_lib lock --advance app.py  # after each successful deploy
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script: make `examples` importable
    sys.path.insert(0, str(ROOT))

import aws_cdk as cdk
from constructs import Construct

from constructs_lib import SingleTable
from examples.evolution.model import model_v1, model_v2

STACK = "StoreStack"


class StoreStack(cdk.Stack):
    """The store table (and, from v2 on, its backfill job)."""

    def __init__(self, scope: Construct, id: str, *, version: str = "v2", **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)  # type: ignore[arg-type]
        model = model_v1() if version == "v1" else model_v2()
        self.data = SingleTable(self, "Data", model=model)
        self.backfill = None
        if version != "v1":
            from constructs_lib import Backfill

            self.backfill = Backfill(self, "Backfill", table=self.data, wcu_per_second=1000, segments=4)


def build_app(outdir: str | None = None, *, context: dict[str, object] | None = None) -> cdk.App:
    """Build (but do not synthesize) the app; ``context`` as ``cdk -c`` would pass it."""
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"), context=context)
    version = str(app.node.try_get_context("store:model") or "v2")
    StoreStack(app, STACK, version=version, description="constructs_lib example: evolving a live model")
    return app


if __name__ == "__main__":
    build_app().synth()
