"""The model contract: the key-schema fingerprint and the run-time check of a bundled model
against the deployed table's (constructs_lib.runtime.contract)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.__main__ import main
from constructs_lib.model import AccessPattern, Model
from constructs_lib.runtime import AuditClient, CounterClient, RuntimeClientError, TableClient
from constructs_lib.runtime.contract import fingerprint, key_schema, verify
from constructs_lib.runtime.environment import (
    ENV_AUDIT_SPEC,
    ENV_AUDIT_TABLE,
    ENV_MODEL_FINGERPRINT,
    ENV_MODEL_PATH,
    ENV_SOURCE_TABLE,
)
from constructs_lib.runtime.exceptions import ModelMismatchError
from constructs_lib.runtime.patterns.audit import AuditSpec
from constructs_lib.runtime.patterns.counter import CounterSpec
from examples.shop.model import shop_model


def variant(change: Callable[[dict[str, Any]], None]) -> Model:
    """The shop model with ``change`` applied to its ``to_dict()``."""
    data = copy.deepcopy(shop_model.to_dict())
    change(data)
    return Model.from_dict(data)


def entity(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in data["entities"] if e["name"] == name)


def test_fingerprint_is_128_bits_of_hex_and_deterministic() -> None:
    # GIVEN the shop model and a copy read back from its JSON
    copy_ = Model.from_json(shop_model.to_json())
    # WHEN both are fingerprinted THEN the value is 32 hex digits and equal for both
    assert re.fullmatch(r"[0-9a-f]{32}", fingerprint(shop_model))
    assert fingerprint(copy_) == fingerprint(shop_model) == fingerprint(shop_model.to_dict())


def _extra_pattern(data: dict[str, Any]) -> None:
    data["access_patterns"].append(AccessPattern("orders by id, for reports", entity="Order", index="GSI1").to_dict())


def _reorder(data: dict[str, Any]) -> None:
    data["entities"].reverse()
    data["indexes"].reverse()


@pytest.mark.parametrize("change", [
    _extra_pattern,
    lambda d: d["access_patterns"].pop(),
    lambda d: d.update(name="shop-reporting"),
    lambda d: entity(d, "User").update(description="another text"),
    lambda d: entity(d, "Product").update(required=["name"]),
    _reorder,
], ids=["extra access pattern", "fewer access patterns", "model name", "description", "required", "order"])
def test_what_builds_no_key_leaves_the_fingerprint_unchanged(change: Callable[[dict[str, Any]], None]) -> None:
    # GIVEN a consumer's model differing only in what never shapes a key or an index entry
    consumer = variant(change)
    # THEN it is compatible: the fingerprints are equal
    assert consumer.to_dict() != shop_model.to_dict()
    assert fingerprint(consumer) == fingerprint(shop_model)


@pytest.mark.parametrize("change", [
    lambda d: entity(d, "Product").update(pk="SKU#{sku}"),
    lambda d: entity(d, "OrderItem").update(sk="LINE#{line}"),
    lambda d: entity(d, "OrderItem")["fields"]["line"].update(width=6),
    lambda d: entity(d, "Order")["fields"]["created_at"].update(kind="string"),
    lambda d: entity(d, "Order")["indexes"]["GSI2"].update(when_equals={"status": ["PENDING", "PAID"]}),
    lambda d: entity(d, "User")["indexes"]["GSI1"].update(pk="MAIL#{email}"),
    lambda d: d["indexes"][1].update(projection="ALL"),
    lambda d: d.update(ttl_attribute="ttl"),
    lambda d: d.update(entity_attribute="kind"),
    lambda d: entity(d, "User").update(version_attribute="rev"),
    lambda d: d["entities"].append({**copy.deepcopy(entity(d, "Product")), "name": "Gift", "pk": "GIFT#{sku}"}),
], ids=["pk template", "sk template", "number width", "field kind", "sparse condition", "index template",
        "projection", "ttl attribute", "entity attribute", "version attribute", "extra entity"])
def test_what_shapes_keys_changes_the_fingerprint(change: Callable[[dict[str, Any]], None]) -> None:
    # GIVEN a model that would build other keys, index entries or item attributes than the shop's
    other = variant(change)
    # THEN its fingerprint differs
    assert fingerprint(other) != fingerprint(shop_model)


def test_key_schema_leaves_out_access_patterns_and_descriptions() -> None:
    # GIVEN the key schema of the shop model
    schema = key_schema(shop_model)
    # THEN it holds the indexes and entities' keys, and none of the free text
    assert "access_patterns" not in schema and "name" not in schema
    assert [e["name"] for e in schema["entities"]] == sorted(shop_model.entities)
    assert all("description" not in e and "required" not in e for e in schema["entities"])


def test_verify_without_a_deployed_fingerprint_does_nothing() -> None:
    # GIVEN an environment without the variable (a function on a table its stack owns)
    # WHEN verified THEN nothing is raised, even for a model of another table
    verify(variant(lambda d: d.update(ttl_attribute="ttl")), environ={})


def test_verify_accepts_the_matching_model() -> None:
    # GIVEN the deployed fingerprint of a compatible model WHEN the shop model is verified THEN it passes
    verify(shop_model, environ={ENV_MODEL_FINGERPRINT: fingerprint(variant(_extra_pattern))})


def test_verify_refuses_a_mismatch_naming_both_fingerprints() -> None:
    # GIVEN a deployed table whose model's keys differ from the bundled one
    deployed = fingerprint(variant(lambda d: entity(d, "Product").update(pk="SKU#{sku}")))
    # WHEN the bundled shop model is verified
    with pytest.raises(ModelMismatchError) as caught:
        verify(shop_model, environ={ENV_MODEL_FINGERPRINT: deployed})
    # THEN a typed runtime error names both fingerprints and what to do
    error = caught.value
    assert isinstance(error, RuntimeClientError)
    assert (error.bundled, error.deployed) == (fingerprint(shop_model), deployed)
    assert fingerprint(shop_model) in str(error) and deployed in str(error)
    assert ENV_MODEL_FINGERPRINT in str(error) and "redeploy" in str(error)


@pytest.fixture
def bundled_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A function's environment: the shop model as its bundled model.json and a deployed
    fingerprint of a model with another user key."""
    path = tmp_path / "model.json"
    path.write_text(shop_model.to_json(), encoding="utf-8")
    monkeypatch.setenv(ENV_MODEL_PATH, str(path))
    return {ENV_MODEL_FINGERPRINT: fingerprint(variant(lambda d: entity(d, "Product").update(pk="P#{sku}")))}


def test_table_client_from_environment_refuses_a_mismatch(
    bundled_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a function environment naming the table and a deployed fingerprint that differs
    monkeypatch.setenv("TABLE_NAME", "shop")
    monkeypatch.setenv(ENV_MODEL_FINGERPRINT, bundled_env[ENV_MODEL_FINGERPRINT])
    # WHEN the client is built THEN it refuses before making any boto3 client or request
    with pytest.raises(ModelMismatchError, match=bundled_env[ENV_MODEL_FINGERPRINT]):
        TableClient.from_environment(client=object())
    # AND with the matching fingerprint it is built on the bundled model
    monkeypatch.setenv(ENV_MODEL_FINGERPRINT, fingerprint(shop_model))
    assert TableClient.from_environment(client=object()).model == shop_model


def test_counter_and_audit_clients_from_environment_refuse_a_mismatch(bundled_env: dict[str, str]) -> None:
    # GIVEN the environments a counter-bound function and an audit reader get, plus a differing fingerprint
    spec = CounterSpec(family="views", shards=2, pk_attribute="PK", sk_attribute="SK", entity_attribute="_type")
    counter_env = {spec.env_var: spec.to_json(), spec.env_var + "_TABLE": "shop", **bundled_env}
    audit_env = {ENV_AUDIT_SPEC: AuditSpec(source_pk_attribute="PK", source_sk_attribute="SK").to_json(),
                 ENV_AUDIT_TABLE: "audit", ENV_SOURCE_TABLE: "shop", **bundled_env}
    # WHEN the clients are built THEN both refuse with the typed error
    with pytest.raises(ModelMismatchError, match=bundled_env[ENV_MODEL_FINGERPRINT]):
        CounterClient.from_environment("views", environ=counter_env, client=object())
    with pytest.raises(ModelMismatchError, match=bundled_env[ENV_MODEL_FINGERPRINT]):
        AuditClient.from_environment(environ=audit_env, client=object())
    # AND with the matching fingerprint both are built
    counter_env[ENV_MODEL_FINGERPRINT] = audit_env[ENV_MODEL_FINGERPRINT] = fingerprint(shop_model)
    assert CounterClient.from_environment("views", environ=counter_env, client=object()).table_name == "shop"
    assert AuditClient.from_environment(environ=audit_env, client=object()).audit_table_name == "audit"


def test_cli_prints_each_models_fingerprint(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the fingerprint command runs on the shop model module
    status = main(["fingerprint", "examples.shop.model"])
    # THEN it prints the model's fingerprint and name
    assert status == 0
    assert capsys.readouterr().out == f"{fingerprint(shop_model)}  shop\n"
