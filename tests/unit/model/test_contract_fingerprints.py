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

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_specs import KINDS, PROJECTIONS, Spec, build_tables, table_specs

from constructs_lib.model import AccessPattern, Model
from constructs_lib.model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 1000 if SOAK else 100



def build(spec: Spec) -> Model:
    """The model ``spec`` describes (random_specs), with a GetItem pattern per entity listed."""
    entities, indexes = build_tables(spec)
    patterns = [AccessPattern(f"get {entity} {n}", entity, sk="=") for n, entity in enumerate(spec["patterns"])]
    return Model("m", entities=entities, indexes=indexes, access_patterns=patterns)


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    spec = draw(table_specs())
    spec["patterns"] = draw(st.lists(st.sampled_from(list(spec["entities"])), max_size=3))
    return spec


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
