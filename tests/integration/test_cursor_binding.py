"""What a query cursor binds, on DynamoDB Local with tables created from one synthesized
template: a cursor is accepted only by the query that issued it — same table (name, region,
endpoint), model fingerprint, access pattern, index, key values, filter text and values,
projection paths and direction — on plain and write-sharded (merged) reads. A property test
checks "accepted iff the page-shaping contexts are equal" against brute-force equality of the
context tuple (see docs/adr/0037-what-a-cursor-binds.md)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import CursorError, TableClient, attr
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.pages import QUERY_OPTIONS

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
UTC = timezone.utc
KEY = b"one secret shared by every client"
OWNERS = ("o1", "o2")
ITEMS = 4  # per owner: n = 0..3, score = n


def build_model(*, extra_field: bool = False) -> Model:
    """The table's model; ``extra_field`` declares one more typed field, which changes the model
    fingerprint but not the table the template creates."""
    return Model(
        "cursors",
        entities=[
            Entity(
                "Thing", pk="OWNER#{owner}", sk="T#{n}",
                fields={"owner": "string", "n": Field.number(width=4), **({"label": "string"} if extra_field else {})},
                indexes={
                    "ByOwner": IndexKey(pk="O#{owner}", sk="{n}"),
                    "Queue": IndexKey(pk="Q#{owner}#{shard}", sk="{n}", shards=3, shard_by="n"),
                },
            ),
            Entity("Reading", pk="SENSOR#{sensor}#{ts:month}", sk="{ts}", fields={"sensor": "string", "ts": Field.timestamp()}),
        ],
        indexes=[Index("ByOwner"), Index("Queue")],
        access_patterns=[
            AccessPattern("things of an owner", entity="Thing", sk="begins_with"),
            AccessPattern("things of an owner (index)", entity="Thing", index="ByOwner"),
            AccessPattern("things of an owner (sharded)", entity="Thing", index="Queue"),
            AccessPattern("readings between", entity="Reading", sk="between"),
        ],
    )


MODEL = build_model()
CHANGED_MODEL = build_model(extra_field=True)
PATTERNS = ("things of an owner", "things of an owner (index)", "things of an owner (sharded)")
JAN, FEB = datetime(2024, 1, 10, tzinfo=UTC), datetime(2024, 2, 10, tzinfo=UTC)
READINGS_RANGE = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 2, 28, tzinfo=UTC))


@pytest.fixture(scope="module")
def tables(synth_table_template: Callable[..., dict[str, Any]], dynamodb_local: Any) -> Iterator[dict[str, str]]:
    """Two tables, "A" and "B", created from one synthesized template and filled alike."""
    from constructs_lib.testing import deploy_template

    template = synth_table_template(MODEL)
    client = dynamodb_local.client()
    deployments = [deploy_template(template, client=client, name_prefix=f"cursors-{t.lower()}-") for t in "AB"]
    try:
        names = {t: next(iter(d.tables.values())) for t, d in zip("AB", deployments)}
        for name in names.values():
            TableClient(MODEL, name, client=client).batch_write(puts=[
                *(("Thing", {"owner": o, "n": n, "score": n, "w": [n, n + 1], "m": {"x": n}, "note": f"t{n}"})
                  for o in OWNERS for n in range(ITEMS)),
                *(("Reading", {"sensor": "s1", "ts": day}) for day in (
                    datetime(2024, 1, d, tzinfo=UTC) for d in (3, 5, 7)) ),
                *(("Reading", {"sensor": "s1", "ts": day}) for day in (
                    datetime(2024, 2, d, tzinfo=UTC) for d in (3, 5, 7)) ),
            ])
        yield names
    finally:
        for deployment in deployments:
            deployment.delete()


@pytest.fixture(scope="module")
def clients(tables: dict[str, str], dynamodb_local: Any) -> dict[tuple[str, str], TableClient]:
    """One client per (table, model), all sharing one ``cursor_key``."""
    client = dynamodb_local.client()
    return {
        (t, m): TableClient(model, tables[t], client=client, cursor_key=KEY)
        for t in "AB" for m, model in (("M1", MODEL), ("M2", CHANGED_MODEL))
    }


# Regression tests ------------------------------------------------------------------------------------
def test_a_cursor_binds_each_projection_path_not_only_its_attribute_names(clients: dict[Any, TableClient]) -> None:
    # GIVEN a first page that projects the first element of list w
    table = clients["A", "M1"]
    page = table.query("things of an owner", owner="o1", attributes=["w[0]"], limit=1)
    assert page.cursor is not None and page.items[0]["w"] == [0]
    # WHEN its cursor is passed to the same query projecting w[1] THEN it is refused, naming the projection
    with pytest.raises(CursorError, match="different query.*projection"):
        table.query("things of an owner", owner="o1", attributes=["w[1]"], cursor=page.cursor)
    # AND the order of the projected paths does not matter (the page is the same)
    page = table.query("things of an owner", owner="o1", attributes=["w[0]", "m.x"], limit=1)
    rest = table.query("things of an owner", owner="o1", attributes=["m.x", "w[0]"], cursor=page.cursor)
    assert [i["n"] for i in rest] == [1, 2, 3]


def test_a_cursor_from_one_table_is_refused_on_another_sharing_the_cursor_key(clients: dict[Any, TableClient]) -> None:
    # GIVEN two tables from one template, two clients sharing cursor_key, a first page of table A
    a, b = clients["A", "M1"], clients["B", "M1"]
    page = a.query("things of an owner", owner="o1", limit=2)
    assert page.cursor is not None
    # WHEN B is given A's cursor THEN it is refused, naming the table and not the key
    with pytest.raises(CursorError, match="different query.*table") as refused:
        b.query("things of an owner", owner="o1", cursor=page.cursor)
    assert KEY.decode() not in str(refused.value)
    # AND B's own first page is unaffected: it starts at its first item
    assert [i["n"] for i in b.query("things of an owner", owner="o1")] == [0, 1, 2, 3]


def test_a_cursor_is_refused_when_a_filter_value_changes_between_pages(clients: dict[Any, TableClient]) -> None:
    # GIVEN a first page filtered on score > 0
    table = clients["A", "M1"]
    page = table.query("things of an owner", owner="o1", filter=attr("score") > 0, limit=1)
    assert [i["n"] for i in page] == [1] and page.cursor is not None
    # WHEN the next page is asked with score > 1, or with score >= 0 THEN the cursor is refused, naming the filter
    for other in (attr("score") > 1, attr("score") >= 0):
        with pytest.raises(CursorError, match="different query.*filter"):
            table.query("things of an owner", owner="o1", filter=other, cursor=page.cursor)
    # AND with the same filter it continues after the first page
    assert [i["n"] for i in table.query("things of an owner", owner="o1", filter=attr("score") > 0, cursor=page.cursor)] == [2, 3]


def test_a_cursor_is_refused_by_a_client_of_a_model_with_another_fingerprint(clients: dict[Any, TableClient]) -> None:
    # GIVEN two models of the same table that differ by one typed field (so by fingerprint)
    assert fingerprint(MODEL) != fingerprint(CHANGED_MODEL)
    page = clients["A", "M1"].query("things of an owner", owner="o1", limit=1)
    assert page.cursor is not None
    # WHEN the client of the other model gets the cursor THEN it is refused, naming the model
    with pytest.raises(CursorError, match="different query.*model fingerprint"):
        clients["A", "M2"].query("things of an owner", owner="o1", cursor=page.cursor)


def test_a_merged_read_cursor_binds_the_same_context(clients: dict[Any, TableClient]) -> None:
    # GIVEN a first page of a write-sharded index, read merged over its shards, projecting w[0]
    a = clients["A", "M1"]
    pattern = "things of an owner (sharded)"
    page = a.query(pattern, owner="o1", attributes=["w[0]"], limit=1)
    assert page.cursor is not None and page.items[0]["w"] == [0]
    # WHEN the cursor goes to another table, model, projection path or filter THEN it is refused, naming what
    for other, options, what in (
        (clients["B", "M1"], {"attributes": ["w[0]"]}, "table"),
        (clients["A", "M2"], {"attributes": ["w[0]"]}, "model fingerprint"),
        (a, {"attributes": ["w[1]"]}, "projection"),
        (a, {"attributes": ["w[0]"], "filter": attr("score") > 0}, "filter"),
    ):
        with pytest.raises(CursorError, match=f"different query.*{what}"):
            other.query(pattern, owner="o1", cursor=page.cursor, **options)
    # AND passed back to the same query it continues
    rest = a.query(pattern, owner="o1", attributes=["w[0]"], cursor=page.cursor)
    assert [i["w"] for i in rest] == [[1], [2], [3]]
