"""``TableClient``: entity operations on one single table, driven by the model.

Reading top to bottom: construction (model + table name + injectable boto3 client), keys,
single-item writes/reads, batch operations, transactions. Queries by access-pattern name are
in :mod:`.queries` (the base class), transactions in :mod:`.transactions`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Unpack

from . import _aws, contract, keys, request_params
from .contract import load_bundled_model
from .cursors import CursorSigner, client_parts, derive_cursor_key
from .environment import ENV_CURSOR_KEY, ENV_REPLICA_REGIONS, ENV_TABLE_NAME, ENV_UNAVAILABLE_INDEXES
from .exceptions import (
    BatchIncompleteError,
    ConditionFailedError,
    ItemValidationError,
    KeyValueError,
    SettingsError,
    UpdateRejectedError,
    VersionConflictError,
)
from .items import ItemMapper
from .keys import _tenant_field_of
from .limits import BATCH_WRITE_LIMIT
from .queries import QueryMethods

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ..model import Model
    from ..model import ResolvedEntity as Entity
    from ..model.scope import AccessScope
    from .conditions import Condition, Name
    from .replication import Replication
    from .scope import ScopeGuard
    from .stats import TrafficRecorder
    from .tenant import TenantTableClient
    from .transactions import Transaction

#: The retry mode of the boto3 client a ``TableClient`` makes when given none (see the
#: ``retry_mode`` parameter).
DEFAULT_RETRY_MODE = "standard"

#: How many times a plain put of a versioned entity re-reads the stored version (through its
#: failed condition) before giving up under contention.
CONTINUE_VERSION_ATTEMPTS = 10

class TableClient(QueryMethods):
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
    mapper
        Builds the stored items and keys. Default: one for ``model``; a tenant-scoped client
        passes one that refuses keys of other tenants (see :meth:`with_mapper`).
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
        mapper: ItemMapper | None = None,
        replication: Replication | None = None,
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
        self._cursors: CursorSigner | None = None
        self.model = model
        self.table_name = table_name
        self.mapper = mapper if mapper is not None else ItemMapper(model)
        self.batch_retries = batch_retries
        #: On a replicated table, the region this client writes in: every put and update names it
        #: (``_origin_region``) and deletes are stamped first (:mod:`.replication`). None: single region.
        self.replication = replication
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
        if "replication" not in kwargs and os.environ.get(ENV_REPLICA_REGIONS):
            from .replication import Replication  # loaded by functions on a replicated table only

            kwargs["replication"] = Replication.from_environment()
        return cls(model, name, **kwargs)

    @property
    def cursors(self) -> CursorSigner:
        """The signer signing and checking this client's pagination cursors."""
        if self._cursors is None:
            self._cursors = CursorSigner(
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

        Raises
        ------
        TrafficInsightNotBundledError
            In a generated Lambda bundled without ``TableFunction(..., traffic_insight=True)``: its
            asset leaves the recorder out (so does ``traffic=``).

        Notes
        -----
        Tenant clients made by :meth:`for_tenant` after this call record into the same recorder.
        """
        from .stats import TrafficRecorder  # TrafficInsightNotBundledError where the asset left it out

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

    def with_mapper(self, mapper: ItemMapper) -> TableClient:
        """A client of the same table, boto3 client, batch retries, cursor key, traffic recorder
        and access scope whose keys and items are built by ``mapper``."""
        scoped = TableClient(
            self.model, self.table_name, client=self.client, batch_retries=self.batch_retries,
            cursor_key=self._cursor_secret, mapper=mapper, replication=self.replication,
        )
        scoped.traffic, scoped.hooks = self.traffic, self.hooks
        scoped.guard = self.guard
        return scoped

    def for_tenant(self, tenant: str) -> TenantTableClient:
        """A client confined to ``tenant``: every key it builds must carry it, and queries on
        GSIs that mix tenants are refused — before any call reaches AWS."""
        _tenant_field_of(self.model)  # before the import: runtime/tenant.py ships with tenant models only
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
        return self.mapper.table_key(self.entity(entity), values)

    def all_keys(self, entity: str, **values: Any) -> dict[str, str]:
        """Every key attribute (table + indexes the item belongs to) an item with ``values`` gets."""
        ent = self.entity(entity)
        item = self.mapper.build_item(ent, values)
        return {k: item[k] for k in self.mapper.key_attributes if k in item}

    def parse_keys(self, item: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """Entity name and field values parsed back from a stored item's table key."""
        ent = self.mapper.entity_of(item)
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
        req = request_params.put(
            self.mapper, self.table_name, ent, item, create_only=create_only,
            expected_version=expected_version, expires_in=expires_in, expires_at=expires_at, condition=condition,
        )
        if req.kind == "continue_version":
            # Names the entity written for observers of the AWS-call seam (only when one is attached).
            token = _aws.WRITE_ENTITIES.set(((ent.name, req.key),)) if self.hooks else None
            try:
                req = self._put_continuing(ent, req)
            finally:
                if token is not None:
                    _aws.WRITE_ENTITIES.reset(token)
        else:
            self._write(req, "put_item")
        if req.item is not None:  # the item as built: what a decode of the stored item gives, without the decode
            return self.mapper.decode(req.item)
        return self.mapper.decode_wire(req.params["Item"])

    def _put_continuing(self, entity: Entity, req: request_params.Request) -> request_params.Request:
        """A plain put of a versioned entity: create at version 1, or overwrite the stored
        version ``n`` with ``n + 1`` — read from the failed condition (``ALL_OLD``), no extra
        call — retried while concurrent writers move it. Returns the request that succeeded."""
        for _ in range(CONTINUE_VERSION_ATTEMPTS):
            try:
                _aws.call(self.client, "put_item", hooks=self.hooks, **self._stamped("put_item", req.params),
                          ReturnValuesOnConditionCheckFailure="ALL_OLD")
                return req
            except ConditionFailedError as exc:
                old = getattr(exc, "old_item", None)
                if req.user_condition_failed(old):
                    raise req.condition_error(exc, old, self.mapper.decode) from exc
                req = request_params.continue_version(self.mapper, entity, req, old)
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
        key = self.mapper.key_values(ent, key_values, what="get key")
        resp = _aws.call(
            self.client, "get_item", hooks=self.hooks, TableName=self.table_name, Key=_aws.serialize(key),
            ConsistentRead=consistent, **request_params.item_projection(self.model, [ent], attributes),
        )
        item = resp.get("Item")
        if not item:
            return None
        request_params.check_own_item(self.model, ent.name, (item.get(self.model.entity_attribute) or {}).get("S"), key)
        return self.mapper.decode_wire(item, raw=raw)

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
        req = request_params.update(
            self.mapper, self.table_name, self.entity(entity), key, set=set, remove=remove, add=add, delete=delete,
            expected_version=expected_version, must_exist=must_exist, expires_in=expires_in, expires_at=expires_at,
            condition=condition,
        )
        resp = self._write(req, "update_item", ReturnValues="ALL_NEW")
        return self.mapper.decode_wire(resp.get("Attributes", {}))

    def delete(
        self, entity: str, key: Mapping[str, Any], *, expected_version: int | None = None, must_exist: bool = False,
        condition: Condition | None = None,
    ) -> dict[str, Any] | None:
        """Delete an item; returns the deleted item (decoded) or None if there was none.
        ``condition`` must hold on the stored item (else :class:`ConditionNotMetError`)."""
        if self.guard is not None:
            self.guard.write("delete", self.entity(entity).name, key)
        req = request_params.delete(
            self.mapper, self.table_name, self.entity(entity), key, expected_version=expected_version,
            must_exist=must_exist, condition=condition,
        )
        resp = self._write(req, "delete_item", ReturnValues="ALL_OLD")
        old = resp.get("Attributes")
        return self.mapper.decode_wire(old) if old else None

    def _write(self, req: request_params.Request, operation: str, **extra: Any) -> dict[str, Any]:
        params = self._stamped(operation, req.params)  # (a copy: the request keeps its own)
        if extra:
            params.update(extra)
        if "ConditionExpression" in params:
            params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        # Names the entity written for observers of the AWS-call seam (only when one is attached).
        token = _aws.WRITE_ENTITIES.set(((req.entity, req.key),)) if self.hooks else None
        try:
            if operation == "delete_item" and self.replication is not None:
                return self.replication.delete(self._call, params, self.model.pk_attribute)
            return _aws.call(self.client, operation, hooks=self.hooks, **params)
        except ConditionFailedError as exc:
            raise req.condition_error(exc, getattr(exc, "old_item", None), self.mapper.decode) from exc
        finally:
            if token is not None:
                _aws.WRITE_ENTITIES.reset(token)

    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        return _aws.call(self.client, operation, hooks=self.hooks, **params)

    def _stamped(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` with this region's stamp on a replicated table (puts and updates; see :mod:`.replication`)."""
        rep = self.replication
        if rep is None or operation not in ("put_item", "update_item", "Put", "Update"):
            return dict(params)
        if operation in ("put_item", "Put"):
            return dict(params, Item=rep.stamp_item(params["Item"]))
        return rep.stamp_update(params)

    # Batch operations ------------------------------------------------------------------------------
    def batch_get(
        self, requests: Sequence[tuple[str, Mapping[str, Any]]], *, consistent: bool = False,
        attributes: Sequence[str | Name] | None = None,
    ) -> list[dict[str, Any] | None]:
        """Read many items by key, in chunks of 100, retrying unprocessed keys with backoff.

        Returns one entry per request, in order (None where the item does not exist).
        ``attributes`` reads only those (plus the entity attribute and the key) of every item.
        """
        keyed = [self.mapper.key_values(self.entity(e), v, what="batch_get key") for e, v in requests]
        if self.guard is not None:
            self.guard.batch_get(requests)
        projection = {} if attributes is None else request_params.item_projection(
            self.model, [self.entity(e) for e in dict.fromkeys(e for e, _ in requests)], attributes)
        unique = list({tuple(sorted(k.items())): k for k in keyed}.values())
        key_attrs = sorted(keyed[0]) if keyed else []
        found: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
        for item in _aws.batch_get(self.client, self.table_name, unique, consistent=consistent, retries=self.batch_retries,
                                   hooks=self.hooks, projection=projection):
            found[tuple((a, item[a]) for a in key_attrs)] = self.mapper.decode(item)
        out = [found.get(tuple(sorted(k.items()))) for k in keyed]
        for (name, _), got, key in zip(requests, out, keyed, strict=True):
            if got is not None:
                request_params.check_own_item(self.model, self.entity(name).name, got.get(self.model.entity_attribute), key)
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
        entities: list[str] = []  # the entity of each of writes
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
            built = self.mapper.build_item(ent, item)
            wire = self._stamped("Put", {"Item": _aws.serialize(built)})["Item"]
            writes.append((self.mapper.table_key(ent, built), {"PutRequest": {"Item": wire}}))
            entities.append(ent.name)
        if deletes and self.replication is not None:
            raise UpdateRejectedError(
                f"batch_write: {len(deletes)} delete(s) on a table replicated to {', '.join(self.replication.regions)}; "
                "a batch delete cannot name its region (stream consumers would not know where it was made): "
                "use delete() for each item"
            )
        for entity, key in deletes:
            ent = self.entity(entity)
            k = self.mapper.key_values(ent, key, what="batch_write delete key")
            writes.append((k, {"DeleteRequest": {"Key": _aws.serialize(k)}}))
            entities.append(ent.name)
        seen: set[tuple[tuple[str, str], ...]] = set()
        for k, _ in writes:
            ident = tuple(sorted(k.items()))
            if ident in seen:
                raise ItemValidationError(
                    f"batch_write: key {k!r} appears more than once; a batch may touch each item once "
                    "(their order would be undefined)"
                )
            seen.add(ident)
        requests = [w for _, w in writes]
        # Names the entity of each item for observers of the AWS-call seam (only when one is attached).
        token = _aws.WRITE_ENTITIES.set([(e, k) for e, (k, _) in zip(entities, writes, strict=True)]) \
            if self.hooks else None
        try:
            self._batch_write_chunks(requests)
        finally:
            if token is not None:
                _aws.WRITE_ENTITIES.reset(token)
        return len(requests)

    def _batch_write_chunks(self, requests: list[dict[str, Any]]) -> None:
        done: list[dict[str, Any]] = []
        for start in range(0, len(requests), BATCH_WRITE_LIMIT):
            later = requests[start + BATCH_WRITE_LIMIT:]
            chunk = _aws.batch_write_chunk(
                self.client, self.table_name, requests[start:start + BATCH_WRITE_LIMIT], retries=self.batch_retries,
                hooks=self.hooks,
            )
            done += chunk.written
            if chunk.error is not None:  # DynamoDB refused the whole call: nothing of it was written
                exc = chunk.error
                raise BatchIncompleteError(
                    f"batch_write: DynamoDB refused a chunk ({exc.code}: {exc}); {len(done)} of {len(requests)} "
                    "request(s) were written (in .written), the rest were not (in .unprocessed)",
                    unprocessed=chunk.unprocessed + later, written=done, code=exc.code, operation="BatchWriteItem",
                ) from exc
            if chunk.unprocessed:
                raise BatchIncompleteError(
                    f"batch_write: {len(chunk.unprocessed)} request(s) still unprocessed after {self.batch_retries} "
                    f"retries; {len(done)} of {len(requests)} were written (in .written), the rest are in "
                    ".unprocessed (later chunks were not sent)",
                    unprocessed=chunk.unprocessed + later, written=done, operation="BatchWriteItem",
                )

    # Transactions ----------------------------------------------------------------------------------------
    def transaction(self, *, client_request_token: str | None = None) -> Transaction:
        """Collect writes and commit them atomically (use as a context manager or call ``commit``);
        ``client_request_token``: see :class:`~.transactions.Transaction`."""
        from .transactions import Transaction  # loaded by functions that use transactions only

        return Transaction(self, client_request_token)

