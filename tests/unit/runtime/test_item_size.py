"""The one item-size rule (runtime.values): DynamoDB's documented rule, the same for an item in
Python form (items, backfill budgets) and in wire form (the audit writer), ADR 0047."""

from __future__ import annotations

import base64
import os
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.runtime import _aws
from constructs_lib.runtime.handlers import audit as audit_handler
from constructs_lib.runtime.values import item_size, number_size, wire_item_size

EXAMPLES = 200 * (10 if os.environ.get("CONSTRUCTS_LIB_SOAK") == "1" else 1)


def _stream_json(value: Any) -> Any:
    """A wire value as Lambda's stream JSON holds it: binary values as base64 text."""
    ((tag, inner),) = value.items()
    if tag == "B":
        return {"B": base64.b64encode(inner).decode()}
    if tag == "BS":
        return {"BS": [base64.b64encode(b).decode() for b in inner]}
    if tag == "M":
        return {"M": {k: _stream_json(v) for k, v in inner.items()}}
    if tag == "L":
        return {"L": [_stream_json(v) for v in inner]}
    return value


@pytest.mark.parametrize(("item", "size"), [
    # strings and names: UTF-8 bytes (unicode names too)
    ({"é": "😀"}, 2 + 4),
    ({"名前": ""}, 6 + 0),
    # numbers: 1 byte per two significant digits (leading and trailing zeros trimmed, pairs aligned
    # on the decimal point) + 1
    ({"n": 12345}, 1 + 4),
    ({"n": 0}, 1 + 1),  # zero: one byte
    ({"n": -12}, 1 + 3),  # a negative number: one byte more
    ({"n": 1200000}, 1 + 3),  # 01 20 (00 00)
    ({"n": Decimal("-0.0012")}, 1 + 3),
    ({"n": Decimal("1.5")}, 1 + 3),  # 01.50: two pairs
    ({"n": Decimal("123.456")}, 1 + 5),  # 01 23 . 45 60
    ({"n": Decimal("12.3456")}, 1 + 4),
    ({"n": 10**37 + 1}, 1 + 20),
    ({"n": -(10**37 + 1)}, 1 + 21),  # 19 pairs and the sign
    # 38 digits spanning 20 pairs (not aligned on the decimal point): no sign byte
    ({"n": Decimal("9." + "9" * 37)}, 1 + 21),
    ({"n": Decimal("-9." + "9" * 37)}, 1 + 21),
    ({"n": Decimal("-1." + "0" * 36 + "1E-120")}, 1 + 21),
    ({"n": Decimal("-" + "9" * 38 + "E+1")}, 1 + 21),  # 38 nines then a zero: 20 pairs
    ({"n": Decimal("-99." + "9" * 36)}, 1 + 21),  # 38 digits aligned: 19 pairs and the sign
    ({"ns": {Decimal("-9." + "9" * 37), -1}}, 2 + 21 + 3),
    ({"l": [Decimal("-9." + "9" * 37)]}, 1 + 3 + 1 + 21),
    # binary: raw bytes
    ({"b": b"\x00\x01\x02"}, 1 + 3),
    ({"b": b""}, 1 + 0),
    # booleans and null: 1 byte
    ({"t": True, "z": None}, 2 + 2),
    # sets: the sum of their elements
    ({"ss": {"ab", "c"}}, 2 + 3),
    ({"ns": {1, 22, 333}}, 2 + 2 + 2 + 3),
    ({"bs": {b"ab", b"c"}}, 2 + 3),
    # maps and lists: 3 bytes, and per element 1 byte (+ its name in a map) + its size
    ({"m": {}}, 1 + 3),
    ({"l": []}, 1 + 3),
    ({"m": {"k": "v"}}, 1 + 3 + (1 + 1 + 1)),
    ({"l": ["ab", 1]}, 1 + 3 + (1 + 2) + (1 + 2)),
    ({"m": {"é": {"l": [{"x": True}]}}}, 1 + 3 + (2 + 1 + (3 + (1 + 1 + (3 + (1 + (3 + (1 + 1 + 1)))))))),
])
def test_the_documented_rule_on_each_type(item: dict[str, Any], size: int) -> None:
    # GIVEN an item in Python form / WHEN sized THEN the documented rule's size
    assert item_size(item) == size
    # AND the same item in wire form (boto3's bytes, or stream JSON's base64 text) has the same size
    wire = {k: _aws.serialize({k: v})[k] for k, v in item.items()}
    assert wire_item_size(wire) == size
    assert wire_item_size({k: _stream_json(v) for k, v in wire.items()}) == size


def test_number_size_reads_text_ints_and_decimals_alike() -> None:
    # GIVEN one number written three ways / THEN one size
    assert number_size("1.50E+3") == number_size(1500) == number_size(Decimal("1500.00")) == 2


def test_the_audit_writer_sizes_with_the_one_rule() -> None:
    # GIVEN the audit handler module / THEN it uses runtime.values' rule and has no estimator of its own
    assert audit_handler.wire_item_size is wire_item_size
    assert not hasattr(audit_handler, "item_size") and not hasattr(audit_handler, "_size")


_scalars = st.one_of(
    st.text(max_size=8), st.integers(-10**20, 10**20), st.binary(max_size=8), st.booleans(), st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-10**6, max_value=10**6),
)
_values = st.recursive(
    st.one_of(_scalars, st.frozensets(st.text(max_size=4), min_size=1, max_size=3).map(set),
              st.frozensets(st.integers(-999, 999), min_size=1, max_size=3).map(set),
              st.frozensets(st.binary(max_size=4), min_size=1, max_size=3).map(set)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(min_size=1, max_size=4), inner, max_size=3)),
    max_leaves=12,
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6), _values, min_size=1, max_size=4))
def test_python_and_wire_forms_agree(item: dict[str, Any]) -> None:
    # GIVEN any storable item / WHEN sized in Python form and in both wire forms THEN the sizes agree
    wire = {k: _aws.serialize({k: v})[k] for k, v in item.items()}
    assert item_size(item) == wire_item_size(wire) == wire_item_size({k: _stream_json(v) for k, v in wire.items()})
