"""``AccessScope`` keeps what the caller passed untouched, holds its names normalized and
immutable, and compares and hashes by those normalized names."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructs_lib.model import AccessScopeError
from constructs_lib.model.scope import AccessScope


def test_declared_arguments_are_not_changed_and_the_scope_holds_them_normalized() -> None:
    # GIVEN lists and a dict the caller keeps
    patterns, batch_gets = ["b", "a", "b"], ["User", "User"]
    writes = {"Order": ["update", "put", "put"], "Item": "delete"}
    # WHEN a scope is built from them
    scope = AccessScope(patterns=patterns, writes=writes, batch_gets=batch_gets)
    # THEN the caller's objects are as they were
    assert patterns == ["b", "a", "b"] and batch_gets == ["User", "User"]
    assert writes == {"Order": ["update", "put", "put"], "Item": "delete"}
    # AND the scope holds each name once, writes in WRITE_KINDS order, entities sorted
    assert scope.patterns == ("b", "a") and scope.batch_gets == ("User",)
    assert dict(scope.writes) == {"Item": ("delete",), "Order": ("put", "update")}
    assert list(scope.writes) == ["Item", "Order"]


def test_a_scope_cannot_be_changed() -> None:
    # GIVEN a scope
    scope = AccessScope(patterns=["p"], writes={"Order": ["put"]})
    # WHEN any of its names is assigned or its writes mapping is changed THEN it refuses
    for name in ("patterns", "writes", "batch_gets", "tenant", "other"):
        with pytest.raises(AttributeError):
            setattr(scope, name, ())
    with pytest.raises(TypeError):
        scope.writes["Order"] = ("delete",)  # type: ignore[index]


def test_scopes_declaring_the_same_names_are_equal_and_hash_alike() -> None:
    # GIVEN two scopes declaring the same names in another order and with duplicates, and a third
    a = AccessScope(patterns=["p", "q"], writes={"B": ["update", "put"], "A": "delete"})
    b = AccessScope(patterns=("p", "q", "p"), writes={"A": ("delete",), "B": ("put", "update", "put")})
    c = AccessScope(patterns=["q", "p"], writes={"A": "delete", "B": ["put", "update"]})
    # THEN the first two are one scope (equal, same hash, one set member); pattern order matters
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != c
    # AND the JSON round trip gives the same scope
    assert AccessScope.from_json(a.to_json()) == a


def test_bad_declarations_are_refused_naming_the_value() -> None:
    with pytest.raises(AccessScopeError, match="'publish'"):
        AccessScope(writes={"Order": ["publish"]})
    with pytest.raises(AccessScopeError, match="not one string"):
        AccessScope(patterns="p")
    with pytest.raises(AccessScopeError, match="declares nothing"):
        AccessScope()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
SCOPE_KEYS = st.sampled_from(["patterns", "writes", "batch_gets", "tenant"])


@given(st.dictionaries(SCOPE_KEYS, JSON_VALUES, min_size=1))
def test_any_json_shape_is_a_scope_or_an_access_scope_error(data: dict[str, object]) -> None:
    # GIVEN a scope file whose keys are right and whose values are any JSON
    text = json.dumps(data)
    # WHEN it is read
    try:
        scope = AccessScope.from_json(text)
    except AccessScopeError as exc:
        # THEN a refusal is typed and names what it refused
        assert str(exc).startswith("AccessScope") or "access scope" in str(exc)
    else:
        # OR it is a scope that survives its own round trip
        assert AccessScope.from_json(scope.to_json()) == scope


@pytest.mark.parametrize(("data", "rule"), [
    ({"patterns": 5}, "patterns 5 must be a list of names, not int"),
    ({"patterns": [1]}, r"patterns: \[1\] are not names"),
    ({"writes": {"A": 3}}, "writes of 'A' 3 must be a list of names"),
    ({"batch_gets": {"A": 1}}, "must be a list of names, not dict"),
    ({"patterns": ["p"], "tenant": 3}, "tenant 3 must be a string or None"),
])
def test_wrong_json_types_name_the_value_and_the_rule(data: dict[str, object], rule: str) -> None:
    with pytest.raises(AccessScopeError, match=rule):
        AccessScope.from_json(json.dumps(data))
