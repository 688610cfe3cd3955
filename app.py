#!/usr/bin/env python3
"""The showcase CDK app: every construct constructs_lib offers, in the seven worked examples.

* ``ShopStack`` (``examples/shop``): the e-commerce single table — overloaded and sparse GSIs, TTL,
  a stream, ``ShardedCounter`` for product views, ``StreamAudit``, a ``TableFunction`` orders API,
  and the operations dashboard and alarms (``OperationsSettings``);
* ``SaasStack`` (``examples/saas``): multi-tenant versioned documents — tenant-prefixed keys,
  ``grant_tenant_access``, a per-index ``grant_query``, an audit trail;
* ``IotTelemetryStack`` (``examples/iot``): month-bucketed sensor readings with TTL retention;
* ``ViralVideoStack`` (``examples/viral``): a view counter sized from 50,000 writes/s;
* ``ShopReportingStack`` (``examples/reporting``): a consumer owning no table — it imports
  ``ShopStack``'s from the contract the shop publishes in SSM (``SingleTable.from_parameters``)
  and runs a report granted Query on one index;
* ``StoreStack`` (``examples/evolution``): a live model evolving from v1 to v2 — the model lock,
  the classified diff, one GSI per deployment and a generated ``Backfill`` of derived keys;
* ``GlobalDocsStack`` (``examples/global``): a global table (``replicas=``, MREC) in ``us-east-1``
  replicated to ``eu-west-1`` — documents, a region-affine ``ShardedCounter`` and a ``StreamAudit``
  recording the changes written in its region (the stack has a concrete ``env`` region).

Each example is also an app of its own (``examples/<name>/app.py``). ``python app.py`` writes to
``cdk.out/`` (or ``$CDK_OUTDIR``, which ``cdk synth`` sets).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import aws_cdk as cdk

from examples.evolution.app import StoreStack
from examples.iot.app import IotTelemetryStack
from examples.reporting.stack import ShopReportingStack
from examples.saas.stack import SaasStack
from examples.shop.stack import ShopStack
from examples.viral.app import ViralVideoStack

#: ``global`` is a Python keyword, so its package is imported by name.
GlobalDocsStack = importlib.import_module("examples.global.stack").GlobalDocsStack

HERE = Path(__file__).resolve().parent

#: Stack name -> (stack class, description), in synthesis order.
STACKS = {
    "ShopStack": (ShopStack, "constructs_lib showcase: e-commerce single table"),
    "SaasStack": (SaasStack, "constructs_lib showcase: multi-tenant versioned documents"),
    "IotTelemetryStack": (IotTelemetryStack, "constructs_lib showcase: IoT time series with month buckets and TTL"),
    "ViralVideoStack": (ViralVideoStack, "constructs_lib showcase: view counter for a viral video"),
    "ShopReportingStack": (ShopReportingStack, "constructs_lib showcase: reporting on the shop table, imported"),
    "StoreStack": (StoreStack, "constructs_lib showcase: evolving a live model (v1 to v2) with a backfill"),
    "GlobalDocsStack": (GlobalDocsStack, "constructs_lib showcase: documents, views and audit on a global table"),
}


def build_app(outdir: str | None = None) -> cdk.App:
    """Build (but do not synthesize) the app; tests call this in-process."""
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out"))
    stacks = {name: stack_class(app, name, description=description) for name, (stack_class, description)
              in STACKS.items()}
    # The reporting stack reads the parameters ShopStack publishes: deploy ShopStack first.
    stacks["ShopReportingStack"].add_stack_dependency(stacks["ShopStack"])
    return app


if __name__ == "__main__":
    build_app().synth()
