"""Example values of a model's items: deterministic, typed by each field's declared kind.

The one rule for example data: ``describe`` and the NoSQL Workbench export show items built from
these values, and ``constructs_lib.capacity.estimate`` prices its representative item from them.
Synth time only (nothing the runtime imports), so never shipped in a Lambda asset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Model
    from .resolved import ResolvedEntity

__all__ = ["EXAMPLE_TIME", "HIGH", "example_value", "example_values", "sparse_values"]

#: The instant example timestamps start from (day ``n`` of January 2026 for example ``n``).
EXAMPLE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
#: Example index of the upper bound of a ``between`` condition (day 31: a month of data).
HIGH = 31
_NUMERIC_NAME = re.compile(r"^(.*_)?(count|quantity|qty|amount|price|total|cents|age|score|size|\w+_cents)$")


def example_value(entity: ResolvedEntity, field: str, n: int = 1) -> Any:
    """A deterministic example value for ``field`` of ``entity`` (example number ``n`` ≥ 1).

    Declared fields follow their kind: ``timestamp`` → day ``n`` of January 2026 (UTC),
    ``date`` → the same day, ``number`` → ``n``, enum strings → a declared choice, other
    strings → ``<initial>-<n>`` for ``*_id`` names (``user_id`` → ``u-1``), an address for
    ``*email*`` names, ``<name>-<n>`` otherwise. Undeclared attributes (required attributes,
    ``when_present`` flags) get a number when the name suggests one (``quantity``,
    ``price_cents``), else a string by the same rules.
    """
    spec = entity.fields.get(field)
    if spec is not None:
        if spec.kind == "timestamp":
            return EXAMPLE_TIME + timedelta(days=n - 1)
        if spec.kind == "date":
            return (EXAMPLE_TIME + timedelta(days=n - 1)).date().isoformat()
        if spec.kind == "number":
            return min(n, 10 ** (spec.width or 1) - 1)  # fits the zero-padded width
        if spec.choices:
            return spec.choices[(n - 1) % len(spec.choices)]
    elif _NUMERIC_NAME.match(field):
        return n
    if field.endswith("_id") and len(field) > 3:
        return f"{field[0]}-{n}"
    if "email" in field:
        return f"user-{n}@example.com"
    return f"{field}-{n}"


def sparse_values(entity: ResolvedEntity, index_names: Iterable[str]) -> dict[str, Any]:
    """Values meeting every ``when_equals`` condition of the given indexes (first allowed value)."""
    out: dict[str, Any] = {}
    for name in index_names:
        key = entity.indexes[name]
        for attr, allowed in key.when_equals.items():
            out.setdefault(attr, allowed[0])
    return out


def example_values(
    model: Model, entity: ResolvedEntity, n: int = 1, *, sparse: bool = True, keep: Iterable[str] = ()
) -> dict[str, Any]:
    """Example attributes of one ``entity`` item: every declared field, required attribute and
    sparse-index input.

    Parameters
    ----------
    model, entity
        The model and one of its entities.
    n
        Example number (≥ 1); different numbers give different values.
    sparse
        If True (default) the item meets every sparse-index condition (``when_equals`` values,
        ``when_present`` attributes set), so it is in every index it declares keys for. If
        False, ``when_equals`` fields take a value outside the allowed ones (when the field
        declares other choices) and ``when_present`` attributes are left out.
    keep
        Fields that take example number 1 whatever ``n`` is (e.g. the partition-key fields,
        so several examples land in one item collection). Default: none.
    """
    names: list[str] = list(entity.fields)
    names += [r for r in entity.required if r not in names]
    conditions: dict[str, tuple[str, ...]] = {}
    flags: list[str] = []
    for key in entity.indexes.values():
        if key.when_present and key.when_present not in names:
            names.append(key.when_present)
        if key.when_present:
            flags.append(key.when_present)
        for attr, allowed in key.when_equals.items():
            conditions.setdefault(attr, allowed)
            if attr not in names:
                names.append(attr)
    keep = set(keep)
    values = {name: example_value(entity, name, 1 if name in keep else n) for name in names}
    managed = {model.ttl_attribute, entity.version_attribute, model.entity_attribute, *model.key_attributes()}
    for name in [v for v in values if v in managed]:
        del values[name]
    if sparse:
        values.update(sparse_values(entity, entity.indexes))
        return values
    for attr, allowed in conditions.items():
        spec = entity.fields.get(attr)
        others = [c for c in (spec.choices or ()) if c not in allowed] if spec is not None else []
        values[attr] = others[0] if others else allowed[0]
    for flag in flags:
        if flag not in entity.table_key_fields and flag not in entity.required:
            values.pop(flag, None)
    return values
