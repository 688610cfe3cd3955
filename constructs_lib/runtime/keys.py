"""Template-level keys: build, bound and parse keys of a model's key templates.

Values are encoded by :mod:`constructs_lib.runtime.key_segments` (escaping, zero padding, ISO-8601
UTC); this module joins them with the literals of a :class:`~constructs_lib.model.KeyTemplate`.

Prefix rules (what makes tenant/collection reads safe):

* a *prefix* built from the leading fields of a template always ends on the separator, so
  ``USER#acme#`` can never match ``USER#acme%23x#...`` or ``USER#acmecorp#...``;
* when every field is given, "this key and everything under it" is the closed range
  ``[key, key + "$"]``: escaped values never contain ``$``, so nothing else falls in it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from . import key_segments
from .exceptions import KeyValueError, TenantAccessError

if TYPE_CHECKING:
    from ..model import KeyTemplate, Model
    from ..model import ResolvedEntity as Entity

SEPARATOR = key_segments.SEPARATOR
UPPER = key_segments.UPPER_BOUND

_MISSING = object()

# What buckets.bucket() produces for each granularity (strptime format; None = ISO week). The
# patterns compile on first use (re's cache): only models with time-bucketed keys parse buckets.
_BUCKET_FORMATS: dict[str, tuple[str, str | None]] = {
    "year": (r"[0-9]{4}", "%Y"),
    "month": (r"[0-9]{4}-[0-9]{2}", "%Y-%m"),
    "day": (r"[0-9]{4}-[0-9]{2}-[0-9]{2}", "%Y-%m-%d"),
    "hour": (r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}", "%Y-%m-%dT%H"),
    "minute": (r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}", "%Y-%m-%dT%H:%M"),
    "week": (r"([0-9]{4})-W([0-9]{2})", None),
}


def _parse_bucket(text: str, granularity: str, *, key: str, field: str) -> str:
    """Return a bucket component as text, rejecting anything :func:`buckets.bucket` cannot produce."""
    pattern, fmt = _BUCKET_FORMATS[granularity]
    match = re.fullmatch(pattern, text)
    try:
        if match is None:
            raise ValueError
        if fmt is None:
            date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
        else:
            datetime.strptime(text, fmt)
    except ValueError:
        raise KeyValueError(
            f"key {key!r}: component {text!r} of field {field!r} is not a canonical {granularity!r} bucket"
        ) from None
    return text


def segment_value(entity: Entity, placeholder: Any, value: Any) -> str:
    """Encode one placeholder's value (applying its time bucket, if any)."""
    name = f"{entity.name}.{placeholder.field}"
    spec = entity.fields.get(placeholder.field) or entity.field(placeholder.field)
    if placeholder.bucket:
        from . import buckets  # loaded by models with time-bucketed keys only

        return key_segments.escape(buckets.bucket(value, placeholder.bucket, field=name), field=name)
    return key_segments.encode_declared(value, spec.kind, spec.width, name)


def build(
    entity: Entity, template: KeyTemplate, values: Mapping[str, Any], *, where: str = "key",
    memo: dict[Any, str] | None = None,
) -> str:
    """Build a complete key; every field of ``template`` must be in ``values``.

    ``memo`` (optional) keeps each placeholder's encoded value, by ``(field, bucket)``, across
    calls with the same ``values``, so the templates of one item encode each field once.

    Raises
    ------
    KeyValueError
        Naming the missing field or the bad value.
    """
    parts: list[str] = []
    for seg in template.segments:
        if isinstance(seg, str):
            parts.append(seg)
            continue
        if memo is not None:
            text = memo.get((seg.field, seg.bucket))
            if text is not None:
                parts.append(text)
                continue
        value = values.get(seg.field, _MISSING)
        if value is _MISSING or value is None:
            raise KeyValueError(
                f"{entity.name} {where} {template.source!r} needs field {seg.field!r}, which is missing "
                f"(given: {', '.join(sorted(values)) or 'nothing'})"
            )
        text = segment_value(entity, seg, value)
        if memo is not None:
            memo[(seg.field, seg.bucket)] = text
        parts.append(text)
    return SEPARATOR.join(parts)


def partial(entity: Entity, template: KeyTemplate, values: Mapping[str, Any], fields: tuple[str, ...]) -> tuple[str, bool]:
    """Build the key from the leading ``fields`` (which must all be in ``values``).

    Returns ``(text, complete)``. When incomplete, ``text`` holds the literals and values up
    to the next missing placeholder *without* a trailing separator (callers add ``#`` for a
    prefix or ``$`` for an upper bound).
    """
    parts: list[str] = []
    given = set(fields)
    for seg in template.segments:
        if isinstance(seg, str):
            parts.append(seg)
            continue
        if seg.field not in given:
            return SEPARATOR.join(parts), False
        value = values.get(seg.field, _MISSING)
        if value is _MISSING or value is None:
            raise KeyValueError(f"{entity.name} key {template.source!r} needs field {seg.field!r}, which is missing")
        parts.append(segment_value(entity, seg, value))
    return SEPARATOR.join(parts), True


def prefix(entity: Entity, template: KeyTemplate, values: Mapping[str, Any], fields: tuple[str, ...]) -> tuple[str, bool]:
    """A begins_with prefix from the leading ``fields``: ends with ``#`` unless complete."""
    text, complete = partial(entity, template, values, fields)
    if complete:
        return text, True
    return (text + SEPARATOR if text else ""), False


def parse(entity: Entity, template: KeyTemplate, key: str) -> dict[str, Any]:
    """Parse a key built from ``template`` back into its field values.

    Bucketed placeholders are returned under ``"field:bucket"`` as their text. A repeated
    field must carry the same value everywhere.

    Raises
    ------
    KeyValueError
        If ``key`` was not built from ``template`` (literal mismatch, segment count, bad escape,
        a bucket component :func:`buckets.bucket` cannot produce).
    """
    if not isinstance(key, str):
        raise KeyValueError(f"{entity.name} key {key!r} must be a string to parse with {template.source!r}")
    parts = key.split(SEPARATOR)
    if len(parts) != len(template.segments):
        raise KeyValueError(
            f"key {key!r} does not match template {template.source!r} of entity {entity.name!r}: "
            f"{len(parts)} segments, expected {len(template.segments)}"
        )
    out: dict[str, Any] = {}
    for seg, text in zip(template.segments, parts, strict=True):
        if isinstance(seg, str):
            if seg != text:
                raise KeyValueError(
                    f"key {key!r} does not match template {template.source!r} of entity {entity.name!r}: "
                    f"literal {text!r} should be {seg!r}"
                )
            continue
        name = f"{entity.name}.{seg.field}"
        if seg.bucket:
            out[f"{seg.field}:{seg.bucket}"] = _parse_bucket(text, seg.bucket, key=key, field=name)
            continue
        spec = entity.field(seg.field)
        value = key_segments.decode(text, spec.kind, width=spec.width, field=name)
        if seg.field in out and out[seg.field] != value:
            raise KeyValueError(f"key {key!r}: field {seg.field!r} appears twice with different values")
        out[seg.field] = value
    return out


# Ad-hoc keys (no template) ------------------------------------------------------------------------
def composite_key(*values: str) -> str:
    """Join string values into one key, each escaped: ``composite_key("a#b", "c") == "a%23b#c"``.

    For keys outside the model (e.g. a cache key or an external id). Parse back with
    :func:`split_composite_key`.

    Raises
    ------
    KeyValueError
        If no value is given, or a value is empty or not a string.
    """
    if not values:
        raise KeyValueError("composite_key needs at least one value")
    return SEPARATOR.join(key_segments.encode(v, "string", field=f"part {i}") for i, v in enumerate(values))


def split_composite_key(key: str) -> tuple[str, ...]:
    """The values a :func:`composite_key` was built from."""
    if not isinstance(key, str) or not key:
        raise KeyValueError(f"composite key {key!r} must be a non-empty string")
    return tuple(key_segments.unescape(part, field=f"part {i}") for i, part in enumerate(key.split(SEPARATOR)))


def entity_key(entity_type: str, *ids: str) -> str:
    """``ENTITY#id...`` — a literal type prefix followed by escaped ids:
    ``entity_key("USER", "42") == "USER#42"``.

    Raises
    ------
    KeyValueError
        If the type is not a valid literal (letters, digits, ``_``, ``-``, ``.``) or no id is given.
    """
    if not isinstance(entity_type, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]+", entity_type):
        raise KeyValueError(
            f"entity type {entity_type!r} must be a non-empty literal of letters, digits, '_', '-' or '.'"
        )
    if not ids:
        raise KeyValueError(f"entity_key({entity_type!r}) needs at least one id")
    return entity_type + SEPARATOR + composite_key(*ids)


def _tenant_field_of(model: Model) -> str:
    """``model``'s tenant field, else :class:`TenantAccessError`: ``for_tenant`` needs one."""
    if model.tenant_field is None:
        raise TenantAccessError(f"model {model.name!r} declares no tenant_field; for_tenant() needs one")
    return model.tenant_field


def check_tenant_id(value: Any, *, field: str = "tenant") -> str:
    """Return ``value`` if it is a valid tenant id, else raise :class:`KeyValueError` naming the rule."""
    from ..model.tenancy import (  # the model package loads on first use only
        TENANT_ID_RE,
        TENANT_ID_RULE,
    )

    if not isinstance(value, str) or not TENANT_ID_RE.fullmatch(value):
        raise KeyValueError(f"tenant id {value!r} (field {field!r}) must be {TENANT_ID_RULE}")
    return value
