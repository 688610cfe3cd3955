"""Write-sharded counters: sizing, key layout and the :class:`CounterClient`.

One partition takes about 1,000 increments/s, so a counter family spreads each counter over N
shard items on N partition keys and an aggregator keeps a total per counter::

    shard   PK = COUNTER#<family>#{id}#S007          SK = SHARD   count (ADD), _type
    total   PK = COUNTER#<family>#{id}               SK = TOTAL   count, aggregated_at
    dedup   PK = COUNTER#<family>#{id}#DEDUP#{key}   SK = DEDUP   (TTL) one per idempotency key

Reading top to bottom: sizing (:func:`derive_shards`), the spec the construct hands to the runtime
(:class:`CounterSpec`), then :class:`CounterClient`. See docs/adr/0012-write-sharded-counters.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ... import _aws, codec, contract
from ...exceptions import (
    ConditionFailedError,
    DynamoDBError,
    IdempotencyKeyReusedError,
    KeyValueError,
    TransactionCanceledError,
)

if TYPE_CHECKING:
    from botocore.client import BaseClient

# Sizing: seed arithmetic ---------------------------------------------------------------------------
#: Write capacity one partition sustains per second.
PARTITION_WCU = 1000
#: Bytes one write capacity unit covers (a write of up to 1 KB costs 1 WCU).
WCU_BYTES = 1024
#: Largest shard count a family may use (exact reads then take 10 BatchGetItem calls).
MAX_SHARDS = 1000
DEFAULT_HEADROOM = 1.2

# Layout -----------------------------------------------------------------------------------------------
PREFIX = "COUNTER"
SHARD_SK, TOTAL_SK, DEDUP_SK = "SHARD", "TOTAL", "DEDUP"
#: Values of the model's entity attribute on counter items (stream filters can exclude them).
SHARD_TYPE, TOTAL_TYPE, DEDUP_TYPE = "CounterShard", "CounterTotal", "CounterDedup"
COUNT, FAMILY, COUNTER_ID, SHARD, AGGREGATED_AT, SHARDS, BY, IDEMPOTENCY_KEY = (
    "count", "counter", "counter_id", "shard", "aggregated_at", "shards", "by", "idempotency_key",
)
#: Environment variable prefix holding a family's spec (``CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS``).
ENV_PREFIX = "CONSTRUCTS_LIB_COUNTER_"
FORMAT, VERSION = "constructs_lib.counter", 1

_FAMILY_RE = re.compile(r"[a-z][a-z0-9_]{0,47}")
_MAX_ID_BYTES = 1024
_MAX_IDEMPOTENCY_KEY_BYTES = 512
_MAX_BY = 10**18
_SHARD_SEGMENT = re.compile(r"S([0-9]{3})")


@dataclass(frozen=True)
class ShardSizing:
    """How a shard count was derived from an expected write rate (1 WCU per KB, 1,000 WCU per partition).

    ``wcu_per_write`` is for a plain write; ``transactional`` doubles it.
    """

    shards: int
    expected_writes_per_second: float
    item_size_bytes: int
    headroom: float
    transactional: bool
    wcu_per_write: int
    required_wcu: float

    def explain(self) -> str:
        tx = " x2 (transactional)" if self.transactional else ""
        return (
            f"{self.expected_writes_per_second:g} writes/s x {self.wcu_per_write} WCU "
            f"(ceil({self.item_size_bytes} B / {WCU_BYTES} B)){tx} x headroom {self.headroom:g} = "
            f"{self.required_wcu:g} WCU; / {PARTITION_WCU} WCU per partition = {self.shards} shard(s)"
        )


def derive_shards(
    expected_writes_per_second: float,
    *,
    item_size_bytes: int = WCU_BYTES,
    headroom: float = DEFAULT_HEADROOM,
    transactional: bool = False,
) -> ShardSizing:
    """Shard count for a write rate: ``ceil(rate × ceil(size / 1 KB) × (2 if transactional) ×
    headroom / 1000)``.

    Parameters
    ----------
    expected_writes_per_second
        Peak increments per second of one counter (the hottest one). Must be > 0.
    item_size_bytes
        Size of a shard item write. Default 1,024 (1 WCU); shard items are far smaller, so
        the default is conservative. 1–409,600.
    headroom
        Multiplier ≥ 1 for burstiness and the uneven spread of random shard choice.
        Default 1.2.
    transactional
        True when increments are idempotent: transactional writes cost 2 WCU per KB.

    Raises
    ------
    KeyValueError
        If a value is out of range or the result exceeds :data:`MAX_SHARDS`.
    """
    rate = expected_writes_per_second
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
        raise KeyValueError(f"expected_writes_per_second {rate!r} must be a positive number")
    if isinstance(item_size_bytes, bool) or not isinstance(item_size_bytes, int) or not 1 <= item_size_bytes <= 409_600:
        raise KeyValueError(f"item_size_bytes {item_size_bytes!r} must be an int from 1 to 409,600 (400 KB)")
    if isinstance(headroom, bool) or not isinstance(headroom, (int, float)) or not 1 <= headroom <= 10:
        raise KeyValueError(f"headroom {headroom!r} must be a number from 1 to 10")
    wcu = math.ceil(item_size_bytes / WCU_BYTES)
    required = rate * wcu * (2 if transactional else 1) * headroom
    shards = max(1, math.ceil(round(required / PARTITION_WCU, 9)))
    if shards > MAX_SHARDS:
        raise KeyValueError(
            f"expected_writes_per_second {rate:g} needs {shards} shards ({required:g} WCU / {PARTITION_WCU}); "
            f"the limit is {MAX_SHARDS} per counter family — reduce the rate per counter or the item size"
        )
    return ShardSizing(shards, rate, item_size_bytes, headroom, transactional, wcu, required)


# The spec: what the construct tells the runtime ------------------------------------------------------------
@dataclass(frozen=True)
class CounterSpec:
    """One counter family as synthesized: its name, shard count and the table's attribute names.

    Serialized into the environment of the aggregator and of every function bound to the
    counter (``CONSTRUCTS_LIB_COUNTER_<FAMILY>``), so runtime keys match the synthesized
    stream filter and IAM conditions.

    Parameters
    ----------
    family
        Lowercase name, ``[a-z][a-z0-9_]{0,47}``.
    shards
        Number of shards, 1–1,000. Growing it later is safe; shrinking it orphans the
        removed shards' counts.
    pk_attribute, sk_attribute, entity_attribute
        The table's attribute names (from the model).
    ttl_attribute
        The table's TTL attribute; required for idempotent increments. Default None.
    idempotency_ttl_seconds
        How long an idempotency key is remembered; None disables idempotent increments.
    """

    family: str
    shards: int
    pk_attribute: str = "PK"
    sk_attribute: str = "SK"
    entity_attribute: str = "_type"
    ttl_attribute: str | None = None
    idempotency_ttl_seconds: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.family, str) or not _FAMILY_RE.fullmatch(self.family):
            raise KeyValueError(
                f"counter family {self.family!r} must match [a-z][a-z0-9_]{{0,47}} (lowercase, starts with a letter)"
            )
        if isinstance(self.shards, bool) or not isinstance(self.shards, int) or not 1 <= self.shards <= MAX_SHARDS:
            raise KeyValueError(f"counter family {self.family!r}: shards {self.shards!r} must be an int from 1 to {MAX_SHARDS}")
        if self.idempotency_ttl_seconds is not None:
            ttl = self.idempotency_ttl_seconds
            if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 60:
                raise KeyValueError(f"counter family {self.family!r}: idempotency_ttl_seconds {ttl!r} must be an int >= 60")
            if not self.ttl_attribute:
                raise KeyValueError(
                    f"counter family {self.family!r}: idempotent increments need the table's TTL attribute "
                    "(dedup markers must expire); the model declares none"
                )

    @property
    def env_var(self) -> str:
        return ENV_PREFIX + self.family.upper()

    @property
    def key_prefix(self) -> str:
        """Every partition key of this family starts with this (stream filter, IAM LeadingKeys)."""
        return f"{PREFIX}#{self.family}#"

    @property
    def idempotent(self) -> bool:
        return self.idempotency_ttl_seconds is not None

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "version": VERSION, **self.__dict__}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> CounterSpec:
        try:
            data = json.loads(text)
            if data.pop("format") != FORMAT or data.pop("version") != VERSION:
                raise ValueError
            return cls(**data)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise KeyValueError(
                f"counter spec {text[:80]!r} is not a {FORMAT} version {VERSION} document"
            ) from exc

    # Keys ---------------------------------------------------------------------------------------------
    def _id(self, counter_id: Any) -> str:
        if not isinstance(counter_id, str) or not counter_id:
            raise KeyValueError(f"counter id {counter_id!r} must be a non-empty str")
        escaped = codec.escape(counter_id, field="counter_id")
        if len(escaped.encode()) > _MAX_ID_BYTES:
            raise KeyValueError(f"counter id {counter_id[:40]!r}... is over {_MAX_ID_BYTES} bytes once escaped")
        return escaped

    def _key(self, pk: str, sk: str) -> dict[str, str]:
        return {self.pk_attribute: pk, self.sk_attribute: sk}

    def shard_key(self, counter_id: str, shard: int) -> dict[str, str]:
        if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < self.shards:
            raise KeyValueError(f"shard {shard!r} of counter family {self.family!r} must be 0..{self.shards - 1}")
        return self._key(f"{self.key_prefix}{self._id(counter_id)}#S{shard:03d}", SHARD_SK)

    def total_key(self, counter_id: str) -> dict[str, str]:
        return self._key(f"{self.key_prefix}{self._id(counter_id)}", TOTAL_SK)

    def dedup_key(self, counter_id: str, idempotency_key: str) -> dict[str, str]:
        if not isinstance(idempotency_key, str) or not idempotency_key:
            raise KeyValueError(f"idempotency_key {idempotency_key!r} must be a non-empty str")
        if len(idempotency_key.encode("utf-8", "surrogatepass")) > _MAX_IDEMPOTENCY_KEY_BYTES:
            raise KeyValueError(f"idempotency_key {idempotency_key[:40]!r}... is over {_MAX_IDEMPOTENCY_KEY_BYTES} bytes")
        key = codec.escape(idempotency_key, field="idempotency_key")
        return self._key(f"{self.key_prefix}{self._id(counter_id)}#{DEDUP_SK}#{key}", DEDUP_SK)

    def parse_shard_key(self, pk: str) -> tuple[str, int]:
        """``(counter_id, shard)`` of a shard item's partition key; KeyValueError if it is not one."""
        if not isinstance(pk, str) or not pk.startswith(self.key_prefix):
            raise KeyValueError(f"key {pk!r} is not a shard key of counter family {self.family!r}")
        parts = pk[len(self.key_prefix):].split("#")
        match = _SHARD_SEGMENT.fullmatch(parts[-1]) if len(parts) == 2 else None
        if match is None:
            raise KeyValueError(f"key {pk!r} is not a shard key of counter family {self.family!r} (…#{{id}}#S000)")
        return codec.unescape(parts[0], field="counter_id"), int(match.group(1))


# Values returned ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CounterValue:
    """A counter's value.

    ``aggregated_at`` is when the aggregator read the shards (None if never aggregated or
    for an exact read); ``exact`` says the value was summed from every shard just now.
    """

    counter_id: str
    total: int
    aggregated_at: datetime | None
    exact: bool = False


@dataclass(frozen=True)
class Increment:
    """What :meth:`CounterClient.increment` did.

    ``duplicate`` is True when the idempotency key had already been counted (DynamoDB
    refused the dedup marker). A retry inside the transaction token's 10-minute window is
    acknowledged by DynamoDB as the same transaction, and reports ``duplicate=False``;
    either way the increment is counted once.
    """

    counter_id: str
    shard: int
    by: int
    duplicate: bool = False


# The client ---------------------------------------------------------------------------------------------------------
class CounterClient:
    """Increment and read the counters of one family.

    Parameters
    ----------
    spec
        The family's :class:`CounterSpec` (from the construct, via the environment).
    table_name
        The physical table name.
    client
        A boto3 DynamoDB client. Default: a new one with ``retry_mode``/``max_attempts``.
    retry_mode, max_attempts, region_name, endpoint_url
        For the default client. Defaults ``"adaptive"`` (client-side rate limiting when
        throttled) and 10 attempts.
    batch_retries
        Retries of unprocessed BatchGetItem keys. Default 8.
    rng
        Random source for shard choice. Default a fresh :class:`random.Random`.
    clock
        Returns the current aware UTC datetime (the aggregator's ``aggregated_at``).
    """

    def __init__(
        self,
        spec: CounterSpec,
        table_name: str,
        *,
        client: BaseClient | None = None,
        retry_mode: str = "adaptive",
        max_attempts: int = 10,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        batch_retries: int = 8,
        rng: random.Random | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not isinstance(spec, CounterSpec):
            raise TypeError(f"spec {spec!r} must be a CounterSpec")
        if not isinstance(table_name, str) or not table_name:
            raise ValueError(f"table_name {table_name!r} must be a non-empty string")
        self.spec = spec
        self.table_name = table_name
        self.client = client or _aws.make_client(
            retry_mode=retry_mode, max_attempts=max_attempts, region_name=region_name, endpoint_url=endpoint_url
        )
        self.batch_retries = batch_retries
        self._rng = rng or random.Random()
        self._clock = clock or (lambda: datetime.now(timezone.utc))

    @classmethod
    def from_environment(cls, family: str, *, environ: Mapping[str, str] | None = None, **kwargs: Any) -> CounterClient:
        """The client inside a function bound to the counter (``ShardedCounter.bind`` or the
        aggregator): spec from ``CONSTRUCTS_LIB_COUNTER_<FAMILY>``, table from
        ``CONSTRUCTS_LIB_COUNTER_<FAMILY>_TABLE``."""
        env = os.environ if environ is None else environ
        contract.verify(environ=env)  # on an imported table: the bundled model must be the deployed one
        var = ENV_PREFIX + str(family).upper()
        if var not in env:
            raise KeyValueError(
                f"environment variable {var!r} is not set: counter family {family!r} is not bound to this function "
                "(use ShardedCounter.bind(function) or TableFunction(counters=[...]))"
            )
        spec = CounterSpec.from_json(env[var])
        table = env.get(var + "_TABLE")
        if not table:
            raise KeyValueError(f"environment variable {var + '_TABLE'!r} (the counter's table name) is not set")
        return cls(spec, table, **kwargs)

    # Shard choice ---------------------------------------------------------------------------------------------------
    def shard_for(self, counter_id: str, idempotency_key: str | None = None) -> int:
        """A random shard, or — with an idempotency key — one derived from it, so every retry
        of the same increment targets the same shard (and sends identical parameters)."""
        if idempotency_key is None:
            return self._rng.randrange(self.spec.shards)
        digest = hashlib.sha256(f"{counter_id}\0{idempotency_key}".encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest[:8], "big") % self.spec.shards

    # Increments -----------------------------------------------------------------------------------------------------
    def increment(self, counter_id: str, by: int = 1, *, idempotency_key: str | None = None) -> Increment:
        """Add ``by`` to the counter with one UpdateItem ``ADD`` on one shard.

        With ``idempotency_key`` the increment is counted exactly once however often the
        caller retries: a dedup marker (expiring through TTL) is created in the same
        transaction, and the transaction's ClientRequestToken is derived from the key.

        Raises
        ------
        KeyValueError
            Bad counter id, ``by`` not an int (or out of ±10^18), empty key.
        IdempotencyKeyReusedError
            The key was already used for a different ``by`` (or counter) — a caller bug.
        DynamoDBError
            The write failed after the client's retries (throttling retries are built in).
        """
        if isinstance(by, bool) or not isinstance(by, int) or not -_MAX_BY < by < _MAX_BY:
            raise KeyValueError(f"increment by {by!r} must be an int between -10^18 and 10^18")
        shard = self.shard_for(counter_id, idempotency_key)
        key = self.spec.shard_key(counter_id, shard)
        update = self._shard_update(counter_id, shard, by)
        if idempotency_key is None:
            self._retry_conflicts(lambda: _aws.call(self.client, "update_item", TableName=self.table_name, Key=_aws.serialize(key), **update))
            return Increment(counter_id, shard, by)
        return self._idempotent_increment(counter_id, shard, by, idempotency_key, key, update)

    def _shard_update(self, counter_id: str, shard: int, by: int) -> dict[str, Any]:
        # The hot path: ADD the amount and keep the entity type (what stream filters and the
        # model's readers key on). Family, id and shard are in the key; the request stays small.
        return {
            "UpdateExpression": "ADD #c :by SET #t = :t",
            "ExpressionAttributeNames": {"#c": COUNT, "#t": self.spec.entity_attribute},
            "ExpressionAttributeValues": {":by": {"N": str(by)}, ":t": {"S": SHARD_TYPE}},
        }

    def _idempotent_increment(
        self, counter_id: str, shard: int, by: int, idempotency_key: str, key: dict[str, str], update: dict[str, Any]
    ) -> Increment:
        s = self.spec
        if not s.idempotent:
            raise KeyValueError(
                f"counter family {s.family!r} was synthesized without idempotent increments; "
                "pass idempotency_window=... to ShardedCounter to use idempotency_key"
            )
        marker_key = s.dedup_key(counter_id, idempotency_key)
        expires = int(self._clock().timestamp()) + s.idempotency_ttl_seconds  # type: ignore[operator]
        marker = {
            **marker_key, s.entity_attribute: DEDUP_TYPE, FAMILY: s.family, COUNTER_ID: counter_id,
            IDEMPOTENCY_KEY: idempotency_key, BY: by, SHARD: shard, s.ttl_attribute: expires,  # type: ignore[dict-item]
        }
        token = hashlib.sha256(
            f"{s.family}\0{counter_id}\0{idempotency_key}".encode("utf-8", "surrogatepass")
        ).hexdigest()[:36]
        items = [
            {"Put": {
                "TableName": self.table_name, "Item": _aws.serialize(marker),
                "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": s.pk_attribute},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }},
            {"Update": {"TableName": self.table_name, "Key": _aws.serialize(key), **update}},
        ]
        for attempt in range(self.batch_retries + 1):
            try:
                _aws.call(self.client, "transact_write_items", TransactItems=items, ClientRequestToken=token)
                return Increment(counter_id, shard, by)
            except TransactionCanceledError as exc:
                codes = [r.get("Code") for r in exc.reasons]
                if codes and codes[0] == "ConditionalCheckFailed":
                    old = exc.reasons[0].get("Item")
                    stored = _aws.deserialize(old) if old else self._read_marker(marker_key)
                    self._check_same_increment(stored, counter_id, by, idempotency_key)
                    return Increment(counter_id, shard, by, duplicate=True)
                if not set(codes) <= {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "None", None}:
                    raise
                last: DynamoDBError = exc
            except DynamoDBError as exc:
                if exc.code == "IdempotentParameterMismatchException":
                    # Same token, different parameters: an earlier attempt with this key went
                    # through (its marker carried an earlier expiry time). The marker says what it counted.
                    self._check_same_increment(self._read_marker(marker_key), counter_id, by, idempotency_key)
                    return Increment(counter_id, shard, by, duplicate=True)
                if exc.code != "TransactionInProgressException":
                    raise
                last = exc
            if attempt < self.batch_retries:
                _aws.sleep(_aws.backoff(attempt))
        raise last

    def _read_marker(self, marker_key: dict[str, str]) -> dict[str, Any] | None:
        resp = _aws.call(self.client, "get_item", TableName=self.table_name, Key=_aws.serialize(marker_key), ConsistentRead=True)
        return _aws.deserialize(resp["Item"]) if resp.get("Item") else None

    def _check_same_increment(self, marker: Mapping[str, Any] | None, counter_id: str, by: int, key: str) -> None:
        if marker is None:  # the earlier attempt is still in flight; it will count once
            return
        if marker.get(COUNTER_ID) != counter_id or int(marker.get(BY, 0)) != by:
            raise IdempotencyKeyReusedError(
                f"idempotency_key {key!r} was already used to add {marker.get(BY)} to counter "
                f"{marker.get(COUNTER_ID)!r}; it cannot also add {by} to {counter_id!r} — use a new key per increment"
            )

    def _retry_conflicts(self, call: Callable[[], Any]) -> Any:
        """Retry a write that hit a transaction in progress on the same item (nothing was applied)."""
        for attempt in range(self.batch_retries + 1):
            try:
                return call()
            except DynamoDBError as exc:
                if exc.code != "TransactionConflictException" or attempt == self.batch_retries:
                    raise
                _aws.sleep(_aws.backoff(attempt))
        return None  # pragma: no cover

    # Reads ----------------------------------------------------------------------------------------------------------
    def get(self, counter_id: str, *, exact: bool = False, consistent: bool = False) -> CounterValue:
        """The counter's value.

        By default one GetItem of the aggregated total (fast; lags by the aggregation delay;
        0 with ``aggregated_at=None`` if never aggregated). ``exact=True`` sums every shard
        with strongly consistent BatchGetItem calls of ≤ 100 keys (⌈shards/100⌉ calls).
        """
        if exact:
            total = self._sum_shards(counter_id)
            return CounterValue(counter_id, total, None, exact=True)
        resp = _aws.call(
            self.client, "get_item", TableName=self.table_name, Key=_aws.serialize(self.spec.total_key(counter_id)),
            ConsistentRead=consistent,
        )
        return self._value(counter_id, _aws.deserialize(resp["Item"]) if resp.get("Item") else None)

    def get_many(self, counter_ids: Iterable[str]) -> dict[str, CounterValue]:
        """Aggregated totals of many counters (BatchGetItem, chunks of 100)."""
        ids = list(dict.fromkeys(counter_ids))
        items = _aws.batch_get(self.client, self.table_name, [self.spec.total_key(i) for i in ids], retries=self.batch_retries)
        by_id = {item.get(COUNTER_ID): item for item in items}
        return {i: self._value(i, by_id.get(i)) for i in ids}

    def _value(self, counter_id: str, item: Mapping[str, Any] | None) -> CounterValue:
        if item is None:
            return CounterValue(counter_id, 0, None)
        return CounterValue(counter_id, int(item.get(COUNT, 0)), _parse_time(item.get(AGGREGATED_AT)))

    def _sum_shards(self, counter_id: str) -> int:
        keys = [self.spec.shard_key(counter_id, n) for n in range(self.spec.shards)]
        items = _aws.batch_get(self.client, self.table_name, keys, consistent=True, retries=self.batch_retries)
        return sum(int(item.get(COUNT, 0)) for item in items)

    # Aggregation ----------------------------------------------------------------------------------------------------
    def recompute(self, counter_id: str) -> CounterValue:
        """Recompute the total from all shards and store it (what the aggregator does).

        Idempotent: the total is summed from the shards, never incremented by deltas, so a
        redelivered stream record cannot double count. The time is taken *before* reading, and
        the total is written only if no later read has been stored
        (``aggregated_at`` never moves backwards), so concurrent aggregators keep the freshest sum.
        """
        started = self._clock()
        total = self._sum_shards(counter_id)
        s = self.spec
        stamp = _format_time(started)
        try:
            _aws.call(
                self.client, "update_item", TableName=self.table_name, Key=_aws.serialize(s.total_key(counter_id)),
                UpdateExpression="SET #c = :c, #a = :a, #t = :t, #f = :f, #i = :i, #n = :n",
                ConditionExpression="attribute_not_exists(#a) OR #a <= :a",
                ExpressionAttributeNames={
                    "#c": COUNT, "#a": AGGREGATED_AT, "#t": s.entity_attribute, "#f": FAMILY, "#i": COUNTER_ID, "#n": SHARDS,
                },
                ExpressionAttributeValues=_aws.serialize(
                    {":c": total, ":a": stamp, ":t": TOTAL_TYPE, ":f": s.family, ":i": counter_id, ":n": s.shards}
                ),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ConditionFailedError as exc:  # a fresher sum is already stored: keep it
            newer = getattr(exc, "old_item", None)
            return self._value(counter_id, newer)
        return CounterValue(counter_id, total, started)


def _format_time(dt: datetime) -> str:
    """Fixed-width ISO-8601 UTC with microseconds: sorts as text in time order."""
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


__all__ = [
    "MAX_SHARDS",
    "PARTITION_WCU",
    "CounterClient",
    "CounterSpec",
    "CounterValue",
    "Increment",
    "ShardSizing",
    "derive_shards",
]
