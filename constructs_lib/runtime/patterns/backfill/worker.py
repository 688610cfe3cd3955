"""Backfill worker: rewrite the derived keys of existing items, one Scan segment at a time.

Each item's index keys are rebuilt with the model's own item mapper and written only where they
differ, by an UpdateItem conditional on the item still holding the values they were computed
from (key inputs, current key attributes, version): a concurrent write is never overwritten,
the item is re-read and recomputed instead. After every Scan page a checkpoint item records the
segment's position and counters, so a crashed or timed-out run resumes where it stopped.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ... import _aws
from ..._records import record
from ...exceptions import (
    BackfillError,
    ConditionFailedError,
    DynamoDBError,
    KeyValueError,
)
from ...items import ItemMapper
from ...jsontext import load_json
from ...request_params import Expression
from ...values import from_dynamo, item_size
from .budget import WriteBudget
from .spec import BackfillSpec

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ....model import Model
    from ....model import ResolvedEntity as Entity

#: Checkpoint items live under this partition-key prefix. A space never appears in a key an
#: entity builds (literals cannot hold one and values escape it), so no item can collide.
CHECKPOINT_PREFIX = "constructs_lib backfill"
THROTTLE_CODES = frozenset({"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"})
MAX_FAILURES_KEPT = 100
COUNTERS = ("scanned", "updated", "unchanged", "skipped", "conflicts", "failed", "vanished")


@record
class SegmentState:
    """Where one Scan segment of a job is: its cursor, whether it is done, counts (each of
    :data:`COUNTERS`, zero unless given), WCU consumed and kept failures (none unless given)."""

    segment: int
    cursor: dict[str, Any] | None
    done: bool
    counts: dict[str, int]
    consumed_wcu: float
    failures: list[dict[str, Any]]

    def __init__(self, segment: int, cursor: dict[str, Any] | None = None, done: bool = False,
                 counts: dict[str, int] | None = None, consumed_wcu: float = 0.0,
                 failures: list[dict[str, Any]] | None = None) -> None:
        self.segment, self.cursor, self.done, self.consumed_wcu = segment, cursor, done, consumed_wcu
        self.counts = dict.fromkeys(COUNTERS, 0) if counts is None else counts
        self.failures = [] if failures is None else failures


class BackfillWorker:
    """Backfill of one table with one model.

    Parameters
    ----------
    client
        A boto3 DynamoDB client.
    table_name
        The table.
    model
        The model whose item mapper builds the keys (the new one).
    spec
        The job (:class:`BackfillSpec`).
    budget
        The write budget; default one of ``spec.wcu_per_second`` for this process.
    """

    def __init__(
        self, client: BaseClient, table_name: str, model: Model, spec: BackfillSpec, *, budget: WriteBudget | None = None
    ) -> None:
        self.client, self.table_name, self.model, self.spec = client, table_name, model, spec
        self.mapper = ItemMapper(model)
        unknown = [i for i in spec.indexes or () if i not in model.indexes]
        if unknown:
            raise BackfillError(f"backfill indexes {unknown!r} are not indexes of model {model.name!r}")
        self.indexes = tuple(spec.indexes) if spec.indexes is not None else tuple(model.indexes)
        self.budget = budget or WriteBudget(spec.wcu_per_second)
        self._lock = threading.Lock()

    # Checkpoints ------------------------------------------------------------------------------
    def checkpoint_key(self, segment: int) -> dict[str, str]:
        pk = f"{CHECKPOINT_PREFIX}#{self.spec.job_id}"
        if self.model.has_sort_key:
            return {self.model.pk_attribute: pk, self.model.sk_attribute: f"segment#{segment:04d}"}
        return {self.model.pk_attribute: f"{pk}#segment#{segment:04d}"}

    def load(self, segment: int) -> SegmentState:
        resp = _aws.call(self.client, "get_item", TableName=self.table_name, ConsistentRead=True,
                         Key=_aws.serialize(self.checkpoint_key(segment)))
        raw = resp.get("Item")
        if not raw:
            return SegmentState(segment)
        item = _aws.deserialize(raw)
        if int(item.get("segments", 0)) != self.spec.segments:
            raise BackfillError(
                f"backfill job {self.spec.job_id!r} was started with {item.get('segments')} segments, not "
                f"{self.spec.segments}; resume it with the same count or use a new job_id"
            )
        return SegmentState(
            segment, self._stored(segment, "cursor", item.get("cursor")) if item.get("cursor") else None,
            bool(item.get("done")), {k: int(item.get(k, 0)) for k in COUNTERS}, float(item.get("consumed_wcu", 0)),
            self._stored(segment, "failures", item.get("failures", "[]")),
        )

    def _stored(self, segment: int, name: str, text: Any) -> Any:
        """The JSON attribute ``name`` of a segment's checkpoint (:class:`BackfillError` when it is not JSON)."""
        where = f"backfill job {self.spec.job_id!r} segment {segment} checkpoint attribute {name!r}"
        try:
            return load_json(text, where, BackfillError)
        except (json.JSONDecodeError, TypeError) as exc:
            raise BackfillError(f"{where} is not JSON ({exc}); start the job again with a new job_id") from exc

    def save(self, state: SegmentState) -> None:
        item = {
            **self.checkpoint_key(state.segment),
            "segments": self.spec.segments,
            "cursor": json.dumps(state.cursor) if state.cursor else None,
            "done": state.done,
            **state.counts,
            "consumed_wcu": str(round(state.consumed_wcu, 3)),
            "failures": json.dumps(state.failures[:MAX_FAILURES_KEPT]),
            "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        item = {k: v for k, v in item.items() if v is not None}
        reservation = self.budget.acquire(_wcu(item_size(item)))
        resp = self._call("put_item", TableName=self.table_name, Item=_aws.serialize(item),
                          ReturnConsumedCapacity="TOTAL")
        state.consumed_wcu += self._settle(resp, reservation)

    # The segment loop -------------------------------------------------------------------------
    def run_segment(self, segment: int, *, should_stop: Callable[[], bool] = lambda: False,
                    on_page: Callable[[SegmentState], None] | None = None) -> SegmentState:
        """Process ``segment`` from its checkpoint until done or ``should_stop()`` (checked
        between items; the unfinished page is redone on resume, which changes nothing twice)."""
        if not 0 <= segment < self.spec.segments:
            raise BackfillError(f"segment {segment!r} is outside 0..{self.spec.segments - 1}")
        state = self.load(segment)
        while not state.done:
            params: dict[str, Any] = {"TableName": self.table_name, "Segment": segment,
                                      "TotalSegments": self.spec.segments, "Limit": self.spec.page_size}
            if state.cursor:
                params["ExclusiveStartKey"] = state.cursor
            page = self._call("scan", **params)
            for raw in page.get("Items", []):
                if should_stop():
                    return state
                self._process(_aws.deserialize(raw), state)
            state.cursor = page.get("LastEvaluatedKey")
            state.done = state.cursor is None
            self.save(state)
            if on_page is not None:
                on_page(state)
            if should_stop():
                return state
        return state

    # One item ---------------------------------------------------------------------------------
    def desired(self, entity: Entity, values: Mapping[str, Any]) -> tuple[dict[str, str | None], list[dict[str, str]]]:
        """Index key attribute -> value (None: absent) the model gives ``values``, and the
        indexes whose key cannot be built (with the reason)."""
        out: dict[str, str | None] = {}
        failures: list[dict[str, str]] = []
        for index in self.indexes:
            attrs = self.mapper.index_attributes(index)
            if index not in entity.indexes:
                out.update(dict.fromkeys(attrs))
                continue
            try:
                key = self.mapper.index_key(entity, index, values)
            except KeyValueError as exc:
                failures.append({"index": index, "reason": str(exc)})
                continue
            out.update({a: (key or {}).get(a) for a in attrs})
        return out, failures

    def _process(self, item: dict[str, Any], state: SegmentState) -> None:
        state.counts["scanned"] += 1
        entity = self.mapper.entity_of(item)
        if entity is None:
            state.counts["skipped"] += 1
            return
        key = {a: item[a] for a in (self.model.pk_attribute, self.model.sk_attribute) if a in item}
        current: dict[str, Any] | None = item
        for _ in range(self.spec.max_attempts):
            if current is None:
                state.counts["vanished"] += 1
                return
            values = {k: from_dynamo(v) for k, v in current.items()}
            want, failures = self.desired(entity, values)
            changes = {a: v for a, v in want.items() if current.get(a) != v}
            if changes:
                try:
                    self._update(entity, key, current, changes, state)
                except ConditionFailedError as exc:
                    state.counts["conflicts"] += 1
                    current = getattr(exc, "old_item", None) or None
                    continue
            if failures:
                state.counts["failed"] += 1
                room = MAX_FAILURES_KEPT - len(state.failures)
                state.failures += [{"key": key, "entity": entity.name, **f} for f in failures][:max(room, 0)]
            elif changes:
                state.counts["updated"] += 1
            else:
                state.counts["unchanged"] += 1
            return
        state.counts["failed"] += 1
        if len(state.failures) < MAX_FAILURES_KEPT:
            state.failures.append({"key": key, "entity": entity.name, "index": None,
                                   "reason": f"concurrent writes changed the item {self.spec.max_attempts} times"})

    def _update(self, entity: Entity, key: dict[str, Any], current: Mapping[str, Any],
                changes: Mapping[str, str | None], state: SegmentState) -> None:
        expr = Expression()
        sets = [f"{expr.name(a)} = {expr.value(v)}" for a, v in changes.items() if v is not None]
        removes = [expr.name(a) for a, v in changes.items() if v is None]
        update = (("SET " + ", ".join(sets)) if sets else "") + ((" REMOVE " + ", ".join(removes)) if removes else "")
        guarded = {*changes}
        for index in self.indexes:
            if index in entity.indexes:
                guarded |= self.mapper.index_inputs(entity, index)
        if entity.version_attribute:
            guarded.add(entity.version_attribute)
        conditions = [f"attribute_exists({expr.name(self.model.pk_attribute)})"]
        for attr in sorted(guarded):
            if attr in current:
                conditions.append(f"{expr.name(attr)} = {expr.value(current[attr])}")
            else:
                conditions.append(f"attribute_not_exists({expr.name(attr)})")
        params = expr.apply({
            "TableName": self.table_name, "Key": _aws.serialize(key), "UpdateExpression": update.strip(),
            "ConditionExpression": " AND ".join(conditions), "ReturnConsumedCapacity": "TOTAL",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        })
        after = {**current, **{a: v for a, v in changes.items() if v is not None}}
        # Upper bound: the table write plus, per GSI the item is in before or after, a delete
        # and a put of the (fully projected, at most) index entry.
        in_gsis = sum(
            1 for index in self.model.gsis
            if any(a in current or a in after for a in self.mapper.index_attributes(index.name))
        )
        units = _wcu(max(item_size(current), item_size(after))) * (1 + 2 * in_gsis)
        while True:
            reservation = self.budget.acquire(units)
            try:
                resp = self._call("update_item", **params)
            except ConditionFailedError:
                # A failed condition consumes write capacity too (DynamoDB reports none): keep the
                # table write's share reserved.
                self.budget.settle(reservation, _wcu(max(item_size(current), item_size(after))))
                state.consumed_wcu += reservation[1]
                raise
            except DynamoDBError as exc:
                if exc.code in THROTTLE_CODES:
                    self.budget.throttled()
                    _aws.sleep(_aws.backoff(min(self.budget.throttles, 6)))
                    continue
                raise
            state.consumed_wcu += self._settle(resp, reservation)
            self.budget.succeeded()
            return

    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        while True:
            try:
                return _aws.call(self.client, operation, **params)
            except DynamoDBError as exc:
                if operation != "update_item" and exc.code in THROTTLE_CODES:
                    self.budget.throttled()
                    _aws.sleep(_aws.backoff(min(self.budget.throttles, 6)))
                    continue
                raise

    def _settle(self, resp: Mapping[str, Any], reservation: list[float]) -> float:
        used = float((resp.get("ConsumedCapacity") or {}).get("CapacityUnits", reservation[1]))
        self.budget.settle(reservation, used)
        return used


def _wcu(size: int) -> int:
    """Write units of an item of ``size`` bytes (1 per started KB), plus a margin of 100 bytes
    for the per-item overhead DynamoDB adds to what :func:`item_size` counts."""
    return max(1, math.ceil((size + 100) / 1024))
