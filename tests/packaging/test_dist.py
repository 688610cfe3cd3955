"""Packaging: the sdist and the wheel ``make dist`` builds are fit to publish.

Both are built once per run with ``python -m build --no-isolation`` from a copy of the sources
(tests/packaging/conftest.py) and pass ``twine check --strict``; the metadata holds the README, the
license, the classifiers, the project URLs and ``Requires-Python``; the wheel holds the package, its
typing marker and its price files and nothing else (no tests, benchmarks, examples or docs). The
wheel is installed with each extra (none, ``cdk``, ``testing``) into a virtualenv of its own, its
dependencies resolved by the pinned uv from the package index ``make setup`` uses (its cache makes
that a few seconds), and each environment imports what its extra promises and reports what the
others would add. Sizes and times are printed at the end of the module.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from _apps import REPO, UV, UV_HINT, Clock, clean_env, kb

from scripts.venv_install import pip_options, uv_arguments

pytestmark = pytest.mark.e2e

CLOCK_TITLE = "dist check"
PROBE = Path(__file__).resolve().with_name("extras_probe.py")
#: What may sit in the wheel beside the package's modules: its typing marker and data.
PACKAGE_DATA = {"constructs_lib/py.typed", "constructs_lib/capacity/prices/us-east-1.json",
                "constructs_lib/testing/localstack/constraints.txt"}
EXTRAS = ("none", "cdk", "testing")


def wheel_metadata(wheel: Path) -> Any:
    with zipfile.ZipFile(wheel) as whl:
        (name,) = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        return Parser().parsestr(whl.read(name).decode())


@pytest.fixture(scope="module")
def built(built_wheel: Any, clock: Clock) -> Any:
    clock.note("wheel", f"{built_wheel.path.name}, {kb(built_wheel.path.stat().st_size)}, "
                        f"{len(zipfile.ZipFile(built_wheel.path).namelist())} files")
    clock.note("sdist", f"{built_wheel.sdist.name}, {kb(built_wheel.sdist.stat().st_size)}")
    clock.note("build", f"sdist and wheel in {built_wheel.seconds:.1f} s (once per run)")
    return built_wheel


def test_twine_check_passes_on_the_sdist_and_the_wheel(built: Any, clock: Clock) -> None:
    # GIVEN the sdist and the wheel python -m build made
    # WHEN twine checks them strictly (the README renders, the metadata is complete)
    done = clock.run("twine check", [sys.executable, "-m", "twine", "check", "--strict", built.sdist, built.path],
                     cwd=built.path.parent, env=clean_env())
    # THEN both pass
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_metadata_has_the_readme_license_classifiers_urls_and_python(built: Any) -> None:
    # GIVEN the wheel's metadata
    meta = wheel_metadata(built.path)
    import constructs_lib

    # THEN it names this version, the Python it needs and its one runtime dependency
    assert (meta["Name"], meta["Version"], meta["Requires-Python"]) == ("constructs_lib", constructs_lib.__version__, ">=3.11")
    assert [r for r in meta.get_all("Requires-Dist") if "extra ==" not in r] == ["boto3>=1.34"]
    assert set(meta.get_all("Provides-Extra")) >= {"cdk", "testing"}
    # AND the README as its description, in Markdown
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().strip() == (REPO / "README.md").read_text(encoding="utf-8").strip()
    # AND its license as an SPDX expression with the license file, classifiers and project URLs
    assert (meta["License-Expression"], meta.get_all("License-File")) == ("Apache-2.0", ["LICENSE"])
    assert {"Typing :: Typed", "Framework :: AWS CDK :: 2", "Programming Language :: Python :: 3.11"} <= set(
        meta.get_all("Classifier"))
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert set(urls) == {"Homepage", "Documentation", "Source", "Changelog", "Issues"}
    assert all(url.startswith("https://") for url in urls.values())


def test_the_wheel_holds_the_package_its_data_and_nothing_else(built: Any, sources: Path) -> None:
    # GIVEN the wheel and the package sources it was built from
    with zipfile.ZipFile(built.path) as whl:
        names = set(whl.namelist())
    dist_info = {n for n in names if n.split("/")[0].endswith(".dist-info")}
    package = names - dist_info
    modules = {p.relative_to(sources).as_posix() for p in (sources / "constructs_lib").rglob("*.py")
               if "__pycache__" not in p.parts}
    # THEN it holds every module, the typing marker, the price files and LocalStack's pinned
    # constraints, and nothing else: no
    # tests, benchmarks, examples, docs or bytecode
    assert package == modules | PACKAGE_DATA
    assert not [n for n in names if n.split("/")[0] in ("tests", "benchmarks", "examples", "docs", "scripts", "api")
                or n.endswith(".pyc")]
    assert {n.split("/", 1)[1] for n in dist_info} == {"METADATA", "WHEEL", "RECORD", "entry_points.txt",
                                                       "top_level.txt", "licenses/LICENSE"}


def test_the_sdist_holds_the_sources_license_and_changelog(built: Any) -> None:
    # GIVEN the sdist
    with tarfile.open(built.sdist) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    # THEN it holds what the wheel is built from, the license and the changelog, not the test suite
    assert {"pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "PKG-INFO", "constructs_lib/py.typed",
            "constructs_lib/capacity/prices/us-east-1.json", "constructs_lib/runtime/__init__.py"} <= names
    assert not [n for n in names if n.split("/")[0] in ("tests", "benchmarks", "examples", "docs")]


@pytest.fixture(scope="module")
def probes(built: Any, tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> dict[str, dict[str, Any]]:
    """What a virtualenv holding the wheel with each extra (and its dependencies, nothing else)
    can import: extras_probe.py's report per extra."""
    assert UV.exists(), UV_HINT
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    translated = uv_arguments(pip_options(listing.stdout))
    assert not isinstance(translated, str), f"pip option {translated!r} has no uv equivalent"
    args, env = translated
    args = [a for a in args if a != "--compile-bytecode"]  # bytecode of aws-cdk-lib alone takes ~20 s of CPU
    found = {}
    for extra in EXTRAS:
        venv = tmp_path_factory.mktemp(f"extra-{extra}") / "venv"
        clock.run("create venvs", [UV, "venv", "--quiet", "--python", sys.executable, venv], cwd=venv.parent,
                  env=clean_env())
        requirement = f"{built.path}" + ("" if extra == "none" else f"[{extra}]")
        clock.run("install with each extra", [UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python", *args,
                                              requirement], cwd=venv.parent, env={**clean_env(), **env}, timeout=600)
        done = clock.run("import probes", [venv / "bin" / "python", "-I", PROBE, extra], cwd=venv, env=clean_env(venv))
        found[extra] = json.loads(done.stdout.strip().splitlines()[-1])
        found[extra]["venv"] = str(venv)
    return found


def test_without_an_extra_the_model_and_runtime_work_and_the_rest_says_what_to_install(probes: dict[str, Any]) -> None:
    # GIVEN the wheel installed alone (boto3 is its one dependency)
    facts = probes["none"]
    # THEN the model and runtime import, from the installed wheel with its typing marker and prices
    assert facts["modules"] == {"boto3": True, "aws_cdk": False, "constructs": False, "jsii": False, "pytest": False}
    assert facts["package"].startswith(facts["venv"]) and facts["py_typed"] and facts["prices"] == ["us-east-1.json"]
    # AND a construct raises MissingExtraError naming the cdk extra, the plugin the missing pytest
    assert facts["constructs"].startswith("MissingExtraError: constructs_lib.") and "needs the AWS CDK" in facts["constructs"]
    assert 'pip install "constructs_lib[cdk]"' in facts["constructs"]
    assert facts["testing"] == "ModuleNotFoundError: No module named 'pytest'"


def test_the_cdk_extra_brings_the_constructs(probes: dict[str, Any]) -> None:
    # GIVEN the wheel installed with the cdk extra
    facts = probes["cdk"]
    # THEN the AWS CDK is there and every construct imports; pytest is not
    assert facts["modules"] == {"boto3": True, "aws_cdk": True, "constructs": True, "jsii": True, "pytest": False}
    assert facts["constructs"] == ["SingleTable", "TableFunction", "ShardedCounter", "StreamAudit"]


def test_the_testing_extra_brings_the_pytest_plugin(probes: dict[str, Any], clock: Clock, tmp_path: Path) -> None:
    # GIVEN the wheel installed with the testing extra
    facts = probes["testing"]
    # THEN pytest and the test helpers import (no AWS CDK: the constructs still ask for their extra)
    assert facts["modules"] == {"boto3": True, "aws_cdk": False, "constructs": False, "jsii": False, "pytest": True}
    assert facts["testing"] == ["DynamoDBLocal", "StreamRunner", "plugin"]
    assert facts["constructs"].startswith("MissingExtraError")
    # AND pytest finds the plugin through its entry point: its fixtures are offered in any project
    venv = Path(facts["venv"])
    done = clock.run("pytest --fixtures", [venv / "bin" / "python", "-m", "pytest", "--fixtures", "-q", "-p",
                                           "no:cacheprovider"], cwd=tmp_path, env=clean_env(venv), check=False)
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: no tests collected
    assert "dynamodb_local" in done.stdout and "local_producer" in done.stdout
