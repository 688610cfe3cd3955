"""A consumer's own access patterns on the producer's table: the shop table created from its
contract file in DynamoDB Local, items written with the producer's model, and consumer-only
patterns over the shop's existing GSIs and table key queried through a view — as bundled into a
function (the view's model JSON loaded back by the runtime)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Model
from constructs_lib.model.fingerprints import fingerprint
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.contract import load_bundled_model
from constructs_lib.testing import ContractDeployment
from examples.shop.model import shop_model

pytestmark = pytest.mark.integration

T0 = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
CONSUMER_PATTERNS = [
    AccessPattern("pending orders since", entity="Order", index="GSI2", sk=">="),
    AccessPattern("orders by status in a date range", entity="Order", index="GSI3", sk="between"),
    AccessPattern("order lines from", entity="OrderItem", sk=">="),
]


def test_consumer_only_patterns_query_the_producers_table(
    shop_cdk_out: Path, tmp_path: Path, local_deploy_contract: Callable[..., ContractDeployment], dynamodb_client: Any,
) -> None:
    # GIVEN the shop's contract file, committed in the consumer's repository, and its table
    contract = tmp_path / "shop.contract.json"
    shutil.copy(shop_cdk_out / f"{shop_model.name}.contract.json", contract)
    deployment = local_deploy_contract(contract, name_prefix="view-")
    # AND items written by the producer, with its own model
    producer = TableClient(shop_model, deployment.name, client=dynamodb_client)
    statuses = ["PENDING", "SHIPPED", "PENDING", "PENDING", "SHIPPED", "PENDING"]
    for day, status in enumerate(statuses):
        producer.put("Order", {"user_id": f"u{day % 2}", "order_id": f"o{day}", "created_at": T0 + timedelta(days=day),
                               "status": status})
    for line in range(1, 6):
        producer.put("OrderItem", {"order_id": "o0", "line": line, "sku": f"s{line}", "quantity": line})
    # AND the consumer's view of the model from the file, bundled as a function's model.json
    view = Model.from_contract(contract).view(extra_patterns=CONSUMER_PATTERNS)
    bundled = tmp_path / "model.json"
    bundled.write_text(view.to_json(), encoding="utf-8")
    model = load_bundled_model(bundled)
    assert model.consumer_patterns == tuple(p.name for p in CONSUMER_PATTERNS)
    assert fingerprint(model) == deployment.contract.fingerprint == fingerprint(shop_model)  # type: ignore[union-attr]
    consumer = TableClient(model, deployment.name, client=dynamodb_client)
    # WHEN the consumer-only patterns query the table (sparse KEYS_ONLY GSI, write-sharded GSI, table key)
    since = consumer.query("pending orders since", status="PENDING", created_at=T0 + timedelta(days=2)).items
    shipped = consumer.query_all("orders by status in a date range", status="SHIPPED",
                                 created_at=(T0, T0 + timedelta(days=4)))
    lines = consumer.query("order lines from", order_id="o0", line=3).items
    # THEN each returns exactly the items its key condition selects, from the producer's writes
    assert [o["order_id"] for o in since] == ["o2", "o3", "o5"]
    assert sorted(o["order_id"] for o in shipped) == ["o1", "o4"]
    assert [(i["line"], i["sku"]) for i in lines] == [(3, "s3"), (4, "s4"), (5, "s5")]
    # AND the producer's own patterns still work through the view
    assert [o["order_id"] for o in consumer.query("user's orders newest first", user_id="u1").items] == ["o5", "o3", "o1"]
