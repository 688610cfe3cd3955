"""Traffic insight: find hot partitions and other key-design anti-patterns in live traffic.

Off by default. Turn it on for one table client::

    table = TableClient(model, "shop-data", traffic=TrafficRecorder(sample_rate=0.01))
    report = table.traffic.report(hot_share=0.10)
    print(report.to_markdown())

Sampled requests are counted per partition key in bounded memory (a space-saving sketch per
index and direction), thread-safely. Reports contain partition key values: treat them like the
table's data. See docs/adr/0027-traffic-recording-off-by-default.md.
"""

from __future__ import annotations

from ..limits import PARTITION_RCU
from ._parse import OPERATION_LABELS, READ, TABLE, WRITE
from .recorder import PATTERN, RecordingClient, TrafficRecorder
from .report import (
    FILTER_HEAVY,
    HOT_PARTITION,
    KINDS,
    LOW_CARDINALITY,
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
