"""The SaaS example: its stack synthesized, its versioned documents and tenant isolation on
DynamoDB Local (tables created from the synthesized template), its audit trail fed by the real
stream through the bundled handler, and the security gates (cdk-nag, cfn-lint) on its template."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cfn_lint_check import lint_findings

from constructs_lib.model import Model
from constructs_lib.runtime import (
    AuditClient,
    ItemValidationError,
    KeyValueError,
    TableClient,
    TenantAccessError,
    VersionConflictError,
)
from constructs_lib.testing import LocalDeployment, asset_dir
from examples.saas.documents import (
    MAX_VERSION,
    DocumentConflictError,
    DocumentExistsError,
    DocumentNotFoundError,
    DocumentStore,
)
from examples.saas.model import saas_model
from examples.saas.scenario import (
    AUDIT_HANDLER,
    counting_calls,
    function_id,
    role_statements,
)

# The security gates' helpers live beside their tests in tests/synth.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "synth"))
from test_cdk_nag import REVIEWED_ACKNOWLEDGMENTS, synth_with_nag

STACK = "SaasStack"
TENANT = "${aws:PrincipalTag/tenant}"


# Synthesis ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saas_nag(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``examples.saas.app.build_app(outdir)``, synthesized once for the module, with cdk-nag's
    ``AwsSolutionsChecks`` attached (it reads the synthesized templates and changes none)."""
    from examples.saas.app import build_app

    return synth_with_nag(build_app(tmp_path_factory.mktemp("saas-cdk-out")))


@pytest.fixture(scope="module")
def saas_app(saas_nag: Any) -> Any:
    return saas_nag.app


@pytest.fixture(scope="module")
def saas_cdk_out(saas_app: Any) -> Path:
    return Path(saas_app.outdir)


@pytest.fixture(scope="module")
def saas_template(saas_cdk_out: Path) -> dict[str, Any]:
    return json.loads((saas_cdk_out / f"{STACK}.template.json").read_text(encoding="utf-8"))


def _of_type(template: dict[str, Any], cfn_type: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in template["Resources"].items() if r["Type"] == cfn_type}


def test_app_holds_saas_stack_with_its_public_attributes(saas_app: Any) -> None:
    # GIVEN the example app WHEN built THEN it holds SaasStack alone, exposing its constructs
    from constructs_lib import SingleTable, StreamAudit
    from examples.saas.stack import SaasStack

    stacks = [c for c in saas_app.node.children if isinstance(c, SaasStack)]
    assert [s.stack_name for s in stacks] == [STACK]
    (stack,) = stacks
    assert isinstance(stack.docs, SingleTable) and isinstance(stack.audit, StreamAudit)
    assert stack.docs.model is saas_model
    assert {stack.tenant_role.node.id, stack.back_office_role.node.id, stack.editor_role.node.id} == {
        "TenantRole", "BackOfficeRole", "EditorRole"}


def test_docs_table_has_the_models_keys_indexes_and_stream(saas_template: dict[str, Any]) -> None:
    # GIVEN the synthesized template
    tables = _of_type(saas_template, "AWS::DynamoDB::GlobalTable")
    (docs_id,) = [lid for lid in tables if lid.startswith("DocsTable")]
    docs = tables[docs_id]["Properties"]
    # THEN the documents table has PK/SK, the two GSIs (ByStatus keys and the entity only) and a NEW_AND_OLD_IMAGES stream
    assert docs["KeySchema"] == [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]
    projections = {g["IndexName"]: g["Projection"] for g in docs["GlobalSecondaryIndexes"]}
    assert projections == {"ByOwner": {"ProjectionType": "ALL"},
                           "ByStatus": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["_type"]}}
    assert docs["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    # AND an audit table, one audit function fed by one stream mapping, and the three outputs
    assert len(tables) == 2
    assert len(_of_type(saas_template, "AWS::Lambda::Function")) == 1
    assert len(_of_type(saas_template, "AWS::Lambda::EventSourceMapping")) == 1
    assert sorted(saas_template["Outputs"]) == ["DocsTableName", "EditorRoleArn", "TenantRoleArn"]


def test_tenant_role_is_confined_by_leading_keys_and_denied_the_mixing_index(saas_template: dict[str, Any]) -> None:
    # GIVEN the tenant role's synthesized policy
    allow, deny = role_statements(saas_template, "TenantRole")
    (docs_id,) = [lid for lid in _of_type(saas_template, "AWS::DynamoDB::GlobalTable") if lid.startswith("DocsTable")]
    table_arn = {"Fn::GetAtt": [docs_id, "Arn"]}
    # THEN read-write item actions are allowed on the table and the tenant-safe ByOwner index...
    assert allow["Effect"] == "Allow" and "dynamodb:PutItem" in allow["Action"] and "dynamodb:Scan" not in allow["Action"]
    assert allow["Resource"] == [table_arn, {"Fn::Join": ["", [table_arn, "/index/ByOwner"]]}]
    # ...only on partition keys of the caller's tenant tag, which must be present
    assert allow["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"TENANT#{TENANT}", f"TENANT#{TENANT}#*"]},
        "Null": {"aws:PrincipalTag/tenant": "false", "dynamodb:LeadingKeys": "false"},
    }
    # AND every read of ByStatus (keys start with the status, not the tenant) is explicitly denied
    assert deny["Effect"] == "Deny" and deny["Resource"] == {"Fn::Join": ["", [table_arn, "/index/ByStatus"]]}
    # AND the back office may only Query that one index
    (back_office,) = role_statements(saas_template, "BackOfficeRole")
    assert (back_office["Action"], back_office["Resource"]) == ("dynamodb:Query", deny["Resource"])


def test_bundled_model_is_the_example_model(saas_cdk_out: Path, saas_template: dict[str, Any]) -> None:
    # GIVEN the audit function's asset WHEN its model.json is read THEN it is the example's model, versions included
    asset = asset_dir(saas_cdk_out, saas_template, function_id(saas_template, AUDIT_HANDLER))
    bundled = Model.from_json((asset / "model.json").read_text(encoding="utf-8"))
    assert bundled.to_json() == saas_model.to_json()
    assert bundled.resolved_patterns["document versions newest first"].operation == "Query"


def test_stack_passes_aws_solutions_checks(saas_nag: Any) -> None:
    # GIVEN the example app synthesized with cdk-nag's AwsSolutionsChecks
    result = saas_nag
    # THEN nothing is left unsuppressed, and what was suppressed is the constructs' reviewed acknowledgments
    assert result.error is None, result.error
    assert result.violations() == []
    suppressed = result.suppressed()
    assert suppressed, "AwsSolutionsChecks did not run"
    for finding in suppressed:
        reason, suffix = REVIEWED_ACKNOWLEDGMENTS[finding["ruleName"]]
        assert finding["reason"] == reason
        assert all(c["constructPath"].endswith(suffix) for c in finding["violatingConstructs"])


def test_template_is_cfn_lint_clean(saas_cdk_out: Path) -> None:
    # GIVEN the example's template WHEN cfn-lint checks it THEN no error and no warning
    assert lint_findings(saas_cdk_out / f"{STACK}.template.json") == []


# DynamoDB Local ---------------------------------------------------------------------------------------
@pytest.fixture
def deployment(local_deploy: Callable[..., LocalDeployment], saas_template: dict[str, Any]) -> LocalDeployment:
    """Fresh tables created from the synthesized SaasStack template (deleted after the test)."""
    return local_deploy(saas_template, name_prefix="saas-")


@pytest.fixture
def operator(deployment: LocalDeployment, dynamodb_client: Any) -> TableClient:
    return TableClient(saas_model, deployment.table_name("DocsTable"), client=dynamodb_client)


class Clock:
    """A clock that moves one second per reading (distinct, ordered timestamps)."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def acme(operator: TableClient) -> DocumentStore:
    return DocumentStore(operator.for_tenant("acme"), clock=Clock())


def partition(client: Any, table: str, pk: str) -> list[dict[str, Any]]:
    """Every stored item of a partition, raw (strongly consistent)."""
    return client.query(TableName=table, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={
        ":pk": {"S": pk}}, ConsistentRead=True)["Items"]



@pytest.mark.integration
def test_create_and_save_write_a_snapshot_and_the_latest_item(acme: DocumentStore, operator: TableClient,
                                                               dynamodb_client: Any) -> None:
    # GIVEN a document created by ann WHEN bob saves a new version on top of version 1
    acme.create("d1", owner="ann", title="Handbook", body="v1 text", editor="ann")
    saved = acme.save("d1", expected_version=1, title="Handbook", body="v2 text", editor="bob")
    # THEN the document's partition holds the latest item at version 2 and two immutable snapshots
    items = {i["SK"]["S"]: i for i in partition(dynamodb_client, operator.table_name, "TENANT#acme#DOC#d1")}
    assert sorted(items) == ["DOC", "V#000001", "V#000002"]
    assert (items["DOC"]["version"], items["DOC"]["body"], items["DOC"]["updated_by"]) == (
        {"N": "2"}, {"S": "v2 text"}, {"S": "bob"})
    assert (items["V#000001"]["body"], items["V#000001"]["updated_by"]) == ({"S": "v1 text"}, {"S": "ann"})
    assert saved.version == 2 and items["V#000002"]["body"] == {"S": "v2 text"}
    # AND snapshots take part in no index (read by key only); the latest item is in ByOwner
    assert not any(k.startswith("By") for k in items["V#000002"]) and "ByOwnerPK" in items["DOC"]


@pytest.mark.integration
def test_stale_save_raises_a_conflict_and_writes_nothing(acme: DocumentStore, operator: TableClient,
                                                         dynamodb_client: Any) -> None:
    # GIVEN two editors holding version 1, and bob's save accepted
    acme.create("d1", owner="ann", title="Handbook", body="v1", editor="ann")
    acme.save("d1", expected_version=1, title="Handbook", body="bob's", editor="bob")
    before = partition(dynamodb_client, operator.table_name, "TENANT#acme#DOC#d1")
    # WHEN ann saves on top of version 1 as well
    with pytest.raises(DocumentConflictError) as caught:
        acme.save("d1", expected_version=1, title="Ann's title", body="ann's", editor="ann")
    # THEN the typed conflict names the expected and the stored version (and is a VersionConflictError)
    conflict = caught.value
    assert isinstance(conflict, VersionConflictError)
    assert (conflict.expected, conflict.current, conflict.doc_id) == (1, 2, "d1")
    assert "version 2, not the expected 1" in str(conflict)
    # AND the transaction wrote nothing: neither the snapshot nor the latest item changed
    assert partition(dynamodb_client, operator.table_name, "TENANT#acme#DOC#d1") == before


@pytest.mark.integration
def test_versions_newest_first_page_and_version_n(acme: DocumentStore) -> None:
    # GIVEN a document with 12 versions (v10 would sort before v2 without zero padding)
    acme.create("d1", owner="ann", title="T", body="1", editor="ann")
    for version in range(1, 12):
        acme.save("d1", expected_version=version, title="T", body=str(version + 1), editor=f"e{version + 1}")
    # WHEN its versions are listed newest first
    page = acme.versions("d1")
    # THEN they come in numeric order, newest first, in one page
    assert [s.version for s in page] == list(range(12, 0, -1)) and page.cursor is None
    assert [s.body for s in page][:3] == ["12", "11", "10"]
    # AND paging continues where the previous page stopped
    first = acme.versions("d1", limit=5)
    rest = acme.versions("d1", cursor=first.cursor)
    assert [s.version for s in first] + [s.version for s in rest] == list(range(12, 0, -1))
    # AND one version is one GetItem; a version never saved is None
    v2 = acme.at_version("d1", 2)
    assert v2 is not None and (v2.body, v2.updated_by) == ("2", "e2")
    assert acme.at_version("d1", 13) is None
    latest = acme.latest("d1")
    assert latest is not None and (latest.version, latest.body) == (12, "12")


@pytest.mark.integration
def test_create_twice_and_save_of_a_missing_document_are_refused(acme: DocumentStore, operator: TableClient,
                                                                  dynamodb_client: Any) -> None:
    # GIVEN one document
    acme.create("d1", owner="ann", title="T", body="original", editor="ann")
    # WHEN it is created again THEN DocumentExistsError, the original untouched
    with pytest.raises(DocumentExistsError, match="'d1' of tenant 'acme' already exists"):
        acme.create("d1", owner="eve", title="T", body="overwrite", editor="eve")
    latest = acme.latest("d1")
    assert latest is not None and (latest.owner, latest.body, latest.version) == ("ann", "original", 1)
    # WHEN a document that does not exist is saved THEN DocumentNotFoundError, and no orphan snapshot
    with pytest.raises(DocumentNotFoundError, match="'ghost' of tenant 'acme' does not exist"):
        acme.save("ghost", expected_version=1, title="T", body="b", editor="ann")
    assert partition(dynamodb_client, operator.table_name, "TENANT#acme#DOC#ghost") == []


@pytest.mark.integration
def test_concurrent_editors_one_wins_the_other_retries(acme: DocumentStore) -> None:
    # GIVEN a document and two editors who both read version 1 before either saves
    acme.create("d1", owner="ann", title="T", body="start.", editor="ann")
    both_read = threading.Barrier(2)
    conflicts: list[DocumentConflictError] = []
    saved: dict[str, int] = {}

    def editor(name: str) -> None:
        calls = [0]

        def change(current: Any) -> tuple[str, str]:
            calls[0] += 1
            if calls[0] == 1:
                both_read.wait(timeout=30)
            return current.title, f"{current.body} {name}."

        saved[name] = acme.edit("d1", change, editor=name, on_conflict=conflicts.append).version

    # WHEN they save concurrently through edit()
    threads = [threading.Thread(target=editor, args=(n,)) for n in ("carol", "dave")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    # THEN one won at version 2, the other got a conflict, re-read and saved version 3
    assert sorted(saved.values()) == [2, 3]
    assert conflicts and all(c.expected == 1 for c in conflicts)
    # AND neither change is lost, and the history lists every version
    latest = acme.latest("d1")
    assert latest is not None and "carol." in latest.body and "dave." in latest.body
    assert [s.version for s in acme.versions("d1")] == [3, 2, 1]


@pytest.mark.integration
def test_status_change_moves_the_document_in_the_back_office_index(acme: DocumentStore, operator: TableClient) -> None:
    # GIVEN a draft WHEN a new version is saved with status PUBLISHED
    acme.create("d1", owner="ann", title="T", body="b", editor="ann")
    acme.save("d1", expected_version=1, title="T", body="b2", editor="ann", status="PUBLISHED")
    # THEN the ByStatus keys were recomputed in the same update: the back office finds it as published only
    assert [d["doc_id"] for d in operator.query("docs by status", status="PUBLISHED", tenant_id="acme")] == ["d1"]
    assert operator.query("docs by status", status="DRAFT", tenant_id="acme").items == []


@pytest.mark.integration
def test_tenants_are_isolated_and_refusals_make_no_call(acme: DocumentStore, operator: TableClient,
                                                        dynamodb_client: Any) -> None:
    # GIVEN the same document id in two tenants
    globex = DocumentStore(operator.for_tenant("globex"))
    globex.create("d1", owner="gus", title="Globex", body="theirs", editor="gus")
    acme.create("d1", owner="ann", title="Acme", body="ours", editor="ann")
    acme.save("d1", expected_version=1, title="Acme", body="ours v2", editor="ann")
    # THEN each tenant's store sees its own document only
    theirs = globex.latest("d1")
    assert theirs is not None and (theirs.title, theirs.version) == ("Globex", 1)
    assert [s.tenant_id for s in acme.versions("d1")] == ["acme", "acme"]
    # AND reaching for the other tenant or the tenant-mixing index fails before any AWS call
    client = acme.table
    with counting_calls(dynamodb_client) as calls:
        with pytest.raises(TenantAccessError, match="outside tenant 'acme'"):
            client.get("Doc", tenant_id="globex", doc_id="d1")
        with pytest.raises(TenantAccessError, match="outside tenant 'acme'"):
            client.query("document versions newest first", tenant_id="globex", doc_id="d1")
        with pytest.raises(TenantAccessError, match="outside tenant 'acme'"):
            client.transaction().put("DocVersion", {"tenant_id": "globex", "doc_id": "d1", "version": 2,
                                                    "updated_by": "eve"})
        with pytest.raises(TenantAccessError, match="reads GSI 'ByStatus'"):
            client.query("docs by status", status="DRAFT")
        with pytest.raises(TenantAccessError, match="needs a tenant-scoped client"):
            DocumentStore(operator)  # type: ignore[arg-type]
    assert calls == []
    theirs = globex.latest("d1")
    assert theirs is not None and theirs.version == 1


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda s: s.save("d1", expected_version=0, title="T", body="b", editor="e"), ItemValidationError,
     "expected_version 0 must be an int from 1"),
    (lambda s: s.save("d1", expected_version=True, title="T", body="b", editor="e"), ItemValidationError,
     "expected_version True must be an int"),
    (lambda s: s.save("d1", expected_version=MAX_VERSION, title="T", body="b", editor="e"), ItemValidationError,
     "new version 1000000 must be an int from 1 to 999999"),
    (lambda s: s.save("d1", expected_version=1, title="", body="b", editor="e"), ItemValidationError,
     "document title '' must be a non-empty str"),
    (lambda s: s.create("d1", owner="o", title="T", body=None, editor="e"), ItemValidationError,
     "document body None must be a str"),
    (lambda s: s.create("d1", owner="o", title="T", body="b", editor="e", status="GONE"), ItemValidationError,
     "'GONE' is not one of the declared choices"),
    (lambda s: s.at_version("d1", "2"), ItemValidationError, "version '2' must be an int"),
    (lambda s: s.latest(""), ItemValidationError, "document doc_id '' must be a non-empty str"),
    (lambda s: s.edit("d1", lambda d: (d.title, d.body), editor="e", attempts=0), ItemValidationError,
     "attempts 0 must be an int from 1 to 10"),
    (lambda s: s.versions("a\ud800"), KeyValueError, "d800"),
])
def test_bad_input_is_refused_before_any_call(call: Callable[[DocumentStore], Any], error: type[Exception],
                                              message: str) -> None:
    # GIVEN a store whose client fails on any AWS call
    class NoCalls:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"an AWS call ({name}) was attempted")

    store = DocumentStore(TableClient(saas_model, "docs", client=NoCalls()).for_tenant("acme"))  # type: ignore[arg-type]
    # WHEN called with bad input THEN a typed error names the value and the rule
    with pytest.raises(error, match=message):
        call(store)


# The audit trail, from the real stream --------------------------------------------------------------------
@pytest.mark.e2e
def test_audit_trail_records_each_version_with_its_actor(
    deployment: LocalDeployment, acme: DocumentStore, saas_cdk_out: Path, saas_template: dict[str, Any],
    local_function: Callable[..., Any], dynamodb_streams_client: Any, dynamodb_client: Any,
) -> None:
    from constructs_lib.testing.streams import StreamRunner

    # GIVEN three versions by ann, bob, ann, and a refused stale save by bob in between
    acme.create("d1", owner="ann", title="T", body="1", editor="ann")
    acme.save("d1", expected_version=1, title="T", body="2", editor="bob")
    with pytest.raises(DocumentConflictError):
        acme.save("d1", expected_version=1, title="T", body="stale", editor="bob")
    acme.save("d1", expected_version=2, title="T2", body="3", editor="ann")
    # WHEN the table's stream is fed to the bundled audit handler with the synthesized mapping
    fn = function_id(saas_template, AUDIT_HANDLER)
    env = deployment.function_environment(fn)
    handler = local_function(asset_dir(saas_cdk_out, saas_template, fn), AUDIT_HANDLER, environment=env)
    report = StreamRunner.from_deployment(deployment, saas_template, handler=handler,
                                          streams_client=dynamodb_streams_client, function_logical_id=fn).run()
    # THEN every change was audited (3 latest-item writes + 3 snapshots), none dead-lettered
    assert (report.delivered, report.dead_lettered) == (6, 0)
    audit = AuditClient.from_environment(environ=env, client=dynamodb_client)
    history = audit.history(entity="Doc", model=saas_model, tenant_id="acme", doc_id="d1").records
    # AND the latest item's history, newest first, has the actors and versions of the accepted saves only
    assert [(r.event, r.actor) for r in history] == [("MODIFY", "ann"), ("MODIFY", "bob"), ("INSERT", "ann")]
    assert [r.changes["version"].get("after") for r in history] == [3, 2, 1]
    assert "stale" not in json.dumps([r.image for r in history], default=str)
    # AND each snapshot was inserted once and never modified
    for version, actor in ((1, "ann"), (2, "bob"), (3, "ann")):
        snaps = audit.history(entity="DocVersion", model=saas_model, tenant_id="acme", doc_id="d1", version=version)
        assert [(r.event, r.actor) for r in snaps] == [("INSERT", actor)]


@pytest.mark.e2e
def test_scenario_runs_end_to_end(saas_cdk_out: Path, dynamodb_client: Any, dynamodb_streams_client: Any,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from examples.saas.scenario import run

    # GIVEN the synthesized app WHEN the scenario runs on DynamoDB Local
    run(saas_cdk_out, dynamodb_client, dynamodb_streams_client)
    out = capsys.readouterr().out
    # THEN it shows the policy, the conflict, the race, the history, the refusals and the audit actors
    assert '"TENANT#${aws:PrincipalTag/tenant}#*"' in out and '"Effect": "Deny"' in out
    assert "ann saves with expected_version=1 -> DocumentConflictError: stored version is 2" in out
    assert "latest is version 2 by bob, 2 snapshots, V#000003 exists: False" in out
    assert "conflicts: 1" in out or "conflicts: 2" in out
    assert "'document versions newest first' -> 5 snapshots" in out
    assert "AWS calls made by these 5 attempts: 0" in out
    assert "0 dead-lettered" in out and "INSERT by ann" in out and "MODIFY by bob" in out
    # AND it deleted the tables it created
    names = dynamodb_client.list_tables()["TableNames"]
    assert not [n for n in names if n in out]
