#!/usr/bin/env python3
"""E-commerce example: a CDK app holding ``ShopStack`` alone.

Synthesize it from the repository root with either of::

    .venv/bin/python -m examples.shop.app                       # writes examples/shop/cdk.out/
    npx cdk synth --app ".venv/bin/python examples/shop/app.py" --output examples/shop/cdk.out

(``cdk synth`` sets ``$CDK_OUTDIR``; ``build_app(outdir)`` takes one for tests.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script (`python examples/shop/app.py`): make `examples` importable
    sys.path.insert(0, str(ROOT))

import aws_cdk as cdk

from examples.shop.stack import ShopStack

STACK = "ShopStack"


def build_app(outdir: str | None = None) -> cdk.App:
    """Build (but do not synthesize) the app. ``outdir`` defaults to ``$CDK_OUTDIR``, else
    ``examples/shop/cdk.out``."""
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    ShopStack(app, STACK, description="constructs_lib example: e-commerce single table")
    return app


if __name__ == "__main__":
    build_app().synth()
