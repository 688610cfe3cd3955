"""``Entity(typical_item_bytes=...)``: validated, carried by resolution, written into the model JSON
only when set, invisible to every fingerprint and classified as a safe change by the diff."""

from __future__ import annotations

import dataclasses
import json

import pytest

from constructs_lib.evolution.diff import SAFE, diff_models
from constructs_lib.model import Entity, Model
from constructs_lib.model import fingerprints as fp
from constructs_lib.model.contract_file import build_contract, contract_json, read_contract
from constructs_lib.model.exceptions import ModelValidationError
from examples.shop.model import shop_model


def with_hint(model: Model, entity: str, hint: int | None) -> Model:
    """``model`` with ``entity`` declaring ``typical_item_bytes=hint``."""
    entities = [dataclasses.replace(e.declared(), typical_item_bytes=hint) if e.name == entity else e.declared()
                for e in model.entities.values()]
    return Model(model.name, entities=entities, indexes=[i.declared() for i in model.indexes.values()],
                 access_patterns=list(model.access_patterns.values()), ttl_attribute=model.ttl_attribute,
                 pk_attribute=model.pk_attribute, sk_attribute=model.sk_attribute,
                 entity_attribute=model.entity_attribute, tenant_field=model.tenant_field)


@pytest.mark.parametrize("bad", [0, -1, 409_601, 1.5, True, "2KB"])
def test_a_hint_outside_1_to_400_kb_is_refused_naming_value_and_rule(bad: object) -> None:
    # WHEN an entity declares an impossible size THEN a typed error names the value and the bound
    with pytest.raises(ModelValidationError, match=r"typical_item_bytes .* must be a whole number of bytes from 1 "
                       r"to 409,600") as info:
        Entity("Thing", pk="T#{id}", fields=["id"], typical_item_bytes=bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("good", [1, 2048, 409_600])
def test_a_hint_is_resolved_and_round_trips_through_json(good: int) -> None:
    # GIVEN the shop with a hint on Order
    model = with_hint(shop_model, "Order", good)
    # THEN the resolved entity carries it, the JSON holds it and reads back equal
    assert model.entity("Order").typical_item_bytes == good
    order = next(e for e in json.loads(model.to_json())["entities"] if e["name"] == "Order")
    assert order["typical_item_bytes"] == good
    again = Model.from_json(model.to_json())
    assert again.entity("Order").typical_item_bytes == good and again == model


def test_an_unset_hint_leaves_the_json_byte_identical() -> None:
    # GIVEN the shop rebuilt with an explicit None hint
    model = with_hint(shop_model, "Order", None)
    # THEN its JSON is the shop's, byte for byte, and names no hint
    assert model.to_json() == shop_model.to_json()
    assert "typical_item_bytes" not in shop_model.to_json()


def test_a_hint_moves_no_fingerprint_and_a_contract_with_it_reads_back() -> None:
    # GIVEN the shop with and without a hint on two entities
    hinted = with_hint(with_hint(shop_model, "Order", 3000), "User", 700)
    # THEN the model, entity and index fingerprints are the same
    assert fp.fingerprint(hinted) == fp.fingerprint(shop_model)
    assert fp.entity_fingerprints(hinted) == fp.entity_fingerprints(shop_model)
    assert fp.index_fingerprints(hinted) == fp.index_fingerprints(shop_model)
    # AND a contract file of the hinted model reads back with its integrity check passing
    contract = read_contract(json.loads(contract_json(build_contract(hinted))), Model)
    assert contract.model.entity("Order").typical_item_bytes == 3000
    assert contract.fingerprint == fp.fingerprint(shop_model)


@pytest.mark.parametrize(("before", "after"), [(None, 2000), (2000, 4000), (2000, None)])
def test_changing_a_hint_is_a_safe_change(before: int | None, after: int | None) -> None:
    # WHEN the hint is added, changed or removed THEN the diff reports one safe change naming it
    diff = diff_models(with_hint(shop_model, "Order", before), with_hint(shop_model, "Order", after))
    assert [(c.id, c.level) for c in diff.changes] == [("item-size-hint:Order", SAFE)]
    assert repr(after) in diff.changes[0].message and not diff.unacknowledged
