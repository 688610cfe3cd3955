"""Traffic insight: find hot partitions and other key-design anti-patterns in live traffic.

Off by default. Turn it on for one table client::

    table = TableClient(model, "shop-data", traffic=TrafficRecorder(sample_rate=0.01))
    print(table.traffic.report(hot_share=0.10).to_markdown())
    write_snapshot(table.traffic.snapshot(), "traffic.json")   # for ``cost --recording``

Sampled requests are counted per partition key in bounded memory, thread-safely; reports hold
partition key values (docs/adr/0027-traffic-recording-off-by-default.md). A generated Lambda ships the
submodules only with ``TableFunction(traffic_insight=True)``, else each name raises ``TrafficInsightNotBundledError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._exports import lazy_exports
from ..exceptions import TrafficInsightNotBundledError

#: The public surface: name -> the submodule defining it.
EXPORTS = {
    "OPERATION_LABELS": "_parse",
    "READ": "_parse",
    "TABLE": "_parse",
    "WRITE": "_parse",
    "PATTERN": "recorder",
    "RecordingClient": "recorder",
    "TrafficRecorder": "recorder",
    "FILTER_HEAVY": "report",
    "HOT_PARTITION": "report",
    "KINDS": "report",
    "LOW_CARDINALITY": "report",
    "PARTITION_RCU": "report",
    "SCAN": "report",
    "UNUSED_INDEX": "report",
    "Finding": "report",
    "TrafficReport": "report",
    "detect": "report",
    "KeyCount": "sketch",
    "SpaceSaving": "sketch",
    "QueryShape": "snapshot",
    "Snapshot": "snapshot",
    "TrafficRecord": "snapshot",
    "read_snapshot": "snapshot_file",
    "snapshot_from_dict": "snapshot_file",
    "snapshot_to_dict": "snapshot_file",
    "write_snapshot": "snapshot_file",
}

__all__, _export, __dir__ = lazy_exports(__name__, EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        return _export(name)
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith(f"{__name__}."):
            raise
        raise TrafficInsightNotBundledError(
            f"traffic recording ({name}) is not bundled with this function: its asset ships {__name__}'s "
            "modules only with TableFunction(..., traffic_insight=True); set traffic_insight=True and redeploy",
            name=exc.name,
        ) from exc

if TYPE_CHECKING:
    from ._parse import OPERATION_LABELS as OPERATION_LABELS
    from ._parse import READ as READ
    from ._parse import TABLE as TABLE
    from ._parse import WRITE as WRITE
    from .recorder import PATTERN as PATTERN
    from .recorder import RecordingClient as RecordingClient
    from .recorder import TrafficRecorder as TrafficRecorder
    from .report import FILTER_HEAVY as FILTER_HEAVY
    from .report import HOT_PARTITION as HOT_PARTITION
    from .report import KINDS as KINDS
    from .report import LOW_CARDINALITY as LOW_CARDINALITY
    from .report import PARTITION_RCU as PARTITION_RCU
    from .report import SCAN as SCAN
    from .report import UNUSED_INDEX as UNUSED_INDEX
    from .report import Finding as Finding
    from .report import TrafficReport as TrafficReport
    from .report import detect as detect
    from .sketch import KeyCount as KeyCount
    from .sketch import SpaceSaving as SpaceSaving
    from .snapshot import QueryShape as QueryShape
    from .snapshot import Snapshot as Snapshot
    from .snapshot import TrafficRecord as TrafficRecord
    from .snapshot_file import read_snapshot as read_snapshot
    from .snapshot_file import snapshot_from_dict as snapshot_from_dict
    from .snapshot_file import snapshot_to_dict as snapshot_to_dict
    from .snapshot_file import write_snapshot as write_snapshot
