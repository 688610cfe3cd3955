"""Conditions on writes, filters and projections on reads, on DynamoDB Local with a table
created from the synthesized template: every operator met and not met, composition with the
model's own conditions (versions, existence), transactions, filtered paging against an
independent reference (property test), projections, and refusals that send nothing."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from request_count import Calls

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import (
    ConditionNotMetError,
    ItemExistsError,
    ItemNotFoundError,
    TableClient,
    TransactionCanceledError,
    TransactionConditionNotMetError,
    VersionConflictError,
    attr,
    size,
)
from constructs_lib.runtime.exceptions import InvalidConditionError, UnknownAttributeError

pytestmark = pytest.mark.integration

UTC = UTC
PLACED = datetime(2024, 6, 1, 9, 30, tzinfo=UTC)

MODEL = Model(
    "conditions",
    entities=[
        Entity(
            "Order", pk="USER#{user_id}", sk="ORDER#{order_id}",
            fields={"user_id": "string", "order_id": "string", "status": Field.enum("PENDING", "PAID", "SHIPPED"),
                    "placed": Field.timestamp()},
            indexes={"ByStatus": IndexKey(pk="STATUS#{status}", sk="{order_id}")},
            required=("status",),
        ),
        Entity("Account", pk="ACCT#{account_id}", sk="ACCT", fields=["account_id"], version_attribute="version"),
        Entity(
            "Thing", pk="BOX#{box}", sk="N#{n}", fields={"box": "string", "n": Field.number(width=6)},
            indexes={"ByBox": IndexKey(pk="B#{box}", sk="R#{n}"), "Keys": IndexKey(pk="K#{box}", sk="N#{n}")},
        ),
        Entity(  # a write-sharded index: its reads merge 3 partitions
            "Ticket", pk="TICKET#{ticket_id}", sk="TICKET",
            fields={"ticket_id": "string", "queue": "string", "n": Field.number(width=6)},
            indexes={"ByQueue": IndexKey(pk="Q#{queue}#{shard}", sk="{n}", shards=3, shard_by="ticket_id")},
        ),
    ],
    indexes=[Index("ByStatus"), Index("ByBox"), Index("Keys", projection="KEYS_ONLY"), Index("ByQueue")],
    access_patterns=[
        AccessPattern("user's orders", entity="Order", sk="begins_with"),
        AccessPattern("orders by status", entity="Order", index="ByStatus"),
        AccessPattern("order", entity="Order", sk="="),
        AccessPattern("things in a box", entity="Thing", sk="begins_with"),
        AccessPattern("things by box (index)", entity="Thing", index="ByBox"),
        AccessPattern("thing keys", entity="Thing", index="Keys"),
        AccessPattern("tickets of a queue", entity="Ticket", index="ByQueue"),
    ],
)


@pytest.fixture(scope="module")
def template(synth_table_template: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    return synth_table_template(MODEL)


@pytest.fixture(scope="module")
def table(template: dict[str, Any], dynamodb_local: Any) -> Iterator[TableClient]:
    from constructs_lib.testing import deploy_template

    client = dynamodb_local.client()
    deployment = deploy_template(template, client=client, name_prefix="conditions-")
    (name,) = deployment.tables.values()
    try:
        yield TableClient(MODEL, name, client=client)
    finally:
        deployment.delete()


@pytest.fixture
def calls(table: TableClient) -> Iterator[Calls]:
    counter = Calls(table.client)
    yield counter
    counter.close()


_ids = itertools.count()


def order(**extra: Any) -> dict[str, Any]:
    n = next(_ids)
    return {"user_id": f"u{n}", "order_id": f"o{n}", "status": "PAID", "total": 120, "placed": PLACED,
            "tags": {"gift", "fragile", "eu", "express"}, "note": "hello world",
            "address": {"city": "Oslo", "lines": ["Main St 1", "3rd floor"]}, "limit": 100, **extra}


# Every operator, each once met and once not met -----------------------------------------------------
OPERATORS = [
    ("==", attr("status") == "PAID", attr("status") == "PENDING"),
    ("!=", attr("status") != "PENDING", attr("status") != "PAID"),
    ("<", attr("total") < 121, attr("total") < 120),
    ("<=", attr("total") <= 120, attr("total") <= 119),
    (">", attr("total") > 119, attr("total") > 120),
    (">=", attr("total") >= 120, attr("total") >= 121),
    ("between", attr("total").between(100, 120), attr("total").between(121, 200)),
    ("is_in", attr("status").is_in("PAID", "SHIPPED"), attr("status").is_in(["PENDING", "SHIPPED"])),
    ("begins_with", attr("note").begins_with("hello"), attr("note").begins_with("world")),
    ("contains text", attr("note").contains("o w"), attr("note").contains("xyz")),
    ("contains set", attr("tags").contains("gift"), attr("tags").contains("slow")),
    ("exists", attr("note").exists(), attr("missing").exists()),
    ("not_exists", attr("missing").not_exists(), attr("note").not_exists()),
    ("size", size(attr("tags")) > 3, size(attr("tags")) > 4),
    ("size between", size("note").between(11, 11), size("note").between(1, 10)),
    ("nested path", attr("address.lines[1]") == "3rd floor", attr("address.city") == "Bergen"),
    ("attribute vs attribute", attr("total") > attr("limit"), attr("total") < attr("limit")),
    ("timestamp field", attr("placed") == PLACED, attr("placed") > PLACED),
    ("timestamp as text", attr("placed").begins_with("2024-06-01T"), attr("placed").begins_with("2023")),
    ("and", (attr("status") == "PAID") & (attr("total") > 100), (attr("status") == "PAID") & (attr("total") > 500)),
    ("or", (attr("status") == "SHIPPED") | (attr("total") > 100), (attr("status") == "SHIPPED") | (attr("total") > 500)),
    ("not", ~(attr("status") == "SHIPPED"), ~(attr("status") == "PAID")),
]


@pytest.mark.parametrize(("name", "met", "not_met"), OPERATORS, ids=[o[0] for o in OPERATORS])
def test_each_operator_met_and_not_met(table: TableClient, name: str, met: Any, not_met: Any) -> None:
    # GIVEN a stored order
    item = table.put("Order", order())
    key = {"user_id": item["user_id"], "order_id": item["order_id"]}
    # WHEN an update carries a condition the item meets THEN it is applied
    assert table.update("Order", key, set={"seen": 1}, condition=met)["seen"] == 1
    # WHEN an update carries a condition the item does not meet
    with pytest.raises(ConditionNotMetError) as caught:
        table.update("Order", key, set={"seen": 2}, condition=not_met)
    # THEN it is refused with the stored item (decoded), and nothing changed
    assert caught.value.item is not None and caught.value.item["seen"] == 1
    assert caught.value.item["placed"] == "2024-06-01T09:30:00.000000Z" and caught.value.item["total"] == 120
    assert caught.value.condition is not_met and caught.value.key == table.keys("Order", **key)
    assert table.get("Order", **key)["seen"] == 1  # type: ignore[index]


def test_put_and_delete_conditions(table: TableClient) -> None:
    # GIVEN a stored order
    item = table.put("Order", order(status="PENDING"))
    key = {"user_id": item["user_id"], "order_id": item["order_id"]}
    # WHEN overwritten only if still PENDING THEN the first overwrite succeeds, the second is refused
    table.put("Order", {**item, "status": "PAID"}, condition=attr("status") == "PENDING")
    with pytest.raises(ConditionNotMetError) as caught:
        table.put("Order", {**item, "status": "SHIPPED"}, condition=attr("status") == "PENDING")
    assert caught.value.item is not None and caught.value.item["status"] == "PAID"
    # WHEN a put with a condition finds no item THEN the condition is evaluated on no item
    with pytest.raises(ConditionNotMetError) as absent:
        table.put("Order", order(), condition=attr("status") == "PAID")
    assert absent.value.item is None
    assert table.put("Order", order(), condition=attr("status").not_exists())["status"] == "PAID"
    # WHEN a delete's condition is not met THEN the item stays; when met, it is deleted
    with pytest.raises(ConditionNotMetError):
        table.delete("Order", key, condition=attr("status") == "SHIPPED")
    assert table.delete("Order", key, condition=attr("status") == "PAID") is not None
    assert table.get("Order", **key) is None


def test_composition_with_the_models_own_conditions(table: TableClient) -> None:
    # GIVEN a versioned account with a balance of 5
    table.put("Account", {"account_id": "a1", "balance": 5}, create_only=True)
    key = {"account_id": "a1"}
    # WHEN the version matches but the caller's condition fails THEN ConditionNotMetError
    with pytest.raises(ConditionNotMetError) as caught:
        table.update("Account", key, add={"balance": -10}, expected_version=1, condition=attr("balance") >= 10)
    assert caught.value.item == {"account_id": "a1", "balance": 5, "version": 1, "_type": "Account"}
    # WHEN the version is stale THEN the version conflict is reported, whatever the caller's condition
    for condition in (attr("balance") >= 1, attr("balance") >= 10):
        with pytest.raises(VersionConflictError):
            table.update("Account", key, add={"balance": -1}, expected_version=7, condition=condition)
    # WHEN both hold THEN the update applies (the caller's condition never replaces the version check)
    assert table.update("Account", key, add={"balance": -1}, expected_version=1, condition=attr("balance") >= 1)[
        "balance"] == 4
    # WHEN create_only meets an existing item THEN ItemExistsError, not the caller's condition
    with pytest.raises(ItemExistsError):
        table.put("Account", {"account_id": "a1", "balance": 0}, create_only=True, condition=attr("balance").exists())
    # WHEN a plain put continues the stored version under a condition THEN the condition is checked on
    # the stored item, and the version still continues
    assert table.put("Account", {"account_id": "a1", "balance": 50}, condition=attr("balance") == 4)["version"] == 3
    with pytest.raises(ConditionNotMetError) as stale:
        table.put("Account", {"account_id": "a1", "balance": 60}, condition=attr("balance") == 4)
    assert stale.value.item is not None and stale.value.item["balance"] == 50 and stale.value.item["version"] == 3
    # WHEN must_exist finds nothing THEN ItemNotFoundError; a failing caller's condition on an
    # existing item is ConditionNotMetError
    with pytest.raises(ItemNotFoundError):
        table.delete("Account", {"account_id": "nope"}, must_exist=True, condition=attr("balance") > 0)
    with pytest.raises(ItemNotFoundError):
        table.update("Account", {"account_id": "nope"}, set={"x": 1}, condition=attr("balance") > 0)
    with pytest.raises(ConditionNotMetError):
        table.delete("Account", key, must_exist=True, condition=attr("balance") > 100)
    with pytest.raises(VersionConflictError):
        table.delete("Account", key, expected_version=1, condition=attr("balance") > 0)
    assert table.delete("Account", key, expected_version=3, condition=attr("balance") > 0) is not None


def test_transactions(table: TableClient) -> None:
    # GIVEN two orders
    first, second = table.put("Order", order()), table.put("Order", order(status="PENDING"))
    k1 = {"user_id": first["user_id"], "order_id": first["order_id"]}
    k2 = {"user_id": second["user_id"], "order_id": second["order_id"]}
    # WHEN one action's condition fails THEN nothing is written and the error names that action,
    # carries the stored item and is both a transaction cancellation and a condition failure
    with pytest.raises(TransactionConditionNotMetError) as caught:
        with table.transaction() as tx:
            tx.update("Order", k1, set={"status": "SHIPPED"}, condition=attr("status") == "PAID")
            tx.update("Order", k2, set={"status": "SHIPPED"}, condition=attr("status") == "PAID")
    assert caught.value.action == 1 and caught.value.item is not None and caught.value.item["status"] == "PENDING"
    assert isinstance(caught.value, TransactionCanceledError) and isinstance(caught.value, ConditionNotMetError)
    assert table.get("Order", **k1)["status"] == "PAID"  # type: ignore[index]
    # WHEN a condition check and a delete hold THEN the transaction commits
    with table.transaction() as tx:
        tx.condition_check("Order", k1, condition=attr("total") >= 100)
        tx.delete("Order", k2, condition=attr("status") == "PENDING")
        tx.put("Order", order(), create_only=True, condition=attr("status").not_exists())
    assert table.get("Order", **k2) is None
    # WHEN a condition check fails on the caller's condition THEN it is reported as such
    with pytest.raises(TransactionConditionNotMetError) as check:
        with table.transaction() as tx:
            tx.condition_check("Order", k1, condition=attr("total") > 1000)
            tx.put("Order", order())
    assert check.value.action == 0 and check.value.item is not None and check.value.item["total"] == 120
    # WHEN the model's own condition fails (a stale version) THEN it is not the caller's condition
    table.put("Account", {"account_id": "tx", "balance": 1}, create_only=True)
    with pytest.raises(TransactionCanceledError) as own:
        with table.transaction() as tx:
            tx.update("Account", {"account_id": "tx"}, set={"balance": 2}, expected_version=9,
                      condition=attr("balance") == 1)
    assert not isinstance(own.value, ConditionNotMetError)


def test_refused_before_any_call(table: TableClient, calls: Calls) -> None:
    key = {"user_id": "u", "order_id": "o"}
    cases: list[tuple[type[Exception], str, Callable[[], Any]]] = [
        (UnknownAttributeError, "'PK', an attribute the model manages", lambda: table.update(
            "Order", key, set={"x": 1}, condition=attr("PK") == "x")),
        (UnknownAttributeError, "'GSI1PK'|'ByStatusPK'|manages", lambda: table.delete(
            "Order", key, condition=attr("_type") == "Order")),
        (InvalidConditionError, "None never matches", lambda: table.delete("Order", key, condition=attr("x") == None)),  # noqa: E711
        (InvalidConditionError, "not one of the declared choices", lambda: table.delete(
            "Order", key, condition=attr("status") == "LOST")),
        (InvalidConditionError, "no truth value", lambda: table.delete(
            "Order", key, condition=1 < attr("total") < 3)),  # type: ignore[operator]
        (InvalidConditionError, "must be a condition", lambda: table.delete("Order", key, condition="status = 1")),  # type: ignore[arg-type]
        (InvalidConditionError, "takes no filter", lambda: table.query(
            "order", user_id="u", order_id="o", filter=attr("total") > 1)),
        (UnknownAttributeError, "does not project", lambda: table.query(
            "thing keys", box="b", filter=attr("score") > 1)),
        (UnknownAttributeError, "does not project", lambda: table.query(
            "thing keys", box="b", attributes=["score"])),
        (UnknownAttributeError, "manages", lambda: table.get("Order", attributes=["SK"], **key)),
        (InvalidConditionError, "overlap", lambda: table.get("Order", attributes=["address", "address.city"], **key)),
        (InvalidConditionError, "list of attribute names", lambda: table.get("Order", attributes="total", **key)),  # type: ignore[arg-type]
    ]
    for error, match, call in cases:
        before = calls.count
        with pytest.raises(error, match=match):
            call()
        assert calls.count == before, f"a refused call reached DynamoDB ({match})"


# Filters ---------------------------------------------------------------------------------------------------
def test_filter_on_query_and_index(table: TableClient) -> None:
    # GIVEN one user's orders with several totals
    user = f"fu{next(_ids)}"
    for i, total in enumerate((50, 150, 99, 300)):
        table.put("Order", {"user_id": user, "order_id": f"o{i}", "status": "SHIPPED" if i % 2 else "PAID",
                            "total": total})
    # WHEN filtered on total THEN only matches come back, in key order, paged by limit
    page = table.query("user's orders", user_id=user, filter=attr("total") > 100, limit=1)
    assert [i["total"] for i in page] == [150] and page.cursor is not None
    rest = table.query("user's orders", user_id=user, filter=attr("total") > 100, cursor=page.cursor)
    assert [i["total"] for i in rest] == [300] and rest.cursor is None
    assert [i["order_id"] for i in table.query_all("user's orders", user_id=user, filter=attr("total") < 100)] == [
        "o0", "o2"]
    # WHEN a GSI query is filtered THEN the filter composes with the index's key condition
    shipped = table.query_all("orders by status", status="SHIPPED", filter=attr("user_id") == user)
    assert sorted(i["order_id"] for i in shipped) == ["o1", "o3"]


def _things(table: TableClient, box: str, scores: list[int]) -> None:
    table.batch_write(puts=[("Thing", {"box": box, "n": n, "score": s, "blob": "x" * 20}) for n, s in enumerate(scores)])


_boxes = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    scores=st.lists(st.integers(0, 9), min_size=0, max_size=40),
    threshold=st.integers(0, 10),
    limit=st.integers(1, 7),
    descending=st.booleans(),
    index=st.booleans(),
    projected=st.booleans(),
)
def test_filtered_paging_matches_a_reference(
    table: TableClient, scores: list[int], threshold: int, limit: int, descending: bool, index: bool, projected: bool,
) -> None:
    # GIVEN random items in a fresh box
    box = f"box{next(_boxes)}"
    _things(table, box, scores)
    reference = [n for n, s in enumerate(scores) if s >= threshold]
    if descending:
        reference.reverse()
    # WHEN read page by page with a filter, a limit and (maybe) a projection, on the table or a GSI
    pattern = "things by box (index)" if index else "things in a box"
    options: dict[str, Any] = {"filter": attr("score") >= threshold, "limit": limit, "descending": descending}
    if projected:
        options["attributes"] = ["score"]
    seen: list[int] = []
    cursor = None
    for _ in range(len(scores) + 2):
        page = table.query(pattern, box=box, cursor=cursor, **options)
        # THEN every page is full unless it is the last, every item matches, and projections hold
        assert len(page) <= limit and (page.cursor is None or len(page) == limit)
        assert all(i["score"] >= threshold for i in page)
        assert all(("blob" in i) != projected for i in page)
        seen += [i["n"] for i in page]
        cursor = page.cursor
        if cursor is None:
            break
    # THEN the pages together are exactly the reference: no item lost or repeated
    assert seen == reference
    assert [i["n"] for i in table.query_all(pattern, box=box, **{k: v for k, v in options.items() if k != "limit"})] == reference


def test_filtered_reads_feed_the_traffic_recorder(table: TableClient) -> None:
    # GIVEN a box where one item in ten matches, and recording on
    box = f"box{next(_boxes)}"
    _things(table, box, [9 if n % 10 == 0 else 0 for n in range(60)])
    recorder = table.record_traffic(1.0)
    try:
        # WHEN the filtered query runs (and the same pattern without a filter)
        assert len(list(table.query_all("things in a box", box=box, filter=attr("score") == 9))) == 6
        assert len(table.query("things in a box", box=box, limit=5)) == 5
    finally:
        table.stop_recording()
    # THEN the recorder saw what was read (ScannedCount) against what was returned (Count)
    records = [r for r in recorder.records() if r.pattern == "things in a box" and r.count != 5]
    assert sum(r.scanned_count or 0 for r in records) == 60 and sum(r.count or 0 for r in records) == 6
    # THEN the filtered reads are a shape of their own, apart from the unfiltered ones
    shapes = {s.label: s for s in recorder.snapshot().shapes if s.pattern == "things in a box"}
    assert set(shapes) == {"things in a box", "things in a box + filter score = :f0"}
    shape = shapes["things in a box + filter score = :f0"]
    assert (shape.scanned, shape.returned) == (60, 6)
    # THEN the report flags the pattern as filter-heavy
    report = recorder.report(min_scanned=50, min_total_requests=1)
    (finding,) = [f for f in report.findings if f.kind == "filter_heavy_query"]
    assert finding.subject == "things in a box" and "is read with filter= (score = :f0)" in finding.recommendation


# Projections -----------------------------------------------------------------------------------------------
def test_projections(table: TableClient) -> None:
    # GIVEN an order with many attributes
    item = table.put("Order", order())
    key = {"user_id": item["user_id"], "order_id": item["order_id"]}
    # WHEN read with a projection THEN only those attributes come back, plus the entity and the key fields
    got = table.get("Order", attributes=["total", "address.city"], **key)
    assert got == {"_type": "Order", "total": 120, "address": {"city": "Oslo"}, **key}
    # WHEN a query projects THEN each item keeps the key fields parsed from its keys
    (one,) = table.query("user's orders", user_id=item["user_id"], attributes=["note"])
    assert one == {"_type": "Order", "note": "hello world", **key}
    # WHEN a GSI query projects and pages THEN the index keys are kept for the cursor
    user = f"pu{next(_ids)}"
    for i in range(5):
        table.put("Order", {"user_id": user, "order_id": f"p{i}", "status": "SHIPPED", "total": i})
    got_ids = [i["order_id"] for i in table.query_all(
        "orders by status", status="SHIPPED", filter=attr("user_id") == user, attributes=["total"], limit=2)]
    assert got_ids == [f"p{i}" for i in range(5)]
    # WHEN batch_get projects THEN every item is cut the same way, missing ones stay None
    other = table.put("Order", order())
    found = table.batch_get(
        [("Order", key), ("Order", {"user_id": "nobody", "order_id": "x"}),
         ("Order", {"user_id": other["user_id"], "order_id": other["order_id"]})],
        attributes=["status"],
    )
    assert found[0] == {"_type": "Order", "status": "PAID", **key} and found[1] is None
    assert found[2] is not None and set(found[2]) == {"_type", "status", "user_id", "order_id"}
    # WHEN a KEYS_ONLY index is read with key fields only THEN they come back from the keys
    _things(table, "kbox", [1, 2])
    assert [i["n"] for i in table.query("thing keys", box="kbox", attributes=["n"])] == [0, 1]


def test_a_timestamp_condition_matches_the_same_instant_in_any_zone(table: TableClient) -> None:
    # GIVEN a condition with a timestamp value WHEN rendered for a write THEN it is encoded like on write
    item = table.put("Order", order(placed=PLACED + timedelta(hours=1)))
    key = {"user_id": item["user_id"], "order_id": item["order_id"]}
    later = PLACED.astimezone(timezone(timedelta(hours=2))) + timedelta(hours=1)  # the same instant, another zone
    assert table.update("Order", key, set={"ok": True}, condition=attr("placed") == later)["ok"] is True


# Random conditions against an independent evaluator ------------------------------------------------------
WORDS = ("ab", "abc", "b", "ba", "")


def _leaf() -> st.SearchStrategy[tuple[Any, Callable[[dict[str, Any]], bool]]]:
    ops = {"==": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
           "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}

    def compare(name: str, op: str, value: Any, use_size: bool = False) -> tuple[Any, Callable[[dict[str, Any]], bool]]:
        left = size(attr(name)) if use_size else attr(name)
        cond = {"==": left == value, "!=": left != value, "<": left < value, "<=": left <= value,
                ">": left > value, ">=": left >= value}[op]

        def holds(item: dict[str, Any]) -> bool:
            if name not in item:  # a missing attribute differs from every value, and compares to none
                return op == "!="
            return ops[op](len(item[name]) if use_size else item[name], value)
        return cond, holds

    def between(lo: int, hi: int) -> tuple[Any, Callable[[dict[str, Any]], bool]]:
        lo, hi = sorted((lo, hi))
        return attr("a").between(lo, hi), lambda i: "a" in i and lo <= i["a"] <= hi

    def is_in(values: list[int]) -> tuple[Any, Callable[[dict[str, Any]], bool]]:
        return attr("a").is_in(*values), lambda i: i.get("a") in values

    def begins(prefix: str) -> tuple[Any, Callable[[dict[str, Any]], bool]]:
        return attr("b").begins_with(prefix), lambda i: isinstance(i.get("b"), str) and i["b"].startswith(prefix)

    def contains(name: str, value: str) -> tuple[Any, Callable[[dict[str, Any]], bool]]:
        return attr(name).contains(value), lambda i: name in i and value in i[name]

    def exists(name: str, present: bool) -> tuple[Any, Callable[[dict[str, Any]], bool]]:
        cond = attr(name).exists() if present else attr(name).not_exists()
        return cond, lambda i: (name in i) == present

    op = st.sampled_from(sorted(ops))
    return st.one_of(
        st.builds(compare, st.just("a"), op, st.integers(0, 4)),
        st.builds(compare, st.just("b"), op, st.sampled_from(WORDS)),
        st.builds(compare, st.sampled_from(["tags", "b"]), op, st.integers(0, 3), st.just(True)),
        st.builds(between, st.integers(0, 4), st.integers(0, 4)),
        st.builds(is_in, st.lists(st.integers(0, 4), min_size=1, max_size=3)),
        st.builds(begins, st.sampled_from(["a", "ab", "b"])),
        st.builds(contains, st.just("b"), st.sampled_from(["a", "b", "c"])),
        st.builds(contains, st.just("tags"), st.sampled_from(["x", "y"])),
        st.builds(exists, st.sampled_from(["a", "b", "tags"]), st.booleans()),
    )


def _combine(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    def both(left: Any, right: Any) -> Any:
        return left[0] & right[0], lambda i: left[1](i) and right[1](i)

    def either(left: Any, right: Any) -> Any:
        return left[0] | right[0], lambda i: left[1](i) or right[1](i)

    def negate(c: Any) -> Any:
        return ~c[0], lambda i: not c[1](i)

    return st.one_of(st.builds(both, children, children), st.builds(either, children, children),
                     st.builds(negate, children))


ITEMS = st.lists(st.fixed_dictionaries({}, optional={
    "a": st.integers(0, 4), "b": st.sampled_from(WORDS), "tags": st.sets(st.sampled_from("xyz"), min_size=1),
}), max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=ITEMS, condition=st.recursive(_leaf(), _combine, max_leaves=5))
def test_random_conditions_match_an_independent_evaluator(
    table: TableClient, items: list[dict[str, Any]], condition: tuple[Any, Callable[[dict[str, Any]], bool]],
) -> None:
    # GIVEN random items (attributes present or absent) in a fresh box
    box = f"box{next(_boxes)}"
    table.batch_write(puts=[("Thing", {"box": box, "n": n, **item}) for n, item in enumerate(items)])
    built, holds = condition
    # WHEN DynamoDB filters them with the rendered condition
    got = [i["n"] for i in table.query_all("things in a box", box=box, filter=built)]
    # THEN it keeps exactly the items the reference evaluator keeps
    assert got == [n for n, item in enumerate(items) if holds(item)], repr(built)


def test_a_cursor_continues_only_the_same_filter_and_projection(table: TableClient) -> None:
    from constructs_lib.runtime import CursorError

    # GIVEN a first page of a filtered, projected query
    box = f"box{next(_boxes)}"
    _things(table, box, [5] * 6)
    page = table.query("things in a box", box=box, filter=attr("score") > 1, attributes=["score"], limit=2)
    assert page.cursor is not None
    # WHEN the cursor is passed with another filter value or another projection THEN it is refused
    for other in ({"filter": attr("score") > 2, "attributes": ["score"]}, {"filter": attr("score") > 1}):
        with pytest.raises(CursorError, match="different query"):
            table.query("things in a box", box=box, limit=2, cursor=page.cursor, **other)
    # AND with the same options it continues
    rest = table.query("things in a box", box=box, filter=attr("score") > 1, attributes=["score"], cursor=page.cursor)
    assert [i["n"] for i in rest] == [2, 3, 4, 5]


# Model-based: conditional writes against a reference ------------------------------------------------------
_runs = itertools.count()
ATTRS = st.fixed_dictionaries({}, optional={
    "a": st.integers(0, 4), "b": st.sampled_from(WORDS), "tags": st.sets(st.sampled_from("xyz"), min_size=1),
})
CONDITIONS = st.none() | st.recursive(_leaf(), _combine, max_leaves=3)
VERSIONS = st.none() | st.integers(0, 3)


def test_conditional_writes_match_a_reference(table: TableClient) -> None:
    from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

    class ConditionalWrites(RuleBasedStateMachine):
        """Puts, updates and deletes of versioned accounts with random conditions, each compared with
        a reference that applies the model's rules first (existence, version) and then the caller's."""

        def __init__(self) -> None:
            super().__init__()
            self.run = next(_runs)
            self.stored: dict[str, dict[str, Any]] = {}  # account id -> attributes, version included

        def key(self, n: int) -> str:
            return f"mbt{self.run}-{n}"

        def expect(self, call: Callable[[], Any], error: type[Exception] | None, item: dict[str, Any] | None) -> None:
            if error is None:
                call()
                return
            with pytest.raises(error) as caught:
                call()
            if error is ConditionNotMetError:  # the stored item comes back with the refusal
                got = caught.value.item  # type: ignore[attr-defined]
                assert (None if got is None else {k: v for k, v in got.items() if k not in ("_type", "account_id")}) == item

        @rule(n=st.integers(0, 2), attrs=ATTRS, condition=CONDITIONS, mode=st.sampled_from(["plain", "create_only", "version"]),
              version=st.integers(1, 3))
        def put(self, n: int, attrs: dict[str, Any], condition: Any, mode: str, version: int) -> None:
            key, old = self.key(n), self.stored.get(self.key(n))
            options: dict[str, Any] = {"condition": None if condition is None else condition[0]}
            if mode == "create_only":
                options["create_only"] = True
                error = ItemExistsError if old is not None else None
            elif mode == "version":
                options["expected_version"] = version
                error = ItemNotFoundError if old is None else VersionConflictError if old["version"] != version else None
            else:
                error = None
            if error is None and condition is not None and not condition[1](old or {}):
                error = ConditionNotMetError
            self.expect(lambda: table.put("Account", {"account_id": key, **attrs}, **options), error, old)
            if error is None:
                self.stored[key] = {**attrs, "version": (old or {"version": 0})["version"] + 1}

        @rule(n=st.integers(0, 2), a=st.integers(0, 4), condition=CONDITIONS, version=VERSIONS)
        def update(self, n: int, a: int, condition: Any, version: int | None) -> None:
            key, old = self.key(n), self.stored.get(self.key(n))
            error: type[Exception] | None = None
            if old is None:
                error = ItemNotFoundError
            elif version is not None and old["version"] != version:
                error = VersionConflictError
            elif condition is not None and not condition[1](old):
                error = ConditionNotMetError
            self.expect(lambda: table.update("Account", {"account_id": key}, set={"a": a}, expected_version=version,
                                             condition=None if condition is None else condition[0]), error, old)
            if error is None:
                assert old is not None
                self.stored[key] = {**old, "a": a, "version": old["version"] + 1}

        @rule(n=st.integers(0, 2), condition=CONDITIONS, version=VERSIONS)
        def delete(self, n: int, condition: Any, version: int | None) -> None:
            key, old = self.key(n), self.stored.get(self.key(n))
            error: type[Exception] | None = None
            if version is not None and old is None:
                error = ItemNotFoundError
            elif version is not None and old is not None and old["version"] != version:
                error = VersionConflictError
            elif condition is not None and not condition[1](old or {}):
                error = ConditionNotMetError
            self.expect(lambda: table.delete("Account", {"account_id": key}, expected_version=version,
                                             condition=None if condition is None else condition[0]), error, old)
            if error is None:
                self.stored.pop(key, None)

        @invariant()
        def stored_items_match(self) -> None:
            for n in range(3):
                got = table.get("Account", account_id=self.key(n), consistent=True)
                want = self.stored.get(self.key(n))
                assert (None if got is None else {k: v for k, v in got.items() if k not in ("_type", "account_id")}) == want

    from hypothesis.stateful import run_state_machine_as_test

    run_state_machine_as_test(ConditionalWrites, settings=settings(
        max_examples=25, stateful_step_count=12, deadline=None, suppress_health_check=list(HealthCheck)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    scores=st.lists(st.integers(0, 9), max_size=30), threshold=st.integers(0, 10), limit=st.integers(1, 6),
    descending=st.booleans(), projected=st.booleans(),
)
def test_filtered_paging_of_a_sharded_index_matches_a_reference(
    table: TableClient, scores: list[int], threshold: int, limit: int, descending: bool, projected: bool,
) -> None:
    # GIVEN random tickets of a fresh queue, spread over the index's 3 shards
    queue = f"q{next(_boxes)}"
    table.batch_write(puts=[("Ticket", {"ticket_id": f"{queue}-{n}", "queue": queue, "n": n, "score": s, "blob": "x"})
                            for n, s in enumerate(scores)])
    reference = [n for n, s in enumerate(scores) if s >= threshold][:: -1 if descending else 1]
    options: dict[str, Any] = {"filter": attr("score") >= threshold, "limit": limit, "descending": descending}
    if projected:
        options["attributes"] = ["score"]
    # WHEN the merged read is paged with a filter, a limit and (maybe) a projection
    seen: list[int] = []
    cursor = None
    for _ in range(len(scores) + 2):
        page = table.query("tickets of a queue", queue=queue, cursor=cursor, **options)
        assert len(page) <= limit and all(i["score"] >= threshold and ("blob" in i) != projected for i in page)
        seen += [i["n"] for i in page]
        cursor = page.cursor
        if cursor is None:
            break
    # THEN the pages are the reference, merged in sort-key order, nothing lost or repeated
    assert seen == reference
