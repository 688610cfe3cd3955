"""Lambda event filter patterns (constructs_lib.testing.event_filters) on DynamoDB-stream-shaped
records: the patterns the sharded counter and the audit trail synthesize, and the operators."""

from __future__ import annotations

import json

import pytest

from constructs_lib.testing import EventFilterError, TestingError
from constructs_lib.testing.event_filters import (
    matches,
    matches_any,
    parse_filter_criteria,
)


def _record(event_name: str, keys: dict, new: dict | None = None, old: dict | None = None, **extra) -> dict:
    ddb: dict = {"ApproximateCreationDateTime": 1795308000, "Keys": keys, "SequenceNumber": "1", "SizeBytes": 10}
    if new is not None:
        ddb["NewImage"] = new
    if old is not None:
        ddb["OldImage"] = old
    return {"eventID": "e", "eventName": event_name, "eventSource": "aws:dynamodb", "dynamodb": ddb, **extra}


SHARD_KEYS = {"PK": {"S": "COUNTER#video_views#v1#3"}, "SK": {"S": "SHARD"}}
SHARD = _record("MODIFY", SHARD_KEYS, new={**SHARD_KEYS, "_type": {"S": "CounterShard"}, "n": {"N": "5"}})
TOTAL = _record("MODIFY", {"PK": {"S": "COUNTER#video_views#v1"}, "SK": {"S": "TOTAL"}})
OTHER_COUNTER = _record("INSERT", {"PK": {"S": "COUNTER#likes#v1#0"}, "SK": {"S": "SHARD"}})
ORDER_KEYS = {"PK": {"S": "ORDER#1"}, "SK": {"S": "ORDER"}}
ORDER_INSERT = _record("INSERT", ORDER_KEYS, new={**ORDER_KEYS, "_type": {"S": "Order"}, "tags": {"SS": ["a", "b"]}})
ORDER_REMOVE = _record("REMOVE", ORDER_KEYS, old={**ORDER_KEYS, "_type": {"S": "Order"}})
TTL_REMOVE = _record(
    "REMOVE", ORDER_KEYS, old={**ORDER_KEYS}, userIdentity={"type": "Service", "principalId": "dynamodb.amazonaws.com"}
)
NUMERIC = {"dynamodb": {"SizeBytes": 42, "ApproximateCreationDateTime": 1795308000}, "n": 5.0, "flag": True, "nul": None}

COUNTER_PATTERN = {"dynamodb": {"Keys": {"PK": {"S": [{"prefix": "COUNTER#video_views#"}]}, "SK": {"S": ["SHARD"]}}}}
AUDIT_PATTERN = {"dynamodb": {"NewImage": {"_type": {"S": [{"anything-but": ["CounterShard"]}]}}}}

CASES = [
    # (id, pattern, event, expected)
    ("counter shard of the counter", COUNTER_PATTERN, SHARD, True),
    ("counter total row (SK differs)", COUNTER_PATTERN, TOTAL, False),
    ("another counter's shard", COUNTER_PATTERN, OTHER_COUNTER, False),
    ("counter pattern on an order", COUNTER_PATTERN, ORDER_INSERT, False),
    ("audit: order insert", AUDIT_PATTERN, ORDER_INSERT, True),
    ("audit: counter shard excluded", AUDIT_PATTERN, SHARD, False),
    ("audit: REMOVE has no NewImage", AUDIT_PATTERN, ORDER_REMOVE, False),
    ("eventName list hit", {"eventName": ["INSERT", "MODIFY"]}, ORDER_INSERT, True),
    ("eventName list miss", {"eventName": ["INSERT", "MODIFY"]}, ORDER_REMOVE, False),
    ("exists false: no NewImage", {"dynamodb": {"NewImage": {"_type": {"S": [{"exists": False}]}}}}, ORDER_REMOVE, True),
    ("exists false: present", {"dynamodb": {"NewImage": {"_type": {"S": [{"exists": False}]}}}}, ORDER_INSERT, False),
    ("exists true: present leaf", {"dynamodb": {"NewImage": {"_type": {"S": [{"exists": True}]}}}}, ORDER_INSERT, True),
    ("exists true: absent", {"dynamodb": {"NewImage": {"_type": {"S": [{"exists": True}]}}}}, ORDER_REMOVE, False),
    ("TTL: service principal", {"userIdentity": {"principalId": ["dynamodb.amazonaws.com"]}}, TTL_REMOVE, True),
    ("TTL: user delete has no identity", {"userIdentity": {"principalId": ["dynamodb.amazonaws.com"]}}, ORDER_REMOVE, False),
    ("anything-but scalar", {"eventName": [{"anything-but": "REMOVE"}]}, ORDER_INSERT, True),
    ("anything-but prefix", {"dynamodb": {"Keys": {"PK": {"S": [{"anything-but": {"prefix": "COUNTER#"}}]}}}}, SHARD, False),
    ("anything-but on missing key", {"missing": [{"anything-but": "x"}]}, ORDER_INSERT, False),
    ("suffix", {"dynamodb": {"Keys": {"PK": {"S": [{"suffix": "#3"}]}}}}, SHARD, True),
    ("equals-ignore-case", {"eventName": [{"equals-ignore-case": "insert"}]}, ORDER_INSERT, True),
    ("list value: any element", {"dynamodb": {"NewImage": {"tags": {"SS": ["b"]}}}}, ORDER_INSERT, True),
    ("list value: no element", {"dynamodb": {"NewImage": {"tags": {"SS": ["z"]}}}}, ORDER_INSERT, False),
    ("numeric range in", {"dynamodb": {"SizeBytes": [{"numeric": [">", 0, "<=", 42]}]}}, NUMERIC, True),
    ("numeric range out", {"dynamodb": {"SizeBytes": [{"numeric": [">", 42]}]}}, NUMERIC, False),
    ("numeric equals float", {"n": [{"numeric": ["=", 5]}]}, NUMERIC, True),
    ("numeric never matches a DynamoDB N string", {"dynamodb": {"NewImage": {"n": {"N": [{"numeric": [">", 1]}]}}}},
     SHARD, False),
    ("N string matches as literal string", {"dynamodb": {"NewImage": {"n": {"N": ["5"]}}}}, SHARD, True),
    ("number literal compares numerically", {"n": [5]}, NUMERIC, True),
    ("number literal is not a string", {"dynamodb": {"NewImage": {"n": {"N": [5]}}}}, SHARD, False),
    ("true is not 1", {"flag": [1]}, NUMERIC, False),
    ("bool literal", {"flag": [True]}, NUMERIC, True),
    ("null literal", {"nul": [None]}, NUMERIC, True),
    ("null literal does not match a missing key", {"absent": [None]}, NUMERIC, False),
    ("missing key fails literal", {"absent": ["x"]}, NUMERIC, False),
    ("nested pattern on a scalar value", {"eventName": {"S": ["INSERT"]}}, ORDER_INSERT, False),
]


@pytest.mark.parametrize(("pattern", "event", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pattern_table(pattern, event, expected):
    # GIVEN a pattern and a DynamoDB-stream-shaped record  WHEN matched  THEN the AWS answer
    assert matches(pattern, event) is expected


@pytest.mark.parametrize("wanted", [True, False])
def test_exists_on_an_object_is_refused_not_guessed(wanted):
    # GIVEN "exists" written on the attribute's type map {"S": ...}, a non-leaf node, whose result
    # AWS leaves unspecified (issue: an exclusion filter that other matchers read the other way)
    pattern = {"dynamodb": {"NewImage": {"_type": [{"exists": wanted}]}}}
    # WHEN it meets a record holding the attribute  THEN it is refused, naming the leaf form
    with pytest.raises(EventFilterError, match=r"'exists' met an object .*leaf nodes only.*\{\"S\": \[\{\"exists\""):
        matches(pattern, ORDER_INSERT)
    # AND a record without the attribute still gets the defined answer
    assert matches(pattern, ORDER_REMOVE) is (not wanted)


def test_matches_any_ors_filters_and_empty_means_everything():
    # GIVEN the counter and audit patterns
    filters = [COUNTER_PATTERN, AUDIT_PATTERN]

    # WHEN records are matched against the list  THEN any match is enough; no filters = all
    assert matches_any(filters, SHARD)
    assert matches_any(filters, ORDER_INSERT)
    assert not matches_any(filters, ORDER_REMOVE)
    assert matches_any([], ORDER_REMOVE)


def test_parse_filter_criteria_decodes_cloudformation_property():
    # GIVEN FilterCriteria as CDK synthesizes it (patterns are JSON strings)
    prop = {"Filters": [{"Pattern": json.dumps(COUNTER_PATTERN)}, {"Pattern": json.dumps(AUDIT_PATTERN)}]}

    # WHEN parsed
    patterns = parse_filter_criteria(prop)

    # THEN the decoded patterns come back in order; None means no filtering
    assert patterns == (COUNTER_PATTERN, AUDIT_PATTERN)
    assert parse_filter_criteria(None) == ()


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        ({"a": [{"wildcard": "x*"}]}, "'wildcard'"),
        ({"a": [{"cidr": "10.0.0.0/8"}]}, "'cidr'"),
        ({"$or": [{"a": ["x"]}]}, "'$or'"),
        ({"a": "INSERT"}, "'INSERT'"),
        ({"a": []}, "empty list"),
        ({"a": [{"prefix": 3}]}, "'prefix'"),
        ({"a": [{"numeric": [">>", 1]}]}, "'>>'"),
        ({"a": [{"numeric": ["<", 5, ">", 1]}]}, "lower bound"),
        ({"a": [{"numeric": [">", "1"]}]}, "'1'"),
        ({"a": [{"exists": "yes"}]}, "'yes'"),
        ({"a": [{"prefix": "x", "suffix": "y"}]}, "exactly one operator"),
        ({"a": [{"anything-but": {"wildcard": "x"}}]}, "'wildcard'"),
        ({}, "empty"),
    ],
)
def test_bad_patterns_raise_naming_the_operator(pattern, named):
    # GIVEN a malformed pattern or an unsupported operator
    # WHEN it is used  THEN EventFilterError (a TestingError) names the offending part
    with pytest.raises(EventFilterError) as info:
        matches(pattern, ORDER_INSERT)
    assert named in str(info.value)
    assert isinstance(info.value, TestingError)


def test_bad_pattern_raises_even_when_an_earlier_key_already_fails():
    # GIVEN a pattern whose first key does not match and whose second key is malformed
    pattern = {"eventName": ["NOPE"], "dynamodb": {"Keys": [{"regex": ".*"}]}}

    # WHEN matched  THEN the outcome is an error, never a silent no-match
    with pytest.raises(EventFilterError, match="'regex'"):
        matches(pattern, ORDER_INSERT)


@pytest.mark.parametrize(
    ("prop", "named"),
    [
        ({"Filters": [{"Pattern": "{not json"}]}, "not valid JSON"),
        ({"Filters": [{"Pattern": {"Fn::Join": ["", ["{", "}"]]}}]}, "intrinsic"),
        ({"Filters": [{"NotPattern": "{}"}]}, r"Filters\[0\]"),
        ({"Filter": []}, "'Filters'"),
    ],
)
def test_malformed_filter_criteria_raise(prop, named):
    # GIVEN a FilterCriteria property that cannot be decoded  WHEN parsed  THEN a typed error
    with pytest.raises(EventFilterError, match=named):
        parse_filter_criteria(prop)
