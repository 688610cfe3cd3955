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
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from ..model.indexes import TABLE
from . import defaults
from .exceptions import ConstructPropsError

if TYPE_CHECKING:
    from ..model import Model
    from .bound_table import ModelBoundTable

#: CloudWatch namespace of DynamoDB's metrics.
NAMESPACE = "AWS/DynamoDB"
#: Data-plane operations shown per operation (``Operation`` dimension). ``Scan`` is included on
#: purpose: the model serves no pattern by Scan, so a Scan line means code bypassed the model.
OPERATIONS = (
    "GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems",
    "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems",
)
_DASHBOARD_NAME = re.compile(r"[A-Za-z0-9_-]{1,255}")
_FIVE_MINUTES = 300


def _minutes(what: str, name: str, value: Any, *, low: int, high: int, step: int) -> int:
    if not isinstance(value, cdk.Duration):
        raise ConstructPropsError(f"{what}: {name} {value!r} must be an aws_cdk.Duration")
    seconds = value.to_seconds(integral=False)
    if not (low * 60 <= seconds <= high * 60 and seconds % (step * 60) == 0):
        raise ConstructPropsError(
            f"{what}: {name} {value.to_human_string()} must be whole multiples of {step} minute(s), "
            f"from {low} to {high} minutes"
        )
    return int(seconds // 60)


def _count(what: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConstructPropsError(f"{what}: {name} {value!r} must be an int ≥ 0 (the alarm fires above it)")


@dataclass(frozen=True)
class Operations:
    """What the operations view of a table contains, and its alarm thresholds.

    Every value is checked on construction (``ConstructPropsError`` naming the value and rule).

    Parameters
    ----------
    dashboard
        Create a CloudWatch dashboard for the table. Default True.
    alarms
        Create the table's alarms (see the module docstring for the list). Default True. The
        pattern constructs' own alarms exist either way.
    alarm_topic
        SNS topic notified when any alarm of the table, or of a pattern construct registered with
        it, goes into ALARM and back to OK. Default None (alarms without actions). An encrypted
        topic needs a customer-managed KMS key whose policy lets ``cloudwatch.amazonaws.com``
        use ``kms:GenerateDataKey`` and ``kms:Decrypt`` (CloudWatch cannot publish to a topic
        under the AWS-managed ``alias/aws/sns`` key).
    dashboard_name
        ``[A-Za-z0-9_-]{1,255}``. Default: generated by CloudFormation.
    throttle_threshold
        Read/write throttle events (table and each GSI) tolerated per ``throttle_period``; the
        alarm fires above it. Int ≥ 0. Default 0 (any throttle).
    throttle_period
        Window of the throttle alarms: 1–60 whole minutes. Default 5 minutes.
    system_errors_threshold
        ``SystemErrors`` (HTTP 500s, summed over every operation) tolerated per 5 minutes.
        Int ≥ 0. Default 0.
    user_errors_threshold
        Alarm when ``UserErrors`` (HTTP 400s) per 5 minutes exceed this. Default None: no alarm,
        because DynamoDB publishes the metric per account and region only — it counts every
        table's and every application's client errors, so a per-table alarm would fire for
        others' mistakes (the dashboard still shows it, labelled account-wide). Conditional
        check failures and transaction conflicts, the expected 400s of this library's
        optimistic locking and ``create_only`` writes, have their own metrics and are not in it.
        Set it when the account and region serve this application alone. Int ≥ 0.
    latency_p99_ms
        Alarm when the p99 of ``SuccessfulRequestLatency`` (server-side, milliseconds) of each of
        ``latency_operations`` exceeds this for 3 consecutive 5-minute periods. Greater than 0
        and at most 60,000. Default 50 (DynamoDB's typical latency is single-digit milliseconds).
        None: no latency alarm.
    latency_operations
        Operations with a latency alarm, from :data:`OPERATIONS`. Default ``("GetItem", "Query")``.
    capacity_utilization
        Provisioned billing only: alarm when consumed capacity exceeds this fraction of the
        provisioned capacity (read and write, table and each GSI) for ``capacity_period``.
        Greater than 0, at most 1. Default 0.8. (Auto scaling targets 70 %, so a sustained 80 %
        means scaling is at its maximum or too slow.)
    capacity_period
        How long the utilization must stay above the threshold: 5 minutes to 1 day, in whole
        multiples of 5 minutes (evaluated as consecutive 5-minute periods). Default 15 minutes.
    """

    dashboard: bool = True
    alarms: bool = True
    alarm_topic: sns.ITopic | None = None
    dashboard_name: str | None = None
    throttle_threshold: int = 0
    throttle_period: cdk.Duration = field(default_factory=lambda: cdk.Duration.minutes(5))
    system_errors_threshold: int = 0
    user_errors_threshold: int | None = None
    latency_p99_ms: float | None = defaults.OPS_LATENCY_P99_MS
    latency_operations: tuple[str, ...] = ("GetItem", "Query")
    capacity_utilization: float = defaults.OPS_CAPACITY_UTILIZATION
    capacity_period: cdk.Duration = field(default_factory=lambda: cdk.Duration.minutes(15))

    def __post_init__(self) -> None:
        what = "Operations"
        for name in ("dashboard", "alarms"):
            if not isinstance(getattr(self, name), bool):
                raise ConstructPropsError(f"{what}: {name} {getattr(self, name)!r} must be True or False")
        if self.alarm_topic is not None and not hasattr(self.alarm_topic, "topic_arn"):
            raise ConstructPropsError(f"{what}: alarm_topic {self.alarm_topic!r} must be an aws_sns.ITopic")
        name = self.dashboard_name
        if name is not None and not (
            isinstance(name, str) and (cdk.Token.is_unresolved(name) or _DASHBOARD_NAME.fullmatch(name))
        ):
            raise ConstructPropsError(f"{what}: dashboard_name {name!r} must be 1-255 characters of A-Z a-z 0-9 _ -")
        _count(what, "throttle_threshold", self.throttle_threshold)
        _count(what, "system_errors_threshold", self.system_errors_threshold)
        if self.user_errors_threshold is not None:
            _count(what, "user_errors_threshold", self.user_errors_threshold)
        _minutes(what, "throttle_period", self.throttle_period, low=1, high=60, step=1)
        _minutes(what, "capacity_period", self.capacity_period, low=5, high=1440, step=5)
        ms = self.latency_p99_ms
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms <= 60_000):
            raise ConstructPropsError(
                f"{what}: latency_p99_ms {ms!r} must be a number of milliseconds greater than 0 and at most 60000"
            )
        ops = self.latency_operations
        if isinstance(ops, (str, bytes)) or not isinstance(ops, Sequence):
            raise ConstructPropsError(
                f"{what}: latency_operations {ops!r} must be a tuple of operation names, not a string"
            )
        unknown = [op for op in ops if op not in OPERATIONS]
        if unknown or len(set(ops)) != len(ops):
            raise ConstructPropsError(
                f"{what}: latency_operations {tuple(ops)!r} must be distinct names from {', '.join(OPERATIONS)}"
                + (f" (unknown: {', '.join(map(repr, unknown))})" if unknown else "")
            )
        object.__setattr__(self, "latency_operations", tuple(ops))
        ratio = self.capacity_utilization
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 1:
            raise ConstructPropsError(
                f"{what}: capacity_utilization {ratio!r} must be a fraction of the provisioned capacity, "
                "greater than 0 and at most 1 (e.g. 0.8 for 80 %)"
            )


@dataclass(frozen=True)
class MonitoredConsumer:
    """A stream (or schedule) consumer built on a table, as its operations view shows it.

    Pattern constructs pass one to :meth:`SingleTable.register_consumer`; its alarms are keyed
    ``<construct id>/Errors``, ``/IteratorAge`` and ``/FailedBatches`` in ``TableOperations.alarms``.
    """

    construct: Construct
    title: str
    function: lambda_.IFunction
    dlq: sqs.IQueue
    errors_alarm: cloudwatch.Alarm
    iterator_age_alarm: cloudwatch.Alarm | None
    dlq_alarm: cloudwatch.Alarm

    @property
    def key(self) -> str:
        return self.construct.node.id

    def alarms(self) -> dict[str, cloudwatch.Alarm]:
        found = {"Errors": self.errors_alarm, "IteratorAge": self.iterator_age_alarm, "FailedBatches": self.dlq_alarm}
        return {f"{self.key}/{name}": alarm for name, alarm in found.items() if alarm is not None}


# Contributor Insights ------------------------------------------------------------------------------
ContributorInsights = bool | Sequence[str] | Mapping[str, bool]


def contributor_insights_by_index(what: str, model: Model, value: ContributorInsights) -> dict[str, bool]:
    """``{"table": bool, "<GSI>": bool, ...}`` from the ``contributor_insights`` option.

    ``True``: the table and every GSI; ``False``: none; a list of names (``"table"`` for the
    table): those; a mapping name → bool: those set True. LSIs share the table's insights.
    """
    names = [TABLE, *(i.name for i in model.gsis)]
    if isinstance(value, bool):
        return dict.fromkeys(names, value)
    if isinstance(value, (str, bytes)):
        raise ConstructPropsError(
            f"{what}: contributor_insights={value!r} must be a bool, a list of index names or a mapping, not a "
            "string (a string would be read as one name per character)"
        )
    if isinstance(value, Mapping):
        wrong = {k: v for k, v in value.items() if not isinstance(v, bool)}
        if wrong:
            raise ConstructPropsError(f"{what}: contributor_insights values {wrong!r} must be True or False")
        wanted = {k for k, v in value.items() if v}
        given = list(value)
    elif isinstance(value, Sequence):
        wanted = set(value)
        given = list(value)
    else:
        raise ConstructPropsError(
            f"{what}: contributor_insights {value!r} must be a bool, a list of index names or a mapping name → bool"
        )
    for name in given:
        if name in names:
            continue
        lsi = name in model.indexes
        raise ConstructPropsError(
            f"{what}: contributor_insights names {name!r}, "
            + ("an LSI: it shares the table's partitions and is covered by 'table'" if lsi
               else f"which is not a GSI of model {model.name!r}")
            + f" (choose from {', '.join(names)})"
        )
    return {name: name in wanted for name in names}


def apply_index_contributor_insights(table: dynamodb.TableV2, model: Model, insights: Mapping[str, bool]) -> None:
    """Set Contributor Insights per GSI on the table's own replica.

    ``TableV2`` takes per-index options only for replicas in *other* regions and gives every GSI
    of its own replica the table's setting; where an index's wish differs, the replica's
    ``GlobalSecondaryIndexes[i].ContributorInsightsSpecification`` is overridden. (Its own
    replica is the only entry of ``Replicas``; its ``GlobalSecondaryIndexes`` list the GSIs in
    declaration order, one entry each.)
    """
    resource = table.node.default_child
    assert isinstance(resource, dynamodb.CfnGlobalTable)
    for position, index in enumerate(model.gsis):
        if insights[index.name] != insights[TABLE]:
            resource.add_property_override(
                f"Replicas.0.GlobalSecondaryIndexes.{position}.ContributorInsightsSpecification",
                {"Enabled": insights[index.name]},
            )


# The dashboard and alarms --------------------------------------------------------------------------
class TableOperations(Construct):
    """Dashboard and alarms of one :class:`SingleTable` (built by ``SingleTable.add_operations``).

    Attributes
    ----------
    settings
        The :class:`Operations` it was built with.
    dashboard
        The ``aws_cloudwatch.Dashboard``, or None with ``dashboard=False``.
    stack_dashboards
        Read-only mapping stack path → the dashboard in that stack showing the consumers built
        in it, for consumers in other stacks than the table's view (see :meth:`add_consumer`).
    alarms
        Read-only mapping key → ``aws_cloudwatch.Alarm``: the table's alarms and those of the
        registered pattern constructs (keys in the module docstring).
    """

    def __init__(self, scope: Construct, id: str, *, table: ModelBoundTable, settings: Operations) -> None:
        super().__init__(scope, id)
        if not isinstance(settings, Operations):
            raise ConstructPropsError(
                f"{table.what}: operations {settings!r} must be a constructs_lib.Operations"
            )
        self.settings = settings
        self._table = table
        self._alarms: dict[str, cloudwatch.Alarm] = {}
        self._consumers: list[MonitoredConsumer] = []
        self._gsis = [i.name for i in table.model.gsis]
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
                period: int = _FIVE_MINUTES, label: str | None = None) -> cloudwatch.Metric:
        dimensions = {"TableName": self._table.table_name}
        if index is not None:
            dimensions["GlobalSecondaryIndexName"] = index
        if operation is not None:
            dimensions["Operation"] = operation
        return cloudwatch.Metric(namespace=NAMESPACE, metric_name=name, dimensions_map=dimensions, statistic=statistic,
                                 period=cdk.Duration.seconds(period), label=label)

    def _per_second(self, kind: str, index: str | None, period: int = _FIVE_MINUTES) -> cloudwatch.MathExpression:
        consumed = self._metric(f"Consumed{kind}CapacityUnits", index=index, period=period)
        return cloudwatch.MathExpression(expression="consumed / PERIOD(consumed)", using_metrics={"consumed": consumed},
                                         label=f"consumed {kind.lower()} units/s", period=cdk.Duration.seconds(period))

    def _utilization(self, kind: str, index: str | None) -> cloudwatch.MathExpression:
        consumed = self._metric(f"Consumed{kind}CapacityUnits", index=index)
        provisioned = self._metric(f"Provisioned{kind}CapacityUnits", index=index, statistic="Average")
        return cloudwatch.MathExpression(
            expression="100 * (consumed / PERIOD(consumed)) / provisioned",
            using_metrics={"consumed": consumed, "provisioned": provisioned},
            label=f"{kind.lower()} capacity used (% of provisioned)", period=cdk.Duration.seconds(_FIVE_MINUTES),
        )

    # Alarms ------------------------------------------------------------------------------------------
    def _alarm(self, key: str, metric: cloudwatch.IMetric, *, threshold: float, periods: int = 1,
               description: str) -> cloudwatch.Alarm:
        alarm = metric.create_alarm(
            self, key.replace("/", "-") + "Alarm", threshold=threshold, evaluation_periods=periods,
            datapoints_to_alarm=periods, comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"DynamoDB table {self._table.node.path}: {description}",
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
                                              period=cdk.Duration.seconds(_FIVE_MINUTES)),
                    threshold=s.system_errors_threshold,
                    description=f"more than {s.system_errors_threshold} system error(s) (HTTP 500) in 5 minutes")
        if s.user_errors_threshold is not None:
            user = cloudwatch.Metric(namespace=NAMESPACE, metric_name="UserErrors", statistic="Sum",
                                     period=cdk.Duration.seconds(_FIVE_MINUTES))
            self._alarm("UserErrors", user, threshold=s.user_errors_threshold,
                        description=f"more than {s.user_errors_threshold} user error(s) (HTTP 400) in 5 minutes, "
                                    "account- and region-wide")
        if s.latency_p99_ms is not None:
            for op in s.latency_operations:
                self._alarm(f"Latency/{op}", self._metric("SuccessfulRequestLatency", operation=op, statistic="p99"),
                            threshold=s.latency_p99_ms, periods=defaults.OPS_LATENCY_PERIODS,
                            description=f"{op} p99 latency above {s.latency_p99_ms} ms for "
                                        f"{defaults.OPS_LATENCY_PERIODS} consecutive 5-minute periods")
        if self._table.provisioned:
            periods = int(s.capacity_period.to_seconds()) // _FIVE_MINUTES
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
            markdown=f"## DynamoDB table {table.node.path}\nModel `{table.model.name}`, {billing} billing, "
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
    return float(resource.threshold)  # type: ignore[arg-type]


__all__ = [
    "NAMESPACE", "OPERATIONS", "ContributorInsights", "MonitoredConsumer", "Operations", "TableOperations",
    "apply_index_contributor_insights", "contributor_insights_by_index",
]
