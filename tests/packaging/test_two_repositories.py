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
  granted Query on ``GSI1`` only. The committed file is also its pin (``from_parameters(...,
  contract=...)``): the function's slice is checked against it at synth. ``check_report.py``
  (copied as ``test_report.py``) is the consumer's own test suite.

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
``contract export``) synthesizes (its model and its pin are that file), but its deploy pipeline's
``contract verify --against ssm:/desk/data`` exits 1, and deployed it refuses to start at its
first call, naming the changed entity — before any request reaches DynamoDB.

Day two, the consumer neither re-synthesized nor redeployed (its slice, written by ``contract
slice``, registered in the producer's ``contracts/consumers/``): (a) the producer adds an entity,
the index ``GSI2`` and an access pattern, re-synthesizes and redeploys (the table updated in
place, ``update_template``) and publishes — the consumer's handler answers as before, its
``verify --against ssm:`` passes (advising a refresh of its copy) and the producer's ``diff``
breaks no consumer; (b) the producer changes the ``Ticket`` key template the consumer's slice
uses — the consumer's ``verify --against`` the new file exits 1 naming it, the producer's ``diff``
exits 3 naming the consumer, and the deployed handler refuses at cold start before any request.

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
    make_venv,
    nag_problems,
    resource_types,
    site_packages,
    zipped_size,
)
from cfn_lint_check import lint_findings

from constructs_lib.assets.cache import ENV_CACHE_DIR
from constructs_lib.model import Model
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.environment import ENV_ACCESS_SCOPE, ENV_CONTRACT_PARAMETER
from constructs_lib.testing import HandlerError, LocalDeployError, SynthResult, find_dynamodb_local_dir, update_template

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
PRODUCER_APP, CONSUMER_APP = HERE / "producer_app", HERE / "consumer_app"
PRODUCER, CONSUMER = "DeskData", "DeskReports"
PREFIX = "/desk/data"
REPORT, HANDLER = "TicketReport", "index.handler"
#: The contract file the producer's synth writes, and where the consumer commits it.
CONTRACT_FILE, COMMITTED = "desk.contract.json", Path("contracts") / "desk.contract.json"
#: The consumer-only access pattern (the consumer's view of the contract).
SINCE = "queue of an agent since"
#: The one key template the changed producer model (behind the mismatched contract) changes.
SK, CHANGED_SK = 'sk="TICKET#{ticket_id}"', 'sk="TICKET#{opened_at}#{ticket_id}"'
#: Day two, additive: the producer adds an entity writing a new index GSI2, the index and a pattern on it.
ANCHOR_ENTITY, ANCHOR_INDEXES = '    ],\n    indexes=[Index("GSI1")],\n', 'indexes=[Index("GSI1")]'
ANCHOR_PATTERN = 'AccessPattern("queue of an agent", entity="Ticket", index="GSI1", sk="between"),\n'
ARTICLE = '''        Entity(
            "Article",
            pk="ARTICLE#{article_id}",
            sk="ARTICLE",
            fields={"article_id": "string", "topic": "string", "title": "string"},
            indexes={"GSI2": IndexKey(pk="TOPIC#{topic}", sk="ARTICLE#{article_id}")},
            required=("topic", "title"),
        ),
'''
ARTICLES = '        AccessPattern("articles of a topic", entity="Article", index="GSI2", sk="begins_with"),\n'
#: The consumer's registered slice (``contract slice -o``), under the producer's contracts/consumers/.
SLICE_FILE = "desk-reports.json"
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


def edit(app_dir: Path, *replacements: tuple[str, str]) -> None:
    """Apply *replacements* to the model.py of a producer checkout, each anchor found exactly once."""
    model = app_dir / "model.py"
    text = model.read_text(encoding="utf-8")
    for old, new in replacements:
        assert text.count(old) == 1, f"{old!r} is no longer in the producer's model exactly once"
        text = text.replace(old, new)
    model.write_text(text, encoding="utf-8")


def cli(venv: Path, *args: str | Path) -> list[str | Path]:
    """``python -m constructs_lib ARGS`` with *venv*'s interpreter."""
    return [venv / "bin" / "python", "-m", "constructs_lib", *args]


def register(slice_file: Path, producer_dir: Path) -> None:
    """The producer commits the consumer's slice under ``contracts/consumers/``."""
    (producer_dir / "contracts" / "consumers").mkdir(parents=True, exist_ok=True)
    shutil.copy2(slice_file, producer_dir / "contracts" / "consumers" / SLICE_FILE)


#: The producer's model's whole-model fingerprint (day one).
DESK_FINGERPRINT = fingerprint(load_model(PRODUCER_APP, "producer_repo_model"))


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
def changed_producer(repos: Path, producer_venv: Path, clock: Clock) -> App:
    """A producer checkout whose model has one key template changed (the ``Ticket`` sort key), its
    contract written by ``python -m constructs_lib contract export`` (no synth) as
    ``changed.contract.json``."""
    app = App(copy_app(PRODUCER_APP, repos / "producer-changed"))
    edit(app.directory, (SK, CHANGED_SK))
    clock.run("changed producer: contract export", cli(producer_venv, "contract", "export", "app.py", "--table", "desk",
                                                       "-o", "changed.contract.json"),
              cwd=app.directory, env=clean_env(producer_venv))
    return app


@pytest.fixture(scope="module")
def changed_contract(changed_producer: App) -> Path:
    return changed_producer.directory / "changed.contract.json"


@pytest.fixture(scope="module")
def mismatched(repos: Path, changed_contract: Path, consumer_venv: Path, deps_cache: str, clock: Clock) -> App:
    """A consumer checkout that committed the changed producer's contract, synthesized."""
    app = App(consumer_checkout(repos / "consumer-mismatched", changed_contract))
    cli_synth(clock, "mismatched consumer cdk synth", app.directory, consumer_venv, **{ENV_CACHE_DIR: deps_cache})
    return app


@pytest.fixture(scope="module")
def registered(consumer: App, consumer_venv: Path, deps_cache: str, clock: Clock) -> Path:
    """The consumer's slice, written in its checkout by ``contract slice app.py -o desk-reports.json``."""
    clock.run("consumer contract slice", cli(consumer_venv, "contract", "slice", "app.py", "-o", SLICE_FILE),
              cwd=consumer.directory, env=clean_env(consumer_venv, **{ENV_CACHE_DIR: deps_cache}))
    return consumer.directory / SLICE_FILE


@pytest.fixture(scope="module")
def day_two(repos: Path, producer_venv: Path, deps_cache: str, clock: Clock) -> App:
    """Day two's producer checkout: an entity ``Article`` writing the new index ``GSI2``, the index
    and the pattern "articles of a topic" added to the model, synthesized again."""
    app = App(copy_app(PRODUCER_APP, repos / "producer-day-two"))
    edit(app.directory, (ANCHOR_ENTITY, ARTICLE + ANCHOR_ENTITY), (ANCHOR_INDEXES, 'indexes=[Index("GSI1"), Index("GSI2")]'),
         (ANCHOR_PATTERN, ANCHOR_PATTERN + ARTICLES))
    cli_synth(clock, "producer re-synth (day two, x2)", app.directory, producer_venv, **{ENV_CACHE_DIR: deps_cache})
    return app


@pytest.fixture(scope="module")
def changed_synth(changed_producer: App, producer_venv: Path, deps_cache: str, clock: Clock) -> App:
    """The changed producer checkout, synthesized (what its deploy would apply)."""
    cli_synth(clock, "producer re-synth (day two, x2)", changed_producer.directory, producer_venv,
              **{ENV_CACHE_DIR: deps_cache})
    return changed_producer


def ssm_env(venv: Path, local_ssm: Any, deps_cache: str) -> dict[str, str]:
    """A consumer pipeline's environment whose SSM client reads the local endpoint."""
    return clean_env(venv, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local", AWS_DEFAULT_REGION="us-east-1",
                     **local_ssm.environment, **{ENV_CACHE_DIR: deps_cache})


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
def test_the_consumer_commits_the_producers_contract_file_and_pins_it(
    producer: App, consumer: App, producer_venv: Path, consumer_venv: Path, deps_cache: str, clock: Clock
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
    # AND both print the same fingerprint, the producer's model's
    assert done.stdout.split() == [DESK_FINGERPRINT, "desk"]
    assert committed.stdout.split()[0] == DESK_FINGERPRINT
    # AND the pin is the committed file itself (contract=), not a fingerprint in cdk.json
    assert json.loads((consumer.directory / "cdk.json").read_text(encoding="utf-8")) == {"app": "python app.py"}
    assert 'contract=CONTRACT' in (consumer.directory / "app.py").read_text(encoding="utf-8")
    # WHEN its CI verifies the app against the committed file, offline
    verified = clock.run("consumer contract verify (x3)", cli(consumer_venv, "contract", "verify", "app.py", "--against",
                                                             COMMITTED), cwd=consumer.directory,
                         env=clean_env(consumer_venv, **{ENV_CACHE_DIR: deps_cache}))
    # THEN the report function's slice (Ticket, GSI1) holds
    assert verified.stdout == f"{CONSUMER}/{REPORT}: compatible (1 entities, 1 indexes)\n", verified.stdout


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
    assert fingerprint(bundled) == DESK_FINGERPRINT and bundled.consumer_patterns == (SINCE,)
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
    assert f"SSM parameters under `{PREFIX}`" in text and f"model fingerprint `{DESK_FINGERPRINT}`" in text
    # AND marks the consumer-only pattern, and gives the report function's scope and slice
    assert f"| {SINCE} *(consumer)* | Ticket | GSI GSI1 | Query |" in text
    assert (f"| `{CONSUMER}/{REPORT}` | `queue of an agent`, `{SINCE}` | none | GSI1 | reads `Ticket`; writes nothing "
            "| Query on GSI1 for AGENT#* |") in text, text[text.find("## Functions"):][:1200]


def test_a_consumer_committing_a_changed_contract_synthesizes_but_its_pipeline_and_functions_refuse_it(
    producer: App, consumer: App, mismatched: App, consumer_venv: Path, deps_cache: str, local_deploy: Any,
    local_function: Any, counting_endpoint: CountingEndpoint, local_ssm: Any, clock: Clock,
) -> None:
    # GIVEN a consumer checkout that committed the contract of a producer model with one key template
    # changed (exported with `contract export`): it synthesized, its model and its pin being that file
    before = json.loads((producer.out / CONTRACT_FILE).read_text(encoding="utf-8"))["fingerprints"]
    after = json.loads((mismatched.directory / COMMITTED).read_text(encoding="utf-8"))["fingerprints"]
    # (it differs from the producer's current contract in the Ticket entity's fingerprint alone)
    assert ([n for n in before["entities"] if before["entities"][n] != after["entities"][n]],
            before["indexes"] == after["indexes"]) == (["Ticket"], True)
    asset = mismatched.result.asset_dir(REPORT)
    assert fingerprint(Model.from_json((asset / "model.json").read_text(encoding="utf-8"))) != DESK_FINGERPRINT
    # AND the producer's current (unchanged) contract deployed and published
    desk = local_deploy.assembly(producer.out, name_prefix="desk-")
    local_ssm.publish(desk)
    # WHEN its deploy pipeline verifies the app against the published contract
    verified = clock.run("consumer contract verify (x3)", cli(consumer_venv, "contract", "verify", "app.py", "--against",
                                                             f"ssm:{PREFIX}"), cwd=mismatched.directory,
                         env=ssm_env(consumer_venv, local_ssm, deps_cache), check=False)
    # THEN it exits 1, naming the function, the entity and its template, the app's -> the published
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert f"{CONSUMER}/{REPORT}: INCOMPATIBLE with SSM parameter '{PREFIX}/contract'" in verified.stdout
    assert "Ticket sk template: 'TICKET#{opened_at}#{ticket_id}' -> 'TICKET#{ticket_id}'" in verified.stdout
    # WHEN it is deployed all the same and its bundled handler is called, every DynamoDB request going
    # to an endpoint that counts them
    env = local_deploy.assembly(mismatched.out, shared=desk.shared).function_environment(REPORT)
    env.update(local_ssm.environment)
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


def day_one(producer: App, consumer: App, local_deploy: Any, local_ssm: Any, dynamodb_client: Any) -> tuple[Any, dict[str, str]]:
    """Both apps deployed, the producer's contract published and its tickets written: the producer's
    assembly deployment and the report function's environment."""
    desk = local_deploy.assembly(producer.out, name_prefix="desk-")
    local_ssm.publish(desk)
    env = local_deploy.assembly(consumer.out, shared=desk.shared).function_environment(REPORT)
    env.update(local_ssm.environment)
    tickets(TableClient(load_model(producer.directory, "producer_checkout_model"), env["TABLE_NAME"],
                        client=dynamodb_client))
    return desk, env


def test_day_two_an_additive_producer_change_leaves_the_deployed_consumer_working(
    producer: App, consumer: App, day_two: App, registered: Path, producer_venv: Path, consumer_venv: Path,
    deps_cache: str, local_deploy: Any, local_function: Any, dynamodb_client: Any, local_ssm: Any, clock: Clock,
) -> None:
    # GIVEN day one: both apps deployed, the consumer's report answering
    desk, env = day_one(producer, consumer, local_deploy, local_ssm, dynamodb_client)
    asset = consumer.result.asset_dir(REPORT)
    answer = local_function(asset, HANDLER, environment=env)({"agent_id": "a-1", **WINDOW})
    assert answer["tickets"] == ["t-02", "t-01"]
    # WHEN the producer adds the entity Article, the index GSI2 and a pattern on it, synthesizes again,
    # redeploys (the table updated in place: GSI2 created) and publishes the new contract
    data = desk.stack(PRODUCER).logical_id("DataTable")
    assert update_template(desk.stack(PRODUCER), day_two.result.template(PRODUCER))[data] == ["create GSI2"]
    assert f"{PREFIX}/contract" in local_ssm.publish(desk)
    new = json.loads(local_ssm.parameters[f"{PREFIX}/contract"])["fingerprints"]
    old = json.loads((consumer.directory / COMMITTED).read_text(encoding="utf-8"))["fingerprints"]
    # (the whole-model fingerprint changed; Ticket's and GSI1's did not)
    assert new["model"] == local_ssm.parameters[f"{PREFIX}/model-fingerprint"] != DESK_FINGERPRINT
    assert (new["entities"]["Ticket"], new["indexes"]["GSI1"]) == (old["entities"]["Ticket"], old["indexes"]["GSI1"])
    # AND writes an article with its new model
    TableClient(load_model(day_two.directory, "day_two_model"), env["TABLE_NAME"], client=dynamodb_client).put(
        "Article", {"article_id": "kb-1", "topic": "billing", "title": "VAT on invoices"})
    # THEN the consumer, neither synthesized again nor redeployed, starts again (a new cold start,
    # reading the new contract) and answers as before
    local_ssm.requests.clear()
    again = local_function(asset, HANDLER, environment=env)({"agent_id": "a-1", **WINDOW})
    assert local_ssm.requests == [("GetParameter", f"{PREFIX}/contract")]
    assert again == answer
    # AND its deploy pipeline's verify against the published contract passes, advising a refresh of its copy
    verified = clock.run("consumer contract verify (x3)", cli(consumer_venv, "contract", "verify", "app.py", "--against",
                                                             f"ssm:{PREFIX}"), cwd=consumer.directory,
                         env=ssm_env(consumer_venv, local_ssm, deps_cache))
    assert verified.stdout.startswith(f"{CONSUMER}/{REPORT}: compatible (1 entities, 1 indexes)\n"), verified.stdout
    assert "is older than SSM parameter" in verified.stdout and "it keeps working" in verified.stdout
    # AND the producer's diff, with the consumer's slice registered, breaks no consumer
    register(registered, day_two.directory)
    diffed = clock.run("producer diff (x2)", cli(producer_venv, "diff", "app.py"), cwd=day_two.directory,
                       env=clean_env(producer_venv, **{ENV_CACHE_DIR: deps_cache}))
    assert "consumer:" not in diffed.stdout, diffed.stdout


def test_day_two_a_changed_key_template_is_refused_by_verify_diff_and_the_deployed_consumer(
    producer: App, consumer: App, changed_synth: App, changed_contract: Path, registered: Path, producer_venv: Path,
    consumer_venv: Path, deps_cache: str, local_deploy: Any, local_function: Any, dynamodb_client: Any,
    counting_endpoint: CountingEndpoint, local_ssm: Any, clock: Clock,
) -> None:
    # GIVEN the producer's change of the Ticket sort key template (its synth writes what `contract export` did)
    assert (changed_synth.out / CONTRACT_FILE).read_bytes() == changed_contract.read_bytes()
    # WHEN the consumer verifies its app against the producer's new contract file (before refreshing its copy)
    verified = clock.run("consumer contract verify (x3)", cli(consumer_venv, "contract", "verify", "app.py", "--against",
                                                             changed_contract), cwd=consumer.directory,
                         env=clean_env(consumer_venv, **{ENV_CACHE_DIR: deps_cache}), check=False)
    # THEN it exits 1, naming the function, the entity and its template, old -> new
    assert verified.returncode == 1, verified.stdout + verified.stderr
    assert f"{CONSUMER}/{REPORT}: INCOMPATIBLE with " in verified.stdout
    assert "Ticket sk template: 'TICKET#{ticket_id}' -> 'TICKET#{opened_at}#{ticket_id}'" in verified.stdout
    # WHEN the producer's diff runs with the consumer's slice registered
    register(registered, changed_synth.directory)
    diffed = clock.run("producer diff (x2)", cli(producer_venv, "diff", "app.py"), cwd=changed_synth.directory,
                       env=clean_env(producer_venv, **{ENV_CACHE_DIR: deps_cache}), check=False)
    # THEN it exits 3, naming the registered consumer and the entity
    assert diffed.returncode == 3, diffed.stdout + diffed.stderr
    assert "[breaking] consumer:desk-reports: this change breaks registered consumer 'desk-reports'" in diffed.stdout
    assert "'Ticket'" in diffed.stdout, diffed.stdout
    # WHEN the producer deploys it all the same (the table's keys are attribute names: updated in place)
    # and publishes, the consumer being neither synthesized again nor redeployed
    desk, env = day_one(producer, consumer, local_deploy, local_ssm, dynamodb_client)
    update_template(desk.stack(PRODUCER), changed_synth.result.template(PRODUCER))
    local_ssm.publish(desk)
    # AND the report's next cold start, every DynamoDB request going to an endpoint that counts them
    report = local_function(consumer.result.asset_dir(REPORT), HANDLER, environment=env, endpoint=counting_endpoint.url)
    with pytest.raises(HandlerError) as refused:
        report({"agent_id": "a-1", **WINDOW})
    # THEN it refuses before any request, naming the entity and its template, the function's -> the table's
    assert "constructs_lib.runtime.exceptions.ContractBreakError" in str(refused.value)
    assert "entity 'Ticket' changed: " in str(refused.value)
    assert "Ticket sk template: 'TICKET#{ticket_id}' -> 'TICKET#{opened_at}#{ticket_id}'" in str(refused.value)
    assert counting_endpoint.requests == []
