"""Pages of query results and following their cursors."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

from ._records import frozen_record

#: What a page holds: decoded items (``dict[str, Any]``), or an entity's ``TypedDict`` in a
#: generated typed module (``Page[OrderItem]``).
T = TypeVar("T")


@frozen_record
class Page(Generic[T]):
    """One page of query results; ``cursor`` is None on the last page."""

    items: list[T]
    cursor: str | None

    def __init__(self, items: list[T], cursor: str | None) -> None:
        self.__dict__.update(items=items, cursor=cursor)

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
