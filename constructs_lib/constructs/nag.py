"""Acknowledgments of cdk-nag ``AwsSolutions`` findings that the constructs cause by design.

Each construct acknowledges, on the one CloudFormation resource concerned, the few rules it breaks
on purpose, each with a specific reason, through aws_cdk core's ``Validations`` (cdk-nag stays a
development dependency). They are listed with their reasons under ``suppressedViolations`` in
``validation-report.json``. With the context value ``constructs_lib:nag-strict`` set to true the
constructs acknowledge nothing.

See docs/adr/0024-cdk-nag-acknowledged-per-resource.md.
"""

from __future__ import annotations

import re

import aws_cdk as cdk
from constructs import IConstruct

from .exceptions import ConstructPropsError

#: Context key of strict mode: when true, the constructs add no acknowledgment.
STRICT_CONTEXT = "constructs_lib:nag-strict"
#: Plugin name cdk-nag's ``AwsSolutionsChecks`` reports under (the ``<plugin>::`` id prefix).
PACK = "AwsSolutions"

# The reasons, one per design decision. docs/security/checks.md lists them too, and
# tests/synth/test_cdk_nag.py holds a reviewed copy: changing or adding one fails that test.

#: AwsSolutions-L1 on every generated function (TableFunction, counter aggregator, audit writer).
PINNED_RUNTIME = (
    "Generated functions run the Python runtime the library pins (constructs_lib.constructs.defaults.LAMBDA_RUNTIME, "
    "a runtime Lambda supports), not the newest one the installed aws-cdk-lib happens to list: the "
    "runtime of code the library ships is raised deliberately in a library release, not implicitly by "
    "a CDK upgrade. The construct has no runtime parameter, so its user could not act on this finding."
)
#: AwsSolutions-SQS3 on the failure queue of the counter aggregator and of the audit writer.
QUEUE_IS_THE_DLQ = (
    "This queue is itself the dead-letter destination: the on-failure destination of the stream "
    "event source mapping (and of the aggregator's asynchronous scheduled invocations), which "
    "cdk-nag only recognizes in RedrivePolicy/DeadLetterConfig. It keeps failed-batch records for "
    "14 days behind the FailedBatchesAlarm; a dead-letter queue of the dead-letter queue would only "
    "move them."
)
#: AwsSolutions-SMG4 on StreamAudit's redaction salt.
SALT_MUST_NOT_ROTATE = (
    "The redaction salt must never rotate: audit records store HMAC-SHA256(salt, value) of redacted "
    "attributes, so a new salt would make equal values hashed before and after the rotation "
    "incomparable across the retained history. It is a random 48-character value, not a credential; "
    "only the audit function may read it."
)

#: AwsSolutions-IAM5 on a generated function's network-interface policy, only with the
#: ``constructs_lib:lambda-in-vpc`` setting (constructs_lib.constructs.hardening).
LAMBDA_VPC_NETWORK_INTERFACES = (
    "Attaching a function to a VPC needs these six EC2 network-interface actions on its execution role "
    "(the statement of AWS's service-role/AWSLambdaVPCAccessExecutionRole, inlined so the role has no "
    "managed policy). ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets support no resource-level "
    "permissions and Lambda validates the create/delete actions against '*', so the statement names '*'; "
    "it grants no action on DynamoDB, SQS, KMS or any data."
)

#: A rule id, optionally with the finding detail of a granular rule (``AwsSolutions-IAM5[Resource::*]``).
_RULE = re.compile(rf"{PACK}-[A-Z][A-Za-z]*\d+(\[[^\]]+\])?")


def is_strict(scope: IConstruct) -> bool:
    """Whether strict mode (``constructs_lib:nag-strict``) is on for ``scope``."""
    value = scope.node.try_get_context(STRICT_CONTEXT)
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge cdk-nag rule ``rule`` (e.g. ``"AwsSolutions-SQS3"``) on ``scope`` and its
    children, with ``reason``. Does nothing in strict mode.

    Pass the narrowest scope: the CloudFormation resource (``node.default_child``) the finding is
    about, so the acknowledgment cannot hide the same rule elsewhere.
    """
    if not _RULE.fullmatch(rule):
        raise ConstructPropsError(f"cdk-nag rule id {rule!r} must look like '{PACK}-SQS3'")
    if len(reason.strip()) < 40:
        raise ConstructPropsError(f"acknowledgment of {rule} needs a specific reason, got {reason!r}")
    if is_strict(scope):
        return
    cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=f"{PACK}::{rule}", reason=reason))


def acknowledge_resource(construct: IConstruct, rule: str, reason: str) -> None:
    """:func:`acknowledge` on ``construct``'s CloudFormation resource (its ``default_child``)."""
    resource = construct.node.default_child
    acknowledge(resource if resource is not None else construct, rule, reason)
