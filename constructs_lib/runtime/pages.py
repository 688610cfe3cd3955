"""Pages of query results and the cursors that continue them.

A cursor is the ``LastEvaluatedKey`` of a page and a fingerprint of the query it belongs to,
signed, so a cursor passed to a different query (another pattern, key values, index, direction
or filter) or edited by hand is refused instead of silently skipping or repeating items.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .exceptions import CursorError

#: What a page holds: decoded items (``dict[str, Any]``), or an entity's ``TypedDict`` in a
#: generated typed module (``Page[OrderItem]``).
T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of query results; ``cursor`` is None on the last page."""

    items: list[T]
    cursor: str | None

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


#: Keyword arguments of ``query`` that are options, not field values.
QUERY_OPTIONS = frozenset({"limit", "cursor", "descending", "consistent", "raw", "partition_at", "filter", "attributes"})


def follow_cursors(
    query: Any, pattern: str, values: Mapping[str, Any] | None, *, partitions: Sequence[Any] | None = None, **kw: Any
) -> Iterator[dict[str, Any]]:
    """Every item of ``query(pattern, values, cursor=..., **kw)``, page after page; with
    ``partitions``, of each partition in turn (``partition_at=``)."""
    cursor = kw.pop("cursor", None)  # a cursor continues the first partition read
    for partition in partitions if partitions and len(partitions) > 1 else [None]:
        extra = {} if partition is None else {"partition_at": partition}
        while True:
            page = query(pattern, values, **{**kw, "cursor": cursor, **extra})
            yield from page.items
            cursor = page.cursor
            if cursor is None:
                break


# Cursors -------------------------------------------------------------------------------------------------
def fingerprint(pattern: str, params: Mapping[str, Any]) -> str:
    """What shapes a query's page sequence: pattern, index, key condition and its values,
    direction, filter. A cursor carries it; a cursor from any other query is refused."""
    basis = json.dumps([
        pattern, params.get("IndexName"), params["KeyConditionExpression"], params.get("ExpressionAttributeValues"),
        params.get("ScanIndexForward", True), params.get("FilterExpression"), params.get("ExpressionAttributeNames"),
    ], sort_keys=True, default=str)
    return hashlib.sha256(basis.encode()).hexdigest()[:24]


class CursorCodec:
    """Tamper-evident cursors: the last evaluated key and the query's fingerprint, signed with
    HMAC-SHA256 under ``key``.

    A cursor is refused (:class:`CursorError`) when it is malformed, its signature does not
    verify, it belongs to another query, or its key is not in the partition being read — so
    neither a changed query nor an edited cursor can skip, repeat or widen what a page reads.
    How secret the key is decides who can forge one: see ``TableClient(cursor_key=...)``.
    """

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes) or len(key) < 16:
            raise CursorError("a cursor key must be at least 16 bytes")
        self._key = key

    def _mac(self, payload: bytes) -> str:
        digest = hmac.new(self._key, payload, hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def encode(self, last_key: Mapping[str, Any], fingerprint: str) -> str:
        blob = json.dumps({"q": fingerprint, "k": last_key}, sort_keys=True, separators=(",", ":")).encode()
        return f"{base64.urlsafe_b64encode(blob).decode().rstrip('=')}.{self._mac(blob)}"

    def decode(
        self, cursor: Any, fingerprint: str, *, partition: tuple[str, Mapping[str, Any]] | None = None,
        source: str = "query()", other: str = "a different query (pattern, key values, index, direction or filter changed)",
    ) -> dict[str, Any]:
        """The ``ExclusiveStartKey`` in ``cursor``. ``partition``: (attribute, typed value) the
        key must carry."""
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
            data = json.loads(blob)
            key, q = data["k"], data["q"]
            if not isinstance(key, dict) or not all(isinstance(v, dict) and len(v) == 1 for v in key.values()):
                raise ValueError("not a DynamoDB key")
        except CursorError:
            raise
        except (ValueError, KeyError, TypeError) as exc:
            raise CursorError(f"cursor {cursor[:40]!r} is malformed; pass back a cursor returned by {source}") from exc
        if q != fingerprint:
            raise CursorError(
                f"cursor {cursor[:40]!r} belongs to {other}; a cursor continues exactly the query that returned it"
            )
        if partition is not None and key.get(partition[0]) != partition[1]:
            raise CursorError(f"cursor {cursor[:40]!r} points outside the partition this query reads")
        return key


def derive_cursor_key(*parts: str) -> bytes:
    """A deterministic cursor key from public facts (table and model): it authenticates cursors
    against corruption and mix-ups, not against a client who knows both — pass a secret for that."""
    return hashlib.sha256("\0".join(("constructs_lib.cursor", *parts)).encode()).digest()
