"""Per-call figures for the cost estimate, from :mod:`.estimate`: a model's typical item sizes,
the bytes of an index entry, and the capacity of one typical write or one page of a pattern."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..runtime.values import item_size
from .entries import index_entry
from .estimate import WriteKind, read_estimate, representative_item, typical_item_bytes, write_estimate
from .units import Capacity

if TYPE_CHECKING:
    from ..model import Model

__all__ = ["EstimatePerCall"]


class EstimatePerCall:
    """:class:`~constructs_lib.capacity.cost.PerCall` backed by ``capacity.estimate``."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._sizes: dict[str, int] = {}

    def item_bytes(self, entity: str) -> int:
        if entity not in self._sizes:
            self._sizes[entity] = typical_item_bytes(self.model, entity)
        return self._sizes[entity]

    def entry_bytes(self, entity: str, index: str) -> int:
        """Bytes of a typical ``entity`` item's entry in ``index`` (without the storage
        overhead): the whole item for ``ALL``, else the representative item's keys and
        projected attributes, never more than the item (``estimate``'s rule)."""
        size = self.item_bytes(entity)
        resolved = self.model.indexes[index]
        entry = index_entry(self.model, resolved, representative_item(self.model, entity, index=index))
        if entry is None:
            return 0
        return size if resolved.projection == "ALL" else min(item_size(entry), size)

    def write(self, entity: str, kind: str, item_bytes: int | None) -> Capacity:
        return write_estimate(self.model, entity, cast(WriteKind, kind), item_bytes=item_bytes)

    def read(self, pattern: str, items: int, item_bytes: int | None, consistent: bool) -> Capacity:
        return read_estimate(self.model, pattern, items=items, item_bytes=item_bytes, consistent=consistent)
