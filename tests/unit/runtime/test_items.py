"""Unit tests for constructs_lib.runtime.items (stored items, derived keys, update plans)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from constructs_lib.model import Entity, Index, IndexKey, Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.exceptions import (
    ItemValidationError,
    KeyValueError,
    UpdateRejectedError,
)
from constructs_lib.runtime.items import ItemMapper
from constructs_lib.runtime.limits import MAX_ITEM_BYTES
from constructs_lib.runtime.sharding import stable_shard
from constructs_lib.runtime.values import item_size
from examples.shop.model import shop_model

CODEC = ItemMapper(shop_model)
USER = shop_model.entities["User"]
ORDER = shop_model.entities["Order"]
ORDER_ITEM = shop_model.entities["OrderItem"]

CREATED = "2024-06-01T12:00:00.000000Z"
ORDER_KEY = {"user_id": "u1", "order_id": "o1", "created_at": CREATED}
GSI2 = {"GSI2PK", "GSI2SK"}
GSI1 = {"GSI1PK", "GSI1SK"}


def order_attrs(**extra: Any) -> dict[str, Any]:
    return {**ORDER_KEY, "status": "PAID", **extra}


# --------------------------------------------------------------------------- build_item


def test_build_item_adds_type_table_and_gsi_keys() -> None:
    # GIVEN a user's attributes
    attrs = {"user_id": "u1", "email": "ann@example.com", "name": "Ann"}
    # WHEN the stored item is built
    item = CODEC.build_item(USER, attrs)
    # THEN it carries the entity attribute, the table key and the GSI1 key, plus the attributes
    assert item == {
        **attrs,
        "_type": "User",
        "PK": "USER#u1",
        "SK": "PROFILE",
        "GSI1PK": "EMAIL#ann@example.com",
        "GSI1SK": "USER",
    }


def test_build_item_canonicalizes_timestamp_fields() -> None:
    # GIVEN an order whose timestamp is a non-UTC aware datetime
    at = datetime(2024, 6, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    # WHEN the stored item is built
    item = CODEC.build_item(ORDER, order_attrs(created_at=at))
    # THEN the attribute holds the same canonical UTC text as the sort key
    assert item["created_at"] == CREATED
    assert item["SK"] == f"ORDER#{CREATED}#o1"
    assert item["GSI1PK"] == "ORDER#o1" and item["GSI1SK"] == "ORDER"


@pytest.mark.parametrize(("status", "in_gsi2"), [("PENDING", True), ("PAID", False), ("SHIPPED", False)])
def test_sparse_gsi2_only_for_pending_orders(status: str, in_gsi2: bool) -> None:
    # GIVEN an order in some status
    # WHEN the stored item is built
    item = CODEC.build_item(ORDER, order_attrs(status=status))
    # THEN it carries GSI2 keys only when PENDING
    assert (GSI2 <= set(item)) is in_gsi2
    assert not (GSI2 & set(item)) or in_gsi2
    if in_gsi2:
        assert item["GSI2PK"] == "STATUS#PENDING"
        assert item["GSI2SK"] == f"{CREATED}#o1"


def test_enum_field_rejects_undeclared_value() -> None:
    # GIVEN an order status outside the declared choices
    # WHEN the item is built / THEN the attribute, value and choices are named
    with pytest.raises(ItemValidationError) as info:
        CODEC.build_item(ORDER, order_attrs(status="LOST"))
    message = str(info.value)
    assert "Order.status" in message and "'LOST'" in message and "'PENDING'" in message


@pytest.mark.parametrize(
    ("entity", "attrs", "missing"),
    [
        (USER, {"user_id": "u1"}, "email"),
        (USER, {"email": "a@x"}, "user_id"),
        (ORDER, {**ORDER_KEY}, "status"),
        (ORDER_ITEM, {"order_id": "o1", "line": 1, "sku": "S"}, "quantity"),
        (ORDER_ITEM, {"order_id": "o1", "line": 1, "sku": "S", "quantity": None}, "quantity"),
    ],
)
def test_missing_required_attribute(entity: Entity, attrs: dict[str, Any], missing: str) -> None:
    # GIVEN attributes lacking a table-key field or a declared required attribute
    # WHEN the item is built / THEN the missing attribute is named
    with pytest.raises(ItemValidationError) as info:
        CODEC.build_item(entity, attrs)
    assert repr(missing) in str(info.value)
    assert entity.name in str(info.value)


@pytest.mark.parametrize("reserved", ["PK", "SK", "GSI1PK", "GSI2SK"])
def test_reserved_attribute_given(reserved: str) -> None:
    # GIVEN an item that sets a key attribute itself
    # WHEN built / THEN the attribute is named as managed by the model
    with pytest.raises(ItemValidationError) as info:
        CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", reserved: "forged"})
    assert repr(reserved) in str(info.value) and "managed by the model" in str(info.value)


def test_entity_attribute_of_another_entity_rejected() -> None:
    # GIVEN a User item claiming to be an Order / WHEN built / THEN rejected
    with pytest.raises(ItemValidationError, match="'_type'"):
        CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "_type": "Order"})
    # AND the entity's own name is tolerated
    assert CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "_type": "User"})["_type"] == "User"


def test_floats_become_decimals_recursively() -> None:
    # GIVEN float values, nested in maps, lists and sets
    attrs = {"user_id": "u1", "email": "a@x", "score": 0.1, "nested": {"xs": [1.5, 2]}, "tags": {2.25}}
    # WHEN the item is built
    item = CODEC.build_item(USER, attrs)
    # THEN floats are exact Decimals of their repr; ints stay ints
    assert item["score"] == Decimal("0.1") and isinstance(item["score"], Decimal)
    assert item["nested"] == {"xs": [Decimal("1.5"), 2]}
    assert item["tags"] == {Decimal("2.25")}


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), [1.0, float("nan")]])
def test_non_finite_floats_rejected(bad: Any) -> None:
    # GIVEN a NaN/infinite float anywhere / WHEN built / THEN the attribute is named
    with pytest.raises(ItemValidationError, match="User.score"):
        CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "score": bad})


@pytest.mark.parametrize("bad", [set(), object(), datetime(2024, 1, 1, tzinfo=UTC)])
def test_unstorable_values_rejected(bad: Any) -> None:
    # GIVEN an empty set, an arbitrary object, or a datetime in an undeclared attribute
    # WHEN built / THEN the attribute is named
    with pytest.raises(ItemValidationError, match="User.extra"):
        CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "extra": bad})


def test_none_attributes_are_dropped() -> None:
    # GIVEN an optional attribute set to None / WHEN built / THEN it is not stored
    assert "nickname" not in CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "nickname": None})


def test_oversized_item_rejected_before_any_call() -> None:
    # GIVEN a client whose boto3 client records every call, and an item over 400 KB
    calls: list[str] = []

    class RecordingClient:
        def __getattr__(self, name: str) -> Any:
            calls.append(name)
            raise AssertionError(f"unexpected AWS call {name}")

    table = TableClient(shop_model, "t", client=RecordingClient())  # type: ignore[arg-type]
    big = {"user_id": "u1", "email": "a@x", "bio": "x" * MAX_ITEM_BYTES}
    # WHEN the item is built or put
    with pytest.raises(ItemValidationError) as info:
        CODEC.build_item(USER, big)
    with pytest.raises(ItemValidationError):
        table.put("User", big)
    # THEN the size and the limit are named and nothing reached the client
    assert "400 KB" in str(info.value) and str(MAX_ITEM_BYTES) in str(info.value)
    assert calls == []


def test_item_just_under_limit_accepted() -> None:
    # GIVEN an item whose size is exactly the limit
    base = CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "bio": ""})
    pad = MAX_ITEM_BYTES - item_size(base)
    # WHEN built with the padding / THEN accepted, and one more byte is rejected
    assert item_size(CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "bio": "x" * pad})) == MAX_ITEM_BYTES
    with pytest.raises(ItemValidationError):
        CODEC.build_item(USER, {"user_id": "u1", "email": "a@x", "bio": "x" * (pad + 1)})


def test_item_size_counts_utf8_bytes() -> None:
    # GIVEN a name and a value with multi-byte characters / WHEN sized / THEN UTF-8 bytes are counted
    assert item_size({"é": "😀"}) == 2 + 4
    assert item_size({"n": 12345}) == 1 + 4  # 5 digits -> 3 bytes + 1
    assert item_size({"b": True, "m": {"k": "v"}}) == 1 + 1 + 1 + (3 + 1 + 1 + 1)


# --------------------------------------------------------------------------- plan_update


def test_setting_pending_recomputes_gsi2_keys_from_table_key() -> None:
    # GIVEN an update setting only status=PENDING (created_at/order_id come from the table key)
    # WHEN planned
    plan = CODEC.plan_update(ORDER, ORDER_KEY, {"status": "PENDING"}, [])
    # THEN GSI2 keys are set in the same update (and GSI3's, in the order's shard), nothing is removed
    shard = stable_shard("o1", 4)
    assert plan.set == {"status": "PENDING", "GSI2PK": "STATUS#PENDING", "GSI2SK": f"{CREATED}#o1",
                        "GSI3PK": f"STATUS#PENDING#{shard:02d}", "GSI3SK": f"{CREATED}#o1"}
    assert plan.remove == []


def test_setting_shipped_removes_gsi2_keys() -> None:
    # GIVEN an update moving an order out of PENDING
    # WHEN planned
    plan = CODEC.plan_update(ORDER, ORDER_KEY, {"status": "SHIPPED"}, [])
    # THEN the sparse GSI2 key attributes are removed, status is set (and GSI3's keys follow it)
    assert plan.set == {"status": "SHIPPED", "GSI3PK": f"STATUS#SHIPPED#{stable_shard('o1', 4):02d}",
                        "GSI3SK": f"{CREATED}#o1"}
    assert sorted(plan.remove) == ["GSI2PK", "GSI2SK"]


def test_setting_email_recomputes_gsi1() -> None:
    # GIVEN a user changing email / WHEN planned / THEN GSI1PK follows
    plan = CODEC.plan_update(USER, {"user_id": "u1"}, {"email": "new@example.com"}, [])
    assert plan.set == {"email": "new@example.com", "GSI1PK": "EMAIL#new@example.com", "GSI1SK": "USER"}
    assert plan.remove == []


@pytest.mark.parametrize("how", ["remove", "set None"])
def test_removing_a_required_gsi_input_is_rejected(how: str) -> None:
    # GIVEN an update removing the user's required email (explicitly, or by setting None)
    set_values, remove = ({}, ["email"]) if how == "remove" else ({"email": None}, [])
    # WHEN planned THEN it is rejected naming the attribute and the rule
    with pytest.raises(UpdateRejectedError, match=r"'email' is a required attribute"):
        CODEC.plan_update(USER, {"user_id": "u1"}, set_values, remove)


@pytest.mark.parametrize("how", ["remove", "set None"])
def test_removing_an_optional_gsi_input_removes_its_index_keys(how: str) -> None:
    # GIVEN a model where the user's email (GSI1 input) is optional
    user = dataclasses.replace(USER, required=())
    mapper = ItemMapper(Model("m", entities=[user], indexes=[Index("GSI1")]))
    set_values, remove = ({}, ["email"]) if how == "remove" else ({"email": None}, [])
    # WHEN an update removes it
    plan = mapper.plan_update(user, {"user_id": "u1"}, set_values, remove)
    # THEN the email and both GSI1 key attributes are removed
    assert plan.set == {}
    assert sorted(plan.remove) == ["GSI1PK", "GSI1SK", "email"]


def test_unrelated_update_touches_no_keys() -> None:
    # GIVEN an update of a free-form attribute / WHEN planned / THEN no key attribute appears
    plan = CODEC.plan_update(ORDER, ORDER_KEY, {"note": "gift", "total": 9.5}, [])
    assert plan.set == {"note": "gift", "total": Decimal("9.5")}
    assert plan.remove == []


@pytest.mark.parametrize(
    ("entity", "key", "set_values", "remove", "field"),
    [
        (ORDER, ORDER_KEY, {"created_at": "2025-01-01T00:00:00Z"}, [], "created_at"),
        (ORDER, ORDER_KEY, {"order_id": "o2"}, [], "order_id"),
        (ORDER, ORDER_KEY, {}, ["user_id"], "user_id"),
        (USER, {"user_id": "u1"}, {"user_id": "u2"}, [], "user_id"),
    ],
)
def test_updating_table_key_field_rejected(
    entity: Entity, key: dict[str, Any], set_values: dict[str, Any], remove: list[str], field: str
) -> None:
    # GIVEN an update that would change the table key
    # WHEN planned / THEN it is rejected naming the field and the key template
    with pytest.raises(UpdateRejectedError) as info:
        CODEC.plan_update(entity, key, set_values, remove)
    assert repr(field) in str(info.value) and "table key" in str(info.value)


def test_updating_version_attribute_rejected() -> None:
    # GIVEN an update setting User.version directly / WHEN planned / THEN rejected naming it
    with pytest.raises(UpdateRejectedError, match="'version'"):
        CODEC.plan_update(USER, {"user_id": "u1"}, {"version": 3}, [])


def test_removing_managed_attribute_rejected() -> None:
    # GIVEN an update removing a GSI key attribute directly / WHEN planned / THEN rejected
    with pytest.raises(UpdateRejectedError, match="'GSI1PK'"):
        CODEC.plan_update(USER, {"user_id": "u1"}, {}, ["GSI1PK"])


def test_set_and_remove_same_attribute_rejected() -> None:
    # GIVEN an update that sets and removes one attribute / WHEN planned / THEN it is named
    with pytest.raises(UpdateRejectedError, match="'note'"):
        CODEC.plan_update(ORDER, ORDER_KEY, {"note": "x"}, ["note"])


def test_update_rejects_undeclared_enum_value() -> None:
    # GIVEN an update setting status outside its choices / WHEN planned / THEN rejected naming it
    with pytest.raises(ItemValidationError, match="'LOST'"):
        CODEC.plan_update(ORDER, ORDER_KEY, {"status": "LOST"}, [])


CITY_MODEL = Model(
    "cities",
    entities=[
        Entity(
            "Person",
            pk="PERSON#{id}",
            sk="META",
            fields=["id", "country", "city", "nick"],
            indexes={
                "GSI1": IndexKey(pk="CITY#{country}#{city}", sk="{id}"),
                "GSI2": IndexKey(pk="NICK#{nick}", sk="{id}", when_present="verified"),
            },
        )
    ],
    indexes=[Index("GSI1"), Index("GSI2")],
)
CITY_CODEC = ItemMapper(CITY_MODEL)
PERSON = CITY_MODEL.entities["Person"]


def test_setting_one_of_two_gsi_inputs_rejected() -> None:
    # GIVEN a GSI pk built from country and city, and an update setting only city
    # WHEN planned / THEN it is rejected naming the missing country and the index
    with pytest.raises(UpdateRejectedError) as info:
        CITY_CODEC.plan_update(PERSON, {"id": "p1"}, {"city": "Lyon"}, [])
    message = str(info.value)
    assert "['country']" in message and "'GSI1'" in message and "['city']" in message


def test_setting_both_gsi_inputs_recomputes_key() -> None:
    # GIVEN an update setting country and city together / WHEN planned / THEN GSI1 keys are set
    plan = CITY_CODEC.plan_update(PERSON, {"id": "p1"}, {"city": "Lyon", "country": "FR"}, [])
    assert plan.set == {"city": "Lyon", "country": "FR", "GSI1PK": "CITY#FR#Lyon", "GSI1SK": "p1"}


def test_removing_one_gsi_input_removes_index_keys() -> None:
    # GIVEN an update removing city / WHEN planned / THEN GSI1 keys are removed (no other input needed)
    plan = CITY_CODEC.plan_update(PERSON, {"id": "p1"}, {}, ["city"])
    assert sorted(plan.remove) == ["GSI1PK", "GSI1SK", "city"]


def test_when_present_condition_is_an_index_input() -> None:
    # GIVEN a GSI with when_present="verified"
    # WHEN the nick is set without verified / THEN rejected naming verified
    with pytest.raises(UpdateRejectedError, match="'verified'"):
        CITY_CODEC.plan_update(PERSON, {"id": "p1"}, {"nick": "pj"}, [])
    # AND setting both puts the item into the index
    plan = CITY_CODEC.plan_update(PERSON, {"id": "p1"}, {"nick": "pj", "verified": True}, [])
    assert plan.set["GSI2PK"] == "NICK#pj" and plan.set["GSI2SK"] == "p1"
    # AND removing verified takes it out
    assert sorted(CITY_CODEC.plan_update(PERSON, {"id": "p1"}, {}, ["verified"]).remove) == [
        "GSI2PK", "GSI2SK", "verified",
    ]


def test_put_without_all_gsi_inputs_skips_index() -> None:
    # GIVEN a person with a city but no country / WHEN built / THEN it is not in GSI1
    item = CITY_CODEC.build_item(PERSON, {"id": "p1", "city": "Lyon"})
    assert not ({"GSI1PK", "GSI1SK"} & set(item))
    assert item["PK"] == "PERSON#p1"


# --------------------------------------------------------------------------- decode


def test_decode_keys_only_projection_parses_fields_from_table_and_index_keys() -> None:
    # GIVEN a GSI2 (KEYS_ONLY, synthesized as INCLUDE [_type]) item: keys and entity only
    stored = {
        "PK": "USER#u%231",
        "SK": f"ORDER#{CREATED}#o1",
        "GSI2PK": "STATUS#PENDING",
        "GSI2SK": f"{CREATED}#o1",
        "_type": "Order",
    }
    # WHEN decoded
    item = CODEC.decode(stored)
    # THEN key attributes are dropped and the fields of table and index keys are parsed back
    # in stored form (status comes from GSI2PK)
    assert item == {"_type": "Order", "user_id": "u#1", "created_at": CREATED, "order_id": "o1", "status": "PENDING"}


def test_decode_full_item_round_trip() -> None:
    # GIVEN a stored order line, with numbers as DynamoDB returns them (Decimal)
    stored = CODEC.build_item(ORDER_ITEM, {"order_id": "o1", "line": 3, "sku": "S", "quantity": 2, "price": 1.25})
    stored = {k: (Decimal(v) if isinstance(v, int) else v) for k, v in stored.items()}
    # WHEN decoded
    item = CODEC.decode(stored)
    # THEN integral numbers are ints, fractional stay Decimal, keys are gone
    assert item == {"_type": "OrderItem", "order_id": "o1", "line": 3, "sku": "S", "quantity": 2, "price": Decimal("1.25")}
    assert isinstance(item["line"], int)


def test_decode_raw_keeps_keys() -> None:
    # GIVEN a stored user / WHEN decoded raw / THEN key attributes are kept
    stored = CODEC.build_item(USER, {"user_id": "u1", "email": "a@x"})
    assert CODEC.decode(stored, raw=True) == stored


def test_decode_drops_bucket_components() -> None:
    # GIVEN a bucketed-partition entity item with only keys and entity
    model = Model(
        "sensors",
        entities=[Entity("Reading", pk="S#{sensor_id}#{at:month}", sk="{at}", fields={"sensor_id": "string", "at": "timestamp"})],
    )
    mapper = ItemMapper(model)
    stored = {"PK": "S#s1#2024-06", "SK": "2024-06-30T22:00:00.000000Z", "_type": "Reading"}
    # WHEN decoded / THEN fields come back and the "at:month" bucket text is not exposed
    assert mapper.decode(stored) == {"_type": "Reading", "sensor_id": "s1", "at": "2024-06-30T22:00:00.000000Z"}


def test_decode_unknown_entity_only_drops_keys() -> None:
    # GIVEN an item without a known entity / WHEN decoded / THEN keys are dropped, nothing is parsed
    assert CODEC.decode({"PK": "X#1", "SK": "Y", "a": Decimal("2")}) == {"a": 2}


def test_decode_rejects_foreign_key() -> None:
    # GIVEN an item whose PK does not match its entity's template / WHEN decoded / THEN KeyValueError
    with pytest.raises(KeyValueError, match="'USER#{user_id}'"):
        CODEC.decode({"PK": "PRODUCT#p1", "SK": "PROFILE", "_type": "User"})


def test_large_round_numbers_are_stored_in_exponent_form() -> None:
    # GIVEN 10**40 (41 digits written out, 1 significant) WHEN made storable
    from decimal import Decimal

    from constructs_lib.runtime.items import to_dynamo
    value = to_dynamo(10**40, where="x")
    # THEN it is the same number with its trailing zeros in the exponent, which boto3 accepts
    assert value == Decimal("1E+40") and len(value.as_tuple().digits) == 1
    from boto3.dynamodb.types import TypeSerializer
    assert TypeSerializer().serialize(value) == {"N": "1E+40"}


def test_fast_deserializer_matches_boto3_for_every_attribute_type() -> None:
    # GIVEN an item in wire format with every DynamoDB attribute type, odd numbers included
    from boto3.dynamodb.types import TypeDeserializer

    from constructs_lib.runtime import _aws

    wire = {
        "s": {"S": "é#x"}, "empty": {"S": ""}, "n": {"N": "-0012.50"}, "big": {"N": "1E+125"},
        "int": {"N": "42"}, "t": {"BOOL": True}, "f": {"BOOL": False}, "null": {"NULL": True},
        "b": {"B": b"\x00\x01"}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b"x"]},
        "l": {"L": [{"S": "a"}, {"N": "1"}]}, "m": {"M": {"k": {"N": "3"}, "nested": {"L": []}}},
    }
    # WHEN deserialized by the runtime and by boto3
    ours = _aws.deserialize(wire)
    theirs = {k: TypeDeserializer().deserialize(v) for k, v in wire.items()}
    # THEN the values and their types are identical
    assert ours == theirs
    assert {k: type(v) for k, v in ours.items()} == {k: type(v) for k, v in theirs.items()}
