"""Runtime client: pure Python + boto3, bundled into generated Lambda functions.

Never imports the AWS CDK. Build keys and run entity operations from the same model the
table was synthesized from::

    from constructs_lib.runtime import TableClient
    table = TableClient.from_environment()          # inside a generated Lambda
    page = table.query("user orders newest first", user_id="u1", limit=20)

Importing the package is cheap: the exceptions are loaded with it, everything else on first
attribute access, so a cold start runs only the modules its handler uses.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .exceptions import (
    BatchIncompleteError,
    ConditionFailedError,
    ConditionNotMetError,
    ContractBreakError,
    ContractUnavailableError,
    CursorError,
    DynamoDBError,
    ForeignItemError,
    IdempotencyKeyReusedError,
    IdempotencyTokenConflictError,
    ImageOmittedError,
    IndexNotReadyError,
    InvalidConditionError,
    ItemExistsError,
    ItemNotFoundError,
    ItemValidationError,
    KeyValueError,
    ModelMismatchError,
    OutOfScopeError,
    RedactionError,
    RuntimeClientError,
    SettingsError,
    TenantAccessError,
    TrafficInsightError,
    TransactionCanceledError,
    TransactionConditionNotMetError,
    UnknownAccessPatternError,
    UnknownAttributeError,
    UnknownFieldError,
    UpdateRejectedError,
    VersionConflictError,
)

if TYPE_CHECKING:
    from .buckets import (
        bucket,
        bucket_range,
    )
    from .client import (
        ENV_TABLE_NAME,
        Page,
        TableClient,
        Transaction,
    )
    from .codec import (
        escape,
        unescape,
    )
    from .conditions import (
        Condition,
        Name,
        attr,
        size,
    )
    from .contract import (
        ENV_CONTRACT_PARAMETER,
        ENV_MODEL_FINGERPRINT,
        ENV_MODEL_PATH,
        MODEL_FILE,
        fingerprint,
        load_bundled_model,
    )
    from .keys import (
        composite_key,
        entity_key,
        split_composite_key,
    )
    from .patterns.audit import (
        AuditClient,
        AuditPage,
        AuditRecord,
        AuditSpec,
    )
    from .patterns.counter import (
        CounterClient,
        CounterSpec,
        CounterValue,
        Increment,
        ShardSizing,
        derive_shards,
    )
    from .scope import ENV_ACCESS_SCOPE
    from .stats import (
        Finding,
        RecordingClient,
        TrafficRecord,
        TrafficRecorder,
        TrafficReport,
    )
    from .ttl import (
        epoch_seconds,
        expiry,
    )
    from .ulid import (
        is_ulid,
        new_ulid,
        ulid_timestamp,
    )
    from .versions import (
        AT,
        HASH_V,
        SortKeyVersions,
    )

#: Public name -> the submodule defining it (loaded on first access).
_LAZY = {
    "AuditClient": "patterns.audit",
    "AuditPage": "patterns.audit",
    "AuditRecord": "patterns.audit",
    "AuditSpec": "patterns.audit",
    "bucket": "buckets",
    "bucket_range": "buckets",
    "ENV_MODEL_PATH": "contract",
    "ENV_TABLE_NAME": "client",
    "MODEL_FILE": "contract",
    "Page": "client",
    "TableClient": "client",
    "Transaction": "client",
    "load_bundled_model": "contract",
    "ENV_MODEL_FINGERPRINT": "contract",
    "ENV_CONTRACT_PARAMETER": "contract",
    "fingerprint": "contract",
    "Condition": "conditions",
    "Name": "conditions",
    "attr": "conditions",
    "size": "conditions",
    "escape": "codec",
    "unescape": "codec",
    "CounterClient": "patterns.counter",
    "CounterSpec": "patterns.counter",
    "CounterValue": "patterns.counter",
    "Increment": "patterns.counter",
    "ShardSizing": "patterns.counter",
    "derive_shards": "patterns.counter",
    "ENV_ACCESS_SCOPE": "scope",
    "composite_key": "keys",
    "entity_key": "keys",
    "split_composite_key": "keys",
    "Finding": "stats",
    "RecordingClient": "stats",
    "TrafficRecord": "stats",
    "TrafficRecorder": "stats",
    "TrafficReport": "stats",
    "epoch_seconds": "ttl",
    "expiry": "ttl",
    "is_ulid": "ulid",
    "new_ulid": "ulid",
    "ulid_timestamp": "ulid",
    "AT": "versions",
    "HASH_V": "versions",
    "SortKeyVersions": "versions",
}

__all__ = [
    "AT",
    "ENV_ACCESS_SCOPE",
    "ENV_MODEL_FINGERPRINT",
    "ENV_MODEL_PATH",
    "ENV_TABLE_NAME",
    "HASH_V",
    "MODEL_FILE",
    "AuditClient",
    "AuditPage",
    "AuditRecord",
    "AuditSpec",
    "BatchIncompleteError",
    "Condition",
    "ConditionFailedError",
    "ConditionNotMetError",
    "CounterClient",
    "CounterSpec",
    "CounterValue",
    "CursorError",
    "DynamoDBError",
    "Finding",
    "IdempotencyKeyReusedError",
    "IdempotencyTokenConflictError",
    "ImageOmittedError",
    "Increment",
    "ItemExistsError",
    "ItemNotFoundError",
    "ItemValidationError",
    "KeyValueError",
    "IndexNotReadyError",
    "ForeignItemError",
    "InvalidConditionError",
    "ModelMismatchError",
    "ContractBreakError",
    "ContractUnavailableError",
    "ENV_CONTRACT_PARAMETER",
    "Name",
    "OutOfScopeError",
    "Page",
    "RecordingClient",
    "RedactionError",
    "RuntimeClientError",
    "SettingsError",
    "ShardSizing",
    "SortKeyVersions",
    "TableClient",
    "TenantAccessError",
    "TrafficInsightError",
    "TrafficRecord",
    "TrafficRecorder",
    "TrafficReport",
    "Transaction",
    "TransactionCanceledError",
    "TransactionConditionNotMetError",
    "UnknownAccessPatternError",
    "UnknownAttributeError",
    "UnknownFieldError",
    "UpdateRejectedError",
    "VersionConflictError",
    "attr",
    "bucket",
    "bucket_range",
    "composite_key",
    "derive_shards",
    "entity_key",
    "epoch_seconds",
    "escape",
    "expiry",
    "fingerprint",
    "is_ulid",
    "load_bundled_model",
    "new_ulid",
    "size",
    "split_composite_key",
    "ulid_timestamp",
    "unescape",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'constructs_lib.runtime' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
