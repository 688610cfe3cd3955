"""Read capacity per call: GetItem, BatchGetItem, Query pages, write-sharded index queries.

A read is priced by the bytes it reads, rounded up to 4 KB per request (a Query page is one
request: the sum of what it read, not item by item); eventually consistent costs half. A
query of an index reads the index's projected entries, a local secondary index's without the
100 bytes its writes are priced with. See docs/adr/0051-capacity-per-call.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .entries import index_entry, item_bytes, resolve_index
from .exceptions import CapacityInputError
from .units import MAX_PAGE_BYTES, Capacity, read_units

if TYPE_CHECKING:
    from ..model import Model, ResolvedIndex

__all__ = ["batch_get", "get", "page_sizes", "query", "query_pages", "read_bytes", "sharded_query"]

Item = Mapping[str, Any]


def get(model: Model, item: Item | None, *, consistent: bool = False) -> Capacity:
    """GetItem of stored ``item`` (None: not found, which still reads one 4 KB unit)."""
    size = item_bytes(item) if item is not None else 1
    return Capacity("read", read_units(size, consistent=consistent))


def batch_get(model: Model, items: Iterable[Item | None], *, consistent: bool = False) -> Capacity:
    """BatchGetItem: each item found rounded up to 4 KB on its own, then summed; a key not
    found (None) costs the minimum read, as AWS documents ("Requests for nonexistent items
    consume the minimum read capacity units according to the type of read", BatchGetItem API
    reference). DynamoDB Local charges a key not found nothing: price only the items found to
    compare with it."""
    units = sum(read_units(item_bytes(i) if i is not None else 1, consistent=consistent) for i in items)
    return Capacity("read", units)


def read_bytes(model: Model, index: ResolvedIndex | None, item: Item) -> int:
    """Bytes a query of ``index`` (None: the table) reads for stored ``item``: the item itself,
    or its projected index entry (0 when the item is not in the index). A local secondary
    index's entry is read at its attributes' size: the 100 bytes of
    :data:`~constructs_lib.capacity.entries.LSI_ENTRY_OVERHEAD` price its writes only (measured
    on DynamoDB Local, strongly and eventually consistent, ``ALL`` and ``INCLUDE``)."""
    if index is None:
        return item_bytes(item)
    entry = index_entry(model, index, item)
    return 0 if entry is None else item_bytes(entry)


def page_sizes(sizes: Sequence[int], *, limit: int | None = None) -> list[int]:
    """Split the bytes a query reads, item by item in key order, into its pages: a page ends
    after ``limit`` items or with the item that brings it to 1 MB."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise CapacityInputError(f"limit {limit!r} must be a positive int (DynamoDB's Limit is at least 1)")
    pages: list[int] = []
    current, count = 0, 0
    for size in sizes:
        current += size
        count += 1
        if (limit is not None and count == limit) or current >= MAX_PAGE_BYTES:
            pages.append(current)
            current, count = 0, 0
    if count or not pages:
        pages.append(current)
    return pages


def query_pages(
    model: Model, index: str | None, items: Sequence[Item], *, consistent: bool = False, limit: int | None = None
) -> list[Capacity]:
    """Read units of each Query page that reads ``items`` (stored items matching the key
    condition, in the order the query reads them; a filter does not reduce what is read).

    ``index``: the index queried (None or ``"table"``: the table). A global secondary index is
    read eventually consistently only (``consistent=True`` raises :class:`CapacityInputError`)."""
    resolved = resolve_index(model, index)
    if consistent and resolved is not None and resolved.kind == "GSI":
        raise CapacityInputError(
            f"index {resolved.name!r} is a global secondary index: DynamoDB refuses ConsistentRead=True on it"
        )
    sizes = [read_bytes(model, resolved, item) for item in items]
    pages = page_sizes([s for s in sizes if s], limit=limit)
    return [_charged(resolved, read_units(size, consistent=consistent)) for size in pages]


def query(
    model: Model, index: str | None, items: Sequence[Item], *, consistent: bool = False, limit: int | None = None
) -> Capacity:
    """Read units of the first page of a Query reading ``items`` (see :func:`query_pages`)."""
    return query_pages(model, index, items, consistent=consistent, limit=limit)[0]


def sharded_query(
    model: Model, index: str, shards: Sequence[Sequence[Item]], *, consistent: bool = False, limit: int | None = None
) -> Capacity:
    """One page of a query of a write-sharded index: one Query per shard (each rounded on its
    own), summed. ``shards[i]``: the items shard ``i``'s Query reads for this page."""
    return Capacity.sum("read", (query(model, index, items, consistent=consistent, limit=limit) for items in shards))


def _charged(index: ResolvedIndex | None, units: float) -> Capacity:
    if index is None:
        return Capacity("read", units)
    if index.kind == "LSI":
        return Capacity("read", 0.0, {}, {index.name: units})
    return Capacity("read", 0.0, {index.name: units})
