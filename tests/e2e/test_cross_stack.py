"""What the CLI synthesizes, tested locally: a two-stack app (``cross_stack_app/``) whose
``cdk.json`` asks for weak cross-stack references. ``cdk_synth`` reads that context as
``cdk synth`` does (and the pinned CLI's output is compared with it), ``local_deploy.assembly``
deploys both stacks with ``Fn::GetStackOutput`` / ``Fn::ImportValue`` and the SSM parameter
resolved, and the consumer's bundled handler package runs against the producer's table."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from constructs_lib.runtime import TableClient
from constructs_lib.testing import SynthResult, UnresolvableIntrinsicError

pytestmark = pytest.mark.e2e

APP_DIR = Path(__file__).resolve().parent / "cross_stack_app"
REPO = Path(__file__).resolve().parents[2]
CDK_CLI = REPO / "node_modules" / ".bin" / "cdk"
PRODUCER, CONSUMER = "NotesProducer", "NotesConsumer"


def load_app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cross_stack_app", APP_DIR / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


APP = load_app()


def variables(result: SynthResult) -> dict[str, Any]:
    resources = result.template(CONSUMER)["Resources"]
    return resources[result.function_logical_id("NotesApi", CONSUMER)]["Properties"]["Environment"]["Variables"]


@pytest.fixture(scope="module")
def weak(cdk_synth: Any) -> SynthResult:
    """Synthesized from the app's directory: its cdk.json asks for weak references."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(APP_DIR)
        return cdk_synth(APP.build)


@pytest.fixture(scope="module")
def strong(cdk_synth: Any) -> SynthResult:
    """The same app without the project's context: CDK's default strong references."""
    return cdk_synth(APP.build, project_context=False)


# cdk.json context --------------------------------------------------------------------------------
def test_cdk_synth_reads_cdk_json_and_cdk_context_json_like_the_cli(weak: SynthResult) -> None:
    # GIVEN the app synthesized by cdk_synth from its own directory
    env = variables(weak)
    # WHEN the consumer's references to the producer are read
    # THEN they are the weak form cdk.json asked for (Fn::GetStackOutput of the producer's output)
    assert set(env["TABLE_NAME"]) == {"Fn::GetStackOutput"}
    assert env["TABLE_NAME"]["Fn::GetStackOutput"]["StackName"] == PRODUCER
    # AND context values come from cdk.json, which overrides cdk.context.json
    assert (env["OWNER"], env["STAGE"]) == ("team-notes", "from-cdk.json")
    assert weak.context_files == (APP_DIR / "cdk.json", APP_DIR / "cdk.context.json")


def test_project_context_opt_out_gives_cdks_default_strong_references(strong: SynthResult) -> None:
    # GIVEN the app synthesized with project_context=False
    env = variables(strong)
    # WHEN the consumer's reference is read
    # THEN it is an export import, and no project context was applied
    assert set(env["TABLE_NAME"]) == {"Fn::ImportValue"}
    assert env["OWNER"] == "None" and strong.context_files == ()


def test_explicit_context_overrides_the_project_files(cdk_synth: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the app's directory as the working directory
    monkeypatch.chdir(APP_DIR)
    # WHEN it is synthesized with context values that cdk.json also sets
    result = cdk_synth(APP.build, context={"notes:stage": "explicit", "@aws-cdk/core:defaultCrossStackReferences": "strong"})
    # THEN the explicit values win, the other project values stay
    env = variables(result)
    assert (env["STAGE"], env["OWNER"]) == ("explicit", "team-notes")
    assert set(env["TABLE_NAME"]) == {"Fn::ImportValue"}


def test_cdk_json_is_found_from_the_apps_directory(cdk_synth: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # GIVEN a working directory without cdk.json, and the app defined in a directory that has one
    monkeypatch.chdir(tmp_path)
    # WHEN it is synthesized
    result = cdk_synth(APP.build)
    # THEN the app directory's cdk.json applied
    assert result.context_files[0] == APP_DIR / "cdk.json"
    assert set(variables(result)["TABLE_NAME"]) == {"Fn::GetStackOutput"}


def test_the_pinned_cli_writes_the_same_consumer(weak: SynthResult, tmp_path: Path) -> None:
    # GIVEN the pinned CDK CLI and a copy of the app directory (cdk.json, cdk.context.json)
    assert CDK_CLI.exists(), f"{CDK_CLI} is missing: npm ci installs the pinned CDK CLI"
    app_dir = tmp_path / "app"
    shutil.copytree(APP_DIR, app_dir, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "true", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    env.pop("CDK_CONTEXT_JSON", None)
    # WHEN `cdk synth` runs there
    done = subprocess.run([str(CDK_CLI), "synth", "--app", f"{sys.executable} app.py", "--output", str(tmp_path / "cli.out"),
                           "--no-notices", "--quiet"], cwd=app_dir, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    cli = SynthResult.from_directory(tmp_path / "cli.out")
    # THEN the consumer's environment (references, SSM reads, context values) is what cdk_synth wrote
    assert variables(cli) == variables(weak)
    # AND both templates hold the same resources and outputs (the CLI adds its version-reporting resource)
    for stack in (PRODUCER, CONSUMER):
        assert sorted(set(cli.template(stack)["Resources"]) - {"CDKMetadata"}) == sorted(weak.template(stack)["Resources"])
        assert cli.template(stack).get("Outputs", {}).keys() == weak.template(stack).get("Outputs", {}).keys()


# Both stacks deployed locally -----------------------------------------------------------------------
@pytest.mark.parametrize("flavour", ["weak", "strong"])
def test_both_stacks_deploy_and_the_consumers_references_resolve(
    flavour: str, request: pytest.FixtureRequest, local_deploy: Any
) -> None:
    # GIVEN the assembly with weak (Fn::GetStackOutput) or strong (Fn::ImportValue) references
    result: SynthResult = request.getfixturevalue(flavour)
    # WHEN both stacks are deployed, named in the wrong order
    deployment = local_deploy.assembly(result, stacks=[CONSUMER, PRODUCER])
    # THEN the producer was deployed first (the manifest's dependency order)
    assert list(deployment.stacks) == [PRODUCER, CONSUMER]
    # AND the consumer's TABLE_NAME and both SSM reads resolve to the producer's local table
    table = deployment.table_name("DataTable")
    env = deployment.function_environment("NotesApi")
    assert env["TABLE_NAME"] == env["TABLE_NAME_FROM_SSM"] == env["TABLE_NAME_DYNAMIC"] == table
    assert deployment.parameter_value(APP.PARAMETER) == table
    assert deployment.stack(PRODUCER).parameters and not deployment.stack(CONSUMER).tables


def test_the_consumers_bundled_handler_works_on_the_producers_table(
    weak: SynthResult, local_deploy: Any, local_function: Any, dynamodb_client: Any
) -> None:
    # GIVEN both stacks deployed and the consumer's handler package running warm from its asset
    deployment = local_deploy.assembly(weak)
    env = deployment.function_environment("NotesApi", stack=CONSUMER)
    handler = weak.functions(CONSUMER)[weak.function_logical_id("NotesApi")]
    api = local_function(weak.asset_dir("NotesApi"), handler, environment=env)
    # WHEN it is invoked
    result = api.invoke({"user_id": "u1", "note_id": "n1", "text": "  hello  "}).result
    # THEN it wrote through its sibling module and read back from the producer's table
    table = deployment.table_name("DataTable", stack=PRODUCER)
    assert result == {"notes": ["hello"], "table": table}
    stored = TableClient(APP.NOTES, table, client=dynamodb_client).get("Note", user_id="u1", note_id="n1")
    assert stored is not None and stored["text"] == "hello"


def test_without_its_producer_the_consumers_references_are_unresolvable(weak: SynthResult, local_deploy: Any) -> None:
    # GIVEN only the consumer deployed
    deployment = local_deploy.assembly(weak, stacks=[CONSUMER])
    # WHEN its environment is resolved
    with pytest.raises(UnresolvableIntrinsicError) as info:
        deployment.function_environment("NotesApi")
    # THEN the error names the intrinsic and the missing stack
    assert "Fn::GetStackOutput" in str(info.value) and f"stack {PRODUCER!r} is not deployed locally" in str(info.value)
    assert json.loads(json.dumps(info.value.intrinsic))["Fn::GetStackOutput"]["StackName"] == PRODUCER
