"""Export data models as a NoSQL Workbench for Amazon DynamoDB data model (JSON, format 3.0).

One table per model, one facet per entity (its key templates as key aliases), and sample items
in DynamoDB JSON built by the runtime exactly as ``TableClient.put`` writes them, so the
Workbench's index views show each index's real, sparse membership. LSIs, which the Workbench does
not model, appear among the non-key attributes and in the description.

The format followed and its sources: docs/adr/0026-model-docs-in-the-cloud-assembly.md.
No AWS CDK import; the runtime's request builder loads boto3's type serializer.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..model.exceptions import ModelValidationError
from .describe import example_values

if TYPE_CHECKING:
    from ..model.model import Model

__all__ = ["WORKBENCH_FORMAT_VERSION", "sample_items", "to_workbench", "to_workbench_json"]

#: ``ModelMetadata.Version`` of the files NoSQL Workbench 3.x writes and reads.
WORKBENCH_FORMAT_VERSION = "3.0"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_TABLE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def _workbench_date(when: datetime) -> str:
    """``Jan 12, 2023, 10:14 AM`` — the Workbench's own date format (locale independent)."""
    hour = when.hour % 12 or 12
    half = "AM" if when.hour < 12 else "PM"
    return f"{_MONTHS[when.month - 1]} {when.day:02d}, {when.year}, {hour:02d}:{when.minute:02d} {half}"


def _now() -> datetime:
    """Now in UTC, or ``SOURCE_DATE_EPOCH`` (reproducible builds) when that is set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=UTC)
    return datetime.now(UTC)


def sample_items(model: Model, *, per_entity: int = 2) -> dict[str, list[dict[str, Any]]]:
    """Sample items per entity, in DynamoDB JSON, as the runtime's ``put`` would write them.

    Parameters
    ----------
    model
        The data model.
    per_entity
        Items per entity, ≥ 1. Default 2. The first meets every sparse-index condition; later
        ones take other values for ``when_equals`` fields (when the field has other choices)
        and lack ``when_present`` attributes, so sparse indexes visibly leave them out. Items
        of one entity share its partition-key values when their full keys still differ, so
        item collections show several items.

    Returns
    -------
    dict
        Entity name → list of items (``{"PK": {"S": ...}, ...}``).
    """
    if isinstance(per_entity, bool) or not isinstance(per_entity, int) or per_entity < 1:
        raise ModelValidationError(f"per_entity {per_entity!r} must be an int >= 1 (sample items per entity)")
    from ..runtime import request_params
    from ..runtime.items import ItemMapper

    mapper = ItemMapper(model)
    out: dict[str, list[dict[str, Any]]] = {}
    for entity in model.entities.values():
        items: list[dict[str, Any]] = []
        seen: set[tuple[str, ...]] = set()
        for n in range(1, per_entity + 1):
            attrs = example_values(model, entity, n, sparse=n == 1, keep=entity.pk_template.fields)
            key = tuple(mapper.table_key(entity, attrs).values())
            if key in seen:  # constant sort key: vary the partition too
                attrs = example_values(model, entity, n, sparse=n == 1)
                key = tuple(mapper.table_key(entity, attrs).values())
            seen.add(key)
            item = request_params.put(mapper, "example-table", entity, attrs).params["Item"]
            first = [a for a in mapper.key_attributes if a in item] + [model.entity_attribute]
            items.append({**{a: item[a] for a in first}, **item})  # keys first, as the Workbench lists them
        out[entity.name] = items
    return out


def _key(name: str, kind: str = "S") -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": kind}


def _type_of(value: dict[str, Any]) -> str:
    (kind,) = value
    return str(kind)


def _table(model: Model, table_name: str, per_entity: int) -> dict[str, Any]:
    samples = sample_items(model, per_entity=per_entity)
    table_keys = {model.pk_attribute} | ({model.sk_attribute} if model.has_sort_key else set())
    non_key: dict[str, str] = {model.entity_attribute: "S"}
    for index in model.indexes.values():
        for attr in index.key_attributes:
            non_key.setdefault(attr, "S")
    for entity in model.entities.values():
        for name, spec in entity.fields.items():
            if name not in table_keys:
                non_key.setdefault(name, "N" if spec.kind == "number" else "S")
        if entity.version_attribute:
            non_key.setdefault(entity.version_attribute, "N")
    for items in samples.values():
        for item in items:
            for name, value in item.items():
                if name not in table_keys:
                    non_key.setdefault(name, _type_of(value))
    if model.ttl_attribute:
        non_key.setdefault(model.ttl_attribute, "N")
    facets = []
    for entity in model.entities.values():
        alias = {"PartitionKeyAlias": entity.pk}
        if entity.sk is not None:
            alias["SortKeyAlias"] = entity.sk
        names: list[str] = []
        for item in samples[entity.name]:
            names += [n for n in item if n not in table_keys and n not in names]
        facets.append({
            "FacetName": entity.name,
            "KeyAttributeAlias": alias,
            "TableData": samples[entity.name],
            "NonKeyAttributes": names,
            "DataAccess": {"MySql": {}},
        })
    key_attributes = {"PartitionKey": _key(model.pk_attribute)}
    if model.has_sort_key:
        key_attributes["SortKey"] = _key(model.sk_attribute)
    table: dict[str, Any] = {
        "TableName": table_name,
        "KeyAttributes": key_attributes,
        "NonKeyAttributes": [_key(n, t) for n, t in non_key.items()],
        "TableFacets": facets,
    }
    gsis = []
    for index in model.gsis:
        keys = {"PartitionKey": _key(index.pk_attribute)}
        if index.sk_attribute:
            keys["SortKey"] = _key(index.sk_attribute)
        gsis.append({"IndexName": index.name, "KeyAttributes": keys, "Projection": _projection(model, index)})
    if gsis:
        table["GlobalSecondaryIndexes"] = gsis
    table["TableData"] = [item for items in samples.values() for item in items]
    table["DataAccess"] = {"MySql": {}}
    table["BillingMode"] = "PAY_PER_REQUEST"
    return table


def _projection(model: Model, index: Any) -> dict[str, Any]:
    """The projection as ``SingleTable`` builds it: the entity attribute is always projected
    (``KEYS_ONLY`` becomes ``INCLUDE [entity attribute]``)."""
    if index.projection == "ALL":
        return {"ProjectionType": "ALL"}
    extra = [a for a in index.projection if a != model.entity_attribute] if isinstance(index.projection, tuple) else []
    return {"ProjectionType": "INCLUDE", "NonKeyAttributes": [model.entity_attribute, *extra]}


def _description(model: Model) -> str:
    parts = [(f"Data model {model.name!r} exported by constructs_lib: one facet per entity, sample items built "
              "by the runtime client (derived and sparse index keys included).")]
    if model.resolved_patterns:
        patterns = "; ".join(
            f"{r.name} ({r.operation} on {'table' if r.index is None else r.index.name})"
            for r in model.resolved_patterns.values()
        )
        parts.append(f"Access patterns: {patterns}.")
    if model.lsis:
        lsis = ", ".join(f"{i.name} (sort key {i.sk_attribute})" for i in model.lsis)
        parts.append(f"Local secondary indexes (not modelled by NoSQL Workbench): {lsis}.")
    if model.tenant_field:
        parts.append(f"Tenant field {model.tenant_field!r}; tenant-safe GSIs: {', '.join(model.tenant_safe_gsis) or 'none'}.")
    return " ".join(parts)


def _table_name(name: str) -> str:
    clean = _TABLE_NAME.sub("_", name)[:255]
    return clean if len(clean) >= 3 else clean + "_table"


def to_workbench(
    models: Model | Sequence[tuple[str, Model]],
    *,
    model_name: str | None = None,
    author: str = "constructs_lib",
    now: datetime | None = None,
    per_entity: int = 2,
) -> dict[str, Any]:
    """A NoSQL Workbench data model (format version 3.0) as a JSON-ready dict.

    Parameters
    ----------
    models
        One model (one table named after it), or ``(table name, model)`` pairs — e.g. one per
        ``SingleTable`` of an app. Table names are made valid DynamoDB names (``[A-Za-z0-9_.-]``,
        3–255 characters).
    model_name
        ``ModelName``. Default: the model's name (one model) or ``"constructs_lib"``.
    author
        ``ModelMetadata.Author``. Default ``"constructs_lib"``.
    now
        ``DateCreated``/``DateLastModified``. Default: now (UTC), or ``SOURCE_DATE_EPOCH``
        when set, for reproducible output.
    per_entity
        Sample items per entity (see :func:`sample_items`). Default 2.
    """
    from ..model.model import Model

    pairs = [(models.name, models)] if isinstance(models, Model) else list(models)
    if not pairs:
        raise ModelValidationError("to_workbench needs at least one model; got an empty sequence")
    when = _workbench_date(now or _now())
    description = " ".join(_description(m) for _, m in pairs)
    return {
        "ModelName": model_name or (pairs[0][1].name if len(pairs) == 1 else "constructs_lib"),
        "ModelMetadata": {
            "Author": author,
            "DateCreated": when,
            "DateLastModified": when,
            "Description": description,
            "AWSService": "Amazon DynamoDB",
            "Version": WORKBENCH_FORMAT_VERSION,
        },
        "DataModel": [_table(m, _table_name(name), per_entity) for name, m in pairs],
    }


def to_workbench_json(models: Model | Sequence[tuple[str, Model]], **kwargs: Any) -> str:
    """:func:`to_workbench` as indented JSON text (ends with a newline)."""
    return json.dumps(to_workbench(models, **kwargs), indent=2, ensure_ascii=False) + "\n"
