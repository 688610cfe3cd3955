"""Brute force for the slice: a slice that holds means the consumer's requests and results are
what they were before the producer's change (ADR 0042).

For every knob of a model's JSON (each leaf value, each entry of a mapping, each entity and
index), the producer's model is mutated. A consumer's declared operations — per entity every
write kind of :data:`~constructs_lib.model.scope.WRITE_KINDS` (and an upsert), a get and a batch
get, per access pattern a query — run on random items through a ``TableClient`` whose boto3
client is a stub at the ``_aws`` seam: it records each request and answers a read with the item
the table holds (as the model of the moment stores it, projected by its index). Whenever the
scope's slice still holds against the mutated model's published contract, a write must send the
same requests and return the same result as built with the mutated model, and a read must send
the same requests and return the same attributes after the change (deployed or rebuilt) as
before it (or fail alike; see :func:`counterexamples`). The entity filter of a table pattern is the exception: a change
to another entity's keys may add or drop it, and the items it would filter out are dropped on
the way back anyway (``own_items``, ADR 0036), so it is compared as results, not as text.
``CONSTRUCTS_LIB_SOAK=1`` uses more items per entity.
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, AccessScope, Entity, Field, Index, IndexKey, Model
from constructs_lib.model.exceptions import ModelError
from constructs_lib.model.scope import WRITE_KINDS
from constructs_lib.model.slices import Slice, check_slice, published_json, read_published
from constructs_lib.model.slices import slice_of as real_slice_of
from constructs_lib.runtime import TableClient, _aws
from examples.shop.model import shop_model

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
ITEMS = 6 if SOAK else 2
TABLE = "t"
EXPIRES = datetime(2100, 1, 1, tzinfo=UTC)


def desk_model() -> Model:
    """What the shop does not have: an LSI, an INCLUDE projection, ``when_present``, non-key
    declared fields (a date, a bounded string, choices), number fields, a version attribute."""
    ticket = Entity(
        "Ticket", pk="TEAM#{team}", sk="TICKET#{opened_at}#{ticket_id}",
        fields={"team": "string", "ticket_id": "string", "opened_at": Field.timestamp(),
                "state": Field.enum("OPEN", "CLOSED", "HELD"), "priority": Field.number(2),
                "due": Field.date(), "note": Field.string(max_length=12), "kind": Field.enum("bug", "task")},
        indexes={"ByState": IndexKey(pk="STATE#{state}", sk="{opened_at}#{ticket_id}", when_equals={"state": ("OPEN",)}),
                 "ByPriority": IndexKey(sk="PRIO#{priority}#{ticket_id}", when_present="priority")},
        required=("state", "title"), attributes={"title": "string", "points": "integer", "tags": "string_set"},
        version_attribute="rev",
    )
    team = Entity("Team", pk="TEAM#{team}", sk="TEAM", fields={"team": "string"}, attributes={"lead": "string"})
    return Model(
        "desk", entities=[ticket, team],
        indexes=[Index("ByState", projection=("title", "note")), Index("ByPriority", kind="LSI", projection="KEYS_ONLY")],
        access_patterns=[
            AccessPattern("tickets of a team", "Ticket", sk="begins_with"),
            AccessPattern("tickets opened between", "Ticket", sk="between", sk_fields=("opened_at",)),
            AccessPattern("open tickets", "Ticket", index="ByState", descending=True),
            AccessPattern("by priority", "Ticket", index="ByPriority", sk="=", sk_fields=("priority", "ticket_id")),
            AccessPattern("team", "Team", sk="="),
            AccessPattern("team with tickets", ("Team", "Ticket")),
        ],
        ttl_attribute="expires",
    )


BASES: dict[str, Callable[[], Model]] = {"shop": lambda: shop_model, "desk": desk_model}


# Knobs --------------------------------------------------------------------------------------------
Path_ = tuple[Any, ...]

#: Values for knobs that are null in a base model.
FOR_NULL = {"ttl_attribute": "ttl", "version_attribute": "rev2", "max_length": 3, "typical_item_bytes": 100,
            "description": "text"}
KINDS = ({"kind": "string"}, {"kind": "timestamp"}, {"kind": "date"}, {"kind": "number", "width": 3})


def _leaf_values(path: Path_, value: Any) -> list[Any]:
    """Other values for the leaf at ``path``."""
    key = path[-1]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, max(1, value - 1)]
    if value is None:
        return [FOR_NULL[key]] if key in FOR_NULL else []
    if isinstance(value, list):  # a list of names or values: one more, one fewer, reversed
        return [[*value, "Zz"], value[1:], value[::-1]]
    if key == "projection":
        return [p for p in ("ALL", "KEYS_ONLY", ["note", "title"]) if p != value]
    if key == "kind" and value in ("GSI", "LSI"):
        return ["LSI" if value == "GSI" else "GSI"]
    out = ["Z" + value, value + "Z", None]
    if "#" in value:
        out.append("#".join(reversed(value.split("#"))))
    return out


def _walk(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every knob of a model JSON: (path, value) for leaves and for mappings (add / remove an entry)."""
    if isinstance(value, Mapping):
        yield path, value
        for key, inner in value.items():
            if path == () and key in ("access_patterns", "consumer_patterns", "format", "version"):
                continue  # the consumer's own declarations, and the format's header
            yield from _walk(inner, (*path, key))
    elif isinstance(value, list) and path in (("entities",), ("indexes",)):
        yield path, value
        for n, inner in enumerate(value):
            yield from _walk(inner, (*path, n))
    else:
        yield path, value


def _set(data: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    new = copy.deepcopy(data)
    target: Any = new
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return new


def mutations(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, mutated model JSON) for every knob."""
    for path, value in _walk(data):
        label = "/".join(map(str, path))
        if path == ("entities",):
            for n, e in enumerate(value):
                kept = [x for i, x in enumerate(value) if i != n]
                yield f"remove entity {e['name']}", _set(data, path, kept)
            zed = Entity("Zed", pk="ZED#{zid}", sk="ZED" if data["sk_attribute"] else None, fields=["zid"]).to_dict()
            yield "add entity Zed", _set(data, path, [*value, zed])
        elif path == ("indexes",):
            for n, index in enumerate(value):
                gone = _set(data, path, [x for i, x in enumerate(value) if i != n])
                for e in gone["entities"]:
                    e["indexes"].pop(index["name"], None)
                yield f"remove index {index['name']}", gone
        elif isinstance(value, Mapping):
            if path[-1:] == ("fields",):
                yield f"{label} +field", _set(data, (*path, "zf"), {"kind": "string"})
            elif path[-1:] == ("attributes",):
                yield f"{label} +attribute", _set(data, (*path, "za"), "string")
            if path and path[-1] in ("fields", "attributes", "indexes", "when_equals"):
                for key in value:
                    yield f"{label} -{key}", _set(data, path, {k: v for k, v in value.items() if k != key})
            if path and path[-2:-1] == ("fields",):  # a field spec: its kind
                for spec in KINDS:
                    if spec["kind"] != value.get("kind"):
                        yield f"{label} kind {spec['kind']}", _set(data, path, dict(spec))
        elif path[-1] != "kind" or path[-3:-2] != ("fields",):  # (a field's kind changes with its spec, above)
            for other in _leaf_values(path, value):
                yield f"{label} = {other!r}", _set(data, path, other)


# The consumer's operations, and the table they meet --------------------------------------------------
class Stub:
    """A boto3 DynamoDB client at the ``_aws`` seam: records requests, answers reads with ``items``."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.calls: list[tuple[str, Any]] = []

    def _record(self, operation: str, params: dict[str, Any]) -> None:
        self.calls.append((operation, json.dumps(params, sort_keys=True, default=repr)))

    def put_item(self, **params: Any) -> dict[str, Any]:
        self._record("put_item", params)
        return {}

    def update_item(self, **params: Any) -> dict[str, Any]:
        self._record("update_item", params)
        return {}

    def delete_item(self, **params: Any) -> dict[str, Any]:
        self._record("delete_item", params)
        return {}

    def transact_write_items(self, **params: Any) -> dict[str, Any]:
        self._record("transact_write_items", params)
        return {}

    def batch_write_item(self, **params: Any) -> dict[str, Any]:
        self._record("batch_write_item", params)
        return {}

    def get_item(self, **params: Any) -> dict[str, Any]:
        self._record("get_item", params)
        return {"Item": self.items[0]} if self.items else {}

    def batch_get_item(self, **params: Any) -> dict[str, Any]:
        self._record("batch_get_item", params)
        return {"Responses": {TABLE: self.items}}

    def query(self, **params: Any) -> dict[str, Any]:
        filtered = dict(params)
        filter_text = filtered.pop("FilterExpression", None)
        if filter_text is not None and filter_text.endswith(")") and " IN (" in filter_text:
            # the entity filter only (see the module docstring): its placeholders are left out
            names, values = filtered.pop("ExpressionAttributeNames", {}), filtered.pop("ExpressionAttributeValues", {})
            used = filtered["KeyConditionExpression"]
            filtered["ExpressionAttributeNames"] = {k: v for k, v in names.items() if k in used}
            filtered["ExpressionAttributeValues"] = {k: v for k, v in values.items() if k in used}
        self._record("query", filtered)
        return {"Items": self.items}


def random_item(entity: Any, model: Model, rng: random.Random, full: bool) -> dict[str, Any]:
    """Attributes of one ``entity`` item, typed by the consumer's model (all of them when ``full``)."""
    item: dict[str, Any] = {}
    keys = set(entity.table_key_fields)
    for name, spec in entity.fields.items():
        if not full and name not in keys and name not in entity.required and rng.random() < 0.5:
            continue
        if spec.kind == "number":
            item[name] = rng.randrange(10 ** (spec.width or 1))
        elif spec.kind == "timestamp":
            item[name] = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randrange(10**7))
        elif spec.kind == "date":
            item[name] = (datetime(2024, 1, 1) + timedelta(days=rng.randrange(900))).date().isoformat()
        elif spec.choices:
            item[name] = rng.choice(spec.choices)
        else:
            text = "".join(rng.choice("ab#Zé-") for _ in range(rng.randrange(1, 8)))
            item[name] = text[: spec.max_length] if spec.max_length else text
    values = {"string": "s", "integer": 7, "number": Decimal("2.5"), "string_set": {"a", "b"}, "boolean": True}
    for name, kind in entity.attributes.items():
        if full or rng.random() < 0.5:
            item[name] = values.get(kind, "x")
    for name in entity.required:
        item.setdefault(name, "r")
    for key in entity.indexes.values():
        if key.when_present and (full or rng.random() < 0.5):
            item.setdefault(key.when_present, 1)
    item["memo"] = "m"
    return item


class Consumer:
    """A consumer built with ``model``: one ``TableClient`` on a :class:`Stub`, reused by every operation."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.stub = Stub([])
        self.client = TableClient(model, TABLE, client=self.stub)

    def stored(self, entity_name: str, item: dict[str, Any]) -> dict[str, Any] | None:
        """The wire item this model stores for ``item`` (with an expiry), or None if it refuses it."""
        try:
            built = self.client.mapper.build_item(self.client.entity(entity_name), item)
        except Exception:  # noqa: BLE001 - a model that refuses the item stores nothing
            return None
        if self.model.ttl_attribute:
            built[self.model.ttl_attribute] = 4102444800
        return _aws.serialize(built)


def _projected(model: Model, index_name: str | None, item: dict[str, Any]) -> dict[str, Any] | None:
    """``item`` as a Query on ``index_name`` of ``model``'s table returns it (None: not in the index)."""
    if index_name is None:
        return item
    index = model.indexes.get(index_name)
    if index is None or not all(a in item for a in index.key_attributes):
        return None
    if index.projection == "ALL":
        return item
    keep = {model.pk_attribute, model.sk_attribute, model.entity_attribute, *index.key_attributes}
    if isinstance(index.projection, tuple):
        keep |= set(index.projection)
    return {k: v for k, v in item.items() if k in keep}


Op = tuple[str, str, int]  # (kind, entity or pattern, item number)
READS = ("get", "batch_get", "query")


def operations(model: Model) -> list[Op]:
    """Every operation a consumer of ``model`` may declare, on each of the random items."""
    ops: list[Op] = []
    for n in range(ITEMS):
        for entity in model.entities:
            ops += [(kind, entity, n) for kind in (*WRITE_KINDS, "upsert", "get", "batch_get")]
        ops += [("query", pattern, n) for pattern in model.resolved_patterns]
    return ops


Table = Mapping[tuple[str, int], dict[str, Any]]  # (entity, item number) -> the item stored


def answers_to(op: Op, base: Model, table: Table, producer: Model) -> list[dict[str, Any]]:
    """What ``producer``'s table holding ``table`` answers ``op`` (a read) with: the items of its
    entities as stored, projected by the index it reads."""
    kind, name, n = op
    if kind == "query":
        pattern = base.resolved_patterns[name]
        found = [_projected(producer, pattern.index_name, table[(other, n)]) for other in pattern.entities
                 if (other, n) in table]
        return [item for item in found if item is not None]
    return [table[(name, n)]] if kind in READS and (name, n) in table else []


def run(consumer: Consumer, op: Op, item: dict[str, Any], key: dict[str, Any], answers: list[dict[str, Any]]) -> Any:
    """Run ``op`` on ``item`` (its table key ``key``, as the consumer's code passes it) as
    ``consumer``, the table answering reads with ``answers``: (requests sent, result) or the error's type."""
    model = consumer.model
    kind, name, _ = op
    stub, client = consumer.stub, consumer.client
    stub.items, stub.calls = answers, []
    other = {k: v for k, v in item.items() if k not in key}
    expiry = {"expires_at": EXPIRES} if model.ttl_attribute else {}
    try:
        entity_name = model.resolved_patterns[name].entities[0] if kind == "query" else name
        if kind == "put":
            result: Any = client.put(entity_name, item, **expiry)
        elif kind == "batch_put":
            result = client.batch_write(puts=[(entity_name, item)])
        elif kind in ("update", "upsert"):
            result = client.update(entity_name, key, set=other, must_exist=kind == "update", **expiry)
        elif kind == "delete":
            result = client.delete(entity_name, key)
        elif kind == "batch_delete":
            result = client.batch_write(deletes=[(entity_name, key)])
        elif kind.startswith("transaction_") or kind == "condition_check":
            with client.transaction() as tx:
                if kind == "transaction_put":
                    tx.put(entity_name, item, create_only=True, **expiry)
                elif kind == "transaction_update":
                    tx.update(entity_name, key, set=other, **expiry)
                elif kind == "transaction_delete":
                    tx.delete(entity_name, key)
                else:
                    tx.condition_check(entity_name, key)
            result = None
        elif kind == "get":
            result = client.get(entity_name, **key)
        elif kind == "batch_get":
            result = client.batch_get([(entity_name, key)])
        else:
            pattern = model.resolved_patterns[name]
            values = {f: item.get(f) for f in (*pattern.pk_fields, *pattern.sk_fields)}
            if pattern.sk == "between":
                last = pattern.sk_fields[-1]
                values[last] = (values[last], values[last])
            result = client.query(name, values).items
    except Exception as exc:  # noqa: BLE001 - refused alike is the same outcome
        return ("error", type(exc).__name__)
    return (sorted(stub.calls), result)


def scope_of(op: Op) -> AccessScope:
    kind, name, _ = op
    if kind == "query":
        return AccessScope(patterns=[name])
    if kind in ("get", "batch_get"):
        return AccessScope(batch_gets=[name])
    return AccessScope(writes={name: ["update" if kind == "upsert" else kind]})


SliceOf = Callable[[Model, AccessScope | None], Slice]


def counterexamples(base: Model, *, slice_of: SliceOf = real_slice_of, only: str | None = None,
                    seed: int = 7) -> tuple[int, list[str]]:
    """(knobs tried, "knob: operation" for each operation whose slice held but whose requests or
    results differ between ``base`` and the mutated model).

    A write compares the consumer built with ``base`` and the consumer rebuilt with the mutated
    model. A read compares the consumer on the table before the change (items as ``base`` stores
    them) with the same consumer, and the rebuilt one, on the table after it (items as the
    mutated model stores them, projected by its indexes) — for items the mutated model still
    stores: one it refuses is not in the table after the change (its writers are refused instead)."""
    rng = random.Random(seed)
    items = {(e.name, n): random_item(e, base, rng, full=n % 2 == 0) for e in base.entities.values()
             for n in range(ITEMS)}
    ops = operations(base)
    slices = {op: (piece, piece.to_json()) for op in ops for piece in [slice_of(base, scope_of(op))]}
    data = base.to_dict()
    old = Consumer(base)
    old_table = {k: stored for k, item in items.items() for stored in [old.stored(k[0], item)] if stored is not None}
    assert len(old_table) == len(items)  # the random items are the consumer's: its model stores each
    before: dict[Op, Any] = {}
    tried, found = 0, []
    for label, mutated in mutations(data):
        if only is not None and label != only:
            continue
        producer = _model(mutated, patterns=False)
        if producer is None or producer.to_dict() == base.to_dict() | {"access_patterns": []}:
            continue  # not a valid model, or no change at all
        tried += 1
        consumer_on_new = _model(mutated, patterns=True)
        unservable = set() if consumer_on_new is not None else {
            p["name"] for p in data["access_patterns"] if _model({**mutated, "access_patterns": [p]}, True) is None}
        if consumer_on_new is None:
            consumer_on_new = _model({**mutated, "access_patterns": [p for p in data["access_patterns"]
                                                                      if p["name"] not in unservable]}, True)
        assert consumer_on_new is not None, label
        published = read_published(published_json(producer), source=label)
        writer = Consumer(producer)
        new_table = {k: stored for k, item in items.items() if k[0] in producer.entities
                     for stored in [writer.stored(k[0], item)] if stored is not None}
        new = Consumer(consumer_on_new)
        holds: dict[str, bool] = {}  # per distinct slice (many operations have the same one)
        for op in ops:
            piece, text = slices[op]
            if text not in holds:
                holds[text] = not check_slice(piece, published)
            if not holds[text]:
                continue  # the slice does not hold: the consumer is refused, whatever the requests
            if op[0] == "query" and op[1] in unservable:
                found.append(f"{label}: {op} (pattern no longer servable)")
                continue
            entity = base.entity(base.resolved_patterns[op[1]].entities[0] if op[0] == "query" else op[1])
            item = items[(entity.name, op[2])]
            key = {f: item[f] for f in entity.table_key_fields}
            if op not in before:
                before[op] = run(old, op, item, key, answers_to(op, base, old_table, base))
            answers = answers_to(op, base, new_table, producer)
            after = [run(new, op, item, key, answers)]
            if op[0] in READS:  # the deployed consumer, not rebuilt, on the table after the change
                read = base.resolved_patterns[op[1]].entities if op[0] == "query" else (op[1],)
                if any((e, op[2]) not in new_table for e in read):
                    continue  # the changed model refuses the item: it is not in the table after the change
                after.append(run(old, op, item, key, answers))
            if any(result != before[op] for result in after):
                found.append(f"{label}: {op}")
    return tried, found


def _model(data: dict[str, Any], patterns: bool) -> Model | None:
    try:
        return Model.from_dict(data if patterns else {**data, "access_patterns": []})
    except ModelError:
        return None


# The tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(BASES))
def test_a_slice_that_holds_means_the_same_requests_and_results(name: str) -> None:
    # GIVEN a producer's model, every consumer operation on random items, and every knob of its JSON mutated
    # WHEN each operation runs as built with the model and as rebuilt with the mutated one
    tried, found = counterexamples(BASES[name]())
    # THEN no operation whose slice still holds sends other requests or returns other results
    assert found == [], "\n".join(found[:20])
    assert tried > 100  # (every knob, not a handful)


def test_the_brute_force_catches_a_slice_that_leaves_the_ttl_attribute_out() -> None:
    # GIVEN slices as they were before they said how items are stored (keys and indexes only)
    def keys_only(model: Model, scope: AccessScope | None) -> Slice:
        piece = real_slice_of(model, scope)
        return Slice(piece.consumer, piece.model_name, piece.entities, piece.indexes, piece.contract_fingerprint)

    # WHEN the TTL attribute of the shop is renamed
    tried, found = counterexamples(shop_model, slice_of=keys_only, only="ttl_attribute = 'Zexpires_at'")
    # THEN the brute force finds the writes that set an expiry (they store it under the old name) and
    # the reads that return whole items (the expiry comes back under the new name)
    assert tried == 1
    kinds = {entry.split(": ")[1].split("'")[1] for entry in found}
    assert {"put", "update", "upsert", "transaction_put", "transaction_update", "get", "batch_get", "query"} == kinds
    # AND not a delete, a condition check, a batch put (no expires_in) or a read of keys only (GSI2 is KEYS_ONLY)
    assert not any("'pending orders by date'" in entry for entry in found), found
    # AND with the slices of this version it finds nothing
    assert counterexamples(shop_model, only="ttl_attribute = 'Zexpires_at'") == (1, [])
