"""The pytest plugin as a user's repository gets it: every fixture, the synthesize → deploy →
write → feed-the-stream-to-the-bundled-handler flow, and registration through the ``pytest11``
entry point (a user test file run by ``pytester`` in a fresh pytest process, no conftest)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.runtime import AuditClient, TableClient
from constructs_lib.testing import HandlerError, StreamConsumer, SynthError, SynthResult
from constructs_lib.testing.handlers import Fault

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.integration

STACK = "NotesStack"
AUDIT_HANDLER = "constructs_lib.runtime.handlers.audit.handler"
NOTES = Model(
    "notes",
    entities=[Entity("Note", pk="USER#{user_id}", sk="NOTE#{note_id}", fields=["user_id", "note_id", "text"])],
    access_patterns=[AccessPattern("notes of a user", entity="Note", sk="begins_with")],
)
NOTES_API = '''\
from constructs_lib.runtime import TableClient

table = TableClient.from_environment()


def handler(event, context):
    table.put("Note", {"user_id": event["user_id"], "note_id": event["note_id"], "text": event["text"]})
    return {"saved": event["note_id"]}
'''
PLUGIN_FIXTURES = {
    "dynamodb_local": "session",
    "dynamodb_client": "session",
    "dynamodb_streams_client": "session",
    "cdk_synth": "session",
    "local_deploy": "function",
    "stream_runner": "function",
    "local_function": "function",
    "stream_consumer": "function",
}


def notes_stack(handler_file: Path) -> Any:
    """``build(app)`` for ``cdk_synth``: a stream-enabled single table, its audit trail and a
    function running *handler_file* (aws_cdk is imported only when it is called)."""

    def build(app: Any) -> Any:
        import aws_cdk as cdk
        from aws_cdk import aws_dynamodb as dynamodb

        from constructs_lib import SingleTable, StreamAudit, TableFunction

        stack = cdk.Stack(app, STACK)
        data = SingleTable(stack, "Data", model=NOTES, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        StreamAudit(stack, "Audit", source=data)
        TableFunction(stack, "NotesApi", table=data, entry=handler_file)
        return stack

    return build


@pytest.fixture(scope="module")
def handler_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("notes-src") / "notes_api.py"
    path.write_text(NOTES_API, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def notes(cdk_synth: Any, handler_file: Path) -> SynthResult:
    """The notes stack, synthesized once for the module through the session-scoped factory."""
    return cdk_synth(notes_stack(handler_file))


# cdk_synth ------------------------------------------------------------------------------------
def test_cdk_synth_writes_templates_with_asset_metadata(notes: SynthResult) -> None:
    # GIVEN the notes stack synthesized by the cdk_synth fixture (in a process whose jsii kernel
    # was started without the asset-metadata flag in its environment)
    # WHEN its template and its function are looked up
    template = notes.template(STACK)
    functions = notes.functions(STACK)
    api = notes.function_logical_id("NotesApi")
    # THEN the table, the audit function and the API function are there, and the API function
    # carries the asset path metadata the App's context enabled
    types = [r["Type"] for r in template["Resources"].values()]
    assert types.count("AWS::DynamoDB::GlobalTable") == 2  # the notes table and the audit table
    assert sorted(functions.values()) == [AUDIT_HANDLER, "notes_api.handler"]
    assert template["Resources"][api]["Metadata"]["aws:asset:path"].startswith("asset.")
    assert notes.outdir.is_dir() and notes.template_path(STACK).is_file()
    assert notes.stack_names == (STACK,)


def test_cdk_synth_asset_dir_is_the_bundled_lambda_code(notes: SynthResult) -> None:
    # GIVEN the synthesized notes stack
    # WHEN the API function's asset directory is looked up
    asset = notes.asset_dir("NotesApi")
    # THEN it is inside the cloud assembly and holds the runtime, the model and the handler only
    assert asset.parent == notes.outdir
    assert (asset / "model.json").is_file()
    assert (asset / "constructs_lib" / "runtime" / "__init__.py").is_file()
    assert (asset / "notes_api.py").read_text(encoding="utf-8") == NOTES_API
    assert not any(p.name in ("aws_cdk", "jsii", "constructs") for p in asset.rglob("*"))
    assert Model.from_json((asset / "model.json").read_text(encoding="utf-8")).to_json() == NOTES.to_json()


def test_cdk_synth_accepts_a_stack_class(cdk_synth: Any) -> None:
    # GIVEN a user's Stack subclass whose constructor takes (scope, id)
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as dynamodb

    class OrdersStack(cdk.Stack):
        def __init__(self, scope: Any, id: str) -> None:
            super().__init__(scope, id)
            dynamodb.TableV2(self, "Orders", partition_key=dynamodb.Attribute(
                name="id", type=dynamodb.AttributeType.STRING))

    # WHEN the class itself is given to cdk_synth
    result = cdk_synth(OrdersStack)
    # THEN it is instantiated under its class name
    assert result.stack_names == ("OrdersStack",)
    assert [r["Type"] for r in result.template()["Resources"].values()] == ["AWS::DynamoDB::GlobalTable"]


def test_cdk_synth_reads_stacks_inside_stages(cdk_synth: Any) -> None:
    # GIVEN an app with a stack at the top and one inside a cdk.Stage (a nested cloud assembly)
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as dynamodb

    def build(app: Any) -> None:
        for scope, name in ((app, "Top"), (cdk.Stage(app, "Prod"), "Api")):
            dynamodb.TableV2(cdk.Stack(scope, name), "Table",
                             partition_key=dynamodb.Attribute(name="id", type=dynamodb.AttributeType.STRING))

    # WHEN it is synthesized
    result = cdk_synth(build)
    # THEN both stacks are found, the staged one by stack name or construct path, and a lookup
    # without a name says which stacks there are
    assert sorted(result.stack_names) == ["Prod-Api", "Top"]
    assert result.template("Prod/Api") == result.template("Prod-Api")
    assert result.template_path("Prod-Api").parent.name == "assembly-Prod"
    with pytest.raises(SynthError, match=r"has 2 stacks \(.*Prod-Api.*\); name one"):
        result.template()


def test_cdk_synth_finds_assets_of_an_app_built_without_the_metadata_flag(
    cdk_synth: Any, handler_file: Path, tmp_path: Path
) -> None:
    # GIVEN a build function that makes its own App (no asset-metadata context), like an app.py
    import aws_cdk as cdk

    def build_app() -> Any:
        # (post-CLI context overrides the flag the test session puts in CDK_CONTEXT_JSON)
        app = cdk.App(outdir=str(tmp_path / "own-out"), post_cli_context={"aws:cdk:enable-asset-metadata": False})
        notes_stack(handler_file)(app)
        return app

    # WHEN cdk_synth synthesizes it
    result = cdk_synth(build_app)
    # THEN it lands in that App's outdir, the function has no asset metadata, and asset_dir still
    # finds the code through the asset manifest
    assert result.outdir == (tmp_path / "own-out").resolve()
    api = result.function_logical_id("NotesApi")
    assert "aws:asset:path" not in result.template()["Resources"][api].get("Metadata", {})
    assert (result.asset_dir("NotesApi") / "notes_api.py").is_file()


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (42, "build 42 must be a callable"),
        (lambda app: None, "created no stack"),
        (lambda: None, "it returned None"),
    ],
    ids=["not-callable", "no-stack", "no-app-returned"],
)
def test_cdk_synth_refuses_unusable_builds(cdk_synth: Any, build: Any, expected: str) -> None:
    # GIVEN a build that is not callable, adds no stack, or takes no App and returns none
    # WHEN it is synthesized
    # THEN a SynthError says what is wrong with it
    with pytest.raises(SynthError, match=expected):
        cdk_synth(build)


def test_synth_result_lookups_name_what_exists(notes: SynthResult) -> None:
    # GIVEN the synthesized notes stack
    # WHEN a missing stack or function is asked for
    # THEN the errors name the value asked for and list what the assembly has
    with pytest.raises(SynthError, match=r"No stack 'Nope'.*stacks: NotesStack"):
        notes.template("Nope")
    with pytest.raises(SynthError, match=r"'Nope'.*functions: AuditFunction[0-9A-F]{8}, NotesApiFunction"):
        notes.asset_dir("Nope")


# local_deploy + local_function ------------------------------------------------------------------
def test_local_function_runs_the_bundled_table_function(
    notes: SynthResult, local_deploy: Any, local_function: Any, dynamodb_client: Any
) -> None:
    # GIVEN the notes tables deployed from the synthesized template
    deployment = local_deploy(notes.template(STACK), name_prefix="notes-")
    api = notes.function_logical_id("NotesApi")
    # WHEN the bundled API handler runs with its environment resolved to the local tables
    function = local_function(notes.asset_dir(api), notes.functions()[api],
                              environment=deployment.function_environment(api))
    result = function({"user_id": "u1", "note_id": "n1", "text": "hello"})
    # THEN it wrote the note into the deployed table, importing nothing from the CDK
    assert result == {"saved": "n1"}
    table = TableClient(NOTES, deployment.table_name("DataTable"), client=dynamodb_client)
    assert table.get("Note", user_id="u1", note_id="n1")["text"] == "hello"
    assert function.last_invocation.cdk_modules == []


def test_local_function_injects_faults(notes: SynthResult, local_deploy: Any, local_function: Any) -> None:
    # GIVEN the deployed tables and the bundled API handler with a fault on one note's PutItem
    deployment = local_deploy(notes.template(STACK), name_prefix="notes-")
    api = notes.function_logical_id("NotesApi")
    function = local_function(notes.asset_dir(api), "notes_api.handler",
                              environment=deployment.function_environment(api),
                              faults=[Fault("PutItem", "NOTE#poison", "ValidationException")])
    # WHEN that note and another are written
    # THEN the faulty write fails as DynamoDB would have failed it, and the other succeeds
    with pytest.raises(HandlerError, match="ValidationException"):
        function({"user_id": "u1", "note_id": "poison", "text": "x"})
    assert function({"user_id": "u1", "note_id": "fine", "text": "x"}) == {"saved": "fine"}


# stream_runner ---------------------------------------------------------------------------------
def test_stream_runner_feeds_the_table_stream_to_a_callable(
    notes: SynthResult, local_deploy: Any, stream_runner: Any, dynamodb_client: Any
) -> None:
    # GIVEN the deployed notes table and two writes to one note
    deployment = local_deploy(notes.template(STACK), name_prefix="notes-")
    table = TableClient(NOTES, deployment.table_name("DataTable"), client=dynamodb_client)
    table.put("Note", {"user_id": "u1", "note_id": "n1", "text": "v1"})
    table.update("Note", {"user_id": "u1", "note_id": "n1"}, set={"text": "v2"})
    events: list[dict[str, Any]] = []
    # WHEN a runner feeds the table's stream to a plain Python callable
    report = stream_runner(deployment.stream_arn("DataTable"), events.append).run()
    # THEN it received both records, in order, in the Lambda record shape
    records = [r for event in events for r in event["Records"]]
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY"]
    assert records[1]["dynamodb"]["NewImage"]["text"] == {"S": "v2"}
    assert records[0]["eventSource"] == "aws:dynamodb" and report.delivered == 2


# The documented flow: synthesize → deploy → write items → feed the stream to the bundled handler
def test_synthesize_deploy_write_and_feed_the_stream_to_the_bundled_handler(
    cdk_synth: Any, handler_file: Path, local_deploy: Any, stream_consumer: Any, dynamodb_client: Any
) -> None:
    # GIVEN the stack synthesized and its tables deployed from the template
    result = cdk_synth(notes_stack(handler_file))
    deployment = local_deploy(result.template(STACK))
    # AND a note written and then changed through the runtime client
    table = TableClient(NOTES, deployment.table_name("DataTable"), client=dynamodb_client)
    table.put("Note", {"user_id": "u1", "note_id": "n1", "text": "draft"})
    table.update("Note", {"user_id": "u1", "note_id": "n1"}, set={"text": "final"})
    # WHEN the audit function's bundled handler is fed the table's real stream records
    consumer: StreamConsumer = stream_consumer(result, deployment, "AuditFunction")
    report = consumer.run()
    # THEN both changes are in the audit trail, newest first, and nothing failed
    audit = AuditClient.from_environment(environ=deployment.function_environment("AuditFunction"),
                                         client=dynamodb_client)
    history = audit.history(entity="Note", model=NOTES, user_id="u1", note_id="n1")
    assert [(r.event, r.changes.get("text", {}).get("after")) for r in history] == [("MODIFY", "final"),
                                                                                 ("INSERT", "draft")]
    assert report.delivered == 2 and report.errors == [] and consumer.dead_letters == []
    assert consumer.function.handler == AUDIT_HANDLER
    # AND a second run delivers nothing new (the runner keeps its checkpoints)
    assert consumer.run().delivered == 0


def test_stream_consumer_names_an_unknown_function(notes: SynthResult, local_deploy: Any, stream_consumer: Any) -> None:
    # GIVEN the deployed notes tables
    deployment = local_deploy(notes.template(STACK), name_prefix="notes-")
    # WHEN a consumer is asked for a function the template does not have
    # THEN the error names it and lists the functions there are
    with pytest.raises(SynthError, match=r"'Missing'.*AuditFunction"):
        stream_consumer(notes, deployment, "Missing")


# Registration, as a user's repository gets it --------------------------------------------------
USER_TESTS = '''
import sys

HEAVY = ("aws_cdk", "jsii", "constructs")


def test_plugin_came_from_the_entry_point(pytestconfig):
    plugin = sys.modules["constructs_lib.testing.plugin"]
    assert pytestconfig.pluginmanager.get_plugin("constructs_lib") is plugin
    dists = [dist.project_name for loaded, dist in pytestconfig.pluginmanager.list_plugin_distinfo()
             if loaded is plugin]
    assert dists == ["constructs_lib"]


def test_tables_without_the_cdk(local_deploy, dynamodb_client):
    deployment = local_deploy({"Resources": {"Kv": {"Type": "AWS::DynamoDB::Table", "Properties": {
        "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST"}}}})
    dynamodb_client.put_item(TableName=deployment.table_name("Kv"), Item={"k": {"S": "a"}})
    assert dynamodb_client.get_item(TableName=deployment.table_name("Kv"), Key={"k": {"S": "a"}})["Item"]
    assert [m for m in sys.modules if m.split(".")[0] in HEAVY] == []


def test_synthesize_and_deploy(cdk_synth, local_deploy):
    def build(app):
        import aws_cdk as cdk
        from constructs_lib import SingleTable
        from constructs_lib.model import AccessPattern, Entity, Model

        model = Model("kv", entities=[Entity("Kv", pk="KV#{k}", fields=["k"])],
                      access_patterns=[AccessPattern("kv by k", entity="Kv")])
        SingleTable(cdk.Stack(app, "UserStack"), "Data", model=model)

    deployment = local_deploy(cdk_synth(build).template("UserStack"))
    assert deployment.describe("DataTable")["KeySchema"] == [{"AttributeName": "PK", "KeyType": "HASH"}]
'''


def test_plugin_registers_through_its_entry_point(pytester: pytest.Pytester, dynamodb_local: Any) -> None:
    # GIVEN a user's test directory with one test file and no conftest.py
    pytester.makepyfile(test_user=textwrap.dedent(USER_TESTS))
    assert not list(pytester.path.glob("conftest.py"))
    # WHEN pytest runs it in a fresh process (plugins autoloaded, nothing passed with -p)
    env_before = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    assert env_before is None, "plugin autoloading is disabled in this environment"
    result = pytester.runpytest_subprocess(f"--dynamodb-local-dir={dynamodb_local.jar_dir}", "-p", "no:cacheprovider")
    # THEN the fixtures came from the installed plugin: registered under its entry-point name,
    # without importing the CDK until cdk_synth is used
    result.assert_outcomes(passed=3)


def test_fixtures_are_listed_with_their_scopes(pytester: pytest.Pytester) -> None:
    # GIVEN the session environment the plugin set for this (outer) run
    assert os.environ["AWS_EC2_METADATA_DISABLED"] == "true"
    # WHEN a nested pytest run in this same process lists the available fixtures
    result = pytester.runpytest("--fixtures")
    # THEN every plugin fixture is listed with its scope, from the plugin module
    text = result.stdout.str()
    for name, scope in PLUGIN_FIXTURES.items():
        label = f"{name} [{scope} scope]" if scope != "function" else name
        assert any(line.startswith(f"{label} -- ") and "plugin.py" in line for line in text.splitlines()), name
    # AND ending the nested run left the outer run's environment as it was
    assert os.environ["AWS_EC2_METADATA_DISABLED"] == "true"
    assert sys.modules["constructs_lib.testing.plugin"] is not None
