"""Pages of query results and the cursors that continue them.

A cursor is the ``LastEvaluatedKey`` of a page and a digest of everything that shaped the query
it belongs to (:mod:`.cursor_context`), signed, so a cursor passed to a different query (another
table, model, pattern, key values, index, filter, projection or direction) or edited by hand is
refused instead of silently skipping or repeating items.
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
class CursorCodec:
    """Tamper-evident cursors: the last evaluated key and a keyed digest of each part of the
    query's page-shaping context (:mod:`.cursor_context`), signed with HMAC-SHA256 under ``key``.

    A cursor is refused (:class:`CursorError`) when it is malformed, its signature does not
    verify, any bound part differs (the message names which, in general terms), or its key is
    not in the partition being read — so neither a changed query nor an edited cursor can skip,
    repeat or widen what a page reads. ``bound``: the parts every cursor of this codec binds
    (a client's table and model). How secret the key is decides who can forge one: see
    ``TableClient(cursor_key=...)``.
    """

    def __init__(self, key: bytes, bound: Mapping[str, str] | None = None) -> None:
        if not isinstance(key, bytes) or len(key) < 16:
            raise CursorError("a cursor key must be at least 16 bytes")
        self._key = key
        self.bound: dict[str, str] = dict(bound or {})

    def _mac(self, payload: bytes, size: int = 16) -> str:
        digest = hmac.new(self._key, payload, hashlib.sha256).digest()[:size]
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def digests(self, parts: Mapping[str, str]) -> dict[str, str]:
        """A keyed 64-bit digest of each part (``bound`` and ``parts``): what a cursor carries, so
        a refusal can say which part differs without revealing any part's value."""
        return {name: self._mac(f"part\0{name}\0{text}".encode(), 8) for name, text in {**self.bound, **parts}.items()}

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
            data = json.loads(blob)
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
