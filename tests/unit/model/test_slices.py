"""Slices (constructs_lib.model.slices): what a function uses, its file format, check_slice, and the
cold-start check by slice in the runtime against a published contract served by a local SSM endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from constructs_lib.model import AccessPattern, AccessScope, Entity, Field, Index, IndexKey, Model
from constructs_lib.model.contract_file import build_contract, contract_json, read_contract
from constructs_lib.model.slices import (
    SliceError,
    check_slice,
    merge_slices,
    published_json,
    read_published,
    read_slice,
    slice_of,
)
from constructs_lib.runtime import contract
from constructs_lib.runtime.exceptions import ContractBreakError, ContractUnavailableError, ModelMismatchError
from constructs_lib.testing.local_ssm import LocalSsm

PARAMETER = "/shop/data/contract"


def shop(*, email_template: str = "EMAIL#{email}", extra_entity: bool = False) -> Model:
    """Customer (table + GSI1 by email) and Order (table + GSI2 by status); optionally a new
    entity writing a new index with a new pattern (an additive change)."""
    entities = [
        Entity("Customer", pk="CUSTOMER#{customer_id}", sk="PROFILE", fields={"customer_id": Field(), "email": Field()},
               indexes={"GSI1": IndexKey(pk=email_template, sk="CUSTOMER")}),
        Entity("Order", pk="CUSTOMER#{customer_id}", sk="ORDER#{order_id}",
               fields={"customer_id": Field(), "order_id": Field(), "status": Field()},
               indexes={"GSI2": IndexKey(pk="STATUS#{status}", sk="ORDER#{order_id}")}),
    ]
    indexes = [Index("GSI1"), Index("GSI2")]
    patterns = [AccessPattern("customer by email", "Customer", index="GSI1"),
                AccessPattern("orders by status", "Order", index="GSI2"),
                AccessPattern("customer orders", "Order", sk="begins_with")]
    if extra_entity:
        entities.append(Entity("Coupon", pk="COUPON#{code}", sk="COUPON", fields={"code": Field(), "kind": Field()},
                               indexes={"GSI3": IndexKey(pk="KIND#{kind}", sk="COUPON#{code}")}))
        indexes.append(Index("GSI3"))
        patterns.append(AccessPattern("coupons by kind", "Coupon", index="GSI3"))
    return Model("shop", entities=entities, indexes=indexes, access_patterns=patterns)


ORDERS = AccessScope(patterns=["orders by status"])
EMAILS = AccessScope(patterns=["customer by email"], writes={"Order": ["put"]})


# The slice ----------------------------------------------------------------------------------------
def test_a_scoped_slice_holds_the_entities_and_indexes_the_scope_uses() -> None:
    # GIVEN a function scoped to one GSI pattern, and one reading by email and writing orders
    # WHEN their slices are taken THEN each names exactly what it uses, with its fingerprints
    orders, emails = slice_of(shop(), ORDERS, consumer="Orders"), slice_of(shop(), EMAILS)
    assert (sorted(orders.entities), sorted(orders.indexes)) == (["Order"], ["GSI2"])
    assert (sorted(emails.entities), sorted(emails.indexes)) == (["Customer", "Order"], ["GSI1"])
    # AND without a scope the slice is the whole model
    whole = slice_of(shop())
    assert (sorted(whole.entities), sorted(whole.indexes)) == (["Customer", "Order"], ["GSI1", "GSI2"])
    assert orders.entities["Order"] == whole.entities["Order"] and orders.model_name == "shop"


def test_slice_files_round_trip_and_merge_per_consumer(tmp_path: Path) -> None:
    # GIVEN two functions' slices written as one consumer's file
    merged = merge_slices("reports", [slice_of(shop(), ORDERS), slice_of(shop(), EMAILS)])
    path = tmp_path / "reports.json"
    path.write_text(merged.to_json(), encoding="utf-8")
    # WHEN read back THEN it is the same slice, with the documented format
    assert read_slice(path) == merged
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["format"], data["format_version"], data["consumer"]) == ("constructs_lib.slice", 1, "reports")
    assert sorted(data["entities"]) == ["Customer", "Order"] and sorted(data["indexes"]) == ["GSI1", "GSI2"]


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", r"slice file '.*bad.json' is not valid JSON .*contract slice TARGET"),
    ("[]", r"must be a JSON object, got list"),
    ('{"format": "constructs_lib.contract"}', r"format 'constructs_lib.contract' is not 'constructs_lib.slice'"),
    ('{"format": "constructs_lib.slice", "format_version": 9}', r"format_version 9 is newer .* upgrade constructs_lib"),
    ('{"format": "constructs_lib.slice", "format_version": 1, "consumer": "c", "model_name": "m", '
     '"contract_fingerprint": "xyz", "entities": {}, "indexes": {}}', r"contract_fingerprint 'xyz' is not a fingerprint"),
    ('{"format": "constructs_lib.slice", "format_version": 1, "consumer": "c", "model_name": "m", '
     f'"contract_fingerprint": "{"a" * 32}", "entities": {{"Order": 1}}, "indexes": {{}}}}',
     r"entities\['Order'\] 1 is not a fingerprint"),
])
def test_malformed_slice_files_are_refused_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SliceError, match=message):
        read_slice(path)
    with pytest.raises(SliceError, match=r"slice file '.*missing.json' cannot be read"):
        read_slice(tmp_path / "missing.json")


# check_slice ----------------------------------------------------------------------------------------
def test_additive_producer_changes_break_no_slice() -> None:
    # GIVEN the producer adds an entity, an index and a pattern
    grown = build_contract(shop(extra_entity=True))
    checked = read_contract(grown, Model)
    # THEN every slice of the old model still holds
    for scope in (ORDERS, EMAILS, None):
        assert check_slice(slice_of(shop(), scope), checked, model=shop()) == []


def test_a_changed_template_breaks_exactly_the_slices_using_it_naming_old_and_new() -> None:
    # GIVEN the producer changes Customer's GSI1 template
    changed = read_contract(build_contract(shop(email_template="MAIL#{email}")), Model)
    # WHEN the slices are checked
    breaks = check_slice(slice_of(shop(), EMAILS), changed, model=shop())
    # THEN the email reader breaks on Customer and GSI1, each saying what changed old -> new
    assert [(b.kind, b.name) for b in breaks] == [("entity", "Customer"), ("index", "GSI1")]
    assert breaks[0].describe() == "entity 'Customer' changed: Customer GSI1 pk template: 'EMAIL#{email}' -> 'MAIL#{email}'"
    assert "GSI1 Customer pk template: 'EMAIL#{email}' -> 'MAIL#{email}'" in breaks[1].describe()
    # AND the orders function, which uses neither, does not break
    assert check_slice(slice_of(shop(), ORDERS), changed, model=shop()) == []


def test_a_slice_naming_an_entity_the_contract_lacks_breaks_naming_it() -> None:
    # GIVEN a slice of the grown model checked against the old contract (Coupon and GSI3 missing)
    piece = slice_of(shop(extra_entity=True), AccessScope(patterns=["coupons by kind"]))
    breaks = check_slice(piece, read_contract(build_contract(shop()), Model))
    # THEN both are named as missing
    assert [b.describe() for b in breaks] == ["entity 'Coupon' is not in the contract any more",
                                              "index 'GSI3' is not in the contract any more"]


# The runtime check at cold start --------------------------------------------------------------------
@pytest.fixture
def ssm() -> LocalSsm:
    with LocalSsm() as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contract, "_PUBLISHED", {})


def ssm_client(server: LocalSsm):  # type: ignore[no-untyped-def]
    import boto3

    return boto3.client("ssm", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="local",
                        aws_secret_access_key="local")


def test_cold_start_passes_after_an_additive_change_and_reads_the_parameter_once(ssm: LocalSsm) -> None:
    # GIVEN the producer published its grown model's contract
    ssm.parameters[PARAMETER] = published_json(shop(extra_entity=True))
    env = {contract.ENV_CONTRACT_PARAMETER: PARAMETER}
    # WHEN two clients of the old model start in one process THEN both pass, with one GetParameter
    contract.verify(shop(), environ=env, scope=ORDERS, client=ssm_client(ssm))
    contract.verify(shop(), environ=env, scope=EMAILS, client=ssm_client(ssm))
    assert ssm.requests == [("GetParameter", PARAMETER)]


def test_cold_start_refuses_a_changed_template_the_slice_uses_naming_it(ssm: LocalSsm) -> None:
    # GIVEN the producer changed Customer's GSI1 template
    ssm.parameters[PARAMETER] = published_json(shop(email_template="MAIL#{email}"))
    env = {contract.ENV_CONTRACT_PARAMETER: PARAMETER}
    # WHEN the email reader starts THEN ContractBreakError (a ModelMismatchError) names entity, index, old -> new
    with pytest.raises(ContractBreakError, match=r"entity 'Customer' changed: Customer GSI1 pk template: "
                                                 r"'EMAIL#\{email\}' -> 'MAIL#\{email\}'") as refused:
        contract.verify(shop(), environ=env, scope=EMAILS, client=ssm_client(ssm))
    assert isinstance(refused.value, ModelMismatchError)
    assert [b.name for b in refused.value.breaks] == ["Customer", "GSI1"]
    # AND the orders function starts
    contract.verify(shop(), environ=env, scope=ORDERS, client=ssm_client(ssm))
    # AND without the model in the parameter, the break still names the entity, with both fingerprints
    contract._PUBLISHED.clear()
    ssm.parameters[PARAMETER] = published_json(shop(email_template="MAIL#{email}"), include_model=False)
    with pytest.raises(ContractBreakError, match=r"entity 'Customer' changed: fingerprint [0-9a-f]{32} -> [0-9a-f]{32}"):
        contract.verify(shop(), environ=env, scope=EMAILS, client=ssm_client(ssm))


def test_an_unreadable_or_malformed_parameter_refuses_to_start_naming_it(ssm: LocalSsm) -> None:
    env = {contract.ENV_CONTRACT_PARAMETER: PARAMETER}
    # GIVEN no such parameter THEN ContractUnavailableError naming it and the cause (never a skipped check)
    with pytest.raises(ContractUnavailableError, match=r"SSM parameter '/shop/data/contract', cannot be read "
                                                       r"\(GetParameter failed with ParameterNotFound") as missing:
        contract.verify(shop(), environ=env, client=ssm_client(ssm))
    assert missing.value.parameter == PARAMETER and missing.value.__cause__ is not None
    # AND a value that is not a published contract
    ssm.parameters[PARAMETER] = "33179642170de18b53afb6c39dc84832"
    with pytest.raises(ContractUnavailableError,
                       match=r"SSM parameter '/shop/data/contract' is not valid JSON .*redeploy the producer"):
        contract.verify(shop(), environ=env, client=ssm_client(ssm))
    # AND an endpoint nobody serves
    contract._PUBLISHED.clear()
    ssm.close()
    with pytest.raises(ContractUnavailableError, match=r"GetParameter failed: EndpointConnectionError"):
        contract.verify(shop(), environ=env, client=ssm_client(ssm))


def test_published_document_reads_its_own_fingerprints() -> None:
    document = read_published(published_json(shop()), source="x")
    assert document.model == shop().to_dict() and document.model_name == "shop"
    assert json.loads(contract_json(build_contract(shop())))["fingerprints"]["model"] == document.fingerprint
