"""A slice file carries the schema behind each fingerprint, so whoever holds only the file — the
producer's ``diff`` — names what a change does to it exactly as the consumer's own model would;
a schema that does not hash to its fingerprint is refused; an index key or a writer only one side
has is one line. ``CONSTRUCTS_LIB_SOAK=1`` runs ten times the examples."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_specs import Spec
from test_slice_properties import EXAMPLES, MUTATIONS, build, mutate, published, scopes, specs

from constructs_lib.evolution.contracts import described
from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.model.fingerprints import entity_schema, index_schema
from constructs_lib.model.slices import SliceError, check_slice, read_slice, schema_changes, slice_of


def shop(*, refunds: bool = False, order_gsi2: bool = True) -> Model:
    entities = [Entity("Order", pk="USER#{user_id}", sk="ORDER#{order_id}",
                       fields={"user_id": Field(), "order_id": Field(), "status": Field()},
                       indexes={"GSI2": IndexKey(pk="STATUS#{status}", sk="{order_id}")} if order_gsi2 else {})]
    if refunds or not order_gsi2:
        entities.append(Entity("Refund", pk="REFUND#{refund_id}", sk="REFUND",
                               fields={"refund_id": Field(), "status": Field()},
                               indexes={"GSI2": IndexKey(pk="STATUS#{status}", sk="{refund_id}")}))
    return Model("shop", entities=entities, indexes=[Index("GSI2")],
                 access_patterns=[AccessPattern("by status", entity=entities[-1].name, index="GSI2")])


def test_an_index_key_or_writer_only_one_side_has_is_one_line() -> None:
    # GIVEN GSI2 written by Order, then by Order and a new entity Refund
    old, new = shop().to_dict(), shop(refunds=True).to_dict()
    # THEN the index's change is the new writer with its keys, in one line
    assert schema_changes("GSI2", index_schema(old, "GSI2"), index_schema(new, "GSI2")) == (
        "GSI2: entity 'Refund' writes it now (pk 'STATUS#{status}', sk '{refund_id}')",)
    # AND a writer gone, and an entity's index key gone, are one line each
    gone = shop(order_gsi2=False).to_dict()
    assert schema_changes("GSI2", index_schema(new, "GSI2"), index_schema(gone, "GSI2")) == (
        "GSI2: entity 'Order' writes it no longer",)
    # (and the field only that index key read is no key field any more)
    assert schema_changes("Order", entity_schema(old, "Order"), entity_schema(gone, "Order")) == (
        "Order: writes index 'GSI2' no longer", "Order key field 'status' kind: 'string' -> absent")
    assert schema_changes("Order", entity_schema(gone, "Order"), entity_schema(old, "Order"))[0] == (
        "Order: writes index 'GSI2' now (pk 'STATUS#{status}', sk '{order_id}')")


def test_a_slice_file_keeps_its_schemas_and_refuses_one_that_does_not_hash_to_its_fingerprint() -> None:
    # GIVEN a slice written to a file
    piece = slice_of(shop())
    data = json.loads(piece.to_json())
    # THEN read back it has the schema of each entity and index it names
    again = read_slice(piece.to_json())
    assert (again.entity_schemas, again.index_schemas) == (piece.entity_schemas, piece.index_schemas)
    assert sorted(data["schemas"]["entities"]) == ["Order"] and sorted(data["schemas"]["indexes"]) == ["GSI2"]
    # AND a file without schemas (written before they existed) reads with none
    older = {k: v for k, v in data.items() if k != "schemas"}
    assert read_slice(older).entity_schemas == {} and read_slice(older) == piece
    # AND a schema edited by hand, or naming what the slice does not, is refused naming it
    data["schemas"]["entities"]["Order"]["sk"] = "ORDER#{other}"
    with pytest.raises(SliceError, match=r"schemas.entities\['Order'\] does not hash to its fingerprint"):
        read_slice(data)
    data["schemas"]["entities"] = {"Coupon": {}}
    with pytest.raises(SliceError, match=r"schemas.entities\['Coupon'\] names no entry of entities"):
        read_slice(data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs(), change=st.sampled_from(MUTATIONS), data=st.data())
def test_the_slice_file_alone_names_what_changed_as_the_consumers_model_does(
    spec: Spec, change: str, data: st.DataObject
) -> None:
    # GIVEN a consumer function's slice of a producer's model, and the producer's next model
    old = build(spec)
    scope = data.draw(scopes(old))
    grown = mutate(spec, change, data)
    if grown is None:
        return
    new = build(grown)
    piece = slice_of(old, scope)
    # WHEN the consumer checks it with its own model, and the producer with the slice file alone
    with_model = check_slice(piece, published(new), model=old)
    registered = read_slice(piece.to_json())
    from_file = described(registered, check_slice(registered, published(new)), new.to_dict())
    # THEN both find the same breaks, each naming the same changes old -> new
    assert from_file == with_model, (change, [b.describe() for b in from_file], [b.describe() for b in with_model])
