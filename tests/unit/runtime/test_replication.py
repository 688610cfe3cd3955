"""Stamping writes with their region on a replicated table (``runtime/replication.py``).

A scripted stand-in for the boto3 client records every request (nothing here depends on the
table; what does — stamps on a real table, a concurrent write between stamp and delete — runs on
DynamoDB Local in ``tests/integration/test_replication_stamps.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from constructs_lib.model import Entity, Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.exceptions import ReplicatedDeleteError, SettingsError, UpdateRejectedError
from constructs_lib.runtime.replication import (
    DELETE_ATTEMPTS,
    DELETE_ATTRIBUTE,
    ORIGIN_ATTRIBUTE,
    Replication,
    add_to_clauses,
)

MODEL = Model("stamps", entities=[Entity("Note", pk="NOTE#{note_id}", sk="NOTE", fields=["note_id"])])
REP = Replication("eu-west-1", ("us-east-1", "eu-west-1"))
KEY = {"PK": {"S": "NOTE#n1"}, "SK": {"S": "NOTE"}}


class Scripted:
    """Answers each call from a script (a dict, or a callable raising) and records it."""

    def __init__(self, *answers: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, operation: str) -> Callable[..., dict[str, Any]]:
        def call(**params: Any) -> dict[str, Any]:
            self.calls.append((operation, params))
            return self.answers.pop(0)(params) if self.answers else {}
        return call


def ok(_: dict[str, Any]) -> dict[str, Any]:
    return {}


def condition_failed(item: dict[str, Any] | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def raise_(_: dict[str, Any]) -> dict[str, Any]:
        extra = {"Item": item} if item is not None else {}
        raise ClientError({"Error": {"Code": "ConditionalCheckFailedException", "Message": "failed"}, **extra}, "Op")
    return raise_


STORED = {**KEY, "_type": {"S": "Note"}, "note_id": {"S": "n1"}}


def client(script: Scripted, replication: Replication | None = REP) -> TableClient:
    return TableClient(MODEL, "notes", client=script, replication=replication)  # type: ignore[arg-type]


# Update expressions ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("expression", "expected"), [
    ("", "SET #rorigin = :rorigin REMOVE #rdel"),
    ("SET #n0 = :v0", "SET #n0 = :v0, #rorigin = :rorigin REMOVE #rdel"),
    ("SET #n0 = :v0, #n1 = :v1 REMOVE #n2", "SET #n0 = :v0, #n1 = :v1, #rorigin = :rorigin REMOVE #n2, #rdel"),
    ("ADD #n0 :v0", "ADD #n0 :v0 SET #rorigin = :rorigin REMOVE #rdel"),
    ("REMOVE #n0 SET #n1 = if_not_exists(#n1, :v1) ADD #n2 :v2",
     "REMOVE #n0, #rdel SET #n1 = if_not_exists(#n1, :v1), #rorigin = :rorigin ADD #n2 :v2"),
    ("SET #n0 = list_append(#n0, :v0) DELETE #n1 :v1",
     "SET #n0 = list_append(#n0, :v0), #rorigin = :rorigin DELETE #n1 :v1 REMOVE #rdel"),
])
def test_the_stamp_joins_the_existing_clauses(expression: str, expected: str) -> None:
    # GIVEN an update expression with SET/REMOVE/ADD/DELETE clauses and its own names and values
    names = {f"#n{i}": f"a{i}" for i in range(3)}
    values = {f":v{i}": {"S": str(i)} for i in range(3)}
    params = {"TableName": "t", "Key": KEY, "UpdateExpression": expression,
              "ExpressionAttributeNames": dict(names), "ExpressionAttributeValues": dict(values)}
    # WHEN it is stamped
    out = REP.stamp_update(params)
    # THEN each keyword appears once, the stamp inside its clause, and the caller's names and values are kept
    assert out["UpdateExpression"] == expected
    assert out["ExpressionAttributeNames"] == {**names, "#rorigin": ORIGIN_ATTRIBUTE, "#rdel": DELETE_ATTRIBUTE}
    assert out["ExpressionAttributeValues"] == {**values, ":rorigin": {"S": "eu-west-1"}}
    # AND the input was not modified
    assert params["ExpressionAttributeNames"] == names and params["UpdateExpression"] == expression


def test_add_to_clauses_keeps_the_order_of_first_appearance() -> None:
    assert add_to_clauses("ADD #a :a SET #b = :b", {"SET": "#c = :c"}) == "ADD #a :a SET #b = :b, #c = :c"


@pytest.mark.parametrize("attribute", [ORIGIN_ATTRIBUTE, DELETE_ATTRIBUTE])
@pytest.mark.parametrize("clause", ["SET #n0 = :v0", "REMOVE #n0", "ADD #n0 :v0"])
def test_an_update_writing_a_stamp_attribute_itself_is_refused(attribute: str, clause: str) -> None:
    # GIVEN an update whose own expression writes a stamp attribute
    params = {"TableName": "t", "Key": KEY, "UpdateExpression": clause,
              "ExpressionAttributeNames": {"#n0": attribute}, "ExpressionAttributeValues": {":v0": {"S": "x"}}}
    # WHEN it is stamped THEN it is refused, naming the attribute and the rule
    with pytest.raises(UpdateRejectedError, match=rf"writes \['{attribute}'\] on a table replicated to us-east-1, "
                                                   r"eu-west-1: .* only the client sets them"):
        REP.stamp_update(params)


def test_an_update_may_read_a_stamp_in_its_condition() -> None:
    # GIVEN an update conditioned on the item having been written in this region
    script = Scripted(lambda p: {"Attributes": {**STORED, "title": {"S": "t"}}})
    from constructs_lib.runtime import attr

    client(script).update("Note", {"note_id": "n1"}, set={"title": "t"},
                          condition=attr(ORIGIN_ATTRIBUTE) == "eu-west-1")
    # THEN the update is sent, stamped, with the caller's condition on the stamp
    (_, params), = script.calls
    assert ORIGIN_ATTRIBUTE in params["ExpressionAttributeNames"].values()
    assert "#rorigin = :rorigin" in params["UpdateExpression"]


def test_a_put_overwrites_the_stamps_of_the_item_it_is_given() -> None:
    # GIVEN an item read back (stamped by another region, mid-delete leftovers included) and put again
    script = Scripted()
    client(script).put("Note", {"note_id": "n1", ORIGIN_ATTRIBUTE: "us-east-1", DELETE_ATTRIBUTE: "us-east-1#x"})
    # THEN the new write names this region and carries no delete stamp
    (operation, params), = script.calls
    assert operation == "put_item"
    assert params["Item"][ORIGIN_ATTRIBUTE] == {"S": "eu-west-1"} and DELETE_ATTRIBUTE not in params["Item"]


# Deletes ---------------------------------------------------------------------------------------------------
def test_a_delete_stamps_then_deletes_while_its_token_is_there() -> None:
    script = Scripted(ok, lambda p: {"Attributes": STORED})
    assert client(script).delete("Note", {"note_id": "n1"}) is not None
    (stamp_op, stamp), (delete_op, delete) = script.calls
    assert (stamp_op, delete_op) == ("update_item", "delete_item")
    token = stamp["ExpressionAttributeValues"][":rdel"]["S"]
    assert token.startswith("eu-west-1#") and stamp["UpdateExpression"] == "SET #rdel = :rdel"
    assert stamp["ConditionExpression"] == "attribute_exists(#rpk)"
    assert delete["ConditionExpression"] == "#rdel = :rdel" and delete["ExpressionAttributeValues"][":rdel"]["S"] == token


def test_a_concurrent_write_between_stamp_and_delete_is_retried_with_a_new_token() -> None:
    # GIVEN a write replacing the stamp once (the delete's condition fails, the item is there)
    script = Scripted(ok, condition_failed(STORED), ok, lambda p: {"Attributes": STORED})
    # WHEN deleted THEN it stamps again and deletes; two different tokens were used
    assert client(script).delete("Note", {"note_id": "n1"}) is not None
    ops = [op for op, _ in script.calls]
    assert ops == ["update_item", "delete_item", "update_item", "delete_item"]
    tokens = {p["ExpressionAttributeValues"][":rdel"]["S"] for op, p in script.calls if op == "update_item"}
    assert len(tokens) == 2


def test_the_retry_is_bounded_then_a_typed_error_and_nothing_deleted() -> None:
    # GIVEN writes replacing the stamp in every round
    script = Scripted(*[f for _ in range(DELETE_ATTEMPTS) for f in (ok, condition_failed(STORED))])
    # WHEN deleted THEN ReplicatedDeleteError after DELETE_ATTEMPTS rounds, naming the key, region and rule
    with pytest.raises(ReplicatedDeleteError, match=r"in region 'eu-west-1': other writes replaced the delete stamp "
                                                     rf"{DELETE_ATTEMPTS} times in a row .*nothing was deleted"):
        client(script).delete("Note", {"note_id": "n1"})
    assert len(script.calls) == 2 * DELETE_ATTEMPTS


def test_a_delete_of_an_absent_item_is_sent_as_asked() -> None:
    # GIVEN no item: the stamp's attribute_exists fails with no stored item
    script = Scripted(condition_failed(None), ok)
    assert client(script).delete("Note", {"note_id": "n1"}) is None
    assert [op for op, _ in script.calls] == ["update_item", "delete_item"]
    assert "ConditionExpression" not in script.calls[1][1]


# Refusals --------------------------------------------------------------------------------------------------
def test_batch_deletes_are_refused_on_a_replicated_table_before_any_call() -> None:
    script = Scripted()
    with pytest.raises(UpdateRejectedError, match=r"batch_write: 1 delete\(s\) on a table replicated to us-east-1, "
                                                   r"eu-west-1; a batch delete cannot name its region"):
        client(script).batch_write(puts=[("Note", {"note_id": "n2"})], deletes=[("Note", {"note_id": "n1"})])
    assert script.calls == []


def test_transaction_deletes_are_refused_on_a_replicated_table_before_any_call() -> None:
    script = Scripted()
    with pytest.raises(UpdateRejectedError, match=r"transaction delete of Note .* a delete inside a transaction "
                                                   r"cannot name its region"):
        with client(script).transaction() as t:
            t.delete("Note", {"note_id": "n1"})
    assert script.calls == []


def test_batch_and_transaction_puts_are_stamped() -> None:
    script = Scripted()
    table = client(script)
    table.batch_write(puts=[("Note", {"note_id": "n2"})])
    with table.transaction() as t:
        t.put("Note", {"note_id": "n3"})
        t.update("Note", {"note_id": "n4"}, set={"title": "x"})
    batch, transaction = script.calls[0][1], script.calls[1][1]
    assert batch["RequestItems"]["notes"][0]["PutRequest"]["Item"][ORIGIN_ATTRIBUTE] == {"S": "eu-west-1"}
    put, update = transaction["TransactItems"]
    assert put["Put"]["Item"][ORIGIN_ATTRIBUTE] == {"S": "eu-west-1"}
    assert "#rorigin = :rorigin" in update["Update"]["UpdateExpression"]


# Single region ---------------------------------------------------------------------------------------------
def test_a_single_region_table_sends_exactly_the_unstamped_requests() -> None:
    # GIVEN the same writes through a client without replication and one with it
    def run(replication: Replication | None) -> list[tuple[str, dict[str, Any]]]:
        script = Scripted(ok, ok, lambda p: {"Attributes": STORED}, ok, ok)
        table = client(script, replication)
        table.put("Note", {"note_id": "n1", "title": "a"})
        table.update("Note", {"note_id": "n1"}, set={"title": "b"}, add={"n": 1})
        table.delete("Note", {"note_id": "n1"})
        table.batch_write(deletes=[("Note", {"note_id": "n2"})]) if replication is None else None
        return script.calls

    plain = run(None)
    # THEN the single-region requests name no stamp attribute at all
    text = json.dumps(plain, sort_keys=True, default=str)
    for name in (ORIGIN_ATTRIBUTE, DELETE_ATTRIBUTE, "#rorigin", "#rdel", ":rorigin"):
        assert name not in text
    assert [op for op, _ in plain] == ["put_item", "update_item", "delete_item", "batch_write_item"]
    # AND they are byte for byte the replicated requests with the stamps taken out
    stamped = run(REP)
    put_plain, put_stamped = plain[0][1], stamped[0][1]
    assert json.dumps(put_plain, sort_keys=True) == json.dumps(
        {**put_stamped, "Item": {k: v for k, v in put_stamped["Item"].items() if k != ORIGIN_ATTRIBUTE}}, sort_keys=True)
    upd_plain, upd_stamped = plain[1][1], stamped[1][1]
    assert REP.stamp_update(upd_plain) == upd_stamped
    assert plain[2][1] == {"TableName": "notes", "Key": KEY, "ReturnValues": "ALL_OLD"}  # one plain DeleteItem


def test_replication_settings_are_checked() -> None:
    with pytest.raises(SettingsError, match="region 'ap-south-1' is not a replica region"):
        Replication("ap-south-1", ("us-east-1", "eu-west-1"))
    with pytest.raises(SettingsError, match="two or more distinct regions"):
        Replication("us-east-1", ("us-east-1",))
    assert Replication.from_environment({}) is None
    with pytest.raises(SettingsError, match="AWS_REGION is not set"):
        Replication.from_environment({"CONSTRUCTS_LIB_REPLICA_REGIONS": "us-east-1,eu-west-1"})
