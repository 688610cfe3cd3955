"""The operations view of a model-bound table: a CloudWatch dashboard, alarms with documented
thresholds, and Contributor Insights per table and per GSI.

Turn it on with ``SingleTable(..., operations=OperationsSettings())`` or ``table.add_operations(...)``.
Pattern constructs on the table register themselves, before or after: their widgets join the
dashboard (in their own stack when it is not the table's) and their alarms get the table's alarm
actions. Alarm keys, metrics and thresholds: docs/operations.md.
Modules: ``props`` (:class:`OperationsSettings`), ``consumers`` (:class:`MonitoredConsumer`),
``insights`` (Contributor Insights), ``construct`` (:class:`TableOperations`).

See docs/adr/0028-consumer-dashboards-in-the-consumer-stack.md.
"""

from __future__ import annotations

from .construct import TableOperations
from .consumers import MonitoredConsumer
from .insights import (
    ContributorInsights,
    apply_index_contributor_insights,
    contributor_insights_by_index,
)
from .props import NAMESPACE, OPERATIONS, OperationsSettings

__all__ = [
    "NAMESPACE", "OPERATIONS", "ContributorInsights", "MonitoredConsumer", "OperationsSettings", "TableOperations",
    "apply_index_contributor_insights", "contributor_insights_by_index",
]
