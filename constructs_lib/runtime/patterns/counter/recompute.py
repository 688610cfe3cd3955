"""The recompute layout's writes: transactional idempotent increments and totals recomputed from
every shard (tables without a stream; docs/adr/0012-write-sharded-counters.md, ADR 0035).

Imported by :class:`~.client.CounterClient` when a recomputed family needs it, and shipped only
with functions bound to one (a stream family's functions leave it out of their asset).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from ... import _aws, tokens
from ...exceptions import (
    ConditionFailedError,
    DynamoDBError,
    IdempotencyKeyReusedError,
    IdempotencyTokenConflictError,
    KeyValueError,
    TransactionCanceledError,
)
from .spec import (
    AGGREGATED_AT,
    BY,
    COUNT,
    COUNTER_ID,
    DEDUP_TYPE,
    FAMILY,
    IDEMPOTENCY_KEY,
    SHARD,
    SHARD_TYPE,
    SHARDS,
    TOTAL_TYPE,
    format_time,
)

#: The calling ``CounterClient`` (typed loosely: the client imports this module, not the reverse).
Client = Any


def increment(self: Client, counter_id: str, shard: int, by: int, idempotency_key: str | None) -> bool:
    """A recompute-layout increment: one UpdateItem ``ADD`` of a ``SHARD`` item, or with a key a
    transaction that also writes its dedup marker. True when an earlier call counted the key."""
    key = self.spec.shard_key(counter_id, shard, self.region)
    update = {
        "UpdateExpression": "ADD #c :by SET #t = :t",
        "ExpressionAttributeNames": {"#c": COUNT, "#t": self.spec.entity_attribute},
        "ExpressionAttributeValues": {":by": {"N": str(by)}, ":t": {"S": SHARD_TYPE}},
    }
    if idempotency_key is None:
        self._retry_conflicts(lambda: _aws.call(self.client, "update_item", hooks=self.hooks,
                                                TableName=self.table_name, Key=_aws.serialize(key), **update))
        return False
    return transactional_increment(self, counter_id, shard, by, idempotency_key, key, update)


def transactional_increment(
    self: Client, counter_id: str, shard: int, by: int, idempotency_key: str, key: dict[str, str],
    update: dict[str, Any],
) -> bool:
    """The recompute layout's idempotent increment: a dedup marker and the shard's ADD in one
    transaction (ADR 0012, 0035). True when an earlier call had counted the key (a duplicate)."""
    s = self.spec
    ttl_seconds, ttl_attribute = s.idempotency_ttl_seconds, s.ttl_attribute
    if ttl_seconds is None or ttl_attribute is None:  # `not s.idempotent`: CounterSpec sets both or neither
        raise KeyValueError(
            f"counter family {s.family!r} was synthesized without idempotent increments; "
            "pass idempotency_window=... to ShardedCounter to use idempotency_key"
        )
    marker_key = s.dedup_key(counter_id, idempotency_key)
    expires = int(self._clock().timestamp()) + ttl_seconds
    marker = {
        **marker_key, s.entity_attribute: DEDUP_TYPE, FAMILY: s.family, COUNTER_ID: counter_id,
        IDEMPOTENCY_KEY: idempotency_key, BY: by, SHARD: shard, ttl_attribute: expires,
    }
    items = [
        {"Put": {
            "TableName": self.table_name, "Item": _aws.serialize(marker),
            "ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": s.pk_attribute},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }},
        {"Update": {"TableName": self.table_name, "Key": _aws.serialize(key), **update}},
    ]
    token = first_token = _token(self, items)
    attempt, fresh_token_left = 0, True
    while True:  # up to batch_retries retries of conflicts, plus at most one with a fresh token
        try:
            _aws.call(self.client, "transact_write_items", hooks=self.hooks, TransactItems=items, ClientRequestToken=token)
            return False
        except TransactionCanceledError as exc:
            codes = [r.get("Code") for r in exc.reasons]
            if codes and codes[0] == "ConditionalCheckFailed":  # the marker is there: counted by an earlier call
                old = exc.reasons[0].get("Item")
                stored = _aws.deserialize(old) if old else self._read_marker(marker_key)
                _check_same_increment(stored, counter_id, by, idempotency_key)
                return True
            if not set(codes) <= {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "None", None}:
                raise
            last: DynamoDBError = exc
        except DynamoDBError as exc:
            if exc.code == "IdempotentParameterMismatchException":
                # DynamoDB holds this token for another request (this call's attempts all send the
                # same items): only this table's marker can say the key was counted.
                stored = self._read_marker(marker_key)
                if stored is not None:
                    _check_same_increment(stored, counter_id, by, idempotency_key)
                    return True
                if not fresh_token_left:
                    raise IdempotencyTokenConflictError(
                        f"increment of counter {counter_id!r} on table {self.table_name!r} with idempotency_key "
                        f"{idempotency_key!r}: DynamoDB took ClientRequestTokens {first_token!r} and {token!r} for "
                        "other requests, and the key is not counted on this table; a token must name one request "
                        "only — nothing was added", code=exc.code, operation=exc.operation,
                    ) from exc
                # Not counted here: the token collided with another request. The marker's condition
                # still guards against double counting, so retry at once with a fresh token.
                token, fresh_token_left = _token(self, items), False
                continue
            if exc.code != "TransactionInProgressException":
                raise
            last = exc
        if attempt == self.batch_retries:
            raise last
        _aws.sleep(_aws.backoff(attempt))
        attempt += 1

def _token(self: Client, items: list[dict[str, Any]]) -> str:
    """The ClientRequestToken of one call: the table's identity, the transaction's items and a
    random nonce drawn per call (ADR 0035)."""
    request = {"items": items, "call": secrets.token_hex(16)}
    return tokens.request_token("counter-increment", tokens.table_identity(self.client, self.table_name), request)


def _check_same_increment(marker: Mapping[str, Any] | None, counter_id: str, by: int, key: str) -> None:
    if marker is None:  # refused by a marker that has expired since: that call counted once
        return
    if marker.get(COUNTER_ID) != counter_id or int(marker.get(BY, 0)) != by:
        raise IdempotencyKeyReusedError(
            f"idempotency_key {key!r} was already used to add {marker.get(BY)} to counter "
            f"{marker.get(COUNTER_ID)!r}; it cannot also add {by} to {counter_id!r} — use a new key per increment"
        )


def recompute(self: Client, counter_id: str) -> Any:
    """Recompute the total from all shards and store it (the aggregator of a family without a
    stream; ``aggregation="recompute"``; :meth:`CounterClient.recompute`).

    Idempotent: the total is summed from the shards, never incremented by deltas, so a
    redelivered stream record cannot double count. The time is taken *before* reading, and
    the total is written only if no later read has been stored
    (``aggregated_at`` never moves backwards), so concurrent aggregators keep the freshest sum.
    """
    s = self.spec
    started = self._clock()
    total = self._exact(counter_id)
    stamp = format_time(started)
    try:
        _aws.call(
            self.client, "update_item", hooks=self.hooks, TableName=self.table_name,
            Key=_aws.serialize(s.total_key(counter_id, self.region)),
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
        return self._value(counter_id, [newer] if newer else [])
    return self._value(counter_id, [{COUNT: total, AGGREGATED_AT: stamp}])
