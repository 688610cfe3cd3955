"""Write capacity per call: PutItem, UpdateItem, DeleteItem, TransactWriteItems, BatchWriteItem.

Every write is priced from the item before and after it: the table by the larger of the two,
each secondary index by the entry the item had and has in it (enter, leave, stay, or a key
change = delete + put). See docs/adr/0051-capacity-per-call.md for the formulas and sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..runtime.items import ItemMapper
from .entries import entry_size, index_entry, index_key, item_bytes
from .units import Capacity, write_units

if TYPE_CHECKING:
    from ..model import Model, ResolvedIndex

__all__ = [
    "TRANSACTION_FACTOR",
    "batch_write",
    "delete",
    "index_write_units",
    "put",
    "put_item",
    "refused",
    "transaction",
    "update",
    "write",
]

#: TransactWriteItems charges two writes for each write it makes (prepare and commit).
TRANSACTION_FACTOR = 2

Item = Mapping[str, Any]


def write(model: Model, old: Item | None, new: Item | None) -> Capacity:
    """Write units of one write that turns stored item ``old`` into ``new``.

    ``old`` None: the item did not exist (a put or upsert creating it, or a delete of nothing);
    ``new`` None: the write deletes it. Items are stored items (key attributes included, as
    :meth:`ItemMapper.build_item` builds them or a read with ``raw=True`` returns them)."""
    sizes = [item_bytes(i) for i in (old, new) if i is not None]
    table = write_units(max(sizes)) if sizes else 1  # a delete of a missing item still costs one unit
    gsis: dict[str, float] = {}
    lsis: dict[str, float] = {}
    for index in model.indexes.values():
        units = index_write_units(model, index, old, new)
        if units:
            (lsis if index.kind == "LSI" else gsis)[index.name] = float(units)
    return Capacity("write", float(table), gsis, lsis)


def index_write_units(model: Model, index: ResolvedIndex, old: Item | None, new: Item | None) -> int:
    """Write units ``index`` consumes when ``old`` becomes ``new``:

    * in neither: 0; enters: its new entry; leaves: its old entry;
    * stays with another index key: delete the old entry + put the new one;
    * stays with the same key: 0 if the projected entry is unchanged, else the larger entry.
    """
    before, after = index_entry(model, index, old), index_entry(model, index, new)
    if before is None:
        return 0 if after is None else write_units(entry_size(index, after))
    if after is None:
        return write_units(entry_size(index, before))
    old_units, new_units = write_units(entry_size(index, before)), write_units(entry_size(index, after))
    if index_key(index, before) != index_key(index, after):
        return old_units + new_units
    if before == after:
        return 0
    return max(old_units, new_units)


def put(model: Model, new: Item, *, old: Item | None = None) -> Capacity:
    """PutItem of stored item ``new`` over ``old`` (None: a new item)."""
    return write(model, old, new)


def put_item(model: Model, entity: str, attributes: Item, *, old: Item | None = None) -> Capacity:
    """PutItem of an application item of ``entity``: the stored item (derived keys and all) is
    built by the runtime's item mapper, then priced as :func:`put`."""
    mapper = ItemMapper(model)
    return write(model, old, mapper.build_item(model.entity(entity), attributes))


def update(model: Model, old: Item | None, new: Item) -> Capacity:
    """UpdateItem turning ``old`` (None: an upsert creating the item) into ``new``."""
    return write(model, old, new)


def delete(model: Model, old: Item | None) -> Capacity:
    """DeleteItem of stored item ``old`` (None: the item did not exist, one unit)."""
    return write(model, old, None)


def refused(model: Model, stored: Item | None) -> Capacity:
    """A conditional PutItem, UpdateItem or DeleteItem its condition refused: nothing is written,
    yet AWS charges the stored item's size (1 unit when there is none) to the table; no index
    is written. DynamoDB Local reports no ``ConsumedCapacity`` with the error (ADR 0051)."""
    return Capacity("write", float(write_units(item_bytes(stored)) if stored is not None else 1))


def transaction(writes: Iterable[Capacity]) -> Capacity:
    """TransactWriteItems: the sum of its writes, each doubled (table and every index)."""
    return Capacity.sum("write", writes).times(TRANSACTION_FACTOR)


def batch_write(writes: Iterable[Capacity]) -> Capacity:
    """BatchWriteItem: each put or delete priced on its own (its own rounding), then summed."""
    return Capacity.sum("write", writes)
