"""cdk-nag 3 ``AwsSolutionsChecks`` passes on every stack the repo synthesizes, with no
acknowledgment from the stack's author.

cdk-nag 3 runs as a CDK policy-validation plugin (``Validations.of(app).add_plugins(...)``):
a finding fails ``app.synth()``, and ``validation-report.json`` in the cloud assembly lists the
findings (``violations``) and the acknowledged ones (``suppressedViolations``, with the
acknowledgment's id, reason and construct path). Our constructs acknowledge the few rules they
break by design (``constructs_lib.constructs.nag``); ``REVIEWED_ACKNOWLEDGMENTS`` below is the reviewed
copy of those reasons, so a new or changed acknowledgment fails these tests until reviewed here.

The stacks: ``app.py``'s stacks (one app, the reporting consumer of the shop's table included), plus one stack per
construct variant they do not cover
(``VARIANT_STACKS``, also linted by ``test_cfn_lint.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms

from constructs_lib import ShardedCounter, SingleTable, StreamAudit, TableFunction
from constructs_lib.constructs import nag as _nag
from constructs_lib.constructs.hardening import LAMBDA_VPC_ACTIONS

HANDLER = Path(__file__).resolve().parents[2] / "examples" / "shop" / "handlers" / "orders_api.py"
NEW_AND_OLD = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES
REGION = "eu-west-1"

#: Every acknowledgment our constructs add: rule -> (reason, the construct path suffix of the one
#: resource kind it is placed on). Reviewed text: changing a reason or adding a rule must change this.
REVIEWED_ACKNOWLEDGMENTS: dict[str, tuple[str, str]] = {
    "AwsSolutions-L1": (
        "Generated functions run the Python runtime the library pins (constructs_lib.constructs.defaults.LAMBDA_RUNTIME, "
        "a runtime Lambda supports), not the newest one the installed aws-cdk-lib happens to list: the "
        "runtime of code the library ships is raised deliberately in a library release, not implicitly by "
        "a CDK upgrade. The construct has no runtime parameter, so its user could not act on this finding.",
        "/Function/Resource",
    ),
    "AwsSolutions-SQS3": (
        "This queue is itself the dead-letter destination: the on-failure destination of the stream "
        "event source mapping (and of the aggregator's asynchronous scheduled invocations), which "
        "cdk-nag only recognizes in RedrivePolicy/DeadLetterConfig. It keeps failed-batch records for "
        "14 days behind the FailedBatchesAlarm; a dead-letter queue of the dead-letter queue would only "
        "move them.",
        "/FailedBatches/Resource",
    ),
    "AwsSolutions-SMG4": (
        "The redaction salt must never rotate: audit records store HMAC-SHA256(salt, value) of redacted "
        "attributes, so a new salt would make equal values hashed before and after the rotation "
        "incomparable across the retained history. It is a random 48-character value, not a credential; "
        "only the audit function may read it.",
        "/RedactionSalt/Resource",
    ),
    # Only with the lambda-in-vpc setting (constructs_lib.constructs.hardening): the function role's ENI policy.
    "AwsSolutions-IAM5[Resource::*]": (
        "Attaching a function to a VPC needs these six EC2 network-interface actions on its execution role "
        "(the statement of AWS's service-role/AWSLambdaVPCAccessExecutionRole, inlined so the role has no "
        "managed policy). ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets support no resource-level "
        "permissions and Lambda validates the create/delete actions against '*', so the statement names '*'; "
        "it grants no action on DynamoDB, SQS, KMS or any data.",
        "/NetworkInterfaces/Resource",
    ),
}


# The stacks ------------------------------------------------------------------------------------
def _shop_table(stack: cdk.Stack, id: str = "Data", **props: Any) -> SingleTable:
    from examples.shop.model import shop_model

    return SingleTable(stack, id, model=shop_model, **props)


def counter_schedule_stack(app: cdk.App) -> cdk.Stack:
    """ShardedCounter in schedule mode (EventBridge rule, async failure destination) on a table
    without a stream, read by a TableFunction."""
    stack = cdk.Stack(app, "CounterScheduleStack")
    table = _shop_table(stack)
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=4,
                           schedule=cdk.Duration.minutes(5), scheduled_counters=["home"])
    TableFunction(stack, "Reader", table=table, entry=HANDLER, access="read", counters=[views])
    return stack


def audit_own_key_stack(app: cdk.App) -> cdk.Stack:
    """StreamAudit with its own rotating KMS key (audit table and salt secret encrypted with it)."""
    stack = cdk.Stack(app, "AuditOwnKeyStack", env=cdk.Environment(region=REGION))
    table = _shop_table(stack, stream=NEW_AND_OLD)
    StreamAudit(stack, "Audit", source=table, encryption="own_key", redact=["email"],
                exclude_entities=ShardedCounter.ENTITIES)
    return stack


def audit_drop_stack(app: cdk.App) -> cdk.Stack:
    """StreamAudit dropping redacted values (no salt secret), auditing two entities only."""
    stack = cdk.Stack(app, "AuditDropStack")
    table = _shop_table(stack, stream=NEW_AND_OLD)
    StreamAudit(stack, "Audit", source=table, redaction="drop", redact=["email"],
                include_entities=["User", "Order"], retention=cdk.Duration.days(30))
    return stack


def cmk_provisioned_stack(app: cdk.App) -> cdk.Stack:
    """SingleTable with a customer-managed key and provisioned billing, with every construct on it:
    a stream-mode counter, an audit sharing the table's key, a read-write function."""
    stack = cdk.Stack(app, "CmkProvisionedStack", env=cdk.Environment(region=REGION))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    table = _shop_table(
        stack,
        stream=NEW_AND_OLD,
        encryption=dynamodb.TableEncryptionV2.customer_managed_key(key),
        billing=dynamodb.Billing.provisioned(
            read_capacity=dynamodb.Capacity.fixed(5),
            write_capacity=dynamodb.Capacity.autoscaled(max_capacity=20),
        ),
        index_write_capacity=dynamodb.Capacity.autoscaled(max_capacity=10),
    )
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=8)
    StreamAudit(stack, "Audit", source=table, redact=["email"], exclude_entities=ShardedCounter.ENTITIES)
    TableFunction(stack, "Api", table=table, entry=HANDLER, counters=[views])
    return stack


def hardened_stack(app: cdk.App) -> cdk.Stack:
    """Every construct with both stricter settings on (constructs_lib.constructs.hardening): the stack's own
    customer-managed key everywhere, every function in an isolated VPC with endpoints."""
    from constructs_lib.constructs.hardening import CMK_CONTEXT, VPC_CONTEXT

    stack = cdk.Stack(app, "HardenedStack", env=cdk.Environment(region=REGION))
    stack.node.set_context(CMK_CONTEXT, True)
    stack.node.set_context(VPC_CONTEXT, True)
    table = _shop_table(stack, stream=NEW_AND_OLD)
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=8)
    # A family on a table without a stream: recomputed on a schedule (an asynchronous failure destination)
    archive = _shop_table(stack, "Archive")
    daily = ShardedCounter(stack, "Daily", table=archive, name="daily", shards=2,
                           schedule=cdk.Duration.hours(1), scheduled_counters=["home"])
    StreamAudit(stack, "Audit", source=table, redact=["email"], exclude_entities=ShardedCounter.ENTITIES)
    TableFunction(stack, "Api", table=table, entry=HANDLER, counters=[views])
    TableFunction(stack, "Reports", table=archive, entry=HANDLER, access="read", counters=[daily])
    return stack


def operations_stack(app: cdk.App) -> cdk.Stack:
    """SingleTable with its operations view (dashboard, alarms notifying an encrypted SNS topic),
    provisioned billing, Contributor Insights on the table and one GSI, and a stream-mode counter
    and an audit registered on its dashboard."""
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_sns as sns

    from constructs_lib import OperationsSettings

    stack = cdk.Stack(app, "OperationsStack")
    # CloudWatch can publish to an encrypted topic only with a customer-managed key it may use.
    key = kms.Key(stack, "AlarmKey", enable_key_rotation=True)
    key.add_to_resource_policy(iam.PolicyStatement(
        principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
        actions=["kms:Decrypt", "kms:GenerateDataKey"], resources=["*"],
    ))
    topic = sns.Topic(stack, "Alarms", master_key=key, enforce_ssl=True)
    table = _shop_table(
        stack,
        stream=NEW_AND_OLD,
        billing=dynamodb.Billing.provisioned(
            read_capacity=dynamodb.Capacity.fixed(5),
            write_capacity=dynamodb.Capacity.autoscaled(max_capacity=20),
        ),
        index_write_capacity=dynamodb.Capacity.autoscaled(max_capacity=10),
        contributor_insights={"table": True, "GSI1": True},
        operations=OperationsSettings(alarm_topic=topic, user_errors_threshold=10),
    )
    ShardedCounter(stack, "Views", table=table, name="views", shards=8)
    StreamAudit(stack, "Audit", source=table, exclude_entities=ShardedCounter.ENTITIES)
    return stack


def store_stack(app: cdk.App) -> cdk.Stack:
    """The evolving store model with its generated ``Backfill`` function."""
    from examples.evolution.app import StoreStack

    return StoreStack(app, "StoreStack")


def imported_consumer_stack(app: cdk.App) -> cdk.Stack:
    """Every construct on an imported table of another account: its stream and customer-managed
    key imported, a stream-mode counter, an audit, a function, and the operations view."""
    from constructs_lib import OperationsSettings
    from examples.shop.model import shop_model

    stack = cdk.Stack(app, "ImportedConsumerStack", env=cdk.Environment(region=REGION))
    arn = f"arn:aws:dynamodb:{REGION}:111122223333:table/shop-data"
    table = SingleTable.from_table_attributes(
        stack, "Shop", model=shop_model, table_arn=arn, table_stream_arn=f"{arn}/stream/2024-06-01T00:00:00.000",
        stream_view_type=NEW_AND_OLD,
        encryption_key=kms.Key.from_key_arn(stack, "ShopKey", f"arn:aws:kms:{REGION}:111122223333:key/"
                                                              "11111111-2222-3333-4444-555555555555"),
    )
    table.add_operations(OperationsSettings())
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=4)
    StreamAudit(stack, "Audit", source=table, redact=["email"], exclude_entities=ShardedCounter.ENTITIES)
    reader = TableFunction(stack, "Reader", table=table, entry=HANDLER, access=None, counters=[views])
    table.grant_query(reader.function, index="GSI2")
    return stack


def global_table_stack(app: cdk.App) -> cdk.Stack:
    """A global table in three Regions (MREC) with its operations view (a ReplicationLatency alarm per
    replica), a stream-mode counter, an audit and a scoped function on it."""
    from constructs_lib import OperationsSettings, Replica

    stack = cdk.Stack(app, "GlobalTableStack", env=cdk.Environment(region=REGION))
    table = _shop_table(
        stack, replicas=[Replica("us-east-1", tags={"replica": "us"}), "ap-southeast-2"],
        acknowledge_mrec={"version:User": "users are edited only in their home Region (requests are routed by user)"},
        operations=OperationsSettings(),
    )
    ShardedCounter(stack, "Views", table=table, name="views", shards=4)
    StreamAudit(stack, "Audit", source=table, exclude_entities=ShardedCounter.ENTITIES)
    TableFunction(stack, "Api", table=table, entry=HANDLER, patterns=["order by id"], writes={"Order": ["put"]})
    return stack


#: The construct variants app.py does not cover, by stack name.
VARIANT_STACKS: dict[str, Callable[[cdk.App], cdk.Stack]] = {
    "CounterScheduleStack": counter_schedule_stack,
    "AuditOwnKeyStack": audit_own_key_stack,
    "AuditDropStack": audit_drop_stack,
    "CmkProvisionedStack": cmk_provisioned_stack,
    "HardenedStack": hardened_stack,
    "OperationsStack": operations_stack,
    "ImportedConsumerStack": imported_consumer_stack,
    "StoreStack": store_stack,
    "GlobalTableStack": global_table_stack,
}
ALL_STACKS = ["ShopStack", *VARIANT_STACKS]


def build_stack_app(name: str, outdir: Path, context: dict[str, Any] | None = None) -> cdk.App:
    """An app holding stack ``name`` alone (``ShopStack`` comes from app.py)."""
    if name == "ShopStack" and context is None:
        from app import build_app

        return build_app(str(outdir))
    app = cdk.App(outdir=str(outdir), context=context)
    if name == "ShopStack":
        from examples.shop.stack import ShopStack

        ShopStack(app, "ShopStack")
    else:
        VARIANT_STACKS[name](app)
    return app


# Synthesis with the checks ----------------------------------------------------------------------
@dataclass(frozen=True)
class NagResult:
    app: cdk.App
    error: str | None  # the synthesis error, if the checks failed it
    report: dict[str, Any]

    def violations(self) -> list[dict[str, Any]]:
        return [v for plugin in self.report["pluginReports"] for v in plugin["violations"]]

    def suppressed(self) -> list[dict[str, Any]]:
        return [v for plugin in self.report["pluginReports"] for v in plugin.get("suppressedViolations", [])]

    def recorded_acknowledgments(self) -> list[tuple[str, str, str]]:
        """(construct path, acknowledged id, reason) of every acknowledgment in the construct tree."""
        key = cdk.Validations.ACKNOWLEDGED_RULES_METADATA_KEY
        return [
            (c.node.path, ack_id, reason)
            for c in self.app.node.find_all()
            for entry in c.node.metadata
            if entry.type == key
            for ack_id, reason in entry.data.items()
        ]


def synth_with_nag(app: cdk.App) -> NagResult:
    from cdk_nag import AwsSolutionsChecks

    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    error = None
    try:
        app.synth()
    except RuntimeError as exc:  # jsii raises the validation failure as RuntimeError
        error = str(exc)
    report_file = Path(app.outdir) / "validation-report.json"
    assert report_file.exists(), f"no validation report in {app.outdir} (error: {error})"
    return NagResult(app, error, json.loads(report_file.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def nag_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, NagResult]:
    """Every stack, each in its own app, synthesized once with AwsSolutionsChecks."""
    return {
        name: synth_with_nag(build_stack_app(name, tmp_path_factory.mktemp(f"nag-{name}")))
        for name in ALL_STACKS
    }


# Tests --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ALL_STACKS)
def test_stack_passes_aws_solutions_checks(nag_results: dict[str, NagResult], stack: str) -> None:
    # GIVEN the stack synthesized with cdk-nag's AwsSolutionsChecks (no acknowledgment by its author)
    result = nag_results[stack]
    # THEN synthesis succeeds and the report has no finding left, error or warning
    assert result.error is None, result.error
    assert [p["pluginName"] for p in result.report["pluginReports"]] == ["AwsSolutions"]
    assert result.violations() == []
    assert all(p["conclusion"] == "success" for p in result.report["pluginReports"])


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_only_reviewed_acknowledgments_suppress_findings(nag_results: dict[str, NagResult], stack: str) -> None:
    # GIVEN the findings the checks suppressed in the stack
    suppressed = nag_results[stack].suppressed()
    assert suppressed, "AwsSolutionsChecks did not run (nothing suppressed at all)"
    for finding in suppressed:
        rule = finding["ruleName"]
        # THEN each was suppressed by one of our reviewed acknowledgments, with its reviewed reason...
        assert rule in REVIEWED_ACKNOWLEDGMENTS, f"{rule} suppressed by an unreviewed acknowledgment: {finding}"
        reason, suffix = REVIEWED_ACKNOWLEDGMENTS[rule]
        assert finding["acknowledgedId"] == f"AwsSolutions::{rule}"
        assert finding["reason"] == reason
        # ...placed on the one resource concerned (not on a parent, where it could hide others)
        (resource,) = finding["violatingConstructs"]
        assert finding["acknowledgedAt"] == resource["constructPath"], finding
        assert resource["constructPath"].endswith(suffix), finding


def test_acknowledgments_in_the_construct_trees_are_the_reviewed_ones(nag_results: dict[str, NagResult]) -> None:
    # GIVEN every acknowledgment recorded in the construct trees of all stacks
    recorded = [ack for result in nag_results.values() for ack in result.recorded_acknowledgments()]
    assert recorded
    for path, ack_id, reason in recorded:
        if ack_id.startswith("CloudFormation-Validate::"):
            continue  # aws-cdk-lib's own (ec2.Vpc acknowledges cfn-lint's W3010 for the AZs it picks)
        # THEN each is an AwsSolutions rule we reviewed, with the reviewed, specific reason
        rule = ack_id.removeprefix("AwsSolutions::")
        assert ack_id.startswith("AwsSolutions::") and rule in REVIEWED_ACKNOWLEDGMENTS, (path, ack_id)
        expected, suffix = REVIEWED_ACKNOWLEDGMENTS[rule]
        assert reason == expected, (path, ack_id)
        assert path.endswith(suffix), (path, ack_id)
    # AND every reviewed acknowledgment is used, i.e. really suppresses a finding somewhere
    used = {f["ruleName"] for result in nag_results.values() for f in result.suppressed()}
    assert used == set(REVIEWED_ACKNOWLEDGMENTS), f"unused acknowledgments: {set(REVIEWED_ACKNOWLEDGMENTS) - used}"


def test_reviewed_reasons_are_specific() -> None:
    # GIVEN the reviewed reasons and the library's own constants
    library = {"AwsSolutions-L1": _nag.PINNED_RUNTIME, "AwsSolutions-SQS3": _nag.QUEUE_IS_THE_DLQ,
               "AwsSolutions-SMG4": _nag.SALT_MUST_NOT_ROTATE,
               "AwsSolutions-IAM5[Resource::*]": _nag.LAMBDA_VPC_NETWORK_INTERFACES}
    for rule, (reason, _) in REVIEWED_ACKNOWLEDGMENTS.items():
        # THEN they agree, and each says why in more than a token sentence
        assert library[rule] == reason
        assert len(reason) >= 150 and reason.count(" ") >= 25, rule


def test_acknowledge_refuses_vague_or_malformed_acknowledgments() -> None:
    # GIVEN a scratch construct (never synthesized)
    scope = cdk.Stack(cdk.App(), "Scratch")
    # WHEN an acknowledgment has no real reason, or a rule id that is not an AwsSolutions rule
    # THEN the helper refuses it
    with pytest.raises(ValueError, match="specific reason"):
        _nag.acknowledge(scope, "AwsSolutions-L1", "by design")
    with pytest.raises(ValueError, match="must look like"):
        _nag.acknowledge(scope, "AwsSolutions::AwsSolutions-L1", _nag.PINNED_RUNTIME)


def test_strict_mode_leaves_every_finding_to_the_user(tmp_path: Path) -> None:
    # GIVEN ShopStack in an app with the context constructs_lib:nag-strict=true
    app = build_stack_app("ShopStack", tmp_path, context={_nag.STRICT_CONTEXT: "true"})
    # WHEN it is synthesized with AwsSolutionsChecks
    result = synth_with_nag(app)
    # THEN the constructs acknowledged nothing, and the by-design findings fail synthesis
    assert result.recorded_acknowledgments() == []
    assert result.error is not None and "AwsSolutions-SQS3" in result.error
    found = {(v["ruleName"], c["constructPath"]) for v in result.violations() for c in v["violatingConstructs"]}
    assert found == {
        ("AwsSolutions-L1", "ShopStack/ProductViews/Function/Resource"),
        ("AwsSolutions-L1", "ShopStack/Audit/Function/Resource"),
        ("AwsSolutions-L1", "ShopStack/OrdersApi/Function/Resource"),
        ("AwsSolutions-SQS3", "ShopStack/ProductViews/FailedBatches/Resource"),
        ("AwsSolutions-SQS3", "ShopStack/Audit/FailedBatches/Resource"),
        ("AwsSolutions-SMG4", "ShopStack/Audit/RedactionSalt/Resource"),
    }


# Every generated IAM statement -----------------------------------------------------------------------
def _policy_statements(result: NagResult) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for template_file in Path(result.app.outdir).glob("*.template.json"):
        template = json.loads(template_file.read_text(encoding="utf-8"))
        for lid, resource in template["Resources"].items():
            if resource["Type"] == "AWS::IAM::Policy":
                out += [(f"{template_file.name}:{lid}", s) for s in resource["Properties"]["PolicyDocument"]["Statement"]]
    return out


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_no_generated_iam_statement_uses_a_wildcard(nag_results: dict[str, NagResult], stack: str) -> None:
    # GIVEN every identity policy statement the stack's constructs generated
    statements = _policy_statements(nag_results[stack])
    assert statements
    for where, statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        # THEN no action is a wildcard and no resource is "*": each names a table, index, stream,
        # queue, key, secret or log group ARN (a log group ARN ends in ":*", which CloudFormation writes)
        assert not [a for a in actions if "*" in a], (where, statement)
        if resources == ["*"] and set(actions) == set(LAMBDA_VPC_ACTIONS):
            # the one documented exception: a function's network interfaces with lambda-in-vpc
            assert statement["Effect"] == "Allow" and stack == "HardenedStack", (where, statement)
            continue
        assert "*" not in resources, (where, statement)
