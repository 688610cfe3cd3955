"""A transaction's ``client_request_token`` on several tables of one DynamoDB Local: DynamoDB
remembers a token per server (per account and region on AWS), so the token sent names the table
too (ADR 0035). Tokens here start with ``tok-tx-``: no other test uses them (tokens outlive tables).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from constructs_lib.model import Model
from constructs_lib.runtime import IdempotencyKeyReusedError, TableClient
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture
def two_tables(
    local_deploy: Callable[..., LocalDeployment], shop_template: dict[str, Any], bundled_model: Model, dynamodb_client: Any
) -> list[TableClient]:
    """Clients of two tables created from the same synthesized shop template (staging and prod)."""
    return [
        TableClient(bundled_model, local_deploy(shop_template, name_prefix=prefix).table_name("DataTable"),
                    client=dynamodb_client)
        for prefix in ("staging-", "prod-")
    ]


def place(table: TableClient, token: str, order_id: str) -> None:
    with table.transaction(client_request_token=token) as tx:
        tx.put("Order", {"user_id": "u1", "order_id": order_id, "created_at": T0, "status": "PENDING"}, create_only=True)


def orders(table: TableClient) -> list[str]:
    return [o["order_id"] for o in table.query("user's orders newest first", user_id="u1")]


def test_one_token_on_two_tables_writes_both(two_tables: list[TableClient]) -> None:
    staging, prod = two_tables
    # GIVEN the same request (same token, same writes) committed on two tables within seconds
    place(staging, "tok-tx-1", "o1")
    place(prod, "tok-tx-1", "o1")
    # THEN each table has the order: the two tables' transactions are two transactions
    assert (orders(staging), orders(prod)) == (["o1"], ["o1"])
    # AND the tokens sent differ per table, each of DynamoDB's maximum 36 characters
    sent = [t.transaction(client_request_token="tok-tx-1").request_token for t in two_tables]
    assert sent[0] != sent[1] and {len(s) for s in sent} == {36}
    # AND a retry on one table is still applied once, without error (create_only would refuse a second write)
    place(prod, "tok-tx-1", "o1")
    assert orders(prod) == ["o1"]


def test_one_token_for_other_writes_on_one_table_is_refused(two_tables: list[TableClient]) -> None:
    table = two_tables[0]
    place(table, "tok-tx-2", "o2")
    # WHEN the same token is used, within 10 minutes, for another transaction on the same table
    # THEN it is refused, naming the token and the rule, and nothing of it is written
    with pytest.raises(IdempotencyKeyReusedError, match="client_request_token 'tok-tx-2' was already used") as err:
        place(table, "tok-tx-2", "o3")
    assert getattr(err.value.__cause__, "code", None) == "IdempotentParameterMismatchException"
    assert orders(table) == ["o2"]
