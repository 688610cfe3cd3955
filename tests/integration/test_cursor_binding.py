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
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import CursorError, TableClient, attr
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.pages import QUERY_OPTIONS

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
UTC = UTC
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
        names = {t: next(iter(d.tables.values())) for t, d in zip("AB", deployments, strict=True)}
        for name in names.values():
            TableClient(MODEL, name, client=client).batch_write(puts=[
                *(("Thing", {"owner": o, "n": n, "score": n, "w": [n, n + 1], "m": {"x": n, "y": -n}})
                  for o in OWNERS for n in range(ITEMS)),
                *(("Reading", {"sensor": "s1", "ts": datetime(2024, month, day, tzinfo=UTC)})
                  for month in (1, 2) for day in (3, 5, 7)),
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


# Every input of a query, and of the client, either shapes the context or is left out on purpose ----------
THINGS = {"pattern": "things of an owner", "owner": "o1"}
READINGS = {"pattern": "readings between", "sensor": "s1", "ts": READINGS_RANGE, "partition_at": JAN}
#: (query input, first page's call, the next page's change, what the refusal names — None: accepted).
QUERY_INPUTS = [
    ("pattern", THINGS, {"pattern": "things of an owner (index)"}, "access pattern"),
    ("values", {"pattern": "things of an owner", "values": {"owner": "o1"}}, {"values": {"owner": "o2"}}, "key values"),
    ("kw", THINGS, {"owner": "o2"}, "key values"),
    ("limit", THINGS, {"limit": 3}, None),
    ("descending", THINGS, {"descending": True}, "direction"),
    ("descending", THINGS, {"descending": False}, None),  # the pattern's own direction: the same pages
    ("consistent", THINGS, {"consistent": True}, None),
    ("raw", THINGS, {"raw": True}, None),
    ("partition_at", READINGS, {"partition_at": FEB}, "key values"),
    ("filter", THINGS, {"filter": attr("score") > 0}, "filter"),
    ("filter", {**THINGS, "filter": attr("score") > 0}, {"filter": attr("score") > 1}, "filter"),
    ("filter", {**THINGS, "filter": attr("score") > 0}, {"filter": attr("score") >= 0}, "filter"),
    ("attributes", THINGS, {"attributes": ["w[0]"]}, "projection"),
    ("attributes", {**THINGS, "attributes": ["w[0]"]}, {"attributes": ["w[1]"]}, "projection"),
    ("attributes", {**THINGS, "attributes": ["w[0]", "m.x"]}, {"attributes": ["m.x", "w[0]"]}, None),
]


def _query(table: TableClient, call: dict[str, Any], **extra: Any) -> Any:
    call = {**call, **extra}
    pattern, values = call.pop("pattern"), call.pop("values", None)
    return table.query(pattern, values, **call)


def test_every_query_input_is_classified() -> None:
    # GIVEN the parameters of TableClient.query
    params = set(inspect.signature(TableClient.query).parameters) - {"self"}
    # THEN its options are exactly QUERY_OPTIONS, and every input but the cursor itself has a case below
    assert params - {"pattern", "values", "kw"} == QUERY_OPTIONS
    assert {case[0] for case in QUERY_INPUTS} == params - {"cursor"}


@pytest.mark.parametrize(("name", "first", "change", "refused"), QUERY_INPUTS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(QUERY_INPUTS)])
def test_a_cursor_follows_only_the_query_inputs_that_shape_pages(
    clients: dict[Any, TableClient], name: str, first: dict[str, Any], change: dict[str, Any], refused: str | None,
) -> None:
    # GIVEN a first page
    table = clients["A", "M1"]
    page = _query(table, first, limit=1)
    assert page.cursor is not None
    # WHEN the next page changes one input
    if refused is None:
        # THEN an input that does not shape the pages leaves the cursor valid: it continues after the first page
        rest = _query(table, {**first, **change}, cursor=page.cursor)
        assert len(rest) >= 1 and rest.items[0] != page.items[0]
    else:
        # THEN one that does is refused, naming it
        with pytest.raises(CursorError, match=f"different query: its .*{refused}"):
            _query(table, {**first, **change}, cursor=page.cursor)


def test_every_client_input_is_classified(tables: dict[str, str], dynamodb_local: Any) -> None:
    import boto3

    from constructs_lib.model import AccessScope
    from constructs_lib.runtime import _aws
    from constructs_lib.runtime.replication import Replication
    from constructs_lib.runtime.stats import TrafficRecorder

    def boto(endpoint: str = dynamodb_local.endpoint, region: str = "us-east-1") -> Any:
        return boto3.session.Session().client("dynamodb", endpoint_url=endpoint, region_name=region,
                                               aws_access_key_id="local", aws_secret_access_key="local")

    base = {"model": MODEL, "table_name": tables["A"], "client": boto(), "cursor_key": KEY}
    # (client input, a change, what the refusal names — None: accepted); -sharedDb: every region sees the tables
    cases = [
        ("model", {"model": CHANGED_MODEL}, "model fingerprint"),
        ("table_name", {"table_name": tables["B"]}, "table"),
        ("client", {"client": boto()}, None),  # another boto3 client of the same endpoint and region
        ("client", {"client": boto(region="eu-west-1")}, "table"),
        ("client", {"client": boto(endpoint=dynamodb_local.endpoint + "/elsewhere")}, "table"),
        ("client", {"client": boto(endpoint=dynamodb_local.endpoint + "/")}, None),
        ("cursor_key", {"cursor_key": b"another secret of 32 bytes......"}, "signature does not verify"),
        ("batch_retries", {"batch_retries": 1}, None),
        ("traffic", {"traffic": TrafficRecorder(1.0)}, None),
        ("scope", {"scope": AccessScope(patterns=("things of an owner",))}, None),
        ("mapper", {"mapper": TableClient(MODEL, tables["A"], client=boto()).mapper}, None),
        # the region a replicated table's client writes in: it stamps writes, pages are the same
        ("replication", {"replication": Replication("us-east-1", ("us-east-1", "eu-west-1"))}, None),
    ]
    for option in sorted(_aws.ConnectionOptions.__annotations__):  # used only to build a client when given none
        cases.append((option, {}, None))
    # GIVEN every parameter of TableClient (its connection options included)
    params = set(inspect.signature(TableClient).parameters) - {"connection"} | set(_aws.ConnectionOptions.__annotations__)
    assert {c[0] for c in cases} == params
    page = TableClient(**base).query("things of an owner", owner="o1", limit=1)
    for name, change, refused in cases:
        # WHEN a client differing in it is given the cursor
        other = TableClient(**{**base, **change})
        if refused is None:
            # THEN an input that does not shape the pages leaves the cursor valid
            assert [i["n"] for i in other.query("things of an owner", owner="o1", cursor=page.cursor)] == [1, 2, 3], name
        else:
            # THEN one that does is refused, naming it
            with pytest.raises(CursorError, match=refused):
                other.query("things of an owner", owner="o1", cursor=page.cursor)


# Property: accepted iff the page-shaping contexts are equal --------------------------------------------
PATHS = ("w[0]", "w[1]", "m.x", "m.y", "score")  # siblings: one list's elements, one map's keys
SIBLING = {"w[0]": "w[1]", "w[1]": "w[0]", "m.x": "m.y", "m.y": "m.x", "score": "w[0]"}
#: One draw per part of a context; ``limit`` is drawn too but is not part of it.
CONTEXT = {
    "table": st.sampled_from("AB"),
    "model": st.sampled_from(("M1", "M2")),
    "pattern": st.sampled_from(PATTERNS),
    "owner": st.sampled_from(OWNERS),
    "attributes": st.lists(st.sampled_from(PATHS), min_size=1, max_size=3, unique=True) | st.none(),
    "filter": st.none() | st.tuples(st.sampled_from((">", ">=")), st.integers(0, 1)),
    "descending": st.sampled_from((None, False, True)),
    "limit": st.integers(1, 3),
}
#: Contexts a cursor is presented under, per cursor minted: a refusal costs no call.
NEIGHBOURS = 8


def near(part: str, value: Any) -> st.SearchStrategy[Any]:
    """A value of ``part`` drawn again: anew, or (for a projection) reordered or with one path
    swapped for its sibling (w[0] for w[1], m.x for m.y), so near misses are common."""
    if part != "attributes" or value is None:
        return CONTEXT[part]
    swapped = st.integers(0, len(value) - 1).map(lambda i: [*value[:i], SIBLING[value[i]], *value[i + 1:]])
    return swapped.filter(lambda paths: len(set(paths)) == len(paths)) | st.permutations(value) | CONTEXT[part]


def neighbour(data: st.DataObject, a: dict[str, Any], n: int) -> dict[str, Any]:
    """The first: ``a`` with its paths reordered (an equal context); then ``a`` with one or two
    of its parts drawn again (which may come out equal)."""
    parts = ["attributes"] if n == 0 else data.draw(
        st.lists(st.sampled_from(sorted(CONTEXT)), min_size=1, max_size=2, unique=True), label=f"#{n} parts drawn again")
    if n == 0:
        return {**a, "attributes": a["attributes"] and data.draw(st.permutations(a["attributes"]), label="#0 paths")}
    return {**a, **{part: data.draw(near(part, a[part]), label=f"#{n} {part}") for part in parts}}


def reference(ctx: dict[str, Any]) -> tuple[Any, ...]:
    """Brute force: the context tuple, the projection as a set and the direction as read (every
    pattern here reads ascending by default). The index is the pattern's, listed anyway."""
    index = MODEL.resolved_patterns[ctx["pattern"]].index
    projection = None if ctx["attributes"] is None else frozenset(ctx["attributes"])
    return (ctx["table"], ctx["model"], ctx["pattern"], index and index.name, ctx["owner"], projection,
            ctx["filter"], bool(ctx["descending"]))


def run(clients: dict[Any, TableClient], ctx: dict[str, Any], **options: Any) -> Any:
    flt = ctx["filter"]
    condition = None if flt is None else (attr("score") > flt[1] if flt[0] == ">" else attr("score") >= flt[1])
    return clients[ctx["table"], ctx["model"]].query(
        ctx["pattern"], owner=ctx["owner"], attributes=ctx["attributes"], filter=condition,
        descending=ctx["descending"], **options,
    )


@settings(max_examples=500 if SOAK else 50, deadline=None, derandomize=not SOAK,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_cursor_is_accepted_iff_the_page_shaping_contexts_are_equal(
    clients: dict[Any, TableClient], data: st.DataObject,
) -> None:
    # GIVEN a cursor minted under one context
    a = data.draw(st.fixed_dictionaries(CONTEXT), label="minted under")
    page = run(clients, a, limit=1)
    assert page.cursor is not None
    for n in range(NEIGHBOURS):
        # WHEN it is presented under another: some of its parts drawn again (maybe equal, paths reordered)
        b = neighbour(data, a, n)
        try:
            rest = run(clients, b, limit=b["limit"], cursor=page.cursor)
            accepted = True
        except CursorError:
            accepted = False
        # THEN it is accepted iff the contexts are equal (and then it continues after the first page)
        same = reference(a) == reference(b)
        event("contexts equal" if same else "contexts differ")
        assert accepted == same, (
            f"accepted={accepted} but contexts {'equal' if same else 'differ'}: {reference(a)} vs {reference(b)}")
        if accepted:
            assert rest.items and rest.items[0] != page.items[0]
