"""Region stamps on a real table (DynamoDB Local): what the stored item holds after stamped puts,
updates with their own SET/REMOVE/ADD clauses, and deletes racing another write between the stamp
and the delete (``runtime/replication.py``; unit tests of the requests: tests/unit/runtime/test_replication.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from constructs_lib.model import Entity, Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.exceptions import ReplicatedDeleteError
from constructs_lib.runtime.replication import DELETE_ATTEMPTS, DELETE_ATTRIBUTE, ORIGIN_ATTRIBUTE, Replication

pytestmark = pytest.mark.integration

MODEL = Model("stamped", entities=[Entity("Note", pk="NOTE#{note_id}", sk="NOTE", fields=["note_id"])])
KEY = {"PK": {"S": "NOTE#n1"}, "SK": {"S": "NOTE"}}
EU = Replication("eu-west-1", ("us-east-1", "eu-west-1"))


class Racing:
    """A boto3 client whose ``delete_item`` is preceded, ``races`` times, by another writer's put of
    the item without the delete stamp (a replicated write landing between stamp and delete)."""

    def __init__(self, client: Any, table: str, races: int) -> None:
        self._client, self._table, self.races, self.deletes = client, table, races, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def delete_item(self, **params: Any) -> Any:
        self.deletes += 1
        if self.races > 0:
            self.races -= 1
            self._client.put_item(TableName=self._table, Item={**KEY, "_type": {"S": "Note"}, "note_id": {"S": "n1"},
                                                               "title": {"S": f"other {self.races}"},
                                                               ORIGIN_ATTRIBUTE: {"S": "us-east-1"}})
        return self._client.delete_item(**params)


@pytest.fixture
def table_name(local_deploy: Callable[..., Any], synth_table_template: Callable[..., dict[str, Any]]) -> str:
    deployment = local_deploy(synth_table_template(MODEL), name_prefix="stamps-")
    (name,) = deployment.tables.values()
    return str(name)


def stored(dynamodb_client: Any, table_name: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = dynamodb_client.get_item(TableName=table_name, Key=KEY, ConsistentRead=True).get("Item")
    return item


def test_updates_with_their_own_clauses_store_the_stamp_and_clear_a_delete_stamp(
    dynamodb_client: Any, table_name: str,
) -> None:
    # GIVEN an item left with a delete stamp (a delete that lost its race elsewhere)
    table = TableClient(MODEL, table_name, client=dynamodb_client, replication=EU)
    table.put("Note", {"note_id": "n1", "title": "a", "tags": "x", "n": 1})
    dynamodb_client.update_item(TableName=table_name, Key=KEY, UpdateExpression="SET #d = :d",
                                ExpressionAttributeNames={"#d": DELETE_ATTRIBUTE},
                                ExpressionAttributeValues={":d": {"S": "us-east-1#t"}})
    # WHEN an update with SET, REMOVE and ADD clauses runs in eu-west-1
    out = table.update("Note", {"note_id": "n1"}, set={"title": "b"}, remove=["tags"], add={"n": 2})
    # THEN DynamoDB applied every clause, the origin is eu-west-1 and the delete stamp is gone
    item = stored(dynamodb_client, table_name)
    assert item is not None
    assert (item["title"], item["n"], item[ORIGIN_ATTRIBUTE]) == ({"S": "b"}, {"N": "3"}, {"S": "eu-west-1"})
    assert "tags" not in item and DELETE_ATTRIBUTE not in item
    assert out["title"] == "b"


def test_a_write_between_stamp_and_delete_is_retried_and_the_item_deleted(dynamodb_client: Any, table_name: str) -> None:
    # GIVEN a stored note and another writer replacing it once between the stamp and the delete
    TableClient(MODEL, table_name, client=dynamodb_client).put("Note", {"note_id": "n1", "title": "a"})
    racing = Racing(dynamodb_client, table_name, races=1)
    table = TableClient(MODEL, table_name, client=racing, replication=EU)
    # WHEN it is deleted in eu-west-1
    deleted = table.delete("Note", {"note_id": "n1"})
    # THEN the first round lost to the other write, the second deleted the item (returning what it removed)
    assert racing.deletes == 2
    assert stored(dynamodb_client, table_name) is None
    assert deleted is not None and deleted["title"] == "other 0" and deleted[DELETE_ATTRIBUTE].startswith("eu-west-1#")


def test_a_delete_losing_every_round_raises_and_leaves_the_item(dynamodb_client: Any, table_name: str) -> None:
    # GIVEN another writer replacing the item in every round
    TableClient(MODEL, table_name, client=dynamodb_client).put("Note", {"note_id": "n1", "title": "a"})
    racing = Racing(dynamodb_client, table_name, races=DELETE_ATTEMPTS)
    table = TableClient(MODEL, table_name, client=racing, replication=EU)
    # WHEN deleted THEN a typed error after DELETE_ATTEMPTS rounds, and the other writer's item is still there
    with pytest.raises(ReplicatedDeleteError, match=f"replaced the delete stamp {DELETE_ATTEMPTS} times"):
        table.delete("Note", {"note_id": "n1"})
    assert racing.deletes == DELETE_ATTEMPTS
    item = stored(dynamodb_client, table_name)
    assert item is not None and item["title"] == {"S": "other 0"} and DELETE_ATTRIBUTE not in item
