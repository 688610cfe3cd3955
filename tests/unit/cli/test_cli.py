"""Unit tests for ``python -m constructs_lib``: describe / export targets, output and exit codes.

Model targets only (pure Python); app targets, which load the AWS CDK, are tested in
``tests/synth/test_model_docs.py``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from constructs_lib.__main__ import load_models, main
from constructs_lib.codegen import CodegenError
from constructs_lib.docgen.describe import describe
from constructs_lib.evolution.exceptions import BreakingChangeError, ContractReadError, EvolutionError, LockError
from constructs_lib.exceptions import CliError, TargetError
from constructs_lib.model import ModelError
from examples.shop.model import shop_model

TWO_MODELS = """
from constructs_lib.model import Entity, Model

first = Model("first", entities=[Entity("A", pk="A#{a_id}", fields=["a_id"])])
second = Model("second", entities=[Entity("B", pk="B#{b_id}", fields=["b_id"])])
alias = first  # the same model twice in the globals is described once
"""


@pytest.fixture
def two_models(tmp_path: Path) -> Path:
    path = tmp_path / "two_models.py"
    path.write_text(textwrap.dedent(TWO_MODELS), encoding="utf-8")
    return path


def test_describe_module_prints_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the shop model module is described
    code = main(["describe", "examples.shop.model"])
    # THEN the Markdown of its model is printed
    out = capsys.readouterr().out
    assert code == 0
    assert out == describe(shop_model)


def test_describe_file_target_with_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a file path target and an output file
    output = tmp_path / "model.md"
    # WHEN described
    code = main(["describe", "examples/shop/model.py", "--output", str(output)])
    # THEN the file holds the document and nothing goes to standard output
    captured = capsys.readouterr()
    assert code == 0 and captured.out == ""
    assert output.read_text(encoding="utf-8") == describe(shop_model)
    assert str(output) in captured.err


def test_every_model_of_a_module_once_or_one_by_attribute(two_models: Path) -> None:
    # WHEN a module with two models (one bound twice) is loaded, and then one attribute of it
    path_before = list(sys.path)
    every = load_models(str(two_models))
    one = load_models(f"{two_models}:second")
    # THEN each model appears once, and the attribute selects exactly one
    assert [m.name for _, m in every] == ["first", "second"]
    assert [m.name for _, m in one] == ["second"]
    # AND the file's directory led sys.path only while it loaded
    assert sys.path == path_before


def test_export_workbench_writes_importable_json(tmp_path: Path) -> None:
    # WHEN the shop model is exported for NoSQL Workbench into a file
    output = tmp_path / "shop.json"
    code = main(["export", "--format", "workbench", "examples.shop.model", "-o", str(output)])
    # THEN the file is a Workbench data model of the shop table
    data = json.loads(output.read_text(encoding="utf-8"))
    assert code == 0
    assert data["ModelName"] == "shop"
    assert data["ModelMetadata"]["Version"] == "3.0"
    assert [t["TableName"] for t in data["DataModel"]] == ["shop"]


def test_export_several_models_one_table_each(two_models: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN a module with two models is exported
    code = main(["export", str(two_models)])
    # THEN the one Workbench model has a table per model and is named after the module
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [t["TableName"] for t in data["DataModel"]] == ["first", "second"]
    assert data["ModelName"] == "two_models"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_package.model", "target 'no_such_package.model': no such module"),
        ("examples/nowhere.py", "target 'examples/nowhere.py': no such file"),
        ("constructs_lib.model.fields", "no data model found in target 'constructs_lib.model.fields'"),
        ("examples.shop.model:missing", "has no attribute 'missing'"),
        ("examples.shop.model:ORDER_STATUS", "is a tuple, not a Model"),
    ],
)
def test_bad_targets_exit_2_naming_the_target(target: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN a target that does not exist or holds no model is described
    code = main(["describe", target])
    # THEN the exit status is 2 and the message names the target
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.startswith("python -m constructs_lib describe: ")


def test_target_error_is_a_cli_error_not_a_model_error() -> None:
    # WHEN a target cannot be found THEN the command line's own root names it, and it does not
    # pose as a model error (the model was never reached); ValueError callers still catch it
    with pytest.raises(CliError):
        load_models("no_such_package.model")
    assert issubclass(TargetError, CliError) and issubclass(CliError, ValueError)
    assert not issubclass(TargetError, ModelError)


@pytest.mark.parametrize(
    ("root", "members"),
    [(CliError, [TargetError]), (CodegenError, []), (EvolutionError, [LockError, BreakingChangeError, ContractReadError])],
)
def test_each_package_error_root_is_a_value_error_and_not_a_model_error(
    root: type[Exception], members: list[type[Exception]]
) -> None:
    # THEN every error of the package is under its one root, a ValueError, and none is a ModelError
    assert issubclass(root, ValueError) and not issubclass(root, ModelError)
    assert all(issubclass(member, root) for member in members)


def test_old_import_places_give_the_same_classes() -> None:
    # THEN errors moved into an exceptions module are still importable where they were defined
    from constructs_lib import __main__, model
    from constructs_lib.evolution import cli, contracts, diff
    from constructs_lib.model import exceptions, scope, slices

    assert (__main__.TargetError, cli.LockError, diff.BreakingChangeError, contracts.ContractReadError) == (
        TargetError, LockError, BreakingChangeError, ContractReadError)
    assert scope.AccessScopeError is exceptions.AccessScopeError is model.AccessScopeError
    assert slices.SliceError is exceptions.SliceError and issubclass(slices.SliceError, exceptions.ContractError)


def test_refused_lock_step_exits_1_without_calling_it_a_model_error(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN lock gets a malformed --context pair
    code = main(["lock", "app.py", "--context", "no-equals-sign"])
    # THEN the exit status is 1 and the message names the pair, not a "model error"
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("python -m constructs_lib lock: ") and "'no-equals-sign' must be KEY=VALUE" in err
    assert "model error" not in err


def test_codegen_error_exits_1_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a valid model whose key field has the name of a parameter of TableClient.get
    target = tmp_path / "consistent_model.py"
    target.write_text(
        "from constructs_lib.model import Entity, Model\n"
        "m = Model('m', entities=[Entity('Thing', pk='T#{consistent}', fields=['consistent'])])\n",
        encoding="utf-8",
    )
    # WHEN its typed module is generated
    code = main(["codegen", str(target), "-o", str(tmp_path / "typed.py")])
    # THEN the exit status is 1 and the message names the field
    err = capsys.readouterr().err
    assert code == 1
    assert "cannot generate code for target" in err and "field 'consistent'" in err


def test_model_error_while_loading_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a module whose model breaks a rule
    bad = tmp_path / "bad_model.py"
    bad.write_text(
        "from constructs_lib.model import Entity, Model\n"
        "broken = Model('broken', entities=[Entity('A', pk='CONSTANT', fields=[])])\n",
        encoding="utf-8",
    )
    # WHEN it is described
    code = main(["describe", str(bad)])
    # THEN the exit status is 1 and the model's own message is shown
    err = capsys.readouterr().err
    assert code == 1
    assert "model error in target" in err and "'CONSTANT' is a constant" in err


def test_unwritable_output_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the output path is inside a missing directory
    code = main(["describe", "examples.shop.model", "--output", str(tmp_path / "missing" / "x.md")])
    # THEN the exit status is 1 and the path is named
    assert code == 1
    assert "cannot write" in capsys.readouterr().err


def test_unknown_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN an unsupported export format is asked for
    with pytest.raises(SystemExit) as exit_info:
        main(["export", "--format", "csv", "examples.shop.model"])
    # THEN argparse rejects it with status 2, listing the choices
    assert exit_info.value.code == 2
    assert "invalid choice: 'csv'" in capsys.readouterr().err
