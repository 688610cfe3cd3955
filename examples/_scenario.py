"""Small helpers the example scenarios share: section headings, item and argument formatting,
finding a function in a synthesized template."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any


def show(title: str) -> None:
    """Print a section heading."""
    print(f"\n== {title} " + "=" * max(0, 72 - len(title)))


def fmt(item: Mapping[str, Any]) -> str:
    """An item as ``name=value`` pairs, sorted, without the entity attribute."""
    return ", ".join(f"{k}={v}" for k, v in sorted(item.items()) if k != "_type")


def args_text(values: Mapping[str, Any]) -> str:
    """Access-pattern arguments as text (datetimes to the minute, ranges as tuples)."""
    def one(v: Any) -> str:
        if isinstance(v, tuple):
            return "(" + ", ".join(one(x) for x in v) + ")"
        return v.strftime("%Y-%m-%d %H:%M") if isinstance(v, datetime) else repr(v)

    return ", ".join(f"{k}={one(v)}" for k, v in values.items())


def function_id(template: Mapping[str, Any], handler: str) -> str:
    """Logical id of the one ``AWS::Lambda::Function`` whose ``Handler`` is ``handler`` or starts
    with it (``"orders_api."``). Raises ``LookupError`` unless exactly one matches."""
    found = [
        lid for lid, r in template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function"
        and (r["Properties"]["Handler"] == handler or r["Properties"]["Handler"].startswith(handler))
    ]
    if len(found) != 1:
        raise LookupError(f"expected one function with handler {handler!r}, found {found}")
    return found[0]
