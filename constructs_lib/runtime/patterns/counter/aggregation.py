"""Aggregation from the stream: a batch's records become guarded additions to the counters' totals.

Each record is classified (:func:`classify`): a shard's write adds its new image's ``b``, an
idempotent increment created adds its ``by``, a recompute-layout write refolds its counter,
anything else of unknown shape stops the batch there. Per counter, one UpdateItem of its total per
25 shards adds the amounts on the condition that no lane watermark already covers them; a refused
write is retried with what is left. An invocation applies a prefix of its batch: when a counter
fails at record X, what earlier writes added from X on is taken back and X is reported, so a
range in the failure queue was never applied (:mod:`.redrive` applies it once).
See docs/adr/0070-counters-at-their-cost-floor.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ... import _aws
from ..._records import frozen_record, record
from ...exceptions import ConditionFailedError, DynamoDBError, KeyValueError, RuntimeClientError
from .spec import (
    AGGREGATED_AT,
    AMOUNT,
    APPLIED_EVENTS,
    BY,
    COUNT,
    DEDUP_SK,
    FOLD_TIME,
    FOLDED,
    FORMAT_ATTR,
    KEY_PREFIX,
    ORIGIN,
    SHARD_SK,
    STREAM_FORMAT,
    SUM_SK,
    TOTAL_SK,
    TOTAL_TYPE,
    CounterSpec,
    format_time,
    parse_time,
)
from .watermarks import encode_seq, generation, generation_maps, watermark

if TYPE_CHECKING:
    from .client import CounterClient

#: Shards per total write: keeps the condition expression under DynamoDB's 4 KB.
SHARDS_PER_WRITE = 25
#: Attempts of one total write before the batch stops at its counter.
WRITE_ATTEMPTS = 8
#: The invocation stops starting counters when less than this much of its time is left (ms).
TIME_MARGIN_MS = 5000
_INSERT = "INSERT"


# What a record is -------------------------------------------------------------------------------------------------
class Change(NamedTuple):
    """A record that adds ``amount`` to a counter: a shard's write or an idempotent increment."""

    counter_id: str
    shard: int
    seq: int
    amount: int
    event: bool


class Legacy(NamedTuple):
    """A write to a shard of the recompute layout: the counter's folded sum is read again."""

    counter_id: str
    seq: int
    created: float | None


class Unknown(NamedTuple):
    """A record the aggregator cannot account for; it is reported, never dropped."""

    seq: int | None
    sequence_number: str | None
    reason: str


Parsed = Change | Legacy | Unknown | None  # None: a record with no effect on any count


def classify(spec: CounterSpec, region: str | None, rec: Mapping[str, Any]) -> Parsed:
    """What one stream record (Lambda's or GetRecords' shape) means for the family's counts."""
    try:
        body = rec["dynamodb"]
        sequence_number = str(body["SequenceNumber"])
        seq = int(sequence_number)
    except (KeyError, TypeError, ValueError):
        return Unknown(None, None, "no dynamodb.SequenceNumber")
    try:
        keys = body["Keys"]
        pk, sk = keys[spec.pk_attribute]["S"], keys[spec.sk_attribute]["S"]
        if _bookkeeping(spec, pk, sk):
            return None  # a total or a recompute-layout dedup marker: it carries no increment
        counter_id, shard = spec.parse_shard_key(pk)
    except (KeyError, TypeError, KeyValueError) as exc:
        return Unknown(seq, sequence_number, f"not a shard key of counter family {spec.family!r}: {exc}")
    kind = _sort_key_kind(spec, sk)
    name = rec.get("eventName")
    if kind is None:
        return Unknown(seq, sequence_number, f"sort key {sk!r} is not a counter item's")
    what, item_region = kind
    if what == "legacy":
        if spec.replicated and item_region != region:
            return None  # another region's shard: its own total folds it
        return Legacy(counter_id, seq, _created(body))
    if what == "key":
        if name != _INSERT:
            return None  # an expiry (TTL), or a replicated overwrite of an item already counted
        image = body.get("NewImage") or {}
        if spec.replicated and _string(image.get(ORIGIN)) != region:
            return None  # written in another region: counted there
        amount = _integer(image.get(BY))
        if amount is None:
            return Unknown(seq, sequence_number, f"increment item {sk!r} has no integer {BY!r} in its new image")
        return Change(counter_id, shard, seq, amount, True)
    if spec.replicated and item_region != region:
        return None  # another region's shard: counted by that region's aggregator
    if name not in (_INSERT, "MODIFY"):
        return Unknown(seq, sequence_number, f"shard item {pk!r} was {name or 'changed'}: its count would be lost")
    amount = _integer((body.get("NewImage") or {}).get(AMOUNT))
    if amount is None:
        return Unknown(seq, sequence_number, f"shard item {pk!r} has no integer {AMOUNT!r} in its new image "
                       "(the stream must carry new images)")
    return Change(counter_id, shard, seq, amount, False)


def _bookkeeping(spec: CounterSpec, pk: str, sk: str) -> bool:
    """True for a key of the family's totals or recompute-layout dedup markers."""
    if not pk.startswith(spec.key_prefix):
        return False
    rest = pk[len(spec.key_prefix):].split("#")
    if len(rest) == 1:
        return sk == TOTAL_SK or (spec.replicated and sk.startswith(TOTAL_SK + "#"))
    return len(rest) == 3 and rest[1] == DEDUP_SK and sk == DEDUP_SK


def _sort_key_kind(spec: CounterSpec, sk: Any) -> tuple[str, str | None] | None:
    """What a sort key under a shard's partition key names: ``("sum", region)``, ``("key", None)``
    (an increment item) or ``("legacy", region)`` (a ``SHARD`` item); None for anything else."""
    if not isinstance(sk, str):
        return None
    if sk.startswith(KEY_PREFIX):
        return "key", None
    for kind, base in (("sum", SUM_SK), ("legacy", SHARD_SK)):
        if sk == base and not spec.regions:
            return kind, None
        if spec.regions and sk.startswith(base + "#") and sk[len(base) + 1:] in spec.regions:
            return kind, sk[len(base) + 1:]
    return None


def _after(seq: int, mark: int | None) -> bool:
    return mark is None or seq > mark


def _integer(value: Any) -> int | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("N"), str):
        return None
    try:
        number = int(value["N"])
    except ValueError:
        return None
    return number


def _string(value: Any) -> str | None:
    return value.get("S") if isinstance(value, Mapping) else None


def _created(body: Mapping[str, Any]) -> float | None:
    value = body.get("ApproximateCreationDateTime")
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


# What a write did -------------------------------------------------------------------------------------------------
@record
class AppliedWrite:
    """One total write: the changes it applied, the watermarks it set (in map ``current``) and
    the stored total before it (DynamoDB's ``ALL_OLD``)."""

    counter_id: str
    current: str
    applied: dict[int, list[Change]]
    before: dict[str, Any]

    def __init__(self, counter_id: str, current: str, applied: dict[int, list[Change]], before: dict[str, Any]) -> None:
        self.counter_id, self.current, self.applied, self.before = counter_id, current, applied, before


@frozen_record
class BatchOutcome:
    """What :meth:`StreamAggregator.apply` did with a batch."""

    failures: tuple[str, ...]
    applied: int
    counters: int
    unknown: tuple[Unknown, ...]

    def __init__(self, failures: tuple[str, ...], applied: int, counters: int, unknown: tuple[Unknown, ...]) -> None:
        self.__dict__.update(failures=failures, applied=applied, counters=counters, unknown=unknown)


class _Work:
    """One counter's part of a batch."""

    def __init__(self, counter_id: str) -> None:
        self.counter_id = counter_id
        self.lanes: dict[int, list[Change]] = {}
        self.legacy: list[Legacy] = []

    @property
    def first(self) -> int:
        return min([c[0].seq for c in self.lanes.values()] + [r.seq for r in self.legacy])


# The aggregator ---------------------------------------------------------------------------------------------------
class StreamAggregator:
    """Applies stream batches to the totals of one family, through ``counter``'s client and seam.

    Parameters
    ----------
    counter
        The family's :class:`CounterClient` (its spec, table, region, client and hooks).
    clock
        Seconds since the epoch (watermark generations). Default :func:`time.time`.
    remaining_ms
        The invocation's time left in milliseconds (Lambda's context); None: unlimited.
    """

    def __init__(
        self, counter: CounterClient, *, clock: Callable[[], float] | None = None,
        remaining_ms: Callable[[], int] | None = None,
    ) -> None:
        if not counter.spec.deltas:
            raise KeyValueError(
                f"counter family {counter.spec.family!r} is recomputed from its shards (aggregation='recompute'); "
                "its stream records are handled by CounterClient.recompute"
            )
        self.counter, self.spec = counter, counter.spec
        self._clock = clock or time.time
        self._remaining = remaining_ms

    # One batch ------------------------------------------------------------------------------------------------------
    def apply(self, records: Sequence[Mapping[str, Any]]) -> BatchOutcome:
        """Apply a batch; the outcome's ``failures`` is the one sequence number to report, if any."""
        parsed = [classify(self.spec, self.counter.region, r) for r in records]
        unknown = tuple(p for p in parsed if isinstance(p, Unknown))
        if any(u.seq is None for u in unknown):
            raise KeyValueError(f"stream record without a sequence number in a batch of {len(records)}: "
                                "the event is not a DynamoDB stream batch")
        stop = min((u.seq for u in unknown if u.seq is not None), default=None)
        texts = {int(r["dynamodb"]["SequenceNumber"]): str(r["dynamodb"]["SequenceNumber"]) for r in records}
        work = _group(p for p in parsed if isinstance(p, (Change, Legacy)) and (stop is None or p.seq < stop))
        done: list[AppliedWrite] = []
        for item in sorted(work.values(), key=lambda w: w.first):
            if self._remaining is not None and self._remaining() < TIME_MARGIN_MS:
                stop = item.first if stop is None else min(stop, item.first)
                break
            try:
                done += self._apply_counter(item)
            except RuntimeClientError:
                stop = item.first if stop is None else min(stop, item.first)
                break
        if stop is not None:
            self._take_back(done, stop)
        applied = sum(len(c) for w in done for c in w.applied.values())
        return BatchOutcome((texts[stop],) if stop is not None else (), applied, len({w.counter_id for w in done}),
                            unknown)

    def _apply_counter(self, item: _Work) -> list[AppliedWrite]:
        if item.legacy:
            self.refold(item.counter_id, min((r.created for r in item.legacy if r.created is not None), default=None))
        shards = sorted(item.lanes)
        return [
            self._write(item.counter_id, {s: item.lanes[s] for s in shards[i:i + SHARDS_PER_WRITE]})
            for i in range(0, len(shards), SHARDS_PER_WRITE)
        ]

    # One total write --------------------------------------------------------------------------------------------
    def _write(self, counter_id: str, lanes: dict[int, list[Change]]) -> AppliedWrite:
        pending = {s: sorted(changes, key=lambda c: c.seq) for s, changes in lanes.items()}
        stored: dict[str, Any] | None = None  # the total as a refused write returned it
        create = False
        last: DynamoDBError | None = None
        for _ in range(WRITE_ATTEMPTS):
            gen = generation(self._clock(), self.spec.guard_seconds)
            current = generation_maps(gen)[0]
            if stored is not None:
                if stored and FORMAT_ATTR not in stored:
                    self.fold(counter_id)  # a recompute-layout total: fold it into this layout first
                    stored, create = None, False
                    continue
                pending = {s: [c for c in cs if _after(c.seq, watermark(stored, gen, s))] for s, cs in pending.items()}
                pending = {s: cs for s, cs in pending.items() if cs}
                create = current not in stored
            if not pending:
                return AppliedWrite(counter_id, current, {}, stored or {})
            try:
                resp = self.call_table("update_item", **self._request(counter_id, gen, pending, create))
                return AppliedWrite(counter_id, current, pending, _aws.deserialize(resp.get("Attributes") or {}))
            except ConditionFailedError as exc:
                stored, last = dict(getattr(exc, "old_item", None) or {}), exc
            except DynamoDBError as exc:
                if exc.code != "ValidationException" or "document path" not in str(exc):
                    raise
                stored, last = {}, exc  # no total yet, or no map for this generation: create it
        raise DynamoDBError(
            f"total of counter {counter_id!r} (family {self.spec.family!r}) not written after {WRITE_ATTEMPTS} "
            f"attempts: {last}", code=getattr(last, "code", None), operation="UpdateItem",
        ) from last

    def _request(self, counter_id: str, gen: int, pending: dict[int, list[Change]], create: bool) -> dict[str, Any]:
        s = self.spec
        current, previous, expired = generation_maps(gen)
        names = {"#pk": s.pk_attribute, "#count": COUNT, "#at": AGGREGATED_AT, "#t": s.entity_attribute,
                 "#fmt": FORMAT_ATTR, "#cur": current, "#prev": previous, "#old": expired}
        values: dict[str, Any] = {
            ":at": format_time(datetime.fromtimestamp(self._clock(), UTC)), ":tt": TOTAL_TYPE, ":fmt": STREAM_FORMAT,
        }
        sets, guards, marks = [], [], {}
        for n, (shard, changes) in enumerate(sorted(pending.items())):
            names[f"#s{n}"] = str(shard)
            values[f":f{n}"], marks[str(shard)] = encode_seq(str(changes[0].seq)), encode_seq(str(changes[-1].seq))
            guards.append(f"(attribute_not_exists(#prev.#s{n}) OR #prev.#s{n} < :f{n})")
            if not create:
                values[f":w{n}"] = marks[str(shard)]
                sets.append(f"#cur.#s{n} = :w{n}")
                guards.append(f"(attribute_not_exists(#cur.#s{n}) OR #cur.#s{n} < :f{n})")
        if create:
            sets, values[":marks"] = ["#cur = :marks"], marks
            guards.insert(0, "attribute_not_exists(#cur)")
            names = {k: v for k, v in names.items() if not k.startswith("#s") or any(k in g for g in guards)}
        adds = [("#count", ":d", sum(c.amount for cs in pending.values() for c in cs))]
        events = sum(c.amount for cs in pending.values() for c in cs if c.event)
        if events:
            names["#e"] = APPLIED_EVENTS
            adds.append(("#e", ":de", events))
        for _, ref, amount in adds:
            values[ref] = amount
        update = (f"SET {', '.join(sets)}, #at = :at, #t = :tt, #fmt = :fmt "
                  f"ADD {', '.join(f'{n} {v}' for n, v, _ in adds)} REMOVE #old")
        condition = " AND ".join(["(attribute_exists(#fmt) OR attribute_not_exists(#pk))", *guards])
        return {
            "Key": _aws.serialize(s.total_key(counter_id, self.counter.region if s.replicated else None)),
            "UpdateExpression": update, "ConditionExpression": condition, "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": _aws.serialize(values), "ReturnValues": "ALL_OLD",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }

    # Taking back what a failed batch applied after its failure point ------------------------------------------------
    def _take_back(self, done: list[AppliedWrite], stop: int) -> None:
        for write in reversed(done):
            back = {s: [c for c in cs if c.seq >= stop] for s, cs in write.applied.items()}
            back = {s: cs for s, cs in back.items() if cs}
            if back:
                self.call_table("update_item", **self._take_back_request(write, back, stop))

    def _take_back_request(self, write: AppliedWrite, back: dict[int, list[Change]], stop: int) -> dict[str, Any]:
        s = self.spec
        names: dict[str, str] = {"#count": COUNT, "#cur": write.current}
        values: dict[str, Any] = {":d": -sum(c.amount for cs in back.values() for c in cs)}
        sets, removes, guards = [], [], []
        for n, (shard, changes) in enumerate(sorted(back.items())):
            names[f"#s{n}"] = str(shard)
            values[f":ours{n}"] = encode_seq(str(changes[-1].seq))
            guards.append(f"#cur.#s{n} = :ours{n}")
            kept = [c for c in write.applied[shard] if c.seq < stop]
            prior = (write.before.get(write.current) or {}).get(str(shard))
            if kept:
                values[f":w{n}"] = encode_seq(str(kept[-1].seq))
                sets.append(f"#cur.#s{n} = :w{n}")
            elif prior is not None:
                values[f":w{n}"] = bytes(getattr(prior, "value", prior))
                sets.append(f"#cur.#s{n} = :w{n}")
            else:
                removes.append(f"#cur.#s{n}")
        adds = ["#count :d"]
        events = sum(c.amount for cs in back.values() for c in cs if c.event)
        if events:
            names["#e"], values[":de"] = APPLIED_EVENTS, -events
            adds.append("#e :de")
        update = (f"ADD {', '.join(adds)}" + (f" SET {', '.join(sets)}" if sets else "")
                  + (f" REMOVE {', '.join(removes)}" if removes else ""))
        return {
            "Key": _aws.serialize(s.total_key(write.counter_id, self.counter.region if s.replicated else None)),
            "UpdateExpression": update, "ConditionExpression": " AND ".join(guards),
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": _aws.serialize(values),
        }

    # Folding the recompute layout's shards in ---------------------------------------------------------------------
    def fold(self, counter_id: str) -> None:
        """Turn a recompute-layout total into this layout once: its value becomes the sum of the
        counter's ``SHARD`` items (read now, strongly consistent) and the stream layout adds to it."""
        folded = self._legacy_sum(counter_id)
        stamp = format_time(datetime.fromtimestamp(self._clock(), UTC))
        try:
            self.call_table(
                "update_item", Key=_aws.serialize(self.total_key(counter_id)),
                UpdateExpression="SET #fmt = :fmt, #f = :f, #ft = :ft, #count = :f, #at = :ft, #t = :tt",
                ConditionExpression="attribute_not_exists(#fmt)",
                ExpressionAttributeNames={"#fmt": FORMAT_ATTR, "#f": FOLDED, "#ft": FOLD_TIME, "#count": COUNT,
                                          "#at": AGGREGATED_AT, "#t": self.spec.entity_attribute},
                ExpressionAttributeValues=_aws.serialize({":fmt": STREAM_FORMAT, ":f": folded, ":ft": stamp,
                                                          ":tt": TOTAL_TYPE}),
            )
        except ConditionFailedError:
            return  # another invocation folded it first

    def refold(self, counter_id: str, written_at: float | None = None) -> None:
        """Read the counter's ``SHARD`` items again after a write of the recompute layout reached
        the stream (while earlier versions still write): ``f`` becomes their sum and the value
        moves by the difference. Skipped when the last fold read them after ``written_at``."""
        for _ in range(WRITE_ATTEMPTS):
            resp = self.call_table("get_item", Key=_aws.serialize(self.total_key(counter_id)), ConsistentRead=True)
            stored = _aws.deserialize(resp["Item"]) if resp.get("Item") else None
            if stored is None or FORMAT_ATTR not in stored:
                self.fold(counter_id)
                continue
            last_read = parse_time(stored.get(FOLD_TIME))
            if written_at is not None and last_read is not None and last_read.timestamp() > written_at + 1:
                return
            before = int(stored.get(FOLDED, 0))
            folded = self._legacy_sum(counter_id)
            stamp = format_time(datetime.fromtimestamp(self._clock(), UTC))
            names = {"#f": FOLDED, "#ft": FOLD_TIME, "#count": COUNT}
            values: dict[str, Any] = {":f": folded, ":ft": stamp, ":d": folded - before}
            if FOLDED in stored:
                guard, values[":before"] = "#f = :before", before
            else:
                guard = "attribute_not_exists(#f)"
            if FOLD_TIME in stored:
                guard += " AND #ft = :last"
                values[":last"] = stored[FOLD_TIME]
            try:
                self.call_table("update_item", Key=_aws.serialize(self.total_key(counter_id)),
                           UpdateExpression="SET #f = :f, #ft = :ft ADD #count :d", ConditionExpression=guard,
                           ExpressionAttributeNames=names, ExpressionAttributeValues=_aws.serialize(values))
                return
            except ConditionFailedError:
                continue  # another fold moved it: read again
        raise DynamoDBError(f"fold of counter {counter_id!r} did not settle after {WRITE_ATTEMPTS} attempts",
                            operation="UpdateItem")

    def _legacy_sum(self, counter_id: str) -> int:
        region = self.counter.region if self.spec.replicated else None
        keys = [k for k in self.spec.all_legacy_shard_keys(counter_id)
                if region is None or k[self.spec.sk_attribute].endswith("#" + region)]
        items = _aws.batch_get(self.counter.client, self.counter.table_name, keys, consistent=True,
                               retries=self.counter.batch_retries, hooks=self.counter.hooks)
        return sum(int(item.get(COUNT, 0)) for item in items)

    def total_key(self, counter_id: str) -> dict[str, str]:
        return self.spec.total_key(counter_id, self.counter.region if self.spec.replicated else None)

    def call_table(self, operation: str, **params: Any) -> dict[str, Any]:
        return _aws.call(self.counter.client, operation, hooks=self.counter.hooks,
                         TableName=self.counter.table_name, **params)


def _group(parsed: Iterable[Change | Legacy]) -> dict[str, _Work]:
    work: dict[str, _Work] = {}
    for p in parsed:
        item = work.setdefault(p.counter_id, _Work(p.counter_id))
        if isinstance(p, Legacy):
            item.legacy.append(p)
        else:
            item.lanes.setdefault(p.shard, []).append(p)
    return work


__all__ = ["BatchOutcome", "Change", "Legacy", "StreamAggregator", "Unknown", "classify"]
