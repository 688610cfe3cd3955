"""check_slice against brute force: random models, random consumer scopes, random producer changes.

The reference compares the key-relevant parts of the two models' ``to_dict()`` directly — for
each entity of the slice its templates, index rules, key fields and the indexes it writes; for
each index of the slice its definition and every writer's rule and key fields; for each entity
whose items the consumer stores or reads whole, its other declared fields, required attributes
and the TTL attribute — and says the slice holds iff none of them changed and none disappeared. ``CONSTRUCTS_LIB_SOAK=1`` runs ten
times the examples.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_specs import KINDS, PROJECTIONS, Spec, build_tables, table_specs

from constructs_lib.model import AccessPattern, AccessScope, Model
from constructs_lib.model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints
from constructs_lib.model.slices import PublishedFingerprints, check_slice, slice_of, stored_names, used_names

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 1000 if SOAK else 100
KEY_FIELDS = ("id", "at", "grp", "flag", "other")
MUTATIONS = ("entity", "index", "pattern", "field", "template", "gsi_template", "kind", "sparse", "projection",
             "remove_entity", "remove_index", "none")


def build(spec: Spec) -> Model:
    """The model ``spec`` describes (random_specs), with its patterns: (entity, index) pairs."""
    entities, indexes = build_tables(spec)
    patterns = []
    for n, (entity, index) in enumerate(spec["patterns"]):
        if index != "table" and index not in spec["entities"][entity]["indexes"]:
            continue
        patterns.append(AccessPattern(f"p{n} {entity} {index}", entity, index=index,
                                      sk=None if index != "table" else "="))
    return Model("m", entities=entities, indexes=indexes, access_patterns=patterns)


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    spec = draw(table_specs())
    names, gsis = list(spec["entities"]), list(spec["indexes"])
    spec["patterns"] = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(["table", *gsis])), max_size=4))
    return spec


def mutate(spec: Spec, change: str, data: st.DataObject) -> Spec | None:
    """The producer's next model (None when the change does not apply to ``spec``)."""
    new = copy.deepcopy(spec)
    name = data.draw(st.sampled_from(sorted(spec["entities"])))
    entity = new["entities"][name]
    if change in ("entity", "index"):
        new["entities"]["New"] = {"kind": "string", "extra": [], "indexes": {}}
        if change == "index":
            new["indexes"]["GSINew"] = data.draw(st.sampled_from(PROJECTIONS))
            new["entities"]["New"]["indexes"]["GSINew"] = None
            new["patterns"].append(("New", "GSINew"))
    elif change == "pattern":
        new["patterns"].append((name, "table"))
    elif change == "field":
        entity["extra"].append("added")
    elif change == "template":
        entity["sk"] = f"{name}#V2#{{at}}"
    elif change == "gsi_template":
        if not entity["indexes"]:
            return None
        entity["gsi_pk"] = f"{name}#G2#{{grp}}"
    elif change == "kind":
        entity["kind"] = data.draw(st.sampled_from([k for k in KINDS if k != entity["kind"]]))
    elif change == "sparse":
        if not entity["indexes"]:
            return None
        g = data.draw(st.sampled_from(sorted(entity["indexes"])))
        entity["indexes"][g] = "other" if entity["indexes"][g] else "flag"
    elif change == "projection":
        if not spec["indexes"]:
            return None
        g = data.draw(st.sampled_from(sorted(spec["indexes"])))
        new["indexes"][g] = data.draw(st.sampled_from([p for p in PROJECTIONS if p != spec["indexes"][g]]))
    elif change == "remove_entity":
        # (not the only writer of an index: a model refuses an index no entity writes)
        alone = [g for g in entity["indexes"]
                 if not any(g in other["indexes"] for w, other in spec["entities"].items() if w != name)]
        if len(spec["entities"]) < 2 or alone:
            return None
        del new["entities"][name]
        new["patterns"] = [p for p in new["patterns"] if p[0] != name]
    elif change == "remove_index":
        if not spec["indexes"]:
            return None
        g = sorted(spec["indexes"])[0]
        del new["indexes"][g]
        for e in new["entities"].values():
            e["indexes"].pop(g, None)
        new["patterns"] = [p for p in new["patterns"] if p[1] != g]
    return new


# The reference: key-relevant parts of to_dict(), compared directly -------------------------------
def _entity_part(data: dict[str, Any], name: str) -> Any:
    entity = next((e for e in data["entities"] if e["name"] == name), None)
    if entity is None:
        return None
    indexes = {i["name"]: i for i in data["indexes"]}
    return {"pk": entity["pk"], "sk": entity["sk"], "indexes": entity.get("indexes"),
            "key_fields": {f: v for f, v in (entity.get("fields") or {}).items() if f in KEY_FIELDS},
            # what a writer puts into an index: its key attributes (not its projection)
            "writes_into": {g: (indexes[g]["kind"], indexes[g]["pk_attribute"], indexes[g]["sk_attribute"])
                            for g in entity.get("indexes") or {}},
            "version": entity.get("version_attribute")}


def _index_part(data: dict[str, Any], name: str) -> Any:
    index = next((i for i in data["indexes"] if i["name"] == name), None)
    if index is None:
        return None
    writers = {e["name"]: {"rule": e["indexes"][name],
                           "key_fields": {f: v for f, v in e["fields"].items() if f in KEY_FIELDS}}
               for e in data["entities"] if name in (e.get("indexes") or {})}
    return {"index": index, "writers": writers}


def _stored_part(data: dict[str, Any], name: str) -> Any:
    entity = next((e for e in data["entities"] if e["name"] == name), None)
    if entity is None:
        return None
    return {"ttl": data["ttl_attribute"], "required": sorted(entity["required"]),
            "other_fields": {f: v for f, v in (entity.get("fields") or {}).items() if f not in KEY_FIELDS}}


def reference_holds(old: Model, new: Model, scope: AccessScope | None) -> bool:
    entities, indexes = used_names(old, scope)
    a, b = old.to_dict(), new.to_dict()
    return all(_entity_part(b, e) is not None and _entity_part(a, e) == _entity_part(b, e) for e in entities) and all(
        _index_part(b, i) is not None and _index_part(a, i) == _index_part(b, i) for i in indexes) and all(
        _stored_part(b, e) is None or _stored_part(a, e) == _stored_part(b, e) for e in stored_names(old, scope))


def published(model: Model) -> PublishedFingerprints:
    return PublishedFingerprints(model.name, fingerprint(model), entity_fingerprints(model),
                                 index_fingerprints(model), model.to_dict())


@st.composite
def scopes(draw: st.DrawFn, model: Model) -> AccessScope | None:
    patterns = draw(st.lists(st.sampled_from(sorted(model.resolved_patterns)), unique=True)) if (
        model.resolved_patterns) else []
    writes = draw(st.lists(st.sampled_from(sorted(model.entities)), unique=True, max_size=2))
    if not patterns and not writes:
        return None  # no declared scope: the whole model
    return AccessScope(patterns=patterns, writes={e: ["put"] for e in writes}).validate(model)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs(), change=st.sampled_from(MUTATIONS), data=st.data())
def test_a_slice_holds_iff_nothing_it_uses_changed_its_keys(spec: Spec, change: str, data: st.DataObject) -> None:
    # GIVEN a producer's model, a consumer function's scope over it, and the producer's next model
    old = build(spec)
    scope = data.draw(scopes(old))
    grown = mutate(spec, change, data)
    if grown is None:
        return
    new = build(grown)
    # WHEN the function's slice is checked against the new contract
    breaks = check_slice(slice_of(old, scope), published(new), model=old)
    # THEN it holds exactly when the reference finds no used entity or index changed or gone
    assert (breaks == []) == reference_holds(old, new, scope), (change, scope, [b.describe() for b in breaks])
    # AND every break names an entity or index the slice uses, and what changed when it still exists
    entities, indexes = used_names(old, scope)
    for found in breaks:
        assert found.name in {"entity": entities, "index": indexes, "stored": stored_names(old, scope)}[found.kind]
        assert found.new is None or found.changes, found
    # AND an additive change never breaks a slice; a declared field breaks only those storing or
    # reading whole items of its entity (its stored form)
    if change in ("entity", "index", "pattern", "none"):
        assert breaks == []
    if change == "field":
        assert all(b.kind == "stored" for b in breaks), breaks
