"""Per-entity and per-index fingerprints (constructs_lib.model.fingerprints), by property.

Additive changes — a new entity, a new index (with the new entity writing into it), a new access
pattern, a new non-key field — leave every existing entity's and index's fingerprint as it was.
Key-affecting changes — a key template, a key field's kind, a sparse rule, an index projection —
change exactly the fingerprints of the entities and indexes they touch. ``CONSTRUCTS_LIB_SOAK=1``
runs ten times the examples.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 1000 if SOAK else 100
KINDS = ("string", "number", "timestamp", "date")
PROJECTIONS: tuple[Any, ...] = ("ALL", "KEYS_ONLY", ("note",))

#: A model as plain data: {"entities": {name: {"kind": at's kind, "extra": [fields],
#: "indexes": {index: when_present or None}}}, "indexes": {name: projection}, "patterns": [entity]}.
Spec = dict[str, Any]


def build(spec: Spec) -> Model:
    """The model ``spec`` describes: entity ``E`` has pk ``E#{id}``, sk ``E#{at}`` and, per index
    ``G``, keys ``E#{grp}`` / ``E#{at}`` (sparse on ``flag`` when the rule says so)."""
    entities = []
    for name, e in spec["entities"].items():
        fields = {"id": Field(), "at": Field(e["kind"], width=12 if e["kind"] == "number" else None), "grp": Field(), **{f: Field() for f in e["extra"]}}
        indexes = {g: IndexKey(pk=f"{name}#{{grp}}", sk=f"{name}#{{at}}", when_present=rule)
                   for g, rule in e["indexes"].items()}
        entities.append(Entity(name, pk=f"{name}#{{id}}", sk=e.get("sk", f"{name}#{{at}}"), fields=fields,
                               indexes=indexes))
    indexes = [Index(g, projection=p) for g, p in spec["indexes"].items()]
    patterns = [AccessPattern(f"get {entity} {n}", entity, sk="=") for n, entity in enumerate(spec["patterns"])]
    return Model("m", entities=entities, indexes=indexes, access_patterns=patterns)


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    names = [f"E{n}" for n in range(draw(st.integers(1, 3)))]
    gsis = [f"GSI{n}" for n in range(draw(st.integers(0, 3)))]
    entities: dict[str, Any] = {
        name: {"kind": draw(st.sampled_from(KINDS)), "extra": draw(st.lists(st.sampled_from(["a", "b"]), unique=True)),
               "indexes": {}} for name in names
    }
    for n, g in enumerate(gsis):  # every index has a writer, maybe more
        writers = {names[n % len(names)]} | set(draw(st.lists(st.sampled_from(names), unique=True)))
        for writer in writers:
            entities[writer]["indexes"][g] = draw(st.sampled_from([None, "flag"]))
    return {
        "entities": entities, "indexes": {g: draw(st.sampled_from(PROJECTIONS)) for g in gsis},
        "patterns": draw(st.lists(st.sampled_from(names), max_size=3)),
    }


def prints(model: Model) -> tuple[dict[str, str], dict[str, str]]:
    return entity_fingerprints(model), index_fingerprints(model)


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before if after.get(name) != before[name]}


PROPERTY = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(spec=specs(), change=st.sampled_from(["entity", "index", "pattern", "field"]), data=st.data())
def test_additive_changes_leave_every_existing_fingerprint_unchanged(spec: Spec, change: str, data: st.DataObject) -> None:
    # GIVEN a model and an additive change to it
    before = build(spec)
    grown = copy.deepcopy(spec)
    name = data.draw(st.sampled_from(sorted(spec["entities"])))
    if change in ("entity", "index"):
        grown["entities"]["New"] = {"kind": "string", "extra": [], "indexes": {}}
        if change == "index":
            grown["indexes"]["GSINew"] = data.draw(st.sampled_from(PROJECTIONS))
            grown["entities"]["New"]["indexes"]["GSINew"] = None
    elif change == "pattern":
        grown["patterns"].append(name)
    else:
        grown["entities"][name]["extra"].append("added")
    after = build(grown)
    # WHEN the fingerprints of both are computed
    (entities_before, indexes_before), (entities_after, indexes_after) = prints(before), prints(after)
    # THEN no existing entity's or index's fingerprint moved (the whole-model one may)
    assert changed(entities_before, entities_after) == set(), change
    assert changed(indexes_before, indexes_after) == set(), change
    if change in ("entity", "index", "field"):
        assert fingerprint(before) != fingerprint(after)


@PROPERTY
@given(spec=specs(), change=st.sampled_from(["template", "kind", "sparse", "projection"]), data=st.data())
def test_key_changes_move_exactly_the_fingerprints_they_touch(spec: Spec, change: str, data: st.DataObject) -> None:
    # GIVEN a model and a change to the keys of one entity or index
    before = build(spec)
    edited = copy.deepcopy(spec)
    name = data.draw(st.sampled_from(sorted(spec["entities"])))
    entity = edited["entities"][name]
    touched_indexes: set[str] = set()
    touched_entities = {name}
    if change == "template":
        entity["sk"] = f"{name}#V2#{{at}}"  # the table sort key only
    elif change == "kind":
        entity["kind"] = data.draw(st.sampled_from([k for k in KINDS if k != entity["kind"]]))
        touched_indexes = set(entity["indexes"])  # {at} is in its index sort keys too
    elif change == "sparse":
        if not entity["indexes"]:
            return  # nothing sparse to change on this entity
        g = data.draw(st.sampled_from(sorted(entity["indexes"])))
        entity["indexes"][g] = "other" if entity["indexes"][g] else "flag"
        touched_indexes = {g}
    else:
        if not spec["indexes"]:
            return
        g = data.draw(st.sampled_from(sorted(spec["indexes"])))
        edited["indexes"][g] = data.draw(st.sampled_from([p for p in PROJECTIONS if p != spec["indexes"][g]]))
        touched_indexes, touched_entities = {g}, set()
    after = build(edited)
    # WHEN the fingerprints of both are computed
    (entities_before, indexes_before), (entities_after, indexes_after) = prints(before), prints(after)
    # THEN exactly the touched entities and indexes have new fingerprints
    assert changed(entities_before, entities_after) == touched_entities, change
    assert changed(indexes_before, indexes_after) == touched_indexes, change
    assert fingerprint(before) != fingerprint(after)
