"""Packaging: the wheel, installed into a fresh virtualenv, serves a separate CDK app.

Offline from start to end: the wheel is built with the build requirements already installed
(``pip wheel --no-build-isolation --no-index``) from a copy of the sources, and installed with
``--no-index --no-deps`` into a virtualenv made with ``--without-pip``. That virtualenv sees the
third-party dependencies (aws-cdk-lib, constructs, jsii, boto3, pytest...) through a ``.pth`` line
naming this environment's site-packages — a plain path, so this checkout's editable-install hook
(another ``.pth`` file in there) is never run and ``constructs_lib`` can only come from the wheel.

The separate app (``user_app/``: its own model, stack, handler and tests) is copied to a temporary
directory and synthesized with ``python app.py`` and with the pinned CDK CLI, and its own tests
run against the plugin from the wheel. The time of each step is printed at the end of the module.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model import Model
from constructs_lib.testing import SynthResult, find_dynamodb_local_dir

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
USER_APP = Path(__file__).resolve().parent / "user_app"
CDK_CLI = REPO / "node_modules" / ".bin" / "cdk"
STACK = "LibraryStack"
HEAVY = ("aws_cdk", "jsii", "constructs")
#: The sources a wheel is built from (pyproject's ``readme`` needs README.md).
SOURCES = ("pyproject.toml", "README.md", "constructs_lib")
_SETUP_HINT = "run `make setup` (it installs the dev extra, which holds the build requirements)"


# Helpers ------------------------------------------------------------------------------------------
class Clock:
    """Seconds per step, printed when the module is done."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.steps: dict[str, float] = {}

    def run(self, step: str, cmd: Sequence[str | os.PathLike[str]], *, cwd: Path, env: dict[str, str],
            timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
        begin = time.monotonic()
        done = subprocess.run([os.fspath(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
        self.steps[step] = self.steps.get(step, 0.0) + time.monotonic() - begin
        if done.returncode != 0:
            pytest.fail(f"{step}: {' '.join(map(str, cmd))} exited {done.returncode}\n"
                        f"--- stdout\n{done.stdout[-6000:]}\n--- stderr\n{done.stderr[-6000:]}", pytrace=False)
        return done

    def summary(self) -> str:
        steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.steps.items())
        return f"wheel install check: {time.monotonic() - self.start:.1f} s in total ({steps})"


def clean_env(venv: Path | None = None, **extra: str) -> dict[str, str]:
    """This environment minus what would point a child Python at this checkout or this run."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")}
    env.update(JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20", CDK_DISABLE_CLI_TELEMETRY="true",
               AWS_EC2_METADATA_DISABLED="true", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def resource_types(template: dict[str, Any]) -> Counter[str]:
    return Counter(r["Type"] for r in template["Resources"].values())


# Fixtures -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def clock(request: pytest.FixtureRequest) -> Iterator[Clock]:
    timer = Clock()
    yield timer
    line = timer.summary()
    print(line)  # in the captured output (-rP, junit)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:  # and on the terminal, even when captured
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\n{line}")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package sources (so the build writes nothing into the working tree)."""
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=ignore)
        else:
            shutil.copy2(REPO / name, src / name)
    return src


@pytest.fixture(scope="module")
def wheel_file(sources: Path, tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Path:
    missing = [name for name in ("setuptools", "wheel") if importlib.util.find_spec(name) is None]
    assert not missing, f"{', '.join(missing)} missing from {sys.prefix}: {_SETUP_HINT}"
    dist = tmp_path_factory.mktemp("dist")
    clock.run("build wheel", [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                              "--no-index", "--quiet", "-w", dist, sources], cwd=dist, env=clean_env())
    (wheel,) = dist.glob("constructs_lib-*.whl")
    return wheel


@pytest.fixture(scope="module")
def venv(wheel_file: Path, tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Path:
    """A fresh virtualenv holding the wheel; other packages come from this environment."""
    root = tmp_path_factory.mktemp("venv")
    clock.run("create venv", [sys.executable, "-m", "venv", "--without-pip", root], cwd=root, env=clean_env())
    python = root / "bin" / "python"
    clock.run("install wheel", [sys.executable, "-m", "pip", "--python", python, "install", "--no-index",
                                "--no-deps", "--quiet", wheel_file], cwd=root, env=clean_env())
    purelib = clock.run("install wheel", [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=root, env=clean_env(root)).stdout.strip()
    (Path(purelib) / "outer_site_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def user_app(venv: Path, tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Path:
    """The separate app in its own directory, synthesized with ``python app.py cdk.out``."""
    app_dir = tmp_path_factory.mktemp("user-app")
    for name in ("app.py", "loans_api.py"):
        shutil.copy2(USER_APP / name, app_dir / name)
    shutil.copy2(USER_APP / "check_user_app.py", app_dir / "test_user_app.py")
    clock.run("python app.py", [venv / "bin" / "python", "app.py", app_dir / "cdk.out"], cwd=app_dir,
              env=clean_env(venv))
    return app_dir


# Tests --------------------------------------------------------------------------------------------
def test_wheel_holds_every_module_the_plugin_and_the_typing_marker(wheel_file: Path, sources: Path) -> None:
    # GIVEN the wheel built from a copy of the sources
    with zipfile.ZipFile(wheel_file) as whl:
        names = set(whl.namelist())
        dist_info = f"{wheel_file.name.split('-')[0]}-{wheel_file.name.split('-')[1]}.dist-info"
        entry_points = whl.read(f"{dist_info}/entry_points.txt").decode()
        metadata = whl.read(f"{dist_info}/METADATA").decode()
    # WHEN its files are compared with the package sources
    modules = {p.relative_to(sources).as_posix() for p in (sources / "constructs_lib").rglob("*.py")}
    # THEN every module is in it (runtime and model included), with py.typed, the pytest11 entry
    # point, and nothing but the package; the runtime needs only boto3 (the CDK is an extra)
    assert sorted(modules - names) == []
    assert {"constructs_lib/py.typed", "constructs_lib/runtime/__init__.py", "constructs_lib/model/__init__.py",
            "constructs_lib/testing/plugin.py"} <= names
    assert {n.split("/")[0] for n in names} == {"constructs_lib", dist_info}
    assert "[pytest11]\nconstructs_lib = constructs_lib.testing.plugin" in entry_points
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert requires == ["Requires-Dist: boto3>=1.34"]


def test_fresh_venv_imports_the_wheel_not_the_checkout(venv: Path, clock: Clock) -> None:
    # GIVEN the fresh virtualenv with the wheel and the .pth line to this environment
    probe = (
        "import json, sys, importlib.metadata as md, constructs_lib, constructs_lib.testing.plugin as plugin, aws_cdk\n"
        "print(json.dumps({'package': constructs_lib.__file__, 'plugin': plugin.__file__, 'cdk': aws_cdk.__file__,"
        " 'dist': str(md.distribution('constructs_lib').locate_file('')),"
        " 'editable_hook': [m for m in sys.modules if m.startswith('__editable__')]}))"
    )
    # WHEN its interpreter imports the package, the plugin and the CDK from a neutral directory
    found = json.loads(clock.run("probe imports", [venv / "bin" / "python", "-c", probe], cwd=venv,
                                 env=clean_env(venv)).stdout)
    # THEN constructs_lib (and its distribution) is the wheel's; the CDK comes from this
    # environment; the checkout's editable-install hook never ran
    for key in ("package", "plugin", "dist"):
        assert Path(found[key]).resolve().is_relative_to(venv.resolve()), (key, found[key])
    assert not Path(found["cdk"]).resolve().is_relative_to(venv.resolve())
    assert not Path(found["package"]).resolve().is_relative_to(REPO)
    assert found["editable_hook"] == []


def test_separate_app_synthesizes_with_python(user_app: Path, venv: Path) -> None:
    # GIVEN the separate app synthesized by `python app.py` with the fresh virtualenv
    result = SynthResult.from_directory(user_app / "cdk.out")
    template = result.template(STACK)
    # THEN its stack has the table and the audit table, the API, aggregator and audit functions,
    # and a stream mapping for each consumer
    types = resource_types(template)
    assert (types["AWS::DynamoDB::GlobalTable"], types["AWS::Lambda::Function"],
            types["AWS::Lambda::EventSourceMapping"]) == (2, 3, 2)
    assert sorted(result.functions(STACK).values()) == [
        "constructs_lib.runtime.aggregator.handler", "constructs_lib.runtime.audit_handler.handler",
        "loans_api.handler"]
    # AND the API's asset holds the installed runtime and model packages, the model and the
    # handler — no CDK, no test helpers
    asset = result.asset_dir("LoansApi")
    assert Model.from_json((asset / "model.json").read_text(encoding="utf-8")).name == "library"
    assert (asset / "loans_api.py").read_bytes() == (USER_APP / "loans_api.py").read_bytes()
    bundled = sorted(p.relative_to(asset).as_posix() for p in asset.rglob("*.py")
                     if p.parts[len(asset.parts)] == "constructs_lib" and p.parent != asset / "constructs_lib")
    assert {"constructs_lib/runtime/__init__.py", "constructs_lib/model/__init__.py"} <= set(bundled)
    assert not any(part in HEAVY or part == "testing" for p in asset.rglob("*") for part in p.relative_to(asset).parts)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    assert [rel for rel in bundled if not (site / rel).is_file()] == []  # all from the installed wheel


def test_separate_app_synthesizes_with_the_cdk_cli(user_app: Path, venv: Path, clock: Clock) -> None:
    # GIVEN the pinned CDK CLI (npm ci)
    assert CDK_CLI.exists(), f"{CDK_CLI} is missing: run `make setup` (npm ci installs the pinned CDK CLI)"
    # WHEN it synthesizes the separate app with the fresh virtualenv's interpreter
    app = f"{venv / 'bin' / 'python'} app.py"
    clock.run("cdk synth", [CDK_CLI, "synth", "--app", app, "--output", user_app / "cli.out", "--no-notices",
                            "--quiet"], cwd=user_app, env=clean_env(venv))
    # THEN it writes the same resources as `python app.py` (plus the CLI's version reporting
    # resource), with the asset metadata the CLI enables
    cli, direct = SynthResult.from_directory(user_app / "cli.out"), SynthResult.from_directory(user_app / "cdk.out")
    assert sorted(set(cli.template(STACK)["Resources"]) - {"CDKMetadata"}) == sorted(direct.template(STACK)["Resources"])
    api = cli.function_logical_id("LoansApi")
    assert cli.template(STACK)["Resources"][api]["Metadata"]["aws:asset:path"].startswith("asset.")
    assert (cli.asset_dir("LoansApi") / "model.json").is_file()


def test_separate_apps_tests_pass_with_the_plugin_from_the_wheel(user_app: Path, venv: Path, clock: Clock) -> None:
    # GIVEN the separate app's own test file (no conftest.py) and DynamoDB Local's location
    assert not list(user_app.glob("conftest.py"))
    env = clean_env(venv, USER_APP_CDK_OUT=str(user_app / "cdk.out"), DYNAMODB_LOCAL_DIR=str(find_dynamodb_local_dir()))
    # WHEN pytest runs them with the fresh virtualenv's interpreter
    done = clock.run("user's pytest", [venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                       "test_user_app.py"], cwd=user_app, env=env)
    # THEN the plugin's fixtures (from the wheel's entry point) served all of them
    assert "3 passed" in done.stdout, done.stdout
