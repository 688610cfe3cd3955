"""Break one DynamoDB request/response (typed JSON, as boto3's client sends it) into per-key hits."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ...model import Model

#: Name of the base table in records and reports (as in access patterns).
TABLE = "table"
READ, WRITE = "read", "write"
#: boto3 method name → operation label in records and reports.
OPERATION_LABELS: dict[str, str] = {
    "get_item": "GetItem", "put_item": "PutItem", "update_item": "UpdateItem", "delete_item": "DeleteItem",
    "query": "Query", "scan": "Scan", "batch_get_item": "BatchGet", "batch_write_item": "BatchWrite",
    "transact_write_items": "TransactWrite", "transact_get_items": "TransactGet",
}
READS = frozenset({"GetItem", "Query", "Scan", "BatchGet", "TransactGet"})
_ASSIGN = re.compile(r"(#?[A-Za-z0-9_.\-]+)\s*=\s*(:[A-Za-z0-9_]+)")
_NAME = re.compile(r"#[A-Za-z0-9_]+")


class Layout:
    """Key attribute names of one table's model."""

    def __init__(self, model: Model) -> None:
        self.pk = model.pk_attribute
        self.sk: str | None = model.sk_attribute if model.has_sort_key else None
        self.gsis: dict[str, str] = {i.name: i.pk_attribute for i in model.gsis}


class Capacity(NamedTuple):
    total: float
    table: float
    gsis: dict[str, float]


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One request: key hits ``(sketch, read/write, key, units)``, the index it ran on (table,
    GSI or LSI name), the sketch of its own keys, Count/ScannedCount, and a Query/Scan shape.
    (Not a NamedTuple: its ``index`` and ``count`` would shadow the tuple methods.)"""

    hits: list[tuple[str, str, str, float]]
    index: str
    sketch: str
    count: int | None
    scanned: int | None
    shape: str | None
    capacity: Capacity | None


def plain(value: Any) -> str | None:
    """The text of a typed key value ``{"S": "USER#u1"}`` (N and B values as text)."""
    if isinstance(value, Mapping) and len(value) == 1:
        inner = next(iter(value.values()))
        if isinstance(inner, bytes):
            return inner.hex()
        return inner if isinstance(inner, str) else str(inner)
    return None


def names(expression: str, attribute_names: Mapping[str, str]) -> str:
    """``expression`` with ``#placeholders`` replaced by attribute names (values stay ``:v``)."""
    return _NAME.sub(lambda m: attribute_names.get(m.group(0), m.group(0)), expression)


def assigned(expression: str | None, params: Mapping[str, Any]) -> dict[str, str]:
    """``attribute → plain value`` for every ``name = :value`` term of an expression."""
    if not expression:
        return {}
    attr_names = params.get("ExpressionAttributeNames") or {}
    values = params.get("ExpressionAttributeValues") or {}
    out: dict[str, str] = {}
    for name, placeholder in _ASSIGN.findall(expression):
        value = plain(values.get(placeholder))
        if value is not None:
            out.setdefault(attr_names.get(name, name), value)
    return out


def capacity(response: Mapping[str, Any] | None, table: str) -> Capacity | None:
    """Units consumed on ``table`` (total, base table, per GSI), or None if none were reported."""
    raw = (response or {}).get("ConsumedCapacity")
    if not raw:
        return None
    gsis: dict[str, float] = {}
    total, on_table, seen = 0.0, 0.0, False
    for entry in raw if isinstance(raw, list) else [raw]:
        if entry.get("TableName") not in (None, table):
            continue
        seen = True
        units = float(entry.get("CapacityUnits", 0.0))
        total += units
        on_table += float(entry["Table"].get("CapacityUnits", 0.0)) if "Table" in entry else units
        for name, used in (entry.get("GlobalSecondaryIndexes") or {}).items():
            gsis[name] = gsis.get(name, 0.0) + float(used.get("CapacityUnits", 0.0))
    return Capacity(total, on_table, gsis) if seen else None


def is_for(table: str | None, params: Mapping[str, Any]) -> bool:
    """Whether a request touches ``table``."""
    if "RequestItems" in params:
        return table in params["RequestItems"]
    if "TransactItems" in params:
        return any(table == body.get("TableName") for a in params["TransactItems"] for body in a.values())
    return params.get("TableName") == table


def breakdown(
    layout: Layout, table: str, label: str, params: Mapping[str, Any], response: Mapping[str, Any] | None
) -> Breakdown:
    cap = capacity(response, table)
    response = response or {}
    hits: list[tuple[str, str, str, float]] = []
    if label in ("Query", "Scan"):
        index = params.get("IndexName") or TABLE
        sketch = index if index in layout.gsis else TABLE  # an LSI shares the table's partitions
        attr_names = params.get("ExpressionAttributeNames") or {}
        if label == "Query":
            key = assigned(params.get("KeyConditionExpression"), params).get(layout.gsis.get(index, layout.pk))
            if key is not None:
                hits.append((sketch, READ, key, cap.total if cap else 0.0))
            shape = f"{index}: {names(params.get('KeyConditionExpression', ''), attr_names)}"
        else:
            shape = f"{index}: all items" + (f" (segment of {params['TotalSegments']})" if "TotalSegments" in params else "")
        if params.get("FilterExpression"):
            shape += f" FILTER {names(params['FilterExpression'], attr_names)}"
        return Breakdown(hits, index, sketch, response.get("Count"), response.get("ScannedCount"), shape, cap)
    kind = READ if label in READS else WRITE
    items: list[tuple[Mapping[str, Any], Mapping[str, Any] | None]] = []  # (key or item, image with GSI keys)
    if label in ("GetItem", "DeleteItem", "UpdateItem", "PutItem"):
        image = params.get("Item") if label == "PutItem" else response.get("Attributes")
        if label == "UpdateItem" and image is None:
            image = assigned(params.get("UpdateExpression"), params)
        items.append((params.get("Item") or params.get("Key") or {}, image))
    elif label == "BatchGet":
        items += [(k, None) for k in params["RequestItems"][table].get("Keys", [])]
    elif label == "BatchWrite":
        for write in params["RequestItems"][table]:
            put = write.get("PutRequest")
            items.append((put["Item"], put["Item"]) if put else (write.get("DeleteRequest", {}).get("Key", {}), None))
    else:  # TransactWrite / TransactGet
        for action in params.get("TransactItems", []):
            for verb, body in action.items():
                if body.get("TableName") != table:
                    continue
                image = body.get("Item") if verb == "Put" else None
                if verb == "Update":
                    image = assigned(body.get("UpdateExpression"), body)
                items.append((body.get("Item") or body.get("Key") or {}, image))
    per_item = (cap.table if cap else 0.0) / max(len(items), 1)
    for item, _ in items:
        key = plain(item.get(layout.pk))
        if key is not None:
            hits.append((TABLE, kind, key, per_item))
    if kind == WRITE:
        for gsi, pk_attr in layout.gsis.items():
            if cap is not None and gsi not in cap.gsis:
                continue  # DynamoDB lists every GSI a write touched: this one was not
            keys = [k for k in (_gsi_key(image, pk_attr) for _, image in items) if k is not None]
            units = cap.gsis[gsi] / len(keys) if cap and keys else 0.0
            hits += [(gsi, WRITE, k, units) for k in keys]
    count = len(response.get("Responses", {}).get(table, [])) if label == "BatchGet" else None
    if label == "GetItem":
        count = 1 if response.get("Item") else 0
    return Breakdown(hits, TABLE, TABLE, count, None, None, cap)


#: Write operation label (and transaction/batch verb) -> the write kind of the rates file.
_KINDS = {"PutItem": "put", "UpdateItem": "update", "DeleteItem": "delete", ("TransactWrite", "Put"): "transaction_put",
          ("TransactWrite", "Update"): "transaction_update", ("TransactWrite", "Delete"): "transaction_delete",
          ("BatchWrite", "PutRequest"): "batch_put", ("BatchWrite", "DeleteRequest"): "batch_delete"}
WRITE_LABELS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWrite", "BatchWrite"})


def written(layout: Layout, table: str, label: str, params: Mapping[str, Any]) -> list[tuple[str, tuple[str | None, ...]]]:
    """``(write kind, table key as text)`` of every item a write request writes to ``table``
    (a transaction's condition checks write nothing and are left out)."""
    out: list[tuple[Mapping[str, Any], str]] = []
    if label in ("PutItem", "UpdateItem", "DeleteItem"):
        out.append((params.get("Item") or params.get("Key") or {}, _KINDS[label]))
    elif label == "BatchWrite":
        for write in params["RequestItems"][table]:
            for verb, body in write.items():
                kind = _KINDS.get((label, verb))
                if kind is not None:
                    out.append((body.get("Item") or body.get("Key") or {}, kind))
    elif label == "TransactWrite":
        for action in params.get("TransactItems", []):
            for verb, body in action.items():
                kind = _KINDS.get((label, verb))
                if kind is not None and body.get("TableName") == table:
                    out.append((body.get("Item") or body.get("Key") or {}, kind))
    return [(kind, key_text(layout, item)) for item, kind in out]


def key_text(layout: Layout, item: Mapping[str, Any]) -> tuple[str | None, ...]:
    """The table key of a wire item (or key) as text: ``(pk, sk)``, or ``(pk,)`` without a sort key."""
    pk = plain(item.get(layout.pk))
    return (pk,) if layout.sk is None else (pk, plain(item.get(layout.sk)))


def _gsi_key(image: Mapping[str, Any] | None, attr: str) -> str | None:
    if not image or attr not in image:
        return None
    value = image[attr]
    return value if isinstance(value, str) else plain(value)
