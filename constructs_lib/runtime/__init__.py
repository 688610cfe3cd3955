"""Runtime client: pure Python + boto3, bundled into generated Lambda functions.

Never imports the AWS CDK. Build keys and run entity operations from the same model the
table was synthesized from::

    from constructs_lib.runtime import TableClient
    table = TableClient.from_environment()          # inside a generated Lambda
    table.put("Order", {"user_id": "u1", "order_id": new_ulid(), ...})
    page = table.query("user orders newest first", user_id="u1", limit=20)
"""

from __future__ import annotations

from .audit import AuditClient, AuditPage, AuditRecord, AuditSpec
from .buckets import bucket, bucket_range
from .client import (
    ENV_MODEL_PATH,
    ENV_TABLE_NAME,
    MODEL_FILE,
    Page,
    TableClient,
    Transaction,
    load_bundled_model,
)
from .codec import escape, unescape
from .counter import (
    CounterClient,
    CounterSpec,
    CounterValue,
    Increment,
    ShardSizing,
    derive_shards,
)
from .exceptions import (
    BatchIncompleteError,
    ConditionFailedError,
    CursorError,
    DynamoDBError,
    IdempotencyKeyReusedError,
    ImageOmittedError,
    ItemExistsError,
    ItemNotFoundError,
    ItemValidationError,
    KeyValueError,
    RedactionError,
    RuntimeClientError,
    TenantAccessError,
    TrafficInsightError,
    TransactionCanceledError,
    UnknownAccessPatternError,
    UpdateRejectedError,
    VersionConflictError,
)
from .keys import composite_key, entity_key, split_composite_key
from .stats import (
    Finding,
    RecordingClient,
    TrafficRecord,
    TrafficRecorder,
    TrafficReport,
)
from .ttl import epoch_seconds, expiry
from .ulid import is_ulid, new_ulid, ulid_timestamp
from .versions import AT, HASH_V, SortKeyVersions

__all__ = [
    "AT",
    "ENV_MODEL_PATH",
    "ENV_TABLE_NAME",
    "HASH_V",
    "MODEL_FILE",
    "AuditClient",
    "AuditPage",
    "AuditRecord",
    "AuditSpec",
    "BatchIncompleteError",
    "ConditionFailedError",
    "CounterClient",
    "CounterSpec",
    "CounterValue",
    "CursorError",
    "DynamoDBError",
    "Finding",
    "IdempotencyKeyReusedError",
    "ImageOmittedError",
    "Increment",
    "ItemExistsError",
    "ItemNotFoundError",
    "ItemValidationError",
    "KeyValueError",
    "Page",
    "RecordingClient",
    "RedactionError",
    "RuntimeClientError",
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
    "UnknownAccessPatternError",
    "UpdateRejectedError",
    "VersionConflictError",
    "bucket",
    "bucket_range",
    "composite_key",
    "derive_shards",
    "entity_key",
    "epoch_seconds",
    "escape",
    "expiry",
    "is_ulid",
    "load_bundled_model",
    "new_ulid",
    "split_composite_key",
    "ulid_timestamp",
    "unescape",
]
