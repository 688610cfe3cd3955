"""How an entity's items are stored beyond their keys (ADR 0042): the TTL attribute (where
``expires_in`` goes, and the name a read returns the expiry under), the entity's other declared
fields and its required attributes. They are in the slice of a consumer that stores the entity or
reads whole items of it (``Slice.stored``), not in that of one that deletes it or reads keys
only; check_slice, ``contract verify``, the producer's ``diff`` and the cold-start check refuse a
change to them. The brute force in tests/unit/runtime/test_slice_requests.py compares the requests
and results behind this choice."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.evolution.contracts import consumer_breaks
from constructs_lib.model import AccessScope, Model
from constructs_lib.model import fingerprints as fp
from constructs_lib.model.contract_file import build_contract, read_contract
from constructs_lib.model.scope import WRITE_KINDS
from constructs_lib.model.slices import (
    STORING_WRITES,
    PublishedFingerprints,
    Slice,
    SliceError,
    check_slice,
    merge_slices,
    published_json,
    read_published,
    read_slice,
    slice_of,
)
from constructs_lib.runtime import contract
from constructs_lib.runtime.exceptions import ContractBreakError
from constructs_lib.testing.local_ssm import LocalSsm
from examples.shop.model import shop_model

PUTS_SESSIONS = AccessScope(writes={"Session": ["put"]})
READS_SESSIONS = AccessScope(patterns=["session by id"], batch_gets=["Session"])
DELETES_SESSIONS = AccessScope(writes={"Session": ["delete", "condition_check"]})
PENDING_KEYS = AccessScope(patterns=["pending orders by date"])  # GSI2 is KEYS_ONLY
RENAMED = "how items of entity 'Session' are stored changed: Session TTL attribute: 'expires_at' -> 'ttl_epoch'"


def shop_with(change: Callable[[dict[str, Any]], None]) -> Model:
    data = copy.deepcopy(shop_model.to_dict())
    change(data)
    return Model.from_dict(data)


def entity(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in data["entities"] if e["name"] == name)


def ttl_renamed() -> Model:
    return shop_with(lambda d: d.update(ttl_attribute="ttl_epoch"))


def breaks(scope: AccessScope | None, new: Model, *, model: Model | None = shop_model) -> list[str]:
    return [b.describe() for b in check_slice(slice_of(shop_model, scope), read_contract(build_contract(new), Model),
                                              model=model)]


def test_a_ttl_rename_breaks_a_consumer_that_puts_the_entity_naming_both_attributes() -> None:
    # GIVEN a consumer that puts sessions (put(..., expires_in=...) stores the model's TTL attribute)
    # WHEN the producer renames the TTL attribute
    # THEN its slice no longer holds, and the break names the old and the new attribute
    assert breaks(PUTS_SESSIONS, ttl_renamed()) == [RENAMED]
    # AND without the consumer's model at hand (a slice file holding what its fingerprints hash) the
    # break names both attributes too
    assert breaks(PUTS_SESSIONS, ttl_renamed(), model=None) == [RENAMED]
    # AND a slice file written before it held them still says what the items are now
    piece = slice_of(shop_model, PUTS_SESSIONS)
    older = read_slice({k: v for k, v in piece.to_dict().items() if k != "schemas"})
    [alone] = [b.describe() for b in check_slice(older, read_contract(build_contract(ttl_renamed()), Model))]
    assert alone.startswith("how items of entity 'Session' are stored changed: fingerprint ")
    assert "TTL attribute 'ttl_epoch'" in alone


@pytest.mark.parametrize("kind", WRITE_KINDS)
def test_each_storing_write_carries_the_stored_form_and_deletes_do_not(kind: str) -> None:
    # GIVEN a consumer making one kind of write of sessions / WHEN the TTL attribute is renamed
    found = breaks(AccessScope(writes={"Session": [kind]}), ttl_renamed())
    # THEN puts and updates (single, in a transaction, in a batch) break; deletes and checks send keys only
    assert found == ([RENAMED] if kind in STORING_WRITES else [])


def test_a_reader_of_whole_items_breaks_and_a_reader_of_keys_does_not() -> None:
    # GIVEN a consumer reading whole sessions (a GetItem pattern, a batch get): after the rename its
    # reads return the expiry under another name, so it breaks
    assert breaks(READS_SESSIONS, ttl_renamed()) == [RENAMED]
    # AND one reading a KEYS_ONLY index, or deleting, gets and sends keys only: it keeps working
    assert breaks(PENDING_KEYS, ttl_renamed()) == [] and breaks(DELETES_SESSIONS, ttl_renamed()) == []
    assert slice_of(shop_model, PENDING_KEYS).stored == {} and slice_of(shop_model, DELETES_SESSIONS).stored == {}
    # AND a function without a scope (it may store and read every entity) breaks on every entity
    assert len(breaks(None, ttl_renamed())) == len(shop_model.entities)


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: entity(d, "Session").update(required=["user_id", "device"]),
     "Session required attributes: ['user_id'] -> ['device', 'user_id']"),
    (lambda d: entity(d, "Session")["fields"].update(started_at={"kind": "timestamp"}),
     "Session field 'started_at' kind: absent -> 'timestamp'"),
    (lambda d: d.update(ttl_attribute=None), "Session TTL attribute: 'expires_at' -> None"),
], ids=["required attribute added", "declared field added", "TTL removed"])
def test_how_items_are_stored_breaks_its_writers_and_readers_of_whole_items(
    change: Callable[[dict[str, Any]], None], expected: str
) -> None:
    # GIVEN a producer change to what a put of a session stores or refuses, keys untouched
    new = shop_with(change)
    assert fp.entity_fingerprints(new) == fp.entity_fingerprints(shop_model)
    # WHEN checked THEN the writer and the reader of whole items break naming it, the deleter does not
    for scope in (PUTS_SESSIONS, READS_SESSIONS):
        assert breaks(scope, new) == [f"how items of entity 'Session' are stored changed: {expected}"]
    assert breaks(DELETES_SESSIONS, new) == []


def test_a_non_key_fields_kind_breaks_its_writers() -> None:
    # GIVEN the shop's Order with a non-key declared field, and then with that field's kind changed
    def with_note(kind: str) -> Callable[[dict[str, Any]], None]:
        return lambda d: entity(d, "Order")["fields"].update(note={"kind": kind})

    old, new = shop_with(with_note("string")), shop_with(with_note("date"))
    scope = AccessScope(writes={"Order": ["update"]})
    # WHEN a consumer updating orders is checked THEN it breaks on the stored form of that field
    found = check_slice(slice_of(old, scope), read_contract(build_contract(new), Model), model=old)
    assert [b.describe() for b in found] == [
        "how items of entity 'Order' are stored changed: Order field 'note' kind: 'string' -> 'date'"]


# The slice file and the published document --------------------------------------------------------
def test_a_slice_file_holds_its_stored_fingerprints_and_one_without_stays_as_it_was(tmp_path: Path) -> None:
    # GIVEN a writer's slice and a keys-only reader's
    writer, keys = slice_of(shop_model, PUTS_SESSIONS, consumer="w"), slice_of(shop_model, PENDING_KEYS, consumer="k")
    # WHEN written as files and read back
    assert json.loads(writer.to_json())["stored"] == {"Session": fp.stored_fingerprints(shop_model)["Session"]}
    assert "stored" not in json.loads(keys.to_json())
    for piece in (writer, keys):
        path = tmp_path / f"{piece.consumer}.json"
        path.write_text(piece.to_json(), encoding="utf-8")
        # THEN they are the same slices
        assert read_slice(path) == piece
    # AND merging keeps the stored fingerprints of every function
    assert merge_slices("app", [writer, keys]).stored == writer.stored


@pytest.mark.parametrize(("stored", "needle"), [
    ({"Session": "nope"}, "stored['Session'] 'nope' is not a fingerprint"),
    ({"Order": "0" * 32}, "stored names entity 'Order', which is not among its entities"),
    (["Session"], "stored ['Session'] must map entity names to fingerprints"),
])
def test_a_malformed_stored_entry_is_refused_naming_it(stored: Any, needle: str) -> None:
    # GIVEN a slice document whose stored entry is malformed / WHEN read / THEN a SliceError names it
    data = {**slice_of(shop_model, PUTS_SESSIONS).to_dict(), "stored": stored}
    with pytest.raises(SliceError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        Slice.from_dict(data)


def test_a_published_document_without_the_model_carries_the_stored_fingerprints() -> None:
    # GIVEN the published documents of the renamed model with and without its model
    lean = json.loads(published_json(ttl_renamed(), include_model=False))
    full = json.loads(published_json(ttl_renamed()))
    # THEN the lean one holds the stored fingerprints (the full one's follow from its model)
    assert lean["fingerprints"]["stored"] == fp.stored_fingerprints(ttl_renamed())
    assert "stored" not in full["fingerprints"]
    # AND both break the writer of sessions, and neither the keys-only reader
    for text in (json.dumps(lean), json.dumps(full)):
        published = read_published(text, source="p")
        assert [b.kind for b in check_slice(slice_of(shop_model, PUTS_SESSIONS), published)] == ["stored"]
        assert check_slice(slice_of(shop_model, PENDING_KEYS), published) == []


def test_an_older_producers_document_without_model_or_stored_fingerprints_cannot_vouch_for_a_writer() -> None:
    # GIVEN what a producer on an older constructs_lib published with include_model=False (no stored)
    lean = json.loads(published_json(shop_model, include_model=False))
    del lean["fingerprints"]["stored"]
    published = read_published(json.dumps(lean), source="older producer")
    # WHEN a writer checks its slice THEN it is refused, saying why (the check is never skipped)
    [found] = check_slice(slice_of(shop_model, PUTS_SESSIONS), published)
    assert found.new is None and "cannot be checked" in found.describe() and "redeploy the producer" in found.describe()
    # AND a keys-only reader is not affected
    assert check_slice(slice_of(shop_model, PENDING_KEYS), published) == []


def test_published_fingerprints_without_stored_ones_take_them_from_the_model() -> None:
    # GIVEN published fingerprints as an older producer wrote them (no stored ones), with the model
    new = ttl_renamed()
    published = PublishedFingerprints(new.name, fp.fingerprint(new), fp.entity_fingerprints(new),
                                      fp.index_fingerprints(new), new.to_dict(), "older producer")
    # WHEN the writer's slice is checked THEN the stored fingerprints are computed from the model, and break
    found = check_slice(slice_of(shop_model, PUTS_SESSIONS), published, model=shop_model)
    assert [b.describe() for b in found] == [RENAMED]


# The producer's diff and the cold-start check --------------------------------------------------------
def test_the_producers_consumer_check_names_the_consumer_and_the_attributes(tmp_path: Path) -> None:
    # GIVEN registered slices of a writer of sessions and of a keys-only reader
    slices = [(tmp_path / "w.json", slice_of(shop_model, PUTS_SESSIONS, consumer="w")),
              (tmp_path / "k.json", slice_of(shop_model, PENDING_KEYS, consumer="k"))]
    # WHEN the producer's renamed model is checked against them, with the locked model as the previous one
    found = consumer_breaks(ttl_renamed(), slices, locked=shop_model)
    # THEN only the writer is broken (the keys-only reader is checked and holds), and the break names
    # the old and the new attribute
    assert [(piece.consumer, [b.describe() for b in bs]) for _, piece, bs in found] == [("w", [RENAMED]), ("k", [])]
    # AND without a lock it is still broken
    assert [piece.consumer for _, piece, bs in consumer_breaks(ttl_renamed(), slices) if bs] == ["w"]


@pytest.fixture
def ssm() -> LocalSsm:
    with LocalSsm() as server:
        yield server


def test_a_writer_refuses_to_start_after_a_ttl_rename(ssm: LocalSsm, monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3

    monkeypatch.setattr(contract, "_PUBLISHED", {})
    client = boto3.client("ssm", endpoint_url=ssm.url, region_name="us-east-1", aws_access_key_id="local",
                          aws_secret_access_key="local")
    # GIVEN the producer published the renamed model's contract
    ssm.parameters["/shop/data/contract"] = published_json(ttl_renamed())
    env = {contract.ENV_CONTRACT_PARAMETER: "/shop/data/contract"}
    # WHEN a function putting sessions starts THEN it refuses, naming the old and the new attribute
    with pytest.raises(ContractBreakError, match=RENAMED) as refused:
        contract.verify(shop_model, environ=env, scope=PUTS_SESSIONS, client=client)
    assert [(b.kind, b.name) for b in refused.value.breaks] == [("stored", "Session")]
    # AND a function reading a KEYS_ONLY index starts
    contract.verify(shop_model, environ=env, scope=PENDING_KEYS, client=client)
