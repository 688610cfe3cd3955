"""The audit trail's contract with the construct: names, limits and :class:`AuditSpec`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ..._records import frozen_record
from ...environment import ENV_AUDIT_SALT, ENV_AUDIT_SALT_SECRET
from ...exceptions import RedactionError, SettingsError
from ...jsontext import load_json

# The contract with the construct ---------------------------------------------------------------
FORMAT, VERSION = "constructs_lib.audit", 1
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
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


# The spec: what the construct tells the runtime --------------------------------------------------
@frozen_record
class AuditSpec:
    """How the audit function reads the source table and writes the audit table.

    Serialized into the audit function's environment (:data:`ENV_AUDIT_SPEC`).

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

    def __init__(
        self, source_pk_attribute: str = "PK", source_sk_attribute: str | None = "SK", entity_attribute: str = "_type",
        actor_attribute: str | None = "updated_by", redact: tuple[str, ...] = (), redaction: str = "hash",
        day_shards: int = 8, retention_seconds: int | None = None, audit_ttl_attribute: str = "expires_at",
    ) -> None:
        self.__dict__.update(
            source_pk_attribute=source_pk_attribute, source_sk_attribute=source_sk_attribute,
            entity_attribute=entity_attribute, actor_attribute=actor_attribute, redact=redact, redaction=redaction,
            day_shards=day_shards, retention_seconds=retention_seconds, audit_ttl_attribute=audit_ttl_attribute)
        self._check()

    def _check(self) -> None:
        for name in ("source_pk_attribute", "entity_attribute", "audit_ttl_attribute"):
            _check_name(name, getattr(self, name))
        for name in ("source_sk_attribute", "actor_attribute"):
            if getattr(self, name) is not None:
                _check_name(name, getattr(self, name))
        if self.source_sk_attribute == self.source_pk_attribute:
            raise SettingsError(f"source_sk_attribute {self.source_sk_attribute!r} must differ from source_pk_attribute")
        if isinstance(self.redact, str) or not isinstance(self.redact, (tuple, list)):
            raise SettingsError(f"redact {self.redact!r} must be a sequence of attribute names (a str is not one)")
        self.__dict__["redact"] = tuple(self.redact)
        for name in self.redact:
            _check_name("redact entry", name)
            if name in self.key_attributes:
                raise SettingsError(
                    f"redact names {name!r}, a key attribute of the source table: key attributes identify "
                    "the item and cannot be redacted"
                )
            if name == self.entity_attribute:
                raise SettingsError(
                    f"redact names {name!r}, the entity attribute: audit records are filtered by entity, "
                    "so it cannot be redacted"
                )
        if len(set(self.redact)) != len(self.redact):
            raise SettingsError(f"redact {list(self.redact)!r} names an attribute twice")
        if self.redaction not in ("hash", "drop"):
            raise SettingsError(f"redaction {self.redaction!r} must be 'hash' or 'drop'")
        shards = self.day_shards
        if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= 100:
            raise SettingsError(f"day_shards {shards!r} must be an int from 1 to 100")
        ttl = self.retention_seconds
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 86_400):
            raise SettingsError(f"retention_seconds {ttl!r} must be an int >= 86400 (one day) or None")
        if self.audit_ttl_attribute in AUDIT_ATTRIBUTES:
            raise SettingsError(
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
        """Parse :meth:`to_json`; SettingsError for another format or version, or bad values."""
        try:
            data = load_json(text, f"audit spec {str(text)[:40]!r}", SettingsError)
            valid = isinstance(data, dict) and data.pop("format", None) == FORMAT and data.pop("version", None) == VERSION
        except SettingsError:
            raise
        except (ValueError, TypeError):
            valid = False
        if not valid:
            raise SettingsError(f"audit spec {str(text)[:80]!r} is not a {FORMAT} version {VERSION} document")
        try:
            return cls(**data)
        except TypeError as exc:
            raise SettingsError(f"audit spec {str(text)[:80]!r} has unknown or missing fields: {exc}") from exc


def _check_name(what: str, value: Any) -> None:
    if not isinstance(value, str) or not value or len(value.encode("utf-8", "surrogatepass")) > 255:
        raise SettingsError(f"{what} {value!r} must be a non-empty attribute name of at most 255 bytes")


def check_salt(spec: AuditSpec, salt: str | None) -> None:
    """RedactionError unless ``salt`` is usable when ``spec`` hashes redacted attributes."""
    if spec.needs_salt and (not isinstance(salt, str) or not salt.strip()):
        raise RedactionError(
            f"redaction='hash' of {list(spec.redact)!r} needs a secret salt, but none is set "
            f"(environment variable {ENV_AUDIT_SALT} or {ENV_AUDIT_SALT_SECRET}); refusing to hash without a salt "
            "or to store clear text"
        )
