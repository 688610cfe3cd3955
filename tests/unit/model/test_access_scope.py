"""``AccessScope`` keeps what the caller passed untouched, holds its names normalized and
immutable, and compares and hashes by those normalized names."""

from __future__ import annotations

import pytest

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
