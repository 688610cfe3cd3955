"""IAM action lists, one place for all constructs. No wildcard actions anywhere."""

from __future__ import annotations

DESCRIBE = ("dynamodb:DescribeTable",)
READ_DATA = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem")
WRITE_DATA = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")
STREAM_READ = ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator")
#: ListStreams cannot be scoped to a table ARN; AWS requires Resource "*" for it.
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
