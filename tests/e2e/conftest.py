"""The e2e modules each run on their own DynamoDB Local (tests/module_dynamodb_local.py)."""

from module_dynamodb_local import dynamodb_client, dynamodb_local, dynamodb_streams_client  # noqa: F401
