"""The operations view of a SingleTable: alarms with their documented thresholds, the dashboard's
metrics, the pattern constructs joining it, and Contributor Insights per table and per GSI.

Two stacks, each synthesized once: ``OperationsStack`` of the cdk-nag gate (provisioned billing,
alarm topic, counter and audit registered after the view exists) and an on-demand stack whose
view is added after its counter (registration in the other order), with custom thresholds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Template

# The variant stack of the cdk-nag and cfn-lint gates (a sibling module: pytest puts this
# directory on sys.path), so what is asserted here is also what those gates check.
from test_cdk_nag import operations_stack

from constructs_lib import (
    ConstructPropsError,
    OperationsSettings,
    ShardedCounter,
    SingleTable,
    StreamAudit,
)
from constructs_lib.constructs.operations import OPERATIONS
from constructs_lib.model import Model

NEW_AND_OLD = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES
GT = "GreaterThanThreshold"


class Synth:
    """A synthesized stack with its SingleTable ``Data``: alarms by key, the dashboard body."""

    def __init__(self, stack: cdk.Stack) -> None:
        self.stack = stack
        self.table: SingleTable = stack.node.find_child("Data")  # type: ignore[assignment]
        self.template = Template.from_stack(stack).to_json()
        self.resources: dict[str, Any] = self.template["Resources"]
        (self.table_id,) = [lid for lid, r in self.resources.items()
                            if r["Type"] == "AWS::DynamoDB::GlobalTable" and lid.startswith("DataTable")]

    def alarm(self, key: str) -> dict[str, Any]:
        """Properties of the alarm keyed ``key`` in ``table.operations.alarms``."""
        assert self.table.operations is not None
        alarm = self.table.operations.alarms[key]
        resource = self.resources[self.stack.get_logical_id(alarm.node.default_child)]  # type: ignore[arg-type]
        assert resource["Type"] == "AWS::CloudWatch::Alarm"
        return resource["Properties"]

    def table_replica(self) -> dict[str, Any]:
        (replica,) = self.resources[self.table_id]["Properties"]["Replicas"]
        return replica

    def dashboard_body(self) -> dict[str, Any]:
        """The one dashboard's body: its ``Fn::Join`` with each token written as ``<Ref X>`` or
        ``<GetAtt X.Y>``, parsed as JSON."""
        (dashboard,) = [r for r in self.resources.values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
        separator, parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"]
        assert separator == ""
        return json.loads("".join(p if isinstance(p, str) else _placeholder(p) for p in parts))

    def ref(self) -> str:
        return f"<Ref {self.table_id}>"


def _placeholder(token: dict[str, Any]) -> str:
    if "Ref" in token:
        return f"<Ref {token['Ref']}>"
    if "Fn::GetAtt" in token:
        return f"<GetAtt {'.'.join(token['Fn::GetAtt'])}>"
    raise AssertionError(f"unexpected token in the dashboard body: {token}")


def dashboard_metrics(body: dict[str, Any]) -> list[tuple[str, str, dict[str, str], dict[str, Any], str]]:
    """(namespace, metric name, dimensions, options, widget title) of every metric line of every graph."""
    found = []
    for widget in body["widgets"]:
        if widget["type"] != "metric":
            continue
        for line in widget["properties"]["metrics"]:
            if isinstance(line[0], dict):  # a math expression
                continue
            options = line[-1] if isinstance(line[-1], dict) else {}
            names = [x for x in line if not isinstance(x, dict)]
            namespace, name, *dims = names
            found.append((namespace, name, dict(zip(dims[::2], dims[1::2], strict=True)), options, widget["properties"]["title"]))
    return found


def metric_stat(entry: dict[str, Any]) -> tuple[str, str, dict[str, Any], int, str]:
    """(namespace, name, dimensions, period, stat) of one ``Metrics[]`` entry of a math alarm."""
    stat = entry["MetricStat"]
    metric = stat["Metric"]
    dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
    return metric["Namespace"], metric["MetricName"], dims, stat["Period"], stat["Stat"]


def dims(props: dict[str, Any]) -> dict[str, Any]:
    return {d["Name"]: d["Value"] for d in props.get("Dimensions", [])}


# Stacks ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def provisioned() -> Synth:
    """OperationsStack: provisioned shop table, OperationsSettings(alarm_topic=..., user_errors_threshold=10),
    contributor_insights={"table": True, "GSI1": True}, counter and audit built after the table."""
    return Synth(operations_stack(cdk.App()))


@pytest.fixture(scope="module")
def on_demand(shop_model: Model) -> Synth:
    """On-demand shop table with a stream and contributor_insights=["GSI2"]; a counter built
    before the view is added with custom thresholds, an audit built after it."""
    stack = cdk.Stack(cdk.App(), "OnDemandOps")
    table = SingleTable(stack, "Data", model=shop_model, stream=NEW_AND_OLD, contributor_insights=["GSI2"])
    ShardedCounter(stack, "Views", table=table, name="views", shards=4)
    table.add_operations(OperationsSettings(
        throttle_threshold=5, throttle_period=cdk.Duration.minutes(1), system_errors_threshold=2,
        latency_p99_ms=20, latency_operations=("GetItem", "Query", "PutItem"),
    ))
    StreamAudit(stack, "Audit", source=table, exclude_entities=ShardedCounter.ENTITIES)
    return Synth(stack)


# Alarms --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [None, "GSI1", "GSI2"])
@pytest.mark.parametrize("kind", ["Read", "Write"])
def test_throttle_alarms_cover_the_table_and_each_gsi(provisioned: Synth, index: str | None, kind: str) -> None:
    # GIVEN the default thresholds
    # WHEN the throttle alarm of the table or a GSI is read from the template
    props = provisioned.alarm(f"{index}/{kind}ThrottleEvents" if index else f"{kind}ThrottleEvents")
    # THEN it fires on more than 0 throttle events summed over one 5-minute period, on that table/index
    assert (props["Namespace"], props["MetricName"]) == ("AWS/DynamoDB", f"{kind}ThrottleEvents")
    expected = {"TableName": {"Ref": provisioned.table_id}}
    if index:
        expected["GlobalSecondaryIndexName"] = index
    assert dims(props) == expected
    assert (props["Statistic"], props["Period"], props["EvaluationPeriods"]) == ("Sum", 300, 1)
    assert (props["Threshold"], props["ComparisonOperator"], props["TreatMissingData"]) == (0, GT, "notBreaching")


def test_throttle_thresholds_are_configurable(on_demand: Synth) -> None:
    # GIVEN throttle_threshold=5 over throttle_period=1 minute
    props = on_demand.alarm("GSI2/WriteThrottleEvents")
    # THEN the alarm uses a 60-second period and fires above 5
    assert (props["Period"], props["Threshold"], props["ComparisonOperator"]) == (60, 5, GT)


def test_system_errors_alarm_sums_every_operation(provisioned: Synth, on_demand: Synth) -> None:
    # GIVEN the SystemErrors alarm (a math expression over the per-operation metrics)
    props = provisioned.alarm("SystemErrors")
    expression, *metrics = props["Metrics"]
    # THEN every data-plane operation of the table is summed, missing points counted as 0...
    seen = {metric_stat(m)[2]["Operation"]: metric_stat(m) for m in metrics}
    assert set(seen) == set(OPERATIONS)
    for op, (namespace, name, dimensions, period, stat) in seen.items():
        assert (namespace, name, period, stat) == ("AWS/DynamoDB", "SystemErrors", 300, "Sum")
        assert dimensions == {"TableName": {"Ref": provisioned.table_id}, "Operation": op}
    assert expression["ReturnData"] is True and expression["Expression"].count("FILL(") == len(OPERATIONS)
    # ...and it fires above system_errors_threshold (0 by default, 2 when configured)
    assert (props["Threshold"], props["ComparisonOperator"], props["EvaluationPeriods"]) == (0, GT, 1)
    assert on_demand.alarm("SystemErrors")["Threshold"] == 2


def test_user_errors_alarm_only_when_a_threshold_is_given(provisioned: Synth, on_demand: Synth) -> None:
    # GIVEN user_errors_threshold=10 on one table and the default (None) on the other
    props = provisioned.alarm("UserErrors")
    # THEN the first alarms on the account-wide metric (it has no table dimension)...
    assert (props["Namespace"], props["MetricName"], dims(props)) == ("AWS/DynamoDB", "UserErrors", {})
    assert (props["Statistic"], props["Threshold"], props["ComparisonOperator"]) == ("Sum", 10, GT)
    # ...and the second has no UserErrors alarm at all
    assert on_demand.table.operations is not None
    assert "UserErrors" not in on_demand.table.operations.alarms
    assert not [r for r in on_demand.resources.values()
                if r["Type"] == "AWS::CloudWatch::Alarm" and r["Properties"].get("MetricName") == "UserErrors"]


def test_latency_alarms_use_p99_over_three_periods(provisioned: Synth, on_demand: Synth) -> None:
    # GIVEN the default latency settings: GetItem and Query, 50 ms
    for op in ("GetItem", "Query"):
        props = provisioned.alarm(f"Latency/{op}")
        # THEN each alarms on its operation's SuccessfulRequestLatency p99 above 50 ms for 3 x 5 minutes
        assert (props["MetricName"], props["ExtendedStatistic"]) == ("SuccessfulRequestLatency", "p99")
        assert dims(props) == {"TableName": {"Ref": provisioned.table_id}, "Operation": op}
        assert (props["Threshold"], props["ComparisonOperator"]) == (50, GT)
        assert (props["Period"], props["EvaluationPeriods"], props["DatapointsToAlarm"]) == (300, 3, 3)
    assert provisioned.table.operations is not None
    assert not {k for k in provisioned.table.operations.alarms if k.startswith("Latency/")} - {
        "Latency/GetItem", "Latency/Query"}
    # AND with latency_p99_ms=20 on three operations, three alarms at 20 ms
    assert on_demand.table.operations is not None
    assert sorted(k for k in on_demand.table.operations.alarms if k.startswith("Latency/")) == [
        "Latency/GetItem", "Latency/PutItem", "Latency/Query"]
    assert on_demand.alarm("Latency/PutItem")["Threshold"] == 20


@pytest.mark.parametrize("index", [None, "GSI1", "GSI2"])
@pytest.mark.parametrize("kind", ["Read", "Write"])
def test_capacity_alarms_compare_consumed_with_provisioned(provisioned: Synth, index: str | None, kind: str) -> None:
    # GIVEN a provisioned table
    props = provisioned.alarm(f"{index}/{kind}CapacityUtilization" if index else f"{kind}CapacityUtilization")
    # THEN the alarm computes consumed units per second as a percentage of the provisioned units...
    expression, *metrics = props["Metrics"]
    assert expression["Expression"] == "100 * (consumed / PERIOD(consumed)) / provisioned"
    by_id = {m["Id"]: metric_stat(m) for m in metrics}
    expected = {"TableName": {"Ref": provisioned.table_id}}
    if index:
        expected["GlobalSecondaryIndexName"] = index
    assert by_id["consumed"] == ("AWS/DynamoDB", f"Consumed{kind}CapacityUnits", expected, 300, "Sum")
    assert by_id["provisioned"] == ("AWS/DynamoDB", f"Provisioned{kind}CapacityUnits", expected, 300, "Average")
    # ...and fires above 80 % for 15 minutes (three consecutive 5-minute periods)
    assert (props["Threshold"], props["ComparisonOperator"]) == (80, GT)
    assert (props["EvaluationPeriods"], props["DatapointsToAlarm"]) == (3, 3)


def test_capacity_alarms_only_with_provisioned_billing(on_demand: Synth) -> None:
    # GIVEN an on-demand table with its operations view
    assert on_demand.table.operations is not None
    keys = set(on_demand.table.operations.alarms)
    # THEN it has no capacity alarm and no alarm reads a provisioned-capacity metric
    assert not [k for k in keys if "CapacityUtilization" in k]
    assert "ProvisionedReadCapacityUnits" not in json.dumps(
        [r for r in on_demand.resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"])
    # (while the throttle alarms are there)
    assert {"ReadThrottleEvents", "GSI1/WriteThrottleEvents"} <= keys


def test_pattern_constructs_alarms_join_the_view(provisioned: Synth, on_demand: Synth) -> None:
    for synth in (provisioned, on_demand):
        ops = synth.table.operations
        assert ops is not None
        counter: ShardedCounter = synth.stack.node.find_child("Views")  # type: ignore[assignment]
        audit: StreamAudit = synth.stack.node.find_child("Audit")  # type: ignore[assignment]
        # GIVEN a counter and an audit on the table (built before or after the view)
        # THEN their own alarms are in the view, under their construct ids
        assert ops.alarms["Views/Errors"] is counter.errors_alarm
        assert ops.alarms["Views/IteratorAge"] is counter.iterator_age_alarm
        assert ops.alarms["Views/FailedBatches"] is counter.dlq_alarm
        assert ops.alarms["Audit/IteratorAge"] is audit.iterator_age_alarm
        assert [c.construct for c in ops.consumers] == [counter, audit]


def test_every_alarm_notifies_the_topic(provisioned: Synth, on_demand: Synth) -> None:
    # GIVEN OperationsSettings(alarm_topic=topic)
    (topic_id,) = [lid for lid, r in provisioned.resources.items() if r["Type"] == "AWS::SNS::Topic"]
    assert provisioned.table.operations is not None
    keys = list(provisioned.table.operations.alarms)
    assert len(keys) == 8 + 1 + 1 + 2 + 8 + 6  # throttles, system, user, latency, capacity (table + 3 GSIs), consumers
    for key in keys:
        props = provisioned.alarm(key)
        # THEN every alarm of the table and of its pattern constructs notifies it on ALARM and on OK
        assert props["AlarmActions"] == [{"Ref": topic_id}], key
        assert props["OKActions"] == [{"Ref": topic_id}], key
    # AND without a topic the alarms have no actions
    assert on_demand.table.operations is not None
    assert all("AlarmActions" not in on_demand.alarm(k) for k in on_demand.table.operations.alarms)


# Dashboard -----------------------------------------------------------------------------------------
def test_dashboard_shows_the_table_metrics(provisioned: Synth) -> None:
    # GIVEN the dashboard of the provisioned table
    metrics = dashboard_metrics(provisioned.dashboard_body())
    table = {"TableName": provisioned.ref()}
    lines = {(ns, name, tuple(sorted(d.items())), o.get("stat", "Average")) for ns, name, d, o, _ in metrics}

    def has(name: str, dimensions: dict[str, str], stat: str = "Sum", ns: str = "AWS/DynamoDB") -> bool:
        return (ns, name, tuple(sorted(dimensions.items())), stat) in lines

    # THEN it has consumed vs provisioned capacity, throttles, errors and latency by operation
    for kind in ("Read", "Write"):
        assert has(f"Consumed{kind}CapacityUnits", table)
        assert has(f"Provisioned{kind}CapacityUnits", table, "Average")
        assert has(f"{kind}ThrottleEvents", table)
    for op in OPERATIONS:
        assert has("ThrottledRequests", {**table, "Operation": op})
        assert has("SystemErrors", {**table, "Operation": op})
        assert has("SuccessfulRequestLatency", {**table, "Operation": op}, "p50")
        assert has("SuccessfulRequestLatency", {**table, "Operation": op}, "p99")
    assert has("UserErrors", {})
    assert has("ConditionalCheckFailedRequests", table) and has("TransactionConflict", table)
    # AND per GSI its consumed and provisioned capacity and throttle events
    for index in ("GSI1", "GSI2"):
        gsi = {**table, "GlobalSecondaryIndexName": index}
        for kind in ("Read", "Write"):
            assert has(f"Consumed{kind}CapacityUnits", gsi)
            assert has(f"Provisioned{kind}CapacityUnits", gsi, "Average")
            assert has(f"{kind}ThrottleEvents", gsi)


def test_dashboard_capacity_graphs_show_units_per_second(provisioned: Synth) -> None:
    # GIVEN the table's read capacity graph
    body = provisioned.dashboard_body()
    (graph,) = [w for w in body["widgets"] if w["properties"].get("title") == "table: read capacity (units/s)"]
    lines = graph["properties"]["metrics"]
    # THEN consumed capacity is drawn per second (Sum / period) next to the provisioned units
    assert [line[0]["expression"] for line in lines if isinstance(line[0], dict)] == ["consumed / PERIOD(consumed)"]
    hidden = [line for line in lines if not isinstance(line[0], dict) and line[-1].get("visible") is False]
    assert [(line[1], line[-1]["id"]) for line in hidden] == [("ConsumedReadCapacityUnits", "consumed")]


def test_on_demand_dashboard_has_no_provisioned_lines(on_demand: Synth) -> None:
    # GIVEN an on-demand table's dashboard
    names = {name for _, name, _, _, _ in dashboard_metrics(on_demand.dashboard_body())}
    # THEN it shows consumed capacity only
    assert "ConsumedWriteCapacityUnits" in names
    assert not {n for n in names if n.startswith("Provisioned")}


@pytest.mark.parametrize("consumer", ["Views", "Audit"])
def test_dashboard_shows_the_pattern_constructs(provisioned: Synth, on_demand: Synth, consumer: str) -> None:
    for synth in (provisioned, on_demand):
        construct = synth.stack.node.find_child(consumer)
        function = construct.node.find_child("Function").node.default_child
        queue = construct.node.find_child("FailedBatches").node.default_child
        fn = {"FunctionName": f"<Ref {synth.stack.get_logical_id(function)}>"}  # type: ignore[arg-type]
        q = {"QueueName": f"<GetAtt {synth.stack.get_logical_id(queue)}.QueueName>"}  # type: ignore[arg-type]
        # GIVEN the dashboard of a table with a counter and an audit
        metrics = dashboard_metrics(synth.dashboard_body())
        found = {(ns, name, o.get("stat")) for ns, name, d, o, _ in metrics if d in (fn, q)}
        # THEN the function's invocations, errors, throttles, duration and iterator age, and the
        # failure queue's depth are on it
        assert {("AWS/Lambda", "Invocations", "Sum"), ("AWS/Lambda", "Errors", "Sum"),
                ("AWS/Lambda", "Throttles", "Sum"), ("AWS/Lambda", "Duration", "p99"),
                ("AWS/Lambda", "IteratorAge", "Maximum"),
                ("AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum")} <= found, found


def test_dashboard_marks_the_alarm_thresholds(on_demand: Synth) -> None:
    # GIVEN latency_p99_ms=20 and the counter's default iterator-age alarm (1 minute)
    body = on_demand.dashboard_body()
    titles = {w["properties"].get("title"): w["properties"] for w in body["widgets"] if w["type"] == "metric"}
    # THEN the graphs carry the thresholds as horizontal annotations
    assert titles["Latency p99 by operation (ms)"]["annotations"]["horizontal"][0]["value"] == 20
    age = titles["ShardedCounter Views (views): iterator age (ms)"]
    assert age["annotations"]["horizontal"][0]["value"] == 60_000


def test_operations_can_be_switched_off(shop_model: Model) -> None:
    # GIVEN OperationsSettings(dashboard=False, alarms=False) and a counter on the table
    stack = cdk.Stack(cdk.App(), "Quiet")
    table = SingleTable(stack, "Data", model=shop_model, stream=NEW_AND_OLD,
                        operations=OperationsSettings(dashboard=False, alarms=False))
    ShardedCounter(stack, "Views", table=table, name="views", shards=2)
    template = Template.from_stack(stack)
    # THEN there is no dashboard and no table alarm; only the counter's own alarms exist
    assert table.operations is not None and table.operations.dashboard is None
    template.resource_count_is("AWS::CloudWatch::Dashboard", 0)
    template.resource_count_is("AWS::CloudWatch::Alarm", 3)
    assert sorted(table.operations.alarms) == ["Views/Errors", "Views/FailedBatches", "Views/IteratorAge"]


# Contributor Insights ----------------------------------------------------------------------------
def _insights(synth: Synth) -> dict[str, Any]:
    replica = synth.table_replica()
    out = {"table": replica.get("ContributorInsightsSpecification")}
    out.update({g["IndexName"]: g.get("ContributorInsightsSpecification") for g in replica["GlobalSecondaryIndexes"]})
    return out


def test_contributor_insights_per_index(provisioned: Synth, on_demand: Synth) -> None:
    # GIVEN {"table": True, "GSI1": True} on one table and ["GSI2"] on the other
    # THEN the table's replica enables exactly those (and says so for a GSI the table setting would cover)
    assert _insights(provisioned) == {"table": {"Enabled": True}, "GSI1": {"Enabled": True}, "GSI2": {"Enabled": False},
                                      "GSI3": {"Enabled": False}}
    assert _insights(on_demand) == {"table": None, "GSI1": None, "GSI2": {"Enabled": True}, "GSI3": None}
    assert dict(on_demand.table.contributor_insights) == {"table": False, "GSI1": False, "GSI2": True, "GSI3": False}
    # AND the other replica settings of the GSIs are untouched
    assert provisioned.table_replica()["GlobalSecondaryIndexes"][1]["ReadProvisionedThroughputSettings"] == {
        "ReadCapacityUnits": 5}


@pytest.mark.parametrize(("value", "expected"), [
    (True, {"table": {"Enabled": True}, "GSI1": {"Enabled": True}, "GSI2": {"Enabled": True}, "GSI3": {"Enabled": True}}),
    (False, {"table": None, "GSI1": None, "GSI2": None, "GSI3": None}),
    ({"table": False, "GSI1": True, "GSI2": False}, {"table": None, "GSI1": {"Enabled": True}, "GSI2": None, "GSI3": None}),
])
def test_contributor_insights_bool_keeps_its_meaning(shop_model: Model, value: Any, expected: dict[str, Any]) -> None:
    # GIVEN contributor_insights as a bool (the original option) or a mapping
    stack = cdk.Stack(cdk.App(), "Insights")
    SingleTable(stack, "Data", model=shop_model, contributor_insights=value)
    # THEN True covers the table and every GSI, False none, a mapping the names set True
    assert _insights(Synth(stack)) == expected


@pytest.mark.parametrize(("value", "message"), [
    (["GSI9"], r"contributor_insights names 'GSI9', which is not a GSI of model 'mixed' \(choose from table, "),
    ({"ByUpdated": True}, r"'ByUpdated', an LSI: it shares the table's partitions"),
    ("ByOwner", r"contributor_insights='ByOwner' must be .* not a string"),
    ({"ByOwner": "yes"}, r"contributor_insights values \{'ByOwner': 'yes'\} must be True or False"),
    (3, r"contributor_insights 3 must be a bool"),
])
def test_bad_contributor_insights_are_refused(scratch_stack: cdk.Stack, mixed_index_model: Model, value: Any,
                                              message: str) -> None:
    # GIVEN a contributor_insights naming no GSI of the model (or of the wrong type)
    # WHEN the table is built THEN a typed error names the value and the rule
    with pytest.raises(ConstructPropsError, match=message):
        SingleTable(scratch_stack, f"Bad{len(scratch_stack.node.children)}", model=mixed_index_model, contributor_insights=value)


# Bad props -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("props", "message"), [
    ({"capacity_utilization": 1.5}, r"capacity_utilization 1.5 must be a fraction .* greater than 0 and at most 1"),
    ({"capacity_utilization": 0}, r"capacity_utilization 0 must be"),
    ({"latency_p99_ms": -1}, r"latency_p99_ms -1 must be a number of milliseconds greater than 0"),
    ({"latency_operations": ("GetItem", "Scan2")}, r"latency_operations .* \(unknown: 'Scan2'\)"),
    ({"latency_operations": "GetItem"}, r"latency_operations 'GetItem' must be a tuple .* not a string"),
    ({"throttle_threshold": -1}, r"throttle_threshold -1 must be an int ≥ 0"),
    ({"system_errors_threshold": 0.5}, r"system_errors_threshold 0.5 must be an int ≥ 0"),
    ({"user_errors_threshold": True}, r"user_errors_threshold True must be an int ≥ 0"),
    ({"throttle_period": "5m"}, r"throttle_period '5m' must be an aws_cdk.Duration"),
    ({"capacity_period": cdk.Duration.minutes(7)}, r"capacity_period 7 minutes must be whole multiples of 5 minute"),
    ({"throttle_period": cdk.Duration.seconds(90)}, r"throttle_period 1 minute 30 seconds must be whole multiples"),
    ({"dashboard_name": "my dashboard"}, r"dashboard_name 'my dashboard' must be 1-255 characters"),
    ({"dashboard": "yes"}, r"dashboard 'yes' must be True or False"),
    ({"alarm_topic": "arn:aws:sns:eu-west-1:1:t"}, r"alarm_topic 'arn:aws:sns:eu-west-1:1:t' must be an aws_sns.ITopic"),
])
def test_bad_operations_are_refused(props: dict[str, Any], message: str) -> None:
    # GIVEN an OperationsSettings value breaking a rule WHEN it is made THEN a typed error names value and rule
    with pytest.raises(ConstructPropsError, match=message):
        OperationsSettings(**props)


def test_operations_are_added_once_and_must_be_operations(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    # GIVEN a table with its operations view
    table = SingleTable(scratch_stack, "Twice", model=shop_model, operations=OperationsSettings(alarms=False))
    # WHEN a second view is added THEN it is refused
    with pytest.raises(ConstructPropsError, match=r"already has its operations view"):
        table.add_operations()
    # AND operations= must be an OperationsSettings
    with pytest.raises(ConstructPropsError, match=r"operations True must be a constructs_lib.OperationsSettings"):
        SingleTable(scratch_stack, "Wrong", model=shop_model, operations=True)  # type: ignore[arg-type]


def test_docs_document_every_alarm_key(provisioned: Synth) -> None:
    # GIVEN the alarm table of docs/operations.md
    section = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    assert "| alarm key |" in section and provisioned.table.operations is not None
    # THEN each table alarm's key kind appears in it
    kinds = {re.sub(r"^(GSI\d|Views|Audit)/", "<x>/", k) for k in provisioned.table.operations.alarms}
    for kind in kinds:
        assert kind.split("/")[-1] in section, kind


# Consumers in another stack ------------------------------------------------------------------------
def test_consumers_in_another_stack_synthesize_without_a_cycle(shop_model: Model, tmp_path: Any) -> None:
    from aws_cdk import aws_sns as sns

    # GIVEN a table with its operations view (named dashboard, alarm topic) in one stack, and a
    # counter and an audit on it in a second stack of the same app
    app = cdk.App(outdir=str(tmp_path))
    producer = cdk.Stack(app, "Producer")
    topic = sns.Topic(producer, "Alarms")
    table = SingleTable(producer, "Data", model=shop_model, stream=NEW_AND_OLD,
                        operations=OperationsSettings(dashboard_name="shop-ops", alarm_topic=topic))
    consumer = cdk.Stack(app, "Reporting")
    ShardedCounter(consumer, "Views", table=table, name="views", shards=2)
    StreamAudit(consumer, "Audit", source=table, exclude_entities=ShardedCounter.ENTITIES)
    # WHEN the app is synthesized THEN there is no dependency cycle (it used to fail with DependencyCycle)
    assembly = app.synth()
    templates = {name: assembly.get_stack_by_name(name).template for name in ("Producer", "Reporting")}
    # AND references flow one way: the producer's template imports nothing of the consumer's
    assert "Fn::ImportValue" not in json.dumps(templates["Producer"])
    assert "Fn::ImportValue" in json.dumps(templates["Reporting"])
    # AND the consumers' rows are on a dashboard in their own stack, named after the view's
    (dashboard,) = [r for r in templates["Reporting"]["Resources"].values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    assert dashboard["Properties"]["DashboardName"] == "shop-ops-Reporting"
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert "ShardedCounter Views (views): invocations" in body and "StreamAudit Audit: iterator age" in body
    assert table.operations is not None and list(table.operations.stack_dashboards) == ["Reporting"]
    producer_body = json.dumps([r for r in templates["Producer"]["Resources"].values()
                                if r["Type"] == "AWS::CloudWatch::Dashboard"])
    assert "ShardedCounter Views" not in producer_body
    # AND their alarms stay in their stack, join the view and notify the view's topic
    assert {"Views/Errors", "Views/IteratorAge", "Audit/FailedBatches"} <= set(table.operations.alarms)
    alarms = [r for r in templates["Reporting"]["Resources"].values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    assert len(alarms) == 6 and all(len(a["Properties"]["AlarmActions"]) == 1 for a in alarms)
