"""``TableFunction``: a Lambda function bundled with the runtime client and the table's model.

The asset contains only ``constructs_lib/runtime``, ``constructs_lib/model``, ``model.json``
and the handler module, so the handler can do::

    from constructs_lib.runtime import TableClient
    table = TableClient.from_environment()

and build exactly the keys the table was designed for.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct, IValidation

from . import _bundling, _defaults
from .exceptions import ConstructPropsError
from .runtime.client import ENV_TABLE_NAME
from .single_table import SingleTable

Access = Literal["read", "write", "read_write"]


class TableFunction(Construct):
    """A Python Lambda function wired to a :class:`SingleTable`.

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    table
        The table the function works on; its name is passed as ``TABLE_NAME``.
    entry
        Path of the handler module (``.py``). It is copied to the asset root.
    handler
        Function name inside ``entry``. Default ``"handler"``.
    access
        Grant on the table: ``"read"``, ``"write"`` or ``"read_write"`` (default).
    environment
        Extra environment variables. ``TABLE_NAME`` is reserved. Default none.
    memory_size
        MB, 128–10240. Default 256.
    timeout
        Default 10 seconds (max 15 minutes).
    architecture
        Default ``ARM_64`` (cheaper per GB-second; the bundle is pure Python).
    log_retention
        Retention of the function's log group. Default one month.
    description
        Function description. Default none.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        table: SingleTable,
        entry: str | Path,
        handler: str = "handler",
        access: Access = "read_write",
        environment: Mapping[str, str] | None = None,
        memory_size: int = _defaults.LAMBDA_MEMORY_MB,
        timeout: cdk.Duration | None = None,
        architecture: lambda_.Architecture | None = None,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        description: str | None = None,
    ) -> None:
        super().__init__(scope, id)
        if not isinstance(table, SingleTable):
            raise ConstructPropsError(f"TableFunction {id!r}: table must be a SingleTable, got {table!r}")
        if access not in ("read", "write", "read_write"):
            raise ConstructPropsError(f"TableFunction {id!r}: access {access!r} must be 'read', 'write' or 'read_write'")
        env = dict(environment or {})
        if ENV_TABLE_NAME in env:
            raise ConstructPropsError(f"TableFunction {id!r}: environment key {ENV_TABLE_NAME!r} is set by the construct")
        if not isinstance(memory_size, int) or not 128 <= memory_size <= 10240:
            raise ConstructPropsError(f"TableFunction {id!r}: memory_size {memory_size!r} must be 128-10240 MB")
        if not handler.isidentifier():
            raise ConstructPropsError(f"TableFunction {id!r}: handler {handler!r} must be a Python function name")
        asset = _bundling.bundle(table.model, entry)
        self.log_group = logs.LogGroup(
            self, "Logs", retention=log_retention, removal_policy=cdk.RemovalPolicy.RETAIN
        )
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=getattr(lambda_.Runtime, _defaults.LAMBDA_RUNTIME),
            architecture=architecture or lambda_.Architecture.ARM_64,
            handler=f"{_bundling.module_name(entry)}.{handler}",
            code=lambda_.Code.from_asset(str(asset)),
            environment={ENV_TABLE_NAME: table.table_name, **env},
            memory_size=memory_size,
            timeout=timeout or cdk.Duration.seconds(_defaults.LAMBDA_TIMEOUT_SECONDS),
            log_group=self.log_group,
            description=description,
        )
        grant = {"read": table.grant_read_data, "write": table.grant_write_data, "read_write": table.grant_read_write_data}
        grant[access](self.function)
        self.node.add_validation(_DropImpliedRoleDependency(self.function))
        self.table = table


@jsii.implements(IValidation)
class _DropImpliedRoleDependency:
    """Remove the function's redundant ``DependsOn`` on its own IAM role.

    CDK makes a ``Function`` depend on every resource of its role construct. The role itself is
    already implied by ``Role: Fn::GetAtt [role, Arn]``, so that entry is redundant (cfn-lint
    W3005; the same pattern as aws/aws-cdk#24578); the dependency on the role's policy is real (the function must
    not run before its permissions exist) and stays. CDK turns construct dependencies into
    ``DependsOn`` entries while preparing the app, after aspects and just before validation, so
    the removal happens here. It reports no validation error.
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
