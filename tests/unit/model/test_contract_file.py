"""The contract file (constructs_lib.model.contract_file): round trip, refusals, and the command line."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.__main__ import main
from constructs_lib.model import (
    ContractFormatError,
    ContractIntegrityError,
    ContractVersionError,
    Model,
)
from constructs_lib.model.contract_file import FORMAT, FORMAT_VERSION, build_contract, contract_json, read_contract
from constructs_lib.model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints
from constructs_lib.runtime.contract import fingerprint as runtime_fingerprint
from examples.shop.model import shop_model


@pytest.fixture
def document() -> dict[str, Any]:
    return build_contract(shop_model, stream_view_type="NEW_AND_OLD_IMAGES")


def test_the_document_holds_model_fingerprints_and_table(document: dict[str, Any]) -> None:
    # GIVEN the shop model's contract WHEN its fields are read THEN they are the documented ones
    assert document["format"] == FORMAT and document["format_version"] == FORMAT_VERSION == 1
    assert document["model_name"] == "shop" and document["model"] == shop_model.to_dict()
    assert document["fingerprints"] == {
        "model": fingerprint(shop_model), "entities": entity_fingerprints(shop_model),
        "indexes": index_fingerprints(shop_model),
    }
    assert document["fingerprints"]["model"] == runtime_fingerprint(shop_model)  # the SSM parameter's value
    table = document["table"]
    assert table["partition_key"] == {"name": "PK", "type": "S"} and table["sort_key"] == {"name": "SK", "type": "S"}
    assert table["ttl_attribute"] == "expires_at" and table["stream_view_type"] == "NEW_AND_OLD_IMAGES"
    gsi2 = next(i for i in table["indexes"] if i["name"] == "GSI2")
    assert gsi2["projection"] == {"type": "INCLUDE", "non_key_attributes": ["_type"]}  # KEYS_ONLY + entity attribute
    assert "table_name" not in table and "table_arn" not in table  # not known: left out, never a token


@pytest.mark.parametrize("form", ["path", "pathlike", "text", "mapping"])
def test_round_trip_from_every_form(document: dict[str, Any], tmp_path: Path, form: str) -> None:
    # GIVEN the contract written to a file
    path = tmp_path / "shop.contract.json"
    path.write_text(contract_json(document), encoding="utf-8")
    source: Any = {"path": str(path), "pathlike": path, "text": path.read_text(), "mapping": json.loads(path.read_text())}[form]
    # WHEN a consumer reads it
    model = Model.from_contract(source)
    # THEN it is the producer's model, and the contract's table survives too
    assert model == shop_model and model.to_json() == shop_model.to_json()
    assert read_contract(source, Model).table == document["table"]


def test_concrete_names_are_recorded_and_a_bad_view_type_refused() -> None:
    # GIVEN a table name and ARN known at synth WHEN building THEN they are recorded
    doc = build_contract(shop_model, table_name="shop-data", table_arn="arn:aws:dynamodb:eu-west-1:1:table/shop-data")
    assert doc["table"]["table_name"] == "shop-data" and doc["table"]["stream_view_type"] is None
    assert read_contract(doc, Model).table["table_arn"].endswith("/shop-data")
    with pytest.raises(ContractFormatError, match="stream_view_type 'NEW' must be one of"):
        build_contract(shop_model, stream_view_type="NEW")


def edit(document: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data = copy.deepcopy(document)
    change(data)
    return data


def _pop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *head, last = path.split(".")
        for part in head:
            data = data[part]
        del data[last]
    return change


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *head, last = path.split(".")
        for part in head:
            data = data[part]
        data[last] = value
    return change


def _order(data: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in data["model"]["entities"] if e["name"] == "Order")


REFUSED = [
    ("wrong format", _set("format", "constructs_lib.model"), ContractFormatError, "is not a constructs_lib contract"),
    ("newer version", _set("format_version", 2), ContractVersionError, "format_version 2.*upgrade constructs_lib"),
    ("version zero", _set("format_version", 0), ContractFormatError, "versions start at 1"),
    ("version text", _set("format_version", "1"), ContractFormatError, "'format_version' is '1', expected int"),
    ("no model", _pop("model"), ContractFormatError, "has no field 'model'"),
    ("no fingerprints", _pop("fingerprints.entities"), ContractFormatError, "no field 'fingerprints.entities'"),
    ("no key schema", _pop("table.partition_key"), ContractFormatError, "no field 'table.partition_key'"),
    ("no stream field", _pop("table.stream_view_type"), ContractFormatError, "no field 'table.stream_view_type'"),
    ("bad view type", _set("table.stream_view_type", "ALL"), ContractFormatError, "stream_view_type 'ALL'"),
    ("invalid model", _set("model.entities", []), ContractFormatError, "its model is not a valid constructs_lib model"),
    ("tampered entity", _set("fingerprints.entities.Order", "0" * 32), ContractIntegrityError,
     "fingerprint of entity 'Order': '0{32}' in the file"),
    ("edited template", lambda d: _order(d).update(sk="ORDER#V2#{created_at}#{order_id}"), ContractIntegrityError,
     "edited by hand or damaged.*fingerprint of entity 'Order'"),
    ("edited projection", lambda d: d["model"]["indexes"][1].update(projection="ALL"), ContractIntegrityError,
     "fingerprint of index 'GSI2'"),
    ("edited table", _set("table.sort_key", None), ContractIntegrityError, "table 'sort_key'"),
    ("renamed", _set("model_name", "store"), ContractIntegrityError, "model_name 'store' in the file"),
]


@pytest.mark.parametrize(("case", "change", "error", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_each_bad_document_is_refused_naming_the_file(
    document: dict[str, Any], tmp_path: Path, case: str, change: Callable[[dict[str, Any]], None],
    error: type[Exception], message: str,
) -> None:
    # GIVEN a contract file with one thing wrong
    path = tmp_path / "shop.contract.json"
    path.write_text(json.dumps(edit(document, change)), encoding="utf-8")
    # WHEN a consumer reads it THEN the typed error names the file and the problem
    with pytest.raises(error, match=message) as caught:
        Model.from_contract(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(("text", "message"), [
    ("", "is not valid JSON.*truncated"),
    ('{"format": "constructs_lib.contract", "format_version": 1, "mod', "is not valid JSON.*truncated"),
    ("[1, 2]", "is a JSON list, not a constructs_lib.contract object"),
    ("{'format': 1}", "is not valid JSON"),
])
def test_malformed_or_truncated_text_is_refused(tmp_path: Path, text: str, message: str) -> None:
    # GIVEN a file that is not a JSON object WHEN read THEN ContractFormatError says so, naming it
    path = tmp_path / "broken.contract.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ContractFormatError, match=message):
        Model.from_contract(path)


def test_a_truncated_real_contract_and_a_missing_file_are_refused(document: dict[str, Any], tmp_path: Path) -> None:
    # GIVEN the real contract cut in half, and a path with no file
    path = tmp_path / "half.contract.json"
    text = contract_json(document)
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    # WHEN read THEN each is refused with what to do
    with pytest.raises(ContractFormatError, match="truncated.*export it again with python -m constructs_lib contract"):
        Model.from_contract(path)
    with pytest.raises(ContractFormatError, match="does not exist; export it from the producer"):
        Model.from_contract(tmp_path / "missing.contract.json")
    with pytest.raises(ContractFormatError, match="a contract is a path, JSON text or a mapping, got int"):
        Model.from_contract(42)


# The command line ------------------------------------------------------------------------------------
def test_contract_export_of_a_model_module_reads_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the shop model module WHEN exporting its contract
    output = tmp_path / "shop.contract.json"
    code = main(["contract", "export", "examples.shop.model", "-o", str(output)])
    # THEN it exits 0 and the file is the model's contract (no table: no stream known)
    assert code == 0, capsys.readouterr().err
    assert Model.from_contract(output) == shop_model
    assert json.loads(output.read_text())["table"]["stream_view_type"] is None


def test_contract_export_needs_one_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a module holding two models
    module = tmp_path / "two_models.py"
    module.write_text(
        "from examples.shop.model import shop_model\nfrom examples.iot.model import iot_model\n", encoding="utf-8"
    )
    # WHEN exporting without --table THEN exit 2 listing them; --table picks one; an unknown one exits 2
    assert main(["contract", "export", str(module)]) == 2
    assert "holds 2 tables ('shop', 'iot'); choose one with --table NAME" in capsys.readouterr().err
    output = tmp_path / "iot.contract.json"
    assert main(["contract", "export", str(module), "--table", "iot", "-o", str(output)]) == 0
    assert Model.from_contract(output).name == "iot"
    assert main(["contract", "export", str(module), "--table", "nope"]) == 2
    assert "has no table 'nope'; tables: 'shop', 'iot'" in capsys.readouterr().err


def test_every_command_takes_a_contract_file(document: dict[str, Any], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a contract file, a damaged one and a missing one
    good = tmp_path / "shop.contract.json"
    good.write_text(contract_json(document), encoding="utf-8")
    bad = tmp_path / "bad.contract.json"
    bad.write_text(contract_json(edit(document, _set("fingerprints.model", "f" * 32))), encoding="utf-8")
    # WHEN fingerprint, codegen and describe read them
    assert main(["fingerprint", str(good)]) == 0
    assert capsys.readouterr().out == f"{fingerprint(shop_model)}  shop\n"
    typed = tmp_path / "typed.py"
    assert main(["codegen", str(good), "-o", str(typed)]) == 0 and "class ShopTable" in typed.read_text()
    assert main(["describe", str(good)]) == 0 and "Order" in capsys.readouterr().out
    # THEN a damaged contract is a model error (1), a missing one a target error (2)
    assert main(["codegen", str(bad)]) == 1
    assert "does not match the model it holds" in capsys.readouterr().err
    assert main(["describe", str(tmp_path / "missing.contract.json")]) == 2
    assert "no such contract file" in capsys.readouterr().err
