"""The SaaS example as a CDK app of its own: ``SaasStack`` alone.

Synthesize it from the repository root with the pinned CDK CLI::

    npx cdk synth --no-notices --app ".venv/bin/python -m examples.saas.app" --output examples/saas/cdk.out

or without the CLI, ``.venv/bin/python -m examples.saas.app`` (writes ``$CDK_OUTDIR``, else
``examples/saas/cdk.out``).
"""

from __future__ import annotations

import os
from pathlib import Path

import aws_cdk as cdk

from examples.saas.stack import SaasStack

HERE = Path(__file__).resolve().parent
STACK_NAME = "SaasStack"


def build_app(outdir: str | os.PathLike[str] | None = None) -> cdk.App:
    """Build (but do not synthesize) the app.

    Parameters
    ----------
    outdir : str or path-like, optional
        Cloud assembly directory. Default: ``$CDK_OUTDIR`` (set by the CDK CLI), else
        ``examples/saas/cdk.out``.

    Returns
    -------
    cdk.App
        An app holding one ``SaasStack`` named ``SaasStack``.
    """
    app = cdk.App(outdir=str(outdir or os.environ.get("CDK_OUTDIR") or HERE / "cdk.out"))
    SaasStack(app, STACK_NAME, description="constructs_lib example: multi-tenant versioned documents")
    return app


if __name__ == "__main__":
    build_app().synth()
