"""The :class:`CounterClient`: increment and read the counters of one family.

An aggregator keeps a total item per counter: from the stream's changes (the stream layout,
:mod:`.aggregation`), or recomputed from every shard (:meth:`CounterClient.recompute`).
"""

from __future__ import annotations

import hashlib
import os
import random
import secrets
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Unpack

from ... import _aws, contract
from ..._records import frozen_record
from ...environment import ENV_COUNTER_PREFIX, ENV_REGION
from ...exceptions import (
    ConditionFailedError,
    DynamoDBError,
    IdempotencyKeyReusedError,
    KeyValueError,
    SettingsError,
)
from .spec import (
    AGGREGATED_AT,
    AMOUNT,
    BY,
    COUNT,
    FORMAT_ATTR,
    INCREMENT_TYPE,
    MAX_BY,
    ORIGIN,
    SHARD_SK,
    SHARD_TYPE,
    TOTAL_SK,
    VERSION_ATTR,
    CounterSpec,
    applied_base,
    parse_time,
)

if TYPE_CHECKING:
    from botocore.client import BaseClient


# Values returned ----------------------------------------------------------------------------------------------
@frozen_record
class CounterValue:
    """A counter's value.

    ``aggregated_at`` is when the aggregator read the shards (None if never aggregated or
    for an exact read); ``exact`` says the value was summed from every shard just now.
    """

    counter_id: str
    total: int
    aggregated_at: datetime | None
    exact: bool = False

    def __init__(self, counter_id: str, total: int, aggregated_at: datetime | None, exact: bool = False) -> None:
        self.__dict__.update(counter_id=counter_id, total=total, aggregated_at=aggregated_at, exact=exact)


@frozen_record
class Increment:
    """What :meth:`CounterClient.increment` did.

    ``duplicate`` is True when an earlier call had already counted the idempotency key on
    this table (its dedup marker is there); the increment is counted once either way.
    """

    counter_id: str
    shard: int
    by: int
    duplicate: bool = False

    def __init__(self, counter_id: str, shard: int, by: int, duplicate: bool = False) -> None:
        self.__dict__.update(counter_id=counter_id, shard=shard, by=by, duplicate=duplicate)


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
    region
        The region this client writes in, required when the family is on a replicated table
        (``spec.regions``): increments go to this region's shards, the aggregated total read and
        written is this region's. ``from_environment`` takes it from ``AWS_REGION``. Default None.
    """

    def __init__(
        self,
        spec: CounterSpec,
        table_name: str,
        *,
        client: BaseClient | None = None,
        batch_retries: int = 8,
        rng: random.Random | None = None,
        clock: Callable[[], datetime] | None = None,
        region: str | None = None,
        **connection: Unpack[_aws.ConnectionOptions],
    ) -> None:
        if not isinstance(spec, CounterSpec):
            raise TypeError(f"spec {spec!r} must be a CounterSpec")
        if spec.replicated and region not in spec.regions:
            raise SettingsError(
                f"counter family {spec.family!r} is on a table replicated to {', '.join(spec.regions)}: pass region= "
                f"(one of them; {ENV_REGION} inside Lambda), got {region!r}"
            )
        if not spec.replicated and region is not None:
            region = None  # a single-region table: every region writes the same items
        #: The writing region on a replicated table, else None.
        self.region = region
        self.spec = spec
        self.table_name = table_name
        self.client = _aws.bind(client, {"table_name": table_name}, what="CounterClient", **connection)
        self.batch_retries = batch_retries
        self._rng = rng or random.Random()
        self._clock = clock or (lambda: datetime.now(UTC))
        #: The hooks this client's calls pass through at the AWS-call seam (see ``_aws.CallHook``).
        self.hooks: tuple[_aws.CallHook, ...] = ()

    @classmethod
    def from_environment(cls, family: str, *, environ: Mapping[str, str] | None = None, **kwargs: Any) -> CounterClient:
        """The client inside a function bound to the counter (``ShardedCounter.bind`` or the
        aggregator): spec from ``CONSTRUCTS_LIB_COUNTER_<FAMILY>``, table from
        ``CONSTRUCTS_LIB_COUNTER_<FAMILY>_TABLE``."""
        env = os.environ if environ is None else environ
        contract.verify(environ=env)  # on an imported table: the bundled model must be the deployed one
        var = ENV_COUNTER_PREFIX + str(family).upper()
        spec = CounterSpec.from_json(_aws.environment(
            env, var, f"counter family {family!r} is not bound to this function "
            "(use ShardedCounter.bind(function) or TableFunction(counters=[...]))",
        ))
        table = _aws.environment(env, var + "_TABLE", "it should hold the counter's table name")
        if spec.replicated:
            kwargs.setdefault("region", env.get(ENV_REGION))
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
        """Add ``by`` to the counter with one write on one shard.

        Without ``idempotency_key``: one UpdateItem ``ADD`` on a random shard (1 WCU). With it,
        the increment is counted exactly once however often the caller retries: on a family
        aggregated from the stream, one conditional PutItem of an item keyed by the idempotency
        key (1 WCU below 1 KB; ADR 0064); on a recomputed family, a transaction that writes a
        dedup marker and adds to the shard (ADR 0012). Another call with the same key reports
        ``duplicate=True``. On a replicated table the key's condition is evaluated against this
        region's replica only: a retry in another region is deduplicated only once the first
        write has replicated there (ADR 0055).

        Raises
        ------
        KeyValueError
            Bad counter id, ``by`` not an int (or out of ±10^18), empty key.
        IdempotencyKeyReusedError
            The key was already used for a different ``by`` (or counter) — a caller bug.
        IdempotencyTokenConflictError
            (recomputed family) DynamoDB twice took the call's token for another request's,
            and the key is not counted on this table: nothing was added (see ADR 0035).
        DynamoDBError
            The write failed after the client's retries (throttling retries are built in).
        """
        if isinstance(by, bool) or not isinstance(by, int) or not -MAX_BY < by < MAX_BY:
            raise KeyValueError(f"increment by {by!r} must be an int between -10^18 and 10^18")
        shard = self.shard_for(counter_id, idempotency_key)
        if not self.spec.deltas:
            from .recompute import increment  # the recompute layout's code: see recompute()

            return Increment(counter_id, shard, by, duplicate=increment(self, counter_id, shard, by, idempotency_key))
        if idempotency_key is not None:
            return self._keyed_increment(counter_id, shard, by, idempotency_key)
        # The hot path: ADD the amount, count the shard's writes (v), name this write's amount (b:
        # the aggregator adds it from the record's new image) and keep the entity type (what stream
        # filters and the model's readers key on). Family, id and shard are in the key.
        key = self.spec.shard_key(counter_id, shard, self.region)
        update = {
            "UpdateExpression": "ADD #c :by, #v :one SET #b = :by, #t = :t",
            "ExpressionAttributeNames": {"#c": COUNT, "#v": VERSION_ATTR, "#b": AMOUNT, "#t": self.spec.entity_attribute},
            "ExpressionAttributeValues": {":by": {"N": str(by)}, ":one": {"N": "1"}, ":t": {"S": SHARD_TYPE}},
        }
        self._retry_conflicts(lambda: _aws.call(self.client, "update_item", hooks=self.hooks,
                                                TableName=self.table_name, Key=_aws.serialize(key), **update))
        return Increment(counter_id, shard, by)

    def _keyed_increment(self, counter_id: str, shard: int, by: int, idempotency_key: str) -> Increment:
        """One conditional PutItem of the key's increment item: created means counted (the
        aggregator adds it from the stream), refused means an earlier call counted it."""
        s = self.spec
        ttl_seconds, ttl_attribute = s.idempotency_ttl_seconds, s.ttl_attribute
        if ttl_seconds is None or ttl_attribute is None:
            raise KeyValueError(
                f"counter family {s.family!r} was synthesized without idempotent increments; "
                "pass idempotency_window=... to ShardedCounter to use idempotency_key"
            )
        item_key = s.increment_key(counter_id, shard, idempotency_key)
        nonce = secrets.token_hex(6)  # tells this call's own retried attempt from an earlier call
        item: dict[str, Any] = {
            **item_key, s.entity_attribute: INCREMENT_TYPE, BY: by, _NONCE: nonce,
            ttl_attribute: int(self._clock().timestamp()) + ttl_seconds,
        }
        if s.replicated:
            item[ORIGIN] = self.region
        try:
            self._retry_conflicts(lambda: _aws.call(
                self.client, "put_item", hooks=self.hooks, TableName=self.table_name, Item=_aws.serialize(item),
                ConditionExpression="attribute_not_exists(#pk)", ExpressionAttributeNames={"#pk": s.pk_attribute},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ))
        except ConditionFailedError as exc:
            stored = getattr(exc, "old_item", None)  # the refusing item (None: it expired since)
            if stored is not None and stored.get(_NONCE) == nonce:
                return Increment(counter_id, shard, by)  # this call's own earlier attempt wrote it
            self._check_same_amount(stored, counter_id, by, idempotency_key)
            return Increment(counter_id, shard, by, duplicate=True)
        return Increment(counter_id, shard, by)

    def _read_marker(self, marker_key: dict[str, str]) -> dict[str, Any] | None:
        resp = _aws.call(
            self.client, "get_item", hooks=self.hooks, TableName=self.table_name, Key=_aws.serialize(marker_key),
            ConsistentRead=True,
        )
        return _aws.deserialize(resp["Item"]) if resp.get("Item") else None

    def _check_same_amount(self, stored: Mapping[str, Any] | None, counter_id: str, by: int, key: str) -> None:
        """An increment item refused the key: it must hold the same amount (the key is the counter's)."""
        if stored is None:  # refused by an item that has expired since: that call counted once
            return
        if int(stored.get(BY, 0)) != by:
            raise IdempotencyKeyReusedError(
                f"idempotency_key {key!r} was already used to add {stored.get(BY)} to counter {counter_id!r}; "
                f"it cannot also add {by} — use a new key per increment"
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
        0 with ``aggregated_at=None`` if never aggregated); on a replicated family aggregated
        from the stream, one BatchGetItem of every region's total, summed (each region's
        aggregator keeps the increments written in its region). ``exact=True`` sums every
        shard with strongly consistent BatchGetItem calls of ≤ 100 keys (⌈shards/100⌉ calls);
        on a family aggregated from the stream, plus what its totals hold besides the shards
        (the idempotent increments the aggregator has applied, and the folded recompute-layout
        shards), so an idempotent increment shows once the aggregator has applied it.
        """
        if exact:
            return CounterValue(counter_id, self._exact(counter_id), None, exact=True)
        if self._per_region_totals:
            return self.get_many([counter_id], consistent=consistent)[counter_id]
        resp = _aws.call(
            self.client, "get_item", hooks=self.hooks, TableName=self.table_name,
            Key=_aws.serialize(self.spec.total_key(counter_id, self.region)),
            ConsistentRead=consistent,
        )
        return self._value(counter_id, [_aws.deserialize(resp["Item"])] if resp.get("Item") else [])

    def get_many(self, counter_ids: Iterable[str], *, consistent: bool = False) -> dict[str, CounterValue]:
        """Aggregated totals of many counters (BatchGetItem, chunks of 100)."""
        ids = list(dict.fromkeys(counter_ids))
        owner: dict[tuple[Any, Any], str] = {}
        for counter_id in ids:
            for key in self._total_keys(counter_id):
                owner[(key[self.spec.pk_attribute], key[self.spec.sk_attribute])] = counter_id
        keys = [{self.spec.pk_attribute: pk, self.spec.sk_attribute: sk} for pk, sk in owner]
        items = _aws.batch_get(self.client, self.table_name, keys, consistent=consistent, retries=self.batch_retries,
                                hooks=self.hooks)
        found: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
        for item in items:
            found[owner[(item.get(self.spec.pk_attribute), item.get(self.spec.sk_attribute))]].append(item)
        return {i: self._value(i, found[i]) for i in ids}

    @property
    def _per_region_totals(self) -> bool:
        return self.spec.deltas and self.spec.replicated

    def _total_keys(self, counter_id: str) -> list[dict[str, str]]:
        if self._per_region_totals:
            return [self.spec.total_key(counter_id, r) for r in self.spec.regions]
        return [self.spec.total_key(counter_id, self.region)]

    def _value(self, counter_id: str, items: list[dict[str, Any]]) -> CounterValue:
        if not items:
            return CounterValue(counter_id, 0, None)
        stamps = [parse_time(item.get(AGGREGATED_AT)) for item in items]
        known = [t for t in stamps if t is not None]
        return CounterValue(counter_id, sum(int(item.get(COUNT, 0)) for item in items), min(known) if known else None)

    def _exact(self, counter_id: str) -> int:
        sk, totals = self.spec.sk_attribute, self._total_keys(counter_id) if self.spec.deltas else []
        items = self._read_all(self.spec.all_shard_keys(counter_id) + totals)
        total_sks = {key[sk] for key in totals}
        value = sum(applied_base(i) if i[sk] in total_sks else int(i.get(COUNT, 0)) for i in items)
        unfolded = {i[sk] for i in items if i[sk] in total_sks and FORMAT_ATTR not in i}
        if unfolded:  # a total not folded into the stream layout yet: its SHARD items count
            legacy = self.spec.all_legacy_shard_keys(counter_id)
            value += sum(int(i.get(COUNT, 0)) for i in self._read_all(
                [k for k in legacy if k[sk].replace(SHARD_SK, TOTAL_SK, 1) in unfolded]))
        return value

    def _read_all(self, keys: list[dict[str, str]]) -> list[dict[str, Any]]:
        return _aws.batch_get(self.client, self.table_name, keys, consistent=True, retries=self.batch_retries,
                              hooks=self.hooks)

    # Aggregation of a recomputed family --------------------------------------------------------------------------------
    def recompute(self, counter_id: str) -> CounterValue:
        """Recompute the total from all shards and store it (the aggregator of a family without a
        stream; ``aggregation="recompute"``): :func:`.recompute.recompute`.

        Raises
        ------
        SettingsError
            The family is aggregated from the stream: its totals are not sums of its shards.
        """
        if self.spec.deltas:
            raise SettingsError(
                f"counter family {self.spec.family!r} is aggregated from the table's stream: its totals cannot be "
                "recomputed from the shards; read get(..., exact=True) for the exact value"
            )
        from .recompute import recompute  # the recompute layout's code ships where a function needs it

        value: CounterValue = recompute(self, counter_id)
        return value


#: An increment item's per-call nonce: a retried attempt of the same call finds its own.
_NONCE = "n"
