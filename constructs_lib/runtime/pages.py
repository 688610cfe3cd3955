"""Pages of query results and the cursors that continue them.

A cursor is the ``LastEvaluatedKey`` of a page, base64-encoded together with a fingerprint of
the query it belongs to, so a cursor passed to a different query (another pattern or other key
values) is refused instead of silently skipping or repeating items.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .exceptions import CursorError


@dataclass(frozen=True)
class Page:
    """One page of query results; ``cursor`` is None on the last page."""

    items: list[dict[str, Any]]
    cursor: str | None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


#: Keyword arguments of ``query`` that are options, not field values.
QUERY_OPTIONS = frozenset({"limit", "cursor", "descending", "consistent", "raw", "partition_at"})


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
def _fingerprint(pattern: str, params: Mapping[str, Any]) -> str:
    basis = json.dumps([pattern, params.get("IndexName"), params["KeyConditionExpression"],
                        params.get("ExpressionAttributeValues")], sort_keys=True, default=str)
    return hashlib.sha256(basis.encode()).hexdigest()[:16]


def _encode_cursor(last_key: Mapping[str, Any], fingerprint: str) -> str:
    blob = json.dumps({"q": fingerprint, "k": last_key}, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(blob.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str, fingerprint: str) -> dict[str, Any]:
    if not isinstance(cursor, str):
        raise CursorError(f"cursor {cursor!r} must be the str returned by query() as Page.cursor")
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        key, q = data["k"], data["q"]
        if not isinstance(key, dict) or not all(isinstance(v, dict) and len(v) == 1 for v in key.values()):
            raise ValueError("not a DynamoDB key")
    except (ValueError, KeyError, TypeError) as exc:
        raise CursorError(f"cursor {cursor[:40]!r} is malformed; pass back a cursor returned by query()") from exc
    if q != fingerprint:
        raise CursorError(f"cursor {cursor[:40]!r} belongs to a different query (pattern or key values changed)")
    return key
