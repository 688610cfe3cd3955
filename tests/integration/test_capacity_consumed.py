"""Predicted capacity per call equals what DynamoDB Local reports (``ReturnConsumedCapacity="INDEXES"``).

Every example model of ``app.py`` (found from the model docs each ``SingleTable`` writes into the
synthesized cloud assembly, read back from its contract file) plus a model with local secondary
indexes (no example has one) gets a table created from its **synthesized template**. Hypothesis
draws items of random entities — in or out of their sparse indexes, with random payloads that
cross the 1 KB and 4 KB boundaries — and runs them through the real ``TableClient``: put (new,
overwrite), update (sparse membership and index keys moved), transaction, batch write, delete,
GetItem (strong and eventual) and every declared access pattern of the entity (write-sharded
ones send one Query per shard). A hook at the runtime's AWS-call seam asks each call for
``ConsumedCapacity`` and records it; :mod:`constructs_lib.capacity` predicts each from the items
before and after (read back raw) and from what each Query page read. Writes must match exactly,
table and every index; reads too (both are whole or half units, so exact comparison is DynamoDB's
rounding: 1 KB per write, 4 KB per read request, a Query page summed before rounding).

Numbers are drawn positive, negative and zero; ``test_number_sizes_match_dynamodb_local`` pins the
number rule's edges (zero, the sign byte, pairs aligned on the decimal point; every class of sign,
digit count and exponent is in ``test_number_sizes.py``). Index reads are compared at the 4 KB
boundary on LSIs and GSIs (``test_index_reads_are_priced_at_the_4_kb_boundary``). 12 examples per
model in ``make test``; ``CONSTRUCTS_LIB_SOAK=1`` runs 10x.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from constructs_lib import capacity
from constructs_lib.capacity import Capacity
from constructs_lib.docgen.describe import example_values
from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.exceptions import RuntimeClientError
from constructs_lib.runtime.values import item_size
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 12 * (10 if SOAK else 1)
#: Shrinking a failing program costs minutes against a server: only the soak run shrinks.
PHASES = tuple(Phase) if SOAK else (Phase.explicit, Phase.reuse, Phase.generate)
#: Payload attribute names: never a declared field of an example entity.
PAYLOAD = ("zz_note", "zz_blob", "zz_meta", "zz_tags", "zz_count")
COMPARED: Counter[str] = Counter()

# No example model has a local secondary index: this one has two (ALL and INCLUDE) and a GSI.
LSI_MODEL = Model(
    "tickets",
    entities=[
        Entity(
            "Ticket",
            pk="PROJECT#{project}",
            sk="TICKET#{ticket_id}",
            fields={"project": "string", "ticket_id": "string", "flagged_at": "timestamp",
                    "priority": Field.number(width=3)},
            indexes={
                "Flagged": IndexKey(pk="FLAGGED#{project}", sk="{flagged_at}#{ticket_id}", when_present="flagged_at"),
                "ByPriority": IndexKey(sk="PRIO#{priority}#{ticket_id}"),
                "ByFlag": IndexKey(sk="FLAG#{flagged_at}"),
            },
        )
    ],
    indexes=[Index("Flagged", projection="KEYS_ONLY"), Index("ByPriority", kind="LSI"),
             Index("ByFlag", kind="LSI", projection=("zz_note",))],
    access_patterns=[
        AccessPattern("flagged tickets of a project", entity="Ticket", index="Flagged"),
        AccessPattern("tickets by priority", entity="Ticket", index="ByPriority", sk="<=", sk_fields=("priority",)),
        AccessPattern("tickets by flag time", entity="Ticket", index="ByFlag", sk="<=", sk_fields=("flagged_at",)),
        AccessPattern("tickets of a project", entity="Ticket", sk="begins_with"),
    ],
)


# Discovery ---------------------------------------------------------------------------------------
def assembly_tables(cdk_out: Path) -> list[tuple[str, str, Model]]:
    """(stack, construct id, model) of every ``SingleTable`` in the assembly: each writes
    ``<stack>.<id>.model.md`` titled "data model `<name>`" and ``<name>.contract.json``."""
    found = []
    for doc in sorted(cdk_out.glob("*.model.md")):
        stack, construct_id = doc.name[: -len(".model.md")].split(".", 1)
        title = doc.read_text(encoding="utf-8").splitlines()[0]
        match = re.search(r"data model `([^`]+)`", title)
        assert match, f"{doc.name}: no model name in its title {title!r}"
        found.append((stack, construct_id, Model.from_contract(cdk_out / f"{match.group(1)}.contract.json")))
    return found


def table_logical_id(template: Mapping[str, Any], construct_id: str) -> str:
    (lid,) = [lid for lid, r in template["Resources"].items()
              if r["Type"] in ("AWS::DynamoDB::GlobalTable", "AWS::DynamoDB::Table") and lid.startswith(f"{construct_id}Table")]
    return lid


# Recording the reported capacity ------------------------------------------------------------------
class Recorder:
    """A call hook: adds ``ReturnConsumedCapacity="INDEXES"`` and keeps (operation, params, response)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def __call__(self, send: Callable[..., dict[str, Any]], operation: str, params: dict[str, Any]) -> dict[str, Any]:
        params = {**params, "ReturnConsumedCapacity": "INDEXES"}
        response = send(**params)
        with self._lock:
            self.calls.append((operation, params, response))
        return response

    def take(self) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


def reported(response: Mapping[str, Any]) -> Capacity | None:
    """DynamoDB's ``ConsumedCapacity`` of one response as a :class:`Capacity` (kind left "write")."""
    consumed = response.get("ConsumedCapacity")
    if isinstance(consumed, list):
        assert len(consumed) <= 1, consumed
        consumed = consumed[0] if consumed else None
    if consumed is None:
        return None
    return Capacity(
        "write", consumed["Table"]["CapacityUnits"],
        {k: v["CapacityUnits"] for k, v in consumed.get("GlobalSecondaryIndexes", {}).items()},
        {k: v["CapacityUnits"] for k, v in consumed.get("LocalSecondaryIndexes", {}).items()},
    )


def compared() -> int:
    """Calls whose prediction was compared (not the skipped ones)."""
    return sum(n for kind, n in COMPARED.items() if "skipped" not in kind and "refused" not in kind)


def assert_equal(what: str, predicted: Capacity, response: Mapping[str, Any]) -> None:
    got = reported(response)
    assert got is not None, f"{what}: DynamoDB Local reported no ConsumedCapacity"
    want = (predicted.table, dict(predicted.global_indexes), dict(predicted.local_indexes))
    have = (got.table, dict(got.global_indexes), dict(got.local_indexes))
    assert have == want, f"{what}: predicted (table, GSIs, LSIs) {want}, DynamoDB Local reported {have}"
    COMPARED[what.split(" ", 1)[0]] += 1


# The table under test ------------------------------------------------------------------------------
class Harness:
    """One deployed model: its hooked client, a raw client for ground truth, and every stored item."""

    def __init__(self, model: Model, table_name: str, client: Any) -> None:
        self.model, self.name, self.raw = model, table_name, client
        self.table = TableClient(model, table_name, client=client)
        self.recorder = Recorder()
        self.table.hooks = (self.recorder,)
        self.keys = [model.pk_attribute] + ([model.sk_attribute] if model.has_sort_key else [])
        self.stored: dict[tuple[str, ...], dict[str, Any]] = {}

    def key_of(self, item: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(item[k] for k in self.keys)

    def read_raw(self, key: Mapping[str, str]) -> dict[str, Any] | None:
        """The stored item (key attributes included), read strongly consistently, not recorded."""
        from constructs_lib.runtime import _aws

        resp = self.raw.get_item(TableName=self.name, Key=_aws.serialize(dict(key)), ConsistentRead=True)
        item = resp.get("Item")
        found = self.table.mapper.decode_wire(item, raw=True) if item else None
        if found is None:
            self.stored.pop(tuple(key[k] for k in self.keys), None)
        else:
            self.stored[self.key_of(found)] = found
        return found

    def table_key(self, entity: str, attrs: Mapping[str, Any]) -> dict[str, str]:
        ent = self.model.entity(entity)
        return self.table.mapper.table_key(ent, self.table.mapper.normalize(ent, attrs))

    def key_fields(self, entity: str, attrs: Mapping[str, Any]) -> dict[str, Any]:
        return {f: attrs[f] for f in self.model.entity(entity).table_key_fields}

    def one_call(self, operation: str) -> dict[str, Any]:
        calls = self.recorder.take()
        assert [c[0] for c in calls] == [operation], calls
        return calls[0][2]


def payloads() -> st.SearchStrategy[dict[str, Any]]:
    """0-3 payload attributes of every DynamoDB type, up to ~5 KB: sizes cross 1 KB and 4 KB."""
    safe_int = st.one_of(st.integers(-(10**30), 10**30), st.decimals(Decimal("-1E+20"), Decimal("1E+20"), places=None,
                                                                     allow_nan=False, allow_infinity=False)
                         .filter(lambda d: len(d.as_tuple().digits) <= 38 and (d == 0 or -130 <= d.adjusted() <= 125)))
    value = st.one_of(
        st.text(min_size=1, max_size=40),
        st.integers(0, 5000).map(lambda n: "x" * n),
        safe_int,
        st.booleans(),
        st.binary(min_size=1, max_size=2000),
        st.lists(st.one_of(st.text(max_size=30), safe_int), max_size=5),
        st.dictionaries(st.text(min_size=1, max_size=8), st.one_of(st.text(max_size=300), safe_int), max_size=4),
        st.frozensets(st.text(min_size=1, max_size=20), min_size=1, max_size=4).map(set),
        st.frozensets(safe_int, min_size=1, max_size=4).map(set),
    )
    return st.dictionaries(st.sampled_from(PAYLOAD), value, max_size=3)


_numbers = itertools.count(1)


def new_item(h: Harness, data: st.DataObject, entity: Entity) -> dict[str, Any]:
    attrs = example_values(h.model, entity, next(_numbers), sparse=data.draw(st.booleans(), label="sparse"))
    attrs.update(data.draw(payloads(), label="payload"))
    return attrs


def assert_transaction(parts: list[Capacity], response: Mapping[str, Any]) -> None:
    """A transaction's report against :func:`capacity.transaction` (every write twice, summed).

    DynamoDB Local 3.3.1 sometimes counts writes with the same figure once per table or index
    (two 1-unit puts into a table without indexes report 2, not 4; measured, ADR 0051), and
    sometimes sums them as AWS documents. A report is accepted when it equals the documented
    sum, or that deduplicated sum when the two differ; each case is counted."""
    documented = capacity.transaction(parts)

    def dedup(values: list[float]) -> float:
        return 2 * sum(set(v for v in values if v))

    quirk = Capacity(
        "write", dedup([p.table for p in parts]),
        {n: dedup([p.global_indexes.get(n, 0.0) for p in parts]) for n in documented.global_indexes},
        {n: dedup([p.local_indexes.get(n, 0.0) for p in parts]) for n in documented.local_indexes},
    )
    got = reported(response)
    if quirk != documented and got is not None and (got.table, dict(got.global_indexes)) != (
            documented.table, dict(documented.global_indexes)):
        assert_equal("TransactWriteItems-as-Local-deduplicates", quirk, response)
        return
    assert_equal("TransactWriteItems", documented, response)


def write_cost(h: Harness, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> Capacity:
    return capacity.write(h.model, old, new)


def check_reads(h: Harness, entity: Entity, attrs: Mapping[str, Any]) -> None:
    """GetItem both ways, then every declared pattern of the entity the item's values can run."""
    key = h.table_key(entity.name, attrs)
    stored = h.read_raw(key)
    for consistent in (True, False):
        h.table.get(entity.name, consistent=consistent, **h.key_fields(entity.name, attrs))
        assert_equal(f"GetItem consistent={consistent}", capacity.get(h.model, stored, consistent=consistent),
                     h.one_call("get_item"))
    for resolved in h.model.resolved_patterns.values():
        if entity.name not in resolved.pattern.entities or resolved.operation != "Query":
            continue
        values = {f: attrs[f] for f in (*resolved.pk_fields, *resolved.sk_fields) if f in attrs}
        try:
            h.table.query(resolved.name, values, limit=3)
        except RuntimeClientError:
            h.recorder.take()
            COMPARED["query skipped (values not derivable from the item)"] += 1
            continue
        calls = h.recorder.take()
        assert calls and all(op == "query" for op, _, _ in calls), calls
        if resolved.shards:
            assert len(calls) == resolved.shards, f"{resolved.name}: {len(calls)} Queries for {resolved.shards} shards"
        index = None if resolved.index is None else resolved.index.name
        for _, params, response in calls:
            assert_equal(f"Query {resolved.name!r}", capacity.query(
                h.model, index, read_by(h, params), consistent=bool(params.get("ConsistentRead"))), response)


def read_by(h: Harness, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The stored items a recorded Query page read: the same Query (same Limit and start key)
    without its filter and projection returns exactly what it read; each maps to its stored item."""
    plain = {k: v for k, v in params.items() if k not in (
        "FilterExpression", "ProjectionExpression", "Select", "ReturnConsumedCapacity")}
    names = {n for n in re.findall(r"#\w+", plain.get("KeyConditionExpression", ""))}
    plain["ExpressionAttributeNames"] = {k: v for k, v in params.get("ExpressionAttributeNames", {}).items() if k in names}
    used = set(re.findall(r":\w+", plain.get("KeyConditionExpression", "")))
    plain["ExpressionAttributeValues"] = {k: v for k, v in params.get("ExpressionAttributeValues", {}).items() if k in used}
    for empty in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        if not plain[empty]:
            del plain[empty]
    resp = h.raw.query(**plain)
    out = []
    for entry in resp["Items"]:
        decoded = h.table.mapper.decode_wire(entry, raw=True)
        out.append(h.stored[h.key_of(decoded)])
    return out


def exercise(h: Harness, data: st.DataObject) -> None:
    """One random program on one entity: put, overwrite, update, transaction, batch, reads, delete."""
    entities = list(h.model.entities.values())
    entity = data.draw(st.sampled_from(entities), label="entity")
    attrs = new_item(h, data, entity)
    key = h.table_key(entity.name, attrs)

    # WHEN a new item is put (it enters every index whose keys it has: sparse ones only when it qualifies)
    h.table.put(entity.name, attrs)
    new = h.read_raw(key)
    assert_equal("PutItem new", write_cost(h, None, new), h.one_call("put_item"))

    # WHEN it is overwritten by a put with other payload and sparse membership
    other = {**example_values(h.model, entity, next(_numbers), sparse=data.draw(st.booleans(), label="sparse2")),
             **h.key_fields(entity.name, attrs), **data.draw(payloads(), label="payload2")}
    old = new
    h.table.put(entity.name, other)
    new = h.read_raw(key)
    assert_equal("PutItem overwrite", write_cost(h, old, new), h.one_call("put_item"))
    check_reads(h, entity, other)

    # WHEN it is updated: some non-key fields from another example (moving index keys, joining or
    # leaving sparse indexes), payload set and removed
    update_set, update_remove = plan_update(h, data, entity, new)
    old = new
    try:
        h.table.update(entity.name, h.key_fields(entity.name, attrs), set=update_set, remove=update_remove)
    except RuntimeClientError:
        assert h.recorder.take() == [], "a refused update must not reach DynamoDB"
        COMPARED["update refused by the runtime"] += 1
    else:
        new = h.read_raw(key)
        assert_equal("UpdateItem", write_cost(h, old, new), h.one_call("update_item"))

    # WHEN a transaction puts a second item and updates the first; a batch puts a third, deletes the second
    second = new_item(h, data, entity)
    second_key = h.table_key(entity.name, second)
    payload_name = data.draw(st.sampled_from(PAYLOAD), label="tx attribute")
    old = new
    tx = h.table.transaction()
    tx.put(entity.name, second, create_only=True)
    tx.update(entity.name, h.key_fields(entity.name, attrs), set={payload_name: "t" * data.draw(st.integers(1, 3000))})
    tx.commit()
    new, second_stored = h.read_raw(key), h.read_raw(second_key)
    parts = [write_cost(h, old, new), write_cost(h, None, second_stored)]
    assert_transaction(parts, h.one_call("transact_write_items"))
    if entity.version_attribute:  # the runtime refuses BatchWriteItem on a versioned entity
        h.table.delete(entity.name, h.key_fields(entity.name, second))
        h.read_raw(second_key)
        assert_equal("DeleteItem", write_cost(h, second_stored, None), h.one_call("delete_item"))
    else:
        third = new_item(h, data, entity)
        third_key = h.table_key(entity.name, third)
        h.table.batch_write(puts=[(entity.name, third)], deletes=[(entity.name, h.key_fields(entity.name, second))])
        third_stored = h.read_raw(third_key)
        h.read_raw(second_key)
        assert_equal("BatchWriteItem", capacity.batch_write([write_cost(h, None, third_stored),
                                                              write_cost(h, second_stored, None)]),
                     h.one_call("batch_write_item"))

    # WHEN the items are read
    check_reads(h, entity, {**other, **update_set})

    # WHEN the first item is deleted, and then deleted again (it no longer exists)
    old = new
    h.table.delete(entity.name, h.key_fields(entity.name, attrs))
    h.read_raw(key)
    assert_equal("DeleteItem", write_cost(h, old, None), h.one_call("delete_item"))
    h.table.delete(entity.name, h.key_fields(entity.name, attrs))
    assert_equal("DeleteItem missing", write_cost(h, None, None), h.one_call("delete_item"))
    h.table.get(entity.name, consistent=True, **h.key_fields(entity.name, attrs))
    assert_equal("GetItem missing", capacity.get(h.model, None, consistent=True), h.one_call("get_item"))


def plan_update(h: Harness, data: st.DataObject, entity: Entity, stored: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A random partial update: non-key fields from another example item (with every other input of
    each index key they touch, so the runtime can recompute it) and payload changes."""
    mapper = h.table.mapper
    fresh = example_values(h.model, entity, next(_numbers), sparse=data.draw(st.booleans(), label="update sparse"))
    table_fields = set(entity.table_key_fields)
    candidates = sorted(f for f in fresh if f not in table_fields)
    chosen = set(data.draw(st.lists(st.sampled_from(candidates), unique=True), label="fields")) if candidates else set()
    for index_name in entity.indexes:
        inputs = mapper.index_inputs(entity, index_name)
        if inputs & chosen:
            chosen |= {f for f in inputs if f in fresh and f not in table_fields}
    update_set: dict[str, Any] = {f: fresh[f] for f in chosen}
    # a field the fresh (non-sparse) example leaves out is removed from the stored item
    gone = [f for f in candidates if f not in fresh and f in stored and f not in entity.required]
    update_set.update(data.draw(payloads(), label="update payload"))
    present = [p for p in PAYLOAD if p in stored and p not in update_set]
    remove = data.draw(st.lists(st.sampled_from(present), unique=True), label="remove") if present else []
    return update_set, remove + [g for g in gone if g not in update_set]


# The tests ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def harnesses(shop_cdk_out: Path, synth_table_template: Callable[..., dict[str, Any]],
              dynamodb_local: Any) -> Iterator[list[Harness]]:
    from constructs_lib.testing.local_deploy import deploy_template

    client = dynamodb_local.client()
    deployments: list[LocalDeployment] = []
    out = []
    for stack, construct_id, model in assembly_tables(shop_cdk_out):
        template = json.loads((shop_cdk_out / f"{stack}.template.json").read_text(encoding="utf-8"))
        deployment = deploy_template(template, client=client, name_prefix=f"cap-{stack}-")
        deployments.append(deployment)
        out.append(Harness(model, deployment.table_name(table_logical_id(template, construct_id)), client))
    deployment = deploy_template(synth_table_template(LSI_MODEL), client=client, name_prefix="cap-lsi-")
    deployments.append(deployment)
    (name,) = deployment.tables.values()
    out.append(Harness(LSI_MODEL, name, client))
    yield out
    for d in deployments:
        d.delete()


def test_every_example_model_is_compared(harnesses: list[Harness]) -> None:
    # GIVEN the tables of app.py's assembly THEN every example model with a table is among them
    names = {h.model.name for h in harnesses}
    assert {"shop", "saas", "iot", "viral", "store", "tickets"} <= names, names


@pytest.mark.parametrize("model_name", ["shop", "saas", "iot", "viral", "store", "tickets"])
def test_predicted_capacity_equals_dynamodb_local(harnesses: list[Harness], model_name: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the model's table created from its synthesized template
    (h,) = [h for h in harnesses if h.model.name == model_name]
    before = compared()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not SOAK, database=None, phases=PHASES,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
    @given(st.data())
    def program(data: st.DataObject) -> None:
        # WHEN random items go through every kind of call THEN each call's prediction equals the report
        exercise(h, data)

    program()
    # THEN calls of every kind were compared
    with capsys.disabled():
        print(f"\n[capacity] {model_name}: {compared() - before} calls compared; totals {dict(COMPARED)}")
    for kind in ("PutItem", "UpdateItem", "TransactWriteItems", "BatchWriteItem", "DeleteItem", "GetItem", "Query"):
        assert COMPARED[kind], f"no {kind} compared"


def test_transitions_of_a_sparse_index_are_priced(harnesses: list[Harness]) -> None:
    # GIVEN the shop's orders: GSI2 holds PENDING orders only (sparse, KEYS_ONLY deployed as
    # INCLUDE [_type]), GSI3 is keyed by status (write-sharded)
    (h,) = [h for h in harnesses if h.model.name == "shop"]
    order = {"user_id": "u-cap", "order_id": "o-cap", "created_at": "2024-06-01T00:00:00Z", "status": "PENDING",
             "zz_note": "n" * 1500}
    key = h.table_key("Order", order)
    fields = h.key_fields("Order", order)
    # WHEN a PENDING order is put THEN it enters GSI2 (1 unit: keys + _type) and GSI3 (the whole item, 2 units)
    h.table.put("Order", order)
    new = h.read_raw(key)
    reported_put = h.one_call("put_item")
    assert_equal("PutItem sparse-enter", write_cost(h, None, new), reported_put)
    assert reported(reported_put).index("GSI2") == 1.0  # type: ignore[union-attr]
    # WHEN its status moves to PAID THEN it leaves GSI2 (its old entry) and moves its GSI3 key (delete + put: 2 + 2)
    old = new
    h.table.update("Order", fields, set={"status": "PAID"})
    new = h.read_raw(key)
    moved = h.one_call("update_item")
    assert_equal("UpdateItem key-move", write_cost(h, old, new), moved)
    assert (reported(moved).index("GSI2"), reported(moved).index("GSI3")) == (1.0, 4.0)  # type: ignore[union-attr]
    # WHEN it moves back to PENDING THEN it re-enters GSI2
    old = new
    h.table.update("Order", fields, set={"status": "PENDING"})
    new = h.read_raw(key)
    assert_equal("UpdateItem sparse-enter", write_cost(h, old, new), h.one_call("update_item"))
    # WHEN only a payload attribute changes THEN GSI2 (which does not project it) is not written
    old = new
    h.table.update("Order", fields, set={"zz_note": "m"})
    new = h.read_raw(key)
    unchanged = h.one_call("update_item")
    assert_equal("UpdateItem payload-only", write_cost(h, old, new), unchanged)
    assert reported(unchanged).index("GSI2") == 0.0  # type: ignore[union-attr]
    # WHEN it is deleted THEN every index drops its entry
    old = new
    h.table.delete("Order", fields)
    h.read_raw(key)
    assert_equal("DeleteItem sparse-leave", write_cost(h, old, None), h.one_call("delete_item"))


#: Index reads at the 4 KB boundary: LSIs (ALL, INCLUDE) and GSIs (ALL, INCLUDE) for comparison.
RANKS = Model(
    "ranks",
    entities=[
        Entity(
            "Player",
            pk="GAME#{game}",
            sk="PLAYER#{player}",
            fields={"game": "string", "player": "string", "level": "string", "rank": Field.number(width=4)},
            indexes={
                "ByRank": IndexKey(sk="RANK#{rank}#{player}"),
                "ByName": IndexKey(sk="NAME#{player}"),
                "ByLevel": IndexKey(pk="LEVEL#{level}", sk="{player}"),
                "ByLevelNote": IndexKey(pk="LEVELNOTE#{level}", sk="{player}"),
            },
        )
    ],
    indexes=[Index("ByRank", kind="LSI"), Index("ByName", kind="LSI", projection=("note",)),
             Index("ByLevel"), Index("ByLevelNote", projection=("note",))],
    access_patterns=[
        AccessPattern("players by rank", entity="Player", index="ByRank"),
        AccessPattern("players by name", entity="Player", index="ByName"),
        AccessPattern("players of a level", entity="Player", index="ByLevel"),
        AccessPattern("notes of a level", entity="Player", index="ByLevelNote"),
    ],
)
RANK_PATTERNS = {"ByRank": "players by rank", "ByName": "players by name", "ByLevel": "players of a level",
                 "ByLevelNote": "notes of a level"}


@pytest.fixture(scope="module")
def ranks(synth_table_template: Callable[..., dict[str, Any]], dynamodb_local: Any) -> Iterator[Harness]:
    from constructs_lib.testing.local_deploy import deploy_template

    client = dynamodb_local.client()
    deployment = deploy_template(synth_table_template(RANKS), client=client, name_prefix="cap-ranks-")
    (name,) = deployment.tables.values()
    yield Harness(RANKS, name, client)
    deployment.delete()


_cases = itertools.count(1)


def query_one(h: Harness, index: str, note: str, *, consistent: bool) -> tuple[int, Capacity, dict[str, Any]]:
    """Put a player with ``note`` (its own partition and level), query ``index`` for it with limit 1:
    (bytes the query reads by the size rule, the predicted capacity, the response)."""
    case = next(_cases)
    attrs = {"game": f"g{case:05d}", "player": "p", "level": f"l{case:05d}", "rank": 7, "note": note}
    h.table.put("Player", attrs)
    stored = h.read_raw(h.table_key("Player", attrs))
    assert stored is not None
    h.recorder.take()
    values = {"game": attrs["game"]} if RANKS.indexes[index].kind == "LSI" else {"level": attrs["level"]}
    h.table.query(RANK_PATTERNS[index], values, limit=1, consistent=consistent)
    predicted = capacity.query(h.model, index, [stored], consistent=consistent, limit=1)
    return capacity.read_bytes(h.model, RANKS.indexes[index], stored), predicted, h.one_call("query")


@pytest.mark.parametrize(("index", "consistent"), [
    ("ByRank", True), ("ByRank", False), ("ByName", True), ("ByName", False), ("ByLevel", False),
    ("ByLevelNote", False),
])
def test_index_reads_are_priced_at_the_4_kb_boundary(ranks: Harness, index: str, consistent: bool) -> None:
    units = 1.0 if consistent else 0.5
    for target, want in ((4096, units), (4097, 2 * units)):
        # GIVEN a player whose entry in the index is exactly 4 KB by the size rule, then one byte more
        base, _, _ = query_one(ranks, index, "", consistent=consistent)
        size, predicted, response = query_one(ranks, index, "x" * (target - base), consistent=consistent)
        assert size == target
        # WHEN the index is queried for it with limit 1
        # THEN DynamoDB reports what was predicted: one read unit (half, eventually) up to 4 KB, two above
        # (an LSI entry is read without the 100 bytes its write is priced with)
        assert_equal(f"Query {index}", predicted, response)
        assert predicted.index(index) == want


#: Numbers at the edges of the size rule: zero (1 byte), negative numbers (one byte for the sign,
#: none at 20 base-100 pairs), pairs aligned on the decimal point, large and small exponents. Every
#: class of sign, digit count and exponent: test_number_sizes.py.
NUMBERS = [0, -12, 12, Decimal("-0.5"), Decimal("0.5"), -1, 1, Decimal("-123.456"), Decimal("123.456"),
           -(10**37 + 1), 10**37 + 1, Decimal("-1E-100"), Decimal("1E+100"), Decimal("-99.99"), Decimal("1200000"),
           Decimal("-9." + "9" * 37), Decimal("9." + "9" * 37)]


def test_number_sizes_match_dynamodb_local(dynamodb_local: Any, harnesses: list[Harness]) -> None:
    # GIVEN items padded to exactly 1,024 bytes by the runtime's size rule, each holding one number
    h = harnesses[-1]
    wrong = []
    for number in NUMBERS:
        item = {"PK": "n", "SK": "n", "v": number}
        item["pad"] = "x" * (1024 - item_size(item) - len("pad"))
        assert item_size(item) == 1024
        # WHEN it is put THEN DynamoDB charges 1 unit (a 1,025-byte item would cost 2)
        h.raw.put_item(TableName=h.name, Item=_serialize(item))
        bigger = {**item, "pad": item["pad"] + "x"}
        one = h.raw.put_item(TableName=h.name, Item=_serialize(item), ReturnConsumedCapacity="TOTAL")
        two = h.raw.put_item(TableName=h.name, Item=_serialize(bigger), ReturnConsumedCapacity="TOTAL")
        got = (one["ConsumedCapacity"]["CapacityUnits"], two["ConsumedCapacity"]["CapacityUnits"])
        if got != (1.0, 2.0):
            wrong.append((number, got))
    h.raw.delete_item(TableName=h.name, Key=_serialize({"PK": "n", "SK": "n"}))
    assert wrong == [], f"numbers whose size item_size miscounts (units at 1,024 and 1,025 bytes): {wrong}"


def _serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    from constructs_lib.runtime import _aws

    return _aws.serialize(dict(item))  # type: ignore[no-any-return]
