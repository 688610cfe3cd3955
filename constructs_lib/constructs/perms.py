"""IAM action lists, one place for all constructs. No wildcard actions anywhere."""

from __future__ import annotations

DESCRIBE = ("dynamodb:DescribeTable",)
READ_DATA = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem")
WRITE_DATA = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")
STREAM_READ = ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator")
#: Granted on the stream ARN too, as in AWS's example policy for stream-triggered functions.
LIST_STREAMS = ("dynamodb:ListStreams",)
KMS_DECRYPT = ("kms:Decrypt", "kms:DescribeKey")
KMS_ENCRYPT_DECRYPT = (
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
)
#: A counter family's shard writes (UpdateItem ADD), and what idempotent increments add: the
#: conditional PutItem of the increment item (stream layout) or of the dedup marker inside
#: TransactWriteItems (recompute layout; IAM authorizes each action of a transaction as its
#: single-item action), and the GetItem that explains a reused key.
COUNTER_INCREMENT = ("dynamodb:UpdateItem",)
COUNTER_IDEMPOTENT = ("dynamodb:PutItem", "dynamodb:GetItem")
COUNTER_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem")
#: The aggregator of a recomputed family: read every shard, write the total.
COUNTER_AGGREGATE = ("dynamodb:BatchGetItem", "dynamodb:UpdateItem")
#: The aggregator of a family aggregated from the stream: guarded writes of the totals, and the
#: reads of a fold (a recompute-layout total read, its SHARD items batch-read once).
COUNTER_AGGREGATE_DELTAS = ("dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:UpdateItem")
#: Re-driving the aggregator's failure queue: read a message, delete it once its range is applied
#: (a message left undeleted shows again after the queue's visibility timeout).
COUNTER_REDRIVE_QUEUE = ("sqs:DeleteMessage", "sqs:ReceiveMessage")
#: With a customer-managed queue key: what SQS needs of a consumer of an encrypted queue.
COUNTER_REDRIVE_KMS = ("kms:Decrypt",)
#: The audit function only adds records; readers query the history and the day index.
AUDIT_WRITE = ("dynamodb:PutItem", "dynamodb:BatchWriteItem")
AUDIT_READ = ("dynamodb:Query", "dynamodb:GetItem")
