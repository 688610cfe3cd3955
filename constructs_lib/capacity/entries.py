"""Sizes of what a call touches: the stored item and each index's projected entry.

Item sizes come from the runtime's one size rule (``runtime.values.item_size``); an index
entry is the table key, the index key and the attributes the deployed index projects.
See docs/adr/0051-capacity-per-call.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..model.indexes import TABLE
from ..runtime.values import item_size
from .exceptions import CapacityInputError

if TYPE_CHECKING:
    from ..model import Model, ResolvedIndex

__all__ = [
    "LSI_ENTRY_OVERHEAD",
    "entry_size",
    "index_entry",
    "item_bytes",
    "projected_attributes",
    "resolve_index",
]

#: Bytes DynamoDB adds to a local secondary index entry when it prices a write of it (measured on
#: DynamoDB Local; AWS documents the same 100 bytes as the storage overhead of an index item).
#: A query of the index reads the entry without them (measured too).
LSI_ENTRY_OVERHEAD = 100

Item = Mapping[str, Any]


def item_bytes(item: Item) -> int:
    """The stored item's size in bytes (attribute names plus values)."""
    return item_size(item)


def resolve_index(model: Model, name: str | None) -> ResolvedIndex | None:
    """The model's index ``name`` (None or ``"table"``: the base table, returned as None)."""
    if name is None or name == TABLE:
        return None
    try:
        return model.indexes[name]
    except KeyError:
        raise CapacityInputError(
            f"index {name!r} is not an index of model {model.name!r}; its indexes: {sorted(model.indexes)!r}"
        ) from None


def projected_attributes(model: Model, index: ResolvedIndex) -> frozenset[str] | None:
    """The non-key attributes ``index`` holds as the table is deployed (None: ``ALL``).

    ``SingleTable`` always projects the entity attribute, so ``KEYS_ONLY`` is deployed as
    ``INCLUDE [entity attribute]`` and an ``INCLUDE`` tuple gains it."""
    if index.projection == "ALL":
        return None
    extra = index.projection if isinstance(index.projection, tuple) else ()
    return frozenset((model.entity_attribute, *extra))


def index_entry(model: Model, index: ResolvedIndex, item: Item | None) -> dict[str, Any] | None:
    """The entry ``item`` has in ``index`` (None when the item lacks a key attribute of the
    index, i.e. is not in it): table key, index key and projected attributes."""
    if item is None or any(item.get(a) is None for a in index.key_attributes):
        return None
    projected = projected_attributes(model, index)
    if projected is None:
        return dict(item)
    keep = {model.pk_attribute, model.sk_attribute, *index.key_attributes, *projected}
    return {name: value for name, value in item.items() if name in keep}


def entry_size(index: ResolvedIndex, entry: Item) -> int:
    """Bytes DynamoDB prices a write of an index entry at: its attributes, plus
    :data:`LSI_ENTRY_OVERHEAD` for a local secondary index (a read is priced on the attributes
    alone: :func:`~constructs_lib.capacity.reads.read_bytes`)."""
    return item_size(entry) + (LSI_ENTRY_OVERHEAD if index.kind == "LSI" else 0)


def index_key(index: ResolvedIndex, entry: Item) -> tuple[Any, ...]:
    """The index key values of an entry (what decides delete + put on a change)."""
    return tuple(entry[a] for a in index.key_attributes)
