"""Query cursors: what a cursor binds (the page-shaping context of the query that issued it)
and how it is signed (:class:`CursorSigner`).

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
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import _exports
from .exceptions import CursorError
from .jsontext import load_json

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
    """``value`` as canonical JSON (sorted keys, no spaces, text as is). Text and one-key maps of
    text (a key value: ``{"S": ...}``) are written inline, exactly as ``json.dumps`` writes them."""
    if type(value) is str:
        return _json_text(value)
    if type(value) is dict and len(value) == 1:
        ((tag, inner),) = value.items()
        if type(tag) is str and type(inner) is str:
            return f"{{{_json_text(tag)}:{_json_text(inner)}}}"
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_bytes)


#: What ``json.dumps(text, ensure_ascii=False)`` writes for a str (json's own encoder of text).
_json_text: Callable[[str], str] = json.encoder.encode_basestring


def _bytes(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError(f"{type(value).__name__} in a query request cannot be bound to a cursor")


# Signing ---------------------------------------------------------------------------------------------------
#: Most part digests a signer keeps (see ``CursorSigner._part``).
PART_CACHE = 1024


class CursorSigner:
    """Tamper-evident cursors: the last evaluated key and a keyed digest of each part of the
    query's page-shaping context (:func:`query_parts`, :func:`client_parts`), signed with HMAC-SHA256 under ``key``.

    A cursor is refused (:class:`CursorError`) when it is malformed, its signature does not
    verify, any bound part differs (the message names which, in general terms), or its key is
    not in the partition being read — so neither a changed query nor an edited cursor can skip,
    repeat or widen what a page reads. ``bound``: the parts every cursor of this signer binds
    (a client's table and model). How secret the key is decides who can forge one: see
    ``TableClient(cursor_key=...)``.
    """

    def __init__(self, key: bytes, bound: Mapping[str, str] | None = None) -> None:
        if not isinstance(key, bytes) or len(key) < 16:
            raise CursorError("a cursor key must be at least 16 bytes")
        self._key = key
        self.bound: dict[str, str] = dict(bound or {})
        self._keyed = hmac.new(key, digestmod=hashlib.sha256)  # copied per MAC: the key is hashed in once
        # Part digests already made (a pure function of name and text): a query's pattern, index,
        # direction and the client's parts repeat on every cursor. Emptied when it grows past PART_CACHE.
        self._parts: dict[tuple[str, str], str] = {}

    def _mac(self, payload: bytes, size: int = 16) -> str:
        mac = self._keyed.copy()
        mac.update(payload)
        return base64.urlsafe_b64encode(mac.digest()[:size]).decode().rstrip("=")

    def _part(self, name: str, text: str) -> str:
        digest = self._parts.get((name, text))
        if digest is None:
            digest = self._mac(f"part\0{name}\0{text}".encode(), 8)
            if len(self._parts) >= PART_CACHE:
                self._parts.clear()
            self._parts[(name, text)] = digest
        return digest

    def digests(self, parts: Mapping[str, str]) -> dict[str, str]:
        """A keyed 64-bit digest of each part (``bound`` and ``parts``): what a cursor carries, so
        a refusal can say which part differs without revealing any part's value."""
        return {name: self._part(name, text) for name, text in {**self.bound, **parts}.items()}

    def sign(self, data: Mapping[str, Any]) -> str:
        """``data`` serialized and signed: the cursor text."""
        blob = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
        return f"{base64.urlsafe_b64encode(blob).decode().rstrip('=')}.{self._mac(blob)}"

    def encode(self, last_key: Mapping[str, Any], parts: Mapping[str, str]) -> str:
        """The cursor continuing after ``last_key`` the query whose context is ``parts``."""
        return self.sign({"q": self.digests(parts), "k": last_key})

    def decode(
        self, cursor: Any, parts: Mapping[str, str], *, partition: tuple[str, Mapping[str, Any]] | None = None,
        source: str = "query()", other: str = "a different query",
    ) -> dict[str, Any]:
        """The ``ExclusiveStartKey`` in ``cursor``, issued for the context ``parts``. ``partition``:
        (attribute, typed value) the key must carry."""
        if not isinstance(cursor, str):
            raise CursorError(f"cursor {cursor!r:.60} must be the str returned by {source} as .cursor")
        body, dot, mac = cursor.partition(".")
        try:
            if not dot or not mac:
                raise ValueError("no signature")
            blob = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            if not hmac.compare_digest(mac, self._mac(blob)):
                raise CursorError(
                    f"cursor {cursor[:40]!r} is not one this table's client issued (its signature does not verify); "
                    f"pass back a cursor returned by {source} unchanged"
                )
            data = load_json(blob, f"cursor {cursor[:40]!r}", CursorError)
            key, bound = data["k"], data["q"]
            if not isinstance(key, dict) or not all(isinstance(v, dict) and len(v) == 1 for v in key.values()):
                raise ValueError("not a DynamoDB key")
            if not isinstance(bound, dict):
                raise ValueError("no context")
        except CursorError:
            raise
        except (ValueError, KeyError, TypeError) as exc:
            raise CursorError(f"cursor {cursor[:40]!r} is malformed; pass back a cursor returned by {source}") from exc
        expected = self.digests(parts)
        differ = [name for name in dict.fromkeys([*expected, *bound]) if bound.get(name) != expected.get(name)]
        if differ:
            raise CursorError(
                f"cursor {cursor[:40]!r} belongs to {other}: its {', '.join(map(str, differ))} "
                f"differ{'s' if len(differ) == 1 else ''} from this one's; a cursor continues exactly the query "
                "that returned it"
            )
        if partition is not None and key.get(partition[0]) != partition[1]:
            raise CursorError(f"cursor {cursor[:40]!r} points outside the partition this query reads")
        return key


def derive_cursor_key(*parts: str) -> bytes:
    """A deterministic cursor key from public facts (table and model): it authenticates cursors
    against corruption and mix-ups, not against a client who knows both — pass a secret for that."""
    return hashlib.sha256("\0".join(("constructs_lib.cursor", *parts)).encode()).digest()


if not TYPE_CHECKING:  # its names of 0.1.0 (runtime/_deprecated.py); a type checker flags them
    __getattr__ = _exports.lazy_exports(__name__, {})[1]
