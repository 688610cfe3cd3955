"""constructs_lib: DynamoDB single-table design as AWS CDK constructs plus a matching runtime.

The CDK constructs (:class:`SingleTable`, :class:`TableFunction`, :class:`ShardedCounter`,
:class:`StreamAudit`) are imported lazily, so ``import constructs_lib.model`` /
``constructs_lib.runtime`` never loads the AWS CDK. They need the
``cdk`` extra (``pip install "constructs_lib[cdk]"``); without it, asking for one raises
:class:`~constructs_lib.constructs.exceptions.MissingExtraError` (an ``ImportError``) saying so.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"
"""The package's version (the `version` of its distribution metadata)."""

#: The public names, each with the module defining it: the one list ``__all__``, ``__getattr__`` and
#: the ``TYPE_CHECKING`` imports below follow (tests/unit/project/test_public_surface.py checks the last).
_LAZY = {
    # The constructs and their errors (need the cdk extra)
    "Backfill": "constructs_lib.constructs.backfill",
    "ConstructPropsError": "constructs_lib.constructs.exceptions",
    "ConstructsError": "constructs_lib.constructs.exceptions",
    "Hardening": "constructs_lib.constructs.hardening",
    "ImportedSingleTable": "constructs_lib.constructs.imported_table",
    "MissingExtraError": "constructs_lib.constructs.exceptions",
    "ModelBoundTable": "constructs_lib.constructs.bound_table",
    "ModelContract": "constructs_lib.constructs.model_contract",
    "OperationsSettings": "constructs_lib.constructs.operations",
    "Replica": "constructs_lib.constructs.replicas",
    "ShardedCounter": "constructs_lib.constructs.sharded_counter",
    "SingleTable": "constructs_lib.constructs.single_table",
    "StreamAudit": "constructs_lib.constructs.stream_audit",
    "TableFunction": "constructs_lib.constructs.table_function",
    # Declared access scopes (no CDK: the model's value, shared with the runtime)
    "ANY_TENANT": "constructs_lib.model.scope",
    "AccessScope": "constructs_lib.model.scope",
    "principal_tag": "constructs_lib.model.scope",
}

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:
    from .constructs.backfill import Backfill as Backfill
    from .constructs.bound_table import ModelBoundTable as ModelBoundTable
    from .constructs.exceptions import ConstructPropsError as ConstructPropsError
    from .constructs.exceptions import ConstructsError as ConstructsError
    from .constructs.exceptions import MissingExtraError as MissingExtraError
    from .constructs.hardening import Hardening as Hardening
    from .constructs.imported_table import ImportedSingleTable as ImportedSingleTable
    from .constructs.model_contract import ModelContract as ModelContract
    from .constructs.operations import OperationsSettings as OperationsSettings
    from .constructs.replicas import Replica as Replica
    from .constructs.sharded_counter import ShardedCounter as ShardedCounter
    from .constructs.single_table import SingleTable as SingleTable
    from .constructs.stream_audit import StreamAudit as StreamAudit
    from .constructs.table_function import TableFunction as TableFunction
    from .model.scope import ANY_TENANT as ANY_TENANT
    from .model.scope import AccessScope as AccessScope
    from .model.scope import principal_tag as principal_tag


#: Top-level modules of the ``cdk`` extra.
_CDK_MODULES = frozenset({"aws_cdk", "constructs", "jsii"})


#: Names this package exported before 0.2.0, importable from it until 1.0.0 with a DeprecationWarning:
#: name -> (the module defining it now, its name there, since, removed in). Not in ``__all__``.
_DEPRECATED = {
    "Operations": ("constructs_lib", "OperationsSettings", "0.2.0", "1.0.0"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY and name not in _DEPRECATED:
        raise AttributeError(f"module 'constructs_lib' has no attribute {name!r}")
    try:
        if name in _DEPRECATED:
            from .runtime import _deprecated

            return _deprecated.value(__name__, name, _DEPRECATED[name])
        module = import_module(_LAZY[name])
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _CDK_MODULES:
            raise
        from .constructs.exceptions import MissingExtraError

        raise MissingExtraError(
            f"constructs_lib.{name} needs the AWS CDK, which is not installed here (No module named "
            f"{exc.name!r}). Install the cdk extra: pip install \"constructs_lib[cdk]\"",
            name=exc.name,
        ) from exc
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
