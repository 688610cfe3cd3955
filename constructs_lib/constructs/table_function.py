"""``TableFunction``: a Lambda function bundled with the runtime client and the table's model.

The asset contains ``constructs_lib/runtime``, ``constructs_lib/model``, ``model.json``, the
handler module — or the handler's whole directory — and the wheels of its requirements, so the
handler can do::

    from constructs_lib.runtime import TableClient
    table = TableClient.from_environment()

and build exactly the keys the table was designed for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from ..assets import bundling
from ..assets.handler_code import resolve_handler_code
from ..assets.requirements import InstalledDependencies, install, read_requirements
from ..model.exceptions import AccessScopeError
from ..model.scope import AccessScope
from ..runtime.environment import (
    ENV_ACCESS_SCOPE,
    ENV_CONTRACT_PARAMETER,
    ENV_MODEL_FINGERPRINT,
    ENV_REPLICA_REGIONS,
    ENV_TABLE_NAME,
)
from . import defaults
from .binding import FunctionBinding, check_bindings
from .bound_table import ModelBoundTable, require_bound_table
from .exceptions import ConstructPropsError, asset_errors
from .function import bundled_function, python_runtime
from .model_contract import check_pinned_slice
from .scope_policy import derive_statements

Access = Literal["read", "write", "read_write"]
#: ``access=`` left at its default: ``"read_write"`` unless a scope is declared.
_DEFAULT_ACCESS: Access = "read_write"
_UNSET: object = object()
#: Longest scope JSON shipped in the environment (Lambda allows 4 KB of variables in all).
MAX_SCOPE_JSON = 2048


class TableFunction(Construct):
    """A Python Lambda function wired to a :class:`SingleTable` (owned or imported).

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    table
        The table the function works on; its name is passed as ``TABLE_NAME``.
    entry
        The function's code: a handler module (``.py`` file, copied to the asset root), or a
        directory whose modules, sub-packages and data files are copied to the asset root
        (``__pycache__``, virtualenvs, tests, ``cdk.out``, ``node_modules``, dotfiles and
        dependency declarations are left out; see ``constructs_lib.assets.handler_code``).
    handler
        Function name in the handler module; checked at synth to be defined at the module's top
        level. Default ``"handler"``.
    index
        Directory entries only: path of the handler module inside ``entry``, e.g.
        ``"api/routes.py"`` (handler ``api.routes.<handler>``). Default ``"index.py"``.
    requirements
        A ``requirements*.txt`` or ``pyproject.toml`` whose dependencies are installed into the
        asset as wheels for the function's runtime (``runtime``) and architecture, without Docker
        (see ``constructs_lib.assets.requirements``). Default None: a directory entry's own
        ``requirements.txt``, else its ``pyproject.toml`` ``[project].dependencies``; a file
        entry has none. boto3/botocore are skipped (the runtime ships them) with a warning.
    access
        Coarse grant on the table: ``"read"``, ``"write"``, ``"read_write"`` (default without a
        declared scope), or None for no table-wide grant — then grant exactly what the handler
        needs, e.g. ``table.grant_query(function.function, index="GSI1")``. Passing it together
        with a declared scope (below) raises ``ConstructPropsError``.
    patterns, writes, batch_gets, tenant
        The function's declared access scope (an :class:`~constructs_lib.model.AccessScope`):
        access-pattern names it queries, per entity the writes it makes (``put``, ``update``,
        ``delete``, ``transaction_put``/``_update``/``_delete``, ``condition_check``,
        ``batch_put``, ``batch_delete``), entities it ``batch_get``s, and on a multi-tenant model
        the tenant (an id, ``principal_tag(...)`` or ``ANY_TENANT``). When any is given, the role
        gets exactly that (``SingleTable.grant_scope``: only those actions, the table ARN and the
        index ARNs the patterns read, ``dynamodb:LeadingKeys`` limited to the declared entities'
        key shapes), the scope is shipped in ``CONSTRUCTS_LIB_ACCESS_SCOPE``, and the bundled
        ``TableClient.from_environment()`` raises ``OutOfScopeError`` for anything else before
        any call. Default: none declared.
    environment
        Extra environment variables. ``TABLE_NAME``, ``CONSTRUCTS_LIB_MODEL_FINGERPRINT``,
        ``CONSTRUCTS_LIB_CONTRACT_PARAMETER`` (set on an imported table whose contract was
        published; the role may ``ssm:GetParameter`` that one parameter),
        ``CONSTRUCTS_LIB_ACCESS_SCOPE`` and ``CONSTRUCTS_LIB_REPLICA_REGIONS`` (a replicated
        table's Regions: writes are stamped with ``AWS_REGION``) are reserved. Default none.
    memory_size
        MB, 128–10240. Default 256.
    timeout
        Default 10 seconds (max 15 minutes).
    architecture
        Default ``ARM_64`` (cheaper per GB-second). Dependencies are installed as wheels for it.
    log_retention
        Retention of the function's log group. Default one month.
    description
        Function description. Default none.
    runtime
        The Lambda Python runtime, 3.11 or later. Default ``aws_lambda.Runtime.PYTHON_3_13``. The
        asset ships bytecode compiled by an interpreter of that version when one is found (the
        synth interpreter, ``python3.X`` on ``PATH`` or pyenv; see ``constructs_lib.assets.bytecode``).
    counters
        :class:`ShardedCounter` families (anything with ``bind(function)``, see
        :class:`~.binding.FunctionBinding`) the function increments and reads: each is bound
        (environment + least-privilege grants), so the handler can use
        ``CounterClient.from_environment("<family>")``. Default none.
    traffic_insight
        Whether the handler records its traffic (``TableClient.record_traffic()`` or
        ``traffic=``, docs/runtime/hot-partitions.md): only then does the asset ship the
        recorder (``constructs_lib/runtime/stats/``, ~15 KB zipped); without it, asking for
        recording raises ``TrafficInsightNotBundledError`` naming this option. Default False.

    Attributes
    ----------
    function, log_group
        The ``lambda_.Function`` and its log group.
    bundle
        The staged asset (``constructs_lib.assets.bundling.Bundle``): its directory and the files of
        the runtime part, the handler code and the dependencies.
    scope
        The declared :class:`~constructs_lib.model.AccessScope`, or None.
    dependencies
        The requirements install (``constructs_lib.assets.requirements.InstalledDependencies``:
        directory, cache key, seconds, whether it came from the cache), or None.

    Raises
    ------
    ConstructPropsError
        At construction (synth): bad props; an entry/index/handler that does not resolve to a
        top-level function of a module in the bundle (the message lists the names the module
        defines); a file or dependency that would shadow ``constructs_lib/`` or ``model.json``;
        a requirement without a wheel for the function's platform (the message names the
        package, the platform, the Python version and the remedy).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        table: ModelBoundTable,
        entry: str | os.PathLike[str],
        handler: str = "handler",
        index: str | None = None,
        requirements: str | os.PathLike[str] | None = None,
        access: Access | None | object = _UNSET,
        patterns: Sequence[str] = (),
        writes: Mapping[str, Sequence[str]] | None = None,
        batch_gets: Sequence[str] = (),
        tenant: str | None = None,
        environment: Mapping[str, str] | None = None,
        memory_size: int = defaults.LAMBDA_MEMORY_MB,
        timeout: cdk.Duration | None = None,
        architecture: lambda_.Architecture | None = None,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
        description: str | None = None,
        counters: Sequence[FunctionBinding] = (),
        runtime: lambda_.Runtime | None = None,
        traffic_insight: bool = False,
    ) -> None:
        super().__init__(scope, id)
        require_bound_table(f"TableFunction {id!r}", "table", table)
        if not isinstance(traffic_insight, bool):
            raise ConstructPropsError(f"TableFunction {id!r}: traffic_insight {traffic_insight!r} must be True or False")
        #: The declared access scope (``patterns``/``writes``/``batch_gets``/``tenant``), or None.
        self.scope: AccessScope | None = None
        scope_json: str | None = None
        if patterns or writes or batch_gets or tenant is not None:
            if access is not _UNSET:
                raise ConstructPropsError(
                    f"TableFunction {id!r}: access={access!r} and a declared scope (patterns/writes/batch_gets) "
                    "exclude each other: the scope derives the exact grant; drop access= (or the scope, for a "
                    "coarse grant)"
                )
            try:
                self.scope = AccessScope(patterns=tuple(patterns), writes=dict(writes or {}),
                                         batch_gets=tuple(batch_gets), tenant=tenant).validate(table.model)
                derive_statements(table.model, self.scope)  # a scope IAM cannot confine fails before bundling
                table.check_scope(f"TableFunction {id!r}", self.scope)  # ...and one a global table cannot promise
            except AccessScopeError as exc:
                raise ConstructPropsError(f"TableFunction {id!r}: {exc}") from exc
            scope_json = self.scope.to_json()
            if len(scope_json) > MAX_SCOPE_JSON:
                raise ConstructPropsError(
                    f"TableFunction {id!r}: the declared scope is {len(scope_json)} characters of JSON; "
                    f"at most {MAX_SCOPE_JSON} fit in the function's environment (Lambda allows 4 KB in all)"
                )
            access = None
        elif access is _UNSET:
            access = _DEFAULT_ACCESS
        if access not in ("read", "write", "read_write", None):
            raise ConstructPropsError(
                f"TableFunction {id!r}: access {access!r} must be 'read', 'write', 'read_write' or None"
            )
        #: The coarse grant without a declared scope (``"read"``, ``"write"``, ``"read_write"``), else None.
        self.access: str | None = access
        env = dict(environment or {})
        for reserved in (ENV_TABLE_NAME, ENV_MODEL_FINGERPRINT, ENV_CONTRACT_PARAMETER, ENV_ACCESS_SCOPE, ENV_REPLICA_REGIONS):
            if reserved in env:
                raise ConstructPropsError(f"TableFunction {id!r}: environment key {reserved!r} is set by the construct")
        what = f"TableFunction {id!r}"
        table.check_function_region(what, self)
        check_pinned_slice(what, table, self.scope)
        bindings = check_bindings(what, "counters", counters)
        with asset_errors():
            code = resolve_handler_code(entry=entry, index=index, function=handler, requirements=requirements,
                                        what=what)
        #: The user's code the asset ships: (asset-relative path, source file) pairs.
        self.handler_files: tuple[tuple[str, Path], ...] = code.files
        arch = architecture or lambda_.Architecture.ARM_64
        runtime, python_version = python_runtime(runtime, what)
        dependencies = None
        #: What pip installed for this function (None without requirements).
        self.dependencies: InstalledDependencies | None = None
        if code.requirements is not None:
            with asset_errors():
                wanted = read_requirements(code.requirements, what=what)
            for line in wanted.skipped:
                cdk.Annotations.of(self).add_warning_v2(
                    f"{defaults.ANNOTATION_PREFIX}:runtime-provided-requirement",
                    f"{what}: requirement {line!r} ({wanted.source}) is not bundled: the Lambda {python_version} "
                    "runtime provides boto3/botocore, and a function uses the runtime's copy",
                )
            if not wanted.empty:
                with asset_errors():
                    self.dependencies = install(wanted, architecture=arch.name, python_version=python_version,
                                                what=what)
                dependencies = self.dependencies.directory
                if self.dependencies.removed:
                    cdk.Annotations.of(self).add_warning_v2(
                        f"{defaults.ANNOTATION_PREFIX}:runtime-provided-requirement",
                        f"{what}: {', '.join(self.dependencies.removed)} (required by another dependency) not bundled: "
                        "the function uses the Lambda runtime's copy",
                    )
        #: The staged asset and which files are the runtime's, the handler's and the dependencies'.
        with asset_errors():
            self.bundle = bundling.bundle(
                table.model, code=code, dependencies=dependencies, what=what, python_version=python_version,
                contract_check=ENV_CONTRACT_PARAMETER in table.runtime_environment, traffic_insight=traffic_insight,
                recompute_counters=any(_recomputed(b) for b in bindings),
            )
        self.function, self.log_group = bundled_function(
            self,
            model=table.model,
            handler=code.handler,
            bundle=self.bundle,
            environment={
                ENV_TABLE_NAME: table.table_name, **table.runtime_environment,
                **({ENV_ACCESS_SCOPE: scope_json} if scope_json is not None else {}), **env,
            },
            memory_size=memory_size,
            timeout=timeout,
            architecture=arch,
            log_retention=log_retention,
            description=description,
            runtime=runtime,
        )
        if self.scope is not None:
            table.grant_scope(self.function, self.scope)
        elif access is not None:
            grant = {"read": table.grant_read_data, "write": table.grant_write_data,
                     "read_write": table.grant_read_write_data}
            grant[access](self.function)
        for binding in bindings:
            binding.bind(self.function)
        self.table = table



def _recomputed(binding: object) -> bool:
    """Whether a ``counters=`` entry is a family recomputed from its shards (its code must ship)."""
    spec = getattr(binding, "spec", None)
    return getattr(spec, "aggregation", None) == "recompute"
