"""A backfill checkpoint read back from DynamoDB Local: its JSON attributes (the Scan cursor and
the kept failures) are read with bounded nesting, and one that is not JSON is a BackfillError
naming the job, the segment and the attribute, never a bare ``RecursionError`` or decode error."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from constructs_lib.runtime.exceptions import BackfillError
from constructs_lib.runtime.jsontext import MAX_JSON_DEPTH
from constructs_lib.runtime.patterns.backfill import BackfillSpec, BackfillWorker
from examples.shop.model import shop_model

pytestmark = pytest.mark.integration
LIMIT = MAX_JSON_DEPTH


@pytest.fixture
def worker(dynamodb_client: Any) -> Iterator[BackfillWorker]:
    name = f"backfill-checkpoints-{os.getpid()}"
    dynamodb_client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}],
    )
    try:
        yield BackfillWorker(dynamodb_client, name, shop_model, BackfillSpec(job_id="reshape", segments=1))
    finally:
        dynamodb_client.delete_table(TableName=name)


def _store(worker: BackfillWorker, **attributes: str) -> None:
    key = worker.checkpoint_key(0)
    item = {**{k: {"S": v} for k, v in key.items()}, "segments": {"N": "1"},
            **{k: {"S": v} for k, v in attributes.items()}}
    worker.client.put_item(TableName=worker.table_name, Item=item)


def test_a_checkpoint_nested_to_the_limit_resumes(worker: BackfillWorker) -> None:
    # GIVEN a stored cursor nested exactly MAX_JSON_DEPTH levels
    cursor = json.dumps({"PK": {"S": "@"}}).replace('"@"', "[" * (LIMIT - 2) + "]" * (LIMIT - 2))
    _store(worker, cursor=cursor, failures="[]")
    # WHEN the segment is loaded THEN its cursor is the stored one
    assert worker.load(0).cursor == json.loads(cursor)


@pytest.mark.parametrize(("attribute", "text", "problem"), [
    ("cursor", '{"PK": ' + "[" * LIMIT + "]" * LIMIT + "}", f"nests arrays and objects more than {LIMIT} levels"),
    ("cursor", "[" * 4096 + "]" * 4096, f"nests arrays and objects more than {LIMIT} levels"),
    ("failures", "[{", "is not JSON"),
])
def test_a_checkpoint_that_cannot_be_read_is_a_backfill_error_naming_it(
    worker: BackfillWorker, attribute: str, text: str, problem: str,
) -> None:
    # GIVEN a checkpoint whose cursor or failures attribute is too deep or not JSON
    _store(worker, **{"cursor": '{"PK": {"S": "x"}}', "failures": "[]", attribute: text})
    # WHEN the segment is loaded THEN BackfillError names the job, the segment, the attribute and the problem
    with pytest.raises(BackfillError, match=rf"^backfill job 'reshape' segment 0 checkpoint attribute "
                                            rf"'{attribute}' {problem}"):
        worker.load(0)
