"""Per-call figures for the cost estimate, from ``capacity.estimate``: a model's typical item
sizes and the capacity of one write or read as the model prices it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .exceptions import CapacityError
from .units import Capacity

if TYPE_CHECKING:
    from ..model import Model

__all__ = ["EstimatePerCall"]


class EstimatePerCall:
    """:class:`~constructs_lib.capacity.cost.PerCall` backed by ``capacity.estimate``
    (``typical_item_bytes``, ``write_estimate``, ``read_estimate``)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        try:
            self._estimate: Any = importlib.import_module(f"{__package__}.estimate")
        except ModuleNotFoundError as exc:
            raise CapacityError(
                "constructs_lib.capacity.estimate (typical item sizes and per-call estimates) is not available; "
                "the cost estimate needs it for per-call figures"
            ) from exc
        self._sizes: dict[str, int] = {}

    def item_bytes(self, entity: str) -> int:
        if entity not in self._sizes:
            self._sizes[entity] = int(self._estimate.typical_item_bytes(self.model, entity))
        return self._sizes[entity]

    def write(self, entity: str, kind: str, item_bytes: int | None) -> Capacity:
        result = self._estimate.write_estimate(self.model, entity, kind, item_bytes=item_bytes)
        assert isinstance(result, Capacity)
        return result

    def read(self, pattern: str, items: int, item_bytes: int | None, consistent: bool) -> Capacity:
        result = self._estimate.read_estimate(self.model, pattern, items=items, item_bytes=item_bytes,
                                              consistent=consistent)
        assert isinstance(result, Capacity)
        return result
