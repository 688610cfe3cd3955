"""The one way generated Lambda functions are built.

Every function the library makes (``TableFunction``, the counter aggregator, the audit
handler) is a Python function whose asset holds the runtime package and the model JSON, plus a
``TableFunction``'s own code and dependencies — see :mod:`constructs_lib.assets.bundling`. Each gets its own log group with a
retention period and its own role whose only logging permission is writing to that group
(no ``AWSLambdaBasicExecutionRole``, whose ``logs:*`` statements name ``*``). The runtime is the
one the library pins, so cdk-nag's AwsSolutions-L1 (newest runtime) is acknowledged here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import aws_cdk as cdk
import jsii
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct, IValidation

from ..assets import bundling
from ..model import Model
from ..runtime.environment import ENV_CONTRACT_PARAMETER, ENV_MODEL_FINGERPRINT
from . import defaults, nag
from .exceptions import ConstructPropsError, asset_errors
from .hardening import Hardening


def bundled_function(
    scope: Construct,
    *,
    model: Model,
    handler: str,
    bundle: bundling.Bundle | None = None,
    environment: Mapping[str, str] | None = None,
    memory_size: int = defaults.LAMBDA_MEMORY_MB,
    timeout: cdk.Duration | None = None,
    architecture: lambda_.Architecture | None = None,
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
    description: str | None = None,
    runtime: lambda_.Runtime | None = None,
) -> tuple[lambda_.Function, logs.LogGroup]:
    """Create ``Logs``, ``Role`` and ``Function`` children of ``scope``.

    ``handler`` is the Lambda handler string (``"module.function"``); ``bundle`` the staged
    asset, or None to stage the runtime part only, when the handler lives in the bundled runtime
    (e.g. ``constructs_lib.runtime.handlers.counter.handler``). ``runtime`` is a Python runtime of
    3.11 or later (:func:`python_runtime`), default ``defaults.LAMBDA_RUNTIME``.
    """
    what = f"{type(scope).__name__} {scope.node.id!r}"
    if not isinstance(memory_size, int) or isinstance(memory_size, bool) or not 128 <= memory_size <= 10240:
        raise ConstructPropsError(f"{what}: memory_size {memory_size!r} must be 128-10240 MB")
    if timeout is not None and not 1 <= timeout.to_seconds() <= 900:
        raise ConstructPropsError(f"{what}: timeout {timeout.to_human_string()} must be 1 second to 15 minutes")
    runtime, version = python_runtime(runtime, what)
    if bundle is None:
        with asset_errors():
            bundle = bundling.bundle(model, what=what, python_version=version, handler=handler,
                                     contract_check=ENV_CONTRACT_PARAMETER in (environment or {}),
                                     fingerprint_check=ENV_MODEL_FINGERPRINT in (environment or {}))
    asset = bundle.directory
    hardening = Hardening.of(scope)  # stricter stack settings: a customer-managed key, a VPC
    log_group = logs.LogGroup(
        scope, "Logs", retention=log_retention, removal_policy=cdk.RemovalPolicy.RETAIN,
        encryption_key=hardening.key(what),
    )
    role = iam.Role(
        scope, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description=f"Execution role of {scope.node.path}",
    )
    # Writing to its own log group is the only logging permission the function needs.
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=["logs:CreateLogStream", "logs:PutLogEvents"], resources=[log_group.log_group_arn])
    )
    settings = hardening.for_function(scope, role)
    function = lambda_.Function(
        scope,
        "Function",
        runtime=runtime,
        architecture=architecture or lambda_.Architecture.ARM_64,
        handler=handler,
        code=lambda_.Code.from_asset(str(asset)),
        environment=dict(environment or {}),
        memory_size=memory_size,
        timeout=timeout or cdk.Duration.seconds(defaults.LAMBDA_TIMEOUT_SECONDS),
        log_group=log_group,
        role=role,
        description=description,
        environment_encryption=settings.key,
        vpc=settings.placement.vpc if settings.placement else None,
        vpc_subnets=settings.placement.subnets if settings.placement else None,
        security_groups=[settings.security_group] if settings.security_group else None,
    )
    _grant_contract_read(scope, function, environment or {})
    if settings.network_policy is not None:
        # Lambda checks the role's network-interface permissions when it creates the function.
        function.node.add_dependency(settings.network_policy)
    scope.node.add_validation(_DropImpliedRoleDependency(function))
    nag.acknowledge_resource(function, "AwsSolutions-L1", nag.PINNED_RUNTIME)
    return function, log_group


def _grant_contract_read(scope: Construct, function: lambda_.Function, environment: Mapping[str, str]) -> None:
    """``ssm:GetParameter`` on exactly the published contract parameter the function reads at
    cold start (``CONSTRUCTS_LIB_CONTRACT_PARAMETER``, a literal path), if it has one."""
    from .grants import combined_grant

    name = environment.get(ENV_CONTRACT_PARAMETER)
    if not name:
        return
    arn = cdk.Stack.of(scope).format_arn(
        service="ssm", resource="parameter", resource_name=name.lstrip("/"),
        arn_format=cdk.ArnFormat.SLASH_RESOURCE_NAME,
    )
    combined_grant(function, ["ssm:GetParameter"], [arn])


def python_runtime(runtime: lambda_.Runtime | None, what: str) -> tuple[lambda_.Runtime, str]:
    """``runtime`` (default ``defaults.LAMBDA_RUNTIME``) and its ``MAJOR.MINOR``; refuses a runtime
    that is not Python 3.11 or later (the bundled runtime package needs 3.11)."""
    runtime = runtime if runtime is not None else getattr(lambda_.Runtime, defaults.LAMBDA_RUNTIME)
    name = getattr(runtime, "name", None)
    match = re.fullmatch(r"python3\.(\d+)", name or "")
    if not isinstance(runtime, lambda_.Runtime) or match is None or int(match.group(1)) < 11:
        raise ConstructPropsError(
            f"{what}: runtime {name or runtime!r} must be a Python runtime of 3.11 or later "
            "(e.g. aws_lambda.Runtime.PYTHON_3_13); the bundled runtime package needs Python 3.11"
        )
    return runtime, f"3.{match.group(1)}"


@jsii.implements(IValidation)
class _DropImpliedRoleDependency:
    """Remove the function's redundant ``DependsOn`` on its own IAM role.

    CDK makes a ``Function`` depend on every resource of its role construct. The role itself is
    already implied by ``Role: Fn::GetAtt [role, Arn]``, so that entry is redundant (cfn-lint
    W3005; the same pattern as aws/aws-cdk#24578); the dependency on the role's policy is real (the
    function must not run before its permissions exist) and stays. CDK turns construct dependencies
    into ``DependsOn`` entries while preparing the app, after aspects and just before validation,
    so the removal happens here. It reports no validation error.
    """

    def __init__(self, function: lambda_.Function) -> None:
        self._function = function

    def validate(self) -> list[str]:
        cfn_function = self._function.node.default_child
        role = self._function.role
        cfn_role = role.node.default_child if role is not None else None
        if isinstance(cfn_function, cdk.CfnResource) and isinstance(cfn_role, cdk.CfnResource):
            cfn_function.remove_resource_dependency(cfn_role)
        return []
