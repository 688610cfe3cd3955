"""Model-based test of the diff classifier against an independent reference.

The reference is a catalog of model mutations, each stating the changes (id and level) and the
GSI steps it implies, written from the classification table alone. Hypothesis applies random
combinations of mutations to a base model; the classifier must report exactly the union of
their changes, plan exactly their GSI steps, and refuse synthesis exactly when one is breaking.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.evolution.diff import (
    BACKFILL,
    BREAKING,
    SAFE,
    BreakingChangeError,
    diff_models,
)
from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model

Spec = dict[str, Any]


def base() -> Spec:
    return {
        "entities": {
            "A": {"pk": "A#{id}", "sk": "A", "fields": {"id": "string", "owner": "string", "tag": "string"},
                  "indexes": {"GSI1": {"pk": "OWNER#{owner}", "sk": "{id}"}, "GSI2": {"pk": "TAG#{tag}", "sk": "{id}"}},
                  "version": None},
            "B": {"pk": "B#{id}", "sk": "B", "fields": {"id": "string", "owner": "string", "flag": "string"},
                  "indexes": {"GSI1": {"pk": "OWNER#{owner}", "sk": "B#{id}"}}, "version": None},
        },
        "indexes": {"GSI1": "ALL", "GSI2": "ALL"},
        "patterns": {"a by owner": ("A", "GSI1"), "a by tag": ("A", "GSI2")},
        "ttl": None,
    }


def build(spec: Spec) -> Model:
    entities = [
        Entity(name, pk=e["pk"], sk=e["sk"], fields=e["fields"], version_attribute=e["version"],
               indexes={i: IndexKey(pk=k["pk"], sk=k["sk"], when_present=k.get("when_present"))
                        for i, k in e["indexes"].items()})
        for name, e in spec["entities"].items()
    ]
    return Model("m", entities=entities,
                 indexes=[Index(n, projection=p) for n, p in spec["indexes"].items()],
                 access_patterns=[AccessPattern(n, entity=e, index=i) for n, (e, i) in spec["patterns"].items()],
                 ttl_attribute=spec["ttl"])


# The reference: mutation -> (apply, {change id: level}, GSI steps as (action, index)) --------------
Mutation = tuple[Callable[[Spec], None], dict[str, str], list[tuple[str, str]]]


def _add_gsi3(s: Spec) -> None:
    s["indexes"]["GSI3"] = "ALL"
    s["entities"]["B"]["indexes"]["GSI3"] = {"pk": "FLAG#{flag}", "sk": "{id}"}


def _remove_gsi2(s: Spec) -> None:
    del s["indexes"]["GSI2"]
    del s["entities"]["A"]["indexes"]["GSI2"]
    del s["patterns"]["a by tag"]


MUTATIONS: dict[str, Mutation] = {
    "add_entity": (lambda s: s["entities"].__setitem__("C", {"pk": "C#{id}", "sk": "C", "fields": {"id": "string"},
                                                             "indexes": {}, "version": None}),
                   {"entity-added:C": SAFE}, []),
    "add_field": (lambda s: s["entities"]["A"]["fields"].__setitem__("note", "string"),
                  {"field-added:A.note": SAFE}, []),
    "add_pattern": (lambda s: s["patterns"].__setitem__("b by owner", ("B", "GSI1")),
                    {"pattern-added:b by owner": SAFE}, []),
    "remove_pattern": (lambda s: s["patterns"].pop("a by owner"), {"pattern-removed:a by owner": SAFE}, []),
    "add_gsi3": (_add_gsi3, {"gsi-added:GSI3": SAFE, "index-key-added:B/GSI3": BACKFILL}, [("create", "GSI3")]),
    "a_gsi1_template": (lambda s: s["entities"]["A"]["indexes"]["GSI1"].__setitem__("sk", "A#{id}"),
                        {"index-template-changed:A/GSI1": BACKFILL}, []),
    "b_sparse": (lambda s: s["entities"]["B"]["indexes"]["GSI1"].__setitem__("when_present", "flag"),
                 {"sparse-rule-changed:B/GSI1": BACKFILL}, []),
    "b_table_key": (lambda s: s["entities"]["B"].__setitem__("pk", "BB#{id}"), {"table-key-template:B": BREAKING}, []),
    "ttl": (lambda s: s.__setitem__("ttl", "expires"), {"ttl-attribute:ttl_attribute": BREAKING}, []),
    "a_version": (lambda s: s["entities"]["A"].__setitem__("version", "v"), {"version-attribute:A": BREAKING}, []),
    "gsi2_projection": (lambda s: s["indexes"].__setitem__("GSI2", "KEYS_ONLY"), {"gsi-changed:GSI2": BREAKING},
                        [("delete", "GSI2"), ("create", "GSI2")]),  # steps only once acknowledged
    "gsi2_remove": (_remove_gsi2, {"gsi-removed:GSI2": BREAKING, "pattern-removed:a by tag": SAFE},
                    [("delete", "GSI2")]),
}
EXCLUSIVE = [{"gsi2_projection", "gsi2_remove"}]


@st.composite
def mutation_sets(draw: Any) -> list[str]:
    chosen = draw(st.sets(st.sampled_from(sorted(MUTATIONS))))
    for group in EXCLUSIVE:
        both = sorted(chosen & group)
        if len(both) > 1:
            chosen -= set(both[1:])
    return sorted(chosen)


@settings(max_examples=150, deadline=None)
@given(names=mutation_sets(), acknowledge_all=st.booleans())
def test_classifier_matches_the_reference(names: list[str], acknowledge_all: bool) -> None:
    # GIVEN the base model locked and a random combination of mutations
    spec = base()
    expected: dict[str, str] = {}
    for name in names:
        apply, changes, _ = MUTATIONS[name]
        apply(spec)
        expected.update(changes)
    old, new = build(base()), build(copy.deepcopy(spec))
    breaking = sorted(i for i, level in expected.items() if level == BREAKING)
    # WHEN the classifier diffs them (acknowledging every breaking change, or none)
    diff = diff_models(old, new, acknowledge=breaking if acknowledge_all else ())
    # THEN it reports exactly the reference's changes, each at the reference's level
    assert {c.id: c.level for c in diff.changes} == expected
    # AND plans exactly the reference's GSI steps, removals first
    want_steps = [step for name in names for step in MUTATIONS[name][2]
                  if name != "gsi2_projection" or acknowledge_all]
    got_steps = [(s.action, s.index.name) for s in diff.steps]
    assert sorted(got_steps) == sorted(want_steps)
    deletes = [i for i, (action, _) in enumerate(got_steps) if action == "delete"]
    creates = [i for i, (action, idx) in enumerate(got_steps) if action == "create" and idx != "GSI2"]
    assert not deletes or not creates or max(deletes) < min(creates)
    # AND the derived backfill pairs are exactly the backfill-level changes' subjects
    assert {f"{e}/{i}" for e, i in diff.backfill} == {
        i.split(":", 1)[1] for i, level in expected.items() if level == BACKFILL
    }
    # AND synthesis is refused exactly when a breaking change is left unacknowledged
    if breaking and not acknowledge_all:
        with pytest.raises(BreakingChangeError) as info:
            diff.check()
        assert all(i in str(info.value) for i in breaking)
    else:
        diff.check()
