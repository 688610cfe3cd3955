"""constructs_lib: DynamoDB single-table design as AWS CDK constructs plus a matching runtime.

The CDK constructs (:class:`SingleTable`, :class:`TableFunction`, :class:`ShardedCounter`, :class:`StreamAudit`) are imported lazily, so
``import constructs_lib.model`` / ``constructs_lib.runtime`` never loads the AWS CDK. They need the
``cdk`` extra (``pip install "constructs_lib[cdk]"``); without it, asking for one raises
:class:`~constructs_lib.exceptions.MissingExtraError` (an ``ImportError``) saying so.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "ShardedCounter": "constructs_lib.sharded_counter",
    "SingleTable": "constructs_lib.single_table",
    "StreamAudit": "constructs_lib.stream_audit",
    "TableFunction": "constructs_lib.table_function",
    "ConstructPropsError": "constructs_lib.exceptions",
    "MissingExtraError": "constructs_lib.exceptions",
    "Operations": "constructs_lib.operations",
    "Hardening": "constructs_lib.hardening",
    "ModelBoundTable": "constructs_lib.bound_table",
    "ImportedSingleTable": "constructs_lib.imported_table",
    "ModelContract": "constructs_lib.model_contract",
}

__all__ = [
    "ConstructPropsError", "Hardening", "ImportedSingleTable", "MissingExtraError", "ModelBoundTable", "ModelContract",
    "Operations", "ShardedCounter", "SingleTable", "StreamAudit", "TableFunction", "__version__",
]

if TYPE_CHECKING:
    from .bound_table import ModelBoundTable
    from .exceptions import ConstructPropsError, MissingExtraError
    from .hardening import Hardening
    from .imported_table import ImportedSingleTable
    from .model_contract import ModelContract
    from .operations import Operations
    from .sharded_counter import ShardedCounter
    from .single_table import SingleTable
    from .stream_audit import StreamAudit
    from .table_function import TableFunction


#: Top-level modules of the ``cdk`` extra.
_CDK_MODULES = frozenset({"aws_cdk", "constructs", "jsii"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        try:
            module = import_module(_LAZY[name])
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] not in _CDK_MODULES:
                raise
            from .exceptions import MissingExtraError

            raise MissingExtraError(
                f"constructs_lib.{name} needs the AWS CDK, which is not installed here (No module named "
                f"{exc.name!r}). Install the cdk extra: pip install \"constructs_lib[cdk]\"",
                name=exc.name,
            ) from exc
        return getattr(module, name)
    raise AttributeError(f"module 'constructs_lib' has no attribute {name!r}")
