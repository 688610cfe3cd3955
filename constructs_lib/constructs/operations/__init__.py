"""The operations view of a :class:`~constructs_lib.constructs.single_table.SingleTable`: a CloudWatch
dashboard, alarms with documented thresholds, and Contributor Insights per table and per GSI.

Turn it on with ``SingleTable(..., operations=Operations())`` (or later with
``table.add_operations(Operations(...))``). Pattern constructs built on the table
(:class:`~constructs_lib.constructs.sharded_counter.ShardedCounter`,
:class:`~constructs_lib.constructs.stream_audit.StreamAudit`) register themselves with it, whenever they are
created: their function, iterator age and failure-queue widgets join the table's dashboard and
their existing alarms get the table's alarm actions.

Alarms, by their key in ``TableOperations.alarms`` (DynamoDB metrics in ``AWS/DynamoDB`` with the
table's ``TableName``; every alarm compares with ``GreaterThanThreshold`` unless stated; missing
data — no traffic — is not breaching):

* ``ReadThrottleEvents``, ``WriteThrottleEvents`` and, per GSI, ``<GSI>/ReadThrottleEvents``,
  ``<GSI>/WriteThrottleEvents`` (plus the ``GlobalSecondaryIndexName`` dimension): Sum over one
  ``throttle_period`` (5 minutes) > ``throttle_threshold`` (0).
* ``SystemErrors``: Sum over every data-plane operation (``Operation`` dimension, missing points
  as 0) in 5 minutes > ``system_errors_threshold`` (0).
* ``UserErrors``: only with ``user_errors_threshold=``; the metric is account- and region-wide
  (no dimension), Sum in 5 minutes > the threshold.
* ``Latency/<operation>`` for each of ``latency_operations`` (GetItem, Query):
  ``SuccessfulRequestLatency`` p99 > ``latency_p99_ms`` (50 ms) in 3 consecutive 5-minute periods.
* Provisioned billing only — ``ReadCapacityUtilization``, ``WriteCapacityUtilization`` and per GSI
  ``<GSI>/ReadCapacityUtilization``, ``<GSI>/WriteCapacityUtilization``: 100 × (consumed units
  per second) / provisioned units > 100 × ``capacity_utilization`` (80 %) for ``capacity_period``
  (15 minutes: 3 consecutive 5-minute periods).
* ``<construct id>/Errors``, ``/IteratorAge``, ``/FailedBatches``: the registered pattern
  constructs' own alarms (function errors ≥ 1 in 5 minutes; iterator age above the construct's
  threshold, 1 minute for a counter, 5 for an audit; failure queue holding ≥ 1 message).

Modules: ``props`` (:class:`Operations`), ``consumers`` (:class:`MonitoredConsumer`, the contract
pattern constructs register through), ``insights`` (Contributor Insights), ``construct``
(:class:`TableOperations`).
"""

from __future__ import annotations

from .construct import TableOperations
from .consumers import MonitoredConsumer
from .insights import (
    ContributorInsights,
    apply_index_contributor_insights,
    contributor_insights_by_index,
)
from .props import NAMESPACE, OPERATIONS, Operations

__all__ = [
    "NAMESPACE", "OPERATIONS", "ContributorInsights", "MonitoredConsumer", "Operations", "TableOperations",
    "apply_index_contributor_insights", "contributor_insights_by_index",
]
