#!/usr/bin/env python3
"""Reporting example: a CDK app holding ``ShopStack`` (the producer, publishing its contract) and
``ShopReportingStack`` (a consumer importing the shop's table from it).

In two repositories each app would hold one of the two stacks; here both live in one app so the
example synthesizes and runs on its own; ``build_consumer_app`` builds the consumer's app alone, as
its own repository would. Synthesize it from the repository root with either of::

    .venv/bin/python -m examples.reporting.app                    # writes examples/reporting/cdk.out/
    npx cdk synth --app ".venv/bin/python examples/reporting/app.py" --output examples/reporting/cdk.out

(``cdk synth`` sets ``$CDK_OUTDIR``; ``build_app(outdir)`` takes one for tests.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script (`python examples/reporting/app.py`): make `examples` importable
    sys.path.insert(0, str(ROOT))

import aws_cdk as cdk

from examples.reporting.stack import ShopReportingStack
from examples.shop.stack import ShopStack

PRODUCER, CONSUMER = "ShopStack", "ShopReportingStack"


def build_app(outdir: str | None = None) -> cdk.App:
    """Build (but do not synthesize) the app. ``outdir`` defaults to ``$CDK_OUTDIR``, else
    ``examples/reporting/cdk.out``."""
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    shop = ShopStack(app, PRODUCER, description="constructs_lib example: e-commerce single table")
    reporting = ShopReportingStack(app, CONSUMER, description="constructs_lib example: reporting on the shop table")
    # The consumer reads parameters the producer writes: deploy the producer first.
    reporting.add_stack_dependency(shop)
    return app


def build_consumer_app(outdir: str | None = None) -> cdk.App:
    """The app of the consumer's repository: ``ShopReportingStack`` alone, owning no table (e.g.
    ``python -m constructs_lib describe examples/reporting/app.py:build_consumer_app``)."""
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    ShopReportingStack(app, CONSUMER, description="constructs_lib example: reporting on the shop table, imported")
    return app


if __name__ == "__main__":
    build_app().synth()
