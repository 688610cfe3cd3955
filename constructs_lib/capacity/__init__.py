"""Capacity units per call, predicted from the model: what DynamoDB charges a put, update,
delete, transaction, batch, get or query, for the table and for every index the call touches.

Above ``model`` and ``runtime`` (it prices items as the runtime builds and sizes them); never
bundled, never imports aws_cdk. Formulas and their AWS sources: docs/adr/0051-capacity-per-call.md.
Estimates without items (a typical write, one page of a pattern; :mod:`.estimate`):
docs/adr/0052-capacity-estimates.md.
"""

from __future__ import annotations

from .entries import LSI_ENTRY_OVERHEAD, entry_size, index_entry, item_bytes, projected_attributes
from .estimate import (
    WRITE_KINDS,
    WriteKind,
    read_estimate,
    representative_item,
    typical_item_bytes,
    update_attribute,
    write_estimate,
)
from .exceptions import CapacityError, CapacityInputError
from .reads import batch_get, get, page_sizes, query, query_pages, read_bytes, sharded_query
from .units import MAX_PAGE_BYTES, READ_UNIT_BYTES, WRITE_UNIT_BYTES, Capacity, read_units, write_units
from .writes import (
    TRANSACTION_FACTOR,
    batch_write,
    delete,
    index_write_units,
    put,
    put_item,
    refused,
    transaction,
    update,
    write,
)

__all__ = [
    "LSI_ENTRY_OVERHEAD",
    "MAX_PAGE_BYTES",
    "READ_UNIT_BYTES",
    "TRANSACTION_FACTOR",
    "WRITE_KINDS",
    "WRITE_UNIT_BYTES",
    "Capacity",
    "CapacityError",
    "CapacityInputError",
    "WriteKind",
    "batch_get",
    "batch_write",
    "delete",
    "entry_size",
    "get",
    "index_entry",
    "index_write_units",
    "item_bytes",
    "page_sizes",
    "projected_attributes",
    "put",
    "put_item",
    "query",
    "query_pages",
    "read_bytes",
    "read_estimate",
    "read_units",
    "refused",
    "representative_item",
    "sharded_query",
    "transaction",
    "typical_item_bytes",
    "update",
    "update_attribute",
    "write",
    "write_estimate",
    "write_units",
]
