"""What a query cursor binds: the page-shaping context of the query that issued it.

The context is read from the request actually sent, so every option that changes it is bound
by construction: the table (name, region, endpoint) and model fingerprint of the client, then
the access pattern, index, key condition with its values, filter with its values, projection
(its paths as a set: their order does not change a page), direction and shard count. ``Limit``,
``ConsistentRead`` and ``ExclusiveStartKey`` are left out on purpose (they change where a page
ends or how fresh it is, not which items follow a cursor); any other request parameter is bound
under "other request options". Rationale: docs/adr/0037-what-a-cursor-binds.md.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import Model

#: Query parameters a cursor does not bind, and why (see the module docstring).
UNBOUND_PARAMETERS = {
    "Limit": "where a page ends, not which items follow the cursor",
    "ConsistentRead": "how fresh the read is, not which items follow the cursor",
    "ExclusiveStartKey": "the cursor's own position",
    "TableName": "bound with region and endpoint as the table part",
    "ExpressionAttributeNames": "resolved into the expressions that use them",
    "ExpressionAttributeValues": "resolved into the expressions that use them",
}
#: The parts a query's cursor binds, in the general terms a refusal names them by.
TABLE, MODEL, PATTERN, INDEX, KEY = (
    "table (name, region or endpoint)", "model fingerprint", "access pattern", "index", "key values")
FILTER, PROJECTION, DIRECTION, SHARDS, OTHER = (
    "filter (expression or values)", "projection (attributes=)", "direction", "shard count", "other request options",
)

_PLACEHOLDER = re.compile(r"[#:][A-Za-z_]+[0-9]*")


def client_parts(table_name: str, model: Model, client: Any) -> dict[str, str]:
    """The parts every cursor of a client binds: its table (name, and the boto3 client's region
    and endpoint when it has them) and its model's fingerprint."""
    from .contract import fingerprint
    from .tokens import table_identity

    return {TABLE: _canonical(table_identity(client, table_name)), MODEL: fingerprint(model)}


def query_parts(pattern: str, params: Mapping[str, Any], *, shards: int | None = None) -> dict[str, str]:
    """The parts a Query's cursor binds, read from its ``params`` (placeholders resolved, so
    equal queries give equal parts however their placeholders were numbered)."""
    names, values = params.get("ExpressionAttributeNames", {}), params.get("ExpressionAttributeValues", {})

    def resolve(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: _canonical(names[m[0]] if m[0][0] == "#" else values[m[0]]), text)

    parts = {
        PATTERN: _canonical(pattern),
        INDEX: _canonical(params.get("IndexName")),
        KEY: resolve(params["KeyConditionExpression"]),
        DIRECTION: "ascending" if params.get("ScanIndexForward", True) else "descending",
    }
    if "FilterExpression" in params:
        parts[FILTER] = resolve(params["FilterExpression"])
    if "ProjectionExpression" in params:  # placeholders hold no comma: split, then resolve each path
        parts[PROJECTION] = _canonical(sorted(resolve(p.strip()) for p in params["ProjectionExpression"].split(",")))
    if shards is not None:
        parts[SHARDS] = str(shards)
    known = {"KeyConditionExpression", "IndexName", "ScanIndexForward", "FilterExpression", "ProjectionExpression"}
    other = {k: v for k, v in params.items() if k not in known and k not in UNBOUND_PARAMETERS}
    if other:
        parts[OTHER] = _canonical(other)
    return parts


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_bytes)


def _bytes(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError(f"{type(value).__name__} in a query request cannot be bound to a cursor")
