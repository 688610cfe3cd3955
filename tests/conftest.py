"""Shared fixtures: the showcase app synthesized once per session, its tables deployed
from the synthesized template into DynamoDB Local (fixtures from constructs_lib.testing)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from once_per_run import once_per_run

from constructs_lib.model import Model
from constructs_lib.runtime import TableClient
from constructs_lib.testing import LocalDeployment, asset_dir

STACK = "ShopStack"

# Quiet the jsii/Node notices in test output (same settings as the Makefile).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
# The CDK's built-in CloudFormation validation costs about 5 s of CPU in every process that
# synthesizes (its engine starts at the first synth), more than a small stack's whole synthesis.
# Every synthesis of the suite and its subprocesses skips it (its findings are warnings: they fail
# no synth); tests/synth/test_cdk_builtin_validation.py runs it on app.py once and asserts it finds nothing.
os.environ["CDK_VALIDATION"] = "false"

# Asset metadata (``Metadata["aws:asset:path"]`` on the Lambda resource) is written only when
# the context flag ``aws:cdk:enable-asset-metadata`` is set, as the CDK CLI does. An in-process
# ``cdk.App`` reads context from the Node process's ``CDK_CONTEXT_JSON``, which that process
# copies from the environment when jsii starts it (at the first ``aws_cdk`` import, in whichever
# test module comes first). So the flag goes into the environment here, in the root conftest,
# which pytest imports before any test module; aws_cdk itself is not imported here.
_context = json.loads(os.environ.get("CDK_CONTEXT_JSON") or "{}")
_context.setdefault("aws:cdk:enable-asset-metadata", True)
os.environ["CDK_CONTEXT_JSON"] = json.dumps(_context)


# Scheduling under `pytest -n auto --dist loadfile` (docs/testing.md, "What shares what"). xdist hands
# out whole modules in the order below; by default it first re-sorts them by number of tests, which
# put the few-test, longest-running modules (packaging, e2e) last, one worker finishing them alone
# while the other idled. So modules keep collection order (reorder off) and the directories whose
# modules run longest come first; the many short modules after them even out the two workers.
# Tests inside a module keep their order.
LONGEST_FIRST = ("packaging", "e2e", "examples", "integration")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist's --[no-]loadscope-reorder
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent

    def rank(item: pytest.Item) -> int:
        parts = item.path.resolve().relative_to(tests).parts if item.path.resolve().is_relative_to(tests) else ()
        return LONGEST_FIRST.index(parts[0]) if parts and parts[0] in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: modules stay contiguous, tests keep their order


@pytest.fixture(scope="session")
def shop_cdk_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``app.py`` synthesized into a temporary cloud assembly, once per run and shared by the
    pytest-xdist workers (``once_per_run``); nothing writes into it."""
    from app import build_app

    return once_per_run(tmp_path_factory, "shop-cdk.out", lambda out: build_app(str(out)).synth())


@pytest.fixture(scope="session")
def shop_template(shop_cdk_out: Path) -> dict[str, Any]:
    return json.loads((shop_cdk_out / f"{STACK}.template.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def orders_api_logical_id(shop_template: dict[str, Any]) -> str:
    functions = [
        lid for lid, r in shop_template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"].startswith("orders_api.")
    ]
    assert len(functions) == 1, functions
    return functions[0]


@pytest.fixture(scope="session")
def orders_api_asset(shop_cdk_out: Path, shop_template: dict[str, Any], orders_api_logical_id: str) -> Path:
    """The orders API function's asset directory inside the synthesized cloud assembly."""
    return asset_dir(shop_cdk_out, shop_template, orders_api_logical_id)


@pytest.fixture(scope="session")
def bundled_model(orders_api_asset: Path) -> Model:
    """The model exactly as shipped to the Lambda function (``model.json`` in the asset)."""
    return Model.from_json((orders_api_asset / "model.json").read_text(encoding="utf-8"))


@pytest.fixture
def shop_deployment(local_deploy: Callable[..., LocalDeployment], shop_template: dict[str, Any]) -> LocalDeployment:
    """Fresh tables created from the synthesized ShopStack template (deleted after the test)."""
    return local_deploy(shop_template, name_prefix="shop-")


@pytest.fixture
def shop_table(shop_deployment: LocalDeployment, bundled_model: Model, dynamodb_client: Any) -> TableClient:
    """A TableClient on the freshly deployed shop table, using the bundled model."""
    return TableClient(bundled_model, shop_deployment.table_name("DataTable"), client=dynamodb_client)


@pytest.fixture(scope="session")
def synth_table_template() -> Callable[..., dict[str, Any]]:
    """Factory: synthesize a stack holding one ``SingleTable(model=...)`` and return its template."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from constructs_lib import SingleTable

    def synth(model: Model, **props: Any) -> dict[str, Any]:
        app = cdk.App()
        stack = cdk.Stack(app, "TestStack")
        SingleTable(stack, "Data", model=model, **props)
        return Template.from_stack(stack).to_json()

    return synth
