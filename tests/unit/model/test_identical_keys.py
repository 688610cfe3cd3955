"""The identical-keys design warning (model/design_warnings.py) against the all-pairs loop it
replaces: on random entities overloading the table, GSIs with and without a sort key and an LSI,
the bucketed check warns about exactly the same pairs, with the same messages, in the same order;
and a model's warnings are computed once however often they are asked for."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import Entity, Field, Index, IndexKey, Model, design_warnings
from constructs_lib.model.exceptions import FrozenModelError
from constructs_lib.model.overlap import KeyCondition, domains, index_templates
from constructs_lib.model.resolve import resolve_entity, resolve_index
from constructs_lib.model.resolved import ResolvedEntity, ResolvedIndex
from constructs_lib.model.templates import KeyTemplate

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 3000 if SOAK else 300

LITERALS = ["A", "B", "EU", "1", "01", "2026"]
CHOICES = ["A", "EU", "1", "x%y"]
FIELD_NAMES = ("f", "g", "h")
BUCKETS = {"timestamp": ("year", "month", "day"), "date": ("year", "day")}


# The reference: the all-pairs loop as it was before the bucketing ---------------------------------
def reference_identical_keys(
    entities: Mapping[str, ResolvedEntity], indexes: Mapping[str, ResolvedIndex],
) -> list[tuple[str, str]]:
    out = []
    places: list[ResolvedIndex | None] = [None, *indexes.values()]
    for index in places:
        members = [(e, t) for e in entities.values() if (t := index_templates(e, index)) is not None]
        for i, (a, (a_pk, a_sk)) in enumerate(members):
            for b, (b_pk, b_sk) in members[i + 1:]:
                if not reference_may_be_identical(a, a_pk, a_sk, b, b_pk, b_sk):
                    continue
                where = f"{'table' if index is None else f'index {index.name!r}'}: entities {a.name!r} and {b.name!r}"
                keys = f"{a.name} {show(a_pk, a_sk)} and {b.name} {show(b_pk, b_sk)}"
                if index is None:
                    consequence = "a put of one overwrites the other's item"
                else:
                    consequence = ("an item of one and an item of the other may share one key there, so a read by "
                                   "that key finds both (the client filters on the entity attribute)")
                out.append((where, (
                    f"{where}: the keys {keys} can be identical for some values; {consequence}. Give each a distinct "
                    "literal in one segment, e.g. 'ORDER#{id}' vs 'REFUND#{id}'."
                )))
    return out


def reference_may_be_identical(
    a: ResolvedEntity, a_pk: KeyTemplate, a_sk: KeyTemplate | None,
    b: ResolvedEntity, b_pk: KeyTemplate, b_sk: KeyTemplate | None,
) -> bool:
    sk_a = None if a_sk is None else domains(a, a_sk, stored=True)
    sk_b = None if b_sk is None else domains(b, b_sk, stored=True)
    n = None if sk_a is None else len(sk_a)
    return KeyCondition(domains(a, a_pk, stored=True), sk_a, n or 1, n).admits(domains(b, b_pk, stored=True), sk_b)


def show(pk: KeyTemplate, sk: KeyTemplate | None) -> str:
    return repr(pk.source if sk is None else f"{pk.source} / {sk.source}")


# Random entities ------------------------------------------------------------------------------------
@st.composite
def field_specs(draw: Any) -> dict[str, Field]:
    out = {}
    for name in FIELD_NAMES:
        kind = draw(st.sampled_from(["string", "string", "enum", "number", "date", "timestamp"]))
        if kind == "enum":
            out[name] = Field.enum(*draw(st.lists(st.sampled_from(CHOICES), min_size=1, max_size=2, unique=True)))
        elif kind == "number":
            out[name] = Field.number(draw(st.integers(1, 2)))
        else:
            out[name] = Field(kind)  # type: ignore[arg-type]
    return out


@st.composite
def template(draw: Any, spec: dict[str, Field], pool: list[str]) -> str:
    """Often one of ``pool`` (templates other entities use: identical keys are likelier), else fresh."""
    if pool and draw(st.booleans()):
        return str(draw(st.sampled_from(pool)))
    segments = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            segments.append(draw(st.sampled_from(LITERALS)))
            continue
        name = draw(st.sampled_from(FIELD_NAMES))
        buckets = BUCKETS.get(spec[name].kind, ())
        bucket = draw(st.sampled_from((None, *buckets))) if buckets else None
        segments.append("{" + name + (f":{bucket}" if bucket else "") + "}")
    return "#".join(segments)


@st.composite
def places(draw: Any) -> tuple[dict[str, ResolvedEntity], dict[str, ResolvedIndex]]:
    """2-8 entities with random table keys (resolved without the model's table-overlap refusal, so
    table pairs warn too) and random keys in some of: a GSI with a sort key, one without, an LSI."""
    table_sk = draw(st.booleans())
    declared = [Index("GSI1"), Index("GSI2", sort_key=False), Index("LSI1", kind="LSI", sk_attribute="LSI1SK")]
    indexes = {i.name: resolve_index(i, "PK") for i in declared if table_sk or i.kind != "LSI"}
    pool: list[str] = []
    entities = {}
    for n in range(draw(st.integers(2, 8))):
        spec = draw(field_specs())
        pk, sk = draw(template(spec, pool)), draw(template(spec, pool)) if table_sk else None
        keys: dict[str, IndexKey] = {}
        for name in draw(st.lists(st.sampled_from(sorted(indexes)), unique=True)):
            index = indexes[name]
            key_pk = None if index.kind == "LSI" else draw(template(spec, pool))
            keys[name] = IndexKey(pk=key_pk, sk=draw(template(spec, pool)) if index.sort_key else None)
        pool += [t for t in (pk, sk, *(k.pk for k in keys.values()), *(k.sk for k in keys.values())) if t]
        entity = Entity(f"E{n}", pk=pk, sk=sk, fields={"id": "string", **spec}, indexes=keys)
        entities[entity.name] = resolve_entity(entity, indexes)
    return entities, indexes


# Properties ---------------------------------------------------------------------------------------------
def test_the_bucketed_check_warns_exactly_as_the_all_pairs_loop() -> None:
    seen = {"examples": 0, "warned pairs": 0, "checked pairs": 0, "all pairs": 0}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not SOAK, suppress_health_check=[HealthCheck.too_slow])
    @given(case=places())
    def check(case: tuple[dict[str, ResolvedEntity], dict[str, ResolvedIndex]]) -> None:
        # GIVEN random entities overloading the table and the indexes
        entities, indexes = case
        # WHEN the warning is computed by buckets and by the all-pairs loop
        found = design_warnings._identical_keys(entities, indexes)
        expected = reference_identical_keys(entities, indexes)
        # THEN the pairs, their messages and their order are the same
        assert found == expected
        seen["examples"] += 1
        seen["warned pairs"] += len(expected)
        for index in [None, *indexes.values()]:
            keys = [t for e in entities.values() if (t := index_templates(e, index)) is not None]
            seen["checked pairs"] += len(design_warnings.candidate_pairs(keys))
            seen["all pairs"] += len(keys) * (len(keys) - 1) // 2

    check()
    # AND the cases are not vacuous: pairs are warned about, and the buckets leave pairs unchecked
    assert seen["warned pairs"] >= seen["examples"] and seen["checked pairs"] <= 0.8 * seen["all pairs"], seen
    print(f"identical keys, buckets vs all pairs: {seen}")


# Examples ----------------------------------------------------------------------------------------------
def model_of(n: int) -> Model:
    return Model("m", entities=[
        Entity(f"E{i}", pk=f"E{i}#{{id}}", sk="META", fields={"id": "string", "owner": "string"},
               indexes={"GSI": IndexKey(pk="OWNER#{owner}", sk=f"E{i}#{{id}}" if i % 2 else "{id}")})
        for i in range(n)
    ], indexes=[Index("GSI")])


def test_a_models_warnings_are_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a model whose GSI keys of E0 and E2 may be identical ('OWNER#{owner}' / '{id}' both)
    model = model_of(3)
    calls = []
    original = design_warnings._identical_keys

    def counted(*args: Any) -> list[tuple[str, str]]:
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(design_warnings, "_identical_keys", counted)
    # WHEN its warnings are asked for twice (SingleTable's annotations and the model docs)
    first = model.warnings()
    first.clear()  # a caller's list is its own
    second = model.warnings()
    # THEN the pairwise check ran once, and both answers hold the warning
    assert len(calls) == 1
    assert [(w.code, w.where) for w in second] == [("IdenticalIndexKeys", "index 'GSI': entities 'E0' and 'E2'")]


def test_a_model_cannot_be_given_other_entities_after_its_warnings_were_kept() -> None:
    # GIVEN a model whose warnings were computed and kept
    model, other = model_of(2), model_of(3)
    assert model.warnings() == []
    # WHEN it is given another model's entities / THEN it refuses (a validated model is read-only)
    with pytest.raises(FrozenModelError):
        model.entities = other.entities
    # AND its warnings are still those of its own entities
    assert model.warnings() == [] and [w.where for w in other.warnings()] == ["index 'GSI': entities 'E0' and 'E2'"]
