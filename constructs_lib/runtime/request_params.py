"""Request builders: Put/Update/Delete/ConditionCheck parameters for one entity item, and Query
parameters for a declared access pattern.

Single-item calls and transactions use the same builders, so a transactional put enforces
exactly what a plain put does (derived keys, create-only, optimistic locking, TTL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from . import _aws, keys, ttl
from ._records import frozen_record
from .exceptions import (
    ConditionFailedError,
    ConditionNotMetError,
    ForeignItemError,
    ItemExistsError,
    ItemNotFoundError,
    KeyValueError,
    UpdateRejectedError,
    VersionConflictError,
)
from .items import ItemMapper, require_fields
from .limits import MAX_EXPRESSION_BYTES, MAX_PK_BYTES, MAX_SK_BYTES
from .values import check_key_size, check_size

if TYPE_CHECKING:
    from ..model import Model, ResolvedPattern
    from ..model import ResolvedEntity as Entity
    from .conditions import Condition, Name, Rendered


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

    def add(self, params: dict[str, Any], clause: str, rendered: Rendered) -> None:
        """AND ``rendered`` (its own placeholders) into ``params[clause]``, keeping what is there."""
        existing = params.get(clause)
        params[clause] = f"({existing}) AND ({rendered.text})" if existing else rendered.text
        self.names.update(rendered.names)
        self.values.update(rendered.values)

    def apply(self, params: dict[str, Any]) -> dict[str, Any]:
        for clause in ("UpdateExpression", "ConditionExpression", "KeyConditionExpression", "FilterExpression",
                       "ProjectionExpression"):
            text = params.get(clause)
            if text is not None and len(text.encode("utf-8")) > MAX_EXPRESSION_BYTES:
                raise UpdateRejectedError(
                    f"{clause} is {len(text.encode('utf-8'))} bytes; DynamoDB expressions are limited to "
                    f"{MAX_EXPRESSION_BYTES} bytes (4 KB) — split the change into several updates, or simplify it"
                )
        if self.names:
            params["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            params["ExpressionAttributeValues"] = _aws.serialize(self.values)
        return params


@frozen_record
class Request:
    """One write: the DynamoDB parameters plus what is needed to explain a failed condition."""

    operation: str  # "Put", "Update", "Delete", "ConditionCheck"
    params: dict[str, Any]
    entity: str
    key: dict[str, Any]
    kind: str  # "plain", "create_only", "must_exist", "version"
    expected_version: int | None = None
    #: An upsert's required attributes it does not write (so it could not create the item).
    create_missing: tuple[str, ...] = ()
    #: A put's item as Python values (what ``params["Item"]`` serializes), or None.
    item: dict[str, Any] | None = None
    #: The caller's ``condition=`` (ANDed with the model's own).
    condition: Condition | None = None
    #: The model's own condition, to tell whose failed: None, ("absent",), ("present",), ("never",),
    #: ("version", attribute, n) or ("unversioned", attribute) — see :func:`own_condition_held`.
    own: tuple[Any, ...] | None = None

    def __init__(
        self, operation: str, params: dict[str, Any], entity: str, key: dict[str, Any], kind: str,
        expected_version: int | None = None, create_missing: tuple[str, ...] = (), item: dict[str, Any] | None = None,
        condition: Condition | None = None, own: tuple[Any, ...] | None = None,
    ) -> None:
        self.__dict__.update(operation=operation, params=params, entity=entity, key=key, kind=kind,
                             expected_version=expected_version, create_missing=create_missing, item=item,
                             condition=condition, own=own)

    def user_condition_failed(self, old_item: Mapping[str, Any] | None) -> bool:
        """Whether a failed condition was the caller's: the model's own held on ``old_item``."""
        return self.condition is not None and own_condition_held(self.own, old_item)

    def condition_error(
        self, error: ConditionFailedError, old_item: Mapping[str, Any] | None,
        decode: Callable[[Mapping[str, Any]], dict[str, Any]] = dict,
    ) -> ConditionFailedError:
        """Turn a generic condition failure into the specific error this request implies
        (``decode`` makes the stored item an application item for :class:`ConditionNotMetError`)."""
        text = f"{self.operation} {self.entity} {self.key!r}"
        common: dict[str, Any] = {"key": self.key, "code": error.code, "operation": error.operation}
        if self.user_condition_failed(old_item):
            item = None if old_item is None else decode(old_item)
            return ConditionNotMetError(  # the stored item is in .item, not in the message (which may be logged)
                f"{text}: condition {self.condition!r} is not met by {'no item' if item is None else 'the stored item'}",
                item=item, condition=self.condition, **common)
        if self.kind == "create_only":
            return ItemExistsError(f"{text}: an item with this key already exists (create_only=True)", **common)
        if self.kind == "version" and old_item is not None:
            return VersionConflictError(
                f"{text}: expected version {self.expected_version}, but the stored item has a different version "
                "(it was changed concurrently); re-read it and retry",
                expected=self.expected_version, **common,
            )
        if old_item is None and self.create_missing:
            return ItemNotFoundError(
                f"{text}: no such item, and the update (must_exist=False) cannot create it: it does not set the "
                f"required attribute(s) {list(self.create_missing)!r}", **common,
            )
        if old_item is None and self.kind in ("must_exist", "version"):
            return ItemNotFoundError(f"{text}: no such item", **common)
        return error


def own_condition_held(own: tuple[Any, ...] | None, old: Mapping[str, Any] | None) -> bool:
    """Whether the model's own condition ``own`` (see :attr:`Request.own`) holds on the stored
    item ``old`` (None: no item) — so a failure of the combined condition was the caller's."""
    if own is None:
        return True
    if own[0] == "absent":
        return old is None
    if own[0] == "never":  # exists=False with an expected version: nothing satisfies both
        return False
    if old is None:
        return False
    if own[0] == "version":
        return bool(old.get(own[1]) == own[2])
    if own[0] == "unversioned":
        return own[1] not in old
    return True  # "present"


def add_condition(
    params: dict[str, Any], expr: Expression, model: Model, entity: Entity, condition: Condition | None
) -> None:
    """AND the caller's ``condition`` (placeholders ``#c``/``:c``) into ``params``'
    ``ConditionExpression``, keeping the model's own."""
    if condition is not None:
        from .conditions import Attributes, render  # loaded by functions that use conditions only

        expr.add(params, "ConditionExpression", render(condition, Attributes(model, [entity]), "c"))


def table_key(model: Model) -> list[str]:
    return [model.pk_attribute] + ([model.sk_attribute] if model.has_sort_key else [])


def item_projection(model: Model, entities: Sequence[Entity], attributes: Iterable[str | Name] | None) -> dict[str, Any]:
    """``ProjectionExpression`` and its names for a GetItem/BatchGetItem of ``attributes`` plus
    the entity attribute and the table key (what an item needs to parse back); {}: whole items."""
    if attributes is None:
        return {}
    from .conditions import Attributes, projection

    expr, params = Expression(), dict[str, Any]()
    expr.add(params, "ProjectionExpression",
             projection(attributes, Attributes(model, entities), [model.entity_attribute, *table_key(model)]))
    return expr.apply(params)


def ttl_value(
    mapper: ItemMapper, entity: Entity, expires_in: timedelta | None, expires_at: datetime | None
) -> tuple[str, int] | None:
    if expires_in is None and expires_at is None:
        return None
    attr = mapper.model.ttl_attribute
    if attr is None:
        raise UpdateRejectedError(
            f"{entity.name}: expires_in/expires_at given, but model {mapper.model.name!r} has no ttl_attribute"
        )
    return attr, ttl.expiry(expires_in=expires_in, expires_at=expires_at)


def put(
    mapper: ItemMapper,
    table: str,
    entity: Entity,
    attrs: Mapping[str, Any],
    *,
    create_only: bool = False,
    expected_version: int | None = None,
    expires_in: timedelta | None = None,
    expires_at: datetime | None = None,
    condition: Condition | None = None,
) -> Request:
    if expected_version is not None:
        _version(expected_version)
    expiry = ttl_value(mapper, entity, expires_in, expires_at)
    ttl_attr = mapper.model.ttl_attribute
    version_attr = entity.version_attribute
    given = attrs
    if expiry or version_attr or (ttl_attr and attrs.get(ttl_attr) is not None):
        changed = dict(attrs)  # (the caller's mapping stays as it was)
        if expiry:
            changed[expiry[0]] = expiry[1]
        elif ttl_attr:
            if changed.get(ttl_attr) is not None:
                changed[ttl_attr] = ttl.validate_ttl_value(changed[ttl_attr], attribute=ttl_attr)
        given = changed
    if expected_version is not None and version_attr is None:
        raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
    if expected_version is not None and create_only:
        raise UpdateRejectedError(f"{entity.name}: create_only and expected_version exclude each other")
    if version_attr:
        changed.pop(version_attr, None)
    item = mapper.build_item(entity, given, check=False)  # checked once, below, with its version
    expr = Expression()
    params: dict[str, Any] = {"TableName": table}
    kind = "plain"
    own: tuple[Any, ...] | None = None
    if version_attr:
        item[version_attr] = (expected_version + 1) if expected_version is not None else 1
    if create_only or (version_attr and expected_version is None):
        # A plain put of a versioned entity starts as a create; TableClient.put continues the
        # stored sequence when the item exists (see continue_version), so versions never go back.
        params["ConditionExpression"] = f"attribute_not_exists({expr.name(mapper.model.pk_attribute)})"
        kind = "create_only" if create_only else "continue_version"
        own = ("absent",)
    elif expected_version is not None and version_attr is not None:  # (no version_attr was refused above)
        params["ConditionExpression"] = f"{expr.name(version_attr)} = {expr.value(_version(expected_version))}"
        kind = "version"
        own = ("version", version_attr, expected_version)
    check_size(item, where=entity.name)
    params["Item"] = _aws.serialize(item)
    key = {a: item[a] for a in (mapper.model.pk_attribute, mapper.model.sk_attribute) if a in item}
    if condition is not None:
        add_condition(params, expr, mapper.model, entity, condition)
    return Request("Put", expr.apply(params), entity.name, key, kind, expected_version, item=item, condition=condition,
                   own=own)


def continue_version(mapper: ItemMapper, entity: Entity, req: Request, stored: Mapping[str, Any] | None) -> Request:
    """The next attempt of a plain put of a versioned entity, after its condition failed.

    ``stored`` is the item found (``ALL_OLD``), or None if it vanished meanwhile. The put is
    rebuilt to overwrite exactly that version with the next one (or to create again), so a
    plain put never moves a version backwards and never overwrites a write it did not see.
    """
    version_attr = entity.version_attribute
    assert version_attr is not None and req.kind == "continue_version"
    expr = Expression()
    params = {k: v for k, v in req.params.items() if not k.startswith("Expression") and k != "ConditionExpression"}
    item = dict(params["Item"])
    if stored is None:
        item[version_attr] = {"N": "1"}
        params["ConditionExpression"] = f"attribute_not_exists({expr.name(mapper.model.pk_attribute)})"
        own: tuple[Any, ...] = ("absent",)
    else:
        current = stored.get(version_attr)
        if current is None:  # written before the entity declared its version attribute
            params["ConditionExpression"] = (
                f"attribute_exists({expr.name(mapper.model.pk_attribute)}) AND attribute_not_exists({expr.name(version_attr)})"
            )
            own = ("unversioned", version_attr)
            current = 0
        else:
            if isinstance(current, Decimal) and current == current.to_integral_value():
                current = int(current)
            if isinstance(current, bool) or not isinstance(current, int) or current < 0:
                raise UpdateRejectedError(
                    f"{entity.name} {req.key!r}: stored {version_attr}={current!r} is not a non-negative integer "
                    "version; the put cannot continue its sequence"
                )
            params["ConditionExpression"] = f"{expr.name(version_attr)} = {expr.value(current)}"
            own = ("version", version_attr, current)
        item[version_attr] = {"N": str(current + 1)}
    params["Item"] = item
    if req.condition is not None:
        add_condition(params, expr, mapper.model, entity, req.condition)
    return Request("Put", expr.apply(params), req.entity, req.key, req.kind, req.expected_version,
                   condition=req.condition, own=own)


def update(
    mapper: ItemMapper,
    table: str,
    entity: Entity,
    key_values: Mapping[str, Any],
    *,
    set: Mapping[str, Any] | None = None,  # noqa: A002 - mirrors the UpdateExpression clause
    remove: Iterable[str] = (),
    add: Mapping[str, Any] | None = None,
    delete: Mapping[str, Any] | None = None,
    expected_version: int | None = None,
    must_exist: bool = True,
    expires_in: timedelta | None = None,
    expires_at: datetime | None = None,
    condition: Condition | None = None,
) -> Request:
    if isinstance(remove, (str, bytes)):
        raise UpdateRejectedError(
            f"{entity.name}: remove={remove!r} must be a list of attribute names, not a string "
            "(a string would be read as one name per character)"
        )
    for what, mapping in (("set", set), ("add", add), ("delete", delete)):
        if mapping is not None and not isinstance(mapping, Mapping):
            raise UpdateRejectedError(f"{entity.name}: {what}={mapping!r:.60} must be a mapping of attribute name to value")
    if expected_version is not None:
        _version(expected_version)
    set_values = dict(set or {})
    expiry = ttl_value(mapper, entity, expires_in, expires_at)
    if expiry:
        set_values[expiry[0]] = expiry[1]
    key = mapper.key_values(entity, key_values, what="update key")
    plan = mapper.plan_update(entity, key_values, set_values, remove, add, delete, upsert=not must_exist)
    check_size({**plan.set, **plan.add}, where=f"{entity.name} update of {key!r}")
    expr = Expression()
    sets = [f"{expr.name(k)} = {expr.value(v)}" for k, v in plan.set.items()]
    conditions: list[str] = []
    kind = "plain"
    own: tuple[Any, ...] | None = None
    version_attr = entity.version_attribute
    if expected_version is not None and version_attr is None:
        raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
    if not plan.set and not plan.remove and not plan.add and not plan.delete:
        raise UpdateRejectedError(f"{entity.name}: update of {key!r} changes nothing (no set, remove, add or delete)")
    if version_attr:
        v = expr.name(version_attr)
        sets.append(f"{v} = if_not_exists({v}, {expr.value(0)}) + {expr.value(1)}")
        if expected_version is not None:
            conditions.append(f"{v} = {expr.value(_version(expected_version))}")
            kind = "version"
            own = ("version", version_attr, expected_version)
    if must_exist or plan.create_missing:
        # An upsert that lacks required attributes may only update an existing item.
        conditions.append(f"attribute_exists({expr.name(mapper.model.pk_attribute)})")
        if kind != "version":
            kind = "must_exist"
            own = ("present",)
    clauses = []
    if sets:
        clauses.append("SET " + ", ".join(sets))
    if plan.remove:
        clauses.append("REMOVE " + ", ".join(expr.name(a) for a in plan.remove))
    if plan.add:
        clauses.append("ADD " + ", ".join(f"{expr.name(k)} {expr.value(v)}" for k, v in plan.add.items()))
    if plan.delete:
        clauses.append("DELETE " + ", ".join(f"{expr.name(k)} {expr.value(v)}" for k, v in plan.delete.items()))
    params: dict[str, Any] = {"TableName": table, "Key": _aws.serialize(key), "UpdateExpression": " ".join(clauses)}
    if conditions:
        params["ConditionExpression"] = " AND ".join(conditions)
    if condition is not None:
        add_condition(params, expr, mapper.model, entity, condition)
    return Request("Update", expr.apply(params), entity.name, key, kind, expected_version,
                   create_missing=tuple(plan.create_missing), condition=condition, own=own)


def delete(
    mapper: ItemMapper,
    table: str,
    entity: Entity,
    key_values: Mapping[str, Any],
    *,
    expected_version: int | None = None,
    must_exist: bool = False,
    condition: Condition | None = None,
) -> Request:
    key = mapper.key_values(entity, key_values, what="delete key")
    expr = Expression()
    params: dict[str, Any] = {"TableName": table, "Key": _aws.serialize(key)}
    kind = "plain"
    own: tuple[Any, ...] | None = None
    conditions = []
    if expected_version is not None:
        if entity.version_attribute is None:
            raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
        conditions.append(f"{expr.name(entity.version_attribute)} = {expr.value(_version(expected_version))}")
        kind = "version"
        own = ("version", entity.version_attribute, expected_version)
    elif must_exist:
        conditions.append(f"attribute_exists({expr.name(mapper.model.pk_attribute)})")
        kind = "must_exist"
        own = ("present",)
    if conditions:
        params["ConditionExpression"] = " AND ".join(conditions)
    if condition is not None:
        add_condition(params, expr, mapper.model, entity, condition)
    return Request("Delete", expr.apply(params), entity.name, key, kind, expected_version, condition=condition,
                   own=own)


def condition_check(
    mapper: ItemMapper, table: str, entity: Entity, key_values: Mapping[str, Any], *, exists: bool = True,
    expected_version: int | None = None, condition: Condition | None = None,
) -> Request:
    key = mapper.key_values(entity, key_values, what="condition check key")
    expr = Expression()
    pk = expr.name(mapper.model.pk_attribute)
    conditions = [f"attribute_exists({pk})" if exists else f"attribute_not_exists({pk})"]
    kind = "must_exist" if exists else "create_only"
    own: tuple[Any, ...] = ("present",) if exists else ("absent",)
    if expected_version is not None:
        if entity.version_attribute is None:
            raise UpdateRejectedError(f"{entity.name}: expected_version given, but the entity has no version_attribute")
        conditions.append(f"{expr.name(entity.version_attribute)} = {expr.value(_version(expected_version))}")
        kind = "version"
        own = ("version", entity.version_attribute, expected_version) if exists else ("never",)
    params = {"TableName": table, "Key": _aws.serialize(key), "ConditionExpression": " AND ".join(conditions)}
    if condition is not None:
        add_condition(params, expr, mapper.model, entity, condition)
    return Request("ConditionCheck", expr.apply(params), entity.name, key, kind, expected_version,
                   condition=condition, own=own)


def _version(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UpdateRejectedError(f"expected_version {value!r} must be a non-negative int")
    return value


# Queries ---------------------------------------------------------------------------------------
def query_params(
    mapper: ItemMapper, table_name: str, resolved: ResolvedPattern, vals: Mapping[str, Any], partition_value: Any = None,
    *, filter: Condition | None = None, attributes: Iterable[str | Name] | None = None,  # noqa: A002 - the query option's name
) -> dict[str, Any]:
    """Query parameters (key condition, index, entity filter) of a declared access pattern.

    ``vals`` holds the pattern's key fields (a ``(low, high)`` pair on the last one for
    ``between``); ``partition_value`` replaces the range field when building a time-bucketed
    partition key. ``filter`` and ``attributes`` add the caller's filter and projection (see
    :func:`read_options`). Pure: builds the request, sends nothing.
    """
    p = resolved
    model = mapper.model
    entity = model.entities[p.entities[0]]
    index = resolved.index
    pk_t, pk_attr = resolved.pk_template, resolved.pk_attribute
    sk_t, sk_attr = resolved.sk_template, resolved.sk_attribute
    require_fields(entity, vals, resolved.pk_fields, what=f"pattern {p.name!r} partition key")
    pk_vals = vals if partition_value is None else {**vals, resolved.sk_fields[-1]: partition_value}
    expr = Expression()
    pk_value = _key_bound(keys.build(entity, pk_t, pk_vals, where="partition key"), MAX_PK_BYTES, p.name)
    condition = f"{expr.name(pk_attr)} = {expr.value(pk_value)}"  # (the value is :v0)
    if p.sk is not None:
        assert sk_t is not None and sk_attr is not None
        condition += " AND " + _sk_condition(entity, sk_t, sk_attr, p.sk, resolved.sk_fields, vals, expr)
    params: dict[str, Any] = {"TableName": table_name, "KeyConditionExpression": condition}
    if index is not None:
        params["IndexName"] = index.name
    if resolved.entity_filter:
        # The model cannot prove that no other entity's key satisfies the key condition.
        names = ", ".join(expr.value(e) for e in p.entities)
        params["FilterExpression"] = f"{expr.name(model.entity_attribute)} IN ({names})"
    if filter is not None or attributes is not None:
        read_options(params, expr, mapper.model, resolved, filter=filter, attributes=attributes)
    return expr.apply(params)


def own_items(model: Model, resolved: ResolvedPattern, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The wire items of a Query response that belong to the pattern's entities: the last line of
    defence behind the entity filter (an item written outside the model, a model changed under
    stored items). Items of another entity, or of none, are dropped."""
    own, attr = resolved.entities, model.entity_attribute
    return [i for i in items if (i.get(attr) or {}).get("S") in own]


def check_own_item(model: Model, entity: str, found: Any, key: Mapping[str, Any]) -> None:
    """Refuse (:class:`ForeignItemError`) the item read at ``entity``'s table ``key`` when its
    entity attribute names another entity (``found``) or none: the model forbids two entities
    one table key, so the item was written outside it — it is not an item of ``entity``."""
    if found != entity:
        what = f"a {found!r} item" if isinstance(found, str) else f"an item without {model.entity_attribute!r}"
        raise ForeignItemError(
            f"{entity!r} key {dict(key)!r} holds {what}, not an item of {entity!r}: no two entities of the model build one "
            "table key, so it was written outside the model (another key layout, a hand-made item, a model changed "
            "under stored items); it is not read as one"
        )


def read_options(
    params: dict[str, Any], expr: Expression, model: Model, resolved: ResolvedPattern, *,
    filter: Condition | None = None, attributes: Iterable[str | Name] | None = None,  # noqa: A002 - the query option's name
) -> None:
    """Add the caller's ``filter`` (ANDed with the entity filter, placeholders ``#f``/``:f``) and
    projection (``attributes`` plus what an item needs to parse back and to continue a page: the
    entity attribute, the table key and the index key; placeholders ``#p``) to Query ``params``.

    Names are checked against the pattern's entities and, on a GSI that does not project every
    attribute, against what it projects (:class:`UnknownAttributeError`)."""
    if filter is None and attributes is None:
        return
    from .conditions import Attributes, projection, render

    entities = [model.entities[e] for e in resolved.entities]
    index = resolved.index
    scope = Attributes(model, entities, index if index is not None and index.kind == "GSI" else None)
    if filter is not None:
        expr.add(params, "FilterExpression", render(filter, scope, "f", what="filter"))
    if attributes is not None:
        always = [model.entity_attribute, *cursor_attributes(model, resolved)]
        expr.add(params, "ProjectionExpression", projection(attributes, scope, always))


def cursor_attributes(model: Model, resolved: ResolvedPattern) -> list[str]:
    """The attributes of an item that make up a Query's ``LastEvaluatedKey`` on this pattern's
    table or index (table key, plus the index key)."""
    out = table_key(model)
    return out + [a for a in resolved.index.key_attributes if a not in out] if resolved.index else out

def _sk_condition(
    entity: Entity, template: Any, attr: str, op: str, fields: tuple[str, ...], vals: Mapping[str, Any],
    expr: Expression,
) -> str:
    name = expr.name(attr)
    require_fields(entity, vals, fields, what="sort-key condition")
    where = f"{entity.name} sort-key condition"

    def low(text: str) -> str:
        return expr.value(_key_bound(text, MAX_SK_BYTES, where))

    def high(text: str, complete: bool) -> str:
        # "text + $" bounds everything under "text#"; a key of the maximum size has nothing
        # under it, so the bound is the key itself (DynamoDB refuses longer condition values).
        if complete:
            if len(text.encode("utf-8")) >= MAX_SK_BYTES:
                return expr.value(_key_bound(text, MAX_SK_BYTES, where))
            return expr.value(text + keys.UPPER)
        return expr.value(_key_bound(text + keys.UPPER, MAX_SK_BYTES, where))

    if op == "=":
        return f"{name} = {low(keys.build(entity, template, vals, where='sort key'))}"
    if op == "begins_with":
        text, complete = keys.prefix(entity, template, vals, fields)
        if complete:  # the key itself and everything under it: [key, key + "$"]
            return f"{name} BETWEEN {low(text)} AND {high(text, True)}"
        return f"begins_with({name}, {low(text)})"
    if op == "between":
        last = fields[-1]
        pair = vals[last]
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise KeyValueError(f"between on {entity.name}.{last} needs a (low, high) pair, got {pair!r}")
        low_text, _ = keys.partial(entity, template, {**vals, last: pair[0]}, fields)
        high_text, complete = keys.partial(entity, template, {**vals, last: pair[1]}, fields)
        if low_text > high_text:
            raise KeyValueError(f"between on {entity.name}.{last}: low {pair[0]!r} is above high {pair[1]!r}")
        return f"{name} BETWEEN {low(low_text)} AND {high(high_text, complete)}"
    text, complete = keys.partial(entity, template, vals, fields)
    if op in ("<", ">="):  # compare against the smallest key carrying this value
        return f"{name} {op} {low(text)}"
    # "<=" and ">": compare against the largest key carrying this value
    return f"{name} {op} {low(text) if complete else high(text, False)}"


def _key_bound(text: str, limit: int, where: str) -> str:
    """A key-condition value within DynamoDB's key size ``limit``; beyond it no stored key can
    match and DynamoDB would refuse the query (or, for a partition key, return nothing)."""
    return check_key_size(text, limit, f"{where}: key value", ", so no item can match — shorten the values")
