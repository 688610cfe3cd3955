"""The contract file SingleTable writes into the cloud assembly (``<model name>.contract.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from constructs_lib.model import Model
from constructs_lib.model.contract_file import FORMAT, read_contract
from constructs_lib.model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints
from examples.shop.model import shop_model


def _parameter(template: dict[str, Any], suffix: str) -> Any:
    found = [r["Properties"]["Value"] for r in template["Resources"].values()
             if r["Type"] == "AWS::SSM::Parameter" and str(r["Properties"].get("Name", "")).endswith(suffix)]
    assert len(found) == 1, found
    return found[0]


def test_the_shop_app_writes_one_contract_per_model(shop_cdk_out: Path) -> None:
    # GIVEN app.py synthesized once for the session
    # WHEN listing its contract files THEN every SingleTable's model has one
    names = sorted(p.name for p in shop_cdk_out.glob("*.contract.json"))
    assert names == ["globaldocs.contract.json", "iot.contract.json", "saas.contract.json", "shop.contract.json",
                     "store.contract.json", "viral.contract.json"]


def test_the_shop_contract_describes_the_synthesized_table(shop_cdk_out: Path, shop_template: dict[str, Any]) -> None:
    # GIVEN the shop's contract file and its stack's template
    path = shop_cdk_out / "shop.contract.json"
    contract = read_contract(path, Model)
    document = json.loads(path.read_text(encoding="utf-8"))
    table = next(r["Properties"] for r in shop_template["Resources"].values()
                 if r["Type"] == "AWS::DynamoDB::GlobalTable")
    # THEN it reads back as the shop model with its fingerprints
    assert document["format"] == FORMAT and contract.model == shop_model
    assert contract.fingerprint == fingerprint(shop_model)
    assert contract.entity_fingerprints == entity_fingerprints(shop_model)
    assert contract.index_fingerprints == index_fingerprints(shop_model)
    # AND its table is the template's: stream, TTL, key schema, GSIs with their projections
    assert contract.table["stream_view_type"] == table["StreamSpecification"]["StreamViewType"]
    assert contract.table["ttl_attribute"] == table["TimeToLiveSpecification"]["AttributeName"]
    assert [k["AttributeName"] for k in table["KeySchema"]] == ["PK", "SK"]
    assert (contract.table["partition_key"]["name"], contract.table["sort_key"]["name"]) == ("PK", "SK")
    synthesized = {
        g["IndexName"]: ([k["AttributeName"] for k in g["KeySchema"]], g["Projection"]["ProjectionType"],
                         g["Projection"].get("NonKeyAttributes"))
        for g in table["GlobalSecondaryIndexes"]
    }
    described = {
        i["name"]: ([i["partition_key"]["name"], i["sort_key"]["name"]], i["projection"]["type"],
                    i["projection"].get("non_key_attributes"))
        for i in contract.table["indexes"]
    }
    assert described == synthesized
    # AND the table's name and ARN are tokens at synth, so they are left out
    assert "table_name" not in contract.table and "table_arn" not in contract.table
    # AND the SSM parameters stay as they were: the published fingerprint is the contract's
    assert _parameter(shop_template, "/model-fingerprint") == contract.fingerprint
