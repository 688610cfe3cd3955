"""Declared vs resolved model (ADR 0046): building a Model never changes what the user declared,
the resolved types are immutable, the LSI partition rule has one source, and the model JSON and
fingerprints are byte for byte the golden copy (golden/models.json: captured before the split,
then once more when set-valued declarations became sorted; golden/models_declared_order.json
keeps the JSON and fingerprints of before, which older files and parameters still hold)."""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.model import fingerprints as fp
from constructs_lib.model.exceptions import FrozenModelError
from constructs_lib.model.resolved import ResolvedEntity, ResolvedIndex, ResolvedIndexKey, ResolvedPattern
from examples.evolution.model import model_v1, model_v2
from examples.iot.model import iot_model
from examples.reporting.consumer_model import shop_view
from examples.saas.model import saas_model
from examples.shop.model import shop_model
from examples.viral.model import viral_model

sys.path.insert(0, str(Path(__file__).parent))
from golden.kitchen_sink import kitchen_sink  # noqa: E402

GOLDEN = json.loads((Path(__file__).parent / "golden" / "models.json").read_text())
MODELS = {"viral": lambda: viral_model, "saas": lambda: saas_model, "iot": lambda: iot_model,
          "shop": lambda: shop_model, "evolution_v1": model_v1, "evolution_v2": model_v2,
          "reporting_view": lambda: shop_view, "kitchen_sink": kitchen_sink}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_json_and_fingerprints_are_unchanged(name: str) -> None:
    # GIVEN an example model / WHEN serialized and fingerprinted
    model = MODELS[name]()
    golden = GOLDEN[name]
    # THEN the JSON (both forms), the fingerprints and the resolved pattern facts match the golden copy
    assert model.to_json() == golden["json"]
    assert model.to_json(compact=True) == golden["compact"]
    assert model.to_json(indent=None) == golden["hash_json"]
    assert fp.fingerprint(model) == golden["fingerprint"]
    assert fp.entity_fingerprints(model) == golden["entities"]
    assert fp.index_fingerprints(model) == golden["indexes"]
    facts = {n: [r.index.name if r.index else None, list(r.pk_fields), list(r.sk_fields), r.operation, r.shards,
                 list(r.intruders), r.entity_filter] for n, r in model.resolved_patterns.items()}
    assert facts == golden["patterns"]
    # AND it round-trips through from_dict with equal hash and equality
    again = Model.from_json(model.to_json())
    assert again == model and hash(again) == hash(model) and again.to_json() == model.to_json()


def test_committed_contract_matches_the_shop_model() -> None:
    # GIVEN the contract file the reporting example commits / WHEN read / THEN its model is the shop's, byte for byte
    assert Model.from_contract(Path("examples/reporting/contracts/shop.contract.json")).to_json() == shop_model.to_json()


def _declared() -> tuple[list[Entity], list[Index], list[AccessPattern]]:
    entities = [
        Entity("Account", pk="ACCOUNT#{id}", sk="META", fields=["id", "email", "plan"],
               indexes={"ByEmail": ("EMAIL#{email}", "A"),
                        "ByPlan": IndexKey(pk="PLAN#{plan}#{shard}", sk="{id}", when_equals={"plan": {"pro", "free"}},
                                           shards=2, shard_by="id"),
                        "Local": IndexKey(sk="EMAIL#{email}", when_present="email")},
               required=["email"], attributes={"name": "string"}),
    ]
    indexes = [Index("ByEmail"), Index("ByPlan", projection=["name"]), Index("Local", kind="LSI")]
    patterns = [AccessPattern("by email", entity=("Account",), index="ByEmail", sk="begins_with"),
                AccessPattern("local", entity="Account", index="Local", sk="=", sk_fields=["email"])]
    return entities, indexes, patterns


def test_building_a_model_does_not_change_the_declarations() -> None:
    # GIVEN declarations in the loose forms a user writes (lists, tuples, a set, a string shard_by)
    entities, indexes, patterns = _declared()
    before = copy.deepcopy((entities, indexes, patterns))
    fields_before = [dataclasses.astuple(x) for x in (*entities, *indexes, *patterns)]
    # WHEN a model is built from them
    model = Model("m", entities=entities, indexes=indexes, access_patterns=patterns)
    # THEN every declared object keeps exactly what the user passed, in the type passed
    assert (entities, indexes, patterns) == before
    assert [dataclasses.astuple(x) for x in (*entities, *indexes, *patterns)] == fields_before
    account = entities[0]
    assert account.fields == ["id", "email", "plan"] and account.required == ["email"]
    assert account.indexes["ByEmail"] == ("EMAIL#{email}", "A")
    key = account.indexes["ByPlan"]
    assert isinstance(key, IndexKey) and key.shard_by == "id" and key.when_equals == {"plan": {"pro", "free"}}
    assert indexes[0].pk_attribute is None and indexes[1].projection == ["name"]
    assert patterns[0].entity == ("Account",) and patterns[1].sk_fields == ["email"]
    # AND the model holds the resolved forms
    entity = model.entity("Account")
    assert entity.fields == {"id": Field(), "email": Field(), "plan": Field()} and entity.required == ("email",)
    assert entity.indexes["ByPlan"].shard_by == ("id",)
    assert dict(entity.indexes["ByPlan"].when_equals) == {"plan": ("free", "pro")}
    assert model.indexes["ByEmail"].pk_attribute == "ByEmailPK" and model.indexes["ByPlan"].projection == ("name",)
    assert model.resolved_patterns["by email"].entities == ("Account",)
    assert model.resolved_patterns["local"].sk_fields == ("email",)


def test_resolved_types_are_immutable() -> None:
    # GIVEN a resolved model
    entities, indexes, patterns = _declared()
    model = Model("m", entities=entities, indexes=indexes, access_patterns=patterns)
    entity = model.entity("Account")
    objects: list[tuple[Any, str, Any]] = [
        (entity, "pk", "X#{id}"), (entity.indexes["ByPlan"], "shards", 3), (model.indexes["ByPlan"], "projection", "ALL"),
        (model.resolved_patterns["local"], "sk_fields", ()), (entity.pk_template, "source", "Y"),
    ]
    for obj, attr, value in objects:
        assert isinstance(obj, (ResolvedEntity, ResolvedIndexKey, ResolvedIndex, ResolvedPattern)) or attr == "source"
        # WHEN a field is assigned / THEN it raises
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, value)
    # AND the mappings it hands out refuse changes too
    for mapping in (entity.fields, entity.indexes, entity.attributes, entity.indexes["ByPlan"].when_equals):
        with pytest.raises(TypeError):
            mapping["x"] = None  # type: ignore[index]


def test_a_validated_model_cannot_be_changed() -> None:
    # GIVEN a validated model with two entities, and its JSON and fingerprint
    model = Model("m", entities=[Entity("A", pk="A#{id}", fields=["id"]), Entity("B", pk="B#{id}", fields=["id"],
                                                                                 indexes={"GSI1": ("G#{id}", "B")})],
                  indexes=[Index("GSI1")], access_patterns=[AccessPattern("b", entity="B", index="GSI1")],
                  ttl_attribute="expires_at")
    before = (model.to_json(), fp.fingerprint(model))
    # WHEN an entry of any mapping it hands out is deleted or set / THEN it raises
    for mapping in (model.entities, model.indexes, model.access_patterns, model.resolved_patterns):
        key = next(iter(mapping))
        with pytest.raises(TypeError):
            del mapping[key]  # type: ignore[attr-defined]
        with pytest.raises(TypeError):
            mapping["X"] = mapping[key]  # type: ignore[index]
    # AND assigning or deleting an attribute raises the model's error (an AttributeError, as for a frozen dataclass)
    for name, value in (("entities", {}), ("ttl_attribute", "ttl_epoch"), ("name", "other"),
                        ("consumer_patterns", ("b",)), ("has_sort_key", True)):
        with pytest.raises(FrozenModelError, match=f"'{name}' cannot be set"):
            setattr(model, name, value)
    with pytest.raises(AttributeError, match="'entities' cannot be deleted"):
        del model.entities
    # AND its JSON and fingerprint are those it was validated with
    assert (model.to_json(), fp.fingerprint(model)) == before and list(model.entities) == ["A", "B"]


def test_patterns_declared_alike_resolve_equal() -> None:
    # GIVEN one pattern declared with an entity name and with a one-entity tuple (and sk_fields as list or tuple)
    def model_with(pattern: AccessPattern) -> Model:
        return Model("m", entities=[Entity("A", pk="A#{id}", sk="S#{at}#{n}", fields=["id", "at", "n"])],
                     access_patterns=[pattern])

    a = model_with(AccessPattern("p", entity="A", sk="begins_with", sk_fields=["at"]))
    b = model_with(AccessPattern("p", entity=("A",), sk="begins_with", sk_fields=("at",)))
    # WHEN resolved / THEN the resolved patterns are equal (the declarations are not), and so are the models
    assert a.access_patterns["p"] != b.access_patterns["p"]
    assert a.resolved_patterns["p"] == b.resolved_patterns["p"] and a == b
    assert a.resolved_patterns["p"].pattern == AccessPattern("p", entity="A", sk="begins_with", sk_fields=("at",))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_an_lsi_key_uses_the_tables_partition_key(name: str) -> None:
    # GIVEN every example model with its LSIs / WHEN resolved
    model = MODELS[name]()
    lsis = [i for i in model.indexes.values() if i.kind == "LSI"]
    for index in lsis:
        # THEN the index reads the table's partition-key attribute, and each entity's key there the entity's pk
        assert index.pk_attribute == model.pk_attribute and index.key_attributes == (index.sk_attribute,)
        for entity in model.entities.values():
            key = entity.indexes.get(index.name)
            if key is not None:
                assert key.pk_attribute == model.pk_attribute and key.pk_template == entity.pk_template
                assert key.pk is None and [a for a, _ in key.written] == [index.sk_attribute]
    for r in model.resolved_patterns.values():
        if r.index is not None and r.index.kind == "LSI":
            first = model.entity(r.entities[0])
            assert r.pk_attribute == model.pk_attribute and r.pk_template == first.pk_template
    # AND the kitchen-sink model has one, so the check is not vacuous
    if name == "kitchen_sink":
        assert lsis and model.resolved_patterns["invoices by amount"].pk_attribute == "PK"
        assert model.to_dict()["indexes"][2]["pk_attribute"] is None  # the JSON keeps the declared null


@pytest.mark.parametrize("name", sorted(MODELS))
def test_declarations_recovered_from_resolved_parts_resolve_to_the_same_json(name: str) -> None:
    # GIVEN a model / WHEN its resolved entities and indexes are turned back into declarations
    model = MODELS[name]()
    # THEN each declaration writes the same JSON as the resolved form, and a model built from them is equal
    assert [i.declared().to_dict() for i in model.indexes.values()] == [i.to_dict() for i in model.indexes.values()]
    rebuilt = Model(model.name, entities=list(model.entities.values()), indexes=list(model.indexes.values()),
                    access_patterns=list(model.access_patterns.values()), ttl_attribute=model.ttl_attribute,
                    pk_attribute=model.pk_attribute, sk_attribute=model.sk_attribute,
                    entity_attribute=model.entity_attribute, tenant_field=model.tenant_field)
    expected = {k: v for k, v in model.to_dict().items() if k != "consumer_patterns"}  # a view's own key
    assert rebuilt.to_dict() == expected



@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_declared_entity_writes_the_json_its_resolved_form_writes(name: str) -> None:
    # GIVEN every entity of an example model, resolved, and the declaration it resolves back to
    model = MODELS[name]()
    for entity in model.entities.values():
        # WHEN both write their JSON form THEN it is the same (one JSON contract, two entry points)
        assert entity.declared().to_dict() == entity.to_dict(), entity.name


def test_a_declared_entity_in_loose_form_writes_the_models_json() -> None:
    # GIVEN an entity declared with a (pk, sk) tuple, field names as a list, a sharded sparse key
    entity = Entity("Thing", pk="T#{tid}", sk="T", fields=["tid", "kind", "s"],
                    indexes={"GSI1": ("KIND#{kind}", "T#{tid}"),
                             "GSI2": IndexKey(pk="S#{s}#{shard}", sk="T#{tid}", shards=4, shard_by="tid",
                                              when_equals={"kind": {"b", "a"}})})
    model = Model("loose", entities=[entity], indexes=[Index("GSI1"), Index("GSI2")])
    # WHEN the declaration writes its JSON THEN it is the model's entry for it
    assert entity.to_dict() == model.to_dict()["entities"][0]
