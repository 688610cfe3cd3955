"""Capacity estimates without items (:mod:`constructs_lib.capacity.estimate`): the representative
item, the size hint, each write kind and each read shape, and the typed errors."""

from __future__ import annotations

import dataclasses

import pytest

from constructs_lib import capacity
from constructs_lib.capacity import Capacity, CapacityInputError, read_estimate, typical_item_bytes, write_estimate
from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model
from constructs_lib.runtime.values import item_size
from examples.saas.model import saas_model
from examples.shop.model import ORDER_STATUS_SHARDS, shop_model


def hinted(model: Model, entity: str, hint: int) -> Model:
    entities = [dataclasses.replace(e.declared(), typical_item_bytes=hint) if e.name == entity else e.declared()
                for e in model.entities.values()]
    return Model(model.name, entities=entities, indexes=[i.declared() for i in model.indexes.values()],
                 access_patterns=list(model.access_patterns.values()), ttl_attribute=model.ttl_attribute)


def test_the_representative_item_is_what_the_runtime_puts() -> None:
    # GIVEN the shop's Order (three GSIs, GSI2 sparse on PENDING, GSI3 sharded; a declared integer attribute)
    item = capacity.representative_item(shop_model, "Order")
    # THEN it carries the table key, the entity attribute, every derived index key and the attribute
    assert {"PK", "SK", "_type", "GSI1PK", "GSI2PK", "GSI3PK", "line_count"} <= set(item)
    assert item["status"] == "PENDING" and item["line_count"] == 1
    # AND its size is the typical item size
    assert typical_item_bytes(shop_model, "Order") == item_size(item)
    # AND a versioned entity's item starts at version 1
    assert capacity.representative_item(shop_model, "User")["version"] == 1


def test_a_declared_hint_is_the_typical_size() -> None:
    # GIVEN the shop with Order declared at 3,000 bytes
    model = hinted(shop_model, "Order", 3000)
    # THEN the typical size is the hint, and a put costs 3 WCU on the table and every ALL index
    assert typical_item_bytes(model, "Order") == 3000
    put = write_estimate(model, "Order", "put")
    assert put.table == 3.0 and put.global_indexes == {"GSI1": 3.0, "GSI2": 1.0, "GSI3": 3.0}


def test_write_kinds_of_the_shop_order() -> None:
    # GIVEN the shop's Order at its representative size (< 1 KB)
    # WHEN each write kind is estimated
    got = {kind: write_estimate(shop_model, "Order", kind) for kind in capacity.WRITE_KINDS}
    # THEN a put enters GSI1, GSI2 (KEYS_ONLY, sparse: PENDING) and GSI3; a delete leaves them all
    every = {"GSI1": 1.0, "GSI2": 1.0, "GSI3": 1.0}
    assert (got["put"].table, dict(got["put"].global_indexes)) == (1.0, every)
    assert got["delete"] == got["put"] == got["batch_put"] == got["batch_delete"]
    # AND an update of a non-key attribute does not touch GSI2, which projects only keys
    assert dict(got["update"].global_indexes) == {"GSI1": 1.0, "GSI3": 1.0}
    # AND a transaction doubles every figure
    assert got["transaction_put"] == got["put"].times(2) and got["transaction_update"] == got["update"].times(2)
    assert got["transaction_delete"].total == 8.0


def test_an_update_rewrites_a_projection_holding_the_version() -> None:
    # GIVEN a versioned entity whose INCLUDE index projects the version attribute
    model = Model("v", entities=[Entity("Doc", pk="D#{id}", sk="DOC", fields=["id", "owner"], version_attribute="rev",
                                        indexes={"ByOwner": IndexKey(pk="O#{owner}", sk="{id}")},
                                        attributes={"body": "string"})],
                  indexes=[Index("ByOwner", projection=("rev",))])
    # THEN a typical update (body changes, rev bumps) writes the index too
    assert write_estimate(model, "Doc", "update").global_indexes == {"ByOwner": 1.0}
    assert capacity.update_attribute(model, "Doc") == "body"


def test_large_items_cross_write_and_read_boundaries() -> None:
    # GIVEN items of 1,025 and 4,097 bytes
    # THEN a put rounds up per 1 KB (KEYS_ONLY GSI2 stays at 1); a page of one rounds up per 4 KB
    assert write_estimate(shop_model, "Order", "put", item_bytes=1025).global_indexes == {
        "GSI1": 2.0, "GSI2": 1.0, "GSI3": 2.0}
    assert read_estimate(shop_model, "user profile", item_bytes=4097, consistent=True).table == 2.0
    assert read_estimate(shop_model, "user profile", item_bytes=4096).table == 0.5


def test_a_query_page_sums_before_rounding_and_ends_at_1_mb() -> None:
    # GIVEN Orders of 1,000 bytes read 8 at a time: 8,000 bytes = 2 units of 4 KB, halved
    assert read_estimate(shop_model, "user's orders newest first", items=8, item_bytes=1000).table == 1.0
    # WHEN a page of 2,000 items of 1,000 bytes is asked for THEN it ends with the item reaching 1 MB
    page = read_estimate(shop_model, "user's orders newest first", items=2000, item_bytes=1000, consistent=True)
    assert page.table == -(-1049 * 1000 // 4096)


def test_an_index_query_reads_projected_entries() -> None:
    # GIVEN Orders of 3,000 bytes: GSI2 holds keys and the entity attribute only
    model = hinted(shop_model, "Order", 3000)
    keys_only = read_estimate(model, "pending orders by date", items=10)
    entry = item_size(capacity.index_entry(model, model.indexes["GSI2"], capacity.representative_item(model, "Order")))
    # THEN a page of 10 is charged to GSI2 at 10 entries, eventually consistent
    assert keys_only == Capacity("read", 0.0, {"GSI2": -(-10 * entry // 4096) / 2})
    # AND the ALL-projected GSI1 reads the whole 3,000 bytes each
    assert read_estimate(model, "order by id", items=10).global_indexes == {"GSI1": -(-30000 // 4096) / 2}


def test_a_sharded_pattern_sends_one_query_per_shard() -> None:
    # GIVEN GSI3 write-sharded over ORDER_STATUS_SHARDS partitions, items of 1,000 bytes, a page of 20
    shards = ORDER_STATUS_SHARDS
    per_shard = min(20, -(-3 * 20 // (2 * shards)) + 2)
    # THEN each shard reads its first-read share, rounded on its own, summed
    got = read_estimate(shop_model, "orders by status newest first", items=20, item_bytes=1000)
    assert got.global_indexes == {"GSI3": shards * (-(-per_shard * 1000 // 4096) / 2)}


def test_a_multi_entity_pattern_takes_its_entities_in_turn() -> None:
    # GIVEN "user with orders" (User and Order in one collection), a page of 2
    user, order = typical_item_bytes(shop_model, "User"), typical_item_bytes(shop_model, "Order")
    got = read_estimate(shop_model, "user with orders", items=2, consistent=True)
    # THEN it reads one of each
    assert got.table == float(-(-(user + order) // 4096))


def test_get_item_reads_one_item_whatever_the_page_size() -> None:
    assert read_estimate(shop_model, "user profile", items=50) == read_estimate(shop_model, "user profile")


def test_a_consistent_read_of_a_gsi_pattern_is_refused() -> None:
    # WHEN a strongly consistent page of a GSI pattern is estimated THEN a typed error names it
    with pytest.raises(CapacityInputError, match=r"'docs of an owner' reads global secondary index 'ByOwner'"):
        read_estimate(saas_model, "docs of an owner", consistent=True)


def test_an_lsi_pattern_may_read_consistently_and_only_its_writes_add_the_overhead() -> None:
    # GIVEN a model with an ALL-projected LSI
    model = Model("t", entities=[Entity("T", pk="P#{p}", sk="T#{t}", fields=["p", "t", "prio"],
                                        indexes={"ByPrio": IndexKey(sk="{prio}")})],
                  indexes=[Index("ByPrio", kind="LSI")],
                  access_patterns=[AccessPattern("by prio", entity="T", index="ByPrio")])
    # THEN an entry of 924 + 100 bytes fits one write unit, 925 + 100 needs two
    assert write_estimate(model, "T", "put", item_bytes=924).local_indexes == {"ByPrio": 1.0}
    assert write_estimate(model, "T", "put", item_bytes=925).local_indexes == {"ByPrio": 2.0}
    # AND a read does not add the 100 bytes (as DynamoDB prices it): 4,096 bytes are one read unit, 4,097 two
    assert read_estimate(model, "by prio", consistent=True, item_bytes=4096).local_indexes == {"ByPrio": 1.0}
    assert read_estimate(model, "by prio", consistent=True, item_bytes=4097).local_indexes == {"ByPrio": 2.0}
    assert read_estimate(model, "by prio", item_bytes=4096).local_indexes == {"ByPrio": 0.5}


@pytest.mark.parametrize(("call", "message"), [
    (lambda: write_estimate(shop_model, "Nope", "put"), r"entity 'Nope' is not an entity of model 'shop'"),
    (lambda: write_estimate(shop_model, "Order", "upsert"), r"write kind 'upsert' is not one of put, update"),
    (lambda: write_estimate(shop_model, "Order", "put", item_bytes=0), r"item_bytes 0 must be .* from 1 to 409,600"),
    (lambda: write_estimate(shop_model, "Order", "put", item_bytes=409_601), r"item_bytes 409601 must be"),
    (lambda: read_estimate(shop_model, "nope"), r"access pattern 'nope' is not a pattern of model 'shop'"),
    (lambda: read_estimate(shop_model, "user profile", items=0), r"items 0 must be a positive int"),
    (lambda: typical_item_bytes(shop_model, "Nope"), r"entity 'Nope'"),
])
def test_bad_inputs_raise_typed_errors(call, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CapacityInputError, match=message):
        call()
