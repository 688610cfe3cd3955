"""DynamoDB's service limits and the error codes that mean "slow down", defined once."""

from __future__ import annotations

#: Largest shard count a counter family may use (exact reads then take 10 BatchGetItem calls).
MAX_COUNTER_SHARDS = 1000
#: Write capacity one partition sustains per second (a write of up to :data:`WCU_BYTES` costs 1 WCU).
PARTITION_WCU = 1000
#: Read capacity one partition sustains per second.
PARTITION_RCU = 3000
#: Bytes one write capacity unit covers.
WCU_BYTES = 1024
#: BatchGetItem reads at most this many keys per call.
BATCH_GET_LIMIT = 100
#: BatchWriteItem takes at most this many items per call.
BATCH_WRITE_LIMIT = 25
#: TransactWriteItems takes at most this many actions.
TRANSACTION_LIMIT = 100
#: DynamoDB's item size limit.
MAX_ITEM_BYTES = 400 * 1024
#: Key size limits: partition key values 2,048 bytes, sort key values 1,024 bytes.
MAX_PK_BYTES, MAX_SK_BYTES = 2048, 1024
#: Attribute names (top level and inside maps) are 1 to 65,535 bytes of UTF-8.
MAX_NAME_BYTES = 65535
#: The limit on the length of any one expression string.
MAX_EXPRESSION_BYTES = 4096
#: Error codes that mean "slow down" (retried) rather than "this request is wrong".
THROTTLING_CODES = frozenset({"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"})

__all__ = [
    "BATCH_GET_LIMIT", "BATCH_WRITE_LIMIT", "MAX_COUNTER_SHARDS", "MAX_EXPRESSION_BYTES", "MAX_ITEM_BYTES",
    "MAX_NAME_BYTES", "MAX_PK_BYTES", "MAX_SK_BYTES", "PARTITION_RCU", "PARTITION_WCU", "THROTTLING_CODES",
    "TRANSACTION_LIMIT", "WCU_BYTES",
]
