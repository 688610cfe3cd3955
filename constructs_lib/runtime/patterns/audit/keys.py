"""The audit table's key layout; ``StreamAudit`` creates exactly this (every key is a string)::

    PK     = ITEM#{pk}[#{sk}]                              one partition per audited item
    SK     = {changed_at}#{sequence number, 40 digits}     Query newest first = the item's history
    GSI1PK = DAY#{YYYY-MM-DD}#{shard:03d}   index "ByDay"  a day's changes over day_shards partitions
    GSI1SK = {SK}#{PK}                                     unique and in time order

Source key values are escaped (S as is, N as decimal text, B as base64); a PK over 2,048 bytes
becomes ``ITEM#$H#`` + the SHA-256 of the full text, and a GSI1SK over 1,024 bytes uses that form.
``changed_at`` is ApproximateCreationDateTime in UTC, to the millisecond; the day shard is
``sha256(PK) % day_shards``. See docs/adr/0013-audit-key-layout-and-idempotency.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import timedelta
from decimal import Decimal
from typing import Any

from ... import key_segments
from ...exceptions import KeyValueError
from .spec import EPOCH, HASHED_PREFIX, ITEM_PREFIX, MAX_PK_BYTES, AuditSpec
from .values import b64, binary, number_text, typed_tag, utf8_len


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
        raise KeyValueError(
            f"source key {names!r} does not match the key attributes {list(spec.key_attributes)!r} of the audit spec")
    text = ITEM_PREFIX + "#".join(key_segments.escape(_key_text(keys[a], a), field=a) for a in spec.key_attributes)
    return text if utf8_len(text) <= MAX_PK_BYTES else HASHED_PREFIX + sha256_hex(text)


def typed_key(key: Mapping[str, Any]) -> dict[str, Any]:
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
