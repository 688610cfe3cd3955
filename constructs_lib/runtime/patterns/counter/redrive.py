"""Re-driving a stream range that ended in the failure queue: its records are applied exactly once.

The aggregator applies a prefix of each batch and reports where it stopped
(:mod:`.aggregation`), so a range Lambda sends to the failure queue (retries exhausted, records
too old) was never applied. :func:`redrive_range` reads it back from the stream (within its
24-hour retention) and adds every counter's part to its total in one write, on the condition
that the range's token is not yet in the total's ``rd`` set — which the same write adds. Lane
watermarks are neither checked nor moved: later batches may have passed them. Records of
unknown shape stay reported; the rest of the range is applied.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ... import _aws
from ..._records import frozen_record
from ...exceptions import ConditionFailedError, KeyValueError, SettingsError
from .aggregation import Change, Legacy, StreamAggregator, Unknown, classify
from .spec import AGGREGATED_AT, APPLIED_EVENTS, COUNT, FORMAT_ATTR, REDRIVEN, STREAM_FORMAT, TOTAL_TYPE, format_time

if TYPE_CHECKING:
    from botocore.client import BaseClient

#: GetRecords returns at most this many records per call.
_PAGE = 1000


@frozen_record
class RedriveResult:
    """What re-driving one range did: records applied, counters written (those already re-driven
    are not written again) and the records still of unknown shape."""

    token: str
    applied: int
    counters: int
    unknown: tuple[Unknown, ...]

    def __init__(self, token: str, applied: int, counters: int, unknown: tuple[Unknown, ...]) -> None:
        self.__dict__.update(token=token, applied=applied, counters=counters, unknown=unknown)


def batch_info(message: Mapping[str, Any] | str) -> Mapping[str, Any] | None:
    """The ``DDBStreamBatchInfo`` of a failure-queue message body (a dict or its JSON) or the info
    itself; None when it is not a stream batch's (e.g. a failed scheduled run)."""
    body: Any = message
    if isinstance(message, str):
        try:
            body = json.loads(message)
        except (ValueError, RecursionError):
            return None
    info = body.get("DDBStreamBatchInfo", body) if isinstance(body, Mapping) else None
    if not isinstance(info, Mapping) or not all(isinstance(info.get(k), str) for k in
                                                ("streamArn", "shardId", "startSequenceNumber", "endSequenceNumber")):
        return None
    return info


def read_range(streams: BaseClient, info: Mapping[str, Any], *, hooks: Iterable[Any] = ()) -> list[dict[str, Any]]:
    """The records of ``info``'s shard from its start to its end sequence number, inclusive."""
    start, end = int(info["startSequenceNumber"]), int(info["endSequenceNumber"])
    iterator = _aws.call(
        streams, "get_shard_iterator", hooks=tuple(hooks), StreamArn=info["streamArn"], ShardId=info["shardId"],
        ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=info["startSequenceNumber"],
    ).get("ShardIterator")
    records: list[dict[str, Any]] = []
    while iterator:
        page = _aws.call(streams, "get_records", hooks=tuple(hooks), ShardIterator=iterator, Limit=_PAGE)
        got = page.get("Records") or []
        for rec in got:
            if int(rec["dynamodb"]["SequenceNumber"]) > end:
                return records
            records.append(rec)
        iterator = page.get("NextShardIterator")
        if not got:
            break
    if not records or int(records[-1]["dynamodb"]["SequenceNumber"]) < end:
        raise KeyValueError(
            f"stream range {info['shardId']} {start}..{end} is no longer complete in the stream (records are kept "
            "24 hours); its counts cannot be re-driven — compare get(..., exact=True) with the totals"
        )
    return records


def redrive_range(aggregator: StreamAggregator, records: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> RedriveResult:
    """Apply ``records`` (the range ``info`` names) once, whatever the lane watermarks say."""
    counter = aggregator.counter
    spec = counter.spec
    token = f"{info['shardId']}:{info['startSequenceNumber']}:{info['endSequenceNumber']}"
    # The range holds every item's changes; the mapping's filter let only the family's through.
    ours = [r for r in records if _key_of(r, spec.pk_attribute).startswith(spec.key_prefix)]
    parsed = [classify(spec, counter.region, r) for r in ours]
    unknown = tuple(p for p in parsed if isinstance(p, Unknown))
    per_counter: dict[str, list[Change]] = {}
    folds: dict[str, float | None] = {}
    for p in parsed:
        if isinstance(p, Change):
            per_counter.setdefault(p.counter_id, []).append(p)
        elif isinstance(p, Legacy):
            folds[p.counter_id] = p.created
    for counter_id, created in folds.items():
        aggregator.refold(counter_id, created)
    written = 0
    for counter_id, changes in sorted(per_counter.items()):
        written += _apply_once(aggregator, counter_id, changes, token)
    return RedriveResult(token, sum(len(c) for c in per_counter.values()), written, unknown)


def _key_of(rec: Mapping[str, Any], attribute: str) -> str:
    value = ((rec.get("dynamodb") or {}).get("Keys") or {}).get(attribute) or {}
    return value.get("S", "") if isinstance(value, Mapping) else ""


def _apply_once(aggregator: StreamAggregator, counter_id: str, changes: list[Change], token: str) -> int:
    """One conditional write of a counter's part of the range; 0 when the range was applied before."""
    spec = aggregator.spec
    names = {"#pk": spec.pk_attribute, "#count": COUNT, "#rd": REDRIVEN, "#fmt": FORMAT_ATTR, "#at": AGGREGATED_AT,
             "#t": spec.entity_attribute}
    values: dict[str, Any] = {
        ":d": sum(c.amount for c in changes), ":tok": {token}, ":one": token, ":fmt": STREAM_FORMAT, ":tt": TOTAL_TYPE,
        ":at": format_time(datetime.now(UTC)),
    }
    adds = ["#count :d", "#rd :tok"]
    events = sum(c.amount for c in changes if c.event)
    if events:
        names["#e"], values[":de"] = APPLIED_EVENTS, events
        adds.append("#e :de")
    for _ in range(3):
        try:
            aggregator.call_table(
                "update_item", Key=_aws.serialize(aggregator.total_key(counter_id)),
                UpdateExpression=f"ADD {', '.join(adds)} SET #fmt = :fmt, #at = :at, #t = :tt",
                ConditionExpression="(attribute_exists(#fmt) OR attribute_not_exists(#pk)) AND NOT contains(#rd, :one)",
                ExpressionAttributeNames=names, ExpressionAttributeValues=_aws.serialize(values),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
            return 1
        except ConditionFailedError as exc:
            stored = getattr(exc, "old_item", None) or {}
            if token in (stored.get(REDRIVEN) or set()):
                return 0
            if FORMAT_ATTR not in stored:
                aggregator.fold(counter_id)
                continue
            raise
    raise SettingsError(f"re-drive of {token} for counter {counter_id!r} could not fold its total")


__all__ = ["RedriveResult", "batch_info", "read_range", "redrive_range"]
