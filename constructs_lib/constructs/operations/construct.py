"""``TableOperations``: the dashboard and alarms of one table (every alarm: docs/operations.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Protocol

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from constructs import Construct, Node

from ...model import Model
from .. import defaults
from ..exceptions import ConstructPropsError
from .consumers import MonitoredConsumer
from .props import FIVE_MINUTES, NAMESPACE, OPERATIONS, OperationsSettings


class MonitoredTable(Protocol):
    """What an operations view reads of its table (a ``ModelBoundTable``: ``SingleTable`` or an
    imported one)."""

    model: Model
    provisioned: bool

    @property
    def node(self) -> Node: ...

    @property
    def what(self) -> str: ...

    @property
    def table_name(self) -> str: ...

    @property
    def replica_regions(self) -> tuple[str, ...]: ...

    @property
    def multi_region_consistency(self) -> str | None: ...


# The dashboard and alarms --------------------------------------------------------------------------
class TableOperations(Construct):
    """Dashboard and alarms of one :class:`SingleTable` (built by ``SingleTable.add_operations``).

    Attributes
    ----------
    settings
        The :class:`OperationsSettings` it was built with.
    dashboard
        The ``aws_cloudwatch.Dashboard``, or None with ``dashboard=False``.
    stack_dashboards
        Read-only mapping stack path → the dashboard in that stack showing the consumers built
        in it, for consumers in other stacks than the table's view (see :meth:`add_consumer`).
    alarms
        Read-only mapping key → ``aws_cloudwatch.Alarm``: the table's alarms and those of the
        registered pattern constructs (keys in the module docstring).
    """

    def __init__(self, scope: Construct, id: str, *, table: MonitoredTable, settings: OperationsSettings) -> None:
        super().__init__(scope, id)
        if not isinstance(settings, OperationsSettings):
            raise ConstructPropsError(
                f"{table.what}: operations {settings!r} must be a constructs_lib.OperationsSettings"
            )
        self.settings = settings
        self._table = table
        self._alarms: dict[str, cloudwatch.Alarm] = {}
        self._consumers: list[MonitoredConsumer] = []
        self._gsis = [i.name for i in table.model.gsis]
        # Read once: each is a call into the jsii kernel, and every metric, alarm and widget uses
        # them (the token strings and the immutable Durations are the same each time).
        self._table_name = table.table_name
        self._table_path = table.node.path
        self._durations: dict[int, cdk.Duration] = {}
        self.dashboard: cloudwatch.Dashboard | None = None
        self._stack_dashboards: dict[str, cloudwatch.Dashboard] = {}
        if settings.dashboard:
            self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=settings.dashboard_name)
            self._table_widgets()
        if settings.alarms:
            self._table_alarms()

    @property
    def alarms(self) -> Mapping[str, cloudwatch.Alarm]:
        return MappingProxyType(dict(self._alarms))

    @property
    def stack_dashboards(self) -> Mapping[str, cloudwatch.Dashboard]:
        return MappingProxyType(dict(self._stack_dashboards))

    @property
    def consumers(self) -> tuple[MonitoredConsumer, ...]:
        return tuple(self._consumers)

    # Metrics -----------------------------------------------------------------------------------------
    def _metric(self, name: str, *, statistic: str = "Sum", index: str | None = None, operation: str | None = None,
                period: int = FIVE_MINUTES, label: str | None = None) -> cloudwatch.Metric:
        dimensions = {"TableName": self._table_name}
        if index is not None:
            dimensions["GlobalSecondaryIndexName"] = index
        if operation is not None:
            dimensions["Operation"] = operation
        return cloudwatch.Metric(namespace=NAMESPACE, metric_name=name, dimensions_map=dimensions, statistic=statistic,
                                 period=self._seconds(period), label=label)

    def _seconds(self, seconds: int) -> cdk.Duration:
        """``cdk.Duration.seconds(seconds)``, one object per value."""
        found = self._durations.get(seconds)
        if found is None:
            found = self._durations[seconds] = cdk.Duration.seconds(seconds)
        return found

    def _replicated_to(self) -> tuple[str, ...]:
        """The replica Regions with a ``ReplicationLatency`` metric: MREC only (MRSC publishes none)."""
        return self._table.replica_regions if self._table.multi_region_consistency == "EVENTUAL" else ()

    def _replication_latency(self, region: str, statistic: str = "Average", *, labelled: bool = True) -> cloudwatch.Metric:
        """``ReplicationLatency`` from the table's Region (where the metric is published) to ``region``."""
        return cloudwatch.Metric(
            namespace=NAMESPACE, metric_name="ReplicationLatency",
            dimensions_map={"TableName": self._table_name, "ReceivingRegion": region}, statistic=statistic,
            period=self._seconds(FIVE_MINUTES), label=f"to {region} ({statistic.lower()})" if labelled else None,
        )

    def _per_second(self, kind: str, index: str | None, period: int = FIVE_MINUTES) -> cloudwatch.MathExpression:
        consumed = self._metric(f"Consumed{kind}CapacityUnits", index=index, period=period)
        return cloudwatch.MathExpression(expression="consumed / PERIOD(consumed)", using_metrics={"consumed": consumed},
                                         label=f"consumed {kind.lower()} units/s", period=self._seconds(period))

    def _utilization(self, kind: str, index: str | None) -> cloudwatch.MathExpression:
        consumed = self._metric(f"Consumed{kind}CapacityUnits", index=index)
        provisioned = self._metric(f"Provisioned{kind}CapacityUnits", index=index, statistic="Average")
        return cloudwatch.MathExpression(
            expression="100 * (consumed / PERIOD(consumed)) / provisioned",
            using_metrics={"consumed": consumed, "provisioned": provisioned},
            label=f"{kind.lower()} capacity used (% of provisioned)", period=self._seconds(FIVE_MINUTES),
        )

    # Alarms ------------------------------------------------------------------------------------------
    def _alarm(self, key: str, metric: cloudwatch.Metric | cloudwatch.MathExpression, *, threshold: float, periods: int = 1,
               description: str) -> cloudwatch.Alarm:
        alarm = metric.create_alarm(
            self, key.replace("/", "-") + "Alarm", threshold=threshold, evaluation_periods=periods,
            datapoints_to_alarm=periods, comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"DynamoDB table {self._table_path}: {description}",
        )
        self._add(key, alarm)
        return alarm

    def _add(self, key: str, alarm: cloudwatch.Alarm) -> None:
        if key in self._alarms:
            raise ConstructPropsError(
                f"{self._table.what}: two alarms of its operations view are keyed {key!r}; "
                "give the pattern constructs on the table distinct ids"
            )
        self._alarms[key] = alarm
        topic = self.settings.alarm_topic
        if topic is not None:
            action = cw_actions.SnsAction(topic)
            alarm.add_alarm_action(action)
            alarm.add_ok_action(action)

    def _table_alarms(self) -> None:
        s = self.settings
        throttle_seconds = int(s.throttle_period.to_seconds())
        throttle_text = f"more than {s.throttle_threshold} {{}} throttle event(s) in {s.throttle_period.to_human_string()}"
        for index in (None, *self._gsis):
            prefix = f"{index}/" if index else ""
            where = f" on index {index}" if index else ""
            for kind in ("Read", "Write"):
                self._alarm(f"{prefix}{kind}ThrottleEvents",
                            self._metric(f"{kind}ThrottleEvents", index=index, period=throttle_seconds),
                            threshold=s.throttle_threshold,
                            description=throttle_text.format(kind.lower()) + where)
        system = {op.lower(): self._metric("SystemErrors", operation=op) for op in OPERATIONS}
        self._alarm("SystemErrors",
                    cloudwatch.MathExpression(expression=" + ".join(f"FILL({m}, 0)" for m in system),
                                              using_metrics=system, label="SystemErrors, all operations",
                                              period=self._seconds(FIVE_MINUTES)),
                    threshold=s.system_errors_threshold,
                    description=f"more than {s.system_errors_threshold} system error(s) (HTTP 500) in 5 minutes")
        if s.user_errors_threshold is not None:
            user = cloudwatch.Metric(namespace=NAMESPACE, metric_name="UserErrors", statistic="Sum",
                                     period=self._seconds(FIVE_MINUTES))
            self._alarm("UserErrors", user, threshold=s.user_errors_threshold,
                        description=f"more than {s.user_errors_threshold} user error(s) (HTTP 400) in 5 minutes, "
                                    "account- and region-wide")
        if s.latency_p99_ms is not None:
            for op in s.latency_operations:
                self._alarm(f"Latency/{op}", self._metric("SuccessfulRequestLatency", operation=op, statistic="p99"),
                            threshold=s.latency_p99_ms, periods=defaults.OPS_LATENCY_PERIODS,
                            description=f"{op} p99 latency above {s.latency_p99_ms} ms for "
                                        f"{defaults.OPS_LATENCY_PERIODS} consecutive 5-minute periods")
        if s.replication_latency_ms is not None:
            for region in self._replicated_to():
                self._alarm(f"{region}/ReplicationLatency", self._replication_latency(region, labelled=False),
                            threshold=s.replication_latency_ms, periods=defaults.OPS_REPLICATION_PERIODS,
                            description=f"average replication latency to the replica in {region} above "
                                        f"{s.replication_latency_ms} ms for {defaults.OPS_REPLICATION_PERIODS} "
                                        "consecutive 5-minute periods")
        if self._table.provisioned:
            periods = int(s.capacity_period.to_seconds()) // FIVE_MINUTES
            for index in (None, *self._gsis):
                prefix = f"{index}/" if index else ""
                where = f" of index {index}" if index else ""
                for kind in ("Read", "Write"):
                    self._alarm(f"{prefix}{kind}CapacityUtilization", self._utilization(kind, index),
                                threshold=round(100 * s.capacity_utilization, 2), periods=periods,
                                description=f"consumed {kind.lower()} capacity{where} above "
                                            f"{s.capacity_utilization:.0%} of provisioned for "
                                            f"{s.capacity_period.to_human_string()}")

    # Dashboard ---------------------------------------------------------------------------------------
    def _graph(self, title: str, left: Sequence[cloudwatch.IMetric], *, width: int = 12, unit: str | None = None,
               annotations: Sequence[tuple[float, str]] = ()) -> cloudwatch.GraphWidget:
        return cloudwatch.GraphWidget(
            title=title, left=list(left), width=width, height=6,
            left_y_axis=cloudwatch.YAxisProps(label=unit, show_units=False, min=0) if unit else None,
            left_annotations=[cloudwatch.HorizontalAnnotation(value=v, label=t) for v, t in annotations] or None,
        )

    def _capacity_widgets(self, index: str | None) -> list[cloudwatch.IWidget]:
        name = index or "table"
        widgets: list[cloudwatch.IWidget] = []
        for kind in ("Read", "Write"):
            lines: list[cloudwatch.IMetric] = [self._per_second(kind, index)]
            if self._table.provisioned:
                lines.append(self._metric(f"Provisioned{kind}CapacityUnits", index=index, statistic="Average",
                                          label=f"provisioned {kind.lower()} units/s"))
            widgets.append(self._graph(f"{name}: {kind.lower()} capacity (units/s)", lines, width=8, unit="units/s"))
        throttles = [self._metric(f"{kind}ThrottleEvents", index=index, label=f"{kind.lower()} throttle events")
                     for kind in ("Read", "Write")]
        widgets.append(self._graph(f"{name}: throttle events", throttles, width=8, unit="count",
                                   annotations=[(self.settings.throttle_threshold, "alarm above")]
                                   if self.settings.alarms else ()))
        return widgets

    def _table_widgets(self) -> None:
        assert self.dashboard is not None
        table, s = self._table, self.settings
        billing = "provisioned" if table.provisioned else "on-demand"
        self.dashboard.add_widgets(cloudwatch.TextWidget(
            markdown=f"## DynamoDB table {self._table_path}\nModel `{table.model.name}`, {billing} billing, "
                     f"GSIs: {', '.join(self._gsis) or 'none'}. Throttles alarm above {s.throttle_threshold} per "
                     f"{s.throttle_period.to_human_string()}; system errors above {s.system_errors_threshold} per "
                     "5 minutes.", width=24, height=2))
        self.dashboard.add_widgets(*self._capacity_widgets(None))
        by_op = {op: op for op in OPERATIONS}
        self.dashboard.add_widgets(
            self._graph("Throttled requests by operation",
                        [self._metric("ThrottledRequests", operation=op, label=op) for op in by_op], unit="count"),
            self._graph("System errors (HTTP 500) by operation",
                        [self._metric("SystemErrors", operation=op, label=op) for op in by_op], unit="count"),
        )
        latency = [(s.latency_p99_ms, "p99 alarm above")] if s.alarms and s.latency_p99_ms is not None else []
        self.dashboard.add_widgets(
            self._graph("Latency p50 by operation (ms)", [
                self._metric("SuccessfulRequestLatency", operation=op, statistic="p50", label=f"{op} p50")
                for op in by_op], unit="ms"),
            self._graph("Latency p99 by operation (ms)", [
                self._metric("SuccessfulRequestLatency", operation=op, statistic="p99", label=f"{op} p99")
                for op in by_op], unit="ms", annotations=latency),
        )
        self.dashboard.add_widgets(self._graph("Client-side failures", [
            cloudwatch.Metric(namespace=NAMESPACE, metric_name="UserErrors", statistic="Sum",
                              label="UserErrors (HTTP 400, whole account and region)"),
            self._metric("ConditionalCheckFailedRequests", label="conditional check failed (this table)"),
            self._metric("TransactionConflict", label="transaction conflicts (this table)"),
        ], width=24, unit="count"))
        for index in self._gsis:
            self.dashboard.add_widgets(*self._capacity_widgets(index))
        regions = self._replicated_to()
        if regions:
            threshold = s.replication_latency_ms if s.alarms else None
            self.dashboard.add_widgets(self._graph(
                "Replication latency to each replica (ms)",
                [self._replication_latency(r, statistic) for r in regions for statistic in ("Average", "Maximum")],
                width=24, unit="ms", annotations=[(threshold, "alarm above (average)")] if threshold else ()))

    # Consumers ---------------------------------------------------------------------------------------
    def add_consumer(self, consumer: MonitoredConsumer) -> None:
        """Put ``consumer``'s alarms under this view (with its alarm actions) and, with a dashboard,
        add a row: invocations/errors/throttles, duration, iterator age (stream consumers) and the
        failure queue's depth.

        A consumer in another stack than this view gets its row on a dashboard in its own stack
        (one per stack and table, see :meth:`dashboard_for`): the consumer's stack already
        references the table's, so the row must not make the table's stack reference the
        consumer's (a dependency cycle). Its alarms stay in its stack and get the alarm actions.
        """
        for key, alarm in consumer.alarms().items():
            self._add(key, alarm)
        self._consumers.append(consumer)
        if self.dashboard is None:
            return
        dashboard = self.dashboard_for(consumer.construct)
        fn, title = consumer.function, consumer.title
        age = consumer.iterator_age_alarm
        width = 6 if age is not None else 8
        widgets: list[cloudwatch.IWidget] = [
            self._graph(f"{title}: invocations", [
                fn.metric_invocations(label="invocations"), fn.metric_errors(label="errors"),
                fn.metric_throttles(label="throttles")], width=width, unit="count",
                annotations=[(_threshold(consumer.errors_alarm), "errors alarm at")]),
            self._graph(f"{title}: duration (ms)", [
                fn.metric_duration(statistic="p50", label="p50"), fn.metric_duration(statistic="p99", label="p99"),
                fn.metric_duration(statistic="Maximum", label="max")], width=width, unit="ms"),
        ]
        if age is not None:
            widgets.append(self._graph(f"{title}: iterator age (ms)", [
                fn.metric("IteratorAge", statistic="Maximum", label="iterator age, max")], width=width, unit="ms",
                annotations=[(_threshold(age), "alarm above")]))
        widgets.append(self._graph(f"{title}: failure queue depth", [
            consumer.dlq.metric_approximate_number_of_messages_visible(statistic="Maximum", label="messages visible")],
            width=width, unit="count", annotations=[(_threshold(consumer.dlq_alarm), "alarm at")]))
        dashboard.add_widgets(*widgets)

    def dashboard_for(self, construct: Construct) -> cloudwatch.Dashboard:
        """The dashboard showing consumers in ``construct``'s stack: the table's own in its stack,
        else ``<stack>/<table path>Consumers`` (created on first use; named
        ``<dashboard_name>-<stack name>`` when ``dashboard_name`` is set)."""
        assert self.dashboard is not None
        stack = cdk.Stack.of(construct)
        if stack.node.path == cdk.Stack.of(self).node.path:
            return self.dashboard
        found = self._stack_dashboards.get(stack.node.path)
        if found is None:
            name = self.settings.dashboard_name
            if name is not None and not cdk.Token.is_unresolved(name):
                name = f"{name}-{stack.stack_name}"[:255]
            elif name is not None:
                name = None
            found = cloudwatch.Dashboard(
                stack, re.sub(r"[^A-Za-z0-9]", "", self._table.node.path) + "Consumers", dashboard_name=name,
            )
            found.add_widgets(cloudwatch.TextWidget(
                markdown=f"## Consumers of DynamoDB table {self._table.node.path}\nPattern constructs of stack "
                         f"{stack.stack_name} built on the table; the table's own dashboard is in stack "
                         f"{cdk.Stack.of(self).stack_name}.", width=24, height=2))
            self._stack_dashboards[stack.node.path] = found
        return found


def _threshold(alarm: cloudwatch.Alarm) -> float:
    resource = alarm.node.default_child
    assert isinstance(resource, cloudwatch.CfnAlarm)
    threshold = resource.threshold
    assert threshold is not None  # _alarm gives every alarm a threshold
    return float(threshold)
