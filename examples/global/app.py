#!/usr/bin/env python3
"""Global documents example: a CDK app with a table replicated to two regions (MREC).

Synthesize it from the repository root with either of::

    .venv/bin/python -m examples.global.app                       # writes examples/global/cdk.out/
    npx cdk synth --app ".venv/bin/python -m examples.global.app" --output examples/global/cdk.out

(``global`` is a Python keyword: import this package with ``importlib.import_module``; its own
modules import each other relatively. ``cdk synth`` sets ``$CDK_OUTDIR``; ``build_app(outdir)``
takes one for tests.)
"""

from __future__ import annotations

import os
from pathlib import Path

import aws_cdk as cdk

from .stack import GlobalDocsStack

HERE = Path(__file__).resolve().parent
STACK = "GlobalDocsStack"


def build_app(outdir: str | None = None) -> cdk.App:
    """Build (but do not synthesize) the app; tests call this in-process.

    Parameters
    ----------
    outdir : str, optional
        Cloud assembly directory. Default ``$CDK_OUTDIR`` (set by ``cdk synth``), else
        ``examples/global/cdk.out``.
    """
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    GlobalDocsStack(app, STACK, description="constructs_lib example: documents, views and audit on a global table")
    return app


if __name__ == "__main__":
    build_app().synth()
