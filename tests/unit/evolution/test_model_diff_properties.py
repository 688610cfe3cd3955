"""Property test of the model diff over random model mutations.

Base models (the shop, the saas tenant model, the store v1/v2, a team model keyed by an enum, and
small random ones) get random mutations of their JSON: every knob the model serializes — enum
choices, field kinds, widths and max_length, fields, attributes, required, entities, indexes,
index keys, sparse rules, shards, table and index templates, TTL, tenancy, key attribute names,
version attributes, access patterns, names and descriptions — by targeted edits and by replacing
any JSON leaf at random. Mutations giving an invalid model are dropped. Then:

1. a changed fingerprint means at least one classified change, and no rule is missing (no
   ``unclassified`` change);
2. when an independent reference (below: brute force over stored values with the runtime's own
   write checks, plus the key and index facts) finds that stored items can become unwritable or
   unreadable, the diff is not all ``safe``.

``CONSTRUCTS_LIB_SOAK=1`` runs ten times as many examples.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.evolution.diff import SAFE, diff_models
from constructs_lib.model import Entity, Field, Index, Model, ModelError, ResolvedEntity
from constructs_lib.runtime import key_segments
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.exceptions import RuntimeClientError
from constructs_lib.runtime.items import ItemMapper
from examples.evolution.model import model_v1, model_v2
from examples.saas.model import saas_model
from examples.shop.model import shop_model

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 150 * (10 if SOAK else 1)
Data = dict[str, Any]


def team_model() -> Model:
    return Model("league", entities=[Entity(
        "Team", pk="TEAM#{kind}#{team_id}", sk="TEAM",
        fields={"kind": Field.enum("RED", "BLUE", "GREEN"), "team_id": "string", "rank": "number:4"},
    )])


BASES: dict[str, Callable[[], Model]] = {
    "shop": lambda: shop_model, "saas": lambda: saas_model, "store v1": model_v1, "store v2": model_v2,
    "team": team_model,
}
SPECS = [{"kind": "string"}, {"kind": "string", "choices": ["A", "B"]}, {"kind": "string", "choices": ["A"]},
         {"kind": "string", "max_length": 8}, {"kind": "string", "max_length": 40}, {"kind": "number", "width": 4},
         {"kind": "number", "width": 8}, {"kind": "timestamp"}, {"kind": "date"}]
ATTRIBUTE_KINDS = ["string", "integer", "number", "map", "any", "boolean"]


# Small random models ----------------------------------------------------------------------------
@st.composite
def small_models(draw: Any) -> Model:
    with_sk, with_gsi = draw(st.booleans()), draw(st.booleans())
    with_lsi = with_sk and draw(st.booleans())
    gsi_users = draw(st.sampled_from([1, 2]))  # entities with keys in GSI1: 2 lets one leave it
    entities = []
    for n in range(draw(st.integers(1, 3))):
        fields = {"id": draw(st.sampled_from(SPECS[:5])), "a": draw(st.sampled_from(SPECS)),
                  "b": draw(st.sampled_from(SPECS))}
        pk = draw(st.sampled_from([f"E{n}#{{id}}", f"E{n}#{{a}}#{{id}}", f"E{n}#{{id}}#X"]))
        sk = draw(st.sampled_from(["S", "S#{b}", "{a}"])) if with_sk else None
        keys = {"GSI1": {"pk": draw(st.sampled_from(["G#{a}", "G#{b}#{id}"])), "sk": "{id}", "when_present": None,
                         "when_equals": None}} if with_gsi and n < gsi_users else {}
        if with_lsi and n == 0:
            keys["LSI1"] = {"pk": None, "sk": "{id}", "when_present": None, "when_equals": None}
        entities.append({"name": f"E{n}", "pk": pk, "sk": sk, "fields": fields, "indexes": keys, "required": [],
                         "version_attribute": draw(st.sampled_from([None, "v"])), "description": "",
                         **({"attributes": {"c": draw(st.sampled_from(ATTRIBUTE_KINDS))}} if draw(st.booleans())
                            else {})})
    data = {"format": "constructs_lib.model", "version": 1, "name": "small", "pk_attribute": "PK",
            "sk_attribute": "SK" if with_sk else None, "entity_attribute": "_type",
            "ttl_attribute": draw(st.sampled_from([None, "expires"])), "tenant_field": None,
            "indexes": [{"name": "GSI1", "kind": "GSI", "pk_attribute": "GSI1PK", "sk_attribute": "GSI1SK",
                         "sort_key": True, "projection": "ALL"}] * with_gsi
            + [{"name": "LSI1", "kind": "LSI", "pk_attribute": None, "sk_attribute": "LSI1SK", "sort_key": True,
                "projection": "KEYS_ONLY"}] * with_lsi,
            "entities": entities,
            "access_patterns": [{"name": f"get {e['name']}", "entities": [e["name"]], "index": "table", "sk": None,
                                 "sk_fields": None, "descending": False, "description": ""} for e in entities]}
    try:
        return Model.from_dict(data)
    except ModelError:  # e.g. two entities whose keys may meet: fall back to the first entity alone
        return Model.from_dict({**data, "entities": entities[:1], "access_patterns": data["access_patterns"][:1],
                                "indexes": [i for i in data["indexes"] if i["name"] in entities[0]["indexes"]]})


# Mutations of the model JSON ----------------------------------------------------------------------
def _entities(data: Data) -> list[Data]:
    return data["entities"]  # type: ignore[no-any-return]


def _pick(draw: Any, items: list[Any]) -> Any:
    return draw(st.sampled_from(items)) if items else None


def m_field_spec(draw: Any, data: Data) -> None:
    e = _pick(draw, _entities(data))
    name = _pick(draw, sorted(e["fields"]))
    if name is None:
        return
    spec = dict(e["fields"][name])
    knob = draw(st.sampled_from(["choices", "kind", "width", "max_length", "whole"]))
    if knob == "choices":
        old = spec.get("choices") or ["A", "B", "C"]
        new = draw(st.lists(st.sampled_from([*old, "A", "Z", "GREEN"]), min_size=0, max_size=4, unique=True))
        spec["choices"] = new or None
    elif knob == "kind":
        spec = {"kind": draw(st.sampled_from(["string", "number", "timestamp", "date"]))}
        if spec["kind"] == "number":
            spec["width"] = draw(st.integers(1, 12))
    elif knob == "width" and spec["kind"] == "number":
        spec["width"] = draw(st.integers(1, 12))
    elif knob == "max_length" and spec["kind"] == "string":
        spec["max_length"] = draw(st.sampled_from([None, 1, 5, 8, 40, 200]))
    else:
        spec = draw(st.sampled_from(SPECS))
    e["fields"][name] = {k: v for k, v in spec.items() if v is not None}


def m_fields(draw: Any, data: Data) -> None:
    e = _pick(draw, _entities(data))
    if draw(st.booleans()):
        name = draw(st.sampled_from(["note", "extra", "c", *e.get("attributes", {})]))
        e["fields"][name] = draw(st.sampled_from(SPECS))
        e.get("attributes", {}).pop(name, None)
    elif e["fields"]:
        name = draw(st.sampled_from(sorted(e["fields"])))
        del e["fields"][name]
        if draw(st.booleans()):
            e.setdefault("attributes", {})[name] = draw(st.sampled_from(ATTRIBUTE_KINDS))


def m_attributes_required(draw: Any, data: Data) -> None:
    e = _pick(draw, _entities(data))
    attrs = e.setdefault("attributes", {})
    knob = draw(st.sampled_from(["add", "remove", "kind", "required", "unrequire", "description"]))
    if knob == "add":
        attrs[draw(st.sampled_from(["c", "d", "name"]))] = draw(st.sampled_from(ATTRIBUTE_KINDS))
    elif knob == "remove" and attrs:
        del attrs[draw(st.sampled_from(sorted(attrs)))]
    elif knob == "kind" and attrs:
        attrs[draw(st.sampled_from(sorted(attrs)))] = draw(st.sampled_from(ATTRIBUTE_KINDS))
    elif knob == "required":
        e["required"] = [*e["required"], draw(st.sampled_from(["c", "d", "name"]))]
    elif knob == "unrequire" and e["required"]:
        e["required"] = e["required"][1:]
    else:
        e["description"] = e.get("description", "") + " changed"
    if not attrs:
        e.pop("attributes")


def m_entities(draw: Any, data: Data) -> None:
    entities = _entities(data)
    e = _pick(draw, entities)
    knob = draw(st.sampled_from(["add", "remove", "rename", "pk", "sk", "version"]))
    if knob == "add":
        twin = copy.deepcopy(e)
        twin["name"] = e["name"] + "New"
        twin["pk"] = "NEW#" + e["pk"]
        for key in twin["indexes"].values():
            key["pk"] = None if key["pk"] is None else "NEW#" + key["pk"]
        entities.append(twin)
    elif knob in ("remove", "rename"):
        new_name = e["name"] + "R" if knob == "rename" else None
        if new_name:
            e["name"] = new_name
        else:
            entities.remove(e)
        for p in list(data["access_patterns"]):
            if e["name"] in p["entities"] or (new_name and new_name[:-1] in p["entities"]):
                if new_name:
                    p["entities"] = [new_name if n == new_name[:-1] else n for n in p["entities"]]
                else:
                    data["access_patterns"].remove(p)
    elif knob == "pk":
        e["pk"] = draw(st.sampled_from(["V2#" + e["pk"], e["pk"] + "#V2"]))
    elif knob == "sk" and e["sk"] is not None:
        e["sk"] = draw(st.sampled_from(["V2#" + e["sk"], e["sk"] + "#V2"]))
    else:
        e["version_attribute"] = draw(st.sampled_from([None, "v", "rev", "version"]))


def m_indexes(draw: Any, data: Data) -> None:
    index = _pick(draw, data["indexes"])
    knob = draw(st.sampled_from(["add", "remove", "projection", "attributes", "rename"]))
    if knob == "add":
        e = _pick(draw, _entities(data))
        field = _pick(draw, sorted(e["fields"]))
        if field is None:
            return
        data["indexes"].append({"name": "GSI9", "kind": "GSI", "pk_attribute": "GSI9PK", "sk_attribute": "GSI9SK",
                                "sort_key": True, "projection": "ALL"})
        e["indexes"]["GSI9"] = {"pk": f"NEW#{{{field}}}", "sk": "X", "when_present": None, "when_equals": None}
    elif index is None:
        return
    elif knob in ("remove", "rename"):
        new_name = index["name"] + "b" if knob == "rename" else None
        for e in _entities(data):
            key = e["indexes"].pop(index["name"], None)
            if key is not None and new_name:
                e["indexes"][new_name] = key
        for p in list(data["access_patterns"]):
            if p["index"] == index["name"]:
                if new_name:
                    p["index"] = new_name
                else:
                    data["access_patterns"].remove(p)
        if new_name:
            index["name"] = new_name
        else:
            data["indexes"].remove(index)
    elif knob == "projection":
        index["projection"] = draw(st.sampled_from(["ALL", "KEYS_ONLY", ["name"], ["name", "sku"]]))
    elif index["kind"] == "GSI":
        index["pk_attribute"] = draw(st.sampled_from([index["pk_attribute"] + "x", "IPK"]))


def m_index_keys(draw: Any, data: Data) -> None:
    e = _pick(draw, [e for e in _entities(data) if e["indexes"]])
    if e is None:
        return
    name = draw(st.sampled_from(sorted(e["indexes"])))
    key = e["indexes"][name]
    fields = sorted(e["fields"])
    knob = draw(st.sampled_from(["pk", "sk", "when_present", "when_equals", "shards", "remove"]))
    if knob == "pk" and key["pk"] is not None:
        key["pk"] = "V2#" + key["pk"]
    elif knob == "sk" and key["sk"] is not None:
        key["sk"] = draw(st.sampled_from(["V2#" + key["sk"], key["sk"] + "#V2"]))
    elif knob == "when_present":
        key["when_present"] = draw(st.sampled_from([None, "flag", *fields]))
    elif knob == "when_equals":
        field = _pick(draw, fields)
        key["when_equals"] = draw(st.sampled_from([None, {field: ["A"]}, {field: ["A", "B"]}]))
    elif knob == "shards":
        if key.get("shards"):
            key["shards"] = draw(st.sampled_from([2, 3, key["shards"] + 1]))
        elif key["pk"] is not None and fields:
            key.update(pk=key["pk"] + "#{shard}", shards=draw(st.integers(2, 5)),
                       shard_by=[draw(st.sampled_from(fields))])
    else:
        del e["indexes"][name]


def m_model(draw: Any, data: Data) -> None:
    knob = draw(st.sampled_from(["ttl", "pk", "sk", "entity", "tenant", "name", "patterns"]))
    if knob == "ttl":
        data["ttl_attribute"] = draw(st.sampled_from([None, "expires", "ttl"]))
    elif knob == "pk":
        data["pk_attribute"] = "pk"
    elif knob == "sk" and data["sk_attribute"]:
        data["sk_attribute"] = "sk"
    elif knob == "entity":
        data["entity_attribute"] = "kind_of"
    elif knob == "tenant":
        data["tenant_field"] = None if data["tenant_field"] else draw(st.sampled_from(["id", "tenant_id", "a"]))
    elif knob == "name":
        data["name"] += "x"
    elif data["access_patterns"]:
        p = draw(st.sampled_from(data["access_patterns"]))
        what = draw(st.sampled_from(["remove", "descending", "copy"]))
        if what == "remove":
            data["access_patterns"].remove(p)
        elif what == "descending":
            p["descending"] = not p["descending"]
        else:
            data["access_patterns"].append({**p, "name": p["name"] + " again"})


def _leaf_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaf_paths(v, (*path, k))] or [path]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, (*path, i))]
    return [path]


def m_any_leaf(draw: Any, data: Data) -> None:
    """Replace one JSON leaf anywhere by a value of the model's own (or a nearby) kind."""
    paths = [p for p in _leaf_paths(data) if p]
    path = draw(st.sampled_from(paths))
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    old = parent[path[-1]]
    pool: list[Any] = [None, "X", "ALL", "KEYS_ONLY"]
    if isinstance(old, bool):
        pool += [not old]
    elif isinstance(old, int):
        pool += [old + 1, max(old - 1, 1), 2]
    elif isinstance(old, str):
        pool += [old + "#V2", "V2#" + old, old + "x", old.replace("{", "{x", 1)]
    elif isinstance(old, list):
        pool += [old[:-1], [*old, "Z"], list(reversed(old))]
    parent[path[-1]] = draw(st.sampled_from(pool))


MUTATIONS = [m_field_spec, m_field_spec, m_fields, m_attributes_required, m_entities, m_indexes, m_index_keys, m_model,
             m_any_leaf]


@st.composite
def mutated(draw: Any) -> tuple[Model, Model, list[str]]:
    base = draw(st.one_of(st.sampled_from(sorted(BASES)).map(lambda n: BASES[n]()), small_models()))
    data = base.to_dict()
    applied = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):  # mostly one: a change alone shows its level
        mutation = draw(st.sampled_from(MUTATIONS))
        trial = copy.deepcopy(data)
        mutation(draw, trial)
        try:
            Model.from_dict(copy.deepcopy(trial))
        except ModelError:
            continue  # an invalid model: this mutation is dropped
        data = trial
        applied.append(mutation.__name__)
    return base, Model.from_dict(data), applied


# The reference: can stored items become unwritable or unreadable? -------------------------------
def _stored_values(spec: Field) -> list[Any]:
    """Values items may hold under ``spec``, as stored (normalized)."""
    if spec.kind == "number":
        assert spec.width is not None
        return [0, 10 ** (spec.width - 1), 10**spec.width - 1]
    if spec.kind == "timestamp":
        return ["2024-01-02T03:04:05.000006Z"]
    if spec.kind == "date":
        return ["2024-01-02"]
    if spec.choices is not None:
        return list(spec.choices)
    return ["a", "x" * (spec.max_length or 300), "2024-01-02"]


_ATTRIBUTE_VALUES: dict[str, list[Any]] = {
    "string": ["a", "x" * 300], "integer": [-1, 10**40], "number": [-1, Decimal("1.5")], "decimal": [Decimal("1.5")],
    "boolean": [True], "binary": [b"x"], "string_set": [{"a"}], "number_set": [{1}], "list": [["a"]],
    "map": [{"a": 1}], "any": [{"a": 1}, -1],
}


def _accepts(model: Model, entity: Entity, name: str, value: Any) -> bool:
    """Whether a write of ``value`` under field ``name`` passes the runtime's checks."""
    try:
        ItemMapper(model).normalize(entity, {name: value})
    except RuntimeClientError:
        return False
    return True


def _encoding(spec: Field, value: Any) -> str:
    return key_segments.encode(value, spec.kind, width=spec.width)


def _index_inputs(entity: ResolvedEntity, index: str) -> set[str]:
    key = entity.indexes[index]
    out = {f for _, t in key.written for f in t.fields} - {"shard"}
    return out | set(key.shard_by) | set(key.when_equals) | ({key.when_present} - {None})


def harms(old: Model, new: Model) -> list[str]:
    """Why stored items of ``old`` can become unwritable or unreadable under ``new`` (empty: they cannot)."""
    out = []
    for attr in ("pk_attribute", "sk_attribute", "entity_attribute"):
        if getattr(old, attr) != getattr(new, attr) and (attr != "sk_attribute" or old.has_sort_key):
            out.append(f"items carry {attr} {getattr(old, attr)!r}")
    for name, e in old.entities.items():
        n = new.entities.get(name)
        if n is None:
            out.append(f"{name} items no longer parse")
            continue
        if (e.pk, e.sk) != (n.pk, n.sk):
            out.append(f"{name} items sit under keys the new templates do not build")
        if e.version_attribute != n.version_attribute:
            out.append(f"{name} items carry their version in {e.version_attribute!r}")
        key_inputs = set(n.table_key_fields) | {f for i in n.indexes for f in _index_inputs(n, i)}
        for field, spec in n.fields.items():  # type: ignore[union-attr]
            before = e.fields.get(field)  # type: ignore[union-attr]
            if before is not None:  # what the old model let items hold
                values = [v for v in _stored_values(before) if _accepts(old, e, field, v)]
            else:
                values = _ATTRIBUTE_VALUES.get(e.attributes.get(field, ""), [])
            for value in values:
                if not _accepts(new, n, field, value):
                    out.append(f"{name}.{field} = {value!r:.20} is refused on write")
                elif before is not None and field in key_inputs and _encoding(before, value) != _encoding(spec, value):
                    out.append(f"{name}.{field} = {value!r:.20} gets a different key encoding")
        for index in new.indexes:
            had, has = e.indexes.get(index), n.indexes.get(index)  # type: ignore[union-attr]
            if had is None and has is None:
                continue
            if had is None or has is None or had != has:
                out.append(f"{name} items' keys in {index} are stale")
    return out


# The property -----------------------------------------------------------------------------------
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_the_diff_sees_every_fingerprint_change_and_never_calls_harm_safe(case: tuple[Model, Model, list[str]]) -> None:
    # GIVEN a base model and a randomly mutated one
    old, new, applied = case
    # WHEN they are diffed
    diff = diff_models(old, new)
    levels = {c.id: c.level for c in diff.changes}
    # THEN a changed fingerprint means at least one change, every one from a rule
    if fingerprint(old) != fingerprint(new):
        assert diff.changes, f"fingerprint changed by {applied} but the diff is empty"
    assert not [c for c in diff.changes if c.rule == "unclassified"], f"{applied}: {diff.render()}"
    # AND stored items that can become unwritable or unreadable are never a safe change
    reasons = harms(old, new)
    if reasons:
        assert any(level != SAFE for level in levels.values()), f"{applied}: {reasons} yet {levels}"


def test_the_reference_sees_the_team_enum_narrowing() -> None:
    # GIVEN the team model with kind GREEN dropped (the reference is only useful if it can see harm)
    data = team_model().to_dict()
    data["entities"][0]["fields"]["kind"]["choices"] = ["RED", "BLUE"]
    narrowed = Model.from_dict(data)
    # THEN the reference finds the GREEN teams unwritable, and a widening harmless
    assert harms(team_model(), narrowed) == ["Team.kind = 'GREEN' is refused on write"]
    assert harms(narrowed, team_model()) == []


# The same property per field, over random pairs of declarations -----------------------------------
@st.composite
def field_specs(draw: Any) -> Field:
    kind = draw(st.sampled_from(["string", "number", "timestamp", "date"]))
    if kind == "number":
        return Field("number", width=draw(st.integers(1, 12)))
    if kind != "string":
        return Field(kind)
    choices = draw(st.none() | st.lists(st.sampled_from(["A", "B", "GREEN", "xxxxxxxxxx"]), min_size=1, unique=True))
    return Field("string", choices=tuple(choices) if choices else None,
                 max_length=draw(st.none() | st.integers(1, 40)))


def _one_field(spec: Field, role: str) -> Model:
    pk = "T#{id}#{x}" if role == "table key" else "T#{id}"
    keys = {"GSI1": ("G#{x}", "{id}")} if role == "index key" else {}
    return Model("m", entities=[Entity("Thing", pk=pk, sk="T", fields={"id": "string", "x": spec}, indexes=keys)],
                 indexes=[Index("GSI1")] if keys else [])


@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(before=field_specs(), after=field_specs(), role=st.sampled_from(["free", "table key", "index key"]))
def test_each_field_change_is_never_safe_when_stored_values_are_refused_or_rekeyed(
    before: Field, after: Field, role: str
) -> None:
    # GIVEN a field declared as `before`, then as `after`, used by no key, the table key or a GSI key
    old, new = _one_field(before, role), _one_field(after, role)
    # WHEN the models are diffed
    diff = diff_models(old, new)
    # THEN a changed declaration is reported by a rule (choices are a set: their order is no change)
    assert bool(diff.changes) == (before.canonical() != after.canonical())
    assert not [c for c in diff.changes if c.rule == "unclassified"], diff.render()
    # AND if a value stored under `before` is refused, or keyed differently, under `after`, it is not safe
    reasons = harms(old, new)
    if reasons:
        assert any(c.level != SAFE for c in diff.changes), f"{reasons} yet {diff.render()}"
