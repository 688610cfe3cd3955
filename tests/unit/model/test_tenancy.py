"""Tenancy rules of the model and the tenant-scoped runtime client (no AWS call is ever made)."""

from __future__ import annotations

import pytest

from constructs_lib.model import AccessPattern, Entity, Model, ModelValidationError
from constructs_lib.runtime import KeyValueError, TableClient, TenantAccessError
from examples.saas.model import saas_model


class NoCalls:
    """A boto3 client stand-in that fails the test if any AWS call is attempted."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"an AWS call ({name}) was attempted")


@pytest.fixture
def acme() -> object:
    return TableClient(saas_model, "docs", client=NoCalls()).for_tenant("acme")  # type: ignore[arg-type]


def test_model_records_the_tenant_prefix_and_safe_indexes() -> None:
    # GIVEN the SaaS model WHEN built THEN every partition key starts with TENANT#{tenant_id}
    assert saas_model.tenant_key_prefix == "TENANT#"
    # AND only ByOwner keeps tenants apart (ByStatus starts with the status)
    assert saas_model.tenant_safe_gsis == ("ByOwner",)
    # AND the tenant field survives the JSON contract
    assert Model.from_json(saas_model.to_json()).tenant_field == "tenant_id"


@pytest.mark.parametrize(
    ("entities", "message"),
    [
        ([Entity("A", pk="A#{a}", sk="A", fields=["a"])], "tenant_field 'tenant_id' is not a field of entity 'A'"),
        ([Entity("A", pk="A#{a}#{tenant_id}", sk="A", fields=["a", "tenant_id"])],
         "must start with literals followed by {tenant_id}"),
        ([Entity("A", pk="T#{tenant_id}#A#{a}", sk="A", fields=["a", "tenant_id"]),
          Entity("B", pk="TENANT#{tenant_id}#B#{b}", sk="B", fields=["b", "tenant_id"])],
         "different literals before {tenant_id}"),
    ],
)
def test_models_that_cannot_confine_a_tenant_are_refused(entities: list[Entity], message: str) -> None:
    # GIVEN entities whose partition keys do not start the same way with the tenant
    # WHEN the model is built THEN it is refused, naming the entity and the rule
    with pytest.raises(ModelValidationError, match=message):
        Model("t", entities=entities, access_patterns=[AccessPattern("p", entity=entities[0].name, sk="=")],
              tenant_field="tenant_id")


@pytest.mark.parametrize("tenant", ["acme#x", "acme*", "ac?me", "", "a b", "a%23", "$", "x" * 129, 7])
def test_tenant_ids_that_could_escape_or_wildcard_are_refused(tenant: object) -> None:
    # GIVEN a tenant id with a separator, an IAM wildcard, an escape or a space WHEN used THEN it is refused
    with pytest.raises(KeyValueError, match="tenant id .* must be 1-128 characters"):
        TableClient(saas_model, "docs", client=NoCalls()).for_tenant(tenant)  # type: ignore[arg-type]
    # AND a plain client refuses to build such a key as well
    with pytest.raises(KeyValueError, match="must be 1-128 characters"):
        TableClient(saas_model, "docs", client=NoCalls()).keys("Tenant", tenant_id=tenant)  # type: ignore[arg-type]


def test_tenant_client_refuses_other_tenants_before_any_call(acme: object) -> None:
    c = acme
    # WHEN another tenant's item is written, read, updated, deleted or batched THEN TenantAccessError, no call made
    with pytest.raises(TenantAccessError, match="tenant_id='globex'.* outside tenant 'acme'"):
        c.put("Tenant", {"tenant_id": "globex", "name": "G"})  # type: ignore[attr-defined]
    with pytest.raises(TenantAccessError):
        c.get("Doc", tenant_id="globex", doc_id="d1")  # type: ignore[attr-defined]
    with pytest.raises(TenantAccessError):
        c.update("Doc", {"tenant_id": "globex", "doc_id": "d1"}, set={"owner": "x"})  # type: ignore[attr-defined]
    with pytest.raises(TenantAccessError):
        c.delete("Doc", {"tenant_id": "acmecorp", "doc_id": "d1"})  # type: ignore[attr-defined]
    with pytest.raises(TenantAccessError):
        c.batch_get([("Doc", {"tenant_id": "acme", "doc_id": "1"}), ("Doc", {"tenant_id": "globex", "doc_id": "1"})])  # type: ignore[attr-defined]
    with pytest.raises(TenantAccessError):
        c.batch_write(puts=[("Tenant", {"tenant_id": "globex", "name": "G"})])  # type: ignore[attr-defined]
    with pytest.raises(TenantAccessError):
        c.transaction().put("Tenant", {"tenant_id": "globex", "name": "G"})  # type: ignore[attr-defined]
    with pytest.raises(TenantAccessError, match="outside tenant 'acme'"):
        c.query("docs of an owner", tenant_id="globex", owner="o")  # type: ignore[attr-defined]
    # AND a pattern on a GSI that mixes tenants is refused by name
    with pytest.raises(TenantAccessError, match="pattern 'docs by status' reads GSI 'ByStatus'"):
        c.query("docs by status", status="DRAFT")  # type: ignore[attr-defined]


def test_tenant_client_fills_in_its_tenant(acme: object) -> None:
    # GIVEN keys without the tenant field WHEN built THEN the client's tenant is used
    assert acme.keys("Doc", doc_id="d1") == {"PK": "TENANT#acme#DOC#d1", "SK": "DOC"}  # type: ignore[attr-defined]


def test_for_tenant_on_a_model_without_a_tenant_field_is_refused_before_loading_the_tenant_client() -> None:
    # GIVEN a model without a tenant field, in a process where the tenant client cannot be loaded
    # (as in a function's asset, which ships runtime/tenant.py with tenant models only)
    import sys

    plain = Model("plain", entities=[Entity("A", pk="A#{a}", fields=["a"])],
                  access_patterns=[AccessPattern("a by id", entity="A")])
    saved = sys.modules.pop("constructs_lib.runtime.tenant", None)
    sys.modules["constructs_lib.runtime.tenant"] = None  # type: ignore[assignment]  # import raises
    try:
        # WHEN for_tenant is called THEN it is refused with the typed error naming the model
        with pytest.raises(TenantAccessError, match="model 'plain' declares no tenant_field"):
            TableClient(plain, "t", client=NoCalls()).for_tenant("acme")  # type: ignore[arg-type]
    finally:
        del sys.modules["constructs_lib.runtime.tenant"]
        if saved is not None:
            sys.modules["constructs_lib.runtime.tenant"] = saved
