"""The audit trail's contract and read side: :class:`AuditSpec`, the key layout, :class:`AuditClient`.

Audit table layout (``StreamAudit`` creates exactly this; every key attribute is a string)::

    PK     = ITEM#{pk}[#{sk}]                              one partition per audited item
    SK     = {changed_at}#{sequence number, 40 digits}     Query newest first = the item's history
    GSI1PK = DAY#{YYYY-MM-DD}#{shard:03d}   index "ByDay"  a day's changes over day_shards partitions
    GSI1SK = {SK}#{PK}                                     unique and in time order

Source key values are escaped and over-long keys take a SHA-256 form; :class:`AuditClient` reads
an item's history, a day's changes and past states. See docs/adr/0013-audit-key-layout-and-idempotency.md.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Context, Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ... import _aws, codec, contract
from ...exceptions import ImageOmittedError, KeyValueError, RedactionError
from ...pages import CursorCodec, derive_cursor_key

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ....model import Model

# The contract with the construct ---------------------------------------------------------------
FORMAT, VERSION = "constructs_lib.audit", 1
ENV_SPEC, ENV_AUDIT_TABLE, ENV_SOURCE_TABLE = "CONSTRUCTS_LIB_AUDIT", "AUDIT_TABLE_NAME", "SOURCE_TABLE_NAME"
#: The redaction salt: as text (local runs, tests), or the ARN of the Secrets Manager secret holding it.
ENV_SALT, ENV_SALT_SECRET = "CONSTRUCTS_LIB_AUDIT_SALT", "CONSTRUCTS_LIB_AUDIT_SALT_SECRET_ARN"
PK, SK, GSI1PK, GSI1SK = "PK", "SK", "GSI1PK", "GSI1SK"
DAY_INDEX = "ByDay"
AUDIT_TYPE = "AuditRecord"
EVENTS = ("INSERT", "MODIFY", "REMOVE", "EXPIRE")
ITEM_PREFIX, HASHED_PREFIX = "ITEM#", "ITEM#$H#"
MAX_PK_BYTES, MAX_GSI_SK_BYTES = 2048, 1024
#: Audit items are kept below this estimate; DynamoDB's limit is 400 KB.
MAX_ITEM_BYTES = 390 * 1024
SEQUENCE_DIGITS = 40
#: How DynamoDB Local names a TTL deletion; AWS sends REMOVE with :data:`TTL_IDENTITY`.
TTL_EVENT_NAME = "UNKNOWN_TO_SDK_VERSION"
TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
UNKNOWN, TTL_ACTOR, REDACTED_ACTOR = "unknown", "ttl", "redacted"
#: Names of the audit item's own attributes (the TTL attribute may not reuse one).
AUDIT_ATTRIBUTES = (
    PK, SK, GSI1PK, GSI1SK, "_type", "source_table", "entity", "key", "event", "changed", "changes",
    "image", "actor", "changed_at", "sequence_number", "event_id", "image_omitted", "values_omitted",
    "changes_omitted",
)
_TYPES = ("S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "M", "L")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
_EXACT = Context(prec=100)


# The spec: what the construct tells the runtime --------------------------------------------------
@dataclass(frozen=True)
class AuditSpec:
    """How the audit function reads the source table and writes the audit table.

    Serialized into the audit function's environment (:data:`ENV_SPEC`).

    Parameters
    ----------
    source_pk_attribute, source_sk_attribute
        The source table's key attributes. Defaults ``"PK"`` and ``"SK"``; ``source_sk_attribute``
        is None for a table without a sort key.
    entity_attribute
        Source attribute naming the item's entity. Default ``"_type"``.
    actor_attribute
        Source attribute naming who made a change. Default ``"updated_by"``; None: not recorded.
    redact
        Top-level source attributes never stored in clear. Not the key attributes nor the entity
        attribute. Default none.
    redaction
        ``"hash"`` (salted HMAC-SHA256; equal values stay comparable) or ``"drop"``. Default ``"hash"``.
    day_shards
        Partitions per day of the ``ByDay`` index, 1–100. Default 8.
    retention_seconds
        Audit records expire this long after the change (TTL), ≥ 86,400; None keeps them. Default None.
    audit_ttl_attribute
        The audit table's TTL attribute. Default ``"expires_at"``.
    """

    source_pk_attribute: str = "PK"
    source_sk_attribute: str | None = "SK"
    entity_attribute: str = "_type"
    actor_attribute: str | None = "updated_by"
    redact: tuple[str, ...] = ()
    redaction: str = "hash"
    day_shards: int = 8
    retention_seconds: int | None = None
    audit_ttl_attribute: str = "expires_at"

    def __post_init__(self) -> None:
        for name in ("source_pk_attribute", "entity_attribute", "audit_ttl_attribute"):
            _check_name(name, getattr(self, name))
        for name in ("source_sk_attribute", "actor_attribute"):
            if getattr(self, name) is not None:
                _check_name(name, getattr(self, name))
        if self.source_sk_attribute == self.source_pk_attribute:
            raise KeyValueError(f"source_sk_attribute {self.source_sk_attribute!r} must differ from source_pk_attribute")
        if isinstance(self.redact, str) or not isinstance(self.redact, (tuple, list)):
            raise KeyValueError(f"redact {self.redact!r} must be a sequence of attribute names (a str is not one)")
        object.__setattr__(self, "redact", tuple(self.redact))
        for name in self.redact:
            _check_name("redact entry", name)
            if name in self.key_attributes:
                raise KeyValueError(
                    f"redact names {name!r}, a key attribute of the source table: key attributes identify "
                    "the item and cannot be redacted"
                )
            if name == self.entity_attribute:
                raise KeyValueError(
                    f"redact names {name!r}, the entity attribute: audit records are filtered by entity, "
                    "so it cannot be redacted"
                )
        if len(set(self.redact)) != len(self.redact):
            raise KeyValueError(f"redact {list(self.redact)!r} names an attribute twice")
        if self.redaction not in ("hash", "drop"):
            raise KeyValueError(f"redaction {self.redaction!r} must be 'hash' or 'drop'")
        shards = self.day_shards
        if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= 100:
            raise KeyValueError(f"day_shards {shards!r} must be an int from 1 to 100")
        ttl = self.retention_seconds
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 86_400):
            raise KeyValueError(f"retention_seconds {ttl!r} must be an int >= 86400 (one day) or None")
        if self.audit_ttl_attribute in AUDIT_ATTRIBUTES:
            raise KeyValueError(
                f"audit_ttl_attribute {self.audit_ttl_attribute!r} is an attribute of every audit record; choose another name"
            )

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """The source table's key attributes, partition key first."""
        return (self.source_pk_attribute,) + ((self.source_sk_attribute,) if self.source_sk_attribute else ())

    @property
    def needs_salt(self) -> bool:
        return bool(self.redact) and self.redaction == "hash"

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "version": VERSION, **self.__dict__}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AuditSpec:
        """Parse :meth:`to_json`; KeyValueError for another format or version, or bad values."""
        try:
            data = json.loads(text)
            valid = isinstance(data, dict) and data.pop("format", None) == FORMAT and data.pop("version", None) == VERSION
        except (ValueError, TypeError):
            valid = False
        if not valid:
            raise KeyValueError(f"audit spec {str(text)[:80]!r} is not a {FORMAT} version {VERSION} document")
        try:
            return cls(**data)
        except TypeError as exc:
            raise KeyValueError(f"audit spec {str(text)[:80]!r} has unknown or missing fields: {exc}") from exc


def _check_name(what: str, value: Any) -> None:
    if not isinstance(value, str) or not value or len(value.encode("utf-8", "surrogatepass")) > 255:
        raise KeyValueError(f"{what} {value!r} must be a non-empty attribute name of at most 255 bytes")


def check_salt(spec: AuditSpec, salt: str | None) -> None:
    """RedactionError unless ``salt`` is usable when ``spec`` hashes redacted attributes."""
    if spec.needs_salt and (not isinstance(salt, str) or not salt.strip()):
        raise RedactionError(
            f"redaction='hash' of {list(spec.redact)!r} needs a secret salt, but none is set "
            f"(environment variable {ENV_SALT} or {ENV_SALT_SECRET}); refusing to hash without a salt "
            "or to store clear text"
        )


# Typed values (Lambda's stream JSON: binary values are base64 text) -------------------------------
def typed_tag(value: Any, where: str) -> tuple[str, Any]:
    if not isinstance(value, Mapping) or len(value) != 1 or next(iter(value)) not in _TYPES:
        raise KeyValueError(f"{where} is not a DynamoDB typed value (one of {', '.join(_TYPES)} as a one-key map)")
    return next(iter(value.items()))


def binary(value: Any, where: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise KeyValueError(f"{where}: binary value is not base64 text") from None


def number_text(text: Any, where: str) -> str:
    """Plain decimal text of a DynamoDB number, trailing zeros removed (``"1.50"`` → ``"1.5"``)."""
    try:
        number = Decimal(text) if isinstance(text, str) else Decimal("NaN")
    except InvalidOperation:
        number = Decimal("NaN")
    if not number.is_finite():
        raise KeyValueError(f"{where}: number value is not decimal text")
    return format(_EXACT.normalize(number), "f")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# Keys -------------------------------------------------------------------------------------------------
def _key_text(value: Any, attribute: str) -> str:
    tag, inner = typed_tag(value, f"key attribute {attribute!r}")
    if tag == "S" and isinstance(inner, str) and inner:
        return inner
    if tag == "N":
        return number_text(inner, f"key attribute {attribute!r}")
    if tag == "B":
        return b64(binary(inner, f"key attribute {attribute!r}"))
    raise KeyValueError(f"key attribute {attribute!r} is of type {tag}; key values are non-empty S, N or B")


def audit_pk(spec: AuditSpec, keys: Mapping[str, Any]) -> str:
    """The audit partition key of a source item, from its typed key (``{"PK": {"S": ...}, ...}``)."""
    if not isinstance(keys, Mapping) or set(keys) != set(spec.key_attributes):
        names = sorted(keys) if isinstance(keys, Mapping) else keys
        raise KeyValueError(f"source key {names!r} does not match the key attributes {list(spec.key_attributes)!r} of the audit spec")
    text = ITEM_PREFIX + "#".join(codec.escape(_key_text(keys[a], a), field=a) for a in spec.key_attributes)
    return text if utf8_len(text) <= MAX_PK_BYTES else HASHED_PREFIX + sha256_hex(text)


def _typed_key(key: Mapping[str, Any]) -> dict[str, Any]:
    """A plain Python key (str, int, Decimal, bytes values) as typed values."""
    out: dict[str, Any] = {}
    if not isinstance(key, Mapping):
        raise KeyValueError(f"key {key!r} must be a map of the source key attributes to their values")
    for name, value in key.items():
        if isinstance(value, str):
            out[name] = {"S": value}
        elif isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            out[name] = {"N": str(value)}
        elif isinstance(value, (bytes, bytearray)):
            out[name] = {"B": bytes(value)}
        else:
            raise KeyValueError(f"key attribute {name!r} is a {type(value).__name__}; key values are str, int, Decimal or bytes")
    return out


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def day_shard(spec: AuditSpec, pk: str) -> int:
    """The ``ByDay`` partition (0..day_shards-1) of an audit partition key."""
    return int(sha256_hex(pk), 16) % spec.day_shards


def format_ms(ms: int) -> str:
    dt = EPOCH + timedelta(milliseconds=ms)
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}."
        f"{dt.microsecond // 1000:03d}Z"
    )


# Reading the trail ------------------------------------------------------------------------------------
@dataclass(frozen=True)
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


@dataclass(frozen=True)
class AuditPage:
    """One page of an item's history, newest first; ``cursor`` is None on the last page."""

    records: list[AuditRecord]
    cursor: str | None

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
        retry_mode: str = "adaptive",
        max_attempts: int = 10,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        batch_retries: int = 8,
    ) -> None:
        if not isinstance(spec, AuditSpec):
            raise TypeError(f"spec {spec!r} must be an AuditSpec")
        for what, name in (("audit_table_name", audit_table_name), ("source_table_name", source_table_name)):
            if not isinstance(name, str) or not name:
                raise KeyValueError(f"{what} {name!r} must be a non-empty table name")
        if writer:
            check_salt(spec, salt)
        self.spec, self.audit_table_name, self.source_table_name = spec, audit_table_name, source_table_name
        self.salt, self.batch_retries = salt, batch_retries
        self.client = client or _aws.make_client(
            retry_mode=retry_mode, max_attempts=max_attempts, region_name=region_name, endpoint_url=endpoint_url
        )

    @classmethod
    def from_environment(cls, *, environ: Mapping[str, str] | None = None, **kwargs: Any) -> AuditClient:
        """Spec and table names from :data:`ENV_SPEC`, :data:`ENV_AUDIT_TABLE` and
        :data:`ENV_SOURCE_TABLE` (as the construct sets them).

        The salt (writer only, when the spec hashes): :data:`ENV_SALT` if set, else the
        Secrets Manager secret named by :data:`ENV_SALT_SECRET` (one GetSecretValue per cold
        start). Readers never fetch it.
        """
        env = os.environ if environ is None else environ
        contract.verify(environ=env)  # on an imported table: the bundled model must be the deployed one
        for var in (ENV_SPEC, ENV_AUDIT_TABLE, ENV_SOURCE_TABLE):
            if not env.get(var):
                raise KeyValueError(f"environment variable {var!r} is not set; StreamAudit sets it on the functions it binds")
        spec = AuditSpec.from_json(env[ENV_SPEC])
        salt = kwargs.pop("salt", None) or env.get(ENV_SALT) or None
        if salt is None and kwargs.get("writer") and spec.needs_salt and env.get(ENV_SALT_SECRET):
            secrets = _aws.make_client(service="secretsmanager", region_name=kwargs.get("region_name"))
            salt = _aws.call(secrets, "get_secret_value", SecretId=env[ENV_SALT_SECRET]).get("SecretString")
        return cls(spec, env[ENV_AUDIT_TABLE], env[ENV_SOURCE_TABLE], salt=salt, **kwargs)

    def audit_pk(self, key: Mapping[str, Any]) -> str:
        """The audit partition of a source item, from its plain key (``{"PK": "...", "SK": "..."}``)."""
        return audit_pk(self.spec, _typed_key(key))

    def _item_pk(self, key: Mapping[str, Any] | None, entity: str | None, model: Model | None, ids: Mapping[str, Any]) -> str:
        if key is not None:
            if entity is not None or model is not None or ids:
                raise KeyValueError("give either key=... or entity=..., model=... and the key values, not both")
            return self.audit_pk(key)
        if entity is None or model is None:
            raise KeyValueError("history needs key={...} (the source item's key) or entity=..., model=... and its key values")
        from ...items import ItemCodec

        return self.audit_pk(ItemCodec(model).table_key(model.entity(entity), ids))

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
        cursors, query = self._cursors(), sha256_hex(pk)[:24]
        if cursor is not None:
            params["ExclusiveStartKey"] = cursors.decode(cursor, query, partition=(PK, {"S": pk}), source="history()",
                                                         other="the history of another item")
        resp = _aws.call(self.client, "query", TableName=self.audit_table_name, **params)
        last = resp.get("LastEvaluatedKey")
        return AuditPage([AuditRecord.from_item(i) for i in resp.get("Items", [])],
                         cursors.encode(last, query) if last else None)

    def _cursors(self) -> CursorCodec:
        return CursorCodec(derive_cursor_key("audit", self.audit_table_name))

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
        text = codec.encode(day, "date", field="day")
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
        ms = (codec.require_aware(at, "at") - EPOCH) // timedelta(milliseconds=1)
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
        raise KeyValueError(f"{what} {value!r} must be a positive int" + (f" of at most {cap}" if cap else ""))


__all__ = [
    "AUDIT_TYPE", "DAY_INDEX", "ENV_AUDIT_TABLE", "ENV_SALT", "ENV_SALT_SECRET", "ENV_SOURCE_TABLE", "ENV_SPEC", "EVENTS", "GSI1PK",
    "GSI1SK", "HASHED_PREFIX", "MAX_ITEM_BYTES", "PK", "SK", "AuditClient", "AuditPage", "AuditRecord", "AuditSpec",
    "audit_pk", "check_salt", "day_shard", "format_ms",
]
