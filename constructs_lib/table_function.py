"""``TableFunction``: a Lambda function bundled with the runtime client and the table's model.

The asset contains only ``constructs_lib/runtime``, ``constructs_lib/model``, ``model.json``
and the handler module, so the handler can do::

    from constructs_lib.runtime import TableClient
    table = TableClient.from_environment()

and build exactly the keys the table was designed for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from . import _bundling, _defaults
from ._function import bundled_function
from .exceptions import ConstructPropsError
from .runtime.client import ENV_TABLE_NAME
from .bound_table import ModelBoundTable
from .runtime.contract import ENV_MODEL_FINGERPRINT

if TYPE_CHECKING:
    from .sharded_counter import ShardedCounter

Access = Literal["read", "write", "read_write"]


class TableFunction(Construct):
    """A Python Lambda function wired to a :class:`SingleTable` (owned or imported).

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
        Grant on the table: ``"read"``, ``"write"``, ``"read_write"`` (default), or None for no
        table-wide grant — then grant exactly what the handler needs, e.g.
        ``table.grant_query(function.function, index="GSI1")`` (Query on that index ARN only).
    environment
        Extra environment variables. ``TABLE_NAME`` and ``CONSTRUCTS_LIB_MODEL_FINGERPRINT`` (set
        on an imported table whose model was published) are reserved. Default none.
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
    counters
        :class:`ShardedCounter` families the function increments and reads: each is bound
        with :meth:`ShardedCounter.bind` (environment + least-privilege grants), so the
        handler can use ``CounterClient.from_environment("<family>")``. Default none.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        table: ModelBoundTable,
        entry: str | Path,
        handler: str = "handler",
        access: Access | None = "read_write",
        environment: Mapping[str, str] | None = None,
        memory_size: int = _defaults.LAMBDA_MEMORY_MB,
        timeout: cdk.Duration | None = None,
        architecture: lambda_.Architecture | None = None,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        description: str | None = None,
        counters: Sequence[ShardedCounter] = (),
    ) -> None:
        super().__init__(scope, id)
        if not isinstance(table, ModelBoundTable):
            raise ConstructPropsError(
                f"TableFunction {id!r}: table must be a SingleTable or an imported one (SingleTable.from_table_name, "
                f"from_table_attributes, from_parameters), got {table!r}"
            )
        if access not in ("read", "write", "read_write", None):
            raise ConstructPropsError(
                f"TableFunction {id!r}: access {access!r} must be 'read', 'write', 'read_write' or None"
            )
        env = dict(environment or {})
        for reserved in (ENV_TABLE_NAME, ENV_MODEL_FINGERPRINT):
            if reserved in env:
                raise ConstructPropsError(f"TableFunction {id!r}: environment key {reserved!r} is set by the construct")
        if not handler.isidentifier():
            raise ConstructPropsError(f"TableFunction {id!r}: handler {handler!r} must be a Python function name")
        self.function, self.log_group = bundled_function(
            self,
            model=table.model,
            handler=f"{_bundling.module_name(entry)}.{handler}",
            entry=entry,
            environment={ENV_TABLE_NAME: table.table_name, **table.runtime_environment, **env},
            memory_size=memory_size,
            timeout=timeout,
            architecture=architecture,
            log_retention=log_retention,
            description=description,
        )
        if access is not None:
            grant = {"read": table.grant_read_data, "write": table.grant_write_data,
                     "read_write": table.grant_read_write_data}
            grant[access](self.function)
        for counter in counters:
            counter.bind(self.function)
        self.table = table

