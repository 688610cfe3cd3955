"""A fresh DynamoDB Local per test module, for the directories whose modules write and stream
the most (tests/e2e, tests/examples; their conftest.py imports these fixtures).

DynamoDB Local slows down as a server accumulates stream records, even of deleted tables; a
scenario that needs 4.5 s of server CPU on a fresh server needs 27 s after 20,000 records of
other tables. A server costs ~1 s to start, so these modules get their own
(docs/adr/0033-test-suite-speed.md). Same names as the plugin's fixtures, which they override.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from constructs_lib.testing import DynamoDBLocal


@pytest.fixture(scope="module")
def dynamodb_local(pytestconfig: pytest.Config) -> Iterator[DynamoDBLocal]:
    """A DynamoDB Local for this module only, started like the plugin's session server."""
    from constructs_lib.testing.dynamodb_local import TEST_JVM_ARGS

    with DynamoDBLocal(jar_dir=pytestconfig.getoption("--dynamodb-local-dir"), jvm_args=TEST_JVM_ARGS) as server:
        yield server


@pytest.fixture(scope="module")
def dynamodb_client(dynamodb_local: DynamoDBLocal) -> Any:
    return dynamodb_local.client()


@pytest.fixture(scope="module")
def dynamodb_streams_client(dynamodb_local: DynamoDBLocal) -> Any:
    return dynamodb_local.streams_client()
