"""``StoreStack`` of app.py alone, at the model version of the context key ``store:model`` (v1 or
v2, the default): the app each rollout step is deployed from (synthesizing one stack, not seven).
The stack is the one app.py builds, with its description, so app.py's ``deploy --all`` after the
last step finds nothing to change. Run by the CDK CLI: ``--app "python scripts/deploy_check/store_app.py"``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aws_cdk as cdk  # noqa: E402

from app import STACKS  # noqa: E402

if __name__ == "__main__":
    app = cdk.App(outdir=os.environ.get("CDK_OUTDIR"))
    stack_class, description = STACKS["StoreStack"]
    stack_class(app, "StoreStack", version=str(app.node.try_get_context("store:model") or "v2"), description=description)
    app.synth()
