"""The capacity section of ``describe``: WCU per write of each entity and RCU per page of each
pattern, table and every index, from :mod:`constructs_lib.capacity.estimate`, with the item sizes
they assume. See docs/adr/0052-capacity-estimates.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..capacity.estimate import WriteKind, read_estimate, typical_item_bytes, write_estimate
from ..capacity.exceptions import CapacityError
from ..capacity.warnings import PAGE_ITEMS

if TYPE_CHECKING:
    from ..capacity.units import Capacity
    from ..model.model import Model

__all__ = ["capacity_section"]

#: The write kinds shown, one row each (transactions double them; a batch write prices as one).
SHOWN_WRITES: tuple[WriteKind, ...] = ("put", "update", "delete")


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _units(value: float) -> str:
    return f"{value:g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def capacity_section(model: Model) -> list[str]:
    """Markdown lines of the ``## Capacity`` section of ``describe`` for ``model``."""
    out = ["## Capacity", "",
           "Estimated capacity units of a typical item of each entity (constructs_lib.capacity.estimate). Item size: "
           "the entity's declared `typical_item_bytes`, else the item the runtime stores for the example values "
           "(every declared field and attribute, keys and derived index keys included, in every sparse index it "
           "qualifies for); index entries hold the keys and projected attributes.", ""]
    out += _table(["entity", "typical item (bytes)", "from"], (
        (e.name, typical_item_bytes(model, e.name),
         "declared `typical_item_bytes`" if e.typical_item_bytes is not None else "example item")
        for e in model.entities.values()))
    out += ["", "### WCU per write", "",
            "A put writes a new item into every index it qualifies for; an update changes one non-key attribute "
            "that no KEYS_ONLY/INCLUDE index projects (and bumps the version attribute); a delete removes the item "
            "from every index. In a transaction every figure doubles; in a batch write a put or delete costs the same.",
            ""]
    indexes = list(model.indexes)
    rows = []
    for entity in model.entities:
        for kind in SHOWN_WRITES:
            rows.append((entity, kind, *_figures(write_estimate(model, entity, kind), indexes)))
    out += _table(["entity", "write", "table", *indexes, "total"], rows)
    out += ["", "### RCU per page", "",
            f"One page of {PAGE_ITEMS} items (a GetItem: one item), eventually consistent; strongly consistent "
            "costs twice (a global secondary index cannot be read so). A write-sharded pattern sends one Query per "
            "shard, each reading its share of the page. Every partition is assumed to hold enough of the pattern's "
            "own items.", ""]
    read_rows = []
    for name, r in model.resolved_patterns.items():
        where = "table" if r.index is None else f"{r.index.kind} {r.index.name}"
        try:
            eventual = _units(read_estimate(model, name, items=PAGE_ITEMS).total)
            strong = "—" if r.index is not None and r.index.kind == "GSI" else _units(
                read_estimate(model, name, items=PAGE_ITEMS, consistent=True).total)
        except CapacityError as exc:  # shown, not raised: the page documents the model
            eventual, strong = f"(no estimate: {_cell(str(exc))})", "—"
        items = 1 if r.operation == "GetItem" else PAGE_ITEMS
        operation = f"{r.shards} Queries" if r.shards else r.operation
        read_rows.append((_cell(name), operation, where, items, eventual, strong))
    if not read_rows:
        return out + ["", "No access pattern declared.", ""]
    return out + _table(["pattern", "operation", "reads", "items", "RCU", "RCU strongly consistent"], read_rows) + [""]


def _figures(estimate: Capacity, indexes: Sequence[str]) -> list[str]:
    cells = [_units(estimate.table)]
    cells += [_units(estimate.index(i)) if i in estimate.global_indexes or i in estimate.local_indexes else "—"
              for i in indexes]
    return [*cells, _units(estimate.total)]
