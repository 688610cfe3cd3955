#!/usr/bin/env python3
"""IoT telemetry example: a CDK app with the readings table and its ingest and query functions.

Synthesize it from the repository root with either of::

    .venv/bin/python -m examples.iot.app                       # writes examples/iot/cdk.out/
    npx cdk synth --app ".venv/bin/python examples/iot/app.py" --output examples/iot/cdk.out

(``cdk synth`` sets ``$CDK_OUTDIR``; ``build_app(outdir)`` takes one for tests.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script (`python examples/iot/app.py`): make `examples` importable
    sys.path.insert(0, str(ROOT))

import aws_cdk as cdk
from constructs import Construct

from constructs_lib import SingleTable, TableFunction
from examples.iot.model import RETENTION, iot_model

STACK = "IotTelemetryStack"


class IotTelemetryStack(cdk.Stack):
    """Sensors and their time-bucketed readings in one table (TTL retention), a write-only ingest
    function and a read-only query function."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        # No stream (nothing consumes changes) and no GSI (every read is a key lookup or a key range).
        self.data = SingleTable(self, "Data", model=iot_model)
        self.ingest = TableFunction(
            self,
            "Ingest",
            table=self.data,
            entry=HERE / "handlers" / "iot_ingest.py",
            writes={"Reading": ["batch_put"]},  # BatchWriteItem on SENSOR#*#* keys, nothing else
            environment={"RETENTION_DAYS": str(RETENTION.days)},
            description="Writes batches of sensor readings (BatchWriteItem) with a TTL of the retention",
        )
        self.queries = TableFunction(
            self,
            "Queries",
            table=self.data,
            entry=HERE / "handlers" / "iot_queries.py",
            patterns=["sensor metadata", "sensors of a site", "readings of a sensor in a month",
                      "readings of a sensor in a time range"],
            description="Sensor metadata, a site's sensors, readings of a time range across month buckets",
        )
        cdk.CfnOutput(self, "TableName", value=self.data.table_name)
        cdk.CfnOutput(self, "IngestFunction", value=self.ingest.function.function_name)
        cdk.CfnOutput(self, "QueriesFunction", value=self.queries.function.function_name)


def build_app(outdir: str | None = None) -> cdk.App:
    """Build (but do not synthesize) the app; tests call this in-process.

    Parameters
    ----------
    outdir : str, optional
        Cloud assembly directory. Default ``$CDK_OUTDIR`` (set by ``cdk synth``), else
        ``examples/iot/cdk.out``.
    """
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    IotTelemetryStack(app, STACK, description="constructs_lib example: IoT time series with month buckets and TTL")
    return app


if __name__ == "__main__":
    build_app().synth()
