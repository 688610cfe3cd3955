"""Packaging: two repositories — a producer owning the table, a consumer importing it — each a CDK
app in its own directory with its own virtualenv holding the wheel, deployed into one DynamoDB Local.

* ``producer_app/`` (the table's owner): its model (``model.py``), a ``SingleTable`` with a stream
  and the index ``GSI1``, a ``ShardedCounter`` and a ``StreamAudit``; it publishes the table's
  contract as SSM parameters under ``/desk/data`` (``ModelContract``), and its synth writes the
  contract file ``cdk.out/desk.contract.json``.
* ``consumer_app/``: the file-first recipe. It holds no copy of the producer's model: the contract
  file is copied into the checkout as ``contracts/desk.contract.json`` (the "commit the contract"
  step), the model is ``Model.from_contract(...)`` with a view adding the consumer-only pattern
  "queue of an agent since", and the table is imported with ``SingleTable.from_parameters``. Its
  ``TableFunction`` is a handler package (``handlers/report``: ``index.py`` importing its sibling
  ``summary.py``, and ``tabulate`` from ``requirements.txt``) declaring its two patterns, so it is
  granted Query on ``GSI1`` only. ``cdk.json`` pins the producer's model fingerprint, and
  ``check_report.py`` (copied as ``test_report.py``) is the consumer's own test suite.

Each app is copied to its own temporary directory (a checkout), synthesized with the pinned CLI
(``cdk synth``, the app run by its own virtualenv's interpreter) with cdk-nag's
``AwsSolutionsChecks`` on, and linted with cfn-lint. Then the producer's assembly is deployed to
DynamoDB Local, the consumer's after it with the producer's values (``shared=``), so the consumer's
SSM parameter reads resolve to what the producer published, and a local SSM endpoint (``local_ssm``)
serves the published contract the consumer's handler reads at cold start; items written with the
producer's model are read by the consumer's bundled handler, run from its asset directory, through
the producer's pattern and the consumer-only one. The consumer's own tests pass in a copy of its
checkout alone (the table from the committed contract, ``local_deploy_contract``), and
``describe`` there lists the imported table and the function's scope and slice. A consumer that
commits the contract of a changed producer model (one key template changed, exported with
``contract export``) fails ``cdk synth`` when the fingerprint is pinned, and without the pin
refuses to start at its first call, naming the changed entity — before any request reaches DynamoDB.

``tabulate`` is installed into a per-module cache (``CONSTRUCTS_LIB_CACHE_DIR``), so the consumer's
synth time includes its cold install. pytest reaches the consumer's virtualenv the way aws-cdk-lib
does (the ``.pth`` line of ``_apps.make_venv``, standing in for ``pip install
"constructs_lib[cdk,testing]"`` offline). Times, the wheel's and the assets' sizes are printed at
the end of the module.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _apps import (
    Clock,
    clean_env,
    cli_synth,
    copy_app,
    kb,
    lint_findings,
    make_venv,
    nag_problems,
    resource_types,
    site_packages,
    zipped_size,
)

from constructs_lib.constructs.cache import ENV_CACHE_DIR
from constructs_lib.model import Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.contract import ENV_CONTRACT_PARAMETER, fingerprint
from constructs_lib.runtime.scope import ENV_ACCESS_SCOPE
from constructs_lib.testing import HandlerError, LocalDeployError, SynthResult, find_dynamodb_local_dir

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
PRODUCER_APP, CONSUMER_APP = HERE / "producer_app", HERE / "consumer_app"
PRODUCER, CONSUMER = "DeskData", "DeskReports"
PREFIX = "/desk/data"
PIN = "desk:model-fingerprint"
REPORT, HANDLER = "TicketReport", "index.handler"
#: The contract file the producer's synth writes, and where the consumer commits it.
CONTRACT_FILE, COMMITTED = "desk.contract.json", Path("contracts") / "desk.contract.json"
#: The consumer-only access pattern (the consumer's view of the contract).
SINCE = "queue of an agent since"
#: The one key template the changed producer model (behind the mismatched contract) changes.
SK, CHANGED_SK = 'sk="TICKET#{ticket_id}"', 'sk="TICKET#{opened_at}#{ticket_id}"'
SSM_VALUE = "AWS::SSM::Parameter::Value<String>"
DAY = datetime(2024, 6, 3, 8, 0, tzinfo=UTC)
WINDOW = {"since": "2024-06-03T00:00:00Z", "until": "2024-06-05T23:59:59Z"}
CLOCK_TITLE = "two repositories check"


# Helpers ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class App:
    """An app's checkout and the cloud assembly `cdk synth` wrote into it."""

    directory: Path

    @property
    def out(self) -> Path:
        return self.directory / "cdk.out"

    @property
    def result(self) -> SynthResult:
        return SynthResult.from_directory(self.out)


def load_model(app_dir: Path, name: str) -> Model:
    """``desk_model`` of an app directory's ``model.py`` (imported under a unique module name)."""
    spec = importlib.util.spec_from_file_location(name, app_dir / "model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.desk_model  # type: ignore[no-any-return]


def consumer_checkout(target: Path, contract: Path) -> Path:
    """A consumer checkout at *target*: the app directory with the contract file *contract*
    committed as ``contracts/desk.contract.json`` and its tests as ``test_report.py``."""
    directory = copy_app(CONSUMER_APP, target)
    (directory / "check_report.py").rename(directory / "test_report.py")
    (directory / COMMITTED).parent.mkdir()
    shutil.copy2(contract, directory / COMMITTED)
    return directory


def pinned(app_dir: Path) -> str:
    return json.loads((app_dir / "cdk.json").read_text(encoding="utf-8"))["context"][PIN]


def published(template: dict[str, Any]) -> dict[str, Any]:
    """SSM parameter name -> its value in the template, for every parameter it creates."""
    return {r["Properties"]["Name"]: r["Properties"]["Value"] for r in template["Resources"].values()
            if r["Type"] == "AWS::SSM::Parameter"}


class CountingEndpoint:
    """A local HTTP endpoint that counts requests and answers each with a DynamoDB client error
    (no retry), to show whether a handler sent any request at all."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen.append(str(self.headers.get("X-Amz-Target")))
                body = json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
                                   "message": "counting endpoint"}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# Fixtures (the wheel and `clock` are in conftest.py) ----------------------------------------------
@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("repos")


@pytest.fixture(scope="module")
def deps_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An empty per-user cache: the consumer's synth installs tabulate cold."""
    return str(tmp_path_factory.mktemp("user-cache"))


@pytest.fixture(scope="module")
def producer_venv(repos: Path, wheel_file: Path, clock: Clock) -> Path:
    return make_venv(repos / "producer-venv", wheel_file, clock, step="create 2 venvs")


@pytest.fixture(scope="module")
def consumer_venv(repos: Path, wheel_file: Path, clock: Clock) -> Path:
    return make_venv(repos / "consumer-venv", wheel_file, clock, step="create 2 venvs")


@pytest.fixture(scope="module")
def producer(repos: Path, producer_venv: Path, deps_cache: str, clock: Clock) -> App:
    app = App(copy_app(PRODUCER_APP, repos / "producer"))
    cli_synth(clock, "producer cdk synth", app.directory, producer_venv, **{ENV_CACHE_DIR: deps_cache})
    assets = {app.result.asset_dir(function) for function in ("TicketUpdatesFunction", "AuditFunction")}
    clock.note("producer assets (zipped)", ", ".join(
        f"{asset.name[:14]} {kb(zipped_size(asset, [p for p in asset.rglob('*') if p.is_file()]))}"
        for asset in sorted(assets)) + " (the aggregator and the audit writer)")
    return app


@pytest.fixture(scope="module")
def consumer(repos: Path, producer: App, consumer_venv: Path, deps_cache: str, clock: Clock) -> App:
    """The consumer's checkout, committing the contract file the producer's synth wrote, synthesized."""
    app = App(consumer_checkout(repos / "consumer", producer.out / CONTRACT_FILE))
    cli_synth(clock, "consumer cdk synth (tabulate installed cold)", app.directory, consumer_venv,
              **{ENV_CACHE_DIR: deps_cache})
    asset = app.result.asset_dir(REPORT)
    parts = {"runtime": [p for p in asset.rglob("*") if p.is_file() and p.relative_to(asset).parts[0] in (
                 "constructs_lib", "model.json")],
             "handler package": [asset / "index.py", asset / "summary.py"],
             "tabulate": [p for p in asset.rglob("*") if p.is_file() and p.relative_to(asset).parts[0].startswith("tabulate")]}
    every = [p for p in asset.rglob("*") if p.is_file()]
    clock.note("consumer asset (zipped)", f"{kb(zipped_size(asset, every))} in {len(every)} files: " + ", ".join(
        f"{name} {kb(zipped_size(asset, files))}" for name, files in parts.items()))
    return app


@pytest.fixture(scope="module")
def changed_contract(repos: Path, producer_venv: Path, clock: Clock) -> Path:
    """The contract of a producer checkout whose model has one key template changed, written by
    ``python -m constructs_lib contract export`` there (no synth)."""
    directory = copy_app(PRODUCER_APP, repos / "producer-changed")
    model = directory / "model.py"
    text = model.read_text(encoding="utf-8")
    assert text.count(SK) == 1, f"{SK} is no longer in the producer's model exactly once"
    model.write_text(text.replace(SK, CHANGED_SK), encoding="utf-8")
    target = directory / "changed.contract.json"
    clock.run("changed producer: contract export", [producer_venv / "bin" / "python", "-m", "constructs_lib", "contract",
                                                     "export", "app.py", "--table", "desk", "-o", target],
              cwd=directory, env=clean_env(producer_venv))
    return target


@pytest.fixture(scope="module")
def mismatched(repos: Path, changed_contract: Path) -> Path:
    """A consumer checkout that committed the changed producer's contract (its pin left as it was)."""
    return consumer_checkout(repos / "consumer-mismatched", changed_contract)


@pytest.fixture(scope="module")
def unpinned_mismatched(repos: Path, mismatched: Path, consumer_venv: Path, deps_cache: str, clock: Clock) -> App:
    """The mismatched consumer without the fingerprint pin in cdk.json, synthesized."""
    app = App(copy_app(mismatched, repos / "consumer-mismatched-unpinned"))
    (app.directory / "cdk.json").write_text(json.dumps({"app": "python app.py"}), encoding="utf-8")
    cli_synth(clock, "mismatched consumer cdk synth (no pin)", app.directory, consumer_venv, **{ENV_CACHE_DIR: deps_cache})
    return app


@pytest.fixture
def counting_endpoint() -> Iterator[CountingEndpoint]:
    endpoint = CountingEndpoint()
    yield endpoint
    endpoint.close()


def tickets(table: TableClient) -> None:
    """What the desk's own code writes: agent a-1's queue holds t-01 and t-02 in the window."""
    for ticket_id, customer, agent, hours, status, priority, subject in [
        ("t-01", "c-1", "a-1", 0, "OPEN", "P2", "Invoice shows the wrong VAT"),
        ("t-02", "c-2", "a-1", 26, "WAITING", "P1", "Cannot sign in"),
        ("t-03", "c-1", "a-1", 30, "CLOSED", "P1", "Password reset"),   # closed: not in the queue
        ("t-04", "c-3", "a-1", 24 * 8, "OPEN", "P3", "Dark mode"),       # after the window
        ("t-05", "c-2", "a-2", 2, "OPEN", "P1", "Outage"),               # another agent's
    ]:
        table.put("Ticket", {"ticket_id": ticket_id, "customer_id": customer, "agent_id": agent, "status": status,
                             "opened_at": DAY + timedelta(hours=hours), "priority": priority, "subject": subject})


# Tests --------------------------------------------------------------------------------------------
def test_the_consumer_commits_the_producers_contract_file_and_pins_its_fingerprint(
    producer: App, consumer: App, producer_venv: Path, consumer_venv: Path, clock: Clock
) -> None:
    # GIVEN the producer's synthesized checkout and the consumer's checkout
    # WHEN the producer's team prints its model's fingerprint, and the consumer's team the committed contract's
    done = clock.run("fingerprint commands", [producer_venv / "bin" / "python", "-m", "constructs_lib", "fingerprint",
                                              "model"], cwd=producer.directory, env=clean_env(producer_venv))
    committed = clock.run("fingerprint commands", [consumer_venv / "bin" / "python", "-m", "constructs_lib",
                                                   "fingerprint", COMMITTED], cwd=consumer.directory,
                          env=clean_env(consumer_venv))
    # THEN the consumer committed the contract file the producer's synth wrote, byte for byte
    assert (consumer.directory / COMMITTED).read_bytes() == (producer.out / CONTRACT_FILE).read_bytes()
    # AND it holds no copy of the producer's model: no model.py, no module naming desk_model
    assert not (consumer.directory / "model.py").exists()
    assert [p.name for p in consumer.directory.rglob("*.py") if "desk_model" in p.read_text(encoding="utf-8")] == []
    # AND both print the same fingerprint, the one cdk.json pins
    assert done.stdout.split() == [pinned(CONSUMER_APP), "desk"]
    assert committed.stdout.split()[0] == pinned(CONSUMER_APP)
    assert pinned(CONSUMER_APP) == fingerprint(load_model(PRODUCER_APP, "producer_repo_model"))


def test_producer_synthesizes_with_the_cli_and_passes_cdk_nag_and_cfn_lint(producer: App) -> None:
    # GIVEN the producer's app synthesized by the pinned CLI with its own virtualenv
    result = producer.result
    template = result.template(PRODUCER)
    # THEN it owns the table and the audit table, the counter's aggregator and the audit writer, each
    # fed by a stream mapping
    types = resource_types(template)
    assert (types["AWS::DynamoDB::GlobalTable"], types["AWS::Lambda::Function"],
            types["AWS::Lambda::EventSourceMapping"]) == (2, 2, 2)
    assert sorted(result.functions(PRODUCER).values()) == [
        "constructs_lib.runtime.handlers.audit.handler", "constructs_lib.runtime.handlers.counter.handler"]
    # AND it publishes the contract: name, ARNs, the model and its fingerprint, under the prefix
    contract = published(template)
    assert sorted(contract) == [f"{PREFIX}/{n}" for n in ("contract", "model", "model-fingerprint", "stream-arn",
                                                           "table-arn", "table-name")]
    model = load_model(PRODUCER_APP, "producer_repo_model")
    assert contract[f"{PREFIX}/model-fingerprint"] == fingerprint(model)
    assert fingerprint(Model.from_json(contract[f"{PREFIX}/model"])) == fingerprint(model)
    # AND its synth wrote the contract file, holding the same model
    assert Model.from_contract(producer.out / CONTRACT_FILE).to_dict() == model.to_dict()
    # AND cdk-nag left nothing but the library's own acknowledgments, and cfn-lint nothing at all
    assert nag_problems(producer.out) == []
    assert lint_findings(producer.out / f"{PRODUCER}.template.json") == []


def test_consumer_synthesizes_a_handler_package_granted_one_index(consumer: App, consumer_venv: Path) -> None:
    # GIVEN the consumer's app synthesized by the pinned CLI with its own virtualenv
    result = consumer.result
    template = result.template(CONSUMER)
    # THEN it owns no table: one function, its role, policy and log group
    assert sorted(set(resource_types(template)) - {"AWS::CDK::Metadata"}) == [
        "AWS::IAM::Policy", "AWS::IAM::Role", "AWS::Lambda::Function", "AWS::Logs::LogGroup"]
    # AND it reads the table's name, ARN and fingerprint from the producer's SSM parameters at deploy time
    reads = {lid: p["Default"] for lid, p in template["Parameters"].items() if p["Type"] == SSM_VALUE}
    assert {f"{PREFIX}/{n}" for n in ("table-name", "table-arn")} <= set(reads.values())
    function = template["Resources"][result.function_logical_id(REPORT, CONSUMER)]["Properties"]
    assert function["Handler"] == HANDLER
    # AND the function gets its declared scope and the name of the published contract it checks its
    # slice against at cold start
    variables = dict(function["Environment"]["Variables"])
    assert json.loads(variables.pop(ENV_ACCESS_SCOPE))["patterns"] == ["queue of an agent", SINCE]
    assert variables.pop(ENV_CONTRACT_PARAMETER) == f"{PREFIX}/contract"
    assert {name: reads[value["Ref"]] for name, value in variables.items()} == {"TABLE_NAME": f"{PREFIX}/table-name"}
    # AND its only DynamoDB permission is Query on the GSI1 index ARN of the imported table, for AGENT# keys
    statements = [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
                  for s in r["Properties"]["PolicyDocument"]["Statement"] if "dynamodb:" in json.dumps(s["Action"])]
    assert [s["Action"] for s in statements] == ["dynamodb:Query"]
    (arn_parameter,) = [lid for lid, name in reads.items() if name == f"{PREFIX}/table-arn"]
    assert statements[0]["Resource"] == {"Fn::Join": ["", [{"Ref": arn_parameter}, "/index/GSI1"]]}
    assert statements[0]["Condition"]["ForAllValues:StringLike"] == {"dynamodb:LeadingKeys": ["AGENT#*"]}
    # AND the asset holds the package with its sibling module, tabulate, the runtime (from the
    # consumer's virtualenv) and the view of the committed contract — no dependency declaration,
    # boto3 or CDK
    asset = result.asset_dir(REPORT)
    assert (asset / "index.py").read_bytes() == (CONSUMER_APP / "handlers" / "report" / "index.py").read_bytes()
    assert (asset / "summary.py").is_file() and (asset / "tabulate" / "__init__.py").is_file()
    bundled = Model.from_json((asset / "model.json").read_text(encoding="utf-8"))
    assert fingerprint(bundled) == pinned(CONSUMER_APP) and bundled.consumer_patterns == (SINCE,)
    top = {p.name for p in asset.iterdir()}
    assert not top & {"requirements.txt", "boto3", "botocore", "aws_cdk", "jsii", "constructs", "contracts"}, top
    runtime = [p.relative_to(asset) for p in (asset / "constructs_lib").rglob("*.py")]
    assert runtime and [rel for rel in runtime if not (site_packages(consumer_venv) / rel).is_file()] == []
    # AND cdk-nag left nothing but the library's own acknowledgments, and cfn-lint nothing at all
    assert nag_problems(consumer.out) == []
    assert lint_findings(consumer.out / f"{CONSUMER}.template.json") == []


def test_both_apps_deploy_into_one_dynamodb_local_and_the_consumers_handler_reads_the_index(
    producer: App, consumer: App, local_deploy: Any, local_function: Any, dynamodb_client: Any, local_ssm: Any
) -> None:
    # GIVEN the producer's assembly deployed to DynamoDB Local, its SSM parameters served locally
    desk = local_deploy.assembly(producer.out, name_prefix="desk-")
    assert f"{PREFIX}/contract" in local_ssm.publish(desk)
    # WHEN the consumer's assembly is deployed after it, with the values the producer's stacks created
    reports = local_deploy.assembly(consumer.out, shared=desk.shared)
    env = reports.function_environment(REPORT)
    # THEN the report function's SSM read resolved to the producer's table, and it names the contract
    assert json.loads(env[ENV_ACCESS_SCOPE])["patterns"] == ["queue of an agent", SINCE]
    assert {k: v for k, v in env.items() if k != ENV_ACCESS_SCOPE} == {
        "TABLE_NAME": desk.table_name("DataTable"), ENV_CONTRACT_PARAMETER: f"{PREFIX}/contract"}
    # AND on its own, the consumer's assembly cannot resolve them (nothing published the parameters)
    alone = local_deploy.assembly(consumer.out)
    with pytest.raises(LocalDeployError, match=f"SSM parameter '{PREFIX}/table-name'"):
        alone.function_environment(REPORT)
    # WHEN the desk writes tickets with its own model, and the consumer's bundled handler runs
    tickets(TableClient(load_model(producer.directory, "producer_checkout_model"), env["TABLE_NAME"],
                        client=dynamodb_client))
    report = local_function(consumer.result.asset_dir(REPORT), HANDLER, environment={**env, **local_ssm.environment})
    answer = report({"agent_id": "a-1", **WINDOW})
    # (it read the published contract once, at cold start)
    assert local_ssm.requests == [("GetParameter", f"{PREFIX}/contract")]
    # THEN it read agent a-1's unresolved tickets of the window from GSI1, most urgent first, grouped
    # by its sibling module and formatted by tabulate
    assert (answer["count"], answer["tickets"], answer["by_priority"]) == (2, ["t-02", "t-01"], {"P1": 1, "P2": 1})
    assert answer["table"].splitlines() == [
        "| priority   | ticket   | customer   | opened           | subject                     |",
        "|------------|----------|------------|------------------|-----------------------------|",
        "| P1         | t-02     | c-2        | 2024-06-04 10:00 | Cannot sign in              |",
        "| P2         | t-01     | c-1        | 2024-06-03 08:00 | Invoice shows the wrong VAT |",
    ]
    # WHEN it runs with no end to the window: the consumer-only pattern of its view
    since = report({"agent_id": "a-1", "since": "2024-06-04T00:00:00Z"})
    # THEN it read every unresolved ticket of a-1 opened from that day on, on the producer's GSI1
    assert (since["count"], since["tickets"], since["by_priority"]) == (2, ["t-02", "t-04"], {"P1": 1, "P3": 1})


def test_the_consumers_own_tests_pass_with_no_producer_checkout(
    consumer: App, consumer_venv: Path, deps_cache: str, tmp_path_factory: pytest.TempPathFactory, clock: Clock
) -> None:
    # GIVEN a clone of the consumer's repository alone (as its CI has it): no producer checkout, no cdk.out
    clone = copy_app(consumer.directory, tmp_path_factory.mktemp("consumer-ci") / "desk-reports")
    assert sorted(p.relative_to(clone).as_posix() for p in clone.rglob("*") if p.is_file()) == [
        "app.py", "cdk.json", "contracts/desk.contract.json", "handlers/report/index.py",
        "handlers/report/requirements.txt", "handlers/report/summary.py", "test_report.py"]
    # WHEN its tests run with its virtualenv's pytest (the plugin from the wheel)
    env = clean_env(consumer_venv, DYNAMODB_LOCAL_DIR=str(find_dynamodb_local_dir()), **{ENV_CACHE_DIR: deps_cache})
    done = clock.run("consumer's own pytest", [consumer_venv / "bin" / "python", "-m", "pytest", "-q", "-p",
                                               "no:cacheprovider", "test_report.py"], cwd=clone, env=env, timeout=600)
    # THEN both passed: the table created from the committed contract, the bundled handler reading it
    # through the producer's pattern and the consumer-only one
    assert "2 passed" in done.stdout, done.stdout


def test_describe_in_the_consumers_checkout_lists_the_imported_table_and_the_functions_slice(
    consumer: App, consumer_venv: Path, clock: Clock
) -> None:
    # GIVEN the consumer's checkout
    # WHEN `describe app.py` runs there with its virtualenv
    done = clock.run("consumer describe", [consumer_venv / "bin" / "python", "-m", "constructs_lib", "describe",
                                           "app.py"], cwd=consumer.directory, env=clean_env(consumer_venv))
    text = done.stdout
    # THEN it describes the imported table, with the contract's model and fingerprint
    assert text.startswith(f"# {CONSUMER}/Desk — data model `desk` (imported)"), text[:300]
    assert f"SSM parameters under `{PREFIX}`" in text and f"model fingerprint `{pinned(CONSUMER_APP)}`" in text
    # AND marks the consumer-only pattern, and gives the report function's scope and slice
    assert f"| {SINCE} *(consumer)* | Ticket | GSI GSI1 | Query |" in text
    assert (f"| `{CONSUMER}/{REPORT}` | `queue of an agent`, `{SINCE}` | none | GSI1 | reads `Ticket`; writes nothing "
            "| Query on GSI1 for AGENT#* |") in text, text[text.find("## Functions"):][:1200]


def test_a_consumer_committing_a_changed_contract_fails_synth_when_the_fingerprint_is_pinned(
    producer: App, mismatched: Path, consumer_venv: Path, deps_cache: str, clock: Clock
) -> None:
    # GIVEN a consumer checkout that committed the contract of a producer model with one key template
    # changed (exported with `contract export`), and the old pin
    contract = Model.from_contract(mismatched / COMMITTED)
    changed = fingerprint(contract)
    assert changed != pinned(mismatched)
    # (it differs from the producer's current contract in the Ticket entity's fingerprint alone)
    before = json.loads((producer.out / CONTRACT_FILE).read_text(encoding="utf-8"))["fingerprints"]
    after = json.loads((mismatched / COMMITTED).read_text(encoding="utf-8"))["fingerprints"]
    assert ([n for n in before["entities"] if before["entities"][n] != after["entities"][n]],
            before["indexes"] == after["indexes"]) == (["Ticket"], True)
    # WHEN it is synthesized with the pinned CLI
    done = cli_synth(clock, "mismatched consumer cdk synth (pinned, fails)", mismatched, consumer_venv, check=False,
                     **{ENV_CACHE_DIR: deps_cache})
    # THEN synthesis fails with a ConstructPropsError naming both fingerprints, and writes no template
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "ConstructPropsError" in output and changed in output and pinned(mismatched) in output, output[-3000:]
    assert not (mismatched / "cdk.out" / f"{CONSUMER}.template.json").exists()


def test_a_consumer_with_a_changed_contract_and_no_pin_refuses_to_run_before_any_request(
    producer: App, consumer: App, unpinned_mismatched: App, local_deploy: Any, local_function: Any,
    counting_endpoint: CountingEndpoint, local_ssm: Any,
) -> None:
    # GIVEN the mismatched consumer (no pin: it synthesizes) deployed after the producer
    desk = local_deploy.assembly(producer.out, name_prefix="desk-")
    local_ssm.publish(desk)
    env = local_deploy.assembly(unpinned_mismatched.out, shared=desk.shared).function_environment(REPORT)
    env.update(local_ssm.environment)
    asset = unpinned_mismatched.result.asset_dir(REPORT)
    bundled = fingerprint(Model.from_json((asset / "model.json").read_text(encoding="utf-8")))
    assert bundled != pinned(CONSUMER_APP)
    # WHEN its bundled handler is called, every DynamoDB request going to an endpoint that counts them
    report = local_function(asset, HANDLER, environment=env, endpoint=counting_endpoint.url)
    with pytest.raises(HandlerError) as refused:
        report({"agent_id": "a-1", **WINDOW})
    # THEN it read the published contract and raised ContractBreakError (a ModelMismatchError) naming the
    # changed entity and its template, the function's -> the table's, and sent no request to the table
    assert "constructs_lib.runtime.exceptions.ContractBreakError" in str(refused.value)
    assert "entity 'Ticket' changed: " in str(refused.value)
    assert "Ticket sk template: 'TICKET#{opened_at}#{ticket_id}' -> 'TICKET#{ticket_id}'" in str(refused.value)
    assert counting_endpoint.requests == []
    # AND the matching consumer's handler, with the same environment and endpoint, does send its Query
    matching = local_function(consumer.result.asset_dir(REPORT), HANDLER, environment=env,
                              endpoint=counting_endpoint.url)
    with pytest.raises(HandlerError, match="ResourceNotFoundException"):
        matching({"agent_id": "a-1", **WINDOW})
    assert counting_endpoint.requests[:1] == ["DynamoDB_20120810.Query"]
