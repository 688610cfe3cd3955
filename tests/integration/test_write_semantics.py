"""Write and read semantics at the edges, on DynamoDB Local, on a table created from the
synthesized template: every way a derived key's input can change, unknown names, upserts,
batch validation, versions that never go back, attribute names, cursors, traffic recording
and binary values. Calls that must be refused are checked to send nothing to DynamoDB."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from request_count import Calls

from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model
from constructs_lib.runtime import (
    CursorError,
    ItemNotFoundError,
    ItemValidationError,
    KeyValueError,
    TableClient,
    VersionConflictError,
)
from constructs_lib.runtime.exceptions import UnknownFieldError, UpdateRejectedError
from constructs_lib.runtime.stats import TrafficRecorder
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

UTC = UTC

MODEL = Model(
    "semantics",
    entities=[
        Entity(
            "User", pk="USER#{user_id}", sk="PROFILE", fields=["user_id", "region", "team"],
            indexes={
                "ByRegionTeam": IndexKey(pk="RT#{region}#{team}", sk="USER#{user_id}"),
                "Flagged": IndexKey(pk="FLAGGED", sk="USER#{user_id}", when_present="flag"),
            },
            version_attribute="version",
        ),
        Entity("Doc", pk="DOC#{doc_id}", sk="META", fields=["doc_id"], required=["title"]),
        Entity("Reading", pk="SENSOR#{sensor_id}#{ts:month}", sk="AT#{ts}",
               fields={"sensor_id": "string", "ts": "timestamp"}),
    ],
    indexes=[Index("ByRegionTeam"), Index("Flagged", projection="KEYS_ONLY")],
    access_patterns=[
        AccessPattern("users by region and team", entity="User", index="ByRegionTeam"),
        AccessPattern("flagged users", entity="User", index="Flagged"),
        AccessPattern("user profile", entity="User", sk="="),
        AccessPattern("doc", entity="Doc", sk="="),
        AccessPattern("readings in a range", entity="Reading", sk="between"),
    ],
)


@pytest.fixture(scope="module")
def template(synth_table_template: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    return synth_table_template(MODEL)


@pytest.fixture
def table(template: dict[str, Any], local_deploy: Callable[..., LocalDeployment], dynamodb_client: Any) -> TableClient:
    (name,) = local_deploy(template, name_prefix="semantics-").tables.values()
    return TableClient(MODEL, name, client=dynamodb_client)


@pytest.fixture
def calls(dynamodb_client: Any) -> Iterator[Calls]:
    counter = Calls(dynamodb_client)
    yield counter
    counter.close()


def names(page: Any) -> list[str]:
    return [item["user_id"] for item in page]


def refused(calls: Calls, error: type[Exception], match: str, call: Callable[[], Any]) -> None:
    """THEN the call raises the typed error naming the value, and sends nothing."""
    before = calls.count
    with pytest.raises(error, match=match):
        call()
    assert calls.count == before, "a refused call reached DynamoDB"


# 1. Every way a derived key's input can change --------------------------------------------------------
def test_add_on_a_presence_input_puts_the_item_in_the_sparse_index(table: TableClient) -> None:
    # GIVEN a user outside the "Flagged" index (no flag attribute)
    table.put("User", {"user_id": "u1", "region": "eu", "team": "a"})
    assert names(table.query("flagged users")) == []
    # WHEN the flag is created by ADD (a counter of reports)
    table.update("User", {"user_id": "u1"}, add={"flag": 1})
    # THEN the index keys were written in the same UpdateItem: the pattern finds the user
    assert names(table.query("flagged users")) == ["u1"]
    # AND removing the flag takes it out again
    table.update("User", {"user_id": "u1"}, remove=["flag"])
    assert names(table.query("flagged users")) == []


def test_add_or_delete_on_a_value_input_is_refused(table: TableClient, calls: Calls) -> None:
    # GIVEN inputs whose value (not only presence) builds a key: a template field, a sparse flag
    # that DELETE could empty  WHEN ADD/DELETE would change them THEN refused before any call
    refused(calls, UpdateRejectedError, r"ADD on 'region' is not allowed: it is an input of index 'ByRegionTeam'",
            lambda: table.update("User", {"user_id": "u1"}, add={"region": 1}))
    refused(calls, UpdateRejectedError, r"DELETE on 'flag' is not allowed: it is an input of index 'Flagged'",
            lambda: table.update("User", {"user_id": "u1"}, delete={"flag": {"x"}}))


def test_delete_removes_elements_from_a_set(table: TableClient) -> None:
    # GIVEN a user with a set of tags  WHEN one is deleted  THEN the others stay
    table.put("User", {"user_id": "u2", "tags": {"a", "b", "c"}})
    assert table.update("User", {"user_id": "u2"}, delete={"tags": {"b"}})["tags"] == {"a", "c"}


# 2. Unknown names are refused ---------------------------------------------------------------------------
def test_a_non_key_field_in_a_key_is_refused_not_trusted(table: TableClient, calls: Calls) -> None:
    # GIVEN a user in team "t"
    table.put("User", {"user_id": "k", "region": "us", "team": "t"})
    # WHEN an update passes a stale team inside the key  THEN refused, listing the key fields
    refused(calls, UnknownFieldError, r"User update key: \['team'\] are not fields of the table key; a key takes "
            r"exactly \['user_id'\]",
            lambda: table.update("User", {"user_id": "k", "team": "STALE"}, set={"region": "us"}))
    refused(calls, UnknownFieldError, r"\['emial'\] are not fields of the table key",
            lambda: table.get("User", user_id="k", emial="x"))
    refused(calls, UnknownFieldError, r"\['team'\] are not fields of the table key",
            lambda: table.delete("User", {"user_id": "k", "team": "t"}))
    # AND the index still tells the truth
    assert names(table.query("users by region and team", region="us", team="t")) == ["k"]


def test_misspelt_query_fields_and_options_are_refused(table: TableClient, calls: Calls) -> None:
    # GIVEN declared patterns  WHEN a field or option is misspelt  THEN refused, listing what is taken
    refused(calls, UnknownFieldError, r"pattern 'user profile' takes field\(s\) \['user_id'\] and options .*'limit'.*; "
            r"\['limt'\] is neither", lambda: table.query("user profile", user_id="u", limt=1))
    refused(calls, UnknownFieldError, r"\['team_idd'\] is neither",
            lambda: table.query("users by region and team", region="us", team_idd="t"))


# 3. Upserts create complete items ---------------------------------------------------------------------------
def test_an_upsert_of_a_missing_item_creates_a_complete_visible_item(table: TableClient) -> None:
    # WHEN a missing user is upserted with its index inputs
    out = table.update("User", {"user_id": "u9"}, set={"region": "eu", "team": "x"}, must_exist=False)
    # THEN it is a complete item: key fields, entity, version 1, and every pattern finds it
    assert out == {"user_id": "u9", "region": "eu", "team": "x", "version": 1, "_type": "User"}
    assert table.get("User", user_id="u9") == out
    assert names(table.query("user profile", user_id="u9")) == ["u9"]
    assert names(table.query("users by region and team", region="eu", team="x")) == ["u9"]


def test_an_upsert_without_required_attributes_creates_nothing(table: TableClient) -> None:
    # WHEN a document without its required title is upserted  THEN it is refused and nothing is stored
    with pytest.raises(ItemNotFoundError, match=r"cannot create it: it does not set the required attribute\(s\) \['title'\]"):
        table.update("Doc", {"doc_id": "d1"}, set={"body": "x"}, must_exist=False)
    assert table.get("Doc", doc_id="d1") is None
    # AND with the title it is created; later upserts need not repeat it
    table.update("Doc", {"doc_id": "d1"}, set={"title": "T"}, must_exist=False)
    assert table.update("Doc", {"doc_id": "d1"}, set={"body": "y"}, must_exist=False)["title"] == "T"


# 4. Batches are validated whole, and a refused chunk is reported exactly ----------------------------------------
def test_one_bad_item_in_a_later_chunk_refuses_the_whole_batch(table: TableClient, calls: Calls) -> None:
    # GIVEN 30 documents, the 28th nested 33 levels deep (DynamoDB allows 32)
    deep: Any = "leaf"
    for _ in range(32):
        deep = {"a": deep}
    puts = [("Doc", {"doc_id": f"d{i}", "title": "t", **({"body": deep} if i == 27 else {})}) for i in range(30)]
    # WHEN written  THEN refused before the first call, naming the item and the rule
    refused(calls, ItemValidationError, r"Doc\.body(\.a)+: maps and lists nested more than 32 levels",
            lambda: table.batch_write(puts=puts))
    assert table.get("Doc", doc_id="d0") is None


def test_a_versioned_entity_cannot_be_batch_written(table: TableClient, calls: Calls) -> None:
    refused(calls, UpdateRejectedError, r"batch_write: User is versioned .*cannot check or continue a stored version",
            lambda: table.batch_write(puts=[("User", {"user_id": "b1"})]))


# 5. Versions never go back ---------------------------------------------------------------------------------
def test_a_plain_put_continues_the_version_and_a_stale_writer_loses(table: TableClient) -> None:
    # GIVEN a user at version 3 (put, then two updates), read by a writer at version 1
    assert table.put("User", {"user_id": "v"})["version"] == 1
    table.update("User", {"user_id": "v"}, set={"nick": "a"})
    assert table.update("User", {"user_id": "v"}, set={"nick": "b"})["version"] == 3
    # WHEN a plain put overwrites it
    assert table.put("User", {"user_id": "v", "nick": "c"})["version"] == 4
    # THEN the stored version continued, and the stale writer's conditional update fails
    assert table.get("User", user_id="v")["version"] == 4
    with pytest.raises(VersionConflictError):
        table.update("User", {"user_id": "v"}, set={"nick": "stale"}, expected_version=1)


def test_a_transaction_put_of_a_versioned_entity_must_say_how(table: TableClient, calls: Calls) -> None:
    refused(calls, UpdateRejectedError, r"needs create_only=True or expected_version=N",
            lambda: table.transaction().put("User", {"user_id": "t"}))


# 6. Any attribute name written is read back ------------------------------------------------------------------
def test_attribute_names_with_a_colon_are_read_back(table: TableClient) -> None:
    table.put("Doc", {"doc_id": "c", "title": "t", "a:b": "v", "ts:month": 1})
    assert table.get("Doc", doc_id="c")["a:b"] == "v"
    assert table.query("doc", doc_id="c").items[0]["ts:month"] == 1


# 7. Cursors are bound to their query and signed -------------------------------------------------------------------
def test_a_cursor_is_refused_when_the_direction_changes_or_it_is_edited(table: TableClient) -> None:
    # GIVEN three readings and a first page of one, read oldest first
    ts = [datetime(2026, 3, d, tzinfo=UTC) for d in (1, 2, 3)]
    for t in ts:
        table.put("Reading", {"sensor_id": "s", "ts": t})
    page = table.query("readings in a range", sensor_id="s", ts=(ts[0], ts[2]), limit=1)
    assert page.cursor is not None
    # WHEN the cursor is passed with the direction reversed  THEN refused (it would skip items)
    with pytest.raises(CursorError, match="belongs to a different query"):
        table.query("readings in a range", sensor_id="s", ts=(ts[0], ts[2]), limit=1, cursor=page.cursor,
                    descending=True)
    # AND an edited cursor is refused
    body, _, mac = page.cursor.partition(".")
    with pytest.raises(CursorError, match="signature does not verify"):
        table.query("readings in a range", sensor_id="s", ts=(ts[0], ts[2]), cursor=body[:-2] + "AA." + mac)
    # AND the unchanged cursor continues exactly
    rest = table.query("readings in a range", sensor_id="s", ts=(ts[0], ts[2]), cursor=page.cursor)
    assert [r["ts"] for r in (*page, *rest)] == [t.strftime("%Y-%m-%dT%H:%M:%S.000000Z") for t in ts]


def test_a_cursor_signed_with_another_secret_is_refused(table: TableClient, dynamodb_client: Any) -> None:
    # GIVEN two clients of the table with different cursor secrets
    table.put("Reading", {"sensor_id": "k", "ts": datetime(2026, 3, 1, tzinfo=UTC)})
    table.put("Reading", {"sensor_id": "k", "ts": datetime(2026, 3, 2, tzinfo=UTC)})
    window = (datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 5, tzinfo=UTC))
    a = TableClient(MODEL, table.table_name, client=dynamodb_client, cursor_key=b"a" * 32)
    b = TableClient(MODEL, table.table_name, client=dynamodb_client, cursor_key=b"b" * 32)
    cursor = a.query("readings in a range", sensor_id="k", ts=window, limit=1).cursor
    # WHEN one client's cursor is given to the other  THEN refused
    with pytest.raises(CursorError, match="signature does not verify"):
        b.query("readings in a range", sensor_id="k", ts=window, cursor=cursor)


# 8. What DynamoDB would refuse after the call is refused before it ------------------------------------------------
def test_overlapping_update_clauses_and_oversized_query_keys_are_refused_first(table: TableClient, calls: Calls) -> None:
    key = {"user_id": "o"}
    refused(calls, UpdateRejectedError, r"'note' is named in both set and remove",
            lambda: table.update("User", key, set={"note": "x"}, remove=["note"]))
    refused(calls, UpdateRejectedError, r"'note' is listed twice in remove",
            lambda: table.update("User", key, remove=["note", "note"]))
    refused(calls, UpdateRejectedError, r"'score' is named in both set and add",
            lambda: table.update("User", key, set={"score": 1}, add={"score": 1}))
    refused(calls, KeyValueError, r"key value 'RT#xxxx.*is 3005 bytes; DynamoDB partition key values are limited to 2048",
            lambda: table.query("users by region and team", region="x" * 3000, team="t"))
    refused(calls, KeyValueError, r"PK 'USER#xxxx.*is 3005 bytes; DynamoDB partition key values are limited to 2048",
            lambda: table.query("user profile", user_id="x" * 3000))


# 9. Recording traffic never changes what a call does ---------------------------------------------------------------
def test_bucketed_reads_work_while_traffic_is_recorded(table: TableClient, dynamodb_client: Any) -> None:
    # GIVEN readings in February and March and a client recording every request
    times = [datetime(2026, 2, 27, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC)]
    for t in times:
        table.put("Reading", {"sensor_id": "r", "ts": t})
    recorded = TableClient(MODEL, table.table_name, client=dynamodb_client, traffic=TrafficRecorder(1.0))
    # WHEN the range over both month partitions is read
    items = list(recorded.query_all("readings in a range", sensor_id="r", ts=(times[0], times[1])))
    # THEN both partitions were read, and the requests were recorded under the pattern's name
    assert len(items) == 2
    assert recorded.traffic is not None and recorded.traffic.report().sampled_requests >= 2


# 11. Binary values come back as bytes -------------------------------------------------------------------------------
def test_bytes_come_back_as_bytes(table: TableClient) -> None:
    table.put("Doc", {"doc_id": "b", "title": "t", "blob": b"\x00\x01", "blobs": {b"a", b"b"}, "nested": {"x": [b"z"]}})
    item = table.get("Doc", doc_id="b")
    assert item is not None
    assert type(item["blob"]) is bytes and item["blob"] == b"\x00\x01"
    assert item["blobs"] == {b"a", b"b"} and all(type(b) is bytes for b in item["blobs"])
    assert item["nested"] == {"x": [b"z"]}
