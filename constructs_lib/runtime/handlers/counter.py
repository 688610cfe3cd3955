"""The sharded-counter aggregator: the Lambda handler ``ShardedCounter`` generates.

Three triggers. A stream batch (``{"Records": [...]}``): on a family aggregated from the stream,
each record's amount is added to its total once (:mod:`..patterns.counter.aggregation`); on a
recomputed family, each touched counter is recomputed from its shards; either way the first
record not applied is reported in ``batchItemFailures``. A schedule event (``source``
``constructs_lib.counter.schedule``) recomputes a fixed list (tables without a stream). A re-drive
event (``constructs_lib.counter.redrive``) applies the failure queue's ranges, or ``"ranges"``,
once. ``CONSTRUCTS_LIB_COUNTER_FAMILY`` names the family.

See docs/adr/0070-counters-at-their-cost-floor.md and docs/adr/0012-write-sharded-counters.md.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from .. import _aws
from ..environment import ENV_COUNTER_FAILURE_QUEUE, ENV_COUNTER_FAMILY
from ..exceptions import KeyValueError, RuntimeClientError
from ..patterns.counter.aggregation import StreamAggregator
from ..patterns.counter.client import CounterClient
from ..patterns.counter.redrive import batch_info, read_range, redrive_range
from ..patterns.counter.spec import REDRIVE_SOURCE, SCHEDULE_SOURCE

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
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return aggregate(_client, event, remaining_ms=remaining if callable(remaining) else None)


def aggregate(counter: CounterClient, event: Mapping[str, Any], *, remaining_ms: Any = None,
              streams_client: Any = None, queue_client: Any = None) -> dict[str, Any]:
    """Handle one stream batch, scheduled event or re-drive event with ``counter``; see the module
    docstring. ``remaining_ms``: the invocation's time left (Lambda's context method)."""
    if "Records" in event:
        if counter.spec.deltas:
            return _stream_deltas(counter, event["Records"], remaining_ms)
        return _stream_recompute(counter, event["Records"])
    source = event.get("source")
    if source == SCHEDULE_SOURCE:
        return _scheduled(counter, event.get("counters"))
    if source == REDRIVE_SOURCE:
        return _redrive(counter, event, streams_client, queue_client, remaining_ms)
    raise KeyValueError(
        f"event with keys {sorted(event)!r} is neither a stream batch ('Records'), a scheduled recompute "
        f"(source {SCHEDULE_SOURCE!r}) nor a re-drive (source {REDRIVE_SOURCE!r})"
    )


def _stream_deltas(counter: CounterClient, records: Sequence[Mapping[str, Any]], remaining_ms: Any) -> dict[str, Any]:
    outcome = StreamAggregator(counter, remaining_ms=remaining_ms).apply(records)
    for unknown in outcome.unknown:
        logger.error(json.dumps({"msg": "record of unknown shape", "sequence": unknown.sequence_number,
                                 "error": unknown.reason}))
    logger.info(json.dumps({
        "msg": "aggregated", "family": counter.spec.family, "records": len(records), "applied": outcome.applied,
        "counters": outcome.counters, "stopped_at": outcome.failures[0] if outcome.failures else None,
    }))
    return {"batchItemFailures": [{"itemIdentifier": seq} for seq in outcome.failures]}


def _stream_recompute(counter: CounterClient, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
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


def _redrive(counter: CounterClient, event: Mapping[str, Any], streams: Any, queue: Any, remaining_ms: Any) -> dict[str, Any]:
    """Apply failure-queue ranges once: those in ``event["ranges"]``, else the queue's messages
    (each deleted once its range is applied; a range with records of unknown shape stays)."""
    aggregator = StreamAggregator(counter, remaining_ms=remaining_ms)
    streams = streams or _aws.make_client(service="dynamodbstreams")
    done: list[dict[str, Any]] = []
    if "ranges" in event:
        ranges = event["ranges"]
        if not isinstance(ranges, list) or not all(batch_info(r) for r in ranges):
            raise KeyValueError(f"re-drive event 'ranges' {str(ranges)[:200]!r} must be a list of DDBStreamBatchInfo "
                                "objects (streamArn, shardId, startSequenceNumber, endSequenceNumber)")
        for info in ranges:
            done.append(_one_range(aggregator, streams, batch_info(info) or {}))
        return {"redriven": done}
    url = os.environ.get(ENV_COUNTER_FAILURE_QUEUE)
    if not url:
        raise KeyValueError(f"environment variable {ENV_COUNTER_FAILURE_QUEUE!r} is not set and the event lists no "
                            "'ranges': nothing names what to re-drive")
    queue = queue or _aws.make_client(service="sqs")
    skipped = 0
    while remaining_ms is None or remaining_ms() > 10_000:
        messages = _aws.call(queue, "receive_message", QueueUrl=url, MaxNumberOfMessages=10,
                             WaitTimeSeconds=0).get("Messages") or []
        if not messages:
            break
        for message in messages:
            info = batch_info(message.get("Body", ""))
            if info is None:
                skipped += 1  # not a stream range (a failed scheduled run): left for its reader
                continue
            result = _one_range(aggregator, streams, info)
            done.append(result)
            if not result["unknown"]:
                _aws.call(queue, "delete_message", QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        if skipped and len(messages) == skipped:
            break
    return {"redriven": done, "left_in_queue": skipped}


def _one_range(aggregator: StreamAggregator, streams: Any, info: Mapping[str, Any]) -> dict[str, Any]:
    records = read_range(streams, info)
    result = redrive_range(aggregator, records, info)
    logger.info(json.dumps({"msg": "re-drove", "range": result.token, "records": len(records),
                            "applied": result.applied, "counters": result.counters, "unknown": len(result.unknown)}))
    return {"range": result.token, "applied": result.applied, "counters": result.counters,
            "unknown": [u.sequence_number for u in result.unknown]}
