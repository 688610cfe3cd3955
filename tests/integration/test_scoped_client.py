"""A client with a declared access scope, on DynamoDB Local: in-scope calls work, everything else is
refused with ``OutOfScopeError`` before a single request is sent (a botocore hook counts them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from request_count import Calls

from constructs_lib.model import AccessScope, Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.environment import ENV_ACCESS_SCOPE, ENV_MODEL_PATH, ENV_TABLE_NAME
from constructs_lib.runtime.exceptions import OutOfScopeError
from constructs_lib.testing import LocalDeployment
from examples.saas.model import saas_model
from examples.shop.model import shop_model

pytestmark = pytest.mark.integration

#: The orders API's declared scope (examples/shop/stack.py).
ORDERS_SCOPE = AccessScope(
    patterns=["user's orders newest first", "order by id", "items of an order"],
    writes={"Order": ["transaction_put", "update"], "OrderItem": ["transaction_put"]},
)
CREATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ORDER = {"user_id": "u1", "order_id": "o1", "created_at": CREATED}


def scoped_client(model: Model, scope: AccessScope, name: str, client: Any, tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> TableClient:
    """``TableClient.from_environment()`` as in a generated function: model file, table name, scope."""
    path = tmp_path / f"{model.name}.json"
    path.write_text(model.to_json(), encoding="utf-8")
    monkeypatch.setenv(ENV_MODEL_PATH, str(path))
    monkeypatch.setenv(ENV_TABLE_NAME, name)
    monkeypatch.setenv(ENV_ACCESS_SCOPE, scope.to_json())
    return TableClient.from_environment(client=client)


@pytest.fixture
def shop(synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., LocalDeployment],
         dynamodb_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TableClient, Calls]]:
    (name,) = local_deploy(synth_table_template(shop_model), name_prefix="scope-").tables.values()
    calls = Calls(dynamodb_client)
    yield scoped_client(shop_model, ORDERS_SCOPE, name, dynamodb_client, tmp_path, monkeypatch), calls
    calls.close()


def test_declared_calls_reach_dynamodb(shop: tuple[TableClient, Calls]) -> None:
    table, calls = shop
    # GIVEN the orders API's scope WHEN it places an order and reads it back the declared ways
    with table.transaction() as tx:
        tx.put("Order", {**ORDER, "status": "PENDING"}, create_only=True)
        tx.put("OrderItem", {"order_id": "o1", "line": 1, "sku": "S1", "quantity": 2}, create_only=True)
    table.update("Order", ORDER, set={"status": "PAID"})
    # THEN every call went through
    assert [o["status"] for o in table.query("user's orders newest first", user_id="u1").items] == ["PAID"]
    assert len(table.query("order by id", order_id="o1").items) == 1
    assert len(table.query("items of an order", order_id="o1").items) == 1
    assert calls.count == 5


REFUSED: list[tuple[str, Callable[[TableClient], Any], str]] = [
    ("undeclared pattern", lambda t: t.query("user profile", user_id="u1"), "access pattern 'user profile'"),
    ("get without a GetItem pattern", lambda t: t.get("Order", **ORDER), "get of Order"),
    ("plain put of a transaction-only entity", lambda t: t.put("Order", {**ORDER, "status": "PENDING"}),
     "put of Order"),
    ("undeclared delete", lambda t: t.delete("Order", ORDER), "delete of Order"),
    ("update of another entity", lambda t: t.update("User", {"user_id": "u1"}, set={"email": "a@b.c"}),
     "update of User"),
    ("batch get", lambda t: t.batch_get([("Order", ORDER)]), "batch_get of Order"),
    ("batch write", lambda t: t.batch_write(puts=[("OrderItem", {"order_id": "o1", "line": 1, "sku": "S",
                                                                 "quantity": 1})]), "batch_put of OrderItem"),
    ("transaction put of another entity", lambda t: t.transaction().put("User", {"user_id": "u1", "email": "a@b.c"}),
     "transaction_put of User"),
    ("transaction delete", lambda t: t.transaction().delete("Order", ORDER), "transaction_delete of Order"),
    ("condition check", lambda t: t.transaction().condition_check("Order", ORDER), "condition_check of Order"),
]


@pytest.mark.parametrize(("call", "named"), [(c, n) for _, c, n in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_out_of_scope_calls_are_refused_before_any_request(
    shop: tuple[TableClient, Calls], call: Callable[[TableClient], Any], named: str
) -> None:
    table, calls = shop
    # WHEN the client is asked for something its scope does not declare
    with pytest.raises(OutOfScopeError) as raised:
        call(table)
    # THEN the error names it and the declared scope, AND nothing reached DynamoDB
    assert named in str(raised.value) and "declared access scope (patterns [" in str(raised.value)
    assert calls.count == 0


def test_a_tenant_scope_confines_the_client_and_its_tenant_clients(
    synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., LocalDeployment],
    dynamodb_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a function scoped to tenant acme's documents
    (name,) = local_deploy(synth_table_template(saas_model), name_prefix="scope-saas-").tables.values()
    scope = AccessScope(patterns=["document latest"], writes={"Doc": ["put"]}, tenant="acme")
    table = scoped_client(saas_model, scope, name, dynamodb_client, tmp_path, monkeypatch)
    table.put("Doc", {"tenant_id": "acme", "doc_id": "d1", "owner": "ann", "status": "DRAFT"})
    assert table.for_tenant("acme").get("Doc", doc_id="d1") is not None
    calls = Calls(dynamodb_client)
    try:
        # WHEN it reaches for another tenant, directly or through a tenant client
        with pytest.raises(OutOfScopeError, match="tenant_id='globex'"):
            table.query("document latest", tenant_id="globex", doc_id="d1")
        with pytest.raises(OutOfScopeError, match="tenant 'globex'"):
            table.for_tenant("globex")
        with pytest.raises(OutOfScopeError, match="put of Doc with tenant_id='globex'"):
            table.put("Doc", {"tenant_id": "globex", "doc_id": "d1", "owner": "ann", "status": "DRAFT"})
        with pytest.raises(OutOfScopeError, match="access pattern 'docs of an owner'"):
            table.for_tenant("acme").query("docs of an owner", owner="ann")
        # THEN nothing reached DynamoDB
        assert calls.count == 0
    finally:
        calls.close()
