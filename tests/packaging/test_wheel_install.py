"""Packaging: the wheel, installed into a fresh virtualenv, serves a separate CDK app.

Offline from start to end: the wheel is built with the build requirements already installed
(``python -m build --no-isolation``, as ``make dist``) from a copy of the sources, and installed with
``--no-index --no-deps`` into a virtualenv made with ``--without-pip``. That virtualenv sees the
third-party dependencies (aws-cdk-lib, constructs, jsii, boto3, pytest...) through a ``.pth`` line
naming this environment's site-packages — a plain path, so this checkout's editable-install hook
(another ``.pth`` file in there) is never run and ``constructs_lib`` can only come from the wheel.

The separate app (``user_app/``: its own model, stack, handler and tests) is copied to a temporary
directory and synthesized with ``python app.py`` and with the pinned CDK CLI, and its own tests
run against the plugin from the wheel. The time of each step is printed at the end of the module.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from _apps import REPO, Clock, clean_env, cli_synth, make_venv, resource_types

from constructs_lib.model import Model
from constructs_lib.testing import SynthResult, find_dynamodb_local_dir

pytestmark = pytest.mark.e2e

USER_APP = Path(__file__).resolve().parent / "user_app"
STACK = "LibraryStack"
HEAVY = ("aws_cdk", "jsii", "constructs")
CLOCK_TITLE = "wheel install check"


# Fixtures (the wheel, `sources` and `clock` are in conftest.py) -----------------------------------
@pytest.fixture(scope="module")
def venv(wheel_file: Path, tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Path:
    """A fresh virtualenv holding the wheel, installed by pip (the other packaging modules use uv);
    other packages come from this environment."""
    return make_venv(tmp_path_factory.mktemp("venv") / "venv", wheel_file, clock, pip=True)


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
        "constructs_lib.runtime.handlers.audit.handler", "constructs_lib.runtime.handlers.counter.handler",
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
    # WHEN it synthesizes the separate app with the fresh virtualenv's interpreter
    cli_synth(clock, "cdk synth", user_app, venv, output=user_app / "cli.out")
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
