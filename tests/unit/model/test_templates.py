"""Unit tests for constructs_lib.model.templates (key template parsing)."""

from __future__ import annotations

import pytest

from constructs_lib.model import SEPARATOR, KeyTemplate, Placeholder, TemplateError
from constructs_lib.model.templates import BUCKETS

# --------------------------------------------------------------------------- good templates


def test_parse_literal_and_placeholder_segments() -> None:
    # GIVEN a composite sort-key template
    text = "ORDER#{created_at}#{order_id}"
    # WHEN it is parsed
    t = KeyTemplate.parse(text)
    # THEN literals and placeholders appear in order, and the source is kept verbatim
    assert t.segments == ("ORDER", Placeholder("created_at"), Placeholder("order_id"))
    assert t.source == text
    assert str(t) == text
    assert t.fields == ("created_at", "order_id")
    assert t.placeholders == (Placeholder("created_at"), Placeholder("order_id"))
    assert not t.is_constant


def test_constant_template_has_no_fields() -> None:
    # GIVEN a template without placeholders
    # WHEN it is parsed
    t = KeyTemplate.parse("PROFILE")
    # THEN it is constant, has no fields, and its literal prefix is the whole text
    assert t.is_constant
    assert t.fields == ()
    assert t.placeholders == ()
    assert t.literal_prefix() == "PROFILE"


def test_multi_literal_constant() -> None:
    # GIVEN a constant template made of several literal segments
    t = KeyTemplate.parse("A#B#C")
    # WHEN / THEN every segment is a literal and the prefix has no trailing separator
    assert t.segments == ("A", "B", "C")
    assert t.is_constant
    assert t.literal_prefix() == "A#B#C"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ORDER#{created_at}#{order_id}", "ORDER#"),
        ("TENANT#{t}#USER#{u}", "TENANT#"),
        ("A#B#{x}", "A#B#"),
        ("{created_at}#{order_id}", ""),
        ("{x}#LIT", ""),
    ],
)
def test_literal_prefix_ends_on_separator_before_a_placeholder(text: str, expected: str) -> None:
    # GIVEN a template with a placeholder
    # WHEN its literal prefix is taken
    prefix = KeyTemplate.parse(text).literal_prefix()
    # THEN it is the leading literals followed by the separator (or empty)
    assert prefix == expected
    assert prefix == "" or prefix.endswith(SEPARATOR)


@pytest.mark.parametrize("bucket", BUCKETS)
def test_bucket_placeholder(bucket: str) -> None:
    # GIVEN a template with a bucketed timestamp placeholder
    # WHEN it is parsed
    t = KeyTemplate.parse(f"SENSOR#{{sensor_id}}#{{at:{bucket}}}")
    # THEN the bucket is recorded on the placeholder and the field name stays bare
    assert t.placeholders == (Placeholder("sensor_id"), Placeholder("at", bucket))
    assert t.fields == ("sensor_id", "at")
    assert str(t.placeholders[1]) == f"{{at:{bucket}}}"


def test_repeated_field_is_listed_once() -> None:
    # GIVEN a template using one field twice (raw and bucketed)
    t = KeyTemplate.parse("{at:day}#{at}#{id}")
    # WHEN its fields are listed
    # THEN each distinct field appears once, in order of first use
    assert t.fields == ("at", "id")
    assert len(t.placeholders) == 3


def test_leading_fields_and_same_shape() -> None:
    # GIVEN two sort-key templates sharing the first placeholder and literal
    a = KeyTemplate.parse("ORDER#{created_at}#{order_id}")
    b = KeyTemplate.parse("ORDER#{created_at}#{line}")
    c = KeyTemplate.parse("INVOICE#{created_at}")
    # WHEN / THEN leading fields are the first N placeholders' fields
    assert a.leading_fields(1) == ("created_at",)
    assert a.leading_fields(5) == ("created_at", "order_id")
    # AND shapes agree up to the first placeholder but not up to the second
    assert a.same_shape_until(b, 1)
    assert not a.same_shape_until(b, 2)
    assert not a.same_shape_until(c, 0)


@pytest.mark.parametrize("text", ["a_b", "Lit-1", "x.y", "caf\u00e9", "A&B", "EMAIL@X", "{_private1}"])
def test_unusual_but_legal_literals_and_names(text: str) -> None:
    # GIVEN literals made of characters that values never escape, or an underscore field name
    # WHEN parsed
    t = KeyTemplate.parse(text)
    # THEN the source round-trips through the segments
    assert SEPARATOR.join(str(s) for s in t.segments) == text


# --------------------------------------------------------------------------- bad templates


def assert_template_error(text: object, *rule_words: str) -> str:
    with pytest.raises(TemplateError) as info:
        KeyTemplate.parse(text, where="entity 'X' pk")
    message = str(info.value)
    assert repr(text) in message, message
    assert "entity 'X' pk" in message, message
    for word in rule_words:
        assert word in message, message
    return message


def test_empty_template() -> None:
    # GIVEN an empty template / WHEN parsed / THEN the error names the rule
    assert_template_error("", "non-empty")


@pytest.mark.parametrize("text", [None, 3, b"USER#{id}", ["USER"]])
def test_non_string_template(text: object) -> None:
    # GIVEN something that is not a str / WHEN parsed / THEN it is rejected with its repr
    assert_template_error(text, "non-empty string")


@pytest.mark.parametrize("text", ["A##B", "#A", "A#", "#", "{id}#", "#{id}", "USER#{id}##X"])
def test_empty_segment(text: str) -> None:
    # GIVEN a template with a doubled, leading or trailing separator
    # WHEN parsed / THEN the error names the empty-segment rule
    message = assert_template_error(text, "empty segment")
    assert "may not start or end" in message


@pytest.mark.parametrize(
    ("text", "segment"),
    [
        ("USER{id}", "USER{id}"),
        ("{a}{b}", "{a}{b}"),
        ("X#{id}SUFFIX", "{id}SUFFIX"),
        ("X#{id", "{id"),
        ("X#id}", "id}"),
        ("X#{{id}}", "{{id}}"),
    ],
)
def test_glued_or_unbalanced_placeholder(text: str, segment: str) -> None:
    # GIVEN a placeholder glued to other text (or unbalanced braces)
    # WHEN parsed
    message = assert_template_error(text, "exactly one placeholder", "ambiguous")
    # THEN the offending segment is named too
    assert repr(segment) in message


@pytest.mark.parametrize("field", ["", "1abc", "a-b", "a b", "é", "a.b"])
def test_invalid_field_name(field: str) -> None:
    # GIVEN a placeholder whose field name is not an identifier
    text = f"USER#{{{field}}}"
    # WHEN parsed / THEN the error names the field and the naming rule
    message = assert_template_error(text, "invalid field name")
    assert repr(field) in message


@pytest.mark.parametrize("bucket", ["", "months", "Month", "second", "b:c"])
def test_unknown_bucket(bucket: str) -> None:
    # GIVEN a placeholder with a bucket that is not a known granularity
    text = f"S#{{at:{bucket}}}"
    # WHEN parsed / THEN the error names the bucket, the field and the valid choices
    message = assert_template_error(text, "unknown time bucket", "'at'", "month")
    assert repr(bucket) in message


@pytest.mark.parametrize("literal", ["USER ID", "100%", "US$", 'SAY"HI"', "TAB\tX", "NL\nX", "BANG!"])
def test_literal_with_escaped_character(literal: str) -> None:
    # GIVEN a literal containing a character that escaped values use or that sorts below '#'
    text = f"{literal}#{{id}}"
    # WHEN parsed / THEN the error names the literal and the rule
    message = assert_template_error(text, "literals may not contain")
    assert repr(literal) in message


def test_template_error_is_a_value_error() -> None:
    # GIVEN a bad template / WHEN parsed / THEN callers can catch it as ValueError too
    with pytest.raises(ValueError):
        KeyTemplate.parse("A##B")
