"""Small helpers the example scenarios share: section headings, item and argument formatting,
finding a function in a synthesized template, and running a scenario on its own
(``python -m examples.<name>.scenario``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from constructs_lib.testing import DynamoDBLocal


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


def run_standalone(name: str, build_app: Callable[[str], Any], run: Callable[[Path, DynamoDBLocal], Any]) -> int:
    """Synthesize ``build_app`` into a temporary cloud assembly, start DynamoDB Local on
    127.0.0.1, ``run(cdk_out, server)``, stop the server and remove the assembly."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from constructs_lib.testing import DynamoDBLocal

    with tempfile.TemporaryDirectory(prefix=f"{name}-cdk-out-") as tmp:
        build_app(tmp).synth()
        with DynamoDBLocal() as server:
            print(f"DynamoDB Local {server.endpoint}; {name} app synthesized into {tmp}")
            run(Path(tmp), server)
    return 0
