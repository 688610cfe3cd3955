"""A PerCall with fixed, hand-checkable figures: every item ``bytes`` long (default 400, an
entry of an ALL index too, of any other index 100), a
write 1 WCU (2 in a transaction) on the table and on each GSI the entity has a key in, a read
½ RCU per 4 KB read (1 consistent) on the index the pattern queries."""

from __future__ import annotations

import math

from constructs_lib.capacity.units import Capacity
from constructs_lib.model import Model


class FixedPerCall:
    bytes = 400

    def __init__(self, model: Model) -> None:
        self.model = model

    def item_bytes(self, entity: str) -> int:
        return self.bytes

    def entry_bytes(self, entity: str, index: str) -> int:
        return self.bytes if self.model.indexes[index].projection == "ALL" else 100

    def write(self, entity: str, kind: str, item_bytes: int | None) -> Capacity:
        units = (2.0 if kind.startswith("transaction") else 1.0) * math.ceil((item_bytes or self.bytes) / 1024)
        gsis = {i: units for i in self.model.entity(entity).indexes if self.model.indexes[i].kind == "GSI"}
        return Capacity("write", units, gsis)

    def read(self, pattern: str, items: int, item_bytes: int | None, consistent: bool) -> Capacity:
        units = math.ceil(items * (item_bytes or self.bytes) / 4096) * (1.0 if consistent else 0.5)
        index = self.model.resolved_patterns[pattern].index
        return Capacity("read", units) if index is None else Capacity("read", 0.0, {index.name: units})
