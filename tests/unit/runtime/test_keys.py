"""Unit tests for constructs_lib.runtime.keys (template-level key building and parsing)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from constructs_lib.model import Entity, KeyTemplate, Model
from constructs_lib.model.resolve import resolve_entity
from constructs_lib.model.resolved import ResolvedEntity
from constructs_lib.runtime import keys
from constructs_lib.runtime.exceptions import KeyValueError
from constructs_lib.runtime.keys import composite_key, entity_key, split_composite_key
from examples.shop.model import shop_model


def resolved(entity: Entity) -> ResolvedEntity:
    """A standalone entity (no index keys) resolved as a model resolves it."""
    return resolve_entity(entity, {})

UTC = UTC
PROPS = settings(max_examples=150, deadline=None)

USER = shop_model.entities["User"]
ORDER = shop_model.entities["Order"]
ORDER_ITEM = shop_model.entities["OrderItem"]

READING = resolved(Entity(
    "Reading",
    pk="SENSOR#{sensor_id}#{at:month}",
    sk="AT#{at}",
    fields={"sensor_id": "string", "at": "timestamp"},
))
sensor_model = Model("sensors", entities=[READING])
READING = sensor_model.entities["Reading"]

PAIR = resolved(Entity("Pair", pk="A#{x}#B#{y}", fields=["x", "y"]))
TENANT_USER = resolved(Entity("TenantUser", pk="TENANT#{t}#{u}", fields=["t", "u"]))
# One collection: the order header (complete key) and its lines (keys under it).
HEADER = resolved(Entity("Header", pk="C#{c}", sk="ORDER#{order_id}", fields=["c", "order_id"]))
LINE = resolved(Entity("Line", pk="C#{c}", sk="ORDER#{order_id}#LINE#{line}",
              fields={"c": "string", "order_id": "string", "line": "number:3"}))
# Two entities whose templates differ only in one literal.
LEFT = resolved(Entity("Left", pk="X#{a}#P#{b}", fields=["a", "b"]))
RIGHT = resolved(Entity("Right", pk="X#{a}#Q#{b}", fields=["a", "b"]))

# Any valid Unicode text (no lone surrogates), biased towards separator-adjacent characters.
values = st.text(
    alphabet=st.one_of(
        st.sampled_from(["#", "$", "%", "2", "3", " ", "\x00", "a", "~", "é", "😀", "B"]),
        st.characters(blacklist_categories=("Cs",)),
    ),
    min_size=1,
    max_size=12,
)


def b(s: str) -> bytes:
    """DynamoDB compares string keys by their UTF-8 bytes."""
    return s.encode("utf-8")


# --------------------------------------------------------------------------- shop round trips


@pytest.mark.parametrize(
    ("entity", "attrs", "pk", "sk"),
    [
        (USER, {"user_id": "u1"}, "USER#u1", "PROFILE"),
        (USER, {"user_id": "a#b c%"}, "USER#a%23b%20c%25", "PROFILE"),
        (
            ORDER,
            {"user_id": "u1", "order_id": "o1", "created_at": datetime(2024, 6, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))},
            "USER#u1",
            "ORDER#2024-06-01T12:00:00.000000Z#o1",
        ),
        (ORDER_ITEM, {"order_id": "o1", "line": 7}, "ORDER#o1", "ITEM#0007"),
        (shop_model.entities["Product"], {"sku": "SKU-1"}, "PRODUCT#SKU-1", "PRODUCT"),
    ],
)
def test_shop_keys_build_and_parse(entity: Entity, attrs: dict[str, Any], pk: str, sk: str) -> None:
    # GIVEN a shop entity and attribute values
    # WHEN its table keys are built
    built_pk = keys.build(entity, entity.pk_template, attrs)
    built_sk = keys.build(entity, entity.sk_template, attrs)  # type: ignore[arg-type]
    # THEN they are the documented text (escaped, UTC, zero-padded)
    assert (built_pk, built_sk) == (pk, sk)
    # AND parsing them gives back the values (timestamps as aware UTC datetimes)
    parsed = {**keys.parse(entity, entity.pk_template, built_pk), **keys.parse(entity, entity.sk_template, built_sk)}  # type: ignore[arg-type]
    expected = {k: (v.astimezone(UTC) if isinstance(v, datetime) else v) for k, v in attrs.items()}
    assert parsed == expected


def test_timestamp_string_input_parses_to_utc_datetime() -> None:
    # GIVEN an ISO-8601 string with offset for the order timestamp
    attrs = {"created_at": "2024-01-01T00:30:00+01:00", "order_id": "o9"}
    # WHEN the sort key is built and parsed
    sk = keys.build(ORDER, ORDER.sk_template, attrs)  # type: ignore[arg-type]
    parsed = keys.parse(ORDER, ORDER.sk_template, sk)  # type: ignore[arg-type]
    # THEN the key holds UTC text and the parse is the same instant
    assert sk == "ORDER#2023-12-31T23:30:00.000000Z#o9"
    assert parsed["created_at"] == datetime(2023, 12, 31, 23, 30, tzinfo=UTC)


def test_zero_padded_numbers_sort_numerically() -> None:
    # GIVEN order lines 2, 10 and 100
    built = [keys.build(ORDER_ITEM, ORDER_ITEM.sk_template, {"line": n}) for n in (100, 2, 10)]  # type: ignore[arg-type]
    # WHEN sorted as text / THEN the order is numeric
    assert sorted(built) == ["ITEM#0002", "ITEM#0010", "ITEM#0100"]


def test_number_wider_than_field_is_rejected() -> None:
    # GIVEN a line number with more digits than the width 4 / WHEN built / THEN the field is named
    with pytest.raises(KeyValueError, match="OrderItem.line"):
        keys.build(ORDER_ITEM, ORDER_ITEM.sk_template, {"line": 12345})  # type: ignore[arg-type]


def test_bucketed_sensor_key() -> None:
    # GIVEN a sensor reading at a non-UTC time near a month boundary
    at = datetime(2024, 7, 1, 1, 0, tzinfo=timezone(timedelta(hours=3)))
    # WHEN its keys are built
    pk = keys.build(READING, READING.pk_template, {"sensor_id": "s#1", "at": at})
    sk = keys.build(READING, READING.sk_template, {"at": at})  # type: ignore[arg-type]
    # THEN the partition is the UTC month bucket, the sort key the full instant
    assert pk == "SENSOR#s%231#2024-06"
    assert sk == "AT#2024-06-30T22:00:00.000000Z"
    # AND the bucket parses back as text under "field:bucket"
    assert keys.parse(READING, READING.pk_template, pk) == {"sensor_id": "s#1", "at:month": "2024-06"}
    assert keys.parse(READING, READING.sk_template, sk) == {"at": at.astimezone(UTC)}  # type: ignore[arg-type]


def test_repeated_field_must_agree_when_parsed() -> None:
    # GIVEN a template using one field twice
    e = resolved(Entity("Twice", pk="{a}#{a}", fields=["a"]))
    # WHEN a consistent key is parsed / THEN the value comes back once
    assert keys.parse(e, e.pk_template, "x#x") == {"a": "x"}
    # AND an inconsistent key is rejected naming the field
    with pytest.raises(KeyValueError, match="'a' appears twice"):
        keys.parse(e, e.pk_template, "x#y")


# --------------------------------------------------------------------------- parse rejects foreign keys


@pytest.mark.parametrize(
    ("entity", "template", "key", "needle"),
    [
        (USER, USER.pk_template, "ORDER#o1", "literal 'ORDER' should be 'USER'"),
        (USER, USER.pk_template, "USER#u1#extra", "3 segments, expected 2"),
        (USER, USER.pk_template, "USER", "1 segments, expected 2"),
        (USER, USER.sk_template, "ORDER#2024-06-01T12:00:00.000000Z#o1", "3 segments, expected 1"),
        (ORDER, ORDER.sk_template, "ORDER#2024-06-01#o1", "canonical timestamp"),
        (ORDER_ITEM, ORDER_ITEM.sk_template, "ITEM#7", "4-digit"),
        (USER, USER.pk_template, "USER#a b", "must be escaped"),
        (USER, USER.pk_template, "USER#a%2", "two uppercase hex digits"),
        (USER, USER.pk_template, "USER#", "empty"),
        (READING, READING.pk_template, "SENSOR#s1#2024%2306", "canonical"),
    ],
)
def test_parse_rejects_keys_of_another_template(entity: Entity, template: KeyTemplate, key: str, needle: str) -> None:
    # GIVEN a key that was not built from the template / WHEN parsed / THEN KeyValueError explains why
    with pytest.raises(KeyValueError) as info:
        keys.parse(entity, template, key)
    assert needle in str(info.value)


def test_parse_rejects_non_string() -> None:
    # GIVEN a non-str key / WHEN parsed / THEN rejected naming it
    with pytest.raises(KeyValueError, match="b'USER#u1'"):
        keys.parse(USER, USER.pk_template, b"USER#u1")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{}, {"user_id": None}, {"other": "x"}])
def test_build_names_the_missing_field(bad: dict[str, Any]) -> None:
    # GIVEN values without user_id / WHEN the pk is built / THEN the field and template are named
    with pytest.raises(KeyValueError) as info:
        keys.build(USER, USER.pk_template, bad, where="pk")
    assert "'user_id'" in str(info.value) and "'USER#{user_id}'" in str(info.value)


def test_build_rejects_empty_and_wrong_typed_values() -> None:
    # GIVEN an empty string and an int for a string field / WHEN built / THEN each is rejected
    with pytest.raises(KeyValueError, match="empty"):
        keys.build(USER, USER.pk_template, {"user_id": ""})
    with pytest.raises(KeyValueError, match="int"):
        keys.build(USER, USER.pk_template, {"user_id": 5})


# --------------------------------------------------------------------------- prefix / partial


ORDER_VALUES = {"user_id": "u1", "order_id": "o1", "created_at": datetime(2024, 6, 1, 12, tzinfo=UTC)}


@pytest.mark.parametrize(
    ("fields", "expected_prefix", "expected_partial", "complete"),
    [
        ((), "ORDER#", "ORDER", False),
        (("created_at",), "ORDER#2024-06-01T12:00:00.000000Z#", "ORDER#2024-06-01T12:00:00.000000Z", False),
        (
            ("created_at", "order_id"),
            "ORDER#2024-06-01T12:00:00.000000Z#o1",
            "ORDER#2024-06-01T12:00:00.000000Z#o1",
            True,
        ),
    ],
)
def test_prefix_and_partial(fields: tuple[str, ...], expected_prefix: str, expected_partial: str, complete: bool) -> None:
    # GIVEN the order sort-key template and leading fields
    # WHEN a prefix and a partial key are built
    prefix = keys.prefix(ORDER, ORDER.sk_template, ORDER_VALUES, fields)  # type: ignore[arg-type]
    partial = keys.partial(ORDER, ORDER.sk_template, ORDER_VALUES, fields)  # type: ignore[arg-type]
    # THEN the prefix ends on the separator unless complete; partial never adds one
    assert prefix == (expected_prefix, complete)
    assert partial == (expected_partial, complete)
    assert complete or prefix[0].endswith("#")


def test_prefix_of_template_starting_with_placeholder() -> None:
    # GIVEN a template starting with a placeholder, and no fields
    e = resolved(Entity("G", pk="{a}#{b}", fields=["a", "b"]))
    # WHEN prefixes are built / THEN the empty prefix stays empty, the next one ends on '#'
    assert keys.prefix(e, e.pk_template, {}, ()) == ("", False)
    assert keys.prefix(e, e.pk_template, {"a": "x"}, ("a",)) == ("x#", False)


def test_prefix_including_trailing_literal_is_complete() -> None:
    # GIVEN a template ending in a literal after its only field
    e = resolved(Entity("T", pk="A#{x}#META", fields=["x"]))
    # WHEN the prefix of all its fields is built / THEN it is the complete key
    assert keys.prefix(e, e.pk_template, {"x": "1"}, ("x",)) == ("A#1#META", True)


def test_partial_requires_the_named_values() -> None:
    # GIVEN a field named as given but absent from the values / WHEN partial is built / THEN it is named
    with pytest.raises(KeyValueError, match="'created_at'"):
        keys.partial(ORDER, ORDER.sk_template, {}, ("created_at",))  # type: ignore[arg-type]


def test_tenant_prefix_does_not_match_longer_tenant() -> None:
    # GIVEN tenants acme, acme#x and acmecorp
    prefix, _ = keys.prefix(TENANT_USER, TENANT_USER.pk_template, {"t": "acme"}, ("t",))
    # WHEN keys of the other tenants are built
    others = [keys.build(TENANT_USER, TENANT_USER.pk_template, {"t": t, "u": "u1"}) for t in ("acme#x", "acmecorp")]
    own = keys.build(TENANT_USER, TENANT_USER.pk_template, {"t": "acme", "u": "u1"})
    # THEN only acme's own key has acme's prefix
    assert prefix == "TENANT#acme#"
    assert own.startswith(prefix)
    assert not any(k.startswith(prefix) for k in others)


# --------------------------------------------------------------------------- properties


@PROPS
@given(x=values, y=values)
def test_property_parse_inverts_build(x: str, y: str) -> None:
    # GIVEN any two non-empty strings / WHEN built into a two-field key and parsed
    key = keys.build(PAIR, PAIR.pk_template, {"x": x, "y": y})
    # THEN the original values come back and the key has exactly the template's segments
    assert keys.parse(PAIR, PAIR.pk_template, key) == {"x": x, "y": y}
    assert len(key.split("#")) == 4


@PROPS
@given(a=st.tuples(values, values), c=st.tuples(values, values))
def test_property_distinct_tuples_give_distinct_keys(a: tuple[str, str], c: tuple[str, str]) -> None:
    # GIVEN two different value tuples
    assume(a != c)
    # WHEN both are built / THEN the keys differ
    ka = keys.build(PAIR, PAIR.pk_template, {"x": a[0], "y": a[1]})
    kc = keys.build(PAIR, PAIR.pk_template, {"x": c[0], "y": c[1]})
    assert ka != kc


@PROPS
@given(a=values, b_=values, c=values, d=values)
def test_property_entities_with_different_literals_never_collide(a: str, b_: str, c: str, d: str) -> None:
    # GIVEN two templates that differ in one literal, and shop User/Order sharing a partition
    left = keys.build(LEFT, LEFT.pk_template, {"a": a, "b": b_})
    right = keys.build(RIGHT, RIGHT.pk_template, {"a": c, "b": d})
    user_sk = keys.build(USER, USER.sk_template, {})  # type: ignore[arg-type]
    order_sk = keys.build(ORDER, ORDER.sk_template, {"created_at": "2024-06-01T00:00:00Z", "order_id": c})  # type: ignore[arg-type]
    # WHEN compared / THEN they never collide, and neither parses with the other's template
    assert left != right
    assert user_sk != order_sk
    with pytest.raises(KeyValueError):
        keys.parse(RIGHT, RIGHT.pk_template, left)
    with pytest.raises(KeyValueError):
        keys.parse(USER, USER.sk_template, order_sk)  # type: ignore[arg-type]


@PROPS
@given(t=values, t2=values, u=values)
def test_property_tenant_prefix_never_matches_other_tenant(t: str, t2: str, u: str) -> None:
    # GIVEN two different tenants
    assume(t != t2)
    # WHEN t's prefix and a key of t2 are built
    prefix, complete = keys.prefix(TENANT_USER, TENANT_USER.pk_template, {"t": t}, ("t",))
    other = keys.build(TENANT_USER, TENANT_USER.pk_template, {"t": t2, "u": u})
    own = keys.build(TENANT_USER, TENANT_USER.pk_template, {"t": t, "u": u})
    # THEN the prefix ends on the separator, matches t's keys and never t2's
    assert not complete and prefix.endswith("#")
    assert own.startswith(prefix)
    assert not other.startswith(prefix)


@PROPS
@given(order_id=values, other_id=values, line=st.integers(0, 999), use_line=st.booleans())
def test_property_closed_range_holds_exactly_the_key_and_its_children(
    order_id: str, other_id: str, line: int, use_line: bool
) -> None:
    # GIVEN a complete header key k, and another key k2 (a header or a line) of the same collection
    k = keys.build(HEADER, HEADER.sk_template, {"order_id": order_id})  # type: ignore[arg-type]
    if use_line:
        k2 = keys.build(LINE, LINE.sk_template, {"order_id": other_id, "line": line})  # type: ignore[arg-type]
    else:
        k2 = keys.build(HEADER, HEADER.sk_template, {"order_id": other_id})  # type: ignore[arg-type]
    # WHEN k2 is tested against the closed byte range [k, k + "$"] (DynamoDB BETWEEN)
    in_range = b(k) <= b(k2) <= b(k + keys.UPPER)
    # THEN it is inside iff it is k itself or lies under k + "#", i.e. iff it belongs to the same order
    assert in_range == (k2 == k or k2.startswith(k + keys.SEPARATOR))
    assert in_range == (other_id == order_id)


@settings(max_examples=60, deadline=None)
@given(
    sensor=values,
    at=st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)),
)
def test_property_bucketed_key_round_trip(sensor: str, at: datetime) -> None:
    # GIVEN any sensor id and instant / WHEN the bucketed pk is built and parsed
    pk = keys.build(READING, READING.pk_template, {"sensor_id": sensor, "at": at})
    # THEN the sensor id and the month bucket come back
    assert keys.parse(READING, READING.pk_template, pk) == {"sensor_id": sensor, "at:month": f"{at.year:04d}-{at.month:02d}"}


def test_date_field_key_round_trip() -> None:
    # GIVEN a date-keyed entity / WHEN built and parsed / THEN the date comes back as a date
    e = resolved(Entity("Day", pk="DAY#{d}", fields={"d": "date"}))
    key = keys.build(e, e.pk_template, {"d": date(2024, 2, 29)})
    assert key == "DAY#2024-02-29"
    assert keys.parse(e, e.pk_template, key) == {"d": date(2024, 2, 29)}


GRANULARITY_ENTITIES = {
    g: resolved(Entity(f"B{g}", pk=f"S#{{s}}#{{at:{g}}}", fields={"s": "string", "at": "timestamp"}))
    for g in ("year", "month", "day", "hour", "minute", "week")
}


@settings(max_examples=60, deadline=None)
@given(
    granularity=st.sampled_from(sorted(GRANULARITY_ENTITIES)),
    at=st.datetimes(min_value=datetime(1, 1, 8), max_value=datetime(9999, 12, 24), timezones=st.just(UTC)),
)
def test_property_every_bucket_granularity_parses_back(granularity: str, at: datetime) -> None:
    # GIVEN an entity keyed by any bucket granularity and any instant
    e = GRANULARITY_ENTITIES[granularity]
    # WHEN its key is built and parsed
    key = keys.build(e, e.pk_template, {"s": "x", "at": at})
    # THEN the bucket text comes back unchanged
    assert keys.parse(e, e.pk_template, key) == {"s": "x", f"at:{granularity}": key.split("#")[2]}


@pytest.mark.parametrize(
    ("granularity", "text"),
    [
        ("month", "2024-13"),
        ("month", "2024-6"),
        ("month", "hello"),
        ("year", "24"),
        ("day", "2023-02-29"),
        ("hour", "2024-06-01T24"),
        ("minute", "2024-06-01T23:60"),
        ("week", "2023-W53"),
        ("week", "2024-W00"),
        ("week", "2024-06"),
    ],
)
def test_parse_rejects_non_canonical_buckets(granularity: str, text: str) -> None:
    # GIVEN a key whose bucket component could not have been produced by the codec
    e = GRANULARITY_ENTITIES[granularity]
    # WHEN parsed / THEN it is rejected naming the component and the granularity
    with pytest.raises(KeyValueError) as info:
        keys.parse(e, e.pk_template, f"S#x#{text}")
    assert repr(text) in str(info.value) and repr(granularity) in str(info.value)


@pytest.mark.parametrize(
    ("granularity", "text"),
    [("week", "2020-W53"), ("day", "2024-02-29"), ("year", "0001"), ("minute", "2024-06-01T23:59")],
)
def test_parse_accepts_edge_buckets(granularity: str, text: str) -> None:
    # GIVEN a valid edge-case bucket (ISO week 53, leap day, year 1, last minute)
    e = GRANULARITY_ENTITIES[granularity]
    # WHEN parsed / THEN it is returned as text
    assert keys.parse(e, e.pk_template, f"S#x#{text}")[f"at:{granularity}"] == text


# --------------------------------------------------------------------------- ad-hoc keys


def test_composite_and_entity_keys_escape_and_round_trip() -> None:
    # GIVEN values containing the separator WHEN joined THEN escaped and parsed back
    assert composite_key("a#b", "c") == "a%23b#c"
    assert split_composite_key(composite_key("a#b", "c", "100%")) == ("a#b", "c", "100%")
    assert entity_key("USER", "42") == "USER#42"
    assert entity_key("SENSOR", "1", "2024-06") == "SENSOR#1#2024-06"


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: composite_key(), "at least one value"),
        (lambda: composite_key("a", ""), "''"),
        (lambda: entity_key("US ER", "1"), "'US ER'"),
        (lambda: entity_key("USER"), "at least one id"),
    ],
)
def test_ad_hoc_key_errors_name_the_value(call: Any, needle: str) -> None:
    with pytest.raises(KeyValueError) as err:
        call()
    assert needle in str(err.value)
