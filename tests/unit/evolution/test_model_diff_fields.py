"""Model diff of declared fields: enum choices, kinds, widths, max_length, removals, attributes —
and the catch-all that reports any other difference in the fingerprint's input."""

from __future__ import annotations

import pytest

from constructs_lib.evolution.diff import BACKFILL, BREAKING, SAFE, BreakingChangeError, diff_models
from constructs_lib.evolution.lock import TableLock
from constructs_lib.model import Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.exceptions import ItemValidationError
from constructs_lib.runtime.items import ItemMapper


def levels(diff):
    return {c.id: c.level for c in diff.changes}


def team_model(*kinds: str) -> Model:
    return Model("league", entities=[Entity(
        "Team", pk="TEAM#{kind}#{team_id}", sk="TEAM",
        fields={"kind": Field.enum(*kinds), "team_id": "string"},
    )])


def test_narrowing_an_enum_that_builds_the_table_key_is_breaking():
    # GIVEN a locked model whose table key is TEAM#{kind}#{team_id}, kind RED/BLUE/GREEN
    old, new = team_model("RED", "BLUE", "GREEN"), team_model("RED", "BLUE")
    # AND the narrowing makes a stored GREEN team unwritable under the new model
    ItemMapper(old).build_item(old.entity("Team"), {"kind": "GREEN", "team_id": "t1"})
    with pytest.raises(ItemValidationError, match="GREEN"):
        ItemMapper(new).build_item(new.entity("Team"), {"kind": "GREEN", "team_id": "t1"})
    assert fingerprint(old) != fingerprint(new)
    # WHEN the models are diffed (as the lock does)
    diff = TableLock.of(old).diff(new)
    # THEN the narrowing is one breaking change naming the field and the removed choice
    assert levels(diff) == {"field-choices:Team.kind": BREAKING}
    [change] = diff.changes
    assert "Team.kind" in change.message and "['GREEN']" in change.message
    assert "table key" in change.message
    assert not diff.empty and "no model changes" not in diff.render()
    # AND synthesis (and `lock --advance`) refuses it until acknowledged
    with pytest.raises(BreakingChangeError, match=r"field-choices:Team\.kind"):
        diff.check()
    TableLock.of(old).diff(new, acknowledge=["field-choices:Team.kind"]).check()


def test_widening_an_enum_is_safe():
    # GIVEN kind RED/BLUE locked WHEN GREEN is added, or the restriction dropped
    widened = diff_models(team_model("RED", "BLUE"), team_model("RED", "BLUE", "GREEN"))
    dropped = diff_models(team_model("RED", "BLUE"), Model("league", entities=[Entity(
        "Team", pk="TEAM#{kind}#{team_id}", sk="TEAM", fields={"kind": "string", "team_id": "string"})]))
    # THEN each is one safe change
    assert levels(widened) == {"field-choices:Team.kind": SAFE}
    assert levels(dropped) == {"field-choices:Team.kind": SAFE}
    assert "GREEN" in widened.changes[0].message


def _thing(fields, *, gsi=False, attributes=None):
    keys = {"GSI1": IndexKey(pk="BY#{g}", sk="{id}")} if gsi else {}
    return Model("m", entities=[Entity("Thing", pk="T#{id}", sk="T", fields={"id": "string", **fields},
                                       indexes=keys, attributes=attributes or {})],
                 indexes=[Index("GSI1")] if gsi else [])


@pytest.mark.parametrize("before, after, expected", [
    # a free field (no key uses it): the level follows what stored values the new field refuses
    ({"x": "string"}, {"x": Field.enum("A")}, {"field-choices:Thing.x": BREAKING}),
    ({"x": Field.enum("A", "B")}, {"x": Field.enum("A")}, {"field-choices:Thing.x": BREAKING}),
    ({"x": Field.string(max_length=10)}, {"x": Field.string(max_length=5)}, {"field-max-length:Thing.x": BREAKING}),
    ({"x": "string"}, {"x": Field.string(max_length=5)}, {"field-max-length:Thing.x": BREAKING}),
    ({"x": Field.string(max_length=5)}, {"x": Field.string(max_length=9)}, {"field-max-length:Thing.x": SAFE}),
    ({"x": Field.string(max_length=5)}, {"x": "string"}, {"field-max-length:Thing.x": SAFE}),
    ({"x": "number:4"}, {"x": "number:6"}, {"field-kind:Thing.x": SAFE}),
    ({"x": "number:6"}, {"x": "number:4"}, {"field-kind:Thing.x": BREAKING}),
    ({"x": "string"}, {"x": "number:4"}, {"field-kind:Thing.x": BREAKING}),
    ({"x": "number:4"}, {"x": "string"}, {"field-kind:Thing.x": BREAKING}),
    ({"x": "timestamp"}, {"x": "string"}, {"field-kind:Thing.x": SAFE}),
    ({"x": "date"}, {"x": "string"}, {"field-kind:Thing.x": SAFE}),
    ({"x": "date"}, {"x": "timestamp"}, {"field-kind:Thing.x": BREAKING}),
    ({"x": "string"}, {}, {"field-removed:Thing.x": SAFE}),
    ({}, {"x": "number:4"}, {"field-added:Thing.x": SAFE}),
])
def test_free_field_changes_are_classified_by_the_values_stored_items_may_hold(before, after, expected):
    # WHEN a field no key uses changes its declaration
    diff = diff_models(_thing(before), _thing(after))
    # THEN exactly the expected change is reported at its level
    assert levels(diff) == expected


@pytest.mark.parametrize("before, after, expected, rekeyed", [
    # a GSI input: a re-encoded key needs a backfill, a refused stored value is breaking
    ("number:4", "number:6", BACKFILL, True),
    ("number:6", "number:4", BREAKING, True),
    ("timestamp", "string", BACKFILL, True),
    (Field.enum("A", "B"), Field.enum("A", "B", "C"), SAFE, False),
])
def test_gsi_input_changes(before, after, expected, rekeyed):
    # WHEN a field a GSI key is built from changes its declaration
    diff = diff_models(_thing({"g": before}, gsi=True), _thing({"g": after}, gsi=True))
    # THEN its one change has the expected level, and a re-encoded key asks for a backfill of the GSI
    assert list(levels(diff).values()) == [expected]
    assert (("Thing", "GSI1") in diff.backfill) == rekeyed


def test_a_declared_attribute_becoming_a_field_is_judged_by_its_stored_values():
    # GIVEN an attribute declared as an integer WHEN it becomes a string field THEN stored ints are refused
    diff = diff_models(_thing({}, attributes={"x": "integer"}), _thing({"x": "string"}))
    assert levels(diff) == {"field-added:Thing.x": BREAKING}
    # AND a string attribute becoming a plain string field is safe
    diff = diff_models(_thing({}, attributes={"x": "string"}), _thing({"x": "string"}))
    assert levels(diff) == {"field-added:Thing.x": SAFE}


def test_attribute_declarations_are_safe_changes():
    diff = diff_models(_thing({}, attributes={"a": "string", "b": "integer"}),
                       _thing({}, attributes={"a": "map", "c": "list"}))
    assert levels(diff) == {"attribute-kind:Thing.a": SAFE, "attribute-removed:Thing.b": SAFE,
                            "attribute-added:Thing.c": SAFE}


def test_a_difference_no_rule_classifies_is_reported_as_breaking_with_its_path(monkeypatch):
    # GIVEN a classifier that has lost its field-choices rule (simulating a knob no rule covers)
    from constructs_lib.evolution import field_changes

    original = field_changes.field_changes
    monkeypatch.setattr(field_changes, "field_changes",
                        lambda *a, **kw: [c for c in original(*a, **kw) if c.rule != "field-choices"])
    # WHEN the enum is narrowed
    diff = diff_models(team_model("RED", "BLUE", "GREEN"), team_model("RED", "BLUE"))
    # THEN the catch-all still reports it, breaking, naming the path and both values
    [change] = diff.changes
    assert change.id == "unclassified:entities[Team].fields[kind].choices"
    assert change.level == BREAKING
    assert "['BLUE', 'GREEN', 'RED']" in change.message and "['BLUE', 'RED']" in change.message
