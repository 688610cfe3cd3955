"""The backfill job: the Lambda handler the ``Backfill`` construct generates.

Events (``{"action": ...}``):

* ``"start"``: invoke this function asynchronously once per segment (the fan-out);
* ``"segment"`` (``"segment": n``): run segment ``n`` from its checkpoint with its share of the
  write budget until done, or until less than a minute of the invocation is left — then
  re-invoke itself for the same segment (resume from the checkpoint);
* ``"status"``: the job's report (totals, segments done, items that could not be indexed).

Environment: ``TABLE_NAME`` and ``CONSTRUCTS_LIB_BACKFILL_SPEC``; the model is the bundled one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ..exceptions import BackfillError
from ..patterns.backfill.budget import WriteBudget
from ..patterns.backfill.jobs import metrics_line, progress
from ..patterns.backfill.spec import BackfillSpec
from ..patterns.backfill.worker import BackfillWorker

#: Stop a segment when less than this many milliseconds of the invocation are left.
RESERVE_MS = 60_000


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point (``constructs_lib.runtime.handlers.backfill.handler``)."""
    from .. import _aws
    from ..contract import load_bundled_model
    from ..environment import ENV_BACKFILL_SPEC, ENV_TABLE_NAME

    spec = BackfillSpec.from_json(os.environ[ENV_BACKFILL_SPEC])
    table = os.environ[ENV_TABLE_NAME]
    model = load_bundled_model()
    client = _aws.make_client(retry_mode="standard", max_attempts=3)
    return dispatch(event, client=client, table=table, model=model, spec=spec, context=context,
                    invoke=lambda payload: _invoke_self(context, payload))


def dispatch(
    event: Mapping[str, Any], *, client: Any, table: str, model: Any, spec: BackfillSpec, context: Any,
    invoke: Any,
) -> dict[str, Any]:
    action = event.get("action")
    if action == "start":
        for n in range(spec.segments):
            invoke({"action": "segment", "segment": n})
        return {"started": spec.segments, "job": spec.job_id}
    if action == "status":
        return progress(client, table, model, spec)
    if action == "segment":
        raw = event.get("segment")
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise BackfillError(f"backfill event segment {raw!r} must be an int")
        segment: int = raw
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        job = BackfillWorker(client, table, model, spec, budget=WriteBudget(spec.wcu_per_second / spec.segments))
        state = job.run_segment(
            segment,
            should_stop=(lambda: remaining() < RESERVE_MS) if remaining else (lambda: False),
            on_page=lambda s: print(metrics_line(spec.job_id, s, 0.0)),
        )
        if not state.done:
            invoke({"action": "segment", "segment": segment})
        return {"segment": segment, "done": state.done, **state.counts}
    raise BackfillError(f"backfill event action {action!r} must be 'start', 'segment' or 'status'")


def _invoke_self(context: Any, payload: Mapping[str, Any]) -> None:
    from .. import _aws

    lambda_client = _aws.make_client(service="lambda", retry_mode="standard")
    _aws.call(lambda_client, "invoke", FunctionName=context.invoked_function_arn, InvocationType="Event",
              Payload=json.dumps(payload).encode("utf-8"))
