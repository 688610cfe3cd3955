"""TableFunction with a handler package: sibling modules, a sub-package and a third-party
dependency from requirements.txt, installed as wheels for python3.13/arm64 without Docker, then
imported and run from the synthesized asset directory in a fresh process.

The dependency is ``tabulate`` (a pure-Python wheel) from the package registry, installed into a
per-module temporary cache (``CONSTRUCTS_LIB_CACHE_DIR``) so the cold install is measured.
"""

from __future__ import annotations

import io
import shutil
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Annotations, Match

from constructs_lib import ConstructPropsError, SingleTable, TableFunction
from constructs_lib.assets import bytecode
from constructs_lib.assets.cache import ENV_CACHE_DIR
from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.testing import SynthResult, invoke_handler, synthesize

MODEL = Model(
    "notes",
    entities=[Entity("Note", pk="USER#{user_id}", sk="NOTE#{note_id}", fields=["user_id", "note_id", "text"])],
    access_patterns=[AccessPattern("notes of a user", entity="Note", sk="begins_with")],
)
#: DESIGN.md's budget for the runtime part of every asset (our code + model.json), zipped.
RUNTIME_BUDGET_ZIPPED = 100 * 1024
DEPENDENCY = "tabulate==0.10.0"
PACKAGE = {
    "index.py": (
        "from tabulate import tabulate\n"
        "from formatting import title\n"
        "from helpers.maths import double\n"
        "from constructs_lib.runtime import TableClient\n"
        "\n"
        "table = TableClient.from_environment()\n"
        "\n"
        "def handler(event, context):\n"
        "    rows = tabulate([[event['n'], double(event['n'])]], headers=['n', 'double'])\n"
        "    return {'title': title(event['name']), 'rows': rows, 'table': table.table_name,\n"
        "            'model': table.model.name}\n"
    ),
    "formatting.py": "def title(text):\n    return text.title()\n",
    "helpers/__init__.py": "",
    "helpers/maths.py": "def double(n):\n    return 2 * n\n",
    "templates/greeting.txt": "Hello\n",
    "requirements.txt": f"{DEPENDENCY}\nboto3>=1.34  # the runtime ships it\n",
    "tests/test_index.py": "def test_nothing():\n    pass\n",
    "__pycache__/index.cpython-313.pyc": "stale",
    ".env": "SECRET=do-not-ship\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def zipped(directory: Path, files: list[str] | tuple[str, ...]) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for rel in sorted(files):
            archive.write(directory / rel, rel)
    return len(buffer.getvalue())


@dataclass
class Built:
    result: SynthResult
    functions: dict[str, TableFunction]
    seconds: float


def build_notes(package: Path, *, outdir: Path, arch: lambda_.Architecture | None = None) -> Built:
    made: dict[str, TableFunction] = {}

    def build(app: cdk.App) -> cdk.Stack:
        stack = cdk.Stack(app, "NotesStack")
        data = SingleTable(stack, "Data", model=MODEL)
        made["api"] = TableFunction(stack, "NotesApi", table=data, entry=package, architecture=arch)
        return stack

    started = time.monotonic()
    result = synthesize(build, outdir=outdir)
    return Built(result, made, time.monotonic() - started)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("constructs-lib-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_CACHE_DIR, str(root))
        yield root


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("notes-src") / "notes_api", PACKAGE)


@pytest.fixture(scope="module")
def first(cache: Path, package: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build_notes(package, outdir=tmp_path_factory.mktemp("cdk.out"))


@pytest.fixture(scope="module")
def second(first: Built, package: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build_notes(package, outdir=tmp_path_factory.mktemp("cdk.out"))


def function_props(built: Built) -> dict[str, Any]:
    template = built.result.template("NotesStack")
    return template["Resources"][built.result.function_logical_id("NotesApi")]["Properties"]


# The asset ---------------------------------------------------------------------------------------
def test_asset_holds_runtime_package_modules_and_the_wheel_and_nothing_else(first: Built) -> None:
    # GIVEN the handler package synthesized as a TableFunction
    asset = first.result.asset_dir("NotesApi")
    files = {p.relative_to(asset).as_posix() for p in asset.rglob("*") if p.is_file()}
    bundle = first.functions["api"].bundle
    # WHEN its files are sorted by part
    # THEN the user part is the package's code and data, without tests, caches, dotfiles or requirements
    assert tuple(f for f in bundle.user_files if not f.endswith(".pyc")) == (
        "formatting.py", "helpers/__init__.py", "helpers/maths.py", "index.py", "templates/greeting.txt")
    # (plus, when a Python 3.13 interpreter exists here, the bytecode of the modules index imports)
    compiled = {f for f in bundle.user_files if f.endswith(".pyc")}
    if bytecode.compiler_for("3.13") is not None:
        assert "__pycache__/index.cpython-313.pyc" in compiled
    assert compiled <= {bytecode.pyc_path(f, "cpython-313") for f in bundle.user_files if f.endswith(".py")}
    # AND the dependency part is tabulate's wheel without its console script (and no boto3)
    assert "tabulate/__init__.py" in bundle.dependency_files
    assert any(f.startswith("tabulate-0.10.0.dist-info/") for f in bundle.dependency_files)
    assert not [f for f in bundle.dependency_files if f.startswith(("bin/", "boto3", "botocore")) or f.endswith(".pyc")]
    # AND the runtime part is our runtime and model.json
    assert "model.json" in bundle.runtime_files and "constructs_lib/runtime/client.py" in bundle.runtime_files
    # AND the asset directory holds exactly the three parts
    assert files == set(bundle.user_files) | set(bundle.dependency_files) | set(bundle.runtime_files)
    # AND the Lambda handler is the package's index module, on python3.13 / arm64
    props = function_props(first)
    assert (props["Handler"], props["Runtime"], props["Architectures"]) == ("index.handler", "python3.13", ["arm64"])


def test_bundled_handler_runs_from_the_asset_with_its_sibling_modules_and_dependency(first: Built) -> None:
    # GIVEN the synthesized asset directory and the function's handler
    asset = first.result.asset_dir("NotesApi")
    # WHEN the handler is imported and invoked in a fresh process that sees only the asset (+ boto3)
    run = invoke_handler(asset, "index.handler", {"name": "ada lovelace", "n": 21}, environment={"TABLE_NAME": "notes-local"})
    # THEN the sibling module, the sub-package, the third-party wheel and the runtime all worked
    assert run.result == {"title": "Ada Lovelace", "rows": "  n    double\n---  --------\n 21        42",
                          "table": "notes-local", "model": "notes"}
    # AND constructs_lib came from the asset, and no CDK module was loaded
    assert run.package_file is not None and Path(run.package_file).is_relative_to(asset)
    assert run.cdk_modules == []


def test_runtime_part_stays_within_budget_and_user_part_is_measured_separately(first: Built, second: Built) -> None:
    # GIVEN the asset and its parts
    bundle = first.functions["api"].bundle
    runtime = zipped(bundle.directory, [f for f in bundle.runtime_files if not f.endswith(".pyc")])
    bytecode = zipped(bundle.directory, [f for f in bundle.runtime_files if f.endswith(".pyc")])
    user = zipped(bundle.directory, bundle.user_files)
    deps = zipped(bundle.directory, bundle.dependency_files)
    total = zipped(bundle.directory, [*bundle.runtime_files, *bundle.user_files, *bundle.dependency_files])
    installed = first.functions["api"].dependencies
    cached = second.functions["api"].dependencies
    assert installed is not None and cached is not None
    print(f"\nhandler package asset zipped: runtime part {runtime / 1024:.1f} KiB (+ bytecode {bytecode / 1024:.1f} KiB), "
          f"user code {user / 1024:.1f} KiB, "
          f"dependencies {deps / 1024:.1f} KiB, total {total / 1024:.1f} KiB; requirements install "
          f"{installed.seconds:.2f} s cold, {cached.seconds * 1000:.1f} ms cached")
    # WHEN the runtime part's sources are zipped on its own
    # THEN they stay within the 100 KB budget whatever the user ships next to them, and the bytecode
    # of the import path and the model package (when an interpreter of the runtime's version exists,
    # docs/adr/0018) within one and a half budgets more
    assert 0 < runtime <= RUNTIME_BUDGET_ZIPPED
    assert bytecode <= 1.5 * RUNTIME_BUDGET_ZIPPED
    # AND the user's code and dependencies are counted apart from it
    assert user > 0 and deps > 0 and total > runtime


def test_resynthesis_reuses_the_cached_install_and_the_same_asset_hash(first: Built, second: Built) -> None:
    # GIVEN the same package synthesized twice into two assemblies
    # WHEN the second synth runs
    # THEN the requirements came from the cache, and the asset hash (S3Key) did not change
    assert not first.functions["api"].dependencies.cached  # type: ignore[union-attr]
    assert second.functions["api"].dependencies.cached  # type: ignore[union-attr]
    assert function_props(second)["Code"]["S3Key"] == function_props(first)["Code"]["S3Key"]


def test_changing_a_sibling_module_changes_the_asset_hash(first: Built, cache: Path, package: Path,
                                                          tmp_path: Path) -> None:
    # GIVEN a copy of the package with one sibling module changed
    changed = tmp_path / "notes_api"
    shutil.copytree(package, changed)
    (changed / "formatting.py").write_text("def title(text):\n    return text.upper()\n", encoding="utf-8")
    # WHEN it is synthesized
    again = build_notes(changed, outdir=tmp_path / "cdk.out")
    # THEN the asset hash changed (and a changed excluded file would not: see the next test)
    assert function_props(again)["Code"]["S3Key"] != function_props(first)["Code"]["S3Key"]


def test_changing_an_excluded_file_keeps_the_asset_hash(first: Built, cache: Path, package: Path, tmp_path: Path) -> None:
    # GIVEN a copy of the package whose tests and __pycache__ changed
    changed = tmp_path / "notes_api"
    shutil.copytree(package, changed)
    (changed / "tests" / "test_index.py").write_text("def test_other():\n    assert True\n", encoding="utf-8")
    (changed / "__pycache__" / "formatting.cpython-313.pyc").write_text("new", encoding="utf-8")
    # WHEN it is synthesized
    again = build_notes(changed, outdir=tmp_path / "cdk.out")
    # THEN the asset hash is the same: only shipped content counts
    assert function_props(again)["Code"]["S3Key"] == function_props(first)["Code"]["S3Key"]


def test_boto3_in_requirements_is_skipped_with_a_warning(cache: Path, package: Path) -> None:
    # GIVEN the package, whose requirements.txt also names boto3
    stack = cdk.Stack(cdk.App(), "WarnStack")
    TableFunction(stack, "NotesApi", table=SingleTable(stack, "Data", model=MODEL), entry=package)
    # WHEN the stack's annotations are read
    # THEN a warning names the requirement and why it is not bundled
    Annotations.from_stack(stack).has_warning(
        "/WarnStack/NotesApi",
        Match.string_like_regexp(r"requirement 'boto3>=1\.34' .* is not bundled: the Lambda 3\.13 runtime provides boto3"),
    )


# Errors at synth ----------------------------------------------------------------------------------
def test_a_wrong_handler_name_fails_at_construction(scratch_stack: cdk.Stack, package: Path) -> None:
    # GIVEN the package and a handler name index.py does not define
    table = SingleTable(scratch_stack, "WrongHandlerData", model=MODEL)
    # WHEN the function is built
    # THEN construction fails naming the module, the name and what it defines
    with pytest.raises(ConstructPropsError, match=r"TableFunction 'WrongHandler': handler module 'index' .* does not "
                                                  r"define 'main' .* it defines: TableClient, double, handler, table"):
        TableFunction(scratch_stack, "WrongHandler", table=table, entry=package, handler="main")


def test_a_user_module_shadowing_a_dependency_is_refused(scratch_stack: cdk.Stack, cache: Path, package: Path,
                                                         tmp_path: Path) -> None:
    # GIVEN a package with its own tabulate.py next to the tabulate requirement
    clash = tmp_path / "clash"
    shutil.copytree(package, clash)
    (clash / "tabulate.py").write_text("def tabulate(rows, headers):\n    return ''\n", encoding="utf-8")
    table = SingleTable(scratch_stack, "ClashData", model=MODEL)
    # WHEN the function is built
    # THEN construction fails naming the module and both parts
    with pytest.raises(ConstructPropsError, match=r"'tabulate' is provided by both the function's code and the "
                                                  r"function's dependencies; one would shadow the other"):
        TableFunction(scratch_stack, "Clash", table=table, entry=clash)
