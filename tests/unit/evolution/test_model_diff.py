"""Model lock and diff: classification of each change, GSI rollout plans, key-length pre-flight."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.evolution.diff import (
    BACKFILL,
    BREAKING,
    SAFE,
    BreakingChangeError,
    apply_step,
    diff_models,
    plan_gsi_steps,
    synthesized_gsis,
)
from constructs_lib.evolution.lock import ModelLock, TableLock
from constructs_lib.evolution.preflight import key_length_findings, key_lengths
from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.model.exceptions import ModelFormatError, ModelValidationError
from examples.evolution.model import model_v1, model_v2


def levels(diff):
    return {c.id: c.level for c in diff.changes}


def test_v1_to_v2_classifies_every_change():
    # GIVEN the store model v1 (locked) and v2 (two new GSIs, one changed GSI template)
    diff = diff_models(model_v1(), model_v2())
    # THEN every change has its level
    assert levels(diff) == {
        "gsi-added:GSI2": SAFE,
        "gsi-added:GSI3": SAFE,
        "field-added:Customer.name": SAFE,
        "field-added:Order.sku": SAFE,
        "entity-added:Invoice": SAFE,
        "pattern-added:open orders by sku": SAFE,
        "pattern-added:customers by name": SAFE,
        "pattern-added:invoice by id": SAFE,
        "index-key-added:Customer/GSI3": BACKFILL,
        "index-template-changed:Order/GSI1": BACKFILL,
        "index-key-added:Order/GSI2": BACKFILL,
    }
    assert set(diff.backfill) == {("Customer", "GSI3"), ("Order", "GSI1"), ("Order", "GSI2")}
    # AND the rollout creates one GSI per step
    assert [(s.action, s.index.name) for s in diff.steps] == [("create", "GSI2"), ("create", "GSI3")]
    assert not diff.unacknowledged
    assert "step 2: create GSI 'GSI3'" in diff.render()


def _base(**entity_kw):
    kw = {"name": "Thing", "pk": "THING#{id}", "sk": "T", "fields": {"id": "string", "owner": "string"},
          "indexes": {"GSI1": IndexKey(pk="OWNER#{owner}", sk="{id}")}, "version_attribute": "v"}
    kw.update(entity_kw)
    return Entity(**kw)


def _model(entity=None, *, indexes=None, patterns=None, **model_kw):
    return Model("m", entities=[entity or _base()], indexes=indexes or [Index("GSI1")],
                 access_patterns=patterns if patterns is not None else
                 [AccessPattern("by owner", entity="Thing", index="GSI1")], **model_kw)


@pytest.mark.parametrize("change, expected_id", [
    (lambda: _model(_base(pk="ITEM#{id}")), "table-key-template:Thing"),
    (lambda: _model(ttl_attribute="expires"), "ttl-attribute:ttl_attribute"),
    (lambda: _model(entity_attribute="kind"), "table-attribute:entity_attribute"),
    (lambda: _model(_base(version_attribute="rev")), "version-attribute:Thing"),
    (lambda: _model(_base(fields={"id": "number:8", "owner": "string"})), "field-kind:Thing.id"),
    (lambda: _model(indexes=[Index("GSI1", projection="KEYS_ONLY")]), "gsi-changed:GSI1"),
    (lambda: Model("m", entities=[_base(indexes={"LSI1": IndexKey(sk="{owner}")})], indexes=[Index("LSI1", kind="LSI")]),
     "lsi-added:LSI1"),
])
def test_breaking_changes_fail_check_naming_the_change(change, expected_id):
    # GIVEN a locked model and a breaking change
    diff = diff_models(_model(), change())
    # THEN the change is breaking and check() names it and the way out
    assert levels(diff)[expected_id] == BREAKING
    with pytest.raises(BreakingChangeError, match=expected_id.replace("(", r"\(")):
        diff.check()
    # AND acknowledging every breaking id lets it pass
    dataclasses.replace(diff, acknowledged=frozenset(c.id for c in diff.changes)).check()


def test_removed_gsi_is_breaking_only_while_a_pattern_used_it():
    old = Model("m", entities=[_base(indexes={"GSI1": IndexKey(pk="OWNER#{owner}", sk="{id}"),
                                              "GSI2": IndexKey(pk="X#{owner}", sk="{id}")})],
                indexes=[Index("GSI1"), Index("GSI2")],
                access_patterns=[AccessPattern("by x", entity="Thing", index="GSI2")])
    new = _model(patterns=[])
    assert levels(diff_models(old, new))["gsi-removed:GSI2"] == BREAKING
    old_unused = Model("m", entities=old.entities.values(), indexes=[Index("GSI1"), Index("GSI2")])
    diff = diff_models(old_unused, new)
    assert levels(diff)["gsi-removed:GSI2"] == SAFE
    assert [(s.action, s.index.name) for s in diff.steps] == [("delete", "GSI2")]


def test_sparse_rule_and_index_key_removal_need_backfill():
    old = _model(_base(indexes={"GSI1": IndexKey(pk="OWNER#{owner}", sk="{id}")}), patterns=[])
    sparse = _model(_base(indexes={"GSI1": IndexKey(pk="OWNER#{owner}", sk="{id}", when_present="flag")}), patterns=[])
    assert levels(diff_models(old, sparse))["sparse-rule-changed:Thing/GSI1"] == BACKFILL
    two = Model("m", entities=[_base(), Entity("Other", pk="O#{id}", sk="O", fields=["id"],
                                               indexes={"GSI1": ("X#{id}", "{id}")})], indexes=[Index("GSI1")])
    dropped = Model("m", entities=[_base(indexes={}), Entity("Other", pk="O#{id}", sk="O", fields=["id"],
                                                             indexes={"GSI1": ("X#{id}", "{id}")})],
                    indexes=[Index("GSI1")])
    diff = diff_models(two, dropped)
    assert levels(diff)["index-key-removed:Thing/GSI1"] == BACKFILL
    assert ("Thing", "GSI1") in diff.backfill


def test_acknowledged_gsi_change_is_a_delete_then_create():
    new = _model(indexes=[Index("GSI1", projection="KEYS_ONLY")])
    diff = diff_models(_model(), new, acknowledge=["gsi-changed:GSI1"])
    assert not diff.unacknowledged
    assert [(s.action, s.index.name) for s in diff.steps] == [("delete", "GSI1"), ("create", "GSI1")]
    # Unacknowledged, the deployed GSI stays as it is (no step).
    assert diff_models(_model(), new).steps == ()


def test_lock_round_trip_and_advance_one_step_at_a_time():
    lock = ModelLock({"App/Data": TableLock.of(model_v1())})
    again = ModelLock.from_json(lock.to_json())
    assert again.tables["App/Data"].model == model_v1()
    table = again.tables["App/Data"]
    table, what = table.advance(model_v2())
    assert "step 1 of 2" in what and table.model == model_v1()
    assert [i.name for i in table.indexes] == ["GSI1", "GSI2"]
    table, what = table.advance(model_v2())
    assert "last step" in what and table.model == model_v2()
    assert table.diff(model_v2()).empty


def test_lock_refuses_foreign_documents():
    with pytest.raises(ModelFormatError, match="not a constructs_lib.lock"):
        ModelLock.from_json('{"format": "other"}')
    with pytest.raises(ModelFormatError, match="version 99"):
        ModelLock.from_json('{"format": "constructs_lib.lock", "version": 99, "tables": {}}')


# Rollout plans: a property over random deployed/target GSI sets ---------------------------------
_names = st.sets(st.sampled_from(["GS1", "GS2", "GS3", "GS4", "GS5", "GS6"]), max_size=6)


@settings(max_examples=200, deadline=None)
@given(deployed=_names, target=_names, reshaped=_names)
def test_every_plan_step_changes_exactly_one_gsi_and_ends_at_the_target(deployed, target, reshaped):
    # GIVEN deployed GSIs and a target where some kept GSIs change projection (acknowledged)
    now = [Index(n) for n in sorted(deployed)]
    want = [Index(n, projection="KEYS_ONLY" if n in reshaped and n in deployed else "ALL") for n in sorted(target)]
    steps = plan_gsi_steps(now, want, replace=reshaped)
    current = now
    for step in steps:
        # WHEN each step's template is synthesized from the current deployment
        template = synthesized_gsis(current, want, plan_gsi_steps(current, want, replace=reshaped))
        before = {(i.name, i.projection) for i in current}
        after = {(i.name, i.projection) for i in template}
        # THEN it adds or removes exactly one GSI against what is deployed
        assert len({n for n, _ in before} ^ {n for n, _ in after}) == 1
        current = list(apply_step(current, step))
    # AND the last deployment equals the target
    assert {(i.name, i.projection) for i in current} == {(i.name, i.projection) for i in want}
    assert synthesized_gsis(current, want, plan_gsi_steps(current, want, replace=reshaped)) == want


# Key-length pre-flight -----------------------------------------------------------------------------
def test_key_lengths_bound_declared_fields():
    lengths = {(k.entity, k.key): k for k in key_lengths(model_v2())}
    order_sk = lengths[("Order", "sk")]
    assert order_sk.worst == len("ORDER") + 2 + 27 + 4 * 64
    assert lengths[("Customer", "GSI3 pk")].worst == len("NAME#") + 4 * 200
    assert key_length_findings(model_v2()) == []


def test_preflight_warns_when_max_length_allows_oversized_keys_and_refuses_impossible_ones():
    long = Model("m", entities=[Entity("Doc", pk="DOC#{title}", sk="D", fields={"title": Field.string(max_length=600)})])
    [finding] = key_length_findings(long)
    assert finding.level == "warning" and "2404 bytes" in finding.message
    impossible = Model("m", entities=[Entity("Doc", pk="DOC#{id}", sk="S#{a}#{b}",
                                             fields={"id": "string", "a": "number:38", "b": Field.string()})])
    lits = Model("m", entities=[Entity("Doc", pk="DOC#{id}", sk="X" * 1030, fields={"id": "string"})])
    assert key_length_findings(impossible) == []  # unbounded string: no claim
    [err] = key_length_findings(lits)
    assert err.level == "error" and "no item can be written" in err.message


def test_max_length_is_validated_and_enforced_on_write():
    with pytest.raises(ModelValidationError, match="max_length 0"):
        Field.string(max_length=0)
    with pytest.raises(ModelValidationError, match="max_length"):
        Field("number", width=4, max_length=3)
    from constructs_lib.runtime.exceptions import ItemValidationError
    from constructs_lib.runtime.items import ItemMapper

    model = model_v2()
    mapper = ItemMapper(model)
    with pytest.raises(ItemValidationError, match="max_length 40"):
        mapper.build_item(model.entity("Order"), {"customer_id": "c", "order_id": "o", "status": "PAID",
                                                 "created_at": "2024-01-01T00:00:00Z", "sku": "x" * 41})
    assert Model.from_json(model.to_json()) == model
