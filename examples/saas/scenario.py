"""The SaaS scenario on DynamoDB Local, on tables created from the synthesized template.

``run(cdk_out, dynamodb_client, streams_client)`` walks through, printing what happens:

1. the tables of ``SaasStack`` created from ``<cdk_out>/SaasStack.template.json``;
2. tenant-prefixed keys, and the tenant role's synthesized IAM policy (``dynamodb:LeadingKeys``
   on ``TENANT#${aws:PrincipalTag/tenant}``, explicit Deny on the tenant-mixing ``ByStatus``);
3. versioned documents: a document created at version 1, two editors saving from the same
   version — one wins, the other gets :class:`DocumentConflictError` and nothing is written —
   the loser re-reads and saves; then two threads racing through ``DocumentStore.edit``;
4. the three document access patterns: latest, versions newest first, at version n;
5. tenant isolation: the ``for_tenant`` client refusing another tenant's keys and the
   ``ByStatus`` index before any AWS call (calls counted on the boto3 client);
6. the audit trail: the table's real stream fed through the bundled audit handler with the
   synthesized event source mapping, and the document's change history with its actors.

``python -m examples.saas.scenario`` synthesizes the app into a temporary directory, starts
DynamoDB Local on 127.0.0.1, runs the scenario and stops the server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from constructs_lib.model import Model
from constructs_lib.runtime import AuditClient, TableClient, TenantAccessError
from constructs_lib.testing import LocalDeployment, asset_dir, deploy_assembly_stack
from examples._scenario import function_id, run_standalone
from examples.saas.documents import DocumentConflictError, DocumentStore

STACK = "SaasStack"
AUDIT_HANDLER = "constructs_lib.runtime.handlers.audit.handler"
DOC = "handbook"


def show(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 90 - len(title)))


def readable(value: Any) -> Any:
    """A policy with its intrinsics written as ``${Logical.Attr}`` text (for display)."""
    if isinstance(value, Mapping):
        if set(value) == {"Fn::GetAtt"}:
            logical_id, attribute = value["Fn::GetAtt"]
            return f"${{{logical_id}.{attribute}}}"
        if set(value) == {"Fn::Join"}:
            sep, parts = value["Fn::Join"]
            return sep.join(str(readable(p)) for p in parts)
        if set(value) == {"Ref"}:
            return f"${{{value['Ref']}}}"
        return {k: readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(v) for v in value]
    return value


def role_statements(template: Mapping[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    """Statements of every identity policy attached to the role whose logical id starts with ``role_prefix``."""
    (role_id,) = [lid for lid, r in template["Resources"].items()
                  if r["Type"] == "AWS::IAM::Role" and lid.startswith(role_prefix)]
    return [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
            and {"Ref": role_id} in r["Properties"]["Roles"] for s in r["Properties"]["PolicyDocument"]["Statement"]]



@contextmanager
def counting_calls(client: Any) -> Iterator[list[str]]:
    """Record the name of every API call made through ``client`` inside the block."""
    calls: list[str] = []

    def before_call(model: Any, **_: Any) -> None:
        calls.append(model.name)

    client.meta.events.register("before-call.dynamodb", before_call)
    try:
        yield calls
    finally:
        client.meta.events.unregister("before-call.dynamodb", before_call)


def run(cdk_out: Path, dynamodb_client: Any, streams_client: Any) -> None:
    """Run the scenario against the DynamoDB (Local) behind the given clients.

    Parameters
    ----------
    cdk_out : Path
        A cloud assembly holding ``SaasStack`` (``examples.saas.app.build_app(dir).synth()``).
    dynamodb_client, streams_client : botocore clients
        ``dynamodb`` and ``dynamodbstreams`` clients of one DynamoDB Local server; the bundled
        audit handler runs in a separate process pointed at the same endpoint.

    The tables are created with a ``saas-`` name prefix and deleted at the end, also on failure.
    """
    cdk_out = Path(cdk_out)
    with deploy_assembly_stack(cdk_out, STACK, client=dynamodb_client, name_prefix="saas-") as deployment:
        template = deployment.template
        show(f"{STACK}: tables created from {cdk_out.name}/{STACK}.template.json")
        for logical_id, name in deployment.tables.items():
            desc = deployment.describe(logical_id)
            gsis = [g["IndexName"] for g in desc.get("GlobalSecondaryIndexes", [])]
            stream = desc.get("StreamSpecification", {}).get("StreamViewType", "none")
            print(f"{logical_id} -> {name}: stream {stream}, GSIs {gsis}")
        audit_fn = function_id(template, AUDIT_HANDLER)
        asset = asset_dir(cdk_out, template, audit_fn)
        model = Model.from_json((asset / "model.json").read_text(encoding="utf-8"))
        operator = TableClient(model, deployment.table_name("DocsTable"), client=dynamodb_client)
        acme, globex = operator.for_tenant("acme"), operator.for_tenant("globex")

        keys_and_grants(template, acme)
        docs = DocumentStore(acme)
        versioned_documents(docs)
        access_patterns(docs)
        tenant_isolation(operator, acme, globex, dynamodb_client)
        audit_trail(deployment, cdk_out, audit_fn, model, dynamodb_client, streams_client)
        show("Done")
        print(f"tables {sorted(deployment.tables.values())} deleted")


def keys_and_grants(template: Mapping[str, Any], acme: Any) -> None:
    show("Tenant-prefixed keys")
    for entity, values in (("Tenant", {}), ("Doc", {"doc_id": DOC}), ("DocVersion", {"doc_id": DOC, "version": 3})):
        print(f"{entity:<10} of acme: {acme.keys(entity, **values)}")
    show("Grants: the tenant role's synthesized policy (TenantRole)")
    statements = role_statements(template, "TenantRole")
    print(json.dumps(readable(statements), indent=2))
    allow, deny = statements
    assert allow["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"] == [
        "TENANT#${aws:PrincipalTag/tenant}", "TENANT#${aws:PrincipalTag/tenant}#*"]
    assert deny["Effect"] == "Deny"
    (back_office,) = role_statements(template, "BackOfficeRole")
    print(f"BackOfficeRole: {back_office['Effect']} {back_office['Action']} on {readable(back_office['Resource'])}")


def versioned_documents(docs: DocumentStore) -> None:
    show("Versioned documents: one transaction per version, optimistic lock on the latest item")
    v1 = docs.create(DOC, owner="ann", title="Employee handbook", body="Welcome.", editor="ann")
    print(f"ann creates {DOC!r}: snapshot V#{v1.version:06d} + latest item at version 1 (one TransactWriteItems)")
    ann_read, bob_read = docs.latest(DOC), docs.latest(DOC)
    assert ann_read is not None and bob_read is not None
    print(f"ann and bob both read the latest: version {ann_read.version}, title {ann_read.title!r}")
    bob = docs.save(DOC, expected_version=bob_read.version, title=bob_read.title,
                    body=bob_read.body + " Office hours are 9-17.", editor="bob")
    print(f"bob saves first (expected_version={bob_read.version}) -> version {bob.version}")
    try:
        docs.save(DOC, expected_version=ann_read.version, title="Staff handbook", body=ann_read.body, editor="ann")
        raise AssertionError("the stale save was accepted")
    except DocumentConflictError as conflict:
        print(f"ann saves with expected_version={conflict.expected} -> DocumentConflictError: stored version is "
              f"{conflict.current}")
    latest = docs.latest(DOC)
    assert latest is not None
    print(f"nothing of ann's save was written: latest is version {latest.version} by {latest.updated_by}, "
          f"{len(docs.versions(DOC))} snapshots, V#000003 exists: {docs.at_version(DOC, 3) is not None}")
    assert (latest.version, latest.updated_by, docs.at_version(DOC, 3)) == (2, "bob", None)
    ann = docs.save(DOC, expected_version=latest.version, title="Staff handbook", body=latest.body, editor="ann")
    print(f"ann re-reads version {latest.version}, re-applies her title change, saves -> version {ann.version}")

    show("Two editors racing in threads through DocumentStore.edit (read, change, save; retry on conflict)")
    both_read = threading.Barrier(2)
    conflicts: list[tuple[str, DocumentConflictError]] = []
    results: dict[str, int] = {}

    def editor(name: str, line: str) -> None:
        first = [True]

        def change(current: Any) -> tuple[str, str]:
            if first[0]:  # both editors hold the same version before either saves
                first[0] = False
                both_read.wait(timeout=30)
            return current.title, f"{current.body} {line}"

        results[name] = docs.edit(DOC, change, editor=name, on_conflict=lambda c: conflicts.append((name, c))).version

    threads = [threading.Thread(target=editor, args=(name, line)) for name, line in
               (("carol", "Expenses: see finance."), ("dave", "Holidays: 25 days."))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for name, conflict in conflicts:
        print(f"{name} lost a race at expected_version={conflict.expected} (stored: {conflict.current}), "
              "re-read and retried")
    print(f"saved versions: {dict(sorted(results.items()))}; conflicts: {len(conflicts)}")
    assert sorted(results.values()) == [4, 5] and conflicts


def access_patterns(docs: DocumentStore) -> None:
    show("Access patterns of a versioned document")
    latest = docs.latest(DOC)
    assert latest is not None
    print(f"[GetItem] 'document latest'(doc_id={DOC!r}) -> version {latest.version} by {latest.updated_by}: "
          f"{latest.title!r}, {latest.body!r}")
    page = docs.versions(DOC)
    print(f"[Query begins_with(SK, 'V#') descending] 'document versions newest first' -> {len(page)} snapshots:")
    for snap in page:
        print(f"    V#{snap.version:06d} by {snap.updated_by:<5} at {snap.saved_at}: {snap.title!r}, "
              f"{len(snap.body)} chars")
    assert [s.version for s in page] == [5, 4, 3, 2, 1]
    v2 = docs.at_version(DOC, 2)
    assert v2 is not None and v2.updated_by == "bob"
    print(f"[GetItem] 'document at version'(doc_id={DOC!r}, version=2) -> by {v2.updated_by}: {v2.body!r}")
    first = docs.versions(DOC, limit=2)
    rest = docs.versions(DOC, cursor=first.cursor)
    print(f"paged: {[s.version for s in first]} then {[s.version for s in rest]} (cursor from the first page)")


def tenant_isolation(operator: TableClient, acme: Any, globex: Any, client: Any) -> None:
    show("Tenant isolation: the for_tenant client")
    profile = acme.put("Tenant", {"name": "Acme Corp", "updated_by": "admin"})
    print(f"acme.put('Tenant', {{'name': 'Acme Corp', ...}}): tenant filled in -> tenant_id={profile['tenant_id']!r}")
    DocumentStore(globex).create(DOC, owner="gus", title="Globex handbook", body="Hi.", editor="gus")
    mine = DocumentStore(acme).latest(DOC)
    theirs = DocumentStore(globex).latest(DOC)
    assert mine is not None and theirs is not None
    print(f"same doc_id, two tenants: acme sees {mine.title!r} (v{mine.version}), globex sees {theirs.title!r} "
          f"(v{theirs.version}): keys {acme.keys('Doc', doc_id=DOC)['PK']!r} vs {globex.keys('Doc', doc_id=DOC)['PK']!r}")
    attempts = (
        ("acme reads globex's latest item", lambda: acme.get("Doc", tenant_id="globex", doc_id=DOC)),
        ("acme queries globex's versions",
         lambda: acme.query("document versions newest first", tenant_id="globex", doc_id=DOC)),
        ("acme writes a snapshot into globex",
         lambda: acme.transaction().put("DocVersion", {"tenant_id": "globex", "doc_id": DOC, "version": 9,
                                                       "updated_by": "eve"})),
        ("acme queries the ByStatus index", lambda: acme.query("docs by status", status="DRAFT")),
        ("a DocumentStore on an unscoped client", lambda: DocumentStore(operator)),  # type: ignore[arg-type]
    )
    with counting_calls(client) as calls:
        for what, attempt in attempts:
            try:
                attempt()
                raise AssertionError(f"{what} was allowed")
            except TenantAccessError as exc:
                print(f"{what}: TenantAccessError — {exc}"[:200])
    print(f"AWS calls made by these {len(attempts)} attempts: {len(calls)}")
    assert calls == []
    drafts = operator.query("docs by status", status="DRAFT", tenant_id="acme").items
    print(f"the back office (unscoped client, BackOfficeRole's grant) reads ByStatus: DRAFT docs of acme "
          f"{[d['doc_id'] for d in drafts]}")


def audit_trail(deployment: LocalDeployment, cdk_out: Path, audit_fn: str, model: Model, dynamodb_client: Any,
                streams_client: Any) -> None:
    from constructs_lib.testing.handlers import LocalFunction
    from constructs_lib.testing.streams import StreamRunner

    template = deployment.template
    show("Audit trail: the table's stream through the bundled audit handler")
    env = deployment.function_environment(audit_fn)
    endpoint = dynamodb_client.meta.endpoint_url
    with LocalFunction(asset_dir(cdk_out, template, audit_fn), AUDIT_HANDLER, environment=env,
                       endpoint=endpoint) as handler:
        runner = StreamRunner.from_deployment(deployment, template, handler=handler, streams_client=streams_client,
                                              function_logical_id=audit_fn)
        report = runner.run()
    print(f"{report.invocations} invocation(s), {report.delivered} records audited, {report.dead_lettered} "
          "dead-lettered")
    assert report.dead_lettered == 0
    audit = AuditClient.from_environment(environ=env, client=dynamodb_client)
    history = audit.history(entity="Doc", model=model, tenant_id="acme", doc_id=DOC).records
    print(f"history of acme's {DOC!r} latest item (one Query on its audit partition, newest first):")
    for record in history:
        version = record.changes.get("version", {})
        image = record.image or {}
        if record.event == "INSERT":
            what = "created: " + ", ".join(f"{n}={image.get(n)!r}" for n in ("owner", "status", "title"))
        else:
            what = f"changed {sorted(n for n in record.changed if n not in ('version', 'updated_at', 'updated_by'))}"
        print(f"  {record.event:<6} by {record.actor:<5} at {image.get('updated_at', '?')}: version "
              f"{version.get('before', '-')} -> {version.get('after', '-')}, {what}")
    assert [r.actor for r in reversed(history)][:3] == ["ann", "bob", "ann"]
    assert len(history) == 5, "one record per saved version; the refused save wrote nothing"
    snaps = audit.history(entity="DocVersion", model=model, tenant_id="acme", doc_id=DOC, version=2).records
    print(f"history of snapshot V#000002: {[(r.event, r.actor) for r in snaps]} (snapshots are never modified)")


def main() -> int:
    """Synthesize the app to a temporary directory, start DynamoDB Local, run, stop."""
    from examples.saas.app import build_app

    return run_standalone("saas", build_app, lambda cdk_out, server: run(cdk_out, server.client(), server.streams_client()))


if __name__ == "__main__":
    raise SystemExit(main())
