"""The number size rule (``runtime.values.number_size``, used by ``item_size``) against DynamoDB
Local: at its 1 KB write-unit boundary (``ConsumedCapacity``) and at its 400 KB item limit, for
numbers of every sign, digit count (1-38) and exponent (-130..125), alone, in number sets, lists
and maps. The measurement and the grid are in ``number_sizes.py`` (also a script that re-derives
the rule from scratch); ``CONSTRUCTS_LIB_SOAK=1`` checks the whole grid (about 19,000 numbers).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from number_sizes import MAX_DIGITS, MAX_EXPONENT, MIN_EXPONENT, SizeProbe, grid, number, representative

from constructs_lib.runtime import _aws
from constructs_lib.runtime.exceptions import ItemValidationError
from constructs_lib.runtime.values import number_size, to_dynamo, wire_item_size

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 60 * (10 if SOAK else 1)
PHASES = tuple(Phase) if SOAK else (Phase.explicit, Phase.reuse, Phase.generate)
#: The number of the report: 38 digits spanning 20 base-100 pairs, negative.
LONG_NEGATIVE = "-9." + "9" * 37


@pytest.fixture(scope="module")
def probe(dynamodb_local: Any) -> Iterator[SizeProbe]:
    made = SizeProbe.create(dynamodb_local.client(), f"number-sizes-{os.getpid()}")
    yield made
    made.drop()


def value_size(value: dict[str, Any]) -> int:
    """The rule's size of one wire value (without an attribute name)."""
    return wire_item_size({"": value})


def test_the_rule_equals_dynamodb_local_at_the_1_kb_boundary(probe: SizeProbe) -> None:
    # GIVEN numbers of every class (sign x digit count x exponent parity, both ends of the range,
    # around the decimal point, zero, other notations); under soak the whole grid, one digit pattern
    # per cell drawn at random
    numbers = representative()
    if SOAK:
        numbers += list(grid(kinds=1, seed=None))
    wrong = []
    for text in numbers:
        # WHEN an item holding it is padded so the rule sizes it at exactly 1 KB, then 1 KB + 1
        if not probe.is_size({"v": {"N": text}}, 1 + number_size(text)):
            wrong.append((text, number_size(text), probe.size({"N": text})))
    # THEN DynamoDB charges 1 write unit, then 2: the rule's size is DynamoDB's
    assert wrong == [], f"(number, number_size, DynamoDB Local's size) of {len(wrong)}/{len(numbers)}: {wrong[:20]}"


def test_the_rule_equals_dynamodb_local_at_the_400_kb_limit(probe: SizeProbe) -> None:
    # GIVEN the number of the report and every 8th representative number
    numbers = [LONG_NEGATIVE, *representative()[::8]]
    # WHEN an item holding it is padded to exactly 409,600 bytes by the rule, then one byte more
    wrong = [t for t in numbers if not probe.is_size_by_limit({"v": {"N": t}}, 1 + number_size(t))]
    # THEN DynamoDB stores the first and refuses the second
    assert wrong == []


def test_numbers_in_sets_lists_and_maps_follow_the_same_rule(probe: SizeProbe) -> None:
    # GIVEN number sets, lists and maps of representative numbers (20-pair negatives among them)
    rng = random.Random(7)
    pool = sorted({Decimal(t) for t in representative()}, key=str)
    values: list[dict[str, Any]] = [{"NS": [LONG_NEGATIVE, "-1", "0"]}, {"L": [{"N": LONG_NEGATIVE}]},
                                    {"M": {"n": {"N": LONG_NEGATIVE}, "s": {"NS": [LONG_NEGATIVE]}}}]
    for _ in range(12):
        picked = [str(d) for d in rng.sample(pool, 4)]
        values += [{"NS": picked}, {"L": [{"N": t} for t in picked]},
                   {"M": {f"k{i}": {"L": [{"N": t}]} for i, t in enumerate(picked)}}]
    # WHEN each is sized by the rule and by DynamoDB THEN the sizes are equal
    wrong = [v for v in values if not probe.is_size({"v": v}, 1 + value_size(v))]
    assert wrong == []


@st.composite
def numbers(draw: st.DrawFn) -> str:
    """A storable number: the digit counts and exponents of every class, 38-digit and range-edge
    numbers drawn often."""
    count = draw(st.one_of(st.integers(1, MAX_DIGITS), st.sampled_from([MAX_DIGITS - 1, MAX_DIGITS])))
    adjusted = draw(st.one_of(st.integers(MIN_EXPONENT, MAX_EXPONENT), st.integers(-6, 6),
                              st.sampled_from([MIN_EXPONENT, MIN_EXPONENT + 1, MAX_EXPONENT - 1, MAX_EXPONENT])))
    digits = str(draw(st.integers(1, 9)))
    if count > 1:
        digits += draw(st.text("0123456789", min_size=count - 2, max_size=count - 2)) + str(draw(st.integers(1, 9)))
    return number(digits, adjusted, draw(st.booleans()))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not SOAK, database=None, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    numbers().map(lambda t: {"N": t}),
    st.lists(numbers(), min_size=1, max_size=4, unique_by=Decimal).map(lambda ts: {"NS": ts}),
    st.lists(numbers().map(lambda t: {"N": t}), max_size=3).map(lambda vs: {"L": vs}),
), min_size=1, max_size=5))
def test_item_size_of_random_numbers_equals_dynamodb_local(probe: SizeProbe, values: list[dict[str, Any]]) -> None:
    # GIVEN an item of random numbers, number sets and lists of numbers
    attributes = {f"a{i}": v for i, v in enumerate(values)}
    # WHEN it is padded to 1 KB by the rule THEN DynamoDB charges 1 write unit, and 2 for one byte more
    assert probe.is_size(attributes, wire_item_size(attributes)), attributes


@pytest.mark.parametrize(("text", "stored"), [
    ("1E-130", True), ("-1E-130", True), (f"1.{'0' * 36}1E-130", True),
    (f"9.{'9' * 37}E+125", True), (f"-9.{'9' * 37}E+125", True),
    ("9.9E-131", False), ("-1E-131", False), ("1E+126", False), ("-1E+126", False),
    (f"1.{'0' * 37}1", False),
])
def test_to_dynamo_refuses_exactly_the_numbers_dynamodb_refuses(probe: SizeProbe, text: str, stored: bool) -> None:
    # GIVEN a number at an edge of DynamoDB's range or precision (the range the sizes are checked over)
    # WHEN DynamoDB Local is asked to store it, and the runtime's value check to convert it
    refusal = probe.refusal({"N": text})
    try:
        converted = to_dynamo(Decimal(text), where="n")
    except ItemValidationError:
        converted = None
    # THEN both store it, or both refuse it (the runtime with a typed error, not a request)
    assert (refusal is None, converted is not None) == (stored, stored), refusal
    if stored:
        assert converted == Decimal(text)


#: Numbers DynamoDB stores that boto3's own number context refuses (``decimal.Underflow``): 38
#: significant digits below 1E-128.
BELOW_BOTO3 = [f"1.{'2' * 37}E-129", f"-9.{'9' * 37}E-130", f"1.{'0' * 36}1E-130"]


@pytest.mark.parametrize("text", [*BELOW_BOTO3, "1E-130", f"9.{'9' * 37}E+125", "-1E+40", "1.5E+39", "-0.5"])
def test_the_runtime_writes_and_reads_back_every_number_dynamodb_stores(probe: SizeProbe, text: str) -> None:
    # GIVEN a number DynamoDB stores, alone, in a set, a list and a map, as the runtime converts it
    number = to_dynamo(Decimal(text), where="n")
    values = {"n": number, "ns": {number}, "l": [number], "m": {"x": number}}
    # WHEN the runtime serializes it, DynamoDB Local stores it and the runtime reads it back
    probe.client.put_item(TableName=probe.table_name, Item={"PK": {"S": text}, **_aws.serialize(values)})
    stored = probe.client.get_item(TableName=probe.table_name, Key={"PK": {"S": text}}, ConsistentRead=True)["Item"]
    back = _aws.deserialize(stored)
    # THEN every value is the number, exactly
    assert (back["n"], back["ns"], back["l"], back["m"]) == (Decimal(text), {Decimal(text)}, [Decimal(text)],
                                                              {"x": Decimal(text)})
