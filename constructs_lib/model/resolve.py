"""Resolution: the declared model (as the user wrote it) → the resolved types readers use.

Every derived fact is computed here once: an index's default key attributes, an entity's
normalized fields and parsed templates, per index key its partition and sort key (the LSI rule:
:func:`_partition`), its sparse and shard rules, and per access pattern its index, key
templates, fields, operation and isolation. Declared objects are never modified. Rationale:
docs/adr/0046-declared-and-resolved-model.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TypeVar

from . import overlap
from .access import AccessPattern
from .entity import SHARD, Entity, IndexKey
from .exceptions import AccessPatternError, ModelValidationError
from .indexes import TABLE, Index, IndexKind
from .resolved import ResolvedEntity, ResolvedIndex, ResolvedIndexKey, ResolvedPattern
from .templates import KeyTemplate

_T = TypeVar("_T")


def _partition(kind: IndexKind, own: _T | None, table: _T) -> _T:
    """The LSI rule, the one place it is applied: an LSI's partition key (attribute and each
    entity's template) is the table's; a GSI's is its own."""
    if kind == "LSI":
        return table
    assert own is not None  # Index.parts and resolve_entity refuse a GSI without one
    return own


def resolve_index(index: Index, table_pk_attribute: str) -> ResolvedIndex:
    """``index`` with its default key attributes and normalized projection."""
    parts = index.parts()
    return ResolvedIndex(
        name=index.name, kind=index.kind, pk_attribute=_partition(index.kind, parts.pk_attribute, table_pk_attribute),
        sk_attribute=parts.sk_attribute, projection=parts.projection,
    )


def resolve_entity(entity: Entity, indexes: Mapping[str, ResolvedIndex]) -> ResolvedEntity:
    """``entity`` normalized, each of its index keys checked against the model's ``indexes``."""
    parts = entity.parts()
    where = f"entity {entity.name!r}"
    keys: dict[str, ResolvedIndexKey] = {}
    for index_name, key in parts.indexes.items():
        if index_name not in indexes:
            raise ModelValidationError(
                f"{where} declares keys for index {index_name!r}, which the model does not declare; "
                f"indexes: {', '.join(indexes) or 'none'}"
            )
        pk_t, sk_t = parts.templates[index_name]
        keys[index_name] = _resolve_key(where, indexes[index_name], key, parts.pk, pk_t, sk_t)
    key_fields = list(parts.pk.fields)
    if parts.sk is not None:
        key_fields += [f for f in parts.sk.fields if f not in key_fields]
    return ResolvedEntity(
        name=entity.name, pk=entity.pk, sk=entity.sk, pk_template=parts.pk, sk_template=parts.sk,
        fields=MappingProxyType(parts.fields), indexes=MappingProxyType(keys), required=parts.required,
        version_attribute=entity.version_attribute, description=entity.description,
        attributes=MappingProxyType(parts.attributes), table_key_fields=tuple(key_fields),
        typical_item_bytes=entity.typical_item_bytes,
    )


def _resolve_key(
    where: str, index: ResolvedIndex, key: IndexKey, table_pk: KeyTemplate, pk_t: KeyTemplate | None,
    sk_t: KeyTemplate | None,
) -> ResolvedIndexKey:
    at = f"{where} index {index.name!r}"
    if index.kind == "GSI" and key.pk is None:
        raise ModelValidationError(f"{at}: a GSI key needs a pk template")
    if index.kind == "LSI" and key.pk is not None:
        raise ModelValidationError(
            f"{at}: an LSI uses the table partition key; pk template {key.pk!r} is not allowed"
        )
    if index.sort_key and key.sk is None:
        raise ModelValidationError(f"{at}: the index has a sort key ({index.sk_attribute!r}); give an sk template")
    if not index.sort_key and key.sk is not None:
        raise ModelValidationError(f"{at}: sk template {key.sk!r} given, but the index has no sort key")
    if key.sharded and index.kind != "GSI":
        raise ModelValidationError(
            f"{at}: shards={key.shards} needs a GSI; an LSI shares the table's partition key"
        )
    return ResolvedIndexKey(
        index=index.name, kind=index.kind, pk=key.pk, sk=key.sk,
        pk_attribute=index.pk_attribute, pk_template=_partition(index.kind, pk_t, table_pk),
        sk_attribute=index.sk_attribute, sk_template=sk_t,
        when_present=key.when_present, when_equals=MappingProxyType(key.frozen_when_equals()),
        shards=key.shards, shard_by=key.shard_fields(),
    )


def resolve_pattern(
    pattern: AccessPattern, entities: Mapping[str, ResolvedEntity], indexes: Mapping[str, ResolvedIndex], *,
    pk_attribute: str, sk_attribute: str | None,
) -> ResolvedPattern:
    """``pattern``'s index, key templates and fields; raises :class:`AccessPatternError` naming
    it when no GetItem or Query serves it. ``sk_attribute`` is None when the table has no sort key."""
    def fail(reason: str) -> AccessPatternError:
        return AccessPatternError(f"access pattern {pattern.name!r} cannot be served by a Query or GetItem: {reason}")

    index: ResolvedIndex | None = None
    if pattern.index != TABLE:
        if pattern.index not in indexes:
            raise fail(f"index {pattern.index!r} does not exist (indexes: {', '.join(indexes) or 'none'})")
        index = indexes[pattern.index]
    names = pattern.entities
    pk_templates: list[KeyTemplate] = []
    sk_templates: list[KeyTemplate | None] = []
    shard_counts: list[int | None] = []
    for entity_name in names:
        if entity_name not in entities:
            raise fail(f"entity {entity_name!r} does not exist (entities: {', '.join(entities)})")
        entity = entities[entity_name]
        if index is None:
            pk_templates.append(entity.pk_template)
            sk_templates.append(entity.sk_template)
            shard_counts.append(None)
            continue
        key = entity.indexes.get(index.name)
        if key is None:
            raise fail(
                f"entity {entity_name!r} has no keys in index {index.name!r}, so its items are not in it; "
                "reading them there would need a Scan — add an IndexKey for that index"
            )
        pk_templates.append(key.pk_template)
        sk_templates.append(key.sk_template)
        shard_counts.append(key.shards)
    first_pk = pk_templates[0]
    for other, entity_name in zip(pk_templates[1:], names[1:], strict=True):
        if other.segments != first_pk.segments:
            raise fail(
                f"entities share no partition: {names[0]!r} uses {first_pk.source!r} but "
                f"{entity_name!r} uses {other.source!r}; one Query reads one partition"
            )
    if len(set(shard_counts)) > 1:
        by_entity = dict(zip(names, shard_counts, strict=True))
        raise fail(
            f"its entities shard index {index.name if index else TABLE!r} differently ({by_entity!r}); "
            "a merged read needs one shard count"
        )
    pk_fields = tuple(f for f in first_pk.fields if f != SHARD) if shard_counts[0] else first_pk.fields
    sk_attr = sk_attribute if index is None else index.sk_attribute
    sk_fields = _sk_fields(pattern, sk_templates, sk_attr is not None, fail)
    operation = "Query"
    if index is None and len(names) == 1 and (pattern.sk == "=" or (pattern.sk is None and sk_attr is None)):
        operation = "GetItem"  # the whole primary key (or the partition key alone, when it is the whole key)
    condition = overlap.key_condition(entities[names[0]], pk_templates[0], sk_templates[0], pattern.sk, sk_fields)
    intruders = overlap.intruders(entities, names, condition, index)
    return ResolvedPattern(
        # The declaration in the form its JSON reads back to, so that entity="A" and entity=("A",)
        # (or sk_fields as a list or a tuple) resolve to equal patterns.
        pattern=AccessPattern.from_dict(pattern.to_dict()), name=pattern.name, entities=names, index=index, sk=pattern.sk,
        descending=pattern.descending, description=pattern.description,
        pk_attribute=pk_attribute if index is None else index.pk_attribute, pk_template=first_pk,
        sk_attribute=sk_attr, sk_template=sk_templates[0],
        pk_fields=pk_fields, sk_fields=sk_fields, operation=operation, shards=shard_counts[0], intruders=intruders,
        entity_filter=operation == "Query" and (pattern.sk in overlap.UNBOUNDED or bool(intruders)),
    )


def _sk_fields(
    pattern: AccessPattern, sk_templates: list[KeyTemplate | None], has_sort: bool,
    fail: Callable[[str], AccessPatternError],
) -> tuple[str, ...]:
    """The sort-key fields the caller supplies, checked against every entity's sort key."""
    if pattern.sk is None:
        return ()
    if not has_sort:
        raise fail(f"sort-key condition {pattern.sk!r} needs a sort key, but the target has none")
    first_sk = sk_templates[0]
    assert first_sk is not None
    n_fields = len(first_sk.placeholders)
    if pattern.sk_fields is not None:
        sk_fields = tuple(pattern.sk_fields)
    elif pattern.sk == "=":
        sk_fields = tuple(p.field for p in first_sk.placeholders)
    elif pattern.sk == "begins_with":
        sk_fields = ()
    else:
        if n_fields == 0:
            raise fail(f"range condition {pattern.sk!r} on constant sort key {first_sk.source!r}")
        sk_fields = first_sk.leading_fields(1)
    if sk_fields != first_sk.leading_fields(len(sk_fields)) or len(sk_fields) > n_fields:
        raise fail(
            f"sk_fields {list(sk_fields)!r} must be a leading run of the sort-key template "
            f"{first_sk.source!r} fields {[p.field for p in first_sk.placeholders]!r}"
        )
    if pattern.sk == "=" and len(sk_fields) != n_fields:
        raise fail(f"'=' needs every sort-key field of {first_sk.source!r}, got {list(sk_fields)!r}")
    if pattern.sk not in ("=", "begins_with") and not sk_fields:
        raise fail(f"condition {pattern.sk!r} needs at least one sort-key field to compare")
    if pattern.sk == "begins_with" and not sk_fields and not isinstance(first_sk.segments[0], str):
        raise fail(
            f"'begins_with' without sk_fields on {first_sk.source!r}, which starts with a field, has an empty "
            f"prefix (DynamoDB refuses one); give sk_fields=({first_sk.placeholders[0].field!r},) or no "
            "sort-key condition"
        )
    names = pattern.entities
    for other, entity_name in zip(sk_templates[1:], names[1:], strict=True):
        assert other is not None
        if not first_sk.same_shape_until(other, len(sk_fields)):
            raise fail(
                f"sort keys of {names[0]!r} ({first_sk.source!r}) and {entity_name!r} "
                f"({other.source!r}) do not share the prefix the condition needs"
            )
    return sk_fields
