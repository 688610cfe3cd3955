"""Cost warnings (:func:`constructs_lib.capacity.warnings.cost_warnings`): each names its entity,
pattern or index and the units, and none is raised on the example models."""

from __future__ import annotations

import pytest
from capacity_models import collection_model, projected_model

from constructs_lib.capacity import read_estimate, write_estimate
from constructs_lib.capacity.warnings import PAGE_ITEMS, cost_warnings
from constructs_lib.model import Model
from examples.evolution.model import model_v1, model_v2
from examples.iot.model import iot_model
from examples.reporting.consumer_model import shop_view
from examples.saas.model import saas_model
from examples.shop.model import shop_model
from examples.viral.model import viral_model


@pytest.mark.parametrize("model", [shop_model, saas_model, iot_model, viral_model, model_v1(), model_v2(), shop_view],
                         ids=lambda m: m.name)
def test_no_example_model_warns(model: Model) -> None:
    # GIVEN an example model THEN it pays for nothing it does not use
    assert cost_warnings(model) == []


def test_large_items_in_several_all_projected_gsis_warn_with_the_units_saved() -> None:
    # GIVEN 3,000-byte users in two ALL-projected GSIs (3 WCU each per put; keys only would be 1 each)
    (warning,) = cost_warnings(projected_model(3000))
    # THEN the warning names the entity, both indexes and 4 WCU saved per put
    assert warning.code == "OverProjectedIndexes"
    assert warning.where == "entity 'User' indexes ByEmail, ByName"
    assert "(6 WCU there)" in warning.message and "would cost 2 WCU: 4 WCU saved per put" in warning.message
    assert write_estimate(projected_model(3000), "User", "put").global_indexes == {"ByEmail": 3.0, "ByName": 3.0}


def test_small_items_in_all_projected_gsis_do_not_warn() -> None:
    # GIVEN the same model with items under 1 KB: KEYS_ONLY would cost the same 1 WCU per index
    assert cost_warnings(projected_model(900)) == []


def test_index_entries_no_pattern_reads_warn() -> None:
    # GIVEN users keyed into ByName, which no pattern reads
    model = projected_model(900, read_by_name=False)
    (warning,) = cost_warnings(model)
    # THEN the warning names the entity and index, with the WCU a write pays there
    assert (warning.code, warning.where) == ("UnreadIndexEntries", "entity 'User' index 'ByName'")
    assert "(1 WCU per write for a typical 900-byte item, 1 WCU saved per write without it)" in warning.message


def test_a_pattern_reading_a_whole_collection_for_one_entity_warns() -> None:
    # GIVEN users and their 2,000-byte events in one partition, and "user alone" reading it unbounded
    model = collection_model()
    (warning,) = cost_warnings(model)
    # THEN the warning names the pattern, the other entity and the RCU wasted per page
    assert (warning.code, warning.where) == ("CollectionRead", "access pattern 'user alone'")
    useful = read_estimate(model, "user alone", items=PAGE_ITEMS).total
    paid = -(-(PAGE_ITEMS * (500 + 2000)) // 4096) / 2
    assert f"cost {paid:g} RCU instead of {useful:g} ({paid - useful:g} RCU wasted)" in warning.message
    assert "Event items may share the partition" in warning.message


def test_a_bounded_pattern_on_the_same_collection_does_not_warn() -> None:
    # GIVEN the pattern bounded to the user's sort key THEN no warning
    model = collection_model(bounded=True)
    assert cost_warnings(model) == []


def test_a_model_whose_item_cannot_be_built_gets_one_warning_saying_so() -> None:
    # GIVEN a sort key that can never fit DynamoDB's 1,024 bytes (synthesis refuses it on its own)
    from constructs_lib.model import Entity

    model = Model("m", entities=[Entity("Doc", pk="DOC#{id}", sk="X" * 1030, fields={"id": "string"})])
    # WHEN its cost warnings are computed THEN one warning names the reason, nothing is raised
    (warning,) = cost_warnings(model)
    assert warning.code == "CostNotEstimated" and "limited to 1024 bytes" in warning.message
