"""constructs_lib: DynamoDB single-table design as AWS CDK constructs plus a matching runtime.

The CDK constructs (:class:`SingleTable`, :class:`TableFunction`, :class:`ShardedCounter`, :class:`StreamAudit`) are imported lazily, so
``import constructs_lib.model`` / ``constructs_lib.runtime`` never loads the AWS CDK.
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
    "Operations": "constructs_lib.operations",
    "Hardening": "constructs_lib.hardening",
    "ModelBoundTable": "constructs_lib.bound_table",
    "ImportedSingleTable": "constructs_lib.imported_table",
    "ModelContract": "constructs_lib.model_contract",
}

__all__ = ["ConstructPropsError", "Hardening", "ImportedSingleTable", "ModelBoundTable", "ModelContract", "Operations", "ShardedCounter", "SingleTable", "StreamAudit", "TableFunction", "__version__"]

if TYPE_CHECKING:
    from .bound_table import ModelBoundTable
    from .exceptions import ConstructPropsError
    from .hardening import Hardening
    from .imported_table import ImportedSingleTable
    from .model_contract import ModelContract
    from .operations import Operations
    from .sharded_counter import ShardedCounter
    from .single_table import SingleTable
    from .stream_audit import StreamAudit
    from .table_function import TableFunction


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'constructs_lib' has no attribute {name!r}")
