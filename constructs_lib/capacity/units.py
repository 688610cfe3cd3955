"""Capacity units per call: the :class:`Capacity` value and DynamoDB's rounding rules.

See docs/adr/0051-capacity-per-call.md for the formulas and their AWS sources.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from .exceptions import CapacityInputError

__all__ = [
    "MAX_PAGE_BYTES",
    "READ_UNIT_BYTES",
    "WRITE_UNIT_BYTES",
    "Capacity",
    "read_units",
    "write_units",
]

#: One write capacity unit covers an item (or index entry) of up to 1 KB.
WRITE_UNIT_BYTES = 1024
#: One read capacity unit covers up to 4 KB read strongly consistently (two eventually).
READ_UNIT_BYTES = 4096
#: A Query page stops once it has read 1 MB.
MAX_PAGE_BYTES = 1024 * 1024

Kind = Literal["write", "read"]


def write_units(size: int) -> int:
    """Write units for one item or index entry of ``size`` bytes: rounded up to the next 1 KB."""
    _check_size(size)
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def read_units(size: int, *, consistent: bool) -> float:
    """Read units for ``size`` bytes read in one request: rounded up to the next 4 KB, one unit
    per 4 KB strongly consistent, half that eventually consistent (0 bytes: 0 units)."""
    _check_size(size)
    units = math.ceil(size / READ_UNIT_BYTES)
    return float(units) if consistent else units / 2


def _check_size(size: int) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise CapacityInputError(f"size {size!r} must be a whole number of bytes, 0 or more")


@dataclass(frozen=True)
class Capacity:
    """Capacity units one call consumes, split as DynamoDB reports them with
    ``ReturnConsumedCapacity="INDEXES"``.

    Attributes
    ----------
    kind
        ``"write"`` (WCU) or ``"read"`` (RCU).
    table
        Units charged to the base table.
    global_indexes, local_indexes
        Units charged to each secondary index the call touches (an index the call does not
        touch is absent, never listed with 0).
    """

    kind: Kind
    table: float = 0.0
    global_indexes: Mapping[str, float] = field(default_factory=dict)
    local_indexes: Mapping[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        """Every unit of the call: the table's and every index's (DynamoDB's ``CapacityUnits``)."""
        return self.table + sum(self.global_indexes.values()) + sum(self.local_indexes.values())

    def index(self, name: str) -> float:
        """Units charged to index ``name`` (0 when the call does not touch it)."""
        return self.global_indexes.get(name, self.local_indexes.get(name, 0.0))

    def __add__(self, other: Capacity) -> Capacity:
        if not isinstance(other, Capacity):
            return NotImplemented
        if other.kind != self.kind:
            raise CapacityInputError(f"cannot add {other.kind} capacity to {self.kind} capacity")
        return Capacity(
            self.kind, self.table + other.table,
            _merge(self.global_indexes, other.global_indexes), _merge(self.local_indexes, other.local_indexes),
        )

    def times(self, factor: float) -> Capacity:
        """Every figure multiplied by ``factor`` (a transaction doubles its writes)."""
        return Capacity(
            self.kind, self.table * factor,
            {k: v * factor for k, v in self.global_indexes.items()},
            {k: v * factor for k, v in self.local_indexes.items()},
        )

    def reported(self) -> dict[str, object]:
        """The figures in the shape of DynamoDB's ``ConsumedCapacity`` (without ``TableName``)."""
        out: dict[str, object] = {"CapacityUnits": self.total, "Table": {"CapacityUnits": self.table}}
        if self.global_indexes:
            out["GlobalSecondaryIndexes"] = {k: {"CapacityUnits": v} for k, v in self.global_indexes.items()}
        if self.local_indexes:
            out["LocalSecondaryIndexes"] = {k: {"CapacityUnits": v} for k, v in self.local_indexes.items()}
        return out

    @classmethod
    def zero(cls, kind: Kind) -> Capacity:
        return cls(kind)

    @classmethod
    def sum(cls, kind: Kind, parts: Iterable[Capacity]) -> Capacity:
        """The sum of ``parts`` (zero when there are none)."""
        total = cls(kind)
        for part in parts:
            total = total + part
        return total


def _merge(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
    out = dict(a)
    for name, units in b.items():
        out[name] = out.get(name, 0.0) + units
    return out
