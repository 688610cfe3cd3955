"""The audit trail's read side: :class:`AuditClient` (history of an item, changes of a day,
state as of a time).

How a stream record becomes an audit item (diff, redaction, size limit) and the Lambda
handler that writes them live in :mod:`constructs_lib.runtime.handlers.audit`.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Unpack

from ... import _aws, contract, key_segments
from ..._records import frozen_record
from ...cursors import CursorSigner, derive_cursor_key
from ...environment import (
    ENV_AUDIT_SALT,
    ENV_AUDIT_SALT_SECRET,
    ENV_AUDIT_SPEC,
    ENV_AUDIT_TABLE,
    ENV_SOURCE_TABLE,
)
from ...exceptions import ImageOmittedError, KeyValueError, SettingsError
from .keys import audit_pk, format_ms, typed_key
from .spec import (
    DAY_INDEX,
    EPOCH,
    GSI1PK,
    GSI1SK,
    MAX_EPOCH_MS,
    PK,
    SEQUENCE_DIGITS,
    SK,
    AuditSpec,
    check_salt,
)

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ....model import Model


# Reading the trail ------------------------------------------------------------------------------------
@frozen_record
class AuditRecord:
    """One change of one source item, values deserialized (numbers as Decimal, like boto3).

    ``changes`` maps each changed name to ``{"before": v, "after": v}`` (a side absent when the
    attribute was), or ``{"redacted": "dropped"}``; hashed values read ``"sha256:…"``.
    """

    key: dict[str, Any]
    entity: str
    event: str
    changed: tuple[str, ...]
    changes: dict[str, dict[str, Any]]
    actor: str
    changed_at: datetime
    sequence_number: str
    event_id: str | None
    image: dict[str, Any] | None
    source_table: str
    image_omitted: bool = False
    values_omitted: bool = False
    changes_omitted: bool = False

    def __init__(
        self, key: dict[str, Any], entity: str, event: str, changed: tuple[str, ...],
        changes: dict[str, dict[str, Any]], actor: str, changed_at: datetime, sequence_number: str,
        event_id: str | None, image: dict[str, Any] | None, source_table: str, image_omitted: bool = False,
        values_omitted: bool = False, changes_omitted: bool = False,
    ) -> None:
        self.__dict__.update(
            key=key, entity=entity, event=event, changed=changed, changes=changes, actor=actor, changed_at=changed_at,
            sequence_number=sequence_number, event_id=event_id, image=image, source_table=source_table,
            image_omitted=image_omitted, values_omitted=values_omitted, changes_omitted=changes_omitted)

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> AuditRecord:
        """From a typed audit item as GetItem/Query return it."""
        plain = _aws.deserialize(item)
        return cls(
            key=plain["key"], entity=plain["entity"], event=plain["event"], changed=tuple(plain["changed"]),
            changes=plain["changes"], actor=plain["actor"],
            changed_at=datetime.strptime(plain["changed_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC),
            sequence_number=plain["sequence_number"], event_id=plain.get("event_id"), image=plain.get("image"),
            source_table=plain["source_table"], image_omitted=bool(plain.get("image_omitted")),
            values_omitted=bool(plain.get("values_omitted")), changes_omitted=bool(plain.get("changes_omitted")),
        )


@frozen_record
class AuditPage:
    """One page of an item's history, newest first; ``cursor`` is None on the last page."""

    records: list[AuditRecord]
    cursor: str | None

    def __init__(self, records: list[AuditRecord], cursor: str | None) -> None:
        self.__dict__.update(records=records, cursor=cursor)

    def __iter__(self) -> Iterator[AuditRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


class AuditClient:
    """Read (and, in the audit function, write) the audit trail of one source table.

    Parameters
    ----------
    spec
        The :class:`AuditSpec` the construct synthesized.
    audit_table_name, source_table_name
        Physical table names.
    client
        A boto3 DynamoDB client. Default: a new one with ``retry_mode``/``max_attempts``.
    salt
        Secret for ``redaction="hash"``; only the writer needs it. Default None.
    writer
        True in the audit function: refuse (RedactionError) a spec that hashes without a salt.
        Default False.
    retry_mode, max_attempts, region_name, endpoint_url
        For the default client. Defaults ``"adaptive"`` and 10 attempts.
    batch_retries
        Retries of unprocessed BatchWriteItem items (writer). Default 8.
    """

    def __init__(
        self,
        spec: AuditSpec,
        audit_table_name: str,
        source_table_name: str,
        *,
        client: BaseClient | None = None,
        salt: str | None = None,
        writer: bool = False,
        batch_retries: int = 8,
        **connection: Unpack[_aws.ConnectionOptions],
    ) -> None:
        if not isinstance(spec, AuditSpec):
            raise TypeError(f"spec {spec!r} must be an AuditSpec")
        tables = {"audit_table_name": audit_table_name, "source_table_name": source_table_name}
        _aws.check_table_names(tables)
        if writer:
            check_salt(spec, salt)
        self.client = _aws.bind(client, tables, what="AuditClient", **connection)
        self.spec, self.audit_table_name, self.source_table_name = spec, audit_table_name, source_table_name
        self.salt, self.batch_retries = salt, batch_retries

    @classmethod
    def from_environment(cls, *, environ: Mapping[str, str] | None = None, **kwargs: Any) -> AuditClient:
        """Spec and table names from :data:`ENV_AUDIT_SPEC`, :data:`ENV_AUDIT_TABLE` and
        :data:`ENV_SOURCE_TABLE` (as the construct sets them).

        The salt (writer only, when the spec hashes): :data:`ENV_AUDIT_SALT` if set, else the
        Secrets Manager secret named by :data:`ENV_AUDIT_SALT_SECRET` (one GetSecretValue per cold
        start). Readers never fetch it.
        """
        env = os.environ if environ is None else environ
        contract.verify(environ=env)  # on an imported table: the bundled model must be the deployed one
        for var in (ENV_AUDIT_SPEC, ENV_AUDIT_TABLE, ENV_SOURCE_TABLE):
            _aws.environment(env, var, "StreamAudit sets it on the functions it binds")
        spec = AuditSpec.from_json(env[ENV_AUDIT_SPEC])
        salt = kwargs.pop("salt", None) or env.get(ENV_AUDIT_SALT) or None
        if salt is None and kwargs.get("writer") and spec.needs_salt and env.get(ENV_AUDIT_SALT_SECRET):
            secrets = _aws.make_client(service="secretsmanager", region_name=kwargs.get("region_name"))
            salt = _aws.call(secrets, "get_secret_value", SecretId=env[ENV_AUDIT_SALT_SECRET]).get("SecretString")
        return cls(spec, env[ENV_AUDIT_TABLE], env[ENV_SOURCE_TABLE], salt=salt, **kwargs)

    def audit_pk(self, key: Mapping[str, Any]) -> str:
        """The audit partition of a source item, from its plain key (``{"PK": "...", "SK": "..."}``)."""
        return audit_pk(self.spec, typed_key(key))

    def _item_pk(self, key: Mapping[str, Any] | None, entity: str | None, model: Model | None, ids: Mapping[str, Any]) -> str:
        if key is not None:
            if entity is not None or model is not None or ids:
                raise KeyValueError("give either key=... or entity=..., model=... and the key values, not both")
            return self.audit_pk(key)
        if entity is None or model is None:
            raise KeyValueError("history needs key={...} (the source item's key) or entity=..., model=... and its key values")
        from ...items import ItemMapper

        return self.audit_pk(ItemMapper(model).table_key(model.entity(entity), ids))

    def history(
        self,
        key: Mapping[str, Any] | None = None,
        *,
        entity: str | None = None,
        model: Model | None = None,
        limit: int = 50,
        cursor: str | None = None,
        **ids: Any,
    ) -> AuditPage:
        """One page of a source item's changes, newest first (one Query on its audit partition).

        Parameters
        ----------
        key
            The source item's key, ``{"PK": ..., "SK": ...}``. Or give ``entity``, ``model`` and the
            entity's key values as keyword arguments. Default None.
        limit
            Records per page, 1–1,000. Default 50.
        cursor
            ``cursor`` of the previous page. Default None (the newest changes).
        """
        pk = self._item_pk(key, entity, model, ids)
        _check_limit("limit", limit)
        params = _pk_query(pk, ScanIndexForward=False, Limit=limit)
        cursors, query = self._cursors(), {"audited item": pk}
        if cursor is not None:
            params["ExclusiveStartKey"] = cursors.decode(cursor, query, partition=(PK, {"S": pk}), source="history()",
                                                         other="the history of another item")
        resp = _aws.call(self.client, "query", TableName=self.audit_table_name, **params)
        last = resp.get("LastEvaluatedKey")
        return AuditPage([AuditRecord.from_item(i) for i in resp.get("Items", [])],
                         cursors.encode(last, query) if last else None)

    def _cursors(self) -> CursorSigner:
        return CursorSigner(derive_cursor_key("audit", self.audit_table_name))

    def changes(self, day: date | str, *, limit_per_shard: int | None = None, entity: str | None = None) -> list[AuditRecord]:
        """Every change of ``day`` (UTC), oldest first: the ``ByDay`` index, all ``day_shards``
        partitions, merged in time order.

        Parameters
        ----------
        day
            A ``date`` or ``"YYYY-MM-DD"``.
        limit_per_shard
            At most this many records per partition (so the result is not "the first N of the
            day"). Default None: all.
        entity
            Only changes of this entity. Default None: all.
        """
        text = key_segments.encode(day, "date", field="day")
        if limit_per_shard is not None:
            _check_limit("limit_per_shard", limit_per_shard, cap=None)
        shards = [self._day_shard(f"DAY#{text}#{n:03d}", limit_per_shard, entity) for n in range(self.spec.day_shards)]
        merged = heapq.merge(*shards, key=lambda item: item[GSI1SK]["S"])
        return [AuditRecord.from_item(item) for item in merged]

    def _day_shard(self, pk: str, limit: int | None, entity: str | None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {
            "TableName": self.audit_table_name, "IndexName": DAY_INDEX, "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": GSI1PK}, "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ScanIndexForward": True,
        }
        if entity is not None:  # Limit counts items before the filter: page until enough match
            params["FilterExpression"] = "#e = :e"
            params["ExpressionAttributeNames"]["#e"] = "entity"
            params["ExpressionAttributeValues"][":e"] = {"S": entity}
        elif limit is not None:
            params["Limit"] = limit
        items: list[dict[str, Any]] = []
        while True:
            resp = _aws.call(self.client, "query", **params)
            items += resp.get("Items", [])
            last = resp.get("LastEvaluatedKey")
            if not last or (limit is not None and len(items) >= limit):
                return items[:limit] if limit is not None else items
            params["ExclusiveStartKey"] = last

    def as_of(self, key: Mapping[str, Any], at: datetime) -> dict[str, Any] | None:
        """The source item as it was at ``at`` (aware datetime): the ``image`` of its newest
        change at or before ``at``; None if it did not exist then (no change yet, or removed or
        expired). Values deserialized; redacted ones read as their hash; dropped ones are absent.

        Only as precise as the stream's ApproximateCreationDateTime (the second on AWS, the
        minute on DynamoDB Local): changes stamped with the same time as ``at`` all count as
        at or before it.

        Raises
        ------
        ImageOmittedError
            That change was stored without its image (it was too large).
        """
        ms = (key_segments.require_aware(at, "at") - EPOCH) // timedelta(milliseconds=1)
        if ms < 0:
            return None
        pk = self.audit_pk(key)
        upper = f"{format_ms(min(ms, MAX_EPOCH_MS))}#{'9' * SEQUENCE_DIGITS}"
        params = _pk_query(pk, ScanIndexForward=False, Limit=1)
        params["KeyConditionExpression"] += " AND #sk <= :sk"
        params["ExpressionAttributeNames"]["#sk"] = SK
        params["ExpressionAttributeValues"][":sk"] = {"S": upper}
        items = _aws.call(self.client, "query", TableName=self.audit_table_name, **params).get("Items") or []
        if not items:
            return None
        record = AuditRecord.from_item(items[0])
        if record.event in ("REMOVE", "EXPIRE"):
            return None
        if record.image is None:
            raise ImageOmittedError(
                f"the change of {pk!r} at {record.changed_at.isoformat()} (sequence {record.sequence_number}) "
                "was too large to store the item's image; its state at that time cannot be rebuilt"
            )
        return record.image


def _pk_query(pk: str, **extra: Any) -> dict[str, Any]:
    return {
        "KeyConditionExpression": "#pk = :pk", "ExpressionAttributeNames": {"#pk": PK},
        "ExpressionAttributeValues": {":pk": {"S": pk}}, **extra,
    }


def _check_limit(what: str, value: Any, cap: int | None = 1000) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (cap is not None and value > cap):
        raise SettingsError(f"{what} {value!r} must be a positive int" + (f" of at most {cap}" if cap else ""))
