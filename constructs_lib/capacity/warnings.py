"""Cost warnings: model shapes that are legal but pay for capacity they do not use.

:func:`cost_warnings` returns :class:`~constructs_lib.model.ModelWarning` s, priced with the
estimates of :mod:`.estimate`: ``describe`` lists them with the design warnings, ``SingleTable``
shows them at synth. What the model cannot know (which attributes a caller reads, how much a
``filter=`` discards) is not guessed. See docs/adr/0052-capacity-estimates.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.exceptions import ModelWarning
from ..model.overlap import UNBOUNDED
from ..runtime.exceptions import RuntimeClientError
from ..runtime.values import item_size
from .estimate import item_shape, read_estimate, representative_item
from .units import read_units, write_units

if TYPE_CHECKING:
    from ..model import Model, ResolvedPattern

__all__ = ["PAGE_ITEMS", "cost_warnings"]

#: The page size the read warnings and ``describe``'s capacity tables are stated for.
PAGE_ITEMS = 25


def cost_warnings(model: Model) -> list[ModelWarning]:
    """Capacity a typical write or page pays for nothing, each naming the entity, pattern or
    index and the units: index entries no declared pattern reads (``UnreadIndexEntries``), an
    entity in several ``ALL`` GSIs whose entries would cost less as ``KEYS_ONLY``
    (``OverProjectedIndexes``), a query reading a whole item collection to return one entity
    (``CollectionRead``). When no representative item can be built (a key that can never fit,
    which synthesis refuses on its own), one ``CostNotEstimated`` warning says so instead."""
    try:
        return [*_unread_entries(model), *_over_projected(model), *_collection_reads(model)]
    except RuntimeClientError as exc:
        where = f"model {model.name!r}"
        return [ModelWarning(
            "CostNotEstimated", where,
            f"{where}: cost warnings not computed, since a representative item cannot be built: {exc}",
        )]


def _readers(model: Model, entity: str, index: str) -> list[str]:
    return [r.name for r in model.resolved_patterns.values() if r.index_name == index and entity in r.entities]


def _unread_entries(model: Model) -> list[ModelWarning]:
    out = []
    for entity in model.entities.values():
        shape = item_shape(model, entity.name, None)
        for index, size in shape.written.items():
            if _readers(model, entity.name, index):
                continue
            units = write_units(size)
            where = f"entity {entity.name!r} index {index!r}"
            out.append(ModelWarning(
                "UnreadIndexEntries", where,
                f"{where}: no declared access pattern reads {entity.name} items from {index}, yet every put and "
                f"delete of one writes its entry there ({units} WCU per write for a typical {shape.size}-byte item, "
                f"{units} WCU saved per write without it). Remove the entity's key for {index!r}, or declare the "
                "pattern that reads it (a consumer's view counts once it is declared).",
            ))
    return out


def _over_projected(model: Model) -> list[ModelWarning]:
    out = []
    for entity in model.entities.values():
        item = representative_item(model, entity.name)
        shape = item_shape(model, entity.name, None)
        full = [model.indexes[n] for n in shape.entries if model.indexes[n].projection == "ALL"
                and model.indexes[n].kind == "GSI"]
        if len(full) < 2:
            continue
        now = sum(write_units(shape.written[i.name]) for i in full)
        keep = {model.pk_attribute, model.sk_attribute, model.entity_attribute}
        lean = sum(write_units(min(shape.size, item_size(
            {k: v for k, v in item.items() if k in keep | set(i.key_attributes)}))) for i in full)
        if lean >= now:
            continue
        names = ", ".join(i.name for i in full)
        readers = sorted({p for i in full for p in _readers(model, entity.name, i.name)})
        where = f"entity {entity.name!r} indexes {names}"
        out.append(ModelWarning(
            "OverProjectedIndexes", where,
            f"{where}: a put of a typical {shape.size}-byte {entity.name} item writes its whole item into "
            f"{len(full)} ALL-projected GSIs ({now} WCU there). If their patterns ({', '.join(map(repr, readers)) or 'none'}) "
            f"read only keys or a few attributes, KEYS_ONLY or INCLUDE would cost {lean} WCU: {now - lean} WCU saved "
            "per put and per delete (the model does not declare which attributes a pattern reads: check before "
            "changing a projection, which replaces the index).",
        ))
    return out


def _collection_reads(model: Model) -> list[ModelWarning]:
    out = []
    for r in model.resolved_patterns.values():
        # (a write-sharded partition holds its shard number: no other entity shares it in practice)
        if r.operation != "Query" or r.sk not in UNBOUNDED or not r.intruders or r.shards:
            continue
        paid, useful = _collection_page(model, r)
        where = f"access pattern {r.name!r}"
        target = "the table" if r.index is None else f"index {r.index.name!r}"
        out.append(ModelWarning(
            "CollectionRead", where,
            f"{where} reads {target} with sort-key condition {r.sk or 'none'}, which does not bound it to "
            f"{', '.join(r.entities)} keys, and {', '.join(r.intruders)} items may share the partition: they are "
            f"read, paid for and dropped by the entity filter. With as many of each as of {r.entities[0]} in the "
            f"partition, every {PAGE_ITEMS} items returned cost {paid:g} RCU instead of {useful:g} ({paid - useful:g} "
            "RCU wasted). Give the pattern a sort-key condition (begins_with on the entity's sort-key prefix).",
        ))
    return out


def _collection_page(model: Model, r: ResolvedPattern) -> tuple[float, float]:
    """(RCU of a page reading ``PAGE_ITEMS`` items of the pattern plus as many of each intruder,
    RCU of the page without them), eventually consistent."""
    useful = read_estimate(model, r.name, items=PAGE_ITEMS).total
    index = r.index_name
    extra = 0
    for other in r.intruders:
        shape = item_shape(model, other, None, index=index)
        extra += PAGE_ITEMS * (shape.size if index is None else shape.entries.get(index, 0))
    own = sum(
        (item_shape(model, e, None, index=index).size if index is None
         else item_shape(model, e, None, index=index).entries.get(index, 0))
        for e in (r.entities[n % len(r.entities)] for n in range(PAGE_ITEMS))
    )
    return read_units(own + extra, consistent=False), useful
