"""The inline fast paths of the wire format give exactly what boto3's (de)serializer gives."""

from __future__ import annotations

from decimal import Decimal

import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer

from constructs_lib.model import Entity, Model
from constructs_lib.runtime import _aws
from constructs_lib.runtime.items import ItemMapper

VALUES = [
    "", "text", "naïve ✓", True, False, None, 0, 7, -7, 10**17, -(10**17), 10**18, -(10**18), 10**37, 12345678901234567890,
    Decimal("1.5"), Decimal("-0.25"), Decimal("1E+2"), Decimal("1.0"), Decimal(100), b"\x00bytes", Binary(b"b"),
    [1, "a", [Decimal("2.5")]], {"k": {"n": 3, "s": "x"}}, {1, 2}, {"a", "b"}, {b"x"},
]
STORED = [
    {"S": "x"}, {"S": ""}, {"N": "0"}, {"N": "42"}, {"N": "-42"}, {"N": "123456789012345678"},
    {"N": "1234567890123456789"}, {"N": "1.50"}, {"N": "1E+2"}, {"N": "1.0"}, {"N": "٣"}, {"N": "0.000001"},
    {"BOOL": True}, {"NULL": True}, {"B": b"\x01"}, {"SS": ["a", "b"]}, {"NS": ["1", "2.5"]}, {"BS": [b"z"]},
    {"L": [{"N": "1"}, {"S": "a"}]}, {"M": {"n": {"N": "3"}, "l": {"L": []}}},
]


def _id(value: object) -> str:
    """The value's repr, a set's members sorted: the same test ids in every process (a set of
    strings iterates in an order that depends on the hash seed, and pytest-xdist workers must
    collect identical ids)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(repr, value))) + "}"
    return repr(value)


@pytest.mark.parametrize("value", VALUES, ids=_id)
def test_serialize_matches_type_serializer(value: object) -> None:
    # GIVEN a value an item may hold WHEN it is serialized THEN the wire form is boto3's
    assert _aws.serialize({"a": value}) == {"a": TypeSerializer().serialize(value)}


@pytest.mark.parametrize("value", STORED, ids=repr)
def test_decode_wire_matches_decode_of_deserialized(value: dict[str, object]) -> None:
    # GIVEN a stored attribute next to an entity's keys
    model = Model("w", entities=[Entity("T", pk="T#{id}", fields=["id"])])
    mapper = ItemMapper(model)
    item = {"PK": {"S": "T#1"}, "_type": {"S": "T"}, "id": {"S": "1"}, "v": value}
    # WHEN decoded in one pass, raw or not
    # THEN the result is the decode of boto3's deserialization
    deserialized = {k: TypeDeserializer().deserialize(v) for k, v in item.items()}
    assert mapper.decode_wire(item) == mapper.decode(deserialized)
    assert mapper.decode_wire(item, raw=True) == mapper.decode(deserialized, raw=True)
    assert _aws.deserialize(item) == deserialized


def test_decode_wire_recovers_fields_missing_from_a_keys_only_projection() -> None:
    # GIVEN an item projected KEYS_ONLY: its fields only in its key
    model = Model("w", entities=[Entity("T", pk="T#{id}", sk="AT#{n}", fields={"id": "string", "n": "number:4"})])
    mapper = ItemMapper(model)
    item = {"PK": {"S": "T#a%23b"}, "SK": {"S": "AT#0042"}, "_type": {"S": "T"}}
    # WHEN decoded THEN the fields are parsed back from the keys, and the keys are dropped
    assert mapper.decode_wire(item) == {"_type": "T", "id": "a#b", "n": 42}


def test_default_dynamodb_clients_skip_client_side_parameter_validation() -> None:
    # GIVEN the configuration of the clients the runtime makes
    dynamodb, secrets = _aws.client_config(), _aws.client_config(service="secretsmanager")
    # THEN DynamoDB requests (all built by the runtime) are not validated again by botocore; others are
    assert dynamodb.parameter_validation is False and secrets.parameter_validation is True
    assert dynamodb.retries == {"mode": "adaptive", "max_attempts": 10}
    with pytest.raises(ValueError, match="retry_mode 'fast'"):
        _aws.client_config(retry_mode="fast")


@pytest.mark.parametrize("text", [f"1.{'2' * 37}E-129", f"-9.{'9' * 37}E-130", f"1.{'0' * 36}1E-130"])
def test_numbers_below_boto3s_context_are_sent_and_read_exactly(text: str) -> None:
    # GIVEN a number DynamoDB stores with 38 digits below 1E-128, which boto3's context refuses
    number = Decimal(text)
    with pytest.raises(ArithmeticError):
        TypeSerializer().serialize(number)
    # WHEN the runtime serializes it, in a set and a list too, and reads the wire form back
    wire = _aws.serialize({"n": number, "ns": {number}, "l": [number]})
    # THEN the wire form is the number's own text and it reads back exactly
    assert wire == {"n": {"N": text}, "ns": {"NS": [text]}, "l": {"L": [{"N": text}]}}
    assert _aws.deserialize(wire) == {"n": number, "ns": {number}, "l": [number]}


@pytest.mark.parametrize("text", ["1" + "0" * 40, "-123" + "0" * 60, "9" * 38 + "0" * 88])
def test_numbers_of_39_digits_or_more_as_dynamodb_returns_them_are_read_exactly(text: str) -> None:
    # GIVEN a number as DynamoDB returns it, its trailing zeros written out, which boto3 refuses
    with pytest.raises(ArithmeticError):
        TypeDeserializer().deserialize({"N": text})
    # WHEN the runtime reads it, alone, in a set and in a map THEN it is that number
    wire = {"n": {"N": text}, "ns": {"NS": [text]}, "m": {"M": {"x": {"N": text}}}}
    assert _aws.deserialize(wire) == {"n": Decimal(text), "ns": {Decimal(text)}, "m": {"x": Decimal(text)}}
