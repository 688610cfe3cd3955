"""Stream audit, pure parts: building audit items from stream records, the spec, and the batch
writer's partial-failure logic against a small fake client (real DynamoDB is in tests/e2e)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError

from constructs_lib.model import Entity, Model
from constructs_lib.runtime import AuditClient, AuditRecord, CursorError, KeyValueError, _aws
from constructs_lib.runtime.environment import (
    ENV_AUDIT_SALT,
    ENV_AUDIT_SALT_SECRET,
    ENV_AUDIT_SPEC,
    ENV_AUDIT_TABLE,
    ENV_SOURCE_TABLE,
)
from constructs_lib.runtime.exceptions import ImageOmittedError, RedactionError, SettingsError
from constructs_lib.runtime.handlers import audit as audit_handler
from constructs_lib.runtime.handlers.audit import build_item, canonical_json, write_records
from constructs_lib.runtime.limits import MAX_ITEM_BYTES
from constructs_lib.runtime.patterns.audit import AuditSpec
from constructs_lib.runtime.patterns.audit.spec import HASHED_PREFIX
from constructs_lib.runtime.values import wire_item_size

SALT = "unit-test-salt"
T0 = 1717243200  # 2024-06-01T12:00:00Z
KEY = {"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}}


def S(value: str) -> dict[str, str]:
    return {"S": value}


def N(value: str) -> dict[str, str]:
    return {"N": value}


def record(seq: str = "100", event: str = "MODIFY", *, keys: dict[str, Any] | None = None, new: dict[str, Any] | None = None,
           old: dict[str, Any] | None = None, at: Any = T0, identity: dict[str, str] | None = None) -> dict[str, Any]:
    """A Lambda DynamoDB stream record (images get the key attributes, like real ones)."""
    keys = keys if keys is not None else KEY
    ddb: dict[str, Any] = {"ApproximateCreationDateTime": at, "Keys": keys, "SequenceNumber": seq,
                           "StreamViewType": "NEW_AND_OLD_IMAGES"}
    if new is not None:
        ddb["NewImage"] = {**keys, **new}
    if old is not None:
        ddb["OldImage"] = {**keys, **old}
    rec: dict[str, Any] = {"eventID": f"ev-{seq}", "eventName": event, "eventSource": "aws:dynamodb", "dynamodb": ddb}
    if identity is not None:
        rec["userIdentity"] = identity
    return rec


USER_OLD = {"_type": S("User"), "name": S("Ann"), "age": N("30"), "updated_by": S("alice")}
USER_NEW = {"_type": S("User"), "name": S("Ann"), "age": N("31"), "updated_by": S("bob")}


def build(rec: dict[str, Any], spec: AuditSpec | None = None, salt: str | None = SALT) -> dict[str, Any]:
    return build_item(rec, spec or AuditSpec(), "Source", salt)


def text(item: dict[str, Any]) -> str:
    return json.dumps(item, default=repr)


# Events, diffs, actors -----------------------------------------------------------------------------------
def test_insert_records_every_attribute_as_added() -> None:
    # GIVEN an INSERT record
    item = build(record(event="INSERT", new=USER_NEW))
    # WHEN built THEN every attribute of the new image is changed, with only an "after" side
    assert item["event"] == S("INSERT")
    assert [v["S"] for v in item["changed"]["L"]] == ["PK", "SK", "_type", "age", "name", "updated_by"]
    assert item["changes"]["M"]["age"] == {"M": {"after": N("31")}}
    # AND the image, entity, actor, key and bookkeeping attributes are set
    assert item["image"]["M"] == {**KEY, **USER_NEW}
    assert (item["entity"], item["actor"], item["_type"]) == (S("User"), S("bob"), S("AuditRecord"))
    assert item["key"] == {"M": KEY}
    assert (item["source_table"], item["sequence_number"], item["event_id"]) == (S("Source"), S("100"), S("ev-100"))
    assert item["changed_at"] == S("2024-06-01T12:00:00.000Z")


def test_modify_lists_added_removed_and_changed_attributes_only() -> None:
    # GIVEN a MODIFY that changes age, adds nick, removes name and leaves _type alone
    old = {**USER_OLD}
    new = {k: v for k, v in USER_NEW.items() if k != "name"} | {"nick": S("an")}
    item = build(record(old=old, new=new))
    changes = item["changes"]["M"]
    # THEN changed lists exactly those, sorted, each with the sides that exist
    assert [v["S"] for v in item["changed"]["L"]] == ["age", "name", "nick", "updated_by"]
    assert changes["age"] == {"M": {"before": N("30"), "after": N("31")}}
    assert changes["name"] == {"M": {"before": S("Ann")}}
    assert changes["nick"] == {"M": {"after": S("an")}}
    assert "_type" not in changes


def test_values_compare_by_value_not_by_representation() -> None:
    # GIVEN maps in another key order, sets in another order and 1.50 vs 1.5
    old = {"m": {"M": {"a": N("1"), "b": {"M": {"x": S("y"), "z": N("2")}}}}, "ss": {"SS": ["a", "b"]}, "n": N("1.50")}
    new = {"m": {"M": {"b": {"M": {"z": N("2"), "x": S("y")}}, "a": N("1")}}, "ss": {"SS": ["b", "a"]}, "n": N("1.5")}
    # WHEN diffed THEN nothing changed
    assert build(record(old=old, new=new))["changed"] == {"L": []}
    # AND a change deep inside a nested map is a change of the top-level attribute
    new["m"]["M"]["b"]["M"]["z"] = N("3")
    assert [v["S"] for v in build(record(old=old, new=new))["changed"]["L"]] == ["m"]


def test_remove_keeps_the_old_values_and_no_image() -> None:
    # GIVEN a user's REMOVE
    item = build(record(event="REMOVE", old=USER_OLD))
    # THEN every old attribute is changed with a "before" side, there is no image, actor unknown
    assert item["event"] == S("REMOVE")
    assert item["changes"]["M"]["name"] == {"M": {"before": S("Ann")}}
    assert "image" not in item
    assert item["actor"] == S("unknown")  # streams do not say who deleted
    assert item["entity"] == S("User")  # from the old image


@pytest.mark.parametrize(
    ("event", "identity"),
    [
        ("REMOVE", {"type": "Service", "principalId": "dynamodb.amazonaws.com"}),  # AWS TTL deletion
        ("UNKNOWN_TO_SDK_VERSION", None),  # DynamoDB Local's TTL deletion
    ],
)
def test_ttl_deletions_become_expire_by_ttl(event: str, identity: dict[str, str] | None) -> None:
    # GIVEN a TTL deletion in its AWS or DynamoDB Local form
    item = build(record(event=event, old=USER_OLD, identity=identity))
    # THEN it is an EXPIRE by "ttl"
    assert (item["event"], item["actor"]) == (S("EXPIRE"), S("ttl"))
    assert "image" not in item


def test_remove_by_another_identity_is_a_plain_remove() -> None:
    # GIVEN a REMOVE with a userIdentity that is not DynamoDB's TTL service
    item = build(record(event="REMOVE", old=USER_OLD, identity={"type": "Service", "principalId": "other.amazonaws.com"}))
    # THEN it stays a REMOVE
    assert item["event"] == S("REMOVE")


def test_unknown_event_name_is_rejected_naming_it() -> None:
    # GIVEN an eventName the audit does not know / WHEN built / THEN a typed error names it
    with pytest.raises(KeyValueError, match="'UPSERT'"):
        build(record(event="UPSERT", new=USER_NEW))


@pytest.mark.parametrize(
    ("new", "spec", "actor"),
    [
        ({"updated_by": S("carol")}, AuditSpec(), "carol"),
        ({}, AuditSpec(), "unknown"),  # attribute absent
        ({"updated_by": N("7")}, AuditSpec(), "unknown"),  # not a string
        ({"updated_by": S("")}, AuditSpec(), "unknown"),
        ({"who": S("dave")}, AuditSpec(actor_attribute="who"), "dave"),
        ({"updated_by": S("carol")}, AuditSpec(actor_attribute=None), "unknown"),  # actors not recorded
    ],
)
def test_actor_rules(new: dict[str, Any], spec: AuditSpec, actor: str) -> None:
    # GIVEN a MODIFY whose new image has (or lacks) the actor attribute / THEN the actor follows the rules
    assert build(record(event="INSERT", new=new), spec)["actor"] == S(actor)


def test_entity_is_unknown_without_the_entity_attribute() -> None:
    # GIVEN an item without _type / THEN the entity is "unknown"
    assert build(record(event="INSERT", new={"x": S("1")}))["entity"] == S("unknown")


def test_missing_old_image_is_rejected_with_the_stream_view_rule() -> None:
    # GIVEN a MODIFY without OldImage (a NEW_IMAGE stream) / THEN rejected naming the needed view
    with pytest.raises(KeyValueError, match="NEW_AND_OLD_IMAGES"):
        build(record(new=USER_NEW))


# Keys --------------------------------------------------------------------------------------------------------
def test_same_record_builds_the_identical_item() -> None:
    # GIVEN one record delivered twice / WHEN built each time / THEN the items are identical
    rec = record(old=USER_OLD, new=USER_NEW)
    assert build(rec) == build(json.loads(json.dumps(rec)))


def test_sort_key_is_time_then_padded_sequence() -> None:
    # GIVEN records of one item: seq 99 and 100 in the same second, then one a second later
    a = build(record("99", event="INSERT", new=USER_NEW))
    b = build(record("100", new=USER_NEW, old=USER_OLD))
    c = build(record("101", new=USER_NEW, old=USER_OLD, at=T0 + 1))
    # THEN SK is time + 40-digit sequence, so text order is change order (99 sorts before 100)
    assert a["SK"]["S"] == "2024-06-01T12:00:00.000Z#" + "0" * 38 + "99"
    assert a["SK"]["S"] < b["SK"]["S"] < c["SK"]["S"]
    # AND the three share one partition (one Query reads the history)
    assert a["PK"] == b["PK"] == c["PK"] == S("ITEM#USER%231#PROFILE")
    assert a["GSI1SK"]["S"] == a["SK"]["S"] + "#" + a["PK"]["S"]


@pytest.mark.parametrize(
    ("at", "changed_at"),
    [
        (T0, "2024-06-01T12:00:00.000Z"),
        (T0 + 0.1239, "2024-06-01T12:00:00.123Z"),  # floored to the millisecond
        (Decimal("1717243200.9999"), "2024-06-01T12:00:00.999Z"),
        (datetime(2024, 6, 1, 12, tzinfo=UTC), "2024-06-01T12:00:00.000Z"),
    ],
)
def test_change_time_is_fixed_width_iso_milliseconds(at: Any, changed_at: str) -> None:
    # GIVEN ApproximateCreationDateTime as epoch seconds (or a datetime) / THEN changed_at is fixed width
    item = build(record(at=at, event="INSERT", new=USER_NEW))
    assert item["changed_at"] == S(changed_at)
    assert item["SK"]["S"].startswith(changed_at + "#")


@pytest.mark.parametrize("at", ["1717243200", -1, True, None, float("nan")])
def test_bad_change_time_is_rejected(at: Any) -> None:
    # GIVEN a creation time that is not epoch seconds / THEN a typed error names the field
    with pytest.raises(KeyValueError, match="ApproximateCreationDateTime"):
        build(record(at=at, event="INSERT", new=USER_NEW))


@pytest.mark.parametrize("seq", ["", "12a", "1" * 41, 100])
def test_bad_sequence_number_is_rejected(seq: Any) -> None:
    # GIVEN a sequence number that is not 1..40 digits / THEN a typed error names the rule
    with pytest.raises(KeyValueError, match="SequenceNumber"):
        build(record(seq=seq, event="INSERT", new=USER_NEW))


def test_escaping_keeps_keys_with_separators_apart() -> None:
    # GIVEN (pk "a#b", sk "c") and (pk "a", sk "b#c"), which would both read "a#b#c" unescaped
    one = build(record(event="INSERT", keys={"PK": S("a#b"), "SK": S("c")}, new={}))
    two = build(record(event="INSERT", keys={"PK": S("a"), "SK": S("b#c")}, new={}))
    # THEN their audit partitions differ and no value contributes a raw '#'
    assert (one["PK"]["S"], two["PK"]["S"]) == ("ITEM#a%23b#c", "ITEM#a#b%23c")


def test_number_and_binary_keys_render_as_text() -> None:
    # GIVEN a table keyed by a number (sort key) and by binary (partition key)
    item = build(record(event="INSERT", keys={"PK": {"B": base64.b64encode(b"\x00\xff").decode()}, "SK": N("100")}, new={}))
    # THEN the number is plain decimal text and the binary its base64
    assert item["PK"] == S("ITEM#AP8=#100")
    # AND the key map holds the binary as bytes, as the boto3 client writes it
    assert item["key"]["M"]["PK"] == {"B": b"\x00\xff"}


def test_table_without_sort_key_and_key_mismatch() -> None:
    # GIVEN a spec for a table without a sort key
    spec = AuditSpec(source_sk_attribute=None)
    # THEN the audit partition holds the pk only
    assert build(record(event="INSERT", keys={"PK": S("x")}, new={}), spec)["PK"] == S("ITEM#x")
    # AND extra key attributes (DynamoDB Local lists index keys on TTL deletions) are ignored
    assert build(record(event="INSERT", keys={"PK": S("x"), "GSI1PK": S("g")}, new={}), spec)["key"] == {"M": {"PK": S("x")}}
    # AND a record lacking a key attribute of the spec is rejected naming both
    with pytest.raises(KeyValueError, match=r"Keys \['SK'\] lack the source key attributes \['PK', 'SK'\]"):
        build(record(event="INSERT", keys={"SK": S("x")}, new={}), AuditSpec())


def test_over_long_partition_key_falls_back_to_its_hash() -> None:
    # GIVEN a source key whose escaped form exceeds 2048 bytes
    keys = {"PK": S("#" * 1000), "SK": S("s" * 100)}  # each '#' escapes to 3 bytes
    item = build(record(event="INSERT", keys=keys, new={}))
    full = "ITEM#" + "%23" * 1000 + "#" + "s" * 100
    # THEN PK is the marker + sha256 of the full text (deterministic, cannot be forged by a value)
    assert item["PK"] == S(HASHED_PREFIX + hashlib.sha256(full.encode()).hexdigest())
    assert "$" in HASHED_PREFIX
    # AND the index sort key stays within DynamoDB's 1024-byte limit
    assert len(item["GSI1SK"]["S"].encode()) <= 1024
    # AND a key just under the limit is kept readable
    short = build(record(event="INSERT", keys={"PK": S("a" * 2000), "SK": S("b")}, new={}))
    assert short["PK"] == S("ITEM#" + "a" * 2000 + "#b")
    assert short["GSI1SK"]["S"].endswith("#" + HASHED_PREFIX + hashlib.sha256(short["PK"]["S"].encode()).hexdigest())


def test_day_shards_spread_items_and_keep_each_item_on_one() -> None:
    # GIVEN 800 different items changed on one day, with 8 day shards
    items = [build(record(event="INSERT", keys={"PK": S(f"U{n}"), "SK": S("P")}, new={})) for n in range(800)]
    shards = Counter(i["GSI1PK"]["S"] for i in items)
    # THEN all 8 partitions of that day are used, none hot
    assert sorted(shards) == [f"DAY#2024-06-01#{n:03d}" for n in range(8)]
    assert max(shards.values()) < 2 * 800 / 8
    # AND one item's changes always land on the same shard
    again = build(record("200", keys={"PK": S("U5"), "SK": S("P")}, new={}, old={}, at=T0 + 60))
    assert again["GSI1PK"] == items[5]["GSI1PK"]


def test_retention_sets_the_ttl_attribute_from_the_change_time() -> None:
    # GIVEN a 30-day retention / THEN expires_at = change time + retention (not "now")
    item = build(record(at=T0 + 0.5, event="INSERT", new={}), AuditSpec(retention_seconds=30 * 86_400))
    assert item["expires_at"] == N(str(T0 + 30 * 86_400))
    # AND without retention there is no TTL attribute
    assert "expires_at" not in build(record(event="INSERT", new={}))


# Redaction ------------------------------------------------------------------------------------------------
SECRET_OLD, SECRET_NEW = "alice@example.com", "bob@example.com"


@pytest.mark.parametrize("event", ["INSERT", "MODIFY", "REMOVE"])
def test_hash_redaction_never_stores_the_clear_value(event: str) -> None:
    # GIVEN email redacted by hash, in an insert, a change and a delete
    spec = AuditSpec(redact=("email",))
    old = {**USER_OLD, "email": S(SECRET_OLD), "profile": {"M": {"x": S("y")}}}
    new = {**USER_NEW, "email": S(SECRET_NEW)}
    rec = record(event=event, old=old if event != "INSERT" else None, new=new if event != "REMOVE" else None)
    item = build(rec, spec)
    # THEN neither clear value appears anywhere in the item
    assert SECRET_OLD not in text(item) and SECRET_NEW not in text(item)
    assert "email" in [v["S"] for v in item["changed"]["L"]]


def test_hash_is_a_salted_hmac_equal_for_equal_values() -> None:
    # GIVEN email redacted by hash and a change of it
    spec = AuditSpec(redact=("email",))
    item = build(record(old={**USER_OLD, "email": S(SECRET_OLD)}, new={**USER_NEW, "email": S(SECRET_NEW)}), spec)
    change = item["changes"]["M"]["email"]["M"]
    expected = hmac.new(SALT.encode(), canonical_json(S(SECRET_NEW)).encode(), hashlib.sha256).hexdigest()
    # THEN each side is sha256: + HMAC(salt, canonical JSON of the typed value); the change stays visible
    assert change["after"] == S("sha256:" + expected)
    assert change["before"] != change["after"]
    assert item["image"]["M"]["email"] == change["after"]
    # AND the same value hashes the same in another record, and differently with another salt
    other = build(record("200", event="INSERT", new={"email": S(SECRET_NEW)}), spec)
    assert other["changes"]["M"]["email"]["M"]["after"] == change["after"]
    resalted = build(record("200", event="INSERT", new={"email": S(SECRET_NEW)}), spec, salt="another-salt")
    assert resalted["changes"]["M"]["email"]["M"]["after"] != change["after"]


def test_hash_redaction_covers_nested_values_and_the_actor() -> None:
    # GIVEN a redacted map attribute and a redacted actor attribute
    spec = AuditSpec(redact=("profile", "updated_by"))
    new = {"profile": {"M": {"ssn": S("123-45-6789"), "tags": {"L": [S("vip")]}}}, "updated_by": S("carol@corp")}
    item = build(record(event="INSERT", new=new), spec)
    # THEN no nested clear value nor the actor is stored; the actor is its hash
    assert "123-45-6789" not in text(item) and "vip" not in text(item) and "carol@corp" not in text(item)
    assert item["actor"]["S"].startswith("sha256:")


def test_drop_redaction_keeps_the_name_but_no_value() -> None:
    # GIVEN email redacted by drop, and a change of it
    spec = AuditSpec(redact=("email", "updated_by"), redaction="drop")
    item = build(record(old={**USER_OLD, "email": S(SECRET_OLD)}, new={**USER_NEW, "email": S(SECRET_NEW)}), spec, salt=None)
    # THEN the name is still listed as changed, its change says dropped, the image omits it
    assert "email" in [v["S"] for v in item["changed"]["L"]]
    assert item["changes"]["M"]["email"] == {"M": {"redacted": S("dropped")}}
    assert "email" not in item["image"]["M"]
    assert item["actor"] == S("redacted")
    assert SECRET_OLD not in text(item) and SECRET_NEW not in text(item) and "bob" not in text(item)


def test_unchanged_redacted_attribute_is_hashed_in_the_image() -> None:
    # GIVEN a MODIFY that does not touch the redacted email
    spec = AuditSpec(redact=("email",))
    item = build(record(old={**USER_OLD, "email": S(SECRET_OLD)}, new={**USER_NEW, "email": S(SECRET_OLD)}), spec)
    # THEN it is not listed as changed and the image holds its hash only
    assert "email" not in item["changes"]["M"]
    assert item["image"]["M"]["email"]["S"].startswith("sha256:")
    assert SECRET_OLD not in text(item)


@pytest.mark.parametrize("salt", [None, "", "   "])
def test_hashing_without_a_salt_is_refused(salt: str | None) -> None:
    # GIVEN hash redaction and no salt / WHEN built / THEN RedactionError names the env var
    with pytest.raises(RedactionError, match=ENV_AUDIT_SALT):
        build(record(event="INSERT", new={"email": S(SECRET_NEW)}), AuditSpec(redact=("email",)), salt=salt)
    # AND the writer client refuses the same configuration
    with pytest.raises(RedactionError):
        AuditClient(AuditSpec(redact=("email",)), "Audit", "Source", client=object(), salt=salt, writer=True)  # type: ignore[arg-type]


def test_no_salt_needed_without_hashing() -> None:
    # GIVEN nothing redacted, or redaction by drop / THEN no salt is needed
    assert build(record(event="INSERT", new=USER_NEW), salt=None)["event"] == S("INSERT")
    AuditClient(AuditSpec(redact=("x",), redaction="drop"), "Audit", "Source", client=object(), writer=True)  # type: ignore[arg-type]


# Values -------------------------------------------------------------------------------------------------------
def test_binary_values_become_bytes_everywhere() -> None:
    # GIVEN Lambda's JSON: binary as base64 text, also in sets, maps and lists
    b64 = base64.b64encode
    new = {"b": {"B": b64(b"\x01").decode()}, "bs": {"BS": [b64(b"x").decode()]},
           "m": {"M": {"l": {"L": [{"B": b64(b"\x02").decode()}]}}}}
    item = build(record(event="INSERT", new=new))
    # THEN the item holds bytes, as the low-level boto3 client needs to write binary
    image = item["image"]["M"]
    assert image["b"] == {"B": b"\x01"} and image["bs"] == {"BS": [b"x"]}
    assert image["m"]["M"]["l"]["L"][0] == {"B": b"\x02"}
    assert item["changes"]["M"]["b"]["M"]["after"] == {"B": b"\x01"}


def test_malformed_values_are_rejected_naming_the_attribute() -> None:
    # GIVEN a binary value that is not base64, and a value that is not typed
    with pytest.raises(KeyValueError, match="'?bin'?.*base64"):
        build(record(event="INSERT", new={"bin": {"B": "not base64!"}}))
    with pytest.raises(KeyValueError, match="raw"):
        build(record(event="INSERT", new={"raw": "plain"}))


def test_large_image_is_omitted_first() -> None:
    # GIVEN an insert of a 300 KB attribute (changes + image would be 600 KB)
    item = build(record(event="INSERT", new={"data": S("x" * 300_000)}))
    # THEN the image is left out and flagged; the change keeps the value; the item fits
    assert "image" not in item and item["image_omitted"] == {"BOOL": True}
    assert item["changes"]["M"]["data"]["M"]["after"] == S("x" * 300_000)
    assert "values_omitted" not in item
    assert wire_item_size(item) <= MAX_ITEM_BYTES


def test_large_change_values_are_replaced_by_digests() -> None:
    # GIVEN a 250 KB attribute replaced by another 250 KB value
    old, new = {"data": S("a" * 250_000), "small": N("1")}, {"data": S("b" * 250_000), "small": N("2")}
    item = build(record(old=old, new=new))
    # THEN image and values are left out, each value replaced by its sha256 digest, and flagged
    change = item["changes"]["M"]["data"]["M"]
    assert change["before"] == S("sha256:" + hashlib.sha256(canonical_json(S("a" * 250_000)).encode()).hexdigest())
    assert change["before"] != change["after"]
    assert item["changes"]["M"]["small"]["M"]["after"]["S"].startswith("sha256:")
    assert (item["image_omitted"], item["values_omitted"]) == ({"BOOL": True}, {"BOOL": True})
    assert wire_item_size(item) <= MAX_ITEM_BYTES


def test_too_many_attributes_keep_the_names_without_the_changes() -> None:
    # GIVEN an insert of 2,500 attributes with long names (digests alone would exceed the limit)
    new = {f"{n:05d}" + "n" * 145: N("1") for n in range(2_500)}
    item = build(record(event="INSERT", new=new))
    # THEN the record is still written: names kept, changes left out and flagged
    assert item["changes_omitted"] == {"BOOL": True} and item["changes"] == {"M": {}}
    assert len(item["changed"]["L"]) == 2_502  # + PK, SK
    assert wire_item_size(item) <= MAX_ITEM_BYTES


# The spec ---------------------------------------------------------------------------------------------------
def test_spec_json_round_trip() -> None:
    # GIVEN a spec with every field set / WHEN serialized and parsed / THEN equal (redact back to a tuple)
    spec = AuditSpec(source_pk_attribute="pk", source_sk_attribute=None, entity_attribute="kind", actor_attribute="who",
                     redact=["email", "phone"], redaction="drop", day_shards=3, retention_seconds=86_400,  # type: ignore[arg-type]
                     audit_ttl_attribute="ttl")
    assert spec.redact == ("email", "phone")
    assert AuditSpec.from_json(spec.to_json()) == spec
    assert json.loads(spec.to_json())["format"] == "constructs_lib.audit"


@pytest.mark.parametrize(
    "text",
    ['{"format": "constructs_lib.counter", "version": 1}', '{"format": "constructs_lib.audit", "version": 2}', "not json", "[]"],
)
def test_spec_from_json_refuses_other_documents(text: str) -> None:
    # GIVEN another format, version or no JSON / THEN refused naming the expected format
    with pytest.raises(SettingsError, match="constructs_lib.audit version 1"):
        AuditSpec.from_json(text)


def test_spec_from_json_refuses_unknown_fields() -> None:
    with pytest.raises(SettingsError, match="unknown or missing fields"):
        AuditSpec.from_json('{"format": "constructs_lib.audit", "version": 1, "shards": 3}')


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"redact": ("PK",)}, "'PK'.*key attributes identify the item and cannot be redacted"),
        ({"redact": ("sk",), "source_sk_attribute": "sk"}, "'sk'.*cannot be redacted"),
        ({"redact": ("_type",)}, "'_type', the entity attribute"),
        ({"redact": "email"}, "sequence of attribute names"),
        ({"redact": ("email", "email")}, "twice"),
        ({"redact": ("",)}, "redact entry ''"),
        ({"redaction": "mask"}, "redaction 'mask' must be 'hash' or 'drop'"),
        ({"day_shards": 0}, "day_shards 0 must be an int from 1 to 100"),
        ({"day_shards": 101}, "day_shards 101"),
        ({"day_shards": True}, "day_shards True"),
        ({"retention_seconds": 3600}, "retention_seconds 3600 must be an int >= 86400"),
        ({"audit_ttl_attribute": "changes"}, "audit_ttl_attribute 'changes'"),
        ({"source_sk_attribute": "PK"}, "must differ"),
        ({"source_pk_attribute": ""}, "source_pk_attribute ''"),
    ],
)
def test_spec_validation_names_value_and_rule(kwargs: dict[str, Any], message: str) -> None:
    # GIVEN a bad spec field / WHEN constructed / THEN a typed error names the value and the rule
    with pytest.raises(SettingsError, match=message):
        AuditSpec(**kwargs)


# Reading records back ---------------------------------------------------------------------------------------
def test_audit_record_from_item_deserializes_everything() -> None:
    # GIVEN a built MODIFY item
    item = build(record(old=USER_OLD, new=USER_NEW, at=T0 + 0.25))
    # WHEN read back
    rec = AuditRecord.from_item(item)
    # THEN values are plain Python (Decimal numbers) and the time is aware UTC
    assert rec.key == {"PK": "USER#1", "SK": "PROFILE"}
    assert (rec.event, rec.entity, rec.actor, rec.changed) == ("MODIFY", "User", "bob", ("age", "updated_by"))
    assert rec.changes["age"] == {"before": Decimal(30), "after": Decimal(31)}
    assert rec.changed_at == datetime(2024, 6, 1, 12, 0, 0, 250_000, tzinfo=UTC)
    assert rec.image is not None and rec.image["name"] == "Ann"
    assert (rec.sequence_number, rec.event_id, rec.source_table, rec.image_omitted) == ("100", "ev-100", "Source", False)


class QueryFake:
    """Answers Query with canned pages and records the parameters (read-side request shapes)."""

    def __init__(self, pages: dict[str, list[dict[str, Any]]]) -> None:
        self.pages, self.calls = pages, []

    def query(self, **params: Any) -> dict[str, Any]:
        self.calls.append(params)
        pages = self.pages.get(params["ExpressionAttributeValues"][":pk"]["S"], [{"Items": []}])
        return pages[0 if "ExclusiveStartKey" not in params else 1]


def test_history_queries_newest_first_with_an_opaque_cursor() -> None:
    # GIVEN an item with two stored changes, served in two pages
    newer, older = build(record("101", new=USER_NEW, old=USER_OLD)), build(record("100", event="INSERT", new=USER_OLD))
    pk = newer["PK"]["S"]
    fake = QueryFake({pk: [{"Items": [newer], "LastEvaluatedKey": {"PK": newer["PK"], "SK": newer["SK"]}}, {"Items": [older]}]})
    client = AuditClient(AuditSpec(), "Audit", "Source", client=fake)  # type: ignore[arg-type]
    # WHEN the history is read page by page, by key and then by entity + model + ids
    first = client.history({"PK": "USER#1", "SK": "PROFILE"}, limit=1)
    model = Model("m", entities=[Entity("User", pk="USER#{id}", sk="PROFILE", fields=["id"])])
    second = client.history(entity="User", model=model, id="1", limit=1, cursor=first.cursor)
    # THEN one Query on the item's partition, newest first, continued from the cursor
    assert [r.sequence_number for r in (*first, *second)] == ["101", "100"]
    assert fake.calls[0]["ScanIndexForward"] is False and fake.calls[0]["Limit"] == 1
    assert fake.calls[1]["ExclusiveStartKey"] == {"PK": newer["PK"], "SK": newer["SK"]}
    assert second.cursor is None
    # AND the cursor cannot be replayed against another item's history
    with pytest.raises(CursorError, match="another item"):
        client.history({"PK": "USER#2", "SK": "PROFILE"}, cursor=first.cursor)


def test_changes_reads_every_day_shard_and_merges_in_time_order() -> None:
    # GIVEN changes of 12 items of one day, spread over 4 shards, with interleaved times
    spec = AuditSpec(day_shards=4)
    items = [build(record(str(100 + n), event="INSERT", keys={"PK": S(f"U{n}"), "SK": S("P")},
                          new={"_type": S("T" if n % 2 else "U")}, at=T0 + (n * 7) % 12), spec) for n in range(12)]
    pages: dict[str, list[dict[str, Any]]] = {}
    for item in sorted(items, key=lambda i: i["GSI1SK"]["S"]):  # each partition answers in index order
        pages.setdefault(item["GSI1PK"]["S"], [{"Items": []}])[0]["Items"].append(item)
    assert len(pages) == 4  # the data really spans every shard
    fake = QueryFake(pages)
    client = AuditClient(spec, "Audit", "Source", client=fake)  # type: ignore[arg-type]
    # WHEN the day's changes are read
    records = client.changes("2024-06-01")
    # THEN each of the 4 partitions of the day is queried on the ByDay index, and the result is in time order
    assert sorted(c["ExpressionAttributeValues"][":pk"]["S"] for c in fake.calls) == [f"DAY#2024-06-01#{n:03d}" for n in range(4)]
    assert {c["IndexName"] for c in fake.calls} == {"ByDay"}
    assert [r.changed_at.second for r in records] == list(range(12))
    # AND an entity filter is sent to DynamoDB as a filter on the audit record's entity
    client.changes(datetime(2024, 6, 1, tzinfo=UTC).date(), entity="T")
    assert fake.calls[-1]["FilterExpression"] == "#e = :e" and fake.calls[-1]["ExpressionAttributeValues"][":e"] == S("T")


def test_as_of_returns_the_image_none_after_a_delete_and_refuses_an_omitted_image() -> None:
    # GIVEN the newest change at or before a time (what the Query with SK <= time returns)
    modify = build(record(new=USER_NEW, old=USER_OLD))
    pk = modify["PK"]["S"]
    client = AuditClient(AuditSpec(), "Audit", "Source", client=QueryFake({pk: [{"Items": [modify]}]}))  # type: ignore[arg-type]
    at = datetime(2024, 6, 1, 12, 0, 5, tzinfo=UTC)
    # THEN as_of is that change's image, deserialized, and the Query is bounded by the time
    expected = {"PK": "USER#1", "SK": "PROFILE", "_type": "User", "name": "Ann", "age": Decimal(31), "updated_by": "bob"}
    assert client.as_of({"PK": "USER#1", "SK": "PROFILE"}, at) == expected
    call = client.client.calls[0]  # type: ignore[attr-defined]
    assert call["ExpressionAttributeValues"][":sk"] == S("2024-06-01T12:00:05.000Z#" + "9" * 40)
    assert call["ScanIndexForward"] is False and call["Limit"] == 1
    # AND None when the item had been deleted by then, an error when the image was omitted
    removed = build(record("101", event="REMOVE", old=USER_NEW))
    client.client = QueryFake({pk: [{"Items": [removed]}]})  # type: ignore[assignment]
    assert client.as_of({"PK": "USER#1", "SK": "PROFILE"}, at) is None
    big = build(record("102", event="INSERT", new={"data": S("x" * 300_000)}))
    client.client = QueryFake({pk: [{"Items": [big]}]})  # type: ignore[assignment]
    with pytest.raises(ImageOmittedError, match="too large"):
        client.as_of({"PK": "USER#1", "SK": "PROFILE"}, at)


# Writing a batch ---------------------------------------------------------------------------------------------
def client_error(code: str, operation: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"fake {code}"}}, operation)


class FakeDynamoDB:
    """Records BatchWriteItem/PutItem calls and stores items by key, with chosen failures.

    ``bad``: sequence numbers DynamoDB rejects (ValidationException fails a whole batch call
    containing one, and its PutItem). ``unprocessed``: sequence number → how many calls leave it
    unprocessed. ``throttle_calls``: the first N BatchWriteItem calls raise throttling.
    """

    def __init__(self, *, bad: set[str] = frozenset(), unprocessed: dict[str, int] | None = None,  # type: ignore[assignment]
                 throttle_calls: int = 0) -> None:
        self.bad, self.unprocessed, self.throttle_calls = set(bad), dict(unprocessed or {}), throttle_calls
        self.calls: list[tuple[str, list[str]]] = []
        self.stored: dict[tuple[str, str], dict[str, Any]] = {}

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        ((table, requests),) = RequestItems.items()
        items = [r["PutRequest"]["Item"] for r in requests]
        self.calls.append(("batch", [i["sequence_number"]["S"] for i in items]))
        assert len(items) <= 25
        if self.throttle_calls:
            self.throttle_calls -= 1
            raise client_error("ProvisionedThroughputExceededException", "BatchWriteItem")
        if any(i["sequence_number"]["S"] in self.bad for i in items):
            raise client_error("ValidationException", "BatchWriteItem")
        left = []
        for item in items:
            seq = item["sequence_number"]["S"]
            if self.unprocessed.get(seq, 0) > 0:
                self.unprocessed[seq] -= 1
                left.append({"PutRequest": {"Item": item}})
            else:
                self.stored[(item["PK"]["S"], item["SK"]["S"])] = item
        return {"UnprocessedItems": {table: left} if left else {}}

    def put_item(self, TableName: str, Item: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("put", [Item["sequence_number"]["S"]]))
        if Item["sequence_number"]["S"] in self.bad:
            raise client_error("ValidationException", "PutItem")
        self.stored[(Item["PK"]["S"], Item["SK"]["S"])] = Item
        return {}

    def stored_seqs(self) -> list[str]:
        return sorted((i["sequence_number"]["S"] for i in self.stored.values()), key=int)


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(_aws, "sleep", slept.append)
    return slept


def batch(n: int) -> list[dict[str, Any]]:
    """n MODIFY records of n different items, sequence numbers 1000, 1001, ..."""
    return [record(str(1000 + i), keys={"PK": S(f"U{i}"), "SK": S("P")}, old={"v": N("1")}, new={"v": N("2")}) for i in range(n)]


def write(fake: FakeDynamoDB, records: list[dict[str, Any]]) -> list[str]:
    return write_records(fake, "Audit", AuditSpec(), "Source", records, SALT)  # type: ignore[arg-type]


def seqs(start: int, stop: int) -> list[str]:
    return [str(1000 + i) for i in range(start, stop)]


def test_batch_is_written_in_chunks_of_25_in_order() -> None:
    # GIVEN 60 records / WHEN written
    fake = FakeDynamoDB()
    failed = write(fake, batch(60))
    # THEN three BatchWriteItem calls of 25, 25 and 10, everything stored, nothing failed
    assert failed == []
    assert [(op, len(s)) for op, s in fake.calls] == [("batch", 25), ("batch", 25), ("batch", 10)]
    assert fake.stored_seqs() == seqs(0, 60)


def test_redelivered_batch_rewrites_the_same_items() -> None:
    # GIVEN a batch written twice (Lambda redelivery) / THEN the same 10 items exist, unchanged
    fake = FakeDynamoDB()
    write(fake, batch(10))
    first = dict(fake.stored)
    write(fake, batch(10))
    assert fake.stored == first and len(fake.stored) == 10


def test_unprocessed_items_are_retried_with_backoff(no_sleep: list[float]) -> None:
    # GIVEN one item left unprocessed twice
    fake = FakeDynamoDB(unprocessed={"1003": 2})
    # WHEN the batch is written
    failed = write(fake, batch(5))
    # THEN only that item is re-sent, after jittered sleeps, and everything is stored
    assert failed == []
    assert fake.calls == [("batch", seqs(0, 5)), ("batch", ["1003"]), ("batch", ["1003"])]
    assert len(no_sleep) == 2
    assert fake.stored_seqs() == seqs(0, 5)


def test_items_still_unprocessed_after_retries_fail_with_every_later_record(no_sleep: list[float]) -> None:
    # GIVEN 60 records and item #30 (second chunk) unprocessed forever
    fake = FakeDynamoDB(unprocessed={"1030": 99})
    # WHEN written
    failed = write(fake, batch(60))
    # THEN #30 and every later record are reported; the chunk is retried 8 times; chunk 3 is never sent
    assert failed == seqs(30, 60)
    assert len([c for c in fake.calls if c[1] == ["1030"]]) == 8
    assert all("1050" not in s for _, s in fake.calls)
    assert len(no_sleep) == 8
    # AND the records before it are stored
    assert set(seqs(0, 30)) <= set(fake.stored_seqs())


def test_throttled_batch_call_is_retried_not_split() -> None:
    # GIVEN a BatchWriteItem that is throttled twice
    fake = FakeDynamoDB(throttle_calls=2)
    # WHEN written / THEN retried as a batch (no PutItem fallback) and stored
    assert write(fake, batch(3)) == []
    assert [op for op, _ in fake.calls] == ["batch", "batch", "batch"]
    assert fake.stored_seqs() == seqs(0, 3)


def test_rejected_batch_falls_back_to_put_item_to_isolate_the_bad_record() -> None:
    # GIVEN 60 records where DynamoDB rejects #37 (so its whole BatchWriteItem call fails)
    fake = FakeDynamoDB(bad={"1037"})
    # WHEN written
    failed = write(fake, batch(60))
    # THEN chunk 2 is redone item by item up to the bad record, which fails with every later record
    assert failed == seqs(37, 60)
    assert [s for op, s in fake.calls if op == "put"] == [[s] for s in seqs(25, 38)]
    assert fake.calls[-1] == ("put", ["1037"])  # nothing written after the failure
    assert fake.stored_seqs() == seqs(0, 37)


def test_rejected_batch_whose_items_all_succeed_alone_is_not_a_failure() -> None:
    # GIVEN a batch call that fails once for a non-throttling reason, then every PutItem succeeds
    fake = FakeDynamoDB()
    original = fake.batch_write_item

    def fail_first(RequestItems: dict[str, Any]) -> dict[str, Any]:
        fake.batch_write_item = original  # type: ignore[method-assign]
        raise client_error("InternalServerError", "BatchWriteItem")

    fake.batch_write_item = fail_first  # type: ignore[method-assign]
    # WHEN written / THEN all stored by PutItem and nothing reported
    assert write(fake, batch(4)) == []
    assert fake.stored_seqs() == seqs(0, 4)


def test_record_that_cannot_be_built_fails_with_every_later_record() -> None:
    # GIVEN 40 records where #30 has an unknown eventName
    records = batch(40)
    records[30]["eventName"] = "UPSERT"
    fake = FakeDynamoDB()
    # WHEN written
    failed = write(fake, records)
    # THEN the 30 before it are stored, and #30 onwards are reported (nothing dropped)
    assert failed == seqs(30, 40)
    assert fake.stored_seqs() == seqs(0, 30)


def test_record_without_sequence_number_fails_the_whole_batch() -> None:
    # GIVEN a record Lambda could not identify / THEN the invocation fails before writing anything
    records = batch(3)
    del records[1]["dynamodb"]["SequenceNumber"]
    fake = FakeDynamoDB()
    with pytest.raises(KeyValueError, match="record #1"):
        write(fake, records)
    assert fake.calls == []


def test_batch_summary_is_logged_as_json(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a batch with a bad record / WHEN written
    caplog.set_level(logging.INFO, logger="constructs_lib.audit")
    write(FakeDynamoDB(bad={"1002"}), batch(4))
    # THEN one JSON summary line carries the counts
    summaries = [json.loads(r.message) for r in caplog.records if '"audited"' in r.message]
    assert summaries == [{"msg": "audited", "source_table": "Source", "records": 4, "written": 2, "failed": 2,
                          "first_failed": "1002"}]


# The handler ------------------------------------------------------------------------------------------------
@pytest.fixture
def lambda_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The audit function's environment, with make_client returning a fake."""
    made: dict[str, Any] = {"fake": FakeDynamoDB(), "count": 0, "secret_reads": []}

    class Secrets:
        def get_secret_value(self, SecretId: str) -> dict[str, str]:
            made["secret_reads"].append(SecretId)
            return {"SecretString": "salt-from-the-secret"}

    def make_client(*, service: str = "dynamodb", **kwargs: Any) -> Any:
        if service == "secretsmanager":
            return Secrets()
        made["count"] += 1
        return made["fake"]

    monkeypatch.setattr(_aws, "make_client", make_client)
    monkeypatch.setattr(audit_handler, "_client", None)
    monkeypatch.setenv(ENV_AUDIT_SPEC, AuditSpec(redact=("email",)).to_json())
    monkeypatch.setenv(ENV_AUDIT_TABLE, "Audit")
    monkeypatch.setenv(ENV_SOURCE_TABLE, "Source")
    monkeypatch.setenv(ENV_AUDIT_SALT, SALT)
    return made


def test_handler_reports_partial_batch_failures(lambda_env: dict[str, Any]) -> None:
    # GIVEN the audit function's environment and a batch whose 3rd record DynamoDB rejects
    lambda_env["fake"].bad = {"1002"}
    # WHEN invoked twice (a warm execution environment)
    result = audit_handler.handler({"Records": batch(5)}, None)
    audit_handler.handler({"Records": batch(1)}, None)
    # THEN the failures are the 3rd record and every later one, and the client was built once
    assert result == {"batchItemFailures": [{"itemIdentifier": s} for s in seqs(2, 5)]}
    assert lambda_env["count"] == 1


def test_handler_refuses_to_start_without_a_salt(lambda_env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN hash redaction and no salt in the environment
    monkeypatch.delenv(ENV_AUDIT_SALT)
    # WHEN invoked / THEN it fails loudly before building a client or writing anything
    with pytest.raises(RedactionError, match="refusing to hash without a salt"):
        audit_handler.handler({"Records": batch(1)}, None)
    assert lambda_env["count"] == 0 and lambda_env["fake"].calls == []


def test_salt_is_read_from_its_secret_once_by_the_writer_only(
        lambda_env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the salt given as a Secrets Manager secret (how the construct deploys it), not as text
    monkeypatch.delenv(ENV_AUDIT_SALT)
    monkeypatch.setenv(ENV_AUDIT_SALT_SECRET, "arn:aws:secretsmanager:us-east-1:1:secret:salt")
    # WHEN the audit function handles two batches
    audit_handler.handler({"Records": [record(event="INSERT", new={"email": S(SECRET_NEW)})]}, None)
    audit_handler.handler({"Records": batch(1)}, None)
    # THEN the secret was read once (cold start) and its value is the HMAC key
    assert lambda_env["secret_reads"] == ["arn:aws:secretsmanager:us-east-1:1:secret:salt"]
    stored = next(iter(lambda_env["fake"].stored.values()))
    expected = hmac.new(b"salt-from-the-secret", canonical_json(S(SECRET_NEW)).encode(), hashlib.sha256).hexdigest()
    assert stored["changes"]["M"]["email"]["M"]["after"] == S("sha256:" + expected)
    # AND a reading client never fetches the secret
    AuditClient.from_environment()
    assert len(lambda_env["secret_reads"]) == 1


def test_salt_text_in_the_environment_wins_over_the_secret(lambda_env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN both a salt and a secret ARN (a local run overriding the deployed secret)
    monkeypatch.setenv(ENV_AUDIT_SALT_SECRET, "arn:aws:secretsmanager:us-east-1:1:secret:salt")
    # WHEN the writer client is built / THEN the text salt is used and the secret is not read
    client = AuditClient.from_environment(writer=True)
    assert client.salt == SALT and lambda_env["secret_reads"] == []
