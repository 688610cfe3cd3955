"""``TableClient``: entity operations on one single table, driven by the model.

Reading top to bottom: construction (model + table name + injectable boto3 client), keys,
single-item writes/reads, queries by access-pattern name (with cursor pagination), batch
operations, transactions.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Unpack

from . import _aws, buckets, contract, keys, requests, tokens
from .contract import load_bundled_model
from .cursor_context import client_parts, query_parts
from .exceptions import (
    BatchIncompleteError,
    ConditionFailedError,
    DynamoDBError,
    IndexNotReadyError,
    InvalidConditionError,
    ItemValidationError,
    KeyValueError,
    SettingsError,
    TransactionCanceledError,
    TransactionConditionNotMetError,
    UnknownAccessPatternError,
    UnknownFieldError,
    UpdateRejectedError,
    VersionConflictError,
)
from .items import ItemCodec, require_fields
from .limits import BATCH_WRITE_LIMIT, TRANSACTION_LIMIT
from .pages import (
    QUERY_OPTIONS,
    CursorCodec,
    Page,
    derive_cursor_key,
    follow_cursors,
)

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ..model import Model, ResolvedPattern
    from ..model import ResolvedEntity as Entity
    from ..model.scope import AccessScope
    from .conditions import Condition, Name
    from .scope import ScopeGuard
    from .stats import TrafficRecorder
    from .tenant import TenantTableClient

#: Environment variables a generated Lambda function receives.
ENV_TABLE_NAME = "TABLE_NAME"
#: Optional secret that signs pagination cursors (see ``TableClient(cursor_key=...)``).
ENV_CURSOR_KEY = "CONSTRUCTS_LIB_CURSOR_KEY"
#: Comma-separated names of the model's indexes the table does not have yet (a GSI rollout).
ENV_UNAVAILABLE_INDEXES = "CONSTRUCTS_LIB_UNAVAILABLE_INDEXES"

#: The retry mode of the boto3 client a ``TableClient`` makes when given none (see the
#: ``retry_mode`` parameter).
DEFAULT_RETRY_MODE = "standard"

#: How many times a plain put of a versioned entity re-reads the stored version (through its
#: failed condition) before giving up under contention.
CONTINUE_VERSION_ATTEMPTS = 10

#: A filtered query reads ``limit`` items at first, then twice as many per request (DynamoDB
#: applies ``Limit`` before the filter), up to this many — or ``limit``, if larger.
FILTERED_READ_MAX = 1000


class TableClient:
    """Entity operations on one table, with keys built from the model.

    Parameters
    ----------
    model
        The data model (the same one the table was synthesized from).
    table_name
        The physical table name.
    client
        A boto3 DynamoDB client. Default: a new one with ``retry_mode``/``max_attempts``.
    retry_mode
        botocore retry mode for the default client: ``"standard"`` (default: capped, jittered
        retries of throttles and transient errors), ``"adaptive"`` (also client-side rate
        limiting after a throttle; costs CPU on every call) or ``"legacy"``.
    max_attempts
        botocore max attempts for the default client. Default 10.
    batch_retries
        How many times batch calls retry unprocessed keys/items (with jittered exponential
        backoff) before raising :class:`BatchIncompleteError`. Default 8.
    traffic
        A :class:`~constructs_lib.runtime.stats.TrafficRecorder` sampling this client's
        requests (see :meth:`record_traffic`). Default None: recording off.
    cursor_key
        Secret (≥ 16 bytes, or text) signing pagination cursors, so a cursor handed to a caller
        cannot be edited or forged. Default: ``$CONSTRUCTS_LIB_CURSOR_KEY`` if set, else a key
        derived from the table name and the model, which refuses corrupted cursors but not a
        forgery by someone who knows both. Clients serving the same cursors must share the key;
        a cursor still binds its table, model fingerprint and query (ADR 0037).
    scope
        An :class:`~constructs_lib.model.AccessScope`: the patterns, writes and batch reads this
        client may make; anything else raises :class:`OutOfScopeError` before any call. Default
        None (no limit); :meth:`from_environment` reads ``$CONSTRUCTS_LIB_ACCESS_SCOPE``.
    codec
        Builds the stored items and keys. Default: one for ``model``; a tenant-scoped client
        passes one that refuses keys of other tenants (see :meth:`with_codec`).
    """

    #: The recorder sampling this client's requests, or None (recording off, the default).
    traffic: TrafficRecorder | None = None

    def __init__(
        self,
        model: Model,
        table_name: str,
        *,
        client: BaseClient | None = None,
        batch_retries: int = 8,
        traffic: TrafficRecorder | None = None,
        cursor_key: bytes | str | None = None,
        scope: AccessScope | None = None,
        codec: ItemCodec | None = None,
        **connection: Unpack[_aws.ConnectionOptions],
    ) -> None:
        connection.setdefault("retry_mode", DEFAULT_RETRY_MODE)
        self.client = _aws.bind(client, {"table_name": table_name}, what="TableClient", **connection)
        secret = cursor_key if cursor_key is not None else os.environ.get(ENV_CURSOR_KEY) or None
        if isinstance(secret, str):
            secret = secret.encode("utf-8")
        if secret is not None and (not isinstance(secret, bytes) or len(secret) < 16):
            raise SettingsError("cursor_key must be a secret of at least 16 bytes (bytes or text)")
        self._cursor_secret: bytes | None = secret
        self._cursors: CursorCodec | None = None
        self.model = model
        self.table_name = table_name
        self.codec = codec if codec is not None else ItemCodec(model)
        self.batch_retries = batch_retries
        #: Indexes of the model the table does not have yet (``$CONSTRUCTS_LIB_UNAVAILABLE_INDEXES``,
        #: set on functions while a rollout creates GSIs one deployment at a time): patterns on
        #: them raise :class:`IndexNotReadyError`.
        self.unavailable_indexes: frozenset[str] = frozenset(
            n for n in os.environ.get(ENV_UNAVAILABLE_INDEXES, "").split(",") if n
        )
        self.guard: ScopeGuard | None = None
        if scope is not None:
            from .scope import ScopeGuard

            self.guard = ScopeGuard(model, scope)
        #: The hooks this client's calls pass through at the AWS-call seam (the traffic recorder's).
        self.hooks: tuple[_aws.CallHook, ...] = ()
        self.traffic = None
        if traffic is not None:
            self.record_traffic(recorder=traffic)

    @classmethod
    def from_environment(cls, *, table_env: str = ENV_TABLE_NAME, **kwargs: Any) -> TableClient:
        """Build the client inside a generated Lambda: model from the bundle, table from env.

        On a table imported from published parameters the entities and indexes the function uses
        are checked against the table's current published contract first
        (:class:`~.exceptions.ContractBreakError`, :class:`~.exceptions.ContractUnavailableError`;
        see :mod:`.contract`)."""
        name = _aws.environment(os.environ, table_env, "it should hold the table name")
        model = load_bundled_model()
        if "scope" not in kwargs:
            from .scope import scope_from_environment

            kwargs["scope"] = scope_from_environment(model)
        contract.verify(model, scope=kwargs["scope"])
        return cls(model, name, **kwargs)

    @property
    def cursors(self) -> CursorCodec:
        """The codec signing and checking this client's pagination cursors."""
        if self._cursors is None:
            self._cursors = CursorCodec(
                self._cursor_secret or derive_cursor_key(self.table_name, self.model.to_json(indent=None)),
                bound=client_parts(self.table_name, self.model, self.client),
            )
        return self._cursors

    def record_traffic(
        self, sample_rate: float = 0.01, *, seed: int | None = None, recorder: TrafficRecorder | None = None
    ) -> TrafficRecorder:
        """Start sampling this client's requests; returns the recorder (``.report()`` on it).

        Parameters
        ----------
        sample_rate
            Probability that a request is recorded, in (0, 1]. Default 0.01. Ignored with ``recorder``.
        seed
            Seed of the sampling generator. Default None. Ignored with ``recorder``.
        recorder
            An existing recorder (e.g. shared by several clients of this table). Default: a new one.

        Notes
        -----
        Tenant clients made by :meth:`for_tenant` after this call record into the same recorder.
        """
        from .stats import TrafficRecorder

        recorder = recorder if recorder is not None else TrafficRecorder(sample_rate, seed=seed)
        recorder.bind(self.model, self.table_name)
        self.client = getattr(self.client, "unwrapped", self.client)  # a RecordingClient would sample twice
        self.hooks = (recorder.hook,)
        self.traffic = recorder
        return recorder

    def stop_recording(self) -> TrafficRecorder | None:
        """Stop sampling (the recorder's hook leaves the AWS-call seam); returns the recorder, or None."""
        recorder, self.traffic, self.hooks = self.traffic, None, ()
        return recorder

    def with_codec(self, codec: ItemCodec) -> TableClient:
        """A client of the same table, boto3 client, batch retries, cursor key, traffic recorder
        and access scope whose keys and items are built by ``codec``."""
        scoped = TableClient(
            self.model, self.table_name, client=self.client, batch_retries=self.batch_retries,
            cursor_key=self._cursor_secret, codec=codec,
        )
        scoped.traffic, scoped.hooks = self.traffic, self.hooks
        scoped.guard = self.guard
        return scoped

    def for_tenant(self, tenant: str) -> TenantTableClient:
        """A client confined to ``tenant``: every key it builds must carry it, and queries on
        GSIs that mix tenants are refused — before any call reaches AWS."""
        from .tenant import TenantTableClient

        if self.guard is not None:
            self.guard.for_tenant(tenant)
        return TenantTableClient(self, tenant)

    def entity(self, name: str) -> Entity:
        if name not in self.model.entities:
            raise KeyValueError(
                f"entity {name!r} is not in model {self.model.name!r}; entities: {', '.join(self.model.entities)}"
            )
        return self.model.entities[name]

    # Keys ------------------------------------------------------------------------------------
    def keys(self, entity: str, **values: Any) -> dict[str, str]:
        """The table key (``{"PK": ..., "SK": ...}``) of an item of ``entity``."""
        return self.codec.table_key(self.entity(entity), values)

    def all_keys(self, entity: str, **values: Any) -> dict[str, str]:
        """Every key attribute (table + indexes the item belongs to) an item with ``values`` gets."""
        ent = self.entity(entity)
        item = self.codec.build_item(ent, values)
        return {k: item[k] for k in self.codec.key_attributes if k in item}

    def parse_keys(self, item: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """Entity name and field values parsed back from a stored item's table key."""
        ent = self.codec.entity_of(item)
        if ent is None:
            raise KeyValueError(f"item has no known {self.model.entity_attribute!r}: {dict(item)!r:.80}")
        values = keys.parse(ent, ent.pk_template, item[self.model.pk_attribute])
        if ent.sk_template is not None:
            values.update(keys.parse(ent, ent.sk_template, item[self.model.sk_attribute]))
        return ent.name, values

    # Single-item operations -----------------------------------------------------------------------
    def put(
        self,
        entity: str,
        item: Mapping[str, Any],
        *,
        create_only: bool = False,
        expected_version: int | None = None,
        expires_in: timedelta | None = None,
        expires_at: datetime | None = None,
        condition: Condition | None = None,
    ) -> dict[str, Any]:
        """Write a whole item; derived keys are computed. Returns the item as stored (decoded).

        ``create_only`` adds ``attribute_not_exists`` (raises :class:`ItemExistsError`);
        ``expected_version`` guards an overwrite (raises :class:`VersionConflictError`);
        ``expires_in``/``expires_at`` set the model's TTL attribute. ``condition``
        (``attr("status") == "PAID"``, see :mod:`.conditions`) must also hold on the stored
        item (ANDed with the others); when only it fails: :class:`ConditionNotMetError`
        carrying the stored item.
        """
        ent = self.entity(entity)
        if self.guard is not None:
            self.guard.write("put", ent.name, item)
        req = requests.put(
            self.codec, self.table_name, ent, item, create_only=create_only,
            expected_version=expected_version, expires_in=expires_in, expires_at=expires_at, condition=condition,
        )
        if req.kind == "continue_version":
            req = self._put_continuing(ent, req)
        else:
            self._write(req, "put_item")
        if req.item is not None:  # the item as built: what a decode of the stored item gives, without the decode
            return self.codec.decode(req.item)
        return self.codec.decode_wire(req.params["Item"])

    def _put_continuing(self, entity: Entity, req: requests.Request) -> requests.Request:
        """A plain put of a versioned entity: create at version 1, or overwrite the stored
        version ``n`` with ``n + 1`` — read from the failed condition (``ALL_OLD``), no extra
        call — retried while concurrent writers move it. Returns the request that succeeded."""
        for _ in range(CONTINUE_VERSION_ATTEMPTS):
            try:
                _aws.call(self.client, "put_item", hooks=self.hooks, **req.params, ReturnValuesOnConditionCheckFailure="ALL_OLD")
                return req
            except ConditionFailedError as exc:
                old = getattr(exc, "old_item", None)
                if req.user_condition_failed(old):
                    raise req.condition_error(exc, old, self.codec.decode) from exc
                req = requests.continue_version(self.codec, entity, req, old)
        raise VersionConflictError(
            f"Put {entity.name} {req.key!r}: the stored version changed on each of {CONTINUE_VERSION_ATTEMPTS} attempts "
            "(heavy concurrent writes); retry later, or put with expected_version=...",
            key=req.key, operation="PutItem",
        )

    def get(
        self, entity: str, *, consistent: bool = False, raw: bool = False, attributes: Sequence[str | Name] | None = None,
        **key_values: Any,
    ) -> dict[str, Any] | None:
        """Read one item by its table-key fields; None if absent. ``attributes`` reads only those
        (plus the entity attribute and the key, from which the key fields come back)."""
        ent = self.entity(entity)
        if self.guard is not None:
            self.guard.get(ent.name, key_values)
        return self._get(ent, key_values, consistent, raw, attributes)

    def _get(
        self, ent: Entity, key_values: Mapping[str, Any], consistent: bool, raw: bool,
        attributes: Sequence[str | Name] | None = None,
    ) -> dict[str, Any] | None:
        key = self.codec.key_values(ent, key_values, what="get key")
        resp = _aws.call(
            self.client, "get_item", hooks=self.hooks, TableName=self.table_name, Key=_aws.serialize(key),
            ConsistentRead=consistent, **requests.item_projection(self.model, [ent], attributes),
        )
        item = resp.get("Item")
        if not item:
            return None
        requests.check_own_item(self.model, ent.name, (item.get(self.model.entity_attribute) or {}).get("S"), key)
        return self.codec.decode_wire(item, raw=raw)

    def update(
        self,
        entity: str,
        key: Mapping[str, Any],
        *,
        set: Mapping[str, Any] | None = None,
        remove: Sequence[str] = (),
        add: Mapping[str, Any] | None = None,
        delete: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
        must_exist: bool = True,
        expires_in: timedelta | None = None,
        expires_at: datetime | None = None,
        condition: Condition | None = None,
    ) -> dict[str, Any]:
        """Partially update an item, recomputing derived index keys in the same UpdateItem.

        ``key`` holds exactly the table-key fields. ``set`` values of None remove the attribute;
        ``add`` adds to numbers and sets, ``delete`` removes elements from sets (neither on a
        declared field or a value an index key is built from). Returns the updated item (decoded).
        ``must_exist=False`` makes it an upsert: a missing item is created complete (entity,
        table-key fields, the index keys the update determines) — refused with
        :class:`ItemNotFoundError` when the entity's required attributes are not all set.
        Raises :class:`UpdateRejectedError` when a template input is set without the other
        inputs its key needs, :class:`ItemNotFoundError` if the item does not exist (unless
        ``must_exist=False``), :class:`VersionConflictError` on a stale ``expected_version``,
        :class:`ConditionNotMetError` (with the stored item) when only ``condition`` fails.
        """
        if self.guard is not None:
            self.guard.write("update", self.entity(entity).name, key)
        req = requests.update(
            self.codec, self.table_name, self.entity(entity), key, set=set, remove=remove, add=add, delete=delete,
            expected_version=expected_version, must_exist=must_exist, expires_in=expires_in, expires_at=expires_at,
            condition=condition,
        )
        resp = self._write(req, "update_item", ReturnValues="ALL_NEW")
        return self.codec.decode_wire(resp.get("Attributes", {}))

    def delete(
        self, entity: str, key: Mapping[str, Any], *, expected_version: int | None = None, must_exist: bool = False,
        condition: Condition | None = None,
    ) -> dict[str, Any] | None:
        """Delete an item; returns the deleted item (decoded) or None if there was none.
        ``condition`` must hold on the stored item (else :class:`ConditionNotMetError`)."""
        if self.guard is not None:
            self.guard.write("delete", self.entity(entity).name, key)
        req = requests.delete(
            self.codec, self.table_name, self.entity(entity), key, expected_version=expected_version,
            must_exist=must_exist, condition=condition,
        )
        resp = self._write(req, "delete_item", ReturnValues="ALL_OLD")
        old = resp.get("Attributes")
        return self.codec.decode_wire(old) if old else None

    def _write(self, req: requests.Request, operation: str, **extra: Any) -> dict[str, Any]:
        params = dict(req.params, **extra)
        if "ConditionExpression" in params:
            params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        try:
            return _aws.call(self.client, operation, hooks=self.hooks, **params)
        except ConditionFailedError as exc:
            raise req.condition_error(exc, getattr(exc, "old_item", None), self.codec.decode) from exc

    # Queries ----------------------------------------------------------------------------------------
    def pattern(self, name: str) -> ResolvedPattern:
        try:
            resolved = self.model.resolved_patterns[name]
        except KeyError:
            raise UnknownAccessPatternError(
                f"access pattern {name!r} is not declared in model {self.model.name!r}; declared: "
                f"{', '.join(repr(p) for p in self.model.resolved_patterns) or 'none'}"
            ) from None
        if resolved.index is not None and resolved.index.name in self.unavailable_indexes:
            raise IndexNotReadyError(
                f"access pattern {name!r} reads index {resolved.index.name!r}, which table {self.table_name!r} does "
                "not have yet (a later rollout step creates it; see `python -m constructs_lib diff`)"
            )
        return resolved

    def query(
        self,
        pattern: str,
        values: Mapping[str, Any] | None = None,
        /,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        descending: bool | None = None,
        consistent: bool = False,
        raw: bool = False,
        partition_at: Any = None,
        filter: Condition | None = None,  # noqa: A002 - reads as the option it is
        attributes: Sequence[str | Name] | None = None,
        **kw: Any,
    ) -> Page:
        """Run a declared access pattern; returns one :class:`Page` of at most ``limit`` items.

        Field values come as a mapping and/or keyword arguments: every partition-key field
        of the pattern, then its sort-key fields; the last sort-key field carries the
        condition (a ``(low, high)`` pair for ``between``). Pass the returned ``cursor`` back
        to get the next page.

        When the partition key buckets the range field (``SENSOR#{id}#{ts:month}`` with
        ``ts=(low, high)``), a range inside one bucket reads that partition; a range over
        several buckets needs ``partition_at`` (an instant: read the bucket holding it) —
        :meth:`query_all` reads them all in order. Otherwise ``KeyValueError`` names the buckets.

        ``filter`` (a condition, see :mod:`.conditions`) drops items after they are read: it
        does not reduce the read cost. A page still holds ``limit`` matching items (or the rest)
        and its cursor resumes right after the last one returned. ``attributes`` reads only
        those attributes (plus the entity attribute and the keys).
        """
        # Names the access pattern on the calls made for it, for observers of the AWS-call seam.
        token = _aws.ACCESS_PATTERN.set(pattern)
        try:
            return self._query(pattern, values, kw, limit, cursor, descending, consistent, raw, partition_at,
                               filter, attributes)
        finally:
            _aws.ACCESS_PATTERN.reset(token)

    def _query(
        self, pattern: str, values: Mapping[str, Any] | None, kw: Mapping[str, Any], limit: int | None,
        cursor: str | None, descending: bool | None, consistent: bool, raw: bool, partition_at: Any,
        filter: Condition | None = None, attributes: Sequence[str | Name] | None = None,  # noqa: A002
    ) -> Page:
        resolved = self.pattern(pattern)
        vals = {**(values or {}), **kw}
        if self.guard is not None:
            self.guard.pattern(resolved.name, vals)
        accepted = resolved.pk_fields + resolved.sk_fields
        unknown = [name for name in vals if name not in accepted]
        if unknown:
            raise UnknownFieldError(
                f"pattern {pattern!r} takes field(s) {list(accepted)!r} and options {sorted(QUERY_OPTIONS)!r}; "
                f"{sorted(map(str, unknown))!r} {'is' if len(unknown) == 1 else 'are'} neither"
            )
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise SettingsError(f"limit {limit!r} must be a positive int")
        partition_value = self._partition_of(resolved, vals, partition_at)
        if resolved.operation == "GetItem":
            entity = self.entity(resolved.entities[0])
            require_fields(entity, vals, resolved.pk_fields + resolved.sk_fields, what=f"pattern {pattern!r}")
            if cursor is not None:
                raise KeyValueError(f"pattern {pattern!r} reads one item (GetItem); it has no pages, so no cursor")
            if filter is not None:
                raise InvalidConditionError(f"pattern {pattern!r} reads one item (GetItem), which takes no filter")
            item = self._get(entity, vals, consistent, raw, attributes)
            return Page([item] if item else [], None)
        if consistent and resolved.index is not None and resolved.index.kind == "GSI":
            raise SettingsError(f"pattern {pattern!r} reads GSI {resolved.index.name!r}; GSIs do not support consistent reads")
        forward = not (resolved.descending if descending is None else descending)
        if resolved.shards:  # a write-sharded index: every shard read, merged in sort-key order
            from . import merged_reads  # loaded by functions that read a sharded index only

            return merged_reads.query(self, pattern, resolved, vals, partition_value, limit=limit, cursor=cursor,
                                      forward=forward, raw=raw, filter=filter, attributes=attributes)
        params = requests.query_params(
            self.codec, self.table_name, resolved, vals, partition_value, filter=filter, attributes=attributes,
        )
        params["ScanIndexForward"] = forward
        params["ConsistentRead"] = consistent
        query_id = query_parts(pattern, params)
        if cursor is not None:
            pk_attr = self._pk_attribute(resolved)
            params["ExclusiveStartKey"] = self.cursors.decode(
                cursor, query_id, partition=(pk_attr, params["ExpressionAttributeValues"][":v0"]),
            )
        items, last = self._read_pages(params, limit, raw, resolved)
        return Page(items, self.cursors.encode(last, query_id) if last else None)

    def _read_pages(
        self, params: dict[str, Any], limit: int | None, raw: bool, resolved: ResolvedPattern,
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """Query until ``limit`` items (or the end); returns them and the key to continue after
        the last one (None at the end).

        With a filter DynamoDB applies ``Limit`` before filtering, so each request reads more
        (see :data:`FILTERED_READ_MAX`); when a response holds more matches than still wanted,
        the page ends at the last item taken and the cursor is built from that item's key
        (:func:`requests.cursor_attributes`), so no unreturned match is skipped."""
        filtered = "FilterExpression" in params
        items: list[dict[str, Any]] = []
        decode = self.codec.decode_wire
        rounds = 0
        while True:
            if limit is not None:
                wanted = limit - len(items)
                params["Limit"] = min(wanted << min(rounds, 10), max(wanted, FILTERED_READ_MAX)) if filtered else wanted
            resp = _aws.call(self.client, "query", hooks=self.hooks, **params)
            found = requests.own_items(self.model, resolved, resp.get("Items", []))
            last = resp.get("LastEvaluatedKey")
            if limit is not None and len(found) > limit - len(items):
                found = found[: limit - len(items)]
                last = {a: found[-1][a] for a in requests.cursor_attributes(self.model, resolved)}
            items += [decode(i, raw=raw) for i in found]
            rounds += 1
            if not last or (limit is not None and len(items) >= limit):
                return items, last
            params["ExclusiveStartKey"] = last

    def query_all(self, pattern: str, values: Mapping[str, Any] | None = None, /, **kw: Any) -> Iterator[dict[str, Any]]:
        """Iterate over every item of a pattern, following cursors — and, for a range over
        several time-bucketed partitions, over every partition in key order."""
        return follow_cursors(self.query, pattern, values, partitions=self.range_partitions(pattern, values, **kw), **kw)

    def range_partitions(self, pattern: str, values: Mapping[str, Any] | None = None, /, **kw: Any) -> list[Any] | None:
        """For a ``between`` pattern whose partition key buckets the range field: one instant per
        partition the range touches, in key order (reversed when the pattern reads descending);
        None for every other pattern."""
        resolved = self.pattern(pattern)
        vals = {**(values or {}), **{k: v for k, v in kw.items() if k not in QUERY_OPTIONS}}
        if resolved.sk != "between" or not resolved.sk_fields:
            return None
        starts = buckets.range_partitions(self._pk_template(resolved), resolved.sk_fields[-1], vals.get(resolved.sk_fields[-1]))
        descending = resolved.descending if kw.get("descending") is None else kw["descending"]
        return starts[::-1] if starts and descending else starts

    def _partition_of(self, resolved: ResolvedPattern, vals: Mapping[str, Any], partition_at: Any) -> Any:
        """The value of the range field to build the partition key from (None: the field's own)."""
        if resolved.sk != "between" or not resolved.sk_fields:
            if partition_at is not None:
                raise KeyValueError(f"partition_at only applies to a between range on a time-bucketed partition key; "
                                    f"pattern {resolved.name!r} has none")
            return None
        field = resolved.sk_fields[-1]
        starts = buckets.range_partitions(self._pk_template(resolved), field, vals.get(field))
        if starts is None:
            if partition_at is not None:
                raise KeyValueError(f"partition_at: the partition key of pattern {resolved.name!r} does not "
                                    f"bucket {field!r}")
            return None
        if partition_at is not None:
            return partition_at
        if len(starts) > 1:
            template = self._pk_template(resolved)
            first, last = (keys.build(self.entity(resolved.entities[0]), template, {**vals, field: v})
                           for v in (starts[0], starts[-1]))
            raise KeyValueError(
                f"pattern {resolved.name!r}: {field} range {vals[field][0]!s} .. {vals[field][1]!s} spans "
                f"{len(starts)} partitions ({first} .. {last}) and a Query reads one partition; use query_all(), "
                "which reads each in order, or pass partition_at="
            )
        return starts[0]

    def _pk_attribute(self, resolved: ResolvedPattern) -> str:
        return resolved.pk_attribute

    def _pk_template(self, resolved: ResolvedPattern) -> Any:
        return resolved.pk_template

    # Batch operations ------------------------------------------------------------------------------
    def batch_get(
        self, requests_: Sequence[tuple[str, Mapping[str, Any]]], *, consistent: bool = False,
        attributes: Sequence[str | Name] | None = None,
    ) -> list[dict[str, Any] | None]:
        """Read many items by key, in chunks of 100, retrying unprocessed keys with backoff.

        Returns one entry per request, in order (None where the item does not exist).
        ``attributes`` reads only those (plus the entity attribute and the key) of every item.
        """
        keyed = [self.codec.key_values(self.entity(e), v, what="batch_get key") for e, v in requests_]
        if self.guard is not None:
            self.guard.batch_get(requests_)
        projection = {} if attributes is None else requests.item_projection(
            self.model, [self.entity(e) for e in dict.fromkeys(e for e, _ in requests_)], attributes)
        unique = list({tuple(sorted(k.items())): k for k in keyed}.values())
        key_attrs = sorted(keyed[0]) if keyed else []
        found: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
        for item in _aws.batch_get(self.client, self.table_name, unique, consistent=consistent, retries=self.batch_retries,
                                   hooks=self.hooks, projection=projection):
            found[tuple((a, item[a]) for a in key_attrs)] = self.codec.decode(item)
        out = [found.get(tuple(sorted(k.items()))) for k in keyed]
        for (name, _), item, key in zip(requests_, out, keyed, strict=True):
            if item is not None:
                requests.check_own_item(self.model, self.entity(name).name, item.get(self.model.entity_attribute), key)
        return out

    def batch_write(
        self,
        puts: Sequence[tuple[str, Mapping[str, Any]]] = (),
        deletes: Sequence[tuple[str, Mapping[str, Any]]] = (),
    ) -> int:
        """Put and delete many items in chunks of 25, retrying unprocessed items with backoff.

        Items get their derived keys like :meth:`put` (no conditions: BatchWriteItem has none).
        Returns the number of requests done; raises :class:`BatchIncompleteError` with the
        leftovers if some could not be written after every retry.
        """
        writes: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for what, pairs in (("puts", puts), ("deletes", deletes)):
            for pair in pairs:
                if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[1], Mapping)):
                    raise ItemValidationError(
                        f"batch_write {what} entry {pair!r:.80} must be an (entity name, attributes) pair"
                    )
        # Every item is built and checked before the first call: a batch is refused whole, or sent.
        if self.guard is not None:
            for kind, pairs in (("batch_put", puts), ("batch_delete", deletes)):
                for entity, values in pairs:
                    self.guard.write(kind, self.entity(entity).name, values)
        for entity, item in puts:
            ent = self.entity(entity)
            if ent.version_attribute:
                raise UpdateRejectedError(
                    f"batch_write: {ent.name} is versioned ({ent.version_attribute!r}), and BatchWriteItem cannot "
                    "check or continue a stored version (an overwrite would move it back to 1); use put(), "
                    "put(create_only=True) or a transaction with create_only/expected_version"
                )
            built = self.codec.build_item(ent, item)
            writes.append((self.codec.table_key(ent, built), {"PutRequest": {"Item": _aws.serialize(built)}}))
        for entity, key in deletes:
            k = self.codec.key_values(self.entity(entity), key, what="batch_write delete key")
            writes.append((k, {"DeleteRequest": {"Key": _aws.serialize(k)}}))
        seen: set[tuple[tuple[str, str], ...]] = set()
        for k, _ in writes:
            ident = tuple(sorted(k.items()))
            if ident in seen:
                raise ItemValidationError(
                    f"batch_write: key {k!r} appears more than once; a batch may touch each item once "
                    "(their order would be undefined)"
                )
            seen.add(ident)
        requests_ = [w for _, w in writes]
        done: list[dict[str, Any]] = []
        for start in range(0, len(requests_), BATCH_WRITE_LIMIT):
            later = requests_[start + BATCH_WRITE_LIMIT:]
            chunk = _aws.batch_write_chunk(
                self.client, self.table_name, requests_[start:start + BATCH_WRITE_LIMIT], retries=self.batch_retries,
                hooks=self.hooks,
            )
            done += chunk.written
            if chunk.error is not None:  # DynamoDB refused the whole call: nothing of it was written
                exc = chunk.error
                raise BatchIncompleteError(
                    f"batch_write: DynamoDB refused a chunk ({exc.code}: {exc}); {len(done)} of {len(requests_)} "
                    "request(s) were written (in .written), the rest were not (in .unprocessed)",
                    unprocessed=chunk.unprocessed + later, written=done, code=exc.code, operation="BatchWriteItem",
                ) from exc
            if chunk.unprocessed:
                raise BatchIncompleteError(
                    f"batch_write: {len(chunk.unprocessed)} request(s) still unprocessed after {self.batch_retries} "
                    f"retries; {len(done)} of {len(requests_)} were written (in .written), the rest are in "
                    ".unprocessed (later chunks were not sent)",
                    unprocessed=chunk.unprocessed + later, written=done, operation="BatchWriteItem",
                )
        return len(requests_)

    # Transactions ----------------------------------------------------------------------------------------
    def transaction(self, *, client_request_token: str | None = None) -> Transaction:
        """Collect writes and commit them atomically (use as a context manager or call ``commit``);
        ``client_request_token``: see :class:`Transaction`."""
        return Transaction(self, client_request_token)


class Transaction:
    """Up to 100 writes committed with one TransactWriteItems.

    Each ``put``/``update``/``delete``/``condition_check`` takes the same arguments as the
    single-item call. ``client_request_token`` makes the commit idempotent for 10 minutes:
    a retried commit with the same token (and the same writes) is applied once; with other
    writes it raises :class:`IdempotencyKeyReusedError`. The token sent to DynamoDB is derived
    from this one and the table (``request_token``), so one token used on two tables names two
    transactions (ADR 0035).
    """

    def __init__(self, table: TableClient, client_request_token: str | None) -> None:
        self._table = table
        self._token = client_request_token
        #: The ClientRequestToken sent (None without ``client_request_token``).
        self.request_token = None if client_request_token is None else tokens.transaction_token(
            table.client, table.table_name, client_request_token)
        self._requests: list[requests.Request] = []
        self.committed = False

    def _add(self, req: requests.Request) -> Transaction:
        if self.committed:
            raise ItemValidationError("transaction already committed; start a new one")
        ident = (req.entity, tuple(sorted(req.key.items())))
        if any((r.entity, tuple(sorted(r.key.items()))) == ident for r in self._requests):
            raise ItemValidationError(f"transaction already has an action on {req.entity} {req.key!r}; one per item")
        if len(self._requests) >= TRANSACTION_LIMIT:
            raise ItemValidationError(f"a transaction holds at most {TRANSACTION_LIMIT} actions")
        self._requests.append(req)
        return self

    def _check(self, kind: str, entity: str, values: Mapping[str, Any]) -> None:
        guard = self._table.guard
        if guard is not None:
            guard.write(kind, self._table.entity(entity).name, values)

    def put(self, entity: str, item: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("transaction_put", entity, item)
        req = requests.put(t.codec, t.table_name, t.entity(entity), item, **kw)
        if req.kind == "continue_version":
            raise UpdateRejectedError(
                f"transaction put of versioned {entity} {req.key!r} needs create_only=True or expected_version=N: "
                "a transaction cannot read the stored version to continue it"
            )
        return self._add(req)

    def update(self, entity: str, key: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("transaction_update", entity, key)
        return self._add(requests.update(t.codec, t.table_name, t.entity(entity), key, **kw))

    def delete(self, entity: str, key: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("transaction_delete", entity, key)
        return self._add(requests.delete(t.codec, t.table_name, t.entity(entity), key, **kw))

    def condition_check(self, entity: str, key: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("condition_check", entity, key)
        return self._add(requests.condition_check(t.codec, t.table_name, t.entity(entity), key, **kw))

    def commit(self) -> None:
        if not self._requests:
            raise ItemValidationError("transaction has no actions")
        items = []
        for req in self._requests:
            params = dict(req.params)
            if "ConditionExpression" in params:
                params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            items.append({req.operation: params})
        extra = {"ClientRequestToken": self.request_token} if self.request_token else {}
        try:
            _aws.call(self._table.client, "transact_write_items", hooks=self._table.hooks, TransactItems=items, **extra)
        except TransactionCanceledError as exc:
            details = []
            for req, reason in zip(self._requests, exc.reasons, strict=False):
                if reason.get("Code") not in (None, "None"):
                    details.append(f"{req.operation} {req.entity} {req.key!r}: {reason.get('Code')}")
            exc.args = (f"{exc.args[0]} [{'; '.join(details)}]",)
            self._raise_condition_not_met(exc)
            raise
        except DynamoDBError as exc:
            reused = tokens.token_reused(exc, self._token or "", self._table.table_name)
            if reused is None:
                raise
            raise reused from exc
        self.committed = True

    def _raise_condition_not_met(self, exc: TransactionCanceledError) -> None:
        """Raise :class:`TransactionConditionNotMetError` when an action's own ``condition=``
        failed (the model's conditions on it held on the stored item its reason carries)."""
        for number, (req, reason) in enumerate(zip(self._requests, exc.reasons, strict=False)):
            if reason.get("Code") != "ConditionalCheckFailed" or req.condition is None:
                continue
            wire = reason.get("Item")
            old = _aws.deserialize(wire) if wire else None
            if req.user_condition_failed(old):
                raise TransactionConditionNotMetError(
                    f"{exc.args[0]}: action {number}: condition {req.condition!r} not met",
                    action=number, item=self._table.codec.decode(old) if old else None, condition=req.condition,
                    key=req.key, reasons=exc.reasons, code=exc.code, operation=exc.operation,
                ) from exc

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
