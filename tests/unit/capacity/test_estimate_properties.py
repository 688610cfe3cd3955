"""Estimates against brute force: ``write_estimate``/``read_estimate`` with ``item_bytes=n`` price
the representative item padded to ``n`` bytes exactly as the per-item functions
(``capacity.put``/``update``/``delete``/``transaction``/``batch_write``/``get``/``query``/
``sharded_query``) price that padded item, and every figure is monotone in ``n``.

Every entity and every pattern of every example model plus a model with local secondary indexes
(each its own case, so none is left to chance); ``CONSTRUCTS_LIB_SOAK=1`` runs 10x the examples.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib import capacity
from constructs_lib.capacity import Capacity, read_estimate, write_estimate
from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model
from constructs_lib.model.entity import MAX_ITEM_BYTES
from constructs_lib.runtime.merged_reads import first_read_limit
from constructs_lib.runtime.values import item_size
from examples.evolution.model import model_v1, model_v2
from examples.iot.model import iot_model
from examples.saas.model import saas_model
from examples.shop.model import shop_model
from examples.viral.model import viral_model

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 150 * (10 if SOAK else 1)
PER_CASE = 30 * (10 if SOAK else 1)

LSI_MODEL = Model(
    "tickets",
    entities=[Entity("Ticket", pk="PROJECT#{project}", sk="TICKET#{ticket_id}",
                     fields={"project": "string", "ticket_id": "string", "prio": "string"},
                     indexes={"ByPrio": IndexKey(sk="PRIO#{prio}"), "ByPrioKeys": IndexKey(sk="K#{prio}")},
                     attributes={"title": "string"}, version_attribute="rev")],
    indexes=[Index("ByPrio", kind="LSI"), Index("ByPrioKeys", kind="LSI", projection=("rev",))],
    access_patterns=[AccessPattern("by prio", entity="Ticket", index="ByPrio"),
                     AccessPattern("by prio keys", entity="Ticket", index="ByPrioKeys", sk="begins_with")],
)
MODELS = [shop_model, saas_model, iot_model, viral_model, model_v1(), model_v2(), LSI_MODEL]
ENTITIES = [(m, e) for m in MODELS for e in m.entities]
PATTERNS = [(m, p) for m in MODELS for p in m.resolved_patterns]
ENTITY_CASES = {f"{m.name}.{e}": (m, e) for m, e in ENTITIES}
PATTERN_CASES = {f"{m.name}.{p}": (m, p) for m, p in PATTERNS}
PAD = "p"  # the padding attribute: no example model names, keys or projects it


def padded(item: dict[str, Any], n: int) -> dict[str, Any]:
    """``item`` with a string attribute making it exactly ``n`` bytes (``n`` ≥ its size)."""
    gap = n - item_size(item)
    assert gap >= 0 and PAD not in item
    out = dict(item) if gap == 0 else {**item, PAD: "x" * (gap - len(PAD))} if gap > len(PAD) else None
    if out is None:  # a name of 1 byte and 0 or more value bytes
        out = {**item, PAD: "x" * (gap - 1)}
    assert item_size(out) == n
    return out


def changed(item: dict[str, Any], model: Model, entity: str) -> dict[str, Any]:
    """``item`` after a typical update: one free attribute (or the padding) to another value of the
    same size, the version attribute bumped."""
    name = PAD if item.get(PAD) else capacity.update_attribute(model, entity)
    new = dict(item)
    if name is not None:
        value = item[name]
        new[name] = (value[:-1] + ("y" if value[-1:] != "y" else "z")) if isinstance(value, str) and value else value
        if isinstance(value, int) and not isinstance(value, bool):
            new[name] = value + 1 if value < 9 else value - 1
    version = model.entity(entity).version_attribute
    if version:
        new[version] = item[version] + 1
    assert item_size(new) == item_size(item)
    return new


def sizes(draw: st.DrawFn, least: int) -> int:
    """A size from ``least`` to 400 KB, often near a 1 KB or 4 KB boundary."""
    near = st.integers(0, 100).map(lambda k: k * 1024).flatmap(lambda b: st.integers(b - 2, b + 2))
    n = draw(st.one_of(st.integers(least, least + 9000), st.integers(least, MAX_ITEM_BYTES), near))
    return min(max(n, least), MAX_ITEM_BYTES)


def brute_write(model: Model, entity: str, kind: str, item: dict[str, Any]) -> Capacity:
    base = kind.removeprefix("transaction_").removeprefix("batch_")
    if base == "put":
        one = capacity.put(model, item)
    elif base == "delete":
        one = capacity.delete(model, item)
    else:
        one = capacity.update(model, item, changed(item, model, entity))
    if kind.startswith("transaction_"):
        return capacity.transaction([one])
    return capacity.batch_write([one]) if kind.startswith("batch_") else one


@pytest.mark.parametrize("kind", capacity.WRITE_KINDS)
@pytest.mark.parametrize("case", sorted(ENTITY_CASES))
@settings(max_examples=PER_CASE // 3, deadline=None)
@given(data=st.data())
def test_write_estimates_price_the_padded_item(case: str, kind: str, data: st.DataObject) -> None:
    # GIVEN an entity, a write kind and a size n at least its representative item's
    model, entity = ENTITY_CASES[case]
    item = capacity.representative_item(model, entity)
    # (an update needs an attribute to change: without a free one, the padding (1 byte name, 1+ value) is it)
    free = kind.endswith("update") and capacity.update_attribute(model, entity) is None
    n = sizes(data.draw, item_size(item) + (2 if free else 0))
    # WHEN estimated with item_bytes=n THEN it equals the per-item price of the item padded to n
    assert write_estimate(model, entity, kind, item_bytes=n) == brute_write(model, entity, kind, padded(item, n)), (
        model.name, entity, kind, n)


@pytest.mark.parametrize("case", sorted(PATTERN_CASES))
@settings(max_examples=PER_CASE, deadline=None)
@given(data=st.data())
def test_read_estimates_price_the_padded_items(case: str, data: st.DataObject) -> None:
    # GIVEN a pattern, a page size, a consistency it allows and a size n at least every entity's item
    model, name = PATTERN_CASES[case]
    pattern = model.resolved_patterns[name]
    index = None if pattern.index is None else pattern.index.name
    items = data.draw(st.integers(1, 300), label="items")
    consistent = data.draw(st.booleans(), label="consistent") and (pattern.index is None or pattern.index.kind == "LSI")
    reps = [capacity.representative_item(model, e, index=index) for e in pattern.entities]
    n = sizes(data.draw, max(item_size(r) for r in reps))
    stored = [padded(r, n) for r in reps]
    # WHEN estimated THEN it equals the per-item price of a page of those padded items
    if pattern.operation == "GetItem":
        want = capacity.get(model, stored[0], consistent=consistent)
    else:
        per = first_read_limit(items, pattern.shards) if pattern.shards else items
        page = [stored[k % len(stored)] for k in range(per)]
        want = (capacity.sharded_query(model, index, [page] * pattern.shards, consistent=consistent)  # type: ignore[arg-type]
                if pattern.shards else capacity.query(model, index, page, consistent=consistent))
    got = read_estimate(model, name, items=items, item_bytes=n, consistent=consistent)
    assert got == want, (model.name, name, items, n, consistent)


def figures(c: Capacity) -> dict[str, float]:
    return {"table": c.table, **c.global_indexes, **c.local_indexes}


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_estimates_are_monotone_in_the_item_size(data: st.DataObject) -> None:
    # GIVEN two sizes a <= b anywhere from 1 byte to 400 KB (below the representative size too)
    a = data.draw(st.integers(1, MAX_ITEM_BYTES), label="a")
    b = data.draw(st.integers(a, min(MAX_ITEM_BYTES, a + data.draw(st.sampled_from([10, 5000, MAX_ITEM_BYTES])))))
    model, entity = data.draw(st.sampled_from(ENTITIES), label="entity")
    kind = data.draw(st.sampled_from(capacity.WRITE_KINDS), label="kind")
    pmodel, pattern = data.draw(st.sampled_from(PATTERNS), label="pattern")
    items = data.draw(st.integers(1, 100), label="items")
    pairs = [(write_estimate(model, entity, kind, item_bytes=a), write_estimate(model, entity, kind, item_bytes=b))]
    if items * (b + capacity.LSI_ENTRY_OVERHEAD) < capacity.MAX_PAGE_BYTES:  # a page cut at 1 MB is not: below
        pairs.append((read_estimate(pmodel, pattern, items=items, item_bytes=a),
                      read_estimate(pmodel, pattern, items=items, item_bytes=b)))
    # WHEN both are estimated THEN no figure of the larger item is smaller
    for small, large in pairs:
        low, high = figures(small), figures(large)
        assert low.keys() == high.keys()
        assert all(low[k] <= high[k] for k in low), (a, b, low, high)


def test_a_page_cut_at_1_mb_is_not_monotone_in_the_item_size() -> None:
    # GIVEN pages of 100 users by email (GSI1, ALL) of 25,576 and of 32,768 bytes
    smaller = read_estimate(shop_model, "user by email", items=100, item_bytes=25_576)
    larger = read_estimate(shop_model, "user by email", items=100, item_bytes=32_768)
    # THEN the smaller items cost more: a page ends with the item reaching 1 MB, so it reads 41 x 25,576
    # bytes (257 units of 4 KB, halved) against 32 x 32,768 = exactly 1 MB (256, halved), as DynamoDB does
    assert (smaller.index("GSI1"), larger.index("GSI1")) == (128.5, 128.0)
