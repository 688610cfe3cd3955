"""A relative contract path written in code is read from the project directory of the file that
passed it (the nearest ``cdk.json`` above it), whatever the working directory; without a
``cdk.json`` above that file, from the working directory as before; absolute paths as given."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from constructs_lib.model.contract_file import build_contract, contract_json
from constructs_lib.model.project_paths import project_directory, shown
from examples.shop.model import shop_model

CALLER = '''
from constructs_lib.model import Model
from constructs_lib.model.project_paths import resolve_project_path


def where(path):
    return resolve_project_path(path)


def model(path):
    return Model.from_contract(path)
'''


def caller(directory: Path) -> ModuleType:
    """A module in ``directory`` that passes paths on, as a stack module of an app would."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "reports_stack.py").write_text(CALLER, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"caller_{abs(hash(directory))}", directory / "reports_stack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project: ``cdk.json`` and ``contracts/shop.contract.json`` at its root."""
    root = tmp_path / "shop-reports"
    (root / "contracts").mkdir(parents=True)
    (root / "cdk.json").write_text(json.dumps({"app": "python app.py"}), encoding="utf-8")
    (root / "contracts" / "shop.contract.json").write_text(contract_json(build_contract(shop_model)), encoding="utf-8")
    return root


def test_a_relative_path_is_read_from_the_callers_project_directory(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a stack module in a subdirectory of the project, and another working directory
    stacks = caller(project / "stacks")
    monkeypatch.chdir(tmp_path)
    # WHEN it passes a path relative to the project
    full, show = stacks.where("contracts/shop.contract.json")
    # THEN the path read is under the project directory (the cdk.json's), shown relative to it
    assert (full, show) == (project.resolve() / "contracts/shop.contract.json", "contracts/shop.contract.json")
    # AND Model.from_contract reads that file
    assert stacks.model("contracts/shop.contract.json") == shop_model
    # AND an absolute path is used as given, shown relative to the project when inside it
    absolute = project.resolve() / "contracts" / "shop.contract.json"
    assert stacks.where(absolute) == (absolute, "contracts/shop.contract.json")
    assert stacks.where(tmp_path / "x.json") == (tmp_path / "x.json", str(tmp_path / "x.json"))


def test_without_a_cdk_json_above_the_caller_the_working_directory_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a module outside any project, and a contract in the working directory
    loose = caller(tmp_path / "loose")
    work = tmp_path / "work"
    work.mkdir()
    (work / "shop.contract.json").write_text(contract_json(build_contract(shop_model)), encoding="utf-8")
    monkeypatch.chdir(work)
    # WHEN it passes a relative path THEN it is read from the working directory, as before
    assert loose.where("shop.contract.json") == (work / "shop.contract.json", "shop.contract.json")
    assert loose.model("shop.contract.json") == shop_model
    assert project_directory(tmp_path / "loose" / "reports_stack.py") is None


def test_shown_is_relative_inside_the_base_and_absolute_outside(tmp_path: Path) -> None:
    # GIVEN paths inside and outside a base directory THEN inside ones are relative, others absolute
    assert shown(tmp_path / "a" / "b.json", tmp_path) == "a/b.json"
    assert shown("a/../b.json", tmp_path) == "b.json"
    assert shown(tmp_path.parent / "c.json", tmp_path) == str(tmp_path.parent / "c.json")
