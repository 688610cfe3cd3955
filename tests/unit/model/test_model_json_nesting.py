"""Deeply nested JSON given to the model layer: every reader refuses more than ``MAX_JSON_DEPTH``
nested arrays and objects with its own typed error naming the source and the limit (never a
``RecursionError``), and reads a document nested exactly to the limit; the nesting count itself
agrees with the parsed value's depth (``CONSTRUCTS_LIB_SOAK=1`` runs ten times the examples)."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessScope, AccessScopeError, ContractFormatError, Model, ModelFormatError
from constructs_lib.model import jsontext as model_jsontext
from constructs_lib.model.contract_file import build_contract
from constructs_lib.model.slices import SliceError, published_json, read_published, read_slice, slice_of
from constructs_lib.runtime import jsontext as runtime_jsontext
from examples.shop.model import shop_model

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 1000 if SOAK else 100
LIMIT = model_jsontext.MAX_JSON_DEPTH
#: What a refusal says: the limit, and where in the text.
REFUSED = rf"nests arrays and objects more than {LIMIT} levels deep \(line \d+, column \d+\); at most {LIMIT} levels"


def depth(value: Any) -> int:
    """Nested arrays and objects in a parsed value (the reference the scanner is held to)."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def nested(levels: int) -> str:
    """``levels`` arrays, one inside the other."""
    return "[" * levels + "]" * levels


def with_extra(document: dict[str, Any], total: int) -> str:
    """``document`` as JSON with an extra key whose value makes the whole text nest ``total`` levels."""
    text = json.dumps({**document, "extra": "@"})
    return text.replace('"@"', nested(total - 1))


def contract_text(total: int) -> str:
    return with_extra(build_contract(shop_model), total)


# The readers ----------------------------------------------------------------------------------------
#: name -> (read the text, the error it refuses with, what the message names)
READERS: dict[str, tuple[Callable[[str, Path], Any], type[Exception], str]] = {
    "Model.from_json": (lambda text, _: Model.from_json(text), ModelFormatError, "model JSON"),
    "Model.from_json bytes": (lambda text, _: Model.from_json(text.encode()), ModelFormatError, "model JSON"),
    "Model.from_contract text": (lambda text, _: Model.from_contract(text), ContractFormatError, "contract JSON text"),
    "Model.from_contract file": (lambda text, tmp: Model.from_contract(_write(tmp / "shop.contract.json", text)),
                                 ContractFormatError, "contract file '.*shop.contract.json'"),
    "read_slice file": (lambda text, tmp: read_slice(_write(tmp / "orders.json", text)), SliceError,
                        "slice file '.*orders.json'"),
    "read_published": (lambda text, _: read_published(text, source="SSM parameter '/shop/contract'"), SliceError,
                       "SSM parameter '/shop/contract'"),
}
#: name -> a valid document of that reader, as a dict
DOCUMENTS: dict[str, Callable[[], dict[str, Any]]] = {
    "Model.from_json": shop_model.to_dict,
    "Model.from_json bytes": shop_model.to_dict,
    "Model.from_contract text": lambda: build_contract(shop_model),
    "Model.from_contract file": lambda: build_contract(shop_model),
    "read_slice file": lambda: slice_of(shop_model).to_dict(),
    "read_published": lambda: json.loads(published_json(shop_model)),
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_reads_a_document_nested_to_the_limit(reader: str, tmp_path: Path) -> None:
    # GIVEN a valid document whose extra key makes it nest exactly MAX_JSON_DEPTH levels
    read, _, _ = READERS[reader]
    text = with_extra(DOCUMENTS[reader](), LIMIT)
    assert depth(json.loads(text)) == LIMIT
    # WHEN it is read THEN it is read
    assert read(text, tmp_path) is not None


@pytest.mark.parametrize("levels", [LIMIT + 1, 4096])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_refuses_deeper_nesting_with_its_typed_error(reader: str, levels: int, tmp_path: Path) -> None:
    # GIVEN the same document one level deeper, or 4 KB of nested arrays (RecursionError before)
    read, error, names = READERS[reader]
    text = with_extra(DOCUMENTS[reader](), levels)
    # WHEN it is read THEN the reader's typed error names the source, the limit and the place
    with pytest.raises(error, match=rf"^{names} {REFUSED}"):
        read(text, tmp_path)


def test_an_access_scope_refuses_deep_nesting_and_reads_its_own_json() -> None:
    # GIVEN a scope's JSON, and its patterns replaced by arrays nested past the limit
    scope = AccessScope(patterns=["orders by status"], writes={"Order": ["put"]})
    assert AccessScope.from_json(scope.to_json()) == scope
    deep = scope.to_json().replace('["orders by status"]', nested(LIMIT))
    # WHEN it is read THEN AccessScopeError names the scope JSON and the limit
    with pytest.raises(AccessScopeError, match=rf"^access scope JSON {REFUSED}"):
        AccessScope.from_json(deep)
    # AND one level less passes the nesting check (and is refused for what it holds, not how deep)
    with pytest.raises(Exception) as shallower:
        AccessScope.from_json(scope.to_json().replace('["orders by status"]', nested(LIMIT - 1)))
    assert "levels deep" not in str(shallower.value)


def test_the_place_named_is_the_first_bracket_past_the_limit() -> None:
    # GIVEN an object holding, on line 4 from column 5, 64 nested arrays: the 64th is level 65
    text = '{"a": 1,\n "b": "[[[[",\n "c":\n    ' + nested(LIMIT) + "}"
    # WHEN it is read THEN the message points at that array (brackets inside strings are not counted)
    with pytest.raises(ModelFormatError, match=rf"\(line 4, column {5 + LIMIT - 1}\)"):
        Model.from_json(text)


def test_the_runtime_reads_json_with_the_same_code() -> None:
    # GIVEN the runtime's copy (a counter or audit function never loads the model package)
    # WHEN its code is compared with the model's THEN only the module docstrings differ
    for name in ("too_deep", "load_json"):
        assert inspect.getsource(getattr(runtime_jsontext, name)) == inspect.getsource(getattr(model_jsontext, name))
    assert runtime_jsontext.MAX_JSON_DEPTH == LIMIT


# The nesting count against the parsed value --------------------------------------------------------
TEXT = st.text(alphabet=st.sampled_from('ab[]{}"\\\n é\u2028'), max_size=6)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(value=VALUES, limit=st.integers(0, 6), indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans())
def test_too_deep_agrees_with_the_depth_of_the_parsed_value(value: Any, limit: int, indent: int | None,
                                                           ascii_only: bool) -> None:
    # GIVEN any JSON value, written compactly or indented, with brackets, quotes and escapes in its strings
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    # WHEN its nesting is counted against a limit THEN it is refused exactly when the value nests deeper
    for module in (model_jsontext, runtime_jsontext):
        assert (module.too_deep(text, limit) is not None) == (depth(value) > limit)
    # AND a text within the limit reads as json.loads reads it
    if depth(value) <= limit:
        assert model_jsontext.load_json(text, "x", ValueError, limit) == json.loads(text)
