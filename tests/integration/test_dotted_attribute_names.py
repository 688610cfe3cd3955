"""Attributes whose names hold ``.``, on DynamoDB Local (a table created from the synthesized
template): a path string is a document path (``a.b`` is ``a`` → ``b``), ``Name("a.b")`` the one
attribute so named, through get, query, filter, write condition and the generated typed module."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.codegen import generate
from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.runtime import ConditionNotMetError, Name, TableClient, attr
from constructs_lib.runtime.exceptions import UnknownAttributeError

pytestmark = pytest.mark.integration

MODEL = Model(
    "dotted",
    entities=[
        # declared attributes: "a.b" is one attribute, "a" a map holding "b"
        Entity("Doc", pk="DOC#{doc}", sk="V#{n}", fields={"doc": "string", "n": "number:4"},
               attributes={"a.b": "string", "a": "map", "w[0]": "integer"}),
        # free-form items: any attribute name goes
        Entity("Note", pk="NOTE#{note}", sk="N", fields=["note"]),
    ],
    access_patterns=[AccessPattern("versions of a doc", entity="Doc", sk="begins_with")],
)
ITEM = {"doc": "d1", "n": 1, "a.b": "flat", "a": {"b": "nested"}, "w[0]": 7}


@pytest.fixture(scope="module")
def table(synth_table_template: Callable[..., dict[str, Any]], dynamodb_local: Any) -> Iterator[TableClient]:
    from constructs_lib.testing import deploy_template

    client = dynamodb_local.client()
    deployment = deploy_template(synth_table_template(MODEL), client=client, name_prefix="dotted-")
    (name,) = deployment.tables.values()
    try:
        table = TableClient(MODEL, name, client=client)
        table.put("Doc", ITEM)
        table.put("Note", {"note": "x", "a.b": "flat", "a": {"b": "nested"}})
        yield table
    finally:
        deployment.delete()


def test_a_name_reads_the_attribute_so_named_and_a_path_the_nested_value(table: TableClient) -> None:
    # GIVEN an item with a top-level "a.b" and a map "a" holding "b"
    # WHEN get projects Name("a.b") THEN the top-level attribute comes back, not the nested value
    got = table.get("Doc", doc="d1", n=1, attributes=[Name("a.b")])
    assert got is not None and got["a.b"] == "flat" and "a" not in got
    # WHEN it projects the document path "a.b" THEN the nested value (inside "a")
    got = table.get("Doc", doc="d1", n=1, attributes=["a.b", Name("w[0]")])
    assert got is not None and got["a"] == {"b": "nested"} and "a.b" not in got and got["w[0]"] == 7
    # AND on a free-form entity the same two readings hold
    note = table.get("Note", note="x", attributes=[Name("a.b")])
    assert note is not None and note["a.b"] == "flat" and "a" not in note
    note = table.get("Note", note="x", attributes=["a.b"])
    assert note is not None and note["a"] == {"b": "nested"} and "a.b" not in note


def test_query_filter_and_condition_name_the_dotted_attribute(table: TableClient) -> None:
    # WHEN a query filters on Name("a.b") and projects it THEN the item matches on the flat value
    page = table.query("versions of a doc", doc="d1", filter=attr(Name("a.b")) == "flat", attributes=[Name("a.b")])
    assert [i["a.b"] for i in page.items] == ["flat"]
    # AND the document path a.b compares the nested value
    assert table.query("versions of a doc", doc="d1", filter=attr("a.b") == "flat").items == []
    assert len(table.query("versions of a doc", doc="d1", filter=attr("a.b") == "nested").items) == 1
    # WHEN a write is conditioned on Name("a.b") THEN it is checked against the flat attribute
    table.update("Doc", {"doc": "d1", "n": 1}, set={"a.b": "flat2"}, condition=attr(Name("a.b")) == "flat")
    with pytest.raises(ConditionNotMetError):
        table.update("Doc", {"doc": "d1", "n": 1}, set={"a.b": "x"}, condition=attr(Name("a.b")) == "flat")
    table.update("Doc", {"doc": "d1", "n": 1}, set={"a.b": "flat"}, condition=attr(Name("a.b")) == "flat2")


def test_a_declared_dotted_name_as_a_path_is_refused_with_the_way_to_name_it(table: TableClient) -> None:
    # GIVEN "w[0]" declared (no attribute "w") WHEN named as a path THEN refused, pointing at Name
    with pytest.raises(UnknownAttributeError, match=r"names 'w'.*name it with Name\('w\[0\]'\)"):
        table.get("Doc", doc="d1", n=1, attributes=["w[0]"])


def test_the_typed_module_projects_the_declared_names_it_offers(table: TableClient, tmp_path: Path) -> None:
    # GIVEN the typed module, whose DocAttribute lists "a.b" and "w[0]"
    path = tmp_path / "dotted_typed.py"
    path.write_text(generate(MODEL), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("dotted_typed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    typed = module.DottedTable(table)
    # WHEN a get and a query project them THEN the attributes so named come back
    got = typed.get_doc(doc="d1", n=1, attributes=["a.b", "w[0]"])
    assert got == {"doc": "d1", "n": 1, "a.b": "flat", "w[0]": 7, "_type": "Doc"}
    (item,) = typed.versions_of_a_doc(doc="d1", attributes=["a.b"]).items
    assert item["a.b"] == "flat" and "a" not in item
