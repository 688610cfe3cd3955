"""``AccessScope`` (the declared value) and the IAM statements derived from it, without the CDK."""

from __future__ import annotations

import pytest

from constructs_lib.constructs.scope_policy import ScopeStatement, derive_statements
from constructs_lib.model import (
    ANY_TENANT,
    AccessScope,
    AccessScopeError,
    Entity,
    Model,
    principal_tag,
)
from examples.iot.model import iot_model
from examples.saas.model import saas_model
from examples.shop.model import shop_model


def test_orders_api_scope_derives_per_action_statements() -> None:
    # GIVEN the orders API's scope on the shop model
    scope = AccessScope(patterns=["user's orders newest first", "order by id", "items of an order"],
                        writes={"Order": ["transaction_put", "update"], "OrderItem": ["transaction_put"]})
    # WHEN the statements are derived
    statements = derive_statements(shop_model, scope)
    # THEN each action gets exactly the key shapes of the entities declared for it, GSI1 its own
    assert statements == [
        ScopeStatement(("dynamodb:Query",), None, ("ORDER#*", "USER#*")),
        ScopeStatement(("dynamodb:UpdateItem",), None, ("USER#*",)),
        ScopeStatement(("dynamodb:PutItem",), None, ("ORDER#*", "USER#*"), transaction_only=True),
        ScopeStatement(("dynamodb:Query",), "GSI1", ("ORDER#*",)),
    ]
    assert not any("Scan" in a for s in statements for a in s.actions)


def test_a_plain_write_makes_the_transaction_only_one_redundant() -> None:
    scope = AccessScope(writes={"Product": ["put", "transaction_put", "batch_put", "batch_delete"]})
    assert derive_statements(shop_model, scope) == [
        ScopeStatement(("dynamodb:BatchWriteItem", "dynamodb:PutItem"), None, ("PRODUCT#*",)),
    ]


def test_every_placeholder_after_the_prefix_is_a_wildcard() -> None:
    # GIVEN readings partitioned by sensor and month: SENSOR#{sensor_id}#{ts:month}
    (statement,) = derive_statements(iot_model, AccessScope(writes={"Reading": ["batch_put"]}))
    assert statement.leading_keys == ("SENSOR#*#*",)


@pytest.mark.parametrize(("tenant", "expected"), [
    ("acme", "TENANT#acme#DOC#*"),
    (principal_tag("org"), "TENANT#${aws:PrincipalTag/org}#DOC#*"),
    (ANY_TENANT, "TENANT#*#DOC#*"),
])
def test_the_tenant_is_a_literal_a_principal_tag_or_explicitly_any(tenant: str, expected: str) -> None:
    (statement,) = derive_statements(saas_model, AccessScope(patterns=["document latest"], tenant=tenant))
    assert statement.actions == ("dynamodb:GetItem",) and statement.leading_keys == (expected,)


def test_iam_wildcards_in_key_literals_are_escaped() -> None:
    model = Model("odd", entities=[Entity("Star", pk="A*B?#{id}", sk="S", fields=["id"])])
    (statement,) = derive_statements(model, AccessScope(writes={"Star": ["put"]}))
    assert statement.leading_keys == ("A${*}B${?}#*",)


def test_a_partition_key_starting_with_a_field_is_refused() -> None:
    model = Model("bare", entities=[Entity("Thing", pk="{thing_id}#X", sk="S", fields=["thing_id"])])
    with pytest.raises(AccessScopeError, match=r"starts with field \{thing_id\}.*every partition"):
        derive_statements(model, AccessScope(writes={"Thing": ["update"]}))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "declares nothing"),
    ({"patterns": "user profile"}, "not one string"),
    ({"writes": {"Order": ["upsert"]}}, "each write must be one of"),
    ({"writes": {"Order": []}}, "each write must be one of"),
    ({"patterns": ["x"], "tenant": "a b"}, "must be a tenant id"),
])
def test_bad_scopes_are_refused_with_the_rule(kwargs: dict, message: str) -> None:
    with pytest.raises(AccessScopeError, match=message):
        AccessScope(**kwargs)


def test_names_are_checked_against_the_model() -> None:
    with pytest.raises(AccessScopeError, match="writes entity 'Cart' is not in model 'shop'"):
        AccessScope(writes={"Cart": ["put"]}).validate(shop_model)
    with pytest.raises(AccessScopeError, match="batch_gets entity 'Cart'"):
        AccessScope(batch_gets=["Cart"]).validate(shop_model)
    with pytest.raises(AccessScopeError, match="reads GSI 'ByStatus'"):
        AccessScope(patterns=["docs by status"], tenant="acme").validate(saas_model)


def test_json_round_trip_and_summary() -> None:
    scope = AccessScope(patterns=["order by id"], writes={"Order": ["update", "put"]}, batch_gets=["User"])
    assert AccessScope.from_json(scope.to_json()) == scope
    assert scope.writes == {"Order": ("put", "update")}
    assert scope.summary() == "patterns ['order by id']; writes {Order: put/update}; batch_gets ['User']"
    with pytest.raises(AccessScopeError, match="unknown key"):
        AccessScope.from_json('{"patterns": ["x"], "scan": true}')


def test_the_runtime_reads_the_scope_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from constructs_lib.runtime.environment import ENV_ACCESS_SCOPE
    from constructs_lib.runtime.scope import scope_from_environment

    monkeypatch.delenv(ENV_ACCESS_SCOPE, raising=False)
    assert scope_from_environment(shop_model) is None
    monkeypatch.setenv(ENV_ACCESS_SCOPE, AccessScope(patterns=["order by id"]).to_json())
    assert scope_from_environment(shop_model) == AccessScope(patterns=["order by id"])
    # AND a scope naming what the bundled model does not declare is refused, not ignored
    monkeypatch.setenv(ENV_ACCESS_SCOPE, AccessScope(patterns=["nope"]).to_json())
    with pytest.raises(AccessScopeError, match="pattern 'nope' is not declared"):
        scope_from_environment(shop_model)
    monkeypatch.setenv(ENV_ACCESS_SCOPE, "{not json")
    with pytest.raises(AccessScopeError, match="malformed"):
        scope_from_environment(shop_model)


def test_top_level_exports_need_no_cdk() -> None:
    import constructs_lib

    assert constructs_lib.AccessScope is AccessScope and constructs_lib.ANY_TENANT == "*"
