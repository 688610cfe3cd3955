"""The sharded-counter aggregator: the Lambda handler ``ShardedCounter`` generates.

Two triggers, one rule — recompute, never add deltas. A stream batch (``{"Records": [...]}``,
filtered to the family's shard items) recomputes each touched counter from all its shards; a
failed recompute or a foreign record is reported in ``batchItemFailures``. A schedule event
(``{"source": "constructs_lib.counter.schedule", "counters": [...]}``) recomputes a fixed list,
for tables without a stream. ``CONSTRUCTS_LIB_COUNTER_FAMILY`` names the family; its spec and
table come from the environment (see ``CounterClient.from_environment``).

See docs/adr/0012-write-sharded-counters.md.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..environment import ENV_COUNTER_FAMILY
from ..exceptions import KeyValueError, RuntimeClientError
from ..patterns.counter.client import CounterClient
from ..patterns.counter.spec import SCHEDULE_SOURCE

logger = logging.getLogger("constructs_lib.counter")
logger.setLevel(logging.INFO)

_client: CounterClient | None = None


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point (``constructs_lib.runtime.handlers.counter.handler``)."""
    global _client
    if _client is None:  # once per execution environment
        family = os.environ.get(ENV_COUNTER_FAMILY)
        if not family:
            raise KeyValueError(f"environment variable {ENV_COUNTER_FAMILY!r} is not set; it names the counter family")
        _client = CounterClient.from_environment(family)
    return aggregate(_client, event)


def aggregate(counter: CounterClient, event: Mapping[str, Any]) -> dict[str, Any]:
    """Handle one stream batch or scheduled event with ``counter``; see the module docstring."""
    if "Records" in event:
        return _stream_batch(counter, event["Records"])
    if event.get("source") == SCHEDULE_SOURCE:
        return _scheduled(counter, event.get("counters"))
    raise KeyValueError(
        f"event with keys {sorted(event)!r} is neither a stream batch ('Records') nor a "
        f"scheduled recompute (source {SCHEDULE_SOURCE!r})"
    )


def _stream_batch(counter: CounterClient, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    spec = counter.spec
    first_record: dict[str, str] = {}  # counter id -> sequence number of its first record in the batch
    failures: list[str] = []
    for record in records:
        seq = record["dynamodb"]["SequenceNumber"]
        try:
            pk = record["dynamodb"]["Keys"][spec.pk_attribute]["S"]
            counter_id, _ = spec.parse_shard_key(pk)
        except (KeyError, TypeError, KeyValueError) as exc:
            logger.error(json.dumps({"msg": "record is not a shard of this family", "sequence": seq, "error": str(exc)}))
            failures.append(seq)
            continue
        first_record.setdefault(counter_id, seq)
    recomputed = {}
    for counter_id, seq in first_record.items():
        try:
            value = counter.recompute(counter_id)
        except RuntimeClientError as exc:  # throttled past retries, unprocessed keys, ...
            logger.error(json.dumps({"msg": "recompute failed", "counter_id": counter_id, "error": str(exc)}))
            failures.append(seq)
            continue
        recomputed[counter_id] = value.total
    logger.info(json.dumps({
        "msg": "aggregated", "family": spec.family, "records": len(records), "counters": len(recomputed),
        "failed": len(failures),
    }))
    return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failures]}


def _scheduled(counter: CounterClient, counters: Any) -> dict[str, Any]:
    if not isinstance(counters, list) or not all(isinstance(c, str) and c for c in counters):
        raise KeyValueError(f"scheduled event 'counters' {counters!r} must be a list of counter ids")
    totals: dict[str, int] = {}
    errors: dict[str, str] = {}
    for counter_id in counters:  # one failure must not starve the others
        try:
            totals[counter_id] = counter.recompute(counter_id).total
        except RuntimeClientError as exc:
            errors[counter_id] = str(exc)
    logger.info(json.dumps({"msg": "aggregated on schedule", "family": counter.spec.family, "counters": len(totals)}))
    if errors:  # fail the invocation: it shows in the Errors metric/alarm and the async retries run
        raise RuntimeClientError(f"recompute failed for {len(errors)} of {len(counters)} counter(s): {errors}")
    return {"recomputed": totals}
