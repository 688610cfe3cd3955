"""Request builders: Put/Update/Delete/ConditionCheck parameters for one entity item.

Single-item calls and transactions use the same builders, so a transactional put enforces
exactly what a plain put does (derived keys, create-only, optimistic locking, TTL).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from . import _aws, ttl
from .exceptions import (
    ConditionFailedError,
    ItemExistsError,
    ItemNotFoundError,
    UpdateRejectedError,
    VersionConflictError,
)
from .items import ItemCodec, check_size, to_dynamo

if TYPE_CHECKING:
    from ..model import Entity


class Expression:
    """Collects ``#name`` / ``:value`` placeholders for one request."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attr: str) -> str:
        for placeholder, existing in self.names.items():
            if existing == attr:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attr
        return placeholder

    def value(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.names:
            params["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            params["ExpressionAttributeValues"] = _aws.serialize(self.values)
        return params


@dataclass(frozen=True)
class Request:
    """One write: the DynamoDB parameters plus what is needed to explain a failed condition."""

    operation: str  # "Put", "Update", "Delete", "ConditionCheck"
    params: dict[str, Any]
    entity: str
    key: dict[str, Any]
    kind: str  # "plain", "create_only", "must_exist", "version"
    expected_version: int | None = None

    def condition_error(self, error: ConditionFailedError, old_item: Mapping[str, Any] | None) -> ConditionFailedError:
        """Turn a generic condition failure into the specific error this request implies."""
        text = f"{self.operation} {self.entity} {self.key!r}"
        common = {"key": self.key, "code": error.code, "operation": error.operation}
        if self.kind == "create_only":
            return ItemExistsError(f"{text}: an item with this key already exists (create_only=True)", **common)
        if self.kind == "version" and old_item is not None:
            return VersionConflictError(
                f"{text}: expected version {self.expected_version}, but the stored item has a different version "
                "(it was changed concurrently); re-read it and retry",
                expected=self.expected_version, **common,
            )
        if old_item is None and self.kind in ("must_exist", "version"):
            return ItemNotFoundError(f"{text}: no such item", **common)
        return error


def key_params(codec_: ItemCodec, entity: Entity, key_values: Mapping[str, Any]) -> dict[str, Any]:
    return codec_.table_key(entity, key_values)


def ttl_value(
    codec_: ItemCodec, entity: Entity, expires_in: timedelta | None, expires_at: datetime | None
) -> tuple[str, int] | None:
    if expires_in is None and expires_at is None:
        return None
    attr = codec_.model.ttl_attribute
    if attr is None:
        raise UpdateRejectedError(
            f"{entity.name}: expires_in/expires_at given, but model {codec_.model.name!r} has no ttl_attribute"
        )
    return attr, ttl.expiry(expires_in=expires_in, expires_at=expires_at)


def put(
    codec_: ItemCodec,
    table: str,
    entity: Entity,
    attrs: Mapping[str, Any],
    *,
    create_only: bool = False,
    expected_version: int | None = None,
    expires_in: timedelta | None = None,
    expires_at: datetime | None = None,
) -> Request:
    attrs = dict(attrs)
    if expected_version is not None:
        _version(expected_version)
    expiry = ttl_value(codec_, entity, expires_in, expires_at)
    if expiry:
        attrs[expiry[0]] = expiry[1]
    elif codec_.model.ttl_attribute and attrs.get(codec_.model.ttl_attribute) is not None:
        name = codec_.model.ttl_attribute
        attrs[name] = ttl.validate_ttl_value(attrs[name], attribute=name)
    version_attr = entity.version_attribute
    if expected_version is not None and version_attr is None:
        raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
    if expected_version is not None and create_only:
        raise UpdateRejectedError(f"{entity.name}: create_only and expected_version exclude each other")
    if version_attr:
        attrs.pop(version_attr, None)
    item = codec_.build_item(entity, attrs)
    expr = Expression()
    params: dict[str, Any] = {"TableName": table}
    kind = "plain"
    if version_attr:
        item[version_attr] = (expected_version + 1) if expected_version is not None else 1
    if create_only:
        params["ConditionExpression"] = f"attribute_not_exists({expr.name(codec_.model.pk_attribute)})"
        kind = "create_only"
    elif expected_version is not None:
        params["ConditionExpression"] = f"{expr.name(version_attr)} = {expr.value(_version(expected_version))}"  # type: ignore[arg-type]
        kind = "version"
    check_size(item, where=entity.name)
    params["Item"] = _aws.serialize(item)
    key = codec_.table_key(entity, item)
    return Request("Put", expr.apply(params), entity.name, key, kind, expected_version)


def update(
    codec_: ItemCodec,
    table: str,
    entity: Entity,
    key_values: Mapping[str, Any],
    *,
    set: Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the UpdateExpression clause
    remove: Iterable[str] = (),
    add: Mapping[str, Any] | None = None,
    expected_version: int | None = None,
    must_exist: bool = True,
    expires_in: timedelta | None = None,
    expires_at: datetime | None = None,
) -> Request:
    if isinstance(remove, (str, bytes)):
        raise UpdateRejectedError(
            f"{entity.name}: remove={remove!r} must be a list of attribute names, not a string "
            "(a string would be read as one name per character)"
        )
    if expected_version is not None:
        _version(expected_version)
    set_values = dict(set or {})
    expiry = ttl_value(codec_, entity, expires_in, expires_at)
    if expiry:
        set_values[expiry[0]] = expiry[1]
    key = codec_.table_key(entity, key_values)
    plan = codec_.plan_update(entity, key_values, set_values, remove)
    for name in add or {}:
        if name in codec_.reserved or name in entity.fields or name == entity.version_attribute:  # type: ignore[operator]
            raise UpdateRejectedError(
                f"{entity.name}: ADD on {name!r} is not allowed: key inputs and managed attributes must be SET"
            )
    add = {name: to_dynamo(value, where=f"{entity.name}.{name} (ADD)") for name, value in (add or {}).items()}
    for name, value in add.items():
        if not isinstance(value, (int, Decimal, set)) or isinstance(value, bool):
            raise UpdateRejectedError(
                f"{entity.name}: ADD {name}={value!r} needs a number or a set (ADD adds to numbers and sets)"
            )
    check_size({**plan.set, **add}, where=f"{entity.name} update of {key!r}")
    expr = Expression()
    sets = [f"{expr.name(k)} = {expr.value(v)}" for k, v in plan.set.items()]
    adds = [f"{expr.name(k)} {expr.value(v)}" for k, v in (add or {}).items()]
    conditions: list[str] = []
    kind = "plain"
    version_attr = entity.version_attribute
    if expected_version is not None and version_attr is None:
        raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
    if version_attr:
        v = expr.name(version_attr)
        sets.append(f"{v} = if_not_exists({v}, {expr.value(0)}) + {expr.value(1)}")
        if expected_version is not None:
            conditions.append(f"{v} = {expr.value(_version(expected_version))}")
            kind = "version"
    if must_exist:
        conditions.append(f"attribute_exists({expr.name(codec_.model.pk_attribute)})")
        kind = "version" if kind == "version" else "must_exist"
    if not sets and not plan.remove and not adds:
        raise UpdateRejectedError(f"{entity.name}: update of {key!r} changes nothing (no set, remove or add)")
    clauses = []
    if sets:
        clauses.append("SET " + ", ".join(sets))
    if plan.remove:
        clauses.append("REMOVE " + ", ".join(expr.name(a) for a in plan.remove))
    if adds:
        clauses.append("ADD " + ", ".join(adds))
    params: dict[str, Any] = {"TableName": table, "Key": _aws.serialize(key), "UpdateExpression": " ".join(clauses)}
    if conditions:
        params["ConditionExpression"] = " AND ".join(conditions)
    return Request("Update", expr.apply(params), entity.name, key, kind, expected_version)


def delete(
    codec_: ItemCodec,
    table: str,
    entity: Entity,
    key_values: Mapping[str, Any],
    *,
    expected_version: int | None = None,
    must_exist: bool = False,
) -> Request:
    key = codec_.table_key(entity, key_values)
    expr = Expression()
    params: dict[str, Any] = {"TableName": table, "Key": _aws.serialize(key)}
    kind = "plain"
    conditions = []
    if expected_version is not None:
        if entity.version_attribute is None:
            raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
        conditions.append(f"{expr.name(entity.version_attribute)} = {expr.value(_version(expected_version))}")
        kind = "version"
    elif must_exist:
        conditions.append(f"attribute_exists({expr.name(codec_.model.pk_attribute)})")
        kind = "must_exist"
    if conditions:
        params["ConditionExpression"] = " AND ".join(conditions)
    return Request("Delete", expr.apply(params), entity.name, key, kind, expected_version)


def condition_check(
    codec_: ItemCodec, table: str, entity: Entity, key_values: Mapping[str, Any], *, exists: bool = True,
    expected_version: int | None = None,
) -> Request:
    key = codec_.table_key(entity, key_values)
    expr = Expression()
    pk = expr.name(codec_.model.pk_attribute)
    conditions = [f"attribute_exists({pk})" if exists else f"attribute_not_exists({pk})"]
    kind = "must_exist" if exists else "create_only"
    if expected_version is not None:
        if entity.version_attribute is None:
            raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
        conditions.append(f"{expr.name(entity.version_attribute)} = {expr.value(_version(expected_version))}")
        kind = "version"
    params = {"TableName": table, "Key": _aws.serialize(key), "ConditionExpression": " AND ".join(conditions)}
    return Request("ConditionCheck", expr.apply(params), entity.name, key, kind, expected_version)


def _version(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UpdateRejectedError(f"expected_version {value!r} must be a non-negative int")
    return value
