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

__version__ = "0.1.0"

_LAZY = {
    "Backfill": "constructs_lib.constructs.backfill",
    "ShardedCounter": "constructs_lib.constructs.sharded_counter",
    "SingleTable": "constructs_lib.constructs.single_table",
    "StreamAudit": "constructs_lib.constructs.stream_audit",
    "TableFunction": "constructs_lib.constructs.table_function",
    "ConstructPropsError": "constructs_lib.constructs.exceptions",
    "ConstructsError": "constructs_lib.constructs.exceptions",
    "MissingExtraError": "constructs_lib.constructs.exceptions",
    "Operations": "constructs_lib.constructs.operations",
    "Hardening": "constructs_lib.constructs.hardening",
    "ModelBoundTable": "constructs_lib.constructs.bound_table",
    "ImportedSingleTable": "constructs_lib.constructs.imported_table",
    "ModelContract": "constructs_lib.constructs.model_contract",
    # Declared access scopes (no CDK: the model's value, shared with the runtime)
    "AccessScope": "constructs_lib.model.scope",
    "ANY_TENANT": "constructs_lib.model.scope",
    "principal_tag": "constructs_lib.model.scope",
}

__all__ = [
    "ANY_TENANT", "AccessScope", "principal_tag",
    "Backfill", "ConstructPropsError", "ConstructsError", "Hardening", "ImportedSingleTable", "MissingExtraError",
    "ModelBoundTable", "ModelContract",
    "Operations", "ShardedCounter", "SingleTable", "StreamAudit", "TableFunction", "__version__",
]

if TYPE_CHECKING:
    from .constructs.backfill import Backfill
    from .constructs.bound_table import ModelBoundTable
    from .constructs.exceptions import ConstructPropsError, ConstructsError, MissingExtraError
    from .constructs.hardening import Hardening
    from .constructs.imported_table import ImportedSingleTable
    from .constructs.model_contract import ModelContract
    from .constructs.operations import Operations
    from .constructs.sharded_counter import ShardedCounter
    from .constructs.single_table import SingleTable
    from .constructs.stream_audit import StreamAudit
    from .constructs.table_function import TableFunction
    from .model.scope import ANY_TENANT, AccessScope, principal_tag


#: Top-level modules of the ``cdk`` extra.
_CDK_MODULES = frozenset({"aws_cdk", "constructs", "jsii"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        try:
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
    raise AttributeError(f"module 'constructs_lib' has no attribute {name!r}")
