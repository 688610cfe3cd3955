"""Unit tests for constructs_lib.runtime.key_segments (value-level key codec)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from assertions import assert_rejected
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from constructs_lib.runtime import buckets
from constructs_lib.runtime.buckets import bucket, bucket_range
from constructs_lib.runtime.exceptions import KeyValueError
from constructs_lib.runtime.key_segments import (
    SEPARATOR,
    UPPER_BOUND,
    decode,
    encode,
    escape,
    normalize,
    unescape,
)
from constructs_lib.runtime.ttl import (
    epoch_seconds,
    expiry,
    now_utc,
    validate_ttl_value,
)

UTC = UTC
PROPS = settings(max_examples=500, deadline=None)

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
# Text biased towards the interesting characters around the separator.
edgy_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(["#", "$", "%", " ", "!", '"', "\x00", "\x1f", "a", "Z", "~", "é", "😀"]),
        st.characters(blacklist_categories=("Cs",)),
    )
)
offsets = st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-23 * 60, 23 * 60))
aware_datetimes = st.datetimes(
    min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=offsets
)


def b(s: str) -> bytes:
    """DynamoDB compares string keys by their UTF-8 bytes."""
    return s.encode("utf-8")


def cmp(x: object, y: object) -> int:
    return (x > y) - (x < y)  # type: ignore[operator]




# --------------------------------------------------------------------------- escape


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("acme", "acme"),
        ("a#b", "a%23b"),
        ("100%", "100%25"),
        ("a b", "a%20b"),
        ('!"', "%21%22"),
        ("\x00\n\x1f", "%00%0A%1F"),
        ("$&'", "%24&'"),
        ("&'(", "&'("),
        ("user@example.com", "user@example.com"),
        ("Zoë😀", "Zoë😀"),
        ("", ""),
    ],
)
def test_escape_known_values(raw: str, escaped: str) -> None:
    # GIVEN a raw value WHEN escaped THEN only code points <= 0x24 and '%' change
    assert escape(raw) == escaped
    # AND unescape gives the raw value back
    assert unescape(escaped) == raw


def test_escape_rejects_non_str() -> None:
    # GIVEN an int WHEN escaped THEN KeyValueError names it and the rule
    assert_rejected(lambda: escape(5), "5", "str")  # type: ignore[arg-type]


def test_escape_rejects_lone_surrogate() -> None:
    # GIVEN text with a lone surrogate WHEN escaped THEN it is rejected as not UTF-8
    assert_rejected(lambda: escape("ab\ud800"), repr("ab\ud800"), "UTF-8")


@pytest.mark.parametrize(
    ("bad", "rule_word"),
    [
        ("%41", "never escaped"),  # non-canonical escape of 'A'
        ("%26", "never escaped"),  # '&' is never escaped
        ("%2a", "uppercase"),  # lowercase hex
        ("%2", "two uppercase hex digits"),
        ("abc%", "two uppercase hex digits"),
        ("%G0", "two uppercase hex digits"),
        ("%%23", "two uppercase hex digits"),
        ("a#b", "must be escaped"),  # raw separator
        ("a b", "must be escaped"),  # raw space
        ("x\x00", "must be escaped"),
    ],
)
def test_unescape_rejects_non_canonical_text(bad: str, rule_word: str) -> None:
    # GIVEN text escape() can never produce WHEN unescaped THEN it is rejected with the rule
    assert_rejected(lambda: unescape(bad, field="sku"), repr(bad), rule_word)


def test_unescape_error_names_field() -> None:
    # GIVEN a field name WHEN unescape fails THEN the message names the field
    err = assert_rejected(lambda: unescape("%41", field="sku"), "'%41'", "canonical")
    assert "'sku'" in str(err)


def test_error_message_truncates_long_values() -> None:
    # GIVEN a 500-character bad value WHEN rejected THEN the message shows a truncated repr
    long_value = "#" * 500
    err = assert_rejected(lambda: unescape(long_value), "'####", "must be escaped")
    assert len(str(err)) < 300
    assert "..." in str(err)


@PROPS
@given(text)
def test_property_escape_roundtrip(value: str) -> None:
    # GIVEN any valid unicode text WHEN escaped and unescaped THEN the original comes back
    assert unescape(escape(value)) == value


@PROPS
@given(edgy_text)
def test_property_escaped_text_has_no_separator_or_lower_chars(value: str) -> None:
    # GIVEN any text WHEN escaped THEN no character is '#' or below it
    escaped = escape(value)
    assert SEPARATOR not in escaped
    assert all(ord(c) > 0x24 for c in escaped)


@PROPS
@given(edgy_text, edgy_text)
def test_property_escape_is_injective(a: str, c: str) -> None:
    # GIVEN two distinct values WHEN escaped THEN the escapes differ
    assume(a != c)
    assert escape(a) != escape(c)


@PROPS
@given(edgy_text)
def test_property_unescape_accepts_exactly_the_image_of_escape(candidate: str) -> None:
    # GIVEN arbitrary text WHEN unescaped THEN it either fails or is canonical (bijection)
    try:
        value = unescape(candidate)
    except KeyValueError:
        # THEN rejected text contains a raw char <= 0x24 or a '%' that is not a canonical escape
        assert any(ord(ch) <= 0x24 for ch in candidate) or "%" in candidate
    else:
        assert escape(value) == candidate


@PROPS
@given(edgy_text, edgy_text, edgy_text, edgy_text)
def test_property_composite_order_follows_first_component(a: str, c: str, x: str, y: str) -> None:
    # GIVEN two different first values and ANY suffixes
    assume(a != c)
    ea, ec = escape(a), escape(c)
    # WHEN both are used as the first component of a key
    left, right = ea + SEPARATOR + x, ec + SEPARATOR + y
    # THEN the keys (as UTF-8 bytes) compare exactly as the escaped first components do,
    # even when one escaped value is a prefix of the other (shorter one first)
    assert cmp(b(left), b(right)) == cmp(b(ea), b(ec)) != 0


@PROPS
@given(st.tuples(edgy_text, edgy_text), st.tuples(edgy_text, edgy_text))
def test_property_key_order_is_tuple_order_of_escaped_components(
    t1: tuple[str, str], t2: tuple[str, str]
) -> None:
    # GIVEN two value tuples WHEN built into keys A#B
    k1 = SEPARATOR.join(escape(v) for v in t1)
    k2 = SEPARATOR.join(escape(v) for v in t2)
    e1 = tuple(b(escape(v)) for v in t1)
    e2 = tuple(b(escape(v)) for v in t2)
    # THEN byte order of keys equals lexicographic tuple order of the escaped components
    assert cmp(b(k1), b(k2)) == cmp(e1, e2)
    # AND equal keys only come from equal tuples
    assert (k1 == k2) == (t1 == t2)
    # AND splitting on the separator recovers the tuple
    assert tuple(unescape(p) for p in k1.split(SEPARATOR)) == t1


@PROPS
@given(edgy_text, edgy_text)
def test_property_prefix_upper_bound(a: str, rest: str) -> None:
    # GIVEN a prefix built from a value and any key under it
    prefix = escape(a)
    key = prefix + SEPARATOR + rest
    # WHEN compared with prefix + '$'
    # THEN the key lies in [prefix#, prefix$)
    assert b(prefix + SEPARATOR) <= b(key) < b(prefix + UPPER_BOUND)


@PROPS
@given(edgy_text, edgy_text)
def test_property_prefix_range_is_tight(a: str, k: str) -> None:
    # GIVEN a prefix and an arbitrary string (sometimes sharing the prefix)
    prefix = escape(a) + SEPARATOR
    for key in (k, escape(a) + k, prefix + k):
        # WHEN tested against the range [prefix#, prefix$)
        in_range = b(prefix) <= b(key) < b(escape(a) + UPPER_BOUND)
        # THEN it is in the range exactly when it begins with prefix#
        assert in_range == key.startswith(prefix)


@PROPS
@given(edgy_text, edgy_text, edgy_text)
def test_property_prefix_query_never_matches_other_value(a: str, c: str, rest: str) -> None:
    # GIVEN keys for value c and a begins_with prefix for value a
    key = escape(c) + SEPARATOR + rest
    # WHEN matched THEN the prefix matches exactly when the values are equal
    assert key.startswith(escape(a) + SEPARATOR) == (a == c)


def test_prefix_for_acme_matches_neither_acme_hash_x_nor_acmecorp() -> None:
    # GIVEN the tenant prefix for 'acme'
    prefix = encode("acme", "string") + SEPARATOR
    # WHEN keys for tenants 'acme#x', 'acmecorp' and 'acme' are built
    keys = {t: encode(t, "string") + SEPARATOR + "ORDER" for t in ("acme#x", "acmecorp", "acme")}
    # THEN only the 'acme' key begins with the prefix
    assert [t for t, k in keys.items() if k.startswith(prefix)] == ["acme"]


# --------------------------------------------------------------------------- string kind


def test_string_kind_roundtrip_and_normalize() -> None:
    # GIVEN a string with a separator WHEN encoded THEN it is escaped and decodes back
    assert encode("a#b", "string") == "a%23b"
    assert decode("a%23b", "string") == "a#b"
    # AND normalize stores the raw value
    assert normalize("a#b", "string") == "a#b"


@pytest.mark.parametrize(
    ("value", "rule_word"),
    [(True, "str"), (5, "str"), (None, "str"), (b"x", "str"), ("", "empty")],
)
def test_string_kind_rejects(value: object, rule_word: str) -> None:
    # GIVEN a value that is not a non-empty str WHEN encoded or normalized THEN rejected
    assert_rejected(lambda: encode(value, "string", field="name"), repr(value), rule_word)
    assert_rejected(lambda: normalize(value, "string", field="name"), repr(value), rule_word)


def test_string_decode_rejects_empty() -> None:
    # GIVEN an empty key component WHEN decoded as string THEN rejected (encode never makes it)
    assert_rejected(lambda: decode("", "string"), "''", "empty")


def test_unknown_kind_and_stray_width_rejected() -> None:
    # GIVEN an unknown kind WHEN encoding THEN the kind and the allowed kinds are named
    assert_rejected(lambda: encode("x", "uuid"), "'uuid'", "kind must be one of")  # type: ignore[arg-type]
    # GIVEN a width for a string field WHEN encoding THEN rejected: width is for numbers only
    assert_rejected(lambda: encode("x", "string", width=3), "3", "only applies to number")


# --------------------------------------------------------------------------- number kind


def test_number_encoding_is_zero_padded() -> None:
    # GIVEN ints WHEN encoded with width 5 THEN they are zero-padded and decode back
    assert encode(42, "number", width=5) == "00042"
    assert encode(0, "number", width=1) == "0"
    assert encode(99999, "number", width=5) == "99999"
    assert decode("00042", "number", width=5) == 42
    assert normalize(42, "number", width=5) == 42


@pytest.mark.parametrize(
    ("value", "rule_word"),
    [
        (12.5, "integers"),
        (Decimal("12"), "integers"),
        ("12", "non-negative int"),
        (True, "non-negative int"),
        (-1, "negative"),
        (100000, "more than 5 digits"),
    ],
)
def test_number_kind_rejects(value: object, rule_word: str) -> None:
    # GIVEN a value that cannot be a sortable zero-padded number WHEN encoded THEN rejected
    assert_rejected(lambda: encode(value, "number", width=5, field="qty"), repr(value), rule_word)


def test_float_rejection_suggests_cents() -> None:
    # GIVEN a price as a float WHEN encoded THEN the message tells the user to use integers
    assert_rejected(lambda: encode(19.99, "number", width=8), "19.99", "cents")


@pytest.mark.parametrize("width", [None, 0, 39, True, "5"])
def test_number_width_validated(width: object) -> None:
    # GIVEN a missing or out-of-range width WHEN encoding a number THEN rejected
    assert_rejected(lambda: encode(1, "number", width=width), repr(width), "between 1 and 38")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["0042", "000042", "0004a", "-0042", "００042", "4.000", "+0042"])
def test_number_decode_requires_exact_width_ascii_digits(bad: str) -> None:
    # GIVEN a component that is not exactly 5 ASCII digits WHEN decoded THEN rejected
    assert_rejected(lambda: decode(bad, "number", width=5), repr(bad), "5 ASCII digits")


@PROPS
@given(st.integers(1, 38).flatmap(lambda w: st.tuples(st.just(w), st.integers(0, 10**w - 1), st.integers(0, 10**w - 1))))
def test_property_number_order(args: tuple[int, int, int]) -> None:
    # GIVEN two ints that fit the width WHEN encoded
    width, m, n = args
    em, en = encode(m, "number", width=width), encode(n, "number", width=width)
    # THEN the encodings sort like the ints and round-trip
    assert cmp(b(em), b(en)) == cmp(m, n)
    assert decode(em, "number", width=width) == m


# --------------------------------------------------------------------------- timestamp kind


@pytest.mark.parametrize(
    "value",
    [
        datetime(2024, 6, 1, 12, 0, tzinfo=UTC),
        datetime(2024, 6, 1, 14, 0, tzinfo=timezone(timedelta(hours=2))),
        "2024-06-01T12:00:00Z",
        "2024-06-01T12:00:00z",
        "2024-06-01T14:00:00+02:00",
        "2024-06-01T07:00:00.000000-05:00",
    ],
)
def test_timestamp_canonical_utc(value: object) -> None:
    # GIVEN the same instant in several spellings WHEN encoded THEN one canonical UTC text
    assert encode(value, "timestamp") == "2024-06-01T12:00:00.000000Z"
    assert normalize(value, "timestamp") == "2024-06-01T12:00:00.000000Z"


def test_timestamp_decode_is_aware_utc() -> None:
    # GIVEN a canonical timestamp WHEN decoded THEN an aware UTC datetime comes back
    dt = decode("2024-06-01T12:00:00.123456Z", "timestamp")
    assert dt == datetime(2024, 6, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert dt.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("value", "rule_word"),
    [
        (datetime(2024, 6, 1, 12), "naive"),
        ("2024-06-01T12:00:00", "offset"),
        (date(2024, 6, 1), "is a date"),
        ("yesterday", "ISO-8601"),
        (1717243200, "timezone-aware"),
        (None, "timezone-aware"),
    ],
)
def test_timestamp_kind_rejects(value: object, rule_word: str) -> None:
    # GIVEN a value that is not an unambiguous instant WHEN encoded THEN rejected
    assert_rejected(lambda: encode(value, "timestamp", field="at"), repr(value), rule_word)


@pytest.mark.parametrize(
    "bad",
    [
        "2024-06-01T12:00:00Z",  # no microseconds
        "2024-06-01T12:00:00.000000+00:00",  # offset instead of Z
        "2024-06-01 12:00:00.000000Z",
        "2024-02-30T12:00:00.000000Z",  # impossible date
        "2024-06-01T24:00:00.000000Z",
    ],
)
def test_timestamp_decode_rejects_non_canonical(bad: str) -> None:
    # GIVEN a component that is not canonical UTC text WHEN decoded THEN rejected
    assert_rejected(lambda: decode(bad, "timestamp"), repr(bad), "canonical")


def test_timestamp_before_year_1000_is_fixed_width() -> None:
    # GIVEN a year-999 instant WHEN encoded THEN the year is zero-padded (fixed width) and
    # the text round-trips and still sorts below year 1000
    early = encode(datetime(999, 1, 1, tzinfo=UTC), "timestamp")
    assert early == "0999-01-01T00:00:00.000000Z"
    assert decode(early, "timestamp") == datetime(999, 1, 1, tzinfo=UTC)
    assert early < encode(datetime(1000, 1, 1, tzinfo=UTC), "timestamp")


def test_timestamp_out_of_range_after_utc_conversion() -> None:
    # GIVEN an instant that is before year 1 in UTC WHEN encoded THEN rejected
    value = datetime(1, 1, 1, 0, 0, tzinfo=timezone(timedelta(hours=5)))
    assert_rejected(lambda: encode(value, "timestamp"), "datetime.datetime(1, 1, 1", "out of range")


@PROPS
@given(aware_datetimes, aware_datetimes)
def test_property_timestamp_order(d1: datetime, d2: datetime) -> None:
    # GIVEN two aware datetimes in arbitrary offsets WHEN encoded
    e1, e2 = encode(d1, "timestamp"), encode(d2, "timestamp")
    # THEN the encodings (as bytes) sort like the instants, are fixed width, and round-trip
    assert cmp(b(e1), b(e2)) == cmp(d1, d2)
    assert len(e1) == len("2024-06-01T12:00:00.000000Z")
    assert decode(e1, "timestamp") == d1


# --------------------------------------------------------------------------- date kind


def test_date_kind() -> None:
    # GIVEN a date or its ISO text WHEN encoded THEN YYYY-MM-DD, decoding back to a date
    assert encode(date(2024, 6, 1), "date") == "2024-06-01"
    assert encode("2024-06-01", "date") == "2024-06-01"
    assert decode("2024-06-01", "date") == date(2024, 6, 1)
    assert normalize(date(2024, 6, 1), "date") == "2024-06-01"


@pytest.mark.parametrize(
    ("value", "rule_word"),
    [
        (datetime(2024, 6, 1, tzinfo=UTC), "drop the time"),
        ("2024-6-1", "YYYY-MM-DD"),
        ("20240601", "YYYY-MM-DD"),
        ("2024-02-30", "YYYY-MM-DD"),
        (20240601, "YYYY-MM-DD"),
    ],
)
def test_date_kind_rejects(value: object, rule_word: str) -> None:
    # GIVEN something that is not a plain date WHEN encoded THEN rejected
    assert_rejected(lambda: encode(value, "date", field="day"), repr(value), rule_word)


@PROPS
@given(st.dates(), st.dates())
def test_property_date_order(d1: date, d2: date) -> None:
    # GIVEN two dates WHEN encoded THEN the text sorts like the dates and round-trips
    e1, e2 = encode(d1, "date"), encode(d2, "date")
    assert cmp(b(e1), b(e2)) == cmp(d1, d2)
    assert decode(e1, "date") == d1


# --------------------------------------------------------------------------- buckets


@pytest.mark.parametrize(
    ("granularity", "expected"),
    [
        ("year", "2024"),
        ("month", "2024-06"),
        ("day", "2024-06-01"),
        ("hour", "2024-06-01T13"),
        ("minute", "2024-06-01T13:05"),
        ("week", "2024-W22"),
    ],
)
def test_bucket_granularities(granularity: str, expected: str) -> None:
    # GIVEN a timestamp given in +02:00 WHEN bucketed THEN the UTC bucket is returned
    value = datetime(2024, 6, 1, 15, 5, 30, tzinfo=timezone(timedelta(hours=2)))
    assert bucket(value, granularity) == expected  # type: ignore[arg-type]


def test_bucket_uses_utc_and_iso_week_year() -> None:
    # GIVEN 2024-12-31 23:30 at -05:00 (= 2025-01-01 04:30 UTC) WHEN bucketed by day
    assert bucket("2024-12-31T23:30:00-05:00", "day") == "2025-01-01"
    # GIVEN 2024-12-30 (a Monday in ISO week 1 of 2025) WHEN bucketed by week
    assert bucket(date(2024, 12, 30), "week") == "2025-W01"
    assert bucket("2024-06-05", "week") == "2024-W23"


def test_bucket_rejects() -> None:
    # GIVEN a date WHEN bucketed by hour THEN rejected: a date has no time of day
    assert_rejected(lambda: bucket(date(2024, 6, 1), "hour"), "datetime.date(2024, 6, 1)", "time of day")
    # GIVEN an unknown granularity THEN the granularity is named
    assert_rejected(lambda: bucket("2024-06-01", "decade"), "'decade'", "granularity must be")  # type: ignore[arg-type]
    # GIVEN a naive timestamp THEN rejected
    assert_rejected(lambda: bucket(datetime(2024, 6, 1), "day"), "datetime.datetime(2024, 6, 1", "naive")


def test_bucket_range_hours_and_months() -> None:
    # GIVEN a range crossing hour and year boundaries WHEN expanded THEN every bucket in order
    assert bucket_range("2024-06-01T13:30:00Z", "2024-06-01T15:10:00Z", "hour") == [
        "2024-06-01T13",
        "2024-06-01T14",
        "2024-06-01T15",
    ]
    assert bucket_range(date(2023, 11, 5), "2024-02-01T00:00:00Z", "month") == [
        "2023-11",
        "2023-12",
        "2024-01",
        "2024-02",
    ]
    assert bucket_range("2024-06-01", "2024-06-01", "year") == ["2024"]


def test_bucket_range_weeks_and_minutes() -> None:
    # GIVEN a Sunday..Monday range WHEN expanded by ISO week THEN both weeks are listed
    assert bucket_range(date(2024, 12, 29), date(2024, 12, 30), "week") == ["2024-W52", "2025-W01"]
    # GIVEN a sub-minute range crossing a minute WHEN expanded by minute THEN two buckets
    start = datetime(2024, 6, 1, 13, 5, 59, tzinfo=UTC)
    assert bucket_range(start, start + timedelta(seconds=2), "minute") == [
        "2024-06-01T13:05",
        "2024-06-01T13:06",
    ]


@PROPS
@given(aware_datetimes, st.integers(0, 3000), st.sampled_from(buckets.GRANULARITIES))
def test_property_bucket_range_matches_bucket(start: datetime, minutes: int, granularity: str) -> None:
    # GIVEN a range WHEN expanded THEN it starts and ends with the endpoints' buckets,
    # is strictly increasing (no duplicates) and contains the bucket of every instant inside
    end = start + timedelta(minutes=minutes)
    assume(end.astimezone(UTC).year <= 9999)
    buckets = bucket_range(start, end, granularity)  # type: ignore[arg-type]
    assert buckets[0] == bucket(start, granularity)  # type: ignore[arg-type]
    assert buckets[-1] == bucket(end, granularity)  # type: ignore[arg-type]
    assert buckets == sorted(set(buckets))
    assert bucket(start + (end - start) / 2, granularity) in buckets  # type: ignore[arg-type]


def test_bucket_range_rejects_reversed_and_too_large() -> None:
    # GIVEN start after end WHEN expanded THEN rejected naming both
    assert_rejected(lambda: bucket_range("2024-06-02", "2024-06-01", "day"), "'2024-06-02'", "start <= end")
    # GIVEN a range of 36,526 days WHEN expanded by day THEN rejected with the cap
    assert_rejected(
        lambda: bucket_range(date(2000, 1, 1), date(2100, 1, 1), "day"), "datetime.date(2000, 1, 1)", "at most 10000"
    )
    # AND a custom cap applies too
    assert_rejected(
        lambda: bucket_range("2024-01-01", "2024-12-31", "month", max_buckets=6), "'2024-01-01'", "at most 6"
    )


# --------------------------------------------------------------------------- TTL

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
NOW_EPOCH = 1717243200


def test_now_utc_and_epoch_seconds() -> None:
    # GIVEN now_utc() WHEN called THEN it is aware UTC
    assert now_utc().utcoffset() == timedelta(0)
    # GIVEN instants WHEN converted THEN whole epoch seconds, floored
    assert epoch_seconds(NOW) == NOW_EPOCH
    assert epoch_seconds(NOW + timedelta(milliseconds=999)) == NOW_EPOCH
    assert epoch_seconds(datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)) == -1
    assert_rejected(lambda: epoch_seconds(datetime(2024, 6, 1)), "datetime.datetime(2024, 6, 1", "naive")


def test_expiry() -> None:
    # GIVEN a duration or a moment WHEN an expiry is computed THEN epoch seconds, rounded up
    assert expiry(timedelta(days=1), now=NOW) == NOW_EPOCH + 86400
    assert expiry(timedelta(milliseconds=1), now=NOW) == NOW_EPOCH + 1
    assert expiry(expires_at=NOW + timedelta(hours=1), now=NOW) == NOW_EPOCH + 3600
    # AND without now, it is relative to the real clock
    assert expiry(timedelta(hours=1)) >= epoch_seconds(now_utc()) + 3599


def test_expiry_rejects() -> None:
    # GIVEN both or neither argument THEN rejected with the rule
    assert_rejected(lambda: expiry(now=NOW), "None", "exactly one")
    assert_rejected(lambda: expiry(timedelta(1), NOW + timedelta(1), now=NOW), "timedelta(days=1)", "exactly one")
    # GIVEN a non-positive duration THEN rejected
    assert_rejected(lambda: expiry(timedelta(0), now=NOW), "datetime.timedelta(0)", "positive")
    assert_rejected(lambda: expiry(3600, now=NOW), "3600", "timedelta")  # type: ignore[arg-type]
    # GIVEN a naive or past moment THEN rejected
    assert_rejected(lambda: expiry(expires_at=datetime(2030, 1, 1), now=NOW), "datetime.datetime(2030, 1, 1", "naive")
    past = NOW - timedelta(seconds=1)
    assert_rejected(lambda: expiry(expires_at=past, now=NOW), "datetime.datetime(2024, 6, 1, 11, 59, 59", "future")
    # GIVEN a naive now THEN rejected
    assert_rejected(lambda: expiry(timedelta(1), now=datetime(2024, 6, 1)), "datetime.datetime(2024, 6, 1", "naive")


def test_validate_ttl_value_accepts_epoch_seconds() -> None:
    # GIVEN an int or an integral Decimal (as boto3 reads numbers) WHEN validated THEN the int
    assert validate_ttl_value(NOW_EPOCH, attribute="ttl", now=NOW) == NOW_EPOCH
    result = validate_ttl_value(Decimal(NOW_EPOCH), attribute="ttl", now=NOW)
    assert result == NOW_EPOCH and type(result) is int
    # AND a value four years in the past is still accepted
    assert validate_ttl_value(NOW_EPOCH - 4 * 365 * 86400, attribute="ttl", now=NOW) > 0


@pytest.mark.parametrize(
    ("value", "rule_word"),
    [
        (True, "int of epoch seconds"),
        (1.5e9, "int of epoch seconds"),
        ("1717243200", "int of epoch seconds"),
        (Decimal("1717243200.5"), "int of epoch seconds"),
        (1717243200000, "milliseconds"),
        (NOW_EPOCH - 6 * 365 * 86400, "five years in the past"),
        (-5, "five years in the past"),
    ],
)
def test_validate_ttl_value_rejects(value: object, rule_word: str) -> None:
    # GIVEN a value DynamoDB TTL would misread or ignore WHEN validated THEN rejected
    err = assert_rejected(lambda: validate_ttl_value(value, attribute="expires", now=NOW), repr(value), rule_word)
    assert "'expires'" in str(err)
