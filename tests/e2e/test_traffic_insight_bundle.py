"""Traffic recording in a generated Lambda: the recorder ships only with
``TableFunction(traffic_insight=True)``; without it, asking for it raises a typed error naming the
option. Both functions are synthesized, their tables created in DynamoDB Local from the template,
and their handlers run from the synthesized asset directories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from constructs_lib import SingleTable, TableFunction
from constructs_lib.testing import LocalDeployment, SynthResult
from constructs_lib.testing.handlers import invoke_handler
from examples.shop.model import shop_model

pytestmark = pytest.mark.e2e

STACK = "TrafficStack"
#: Records its traffic if the asset lets it, and says what happened either way.
HANDLER = '''
from constructs_lib.runtime import RuntimeClientError, TableClient


def handler(event, context):
    table = TableClient.from_environment()
    try:
        recorder = table.record_traffic(sample_rate=1.0, seed=1)
    except ImportError as exc:
        return {"error": type(exc).__name__, "message": str(exc), "typed": isinstance(exc, RuntimeClientError)}
    for user in ("u1", "u1", "u1", "u2"):
        table.query("user's orders newest first", user_id=user)
    report = recorder.report(hot_share=0.5, min_requests=1, min_total_requests=1)
    return {"requests": recorder.sampled_requests,
            "hot": [f.subject for f in report.findings if f.kind == "hot_partition"]}


def import_recorder(event, context):
    from constructs_lib.runtime.stats import TrafficRecorder

    return {"imported": TrafficRecorder.__name__}
'''


@pytest.fixture(scope="module")
def synthesized(cdk_synth: Any, tmp_path_factory: pytest.TempPathFactory) -> SynthResult:
    entry = tmp_path_factory.mktemp("traffic_handler") / "traffic_api.py"
    entry.write_text(HANDLER, encoding="utf-8")

    def build(app: cdk.App) -> None:
        stack = cdk.Stack(app, STACK)
        table = SingleTable(stack, "Data", model=shop_model)
        TableFunction(stack, "Plain", table=table, entry=entry)
        TableFunction(stack, "Recording", table=table, entry=entry, traffic_insight=True)
        TableFunction(stack, "Importing", table=table, entry=entry, handler="import_recorder")

    return cdk_synth(build, project_context=False)


@pytest.fixture
def deployment(local_deploy: Any, synthesized: SynthResult) -> LocalDeployment:
    return local_deploy(synthesized.template(STACK), name_prefix="traffic-")  # type: ignore[no-any-return]


def run(synthesized: SynthResult, deployment: LocalDeployment, function: str, endpoint: str) -> Any:
    logical_id = synthesized.function_logical_id(function, STACK)
    handler = synthesized.template(STACK)["Resources"][logical_id]["Properties"]["Handler"]
    return invoke_handler(synthesized.asset_dir(function, STACK), handler, {},
                          environment=deployment.function_environment(logical_id), endpoint=endpoint)


def shipped(asset: Path) -> set[str]:
    return {p.relative_to(asset).as_posix() for p in (asset / "constructs_lib/runtime/stats").rglob("*.py")}


def test_without_traffic_insight_the_recorder_is_left_out_and_asking_for_it_is_a_typed_error(
    synthesized: SynthResult, deployment: LocalDeployment, dynamodb_local: Any
) -> None:
    # GIVEN a function synthesized without traffic_insight
    asset = synthesized.asset_dir("Plain", STACK)
    # THEN its asset ships the stats package's front only: none of the recorder's modules, no bytecode of it
    assert shipped(asset) == {"constructs_lib/runtime/stats/__init__.py"}
    assert not list((asset / "constructs_lib/runtime/stats").rglob("*.pyc"))
    # WHEN its handler calls record_traffic
    invocation = run(synthesized, deployment, "Plain", dynamodb_local.endpoint)
    # THEN it gets the runtime's typed error (an ImportError too), naming the option to set
    assert invocation.result["error"] == "TrafficInsightNotBundledError" and invocation.result["typed"] is True
    assert "TableFunction(..., traffic_insight=True)" in invocation.result["message"]
    assert invocation.package_file and Path(invocation.package_file).is_relative_to(asset)


def test_without_traffic_insight_importing_the_recorder_names_the_option(
    synthesized: SynthResult, deployment: LocalDeployment, dynamodb_local: Any
) -> None:
    # GIVEN a function without traffic_insight whose handler imports TrafficRecorder (for traffic=)
    # WHEN it runs
    from constructs_lib.testing.handlers import HandlerError

    with pytest.raises(HandlerError) as info:
        run(synthesized, deployment, "Importing", dynamodb_local.endpoint)
    # THEN the import raises the typed error naming the option, not a bare ModuleNotFoundError
    assert "TrafficInsightNotBundledError: traffic recording (TrafficRecorder) is not bundled" in str(info.value)
    assert "set traffic_insight=True" in str(info.value)


def test_with_traffic_insight_the_recorder_ships_and_records(
    synthesized: SynthResult, deployment: LocalDeployment, dynamodb_local: Any
) -> None:
    # GIVEN a function synthesized with traffic_insight=True
    asset = synthesized.asset_dir("Recording", STACK)
    # THEN its asset ships every module of the stats package the recorder and its report import
    # (saving a snapshot to a file, snapshot_file.py, ships once the handler's code imports it)
    package = Path(__file__).resolve().parents[2] / "constructs_lib"
    stats = {f"constructs_lib/{p.relative_to(package).as_posix()}" for p in (package / "runtime/stats").glob("*.py")}
    assert shipped(asset) == stats - {"constructs_lib/runtime/stats/snapshot_file.py"}
    # WHEN its handler records four queries (three on one partition) against the deployed table
    invocation = run(synthesized, deployment, "Recording", dynamodb_local.endpoint)
    # THEN every request was recorded and the report names the hot partition
    assert invocation.result == {"requests": 4, "hot": ["USER#u1"]}
