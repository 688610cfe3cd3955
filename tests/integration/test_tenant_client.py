"""A tenant-scoped client on DynamoDB Local, on a table created from the synthesized template."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from constructs_lib.runtime import TableClient, TenantAccessError
from constructs_lib.testing import LocalDeployment
from examples.saas.model import saas_model

pytestmark = pytest.mark.integration


@pytest.fixture
def docs(synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., LocalDeployment],
         dynamodb_client: Any) -> TableClient:
    deployment = local_deploy(synth_table_template(saas_model), name_prefix="saas-")
    (name,) = deployment.tables.values()
    return TableClient(saas_model, name, client=dynamodb_client)


def test_tenants_see_only_their_own_items(docs: TableClient, dynamodb_client: Any) -> None:
    # GIVEN documents of tenants acme and acmecorp, written by an operator client
    for tenant in ("acme", "acmecorp"):
        docs.put("Doc", {"tenant_id": tenant, "doc_id": "d1", "owner": "ann", "status": "DRAFT"})
    acme = docs.for_tenant("acme")
    # WHEN acme reads through its scoped client
    mine = acme.query("docs of an owner", owner="ann").items
    # THEN it finds its own document only, through the tenant-safe index, with the tenant filled in
    assert [(d["tenant_id"], d["doc_id"]) for d in mine] == [("acme", "d1")]
    assert acme.get("Doc", doc_id="d1")["tenant_id"] == "acme"  # type: ignore[index]
    # AND writes land in its tenant and nowhere else
    acme.put("Doc", {"doc_id": "d2", "owner": "ann", "status": "REVIEW"})
    assert docs.get("Doc", tenant_id="acme", doc_id="d2") is not None
    # AND reaching for acmecorp fails before any call, leaving acmecorp untouched
    with pytest.raises(TenantAccessError):
        acme.delete("Doc", {"tenant_id": "acmecorp", "doc_id": "d1"})
    assert docs.get("Doc", tenant_id="acmecorp", doc_id="d1") is not None


def test_tenant_client_passes_conditions_filters_and_projections(docs: TableClient) -> None:
    from constructs_lib.runtime import ConditionNotMetError, attr

    # GIVEN two documents of acme and one of acmecorp with the same owner
    for tenant, doc, status in (("acme", "d1", "DRAFT"), ("acme", "d2", "REVIEW"), ("acmecorp", "d1", "REVIEW")):
        docs.put("Doc", {"tenant_id": tenant, "doc_id": doc, "owner": "ann", "status": status, "pages": 3})
    acme = docs.for_tenant("acme")
    # WHEN acme filters and projects THEN it sees its own matching document, cut to the attributes asked
    found = acme.query("docs of an owner", owner="ann", filter=attr("status") == "REVIEW", attributes=["pages"]).items
    assert [(d["tenant_id"], d["doc_id"], d.get("pages"), "status" in d) for d in found] == [("acme", "d2", 3, False)]
    assert set(acme.get("Doc", doc_id="d1", attributes=["status"]) or {}) == {"_type", "tenant_id", "doc_id", "status"}
    assert [d["doc_id"] for d in acme.query_all("docs of an owner", owner="ann", filter=attr("pages") > 2)] == ["d1", "d2"]
    # WHEN acme updates under a condition that does not hold THEN it is refused with its stored item
    with pytest.raises(ConditionNotMetError) as caught:
        acme.update("Doc", {"doc_id": "d1"}, set={"status": "REVIEW"}, condition=attr("status") == "PUBLISHED")
    assert caught.value.item is not None and caught.value.item["tenant_id"] == "acme"
