"""A function target that needs arguments (``build_app(stage)``, ``app.py:make``): every command
that loads an app exits 2 with one line naming the function, its signature and what a target's
function must be — the status every other bad target gets — never a ``TypeError`` traceback.

All command lines run by ``main()`` in one fresh interpreter (``cli_runs``), which fails the test
if any exception escapes. The app files never import the AWS CDK.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from cli_runs import Run, run_in_one_process

REPO = Path(__file__).resolve().parents[3]
CONTRACT = "examples/reporting/contracts/shop.contract.json"

APP = """
def build_app(stage, *, region="eu-west-1"):
    raise AssertionError("a function that needs arguments is never called")


def make(scope, construct_id):
    raise AssertionError("never called either")


class Builder:
    def __init__(self, stage):
        raise AssertionError("nor is a class that needs arguments")


def build_default(outdir=None, *, context=None):
    from examples.shop.model import shop_model

    return shop_model
"""
#: Every command that loads an app target, as (name, command line with {app} for the target).
COMMANDS = {
    "describe": ["describe", "{app}"],
    "export": ["export", "{app}"],
    "fingerprint": ["fingerprint", "{app}"],
    "codegen": ["codegen", "{app}"],
    "contract export": ["contract", "export", "{app}"],
    "contract slice": ["contract", "slice", "{app}"],
    "contract verify": ["contract", "verify", "{app}", "--against", CONTRACT],
    "lock": ["lock", "{app}"],
    "diff": ["diff", "{app}"],
    "backfill": ["backfill", "{app}", "--table", "Data"],
    "cost": ["cost", "{app}", "--rates", "examples/shop/rates.json"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    app = tmp_path_factory.mktemp("function-targets") / "app.py"
    app.write_text(textwrap.dedent(APP), encoding="utf-8")
    cases = {name: [part.format(app=app) for part in argv] for name, argv in COMMANDS.items()}
    cases["attribute"] = ["describe", f"{app}:make"]
    cases["class"] = ["describe", f"{app}:Builder"]
    cases["defaults only"] = ["fingerprint", f"{app}:build_default"]
    return run_in_one_process(cases, cwd=REPO)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_build_app_that_needs_arguments_exits_2_naming_it(runs: dict[str, Run], command: str) -> None:
    # GIVEN app.py whose build_app takes a required `stage` WHEN any command loads it
    run = runs[command]
    # THEN exit 2 with one line: the target, the function and its signature, what is expected, the way out
    assert run.code == 2, run.err
    assert run.err.count("\n") == 1 and "Traceback" not in run.err and run.out == ""
    assert re.search(r"target '.*app\.py': build_app\(\) cannot be called: build_app\(stage, \*, "
                     r"region='eu-west-1'\) needs 1 argument \('stage'\), and the command line calls a target's "
                     r"function with none\. Expected a function taking no arguments that returns a Model, a "
                     r"cdk\.App or a construct: give 'stage' a default", run.err), run.err


@pytest.mark.parametrize(("case", "attribute", "signature"), [
    ("attribute", "make", r"make\(scope, construct_id\) needs 2 arguments \('scope', 'construct_id'\)"),
    ("class", "Builder", r"Builder\(stage\) needs 1 argument \('stage'\)"),
])
def test_an_attribute_that_needs_arguments_exits_2_naming_it(runs: dict[str, Run], case: str, attribute: str,
                                                             signature: str) -> None:
    # GIVEN TARGET:attribute naming a function or a class that needs arguments WHEN described
    run = runs[case]
    # THEN exit 2 naming the target, the callable and every argument it needs
    assert run.code == 2 and "Traceback" not in run.err
    assert re.search(rf"target '.*app\.py:{attribute}' cannot be called: {signature}", run.err), run.err


def test_a_function_whose_parameters_all_have_defaults_is_called(runs: dict[str, Run]) -> None:
    # GIVEN build_default(outdir=None, *, context=None) returning the shop model WHEN fingerprinted
    run = runs["defaults only"]
    # THEN it is called and its model's fingerprint printed
    assert run.code == 0, run.err
    assert re.fullmatch(r"[0-9a-f]{32}  shop\n", run.out), run.out
