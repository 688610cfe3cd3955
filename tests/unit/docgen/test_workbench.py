"""Unit tests for constructs_lib.docgen.workbench: the NoSQL Workbench data-model export."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from constructs_lib.docgen.workbench import (
    WORKBENCH_FORMAT_VERSION,
    sample_items,
    to_workbench,
    to_workbench_json,
)
from constructs_lib.model import (
    AccessPattern,
    Entity,
    Index,
    IndexKey,
    Model,
    ModelValidationError,
)
from constructs_lib.runtime import keys
from constructs_lib.runtime.items import ItemMapper
from examples.saas.model import saas_model
from examples.shop.model import shop_model

NOW = datetime(2026, 3, 4, 15, 7, tzinfo=UTC)
DYNAMODB_TYPES = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB-JSON item as plain Python (integral numbers as int, as the runtime reads them)."""
    deserializer = TypeDeserializer()
    out = {k: deserializer.deserialize(v) for k, v in item.items()}
    return {k: int(v) if isinstance(v, Decimal) and v == v.to_integral_value() else v for k, v in out.items()}


@pytest.fixture(scope="module")
def shop_export() -> dict[str, Any]:
    return json.loads(to_workbench_json(shop_model, now=NOW))


# --------------------------------------------------------------------------- published structure


def test_top_level_and_metadata_follow_the_workbench_format(shop_export: dict[str, Any]) -> None:
    # GIVEN the export of the shop model
    # THEN it has exactly the Workbench's top-level keys and metadata fields
    assert list(shop_export) == ["ModelName", "ModelMetadata", "DataModel"]
    assert shop_export["ModelName"] == "shop"
    meta = shop_export["ModelMetadata"]
    assert list(meta) == ["Author", "DateCreated", "DateLastModified", "Description", "AWSService", "Version"]
    assert meta["AWSService"] == "Amazon DynamoDB"
    assert meta["Version"] == WORKBENCH_FORMAT_VERSION == "3.0"
    # AND dates use the Workbench's own format
    assert meta["DateCreated"] == meta["DateLastModified"] == "Mar 04, 2026, 03:07 PM"
    assert "pending orders by date (Query on GSI2)" in meta["Description"]


def test_table_keys_indexes_and_billing(shop_export: dict[str, Any]) -> None:
    # GIVEN the one table of the export
    (table,) = shop_export["DataModel"]
    # THEN its keys, GSIs (with the projection SingleTable builds) and billing mode are declared
    assert table["TableName"] == "shop"
    assert table["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "PK", "AttributeType": "S"},
        "SortKey": {"AttributeName": "SK", "AttributeType": "S"},
    }
    gsis = {g["IndexName"]: g for g in table["GlobalSecondaryIndexes"]}
    assert gsis["GSI1"]["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "GSI1PK", "AttributeType": "S"},
        "SortKey": {"AttributeName": "GSI1SK", "AttributeType": "S"},
    }
    assert gsis["GSI1"]["Projection"] == {"ProjectionType": "ALL"}
    assert gsis["GSI2"]["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["_type"]}
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["DataAccess"] == {"MySql": {}}
    # AND every non-key attribute is declared once, with a DynamoDB type
    names = [a["AttributeName"] for a in table["NonKeyAttributes"]]
    assert len(names) == len(set(names)) and "PK" not in names
    assert {a["AttributeType"] for a in table["NonKeyAttributes"]} <= DYNAMODB_TYPES
    types = {a["AttributeName"]: a["AttributeType"] for a in table["NonKeyAttributes"]}
    assert types["GSI2PK"] == "S" and types["line"] == "N" and types["version"] == "N" and types["expires_at"] == "N"


def test_one_facet_per_entity_with_key_aliases_data_and_attributes(shop_export: dict[str, Any]) -> None:
    # GIVEN the facets of the export
    (table,) = shop_export["DataModel"]
    facets = {f["FacetName"]: f for f in table["TableFacets"]}
    # THEN there is one facet per entity, aliasing the keys with the entity's templates
    assert list(facets) == list(shop_model.entities)
    for facet in facets.values():
        assert list(facet) == ["FacetName", "KeyAttributeAlias", "TableData", "NonKeyAttributes", "DataAccess"]
    assert facets["Order"]["KeyAttributeAlias"] == {
        "PartitionKeyAlias": "USER#{user_id}", "SortKeyAlias": "ORDER#{created_at}#{order_id}"
    }
    # AND each facet's items are the table's items of that entity, and its attributes cover them
    for name, facet in facets.items():
        assert facet["TableData"] == [i for i in table["TableData"] if i["_type"] == {"S": name}]
        for item in facet["TableData"]:
            assert set(item) - {"PK", "SK"} <= set(facet["NonKeyAttributes"])
    declared = {a["AttributeName"]: a["AttributeType"] for a in table["NonKeyAttributes"]}
    for item in table["TableData"]:
        for attr, value in item.items():
            if attr not in ("PK", "SK"):
                assert declared[attr] == next(iter(value)), attr


# --------------------------------------------------------------------------- sample items = runtime items


@pytest.mark.parametrize("model", [shop_model, saas_model], ids=lambda m: m.name)
def test_sample_item_keys_parse_back_into_the_items_own_attributes(model: Model) -> None:
    # GIVEN the sample items and the runtime mapper of the model
    mapper = ItemMapper(model)
    for entity_name, items in sample_items(model).items():
        entity = model.entity(entity_name)
        for stored in items:
            item = _plain(stored)
            # WHEN the table keys are parsed with the entity's templates
            values = keys.parse(entity, entity.pk_template, item[model.pk_attribute])
            values.update(keys.parse(entity, entity.sk_template, item[model.sk_attribute]))
            # THEN they give back the item's own field values
            assert values and mapper.normalize(entity, values) == {k: item[k] for k in values}
            # AND every index key is what the runtime derives from those attributes (or absent)
            attrs = {k: v for k, v in item.items() if k not in mapper.key_attributes and k != model.entity_attribute}
            for index_name in entity.indexes:
                expected = mapper.index_key(entity, index_name, attrs) or {}
                present = {a: item[a] for a in model.indexes[index_name].key_attributes if a in item}
                assert present == expected, (entity_name, index_name)


def test_samples_show_sparse_membership_and_item_collections() -> None:
    # GIVEN the shop model's sample orders
    orders = [_plain(i) for i in sample_items(shop_model)["Order"]]
    # THEN the first (PENDING) is in sparse GSI2 and the second (the first other choice) is not
    assert orders[0]["status"] == "PENDING" and orders[0]["GSI2PK"] == "STATUS#PENDING"
    assert orders[1]["status"] == "CANCELLED" and "GSI2PK" not in orders[1] and "GSI2SK" not in orders[1]
    # AND both orders share their user's partition but not their key
    assert orders[0]["PK"] == orders[1]["PK"] == "USER#u-1"
    assert orders[0]["SK"] != orders[1]["SK"]
    # AND entities with a constant sort key get distinct partitions instead of one duplicate key
    users = [_plain(i) for i in sample_items(shop_model)["User"]]
    assert {u["PK"] for u in users} == {"USER#u-1", "USER#u-2"}
    assert users[0]["version"] == 1  # written as the runtime's put writes it


def test_when_present_samples_leave_the_index() -> None:
    # GIVEN an entity in an index only while "flagged" is present
    model = Model(
        "flags",
        entities=[Entity("Task", pk="TASK#{task_id}", sk="TASK", fields=["task_id"],
                         indexes={"Flagged": IndexKey(pk="FLAG#{task_id}", sk="TASK", when_present="flagged")})],
        indexes=[Index("Flagged")],
        access_patterns=[AccessPattern("flagged task", entity="Task", index="Flagged")],
    )
    # WHEN three samples are built
    tasks = [_plain(i) for i in sample_items(model, per_entity=3)["Task"]]
    # THEN only the first carries the flag and the index keys
    assert ["FlaggedPK" in t for t in tasks] == [True, False, False]
    assert ["flagged" in t for t in tasks] == [True, False, False]


def test_pk_only_table_and_lsi_are_exported_as_the_workbench_models_them() -> None:
    # GIVEN a model without sort key and a model with an LSI
    pk_only = Model("accounts", entities=[Entity("Account", pk="ACCOUNT#{account_id}", fields=["account_id"])])
    with_lsi = Model(
        "lsi",
        entities=[Entity("Msg", pk="ROOM#{room}", sk="MSG#{msg_id}", fields=["room", "msg_id", "author"],
                         indexes={"ByAuthor": IndexKey(sk="AUTHOR#{author}#{msg_id}")})],
        indexes=[Index("ByAuthor", kind="LSI")],
    )
    # WHEN both are exported together
    export = to_workbench([("accounts", pk_only), ("ab", with_lsi)], now=NOW)
    first, second = export["DataModel"]
    # THEN the key-only table has no sort key, facet alias or GSI list
    assert list(first["KeyAttributes"]) == ["PartitionKey"]
    assert first["TableFacets"][0]["KeyAttributeAlias"] == {"PartitionKeyAlias": "ACCOUNT#{account_id}"}
    assert "GlobalSecondaryIndexes" not in first
    # AND the LSI (which the Workbench does not model) is a non-key attribute and named in the description
    assert "ByAuthorSK" in [a["AttributeName"] for a in second["NonKeyAttributes"]]
    assert "ByAuthor (sort key ByAuthorSK)" in export["ModelMetadata"]["Description"]
    # AND table names are valid DynamoDB names, the model name a generic one
    assert second["TableName"] == "ab_table"
    assert export["ModelName"] == "constructs_lib"


def test_dates_follow_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN SOURCE_DATE_EPOCH (reproducible builds)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(datetime(2026, 1, 2, 0, 30, tzinfo=UTC).timestamp())))
    # WHEN exported twice
    texts = {to_workbench_json(shop_model) for _ in range(2)}
    # THEN the output is identical and dated from the epoch (12-hour clock, as the Workbench writes)
    (text,) = texts
    assert json.loads(text)["ModelMetadata"]["DateCreated"] == "Jan 02, 2026, 12:30 AM"
    assert re.fullmatch(r"[A-Z][a-z]{2} \d{2}, \d{4}, \d{2}:\d{2} (AM|PM)", "Jan 02, 2026, 12:30 AM")


def test_bad_sample_count_is_rejected_with_the_value() -> None:
    # WHEN asked for zero samples per entity
    # THEN a model error names the value and the rule
    with pytest.raises(ModelValidationError, match=r"per_entity 0 must be an int >= 1"):
        sample_items(shop_model, per_entity=0)
