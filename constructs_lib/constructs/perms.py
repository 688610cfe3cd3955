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
#: A counter family's shard writes (UpdateItem ADD), and what idempotent increments add:
#: the dedup marker's Put inside TransactWriteItems (IAM authorizes each action of a
#: transaction as its single-item action) and the GetItem that explains a reused key.
COUNTER_INCREMENT = ("dynamodb:UpdateItem",)
COUNTER_IDEMPOTENT = ("dynamodb:PutItem", "dynamodb:GetItem")
COUNTER_READ = ("dynamodb:GetItem", "dynamodb:BatchGetItem")
#: The aggregator: read every shard, write the total.
COUNTER_AGGREGATE = ("dynamodb:BatchGetItem", "dynamodb:UpdateItem")
#: The audit function only adds records; readers query the history and the day index.
AUDIT_WRITE = ("dynamodb:PutItem", "dynamodb:BatchWriteItem")
AUDIT_READ = ("dynamodb:Query", "dynamodb:GetItem")
