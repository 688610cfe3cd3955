"""One rule for attribute names that hold ``.`` or ``[``: a path string is a DynamoDB document
path everywhere (``a.b`` is ``a`` → ``b``); ``Name("a.b")`` names the one attribute so called, in
conditions, filters and projections; the generated module passes its typed names as ``Name``."""

from __future__ import annotations

import ast

import pytest

from constructs_lib.codegen import generate
from constructs_lib.model import Entity, Model
from constructs_lib.runtime import ItemValidationError, Name, attr, size
from constructs_lib.runtime.conditions import Attributes, projection, render
from constructs_lib.runtime.exceptions import InvalidConditionError, UnknownAttributeError

DOC = Entity("Doc", pk="DOC#{doc}", fields=["doc"], attributes={"a.b": "string", "a": "map", "w[0]": "integer"})
NOTE = Entity("Note", pk="NOTE#{note}", fields=["note"])  # free-form: no declared attributes
MODEL = Model("dotted", entities=[DOC, NOTE])
DECLARED, FREE = Attributes(MODEL, [MODEL.entity("Doc")]), Attributes(MODEL, [MODEL.entity("Note")])


@pytest.mark.parametrize("scope", [DECLARED, FREE], ids=["declared", "free-form"])
def test_a_name_is_one_attribute_and_a_path_string_is_nested(scope: Attributes) -> None:
    # GIVEN the same text as a Name and as a path WHEN rendered THEN one placeholder vs a path of two
    exact = render(attr(Name("a.b")) == "x", scope, "c")
    assert (exact.text, exact.names) == ("#c0 = :c0", {"#c0": "a.b"})
    nested = render(attr("a.b") == "x", scope, "c")
    assert (nested.text, nested.names) == ("#c0.#c1 = :c0", {"#c0": "a", "#c1": "b"})
    assert render(size(Name("a.b")) > 1, scope, "f").names == {"#f0": "a.b"}


def test_a_declared_dotted_attribute_is_projected_by_name_and_its_path_refused_with_a_hint() -> None:
    # GIVEN "a.b" and "w[0]" declared WHEN projected by Name THEN each is one attribute, no overlap with "a"
    rendered = projection([Name("a.b"), Name("w[0]"), "a"], DECLARED, ["PK"])
    assert rendered.names == {"#p0": "a.b", "#p1": "w[0]", "#p2": "a", "#p3": "PK"}
    # WHEN "w[0]" is written as a path THEN it reads 'w' (undeclared): refused, saying how to name it
    with pytest.raises(UnknownAttributeError, match=r"names 'w'.*is a declared attribute: name it with Name\('w\[0\]'\)"):
        projection(["w[0]"], DECLARED, ["PK"])
    # AND a Name and a path it is a prefix of overlap; Name("a.b") and the path a.b do not
    with pytest.raises(InvalidConditionError, match=r"Name\('a'\) and 'a.b' overlap"):
        projection([Name("a"), "a.b"], DECLARED, ["PK"])
    assert projection([Name("a.b"), "a.b"], DECLARED, ["PK"]).names == {"#p0": "a.b", "#p1": "a", "#p2": "b", "#p3": "PK"}


def test_bad_names_are_refused_with_their_value() -> None:
    with pytest.raises(ItemValidationError, match=r"Name: attribute name '' must be a non-empty string"):
        Name("")
    with pytest.raises(InvalidConditionError, match=r"attribute path 3 must be a non-empty string .* or a Name"):
        attr(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidConditionError, match=r"must be a list of attribute names"):
        projection(Name("a.b"), DECLARED, ["PK"])  # type: ignore[arg-type]
    assert repr(attr(Name("a.b"))) == "attr(Name('a.b'))" and Name("x") == Name("x") != Name("y")


def test_the_typed_module_offers_declared_names_and_passes_them_as_names() -> None:
    # GIVEN an entity declaring "a.b" WHEN its typed module is generated THEN DocAttribute lists it
    # and the projection goes on as Name objects (never parsed as a path)
    text = generate(MODEL)
    assert 'DocAttribute = _t.Literal["doc", "a.b", "a", "w[0]", "_type"]' in text
    tree = ast.parse(text)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DottedTable"]
    (get,) = [f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "get_doc"]
    assert "attributes=None if attributes is None else [_conditions.Name(a) for a in attributes]" in ast.unparse(get)
