"""Runtime client: pure Python + boto3, bundled into generated Lambda functions.

Never imports the AWS CDK. Build keys and run entity operations from the same model the
table was synthesized from::

    from constructs_lib.runtime import TableClient
    table = TableClient.from_environment()          # inside a generated Lambda
    page = table.query("user orders newest first", user_id="u1", limit=20)

Exports what a handler uses (clients, condition builders, the errors a caller branches on);
the rest is imported from its module. Each name's module loads on first access (ADR 0047).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._exports import lazy_exports

#: The public surface: name -> the submodule defining it (docs/adr/0047-runtime-modules-by-concern.md).
EXPORTS = {
    # Clients and what they return
    "TableClient": "client",
    "Transaction": "transactions",
    "Page": "pages",
    "CounterClient": "patterns.counter.client",
    "CounterValue": "patterns.counter.client",
    "Increment": "patterns.counter.client",
    "AuditClient": "patterns.audit.client",
    "AuditPage": "patterns.audit.client",
    "AuditRecord": "patterns.audit.client",
    # Builders
    "Condition": "conditions",
    "Name": "conditions",
    "attr": "conditions",
    "size": "conditions",
    "new_ulid": "ulid",
    # Errors a caller catches
    "RuntimeClientError": "exceptions",
    "DynamoDBError": "exceptions",
    "ConditionFailedError": "exceptions",
    "ConditionNotMetError": "exceptions",
    "ItemExistsError": "exceptions",
    "ItemNotFoundError": "exceptions",
    "VersionConflictError": "exceptions",
    "TransactionCanceledError": "exceptions",
    "TransactionConditionNotMetError": "exceptions",
    "BatchIncompleteError": "exceptions",
    "IdempotencyKeyReusedError": "exceptions",
    "CursorError": "exceptions",
    "ItemValidationError": "exceptions",
    "KeyValueError": "exceptions",
    "TenantAccessError": "exceptions",
    # at cold start: the bundled model is not the one a typed module or a pinned contract expects
    "ModelMismatchError": "exceptions",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

if TYPE_CHECKING:
    from .client import TableClient as TableClient
    from .conditions import Condition as Condition
    from .conditions import Name as Name
    from .conditions import attr as attr
    from .conditions import size as size
    from .exceptions import BatchIncompleteError as BatchIncompleteError
    from .exceptions import ConditionFailedError as ConditionFailedError
    from .exceptions import ConditionNotMetError as ConditionNotMetError
    from .exceptions import CursorError as CursorError
    from .exceptions import DynamoDBError as DynamoDBError
    from .exceptions import IdempotencyKeyReusedError as IdempotencyKeyReusedError
    from .exceptions import ItemExistsError as ItemExistsError
    from .exceptions import ItemNotFoundError as ItemNotFoundError
    from .exceptions import ItemValidationError as ItemValidationError
    from .exceptions import KeyValueError as KeyValueError
    from .exceptions import ModelMismatchError as ModelMismatchError
    from .exceptions import RuntimeClientError as RuntimeClientError
    from .exceptions import TenantAccessError as TenantAccessError
    from .exceptions import TransactionCanceledError as TransactionCanceledError
    from .exceptions import TransactionConditionNotMetError as TransactionConditionNotMetError
    from .exceptions import VersionConflictError as VersionConflictError
    from .pages import Page as Page
    from .patterns.audit.client import AuditClient as AuditClient
    from .patterns.audit.client import AuditPage as AuditPage
    from .patterns.audit.client import AuditRecord as AuditRecord
    from .patterns.counter.client import CounterClient as CounterClient
    from .patterns.counter.client import CounterValue as CounterValue
    from .patterns.counter.client import Increment as Increment
    from .transactions import Transaction as Transaction
    from .ulid import new_ulid as new_ulid
