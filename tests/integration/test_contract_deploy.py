"""A consumer's tests need only the producer's contract file: the shop table created from
``shop.contract.json`` alone in DynamoDB Local is the table the template creates, and the shop's
access patterns run on it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.runtime import TableClient
from constructs_lib.testing import ContractDeployment, LocalDeployment

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def _shape(description: dict[str, Any]) -> dict[str, Any]:
    """What a consumer depends on: key schema, attribute types, indexes with projections, stream."""
    return {
        "keys": description["KeySchema"],
        "attributes": sorted((a["AttributeName"], a["AttributeType"]) for a in description["AttributeDefinitions"]),
        "gsis": sorted(
            (g["IndexName"], tuple((k["AttributeName"], k["KeyType"]) for k in g["KeySchema"]),
             g["Projection"]["ProjectionType"], tuple(g["Projection"].get("NonKeyAttributes", ())))
            for g in description.get("GlobalSecondaryIndexes", [])
        ),
        "lsis": description.get("LocalSecondaryIndexes", []),
        "stream": description.get("StreamSpecification"),
    }


def test_the_table_from_the_contract_is_the_table_from_the_template(
    shop_cdk_out: Path, tmp_path: Path, local_deploy_contract: Callable[..., ContractDeployment],
    shop_deployment: LocalDeployment, dynamodb_client: Any,
) -> None:
    # GIVEN only the shop's contract file, copied where a consumer repository would commit it
    contract = tmp_path / "shop.contract.json"
    shutil.copy(shop_cdk_out / "shop.contract.json", contract)
    # WHEN its table is created from it, beside the one created from the synthesized template
    from_contract = local_deploy_contract(contract, name_prefix="consumer-")
    # THEN key schema, GSIs with their projections and the stream are the same
    assert _shape(from_contract.describe("Table")) == _shape(shop_deployment.describe("DataTable"))
    assert from_contract.stream.startswith("arn:") and from_contract.name.startswith("consumer-Table-")
    # AND TTL is on the model's attribute
    ttl = dynamodb_client.describe_time_to_live(TableName=from_contract.name)["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "expires_at")
    assert from_contract.ignored == {} and from_contract.model.name == "shop"


def test_shop_access_patterns_run_on_the_table_from_the_contract(
    shop_cdk_out: Path, local_deploy_contract: Callable[..., ContractDeployment], dynamodb_client: Any,
) -> None:
    # GIVEN the table and the model from the contract alone
    deployment = local_deploy_contract(shop_cdk_out / "shop.contract.json")
    table = TableClient(deployment.model, deployment.name, client=dynamodb_client)
    table.put("User", {"user_id": "u1", "email": "ada@example.com", "name": "Ada"})
    for day, status in enumerate(["SHIPPED", "PENDING", "PENDING"]):
        table.put("Order", {"user_id": "u1", "order_id": f"o{day}", "created_at": T0.replace(day=day + 1),
                            "status": status})
    # WHEN the shop's patterns query it (table, overloaded GSI, sparse KEYS_ONLY GSI)
    orders = table.query("user's orders newest first", user_id="u1").items
    by_email = table.query("user by email", email="ada@example.com").items
    pending = table.query("pending orders by date", status="PENDING",
                          created_at=(T0, T0.replace(day=30))).items
    # THEN each returns exactly the expected items
    assert [o["order_id"] for o in orders] == ["o2", "o1", "o0"]
    assert [u["user_id"] for u in by_email] == ["u1"]
    assert [o["order_id"] for o in pending] == ["o1", "o2"]
