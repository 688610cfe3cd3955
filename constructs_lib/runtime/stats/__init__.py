"""Traffic insight: find hot partitions and other key-design anti-patterns in live traffic.

Off by default. Turn it on for one table client::

    from constructs_lib.runtime import TableClient, TrafficRecorder
    table = TableClient(model, "shop-data", traffic=TrafficRecorder(sample_rate=0.01))
    # or: recorder = table.record_traffic(sample_rate=0.01)
    ...
    report = table.traffic.report(hot_share=0.10)
    print(report.to_markdown())

How it works. Recording swaps the client's boto3 client for a :class:`RecordingClient`, which
samples each request to the table with probability ``sample_rate`` (decided before the call,
so a sampled request can ask for ``ReturnConsumedCapacity="INDEXES"``; the recorder removes
``ConsumedCapacity`` from the response again when the caller had not asked for it, so results
are unchanged). With recording off nothing is wrapped: the only cost on the request path is
one ``is None`` check in ``TableClient.query`` (which names the access pattern when on).

A sampled request is broken down per partition key — batches and transactions count once per
item — into a space-saving sketch per (index, read/write) (see :mod:`.sketch` for the error
bound), per-shape ``ScannedCount``/``Count`` totals for queries and scans, per-GSI write and
read counts, and a bounded ring of recent :class:`TrafficRecord` objects. Everything is guarded
by one lock; memory is bounded by ``max_keys`` per sketch, 256 query shapes and
``keep_records``. Reports scale sampled counts by ``1 / sample_rate``.

Reports contain partition key values (e.g. ``EMAIL#...``): treat them like the table's data.
"""

from __future__ import annotations

from ._parse import OPERATION_LABELS, READ, TABLE, WRITE
from .recorder import PATTERN, RecordingClient, TrafficRecorder
from .report import (
    FILTER_HEAVY,
    HOT_PARTITION,
    KINDS,
    LOW_CARDINALITY,
    PARTITION_RCU,
    SCAN,
    UNUSED_INDEX,
    Finding,
    TrafficReport,
    detect,
)
from .sketch import KeyCount, SpaceSaving
from .snapshot import QueryShape, Snapshot, TrafficRecord

__all__ = [
    "FILTER_HEAVY",
    "HOT_PARTITION",
    "KINDS",
    "LOW_CARDINALITY",
    "OPERATION_LABELS",
    "PARTITION_RCU",
    "PATTERN",
    "READ",
    "SCAN",
    "TABLE",
    "UNUSED_INDEX",
    "WRITE",
    "Finding",
    "KeyCount",
    "QueryShape",
    "RecordingClient",
    "Snapshot",
    "SpaceSaving",
    "TrafficRecord",
    "TrafficRecorder",
    "TrafficReport",
    "detect",
]
