"""Write-sharded index keys in the model: declaration rules (typed errors at construction),
a stable shard per item, derived keys recomputed on updates, JSON round trip, the
hot-partition warning naming the remedy, and shard counts from a write rate."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, AccessPatternError, Entity, Field, Index, IndexKey, Model, ModelValidationError
from constructs_lib.runtime.exceptions import SettingsError, UpdateRejectedError
from constructs_lib.runtime.items import ItemMapper
from constructs_lib.runtime.sharding import index_shards, stable_shard

FIELDS = {"order_id": "string", "status": Field.enum("NEW", "PAID"), "created_at": "timestamp"}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def model(key: IndexKey | None = None, *, fields: dict[str, Any] | None = None, index: Index | None = None,
          patterns: tuple[AccessPattern, ...] = ()) -> Model:
    key = key or IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}#{order_id}", shards=4, shard_by="order_id")
    return Model(
        "shop",
        entities=[Entity("Order", pk="ORDER#{order_id}", sk="ORDER", fields=fields or FIELDS, indexes={"ByStatus": key})],
        indexes=[index or Index("ByStatus")],
        access_patterns=patterns or (AccessPattern("orders by status", "Order", index="ByStatus"),),
    )


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"shards": 1, "shard_by": "order_id"}, "shards 1 must be an int from 2 to 100"),
    ({"shards": 101, "shard_by": "order_id"}, "shards 101 must be an int from 2 to 100"),
    ({"shards": True, "shard_by": "order_id"}, "shards True must be an int"),
    ({"shards": 4}, "needs shard_by"),
    ({"shards": 4, "shard_by": ()}, "needs shard_by"),
    ({"shards": 4, "shard_by": ("a", "a")}, "needs shard_by"),
    ({"shard_by": "order_id"}, "shard_by 'order_id' given without shards"),
    ({"shards": 4, "shard_by": "shard"}, "may not name 'shard'"),
])
def test_index_key_refuses_bad_shard_settings(kwargs: dict[str, Any], message: str) -> None:
    # GIVEN / WHEN an IndexKey with bad shard settings THEN a typed error names the value and rule
    with pytest.raises(ModelValidationError, match=message):
        IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}", **kwargs)


@pytest.mark.parametrize(("key", "message"), [
    (IndexKey(pk="STATUS#{status}", sk="{created_at}", shards=4, shard_by="order_id"), "exactly once"),
    (IndexKey(pk="STATUS#{status}#{shard}#{shard}", sk="{created_at}", shards=4, shard_by="order_id"), "exactly once"),
    (IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}#{shard}", shards=4, shard_by="order_id"),
     "partition key only"),
    (IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}", shards=4, shard_by="customer"),
     "shard_by field 'customer' is not a declared field"),
])
def test_entity_refuses_a_sharded_key_without_its_placeholder_or_fields(key: IndexKey, message: str) -> None:
    with pytest.raises(ModelValidationError, match=message):
        model(key)


def test_a_declared_shard_field_and_an_lsi_cannot_be_sharded() -> None:
    with pytest.raises(ModelValidationError, match="field 'shard' is declared"):
        model(fields={**FIELDS, "shard": "number:2"})
    with pytest.raises(ModelValidationError, match="LSI"):
        Model("m", entities=[Entity("Order", pk="ORDER#{order_id}", sk="ORDER", fields=FIELDS, indexes={
            "LSI": IndexKey(sk="{created_at}", shards=4, shard_by="order_id")})], indexes=[Index("LSI", kind="LSI")])


def test_unsharded_shard_placeholder_is_an_ordinary_field() -> None:
    # GIVEN an unsharded key using {shard} WHEN the field is not declared THEN the usual unknown-field error
    with pytest.raises(ModelValidationError, match="unknown field 'shard'"):
        model(IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}"))


def test_pattern_takes_no_shard_and_knows_the_shard_count() -> None:
    resolved = model().resolved_patterns["orders by status"]
    assert resolved.pk_fields == ("status",)
    assert resolved.shards == 4
    unsharded = model(IndexKey(pk="STATUS#{status}#{order_id}", sk="{created_at}")).resolved_patterns["orders by status"]
    assert unsharded.shards is None


def test_item_collection_pattern_needs_one_shard_count() -> None:
    # GIVEN two entities sharing a sharded partition with different shard counts
    fields = {"order_id": "string", "status": "string", "created_at": "timestamp"}
    entities = [
        Entity(name, pk=f"{name.upper()}#{{order_id}}", sk="X", fields=fields,
               indexes={"GSI": IndexKey(pk="S#{status}#{shard}", sk="{created_at}", shards=n, shard_by="order_id")})
        for name, n in (("Order", 4), ("Refund", 8))
    ]
    # WHEN a pattern reads both THEN it is refused, naming the counts
    with pytest.raises(AccessPatternError, match="shard index .GSI. differently"):
        Model("m", entities=entities, indexes=[Index("GSI")],
              access_patterns=[AccessPattern("both", ("Order", "Refund"), index="GSI")])


def test_json_round_trip_and_unsharded_json_unchanged() -> None:
    m = model()
    assert Model.from_json(m.to_json()) == m
    assert Model.from_json(m.to_json()).entities["Order"].indexes["ByStatus"].shard_by == ("order_id",)
    plain = model(IndexKey(pk="STATUS#{status}#{order_id}", sk="{created_at}"))
    assert "shards" not in plain.to_json()  # models without sharded keys keep their JSON (and fingerprint)


def test_shard_is_the_documented_stable_hash() -> None:
    # GIVEN the documented rule: sha256 of the shard_by key encodings joined by '#', first 8 bytes, mod N
    mapper = ItemMapper(model())
    item = mapper.build_item(mapper.model.entities["Order"], {"order_id": "o-42", "status": "PAID", "created_at": T0})
    expected = int.from_bytes(hashlib.sha256(b"o-42").digest()[:8], "big") % 4
    # THEN the stored key carries it, zero-padded to two digits
    assert item["ByStatusPK"] == f"STATUS#PAID#{expected:02d}"
    assert stable_shard("o-42", 4) == expected


def test_shard_is_the_same_in_another_process() -> None:
    # GIVEN Python's own str hash differs per process (PYTHONHASHSEED); the shard must not
    code = "from constructs_lib.runtime.sharding import stable_shard; print([stable_shard(f'o{i}', 7) for i in range(20)])"
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(runs) == 1
    assert runs.pop().strip() == str([stable_shard(f"o{i}", 7) for i in range(20)])


def test_shard_by_several_fields_uses_their_key_encodings() -> None:
    m = model(IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}", shards=8, shard_by=("order_id", "created_at")))
    mapper = ItemMapper(m)
    item = mapper.build_item(m.entities["Order"], {"order_id": "a#b", "status": "NEW", "created_at": T0})
    expected = stable_shard("a%23b#2026-01-01T00:00:00.000000Z", 8)  # escaped id, ISO UTC timestamp
    assert item["ByStatusPK"] == f"STATUS#NEW#{expected:02d}"


def test_update_recomputes_the_sharded_key_and_keeps_the_input_rule() -> None:
    mapper = ItemMapper(model())
    entity = mapper.model.entities["Order"]
    # WHEN status and created_at are set (order_id, the shard input, is known from the table key)
    plan = mapper.plan_update(entity, {"order_id": "o-42"}, {"status": "NEW", "created_at": T0}, [])
    # THEN the sharded pk is recomputed with the item's shard
    assert plan.set["ByStatusPK"] == f"STATUS#NEW#{stable_shard('o-42', 4):02d}"
    # AND setting one template input without the other is still refused
    with pytest.raises(UpdateRejectedError, match="but not \\['created_at'\\]"):
        mapper.plan_update(entity, {"order_id": "o-42"}, {"status": "NEW"}, [])


def test_update_of_a_non_key_shard_input_needs_the_other_inputs() -> None:
    m = model(IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}", shards=4, shard_by="customer"),
              fields={**FIELDS, "customer": "string"})
    mapper = ItemMapper(m)
    entity = m.entities["Order"]
    with pytest.raises(UpdateRejectedError, match="sets \\['customer'\\]"):
        mapper.plan_update(entity, {"order_id": "o1"}, {"customer": "c1"}, [])
    plan = mapper.plan_update(entity, {"order_id": "o1"}, {"customer": "c1", "status": "NEW", "created_at": T0}, [])
    assert plan.set["ByStatusPK"] == f"STATUS#NEW#{stable_shard('c1', 4):02d}"
    # AND removing the shard input removes the item from the index
    assert "ByStatusPK" in mapper.plan_update(entity, {"order_id": "o1"}, {}, ["customer"]).remove


def test_decoded_items_carry_no_shard() -> None:
    mapper = ItemMapper(model(index=Index("ByStatus", projection="KEYS_ONLY")))
    item = mapper.build_item(mapper.model.entities["Order"], {"order_id": "o1", "status": "NEW", "created_at": T0})
    keys_only = {k: item[k] for k in ("PK", "SK", "ByStatusPK", "ByStatusSK", "_type")}
    assert mapper.decode(keys_only) == {"order_id": "o1", "status": "NEW", "created_at": "2026-01-01T00:00:00.000000Z",
                                       "_type": "Order"}


def test_low_cardinality_warning_names_the_sharding_remedy_and_sharding_silences_it() -> None:
    warned = model(IndexKey(pk="STATUS#{status}", sk="{created_at}")).warnings()
    (warning,) = [w for w in warned if w.code == "LowCardinalityPartitionKey"]
    assert "IndexKey(pk='STATUS#{status}#{shard}', sk=..., shards=N, shard_by=" in warning.message
    assert "index_shards(" in warning.message
    assert [w for w in model().warnings() if w.code == "LowCardinalityPartitionKey"] == []


def test_index_shards_reuses_the_counter_arithmetic() -> None:
    assert index_shards(100) == 2  # at least two
    assert index_shards(2500) == 3  # 2500 x 1.2 / 1000 = 3
    assert index_shards(2500, item_size_bytes=3000) == 9  # 3 WCU per write
    with pytest.raises(SettingsError, match="at most 100"):
        index_shards(100_000)
    with pytest.raises(SettingsError, match="positive number"):
        index_shards(0)


def test_model_diff_asks_a_backfill_when_the_shard_count_changes() -> None:
    from constructs_lib.evolution.diff import diff_models

    before = model()
    after = model(IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}#{order_id}", shards=8, shard_by="order_id"))
    diff = diff_models(before, after)
    assert [c.rule for c in diff.changes if c.index == "ByStatus"] == ["index-shards-changed"]
    assert ("Order", "ByStatus") in diff.backfill


def test_describe_explains_the_shards_and_the_read_cost() -> None:
    from constructs_lib.docgen.describe import describe

    text = describe(model())
    assert "| 4 Queries, merged |" in text
    assert '"STATUS#NEW#00" (shard 00; likewise for shards 01..03, merged by ByStatusSK)' in text
    assert "one page = 4 Queries, one per shard partition" in text
    assert "sha256(order_id) mod 4" in text
    assert "`shard` is present" not in text and "order_id, status are present" not in text


def test_runtime_and_model_agree_on_the_shard_placeholder_and_bounds() -> None:
    from constructs_lib.model import SHARD
    from constructs_lib.model.entity import MAX_SHARDS, MIN_SHARDS
    from constructs_lib.runtime import sharding

    assert (sharding.SHARD, sharding.MIN_INDEX_SHARDS, sharding.MAX_INDEX_SHARDS) == (SHARD, MIN_SHARDS, MAX_SHARDS)


def test_first_read_limit_is_the_share_with_margin_never_above_the_page() -> None:
    from constructs_lib.runtime.merged_reads import first_read_limit

    assert first_read_limit(100, 4) == 35  # under ceil(150 / 4) + 2 = 40: 35 suffices for 95 % of pages
    assert first_read_limit(100, 16) == 12  # ceil(150 / 16) + 2 (the binomial rule would ask for more)
    assert first_read_limit(1, 4) == 1 and first_read_limit(3, 2) == 3  # never more than the page


def test_traffic_report_judges_the_shards_of_a_key_together() -> None:
    from constructs_lib.runtime.stats.report import _group_shards, _shard_layouts
    from constructs_lib.runtime.stats.sketch import KeyCount

    # GIVEN the sharded index's layout and sampled keys: 4 shards of PAID, one of NEW, a key of another shape
    layouts = _shard_layouts(model())
    assert layouts == {"ByStatus": [(3, 2, 4)]}
    top = [KeyCount(f"STATUS#PAID#{n:02d}", 10 + n, 1, 2.0, 0, 10.0 + n) for n in range(4)]
    top += [KeyCount("STATUS#NEW#03", 5, 0, 1.0, 1, 5.0), KeyCount("OTHER#x", 7, 0, 0.0, 0, 7.0)]
    # WHEN grouped
    grouped = _group_shards(top, layouts["ByStatus"])
    # THEN each logical key sums its shards, knows their number and keys; others stay as they are
    assert [(kc.key, kc.count, kc.error, shards, members) for kc, shards, members in grouped] == [
        ("STATUS#PAID#{shard}", 46, 4, 4, tuple(f"STATUS#PAID#{n:02d}" for n in range(4))),
        ("OTHER#x", 7, 0, 1, ()),
        ("STATUS#NEW#{shard}", 5, 0, 4, ("STATUS#NEW#03",)),
    ]
