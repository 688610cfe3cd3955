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

from typing import TYPE_CHECKING, Any

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

#: Names this package exported before 0.2.0, importable from it until 1.0.0 with a DeprecationWarning:
#: name -> (the module defining it now, its name there, since, removed in).
_DEPRECATED = {"Operations": (".", "OperationsSettings", "0.2.0", "1.0.0")}

if not TYPE_CHECKING:  # a type checker flags the old names
    def __getattr__(name: str) -> Any:
        if name not in _DEPRECATED:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from ...runtime import _deprecated

        return _deprecated.value(__name__, name, _DEPRECATED[name])
