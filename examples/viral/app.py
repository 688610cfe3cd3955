#!/usr/bin/env python3
"""Viral-video example: a CDK app with a view counter sized for 50,000 views/s of one video.

Synthesize it from the repository root with either of::

    .venv/bin/python -m examples.viral.app                        # writes examples/viral/cdk.out/
    npx cdk synth --app ".venv/bin/python examples/viral/app.py" --output examples/viral/cdk.out

(``cdk synth`` sets ``$CDK_OUTDIR``; ``build_app(outdir)`` takes one for tests.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script (`python examples/viral/app.py`): make `examples` importable
    sys.path.insert(0, str(ROOT))

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from constructs_lib import ShardedCounter, SingleTable, TableFunction
from examples.viral.model import VIEWS_FAMILY, viral_model

STACK = "ViralVideoStack"
#: Peak views per second of the single hottest video the counter must absorb.
PEAK_VIEWS_PER_SECOND = 50_000


class ViralVideoStack(cdk.Stack):
    """Videos and their write-sharded view counters on one table, the aggregator on its stream,
    and a views API bound to the counter."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        # NEW_IMAGE: the aggregator adds what each write carries in its new image (a shard's
        # amount, an idempotent view's increment item), so it never re-reads a shard; the old
        # image would only make the records bigger.
        self.data = SingleTable(self, "Data", model=viral_model, stream=dynamodb.StreamViewType.NEW_IMAGE)
        # Views are idempotent (a request id per view): each is one conditional PutItem of an item
        # keyed by the request id (1 WCU), no transaction: 50,000/s x 1 x 1.2 headroom = 60,000 WCU
        # -> 60 shards of <= 1,000 WCU.
        self.views = ShardedCounter(
            self,
            "VideoViews",
            table=self.data,
            name=VIEWS_FAMILY,
            expected_writes_per_second=PEAK_VIEWS_PER_SECOND,
            idempotency_window=cdk.Duration.hours(24),
        )
        self.api = TableFunction(
            self,
            "ViewsApi",
            table=self.data,
            entry=HERE / "handlers" / "views_api.py",
            # Reads videos by id (GetItem on VIDEO#* keys); writes nothing but the counter's own
            # items (the counter's grants are limited to keys starting with COUNTER#video_views#).
            patterns=["video by id"],
            description="Counts views idempotently and reads view totals",
            counters=[self.views],
        )
        cdk.CfnOutput(self, "TableName", value=self.data.table_name)
        cdk.CfnOutput(self, "ViewsApiFunction", value=self.api.function.function_name)
        cdk.CfnOutput(self, "ViewsAggregator", value=self.views.aggregator_function.function_name)
        cdk.CfnOutput(self, "ViewShards", value=str(self.views.spec.shards), description=self.views.derivation)


def build_app(outdir: str | None = None) -> cdk.App:
    """Build (but do not synthesize) the app; tests call this in-process.

    Parameters
    ----------
    outdir : str, optional
        Cloud assembly directory. Default ``$CDK_OUTDIR`` (set by ``cdk synth``), else
        ``examples/viral/cdk.out``.
    """
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    ViralVideoStack(app, STACK, description="constructs_lib example: view counter for a viral video")
    return app


if __name__ == "__main__":
    build_app().synth()
