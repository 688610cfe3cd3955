"""Capacity estimates without items: a typical write of an entity, one page of a pattern.

Each estimate prices a **representative item**: the stored item the runtime's put writes for the
model's example values (every declared field, required attribute and sparse-index input, each
declared attribute by its kind, the version attribute at 1), so it carries its table key, entity
attribute and every derived index key it qualifies for. Its size, or the entity's declared
``typical_item_bytes``, or ``item_bytes=``, is the item size; index entries keep the
representative item's keys and projected attributes. Assumptions and sources:
docs/adr/0052-capacity-estimates.md.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..model.entity import MAX_ITEM_BYTES
from ..model.examples import example_values, sparse_values
from ..runtime import request_params
from ..runtime.items import ItemMapper
from ..runtime.merged_reads import first_read_limit
from ..runtime.values import item_size
from .entries import LSI_ENTRY_OVERHEAD, index_entry, projected_attributes
from .exceptions import CapacityInputError
from .reads import page_sizes
from .units import Capacity, read_units, write_units
from .writes import TRANSACTION_FACTOR

if TYPE_CHECKING:
    from ..model import Model, ResolvedEntity, ResolvedIndex, ResolvedPattern

__all__ = [
    "WRITE_KINDS",
    "WriteKind",
    "read_estimate",
    "representative_item",
    "typical_item_bytes",
    "update_attribute",
    "write_estimate",
]

WriteKind = Literal[
    "put", "update", "delete", "transaction_put", "transaction_update", "transaction_delete", "batch_put",
    "batch_delete",
]
#: Every write kind :func:`write_estimate` prices, in a stable order (for tables and loops).
WRITE_KINDS: tuple[WriteKind, ...] = get_args(WriteKind)


def _entity(model: Model, name: str) -> ResolvedEntity:
    entity = model.entities.get(name) if isinstance(name, str) else None
    if entity is None:
        raise CapacityInputError(f"entity {name!r} is not an entity of model {model.name!r}; its entities: "
                                 f"{sorted(model.entities)!r}")
    return entity


def _pattern(model: Model, name: str) -> ResolvedPattern:
    pattern = model.resolved_patterns.get(name) if isinstance(name, str) else None
    if pattern is None:
        raise CapacityInputError(f"access pattern {name!r} is not a pattern of model {model.name!r}; its patterns: "
                                 f"{sorted(model.resolved_patterns)!r}")
    return pattern


def _attribute_value(kind: str, name: str) -> Any:
    """A representative value of a declared attribute of ``kind``."""
    text = f"{name}-1"
    values: dict[str, Any] = {
        "number": 1, "integer": 1, "decimal": Decimal("1.5"), "boolean": True, "binary": text.encode("utf-8"),
        "string_set": {text}, "number_set": {1}, "list": [text], "map": {"value": text},
    }
    return values.get(kind, text)  # string and any: a string


#: id(model) → (a weak reference to it, its ItemMapper): see :func:`_mapper`.
_MAPPERS: dict[int, tuple[weakref.ref[Model], ItemMapper]] = {}


def _mapper(model: Model) -> ItemMapper:
    """The model's :class:`ItemMapper`, built once per model object: building one resolves every
    entity's key templates, and an estimate per entity and pattern would otherwise make the cost
    warnings and the capacity tables quadratic in the number of entities."""
    key = id(model)
    found = _MAPPERS.get(key)
    if found is None or found[0]() is not model:
        cache = _MAPPERS  # the callback keeps the dict: at interpreter exit the module's globals may be gone

        def forget(_gone: object) -> None:
            cache.pop(key, None)

        found = _MAPPERS[key] = (weakref.ref(model, forget), ItemMapper(model))
    return found[1]


def representative_item(model: Model, entity: str, *, index: str | None = None) -> dict[str, Any]:
    """The stored item an estimate of ``entity`` prices: what the runtime's put writes for the
    example values (:func:`~constructs_lib.model.examples.example_values`, in every sparse index it
    declares keys for) plus each declared attribute by its kind, the version attribute at 1;
    no TTL attribute. ``index``: meet that index's sparse conditions first (a pattern's reads)."""
    resolved = _entity(model, entity)
    attrs = example_values(model, resolved, sparse=True)
    attrs.update({name: _attribute_value(kind, name) for name, kind in resolved.attributes.items()})
    if index is not None and index in resolved.indexes:
        attrs.update(sparse_values(resolved, [index]))
    item = request_params.put(_mapper(model), "estimate", resolved, attrs).item
    assert item is not None  # a put request always carries its item
    return dict(item)


def typical_item_bytes(model: Model, entity: str) -> int:
    """Bytes of a typical stored item of ``entity``: its declared ``typical_item_bytes``, else the
    size of :func:`representative_item` (``runtime.values.item_size``: names and values, keys included)."""
    hint = _entity(model, entity).typical_item_bytes
    return hint if hint is not None else item_size(representative_item(model, entity))


def update_attribute(model: Model, entity: str) -> str | None:
    """The attribute a typical update changes: the first of the representative item's non-key
    attributes that no ``KEYS_ONLY``/``INCLUDE`` index projects and no key is built from (None when
    there is none: the estimate then stands for such an attribute of the same size)."""
    resolved = _entity(model, entity)
    item = representative_item(model, entity)
    mapper = _mapper(model)
    inputs = set(resolved.table_key_fields).union(*(mapper.index_inputs(resolved, i) for i in resolved.indexes))
    reserved = {model.entity_attribute, resolved.version_attribute, *model.key_attributes()}
    projected = set().union(*(projected_attributes(model, i) or () for i in model.indexes.values()))
    for name in item:
        if name not in inputs and name not in reserved and name not in projected:
            return name
    return None


@dataclass(frozen=True)
class ItemShape:
    """What prices one item: its size, and its entry in each index it is in: ``entries`` the
    bytes a query of the index reads, ``written`` the bytes a write of it is priced at (a local
    secondary index adds its 100 bytes to writes only, ADR 0051 row 6)."""

    size: int
    entries: Mapping[str, int]
    written: Mapping[str, int]


def item_shape(model: Model, entity: str, item_bytes: int | None, *, index: str | None = None) -> ItemShape:
    """The representative item sized to ``item_bytes`` (None: the declared hint, else its own
    size). An ``ALL`` entry is the whole item; any other entry keeps the representative item's
    keys and projected attributes (what pads an item is projected by no such index), never more
    than the item itself."""
    item = representative_item(model, entity, index=index)
    if item_bytes is None:
        hint = _entity(model, entity).typical_item_bytes
        size = hint if hint is not None else item_size(item)
    else:
        size = _checked_bytes(item_bytes)
    entries: dict[str, int] = {}
    written: dict[str, int] = {}
    for resolved in model.indexes.values():
        entry = index_entry(model, resolved, item)
        if entry is None:
            continue
        entries[resolved.name] = size if resolved.projection == "ALL" else min(item_size(entry), size)
        written[resolved.name] = entries[resolved.name] + (LSI_ENTRY_OVERHEAD if resolved.kind == "LSI" else 0)
    return ItemShape(size, entries, written)


def _checked_bytes(item_bytes: object) -> int:
    if isinstance(item_bytes, bool) or not isinstance(item_bytes, int) or not 1 <= item_bytes <= MAX_ITEM_BYTES:
        raise CapacityInputError(
            f"item_bytes {item_bytes!r} must be a whole number of bytes from 1 to {MAX_ITEM_BYTES:,} "
            "(DynamoDB's 400 KB item limit)"
        )
    return item_bytes


def write_estimate(model: Model, entity: str, kind: WriteKind, *, item_bytes: int | None = None) -> Capacity:
    """Write units of one typical write of a typical ``entity`` item, table and every index.

    Parameters
    ----------
    model, entity
        The model and the name of one of its entities.
    kind
        ``"put"``: a new item, entering every index it qualifies for (the representative item meets
        every sparse condition it can); ``"update"``: an UpdateItem that changes one non-key
        attribute projected by no ``KEYS_ONLY``/``INCLUDE`` index to a value of the same size (and
        bumps the version attribute, if any): the table and every ``ALL`` index rewrite the entry,
        other indexes only when they project the version attribute; ``"delete"``: the item,
        leaving every index; ``"transaction_*"``: the same write in TransactWriteItems (twice the
        units); ``"batch_*"``: one put or delete of BatchWriteItem (priced as the single write).
    item_bytes
        The stored item's size (1 byte to 400 KB). Default: the entity's ``typical_item_bytes``,
        else :func:`typical_item_bytes`.

    Raises
    ------
    CapacityInputError
        An unknown entity or kind, or ``item_bytes`` out of range.
    """
    if kind not in WRITE_KINDS:
        raise CapacityInputError(f"write kind {kind!r} is not one of {', '.join(WRITE_KINDS)}")
    resolved = _entity(model, entity)
    shape = item_shape(model, entity, item_bytes)
    base = kind.removeprefix("transaction_").removeprefix("batch_")
    gsis: dict[str, float] = {}
    lsis: dict[str, float] = {}
    for name, size in shape.written.items():
        index = model.indexes[name]
        if base == "update" and not _update_rewrites(model, index, resolved):
            continue
        (lsis if index.kind == "LSI" else gsis)[name] = float(write_units(size))
    estimate = Capacity("write", float(write_units(shape.size)), gsis, lsis)
    return estimate.times(TRANSACTION_FACTOR) if kind.startswith("transaction_") else estimate


def _update_rewrites(model: Model, index: ResolvedIndex, entity: ResolvedEntity) -> bool:
    """Whether a typical update changes ``index``'s entry: an ``ALL`` entry always; another only
    when it projects the version attribute the update bumps."""
    projected = projected_attributes(model, index)
    return projected is None or (entity.version_attribute is not None and entity.version_attribute in projected)


def read_estimate(
    model: Model, pattern: str, *, items: int = 1, item_bytes: int | None = None, consistent: bool = False
) -> Capacity:
    """Read units of one page of ``items`` items of access pattern ``pattern``.

    A GetItem pattern reads one item (whatever ``items`` is). A Query reads ``items`` entries of
    its table or index (index projections decide the entry size), its entities taken in turn,
    summed before rounding; a page ends early at 1 MB. A pattern on a write-sharded index sends
    one Query per shard, each reading the runtime's first-read share of the page
    (``merged_reads.first_read_limit``: the share with margin, at most ``items``), each rounded on its own. Every
    shard and partition is assumed to hold enough of the pattern's own items to fill its read.

    Parameters
    ----------
    items
        Items per page (the ``limit`` of the call), a positive int. Default 1.
    item_bytes
        The stored item's size, as for :func:`write_estimate`. Default: the hint or the
        representative item's size.
    consistent
        Strongly consistent (full units) instead of eventually consistent (half). A global
        secondary index is read eventually consistently only: True raises.

    Raises
    ------
    CapacityInputError
        An unknown pattern, ``items`` not a positive int, ``item_bytes`` out of range, or
        ``consistent=True`` on a pattern of a global secondary index.
    """
    resolved = _pattern(model, pattern)
    if isinstance(items, bool) or not isinstance(items, int) or items < 1:
        raise CapacityInputError(f"items {items!r} must be a positive int (the items of one page)")
    index = resolved.index
    if consistent and index is not None and index.kind == "GSI":
        raise CapacityInputError(
            f"access pattern {pattern!r} reads global secondary index {index.name!r}: DynamoDB refuses "
            "ConsistentRead=True on it (consistent=False)"
        )
    if resolved.operation == "GetItem":
        return Capacity("read", read_units(item_shape(model, resolved.entities[0], item_bytes).size, consistent=consistent))
    index_name = None if index is None else index.name
    sizes = [_read_size(model, e, item_shape(model, e, item_bytes, index=index_name), index_name)
             for e in resolved.entities]
    per_query = first_read_limit(items, resolved.shards) if resolved.shards else items
    page = page_sizes([sizes[n % len(sizes)] for n in range(per_query)])[0]
    units = read_units(page, consistent=consistent) * (resolved.shards or 1)
    if index is None:
        return Capacity("read", units)
    if index.kind == "LSI":
        return Capacity("read", 0.0, {}, {index.name: units})
    return Capacity("read", 0.0, {index.name: units})


def _read_size(model: Model, entity: str, shape: ItemShape, index: str | None) -> int:
    """Bytes one item of ``entity`` costs a query of ``index`` (None: the table)."""
    if index is None:
        return shape.size
    if index not in shape.entries:
        raise CapacityInputError(
            f"the representative item of entity {entity!r} of model {model.name!r} is not in index {index!r} "
            "(no example values meet its sparse rule); declare the rule's values as field choices"
        )
    return shape.entries[index]
