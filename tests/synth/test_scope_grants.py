"""Declared access scopes, proven with a real IAM policy evaluator (``@cloud-copilot/iam-simulate``).

Every scoped principal of the showcase app (each ``TableFunction`` with a scope, the SaaS
``EditorRole``), the coarse grants (``access="read_write"``, ``grant_tenant_access``,
``grant_query``) and a scoped twin of the orders API are synthesized; their policies are
evaluated offline against requests the scope needs (Allowed) and requests outside it (another
entity's key prefix, another tenant, an undeclared index, Scan, an undeclared action, a plain write
where only a transaction was declared, no leading key, no tenant tag: Denied).

Expectations come from the scope and the model's key templates, not from the policy generator:
a key is inside a grant when it starts with the literal shape (literals and the tenant, up to the
first other field) of a declared entity's partition key on that resource. Keys that start with a
declared prefix but belong to another entity are not used: IAM cannot tell them apart (the
client does; see ``docs/adr/0100-least-privilege-scopes.md``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam

from constructs_lib import ConstructPropsError, SingleTable, TableFunction
from constructs_lib.constructs.scope_policy import WRITE_ACTIONS
from constructs_lib.model import (
    ANY_TENANT,
    AccessScope,
    Entity,
    Model,
    Placeholder,
    principal_tag,
)
from examples.saas.model import saas_model

REPO = Path(__file__).resolve().parents[2]
EVALUATOR = Path(__file__).with_name("iam_evaluate.mjs")
HANDLER = REPO / "examples" / "shop" / "handlers" / "orders_api.py"
ACCOUNT, REGION = "111111111111", "us-east-1"
ITEM_ACTIONS = ("dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:PutItem",
                "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem")
#: The orders API's scope (examples/shop/stack.py), also synthesized as a coarse twin.
ORDERS_SCOPE = {"patterns": ["user's orders newest first", "order by id", "items of an order"],
                "writes": {"Order": ["transaction_put", "update"], "OrderItem": ["transaction_put"]}}
OWN, OTHER = "acme", "globex"



@pytest.fixture(autouse=True, scope="module")
def _evaluator_installed() -> None:
    """The evaluator is a pinned devDependency: missing, the proof fails rather than skips."""
    if shutil.which("node") is None or not (REPO / "node_modules" / "@cloud-copilot" / "iam-simulate").is_dir():
        pytest.fail("@cloud-copilot/iam-simulate is not installed: run `npm ci` (or `make setup`), "
                    "which installs package.json's devDependencies")


# Resolving the synthesized policies ------------------------------------------------------------
def resolve(value: Any, template: dict[str, Any]) -> Any:
    """Concrete ARNs for the intrinsics IAM policies of these stacks use."""
    if isinstance(value, list):
        return [resolve(v, template) for v in value]
    if not isinstance(value, dict):
        return value
    if "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"][0]
        kind = template["Resources"][target]["Type"]
        if kind == "AWS::DynamoDB::GlobalTable":
            return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{target}"
        return f"arn:aws:{kind.split('::')[1].lower()}:{REGION}:{ACCOUNT}:{target}"
    if "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(str(resolve(p, template)) for p in parts)
    if "Ref" in value:
        parameter = template.get("Parameters", {}).get(value["Ref"], {})
        if str(parameter.get("Default", "")).endswith("table-arn"):  # an imported table's published ARN
            return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{value['Ref']}"
        return {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT,
                "AWS::URLSuffix": "amazonaws.com"}.get(value["Ref"], value["Ref"])
    return {k: resolve(v, template) for k, v in value.items()}


def role_policy(template: dict[str, Any], role_id: str) -> dict[str, Any]:
    statements = [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
                  and {"Ref": role_id} in r["Properties"]["Roles"] for s in r["Properties"]["PolicyDocument"]["Statement"]]
    return {"Version": "2012-10-17", "Statement": resolve(statements, template)}


# Requests --------------------------------------------------------------------------------------
@dataclass
class Subject:
    """A principal whose policy is evaluated: a scoped function or role, or a coarse grant."""

    name: str
    model: Model
    policy: dict[str, Any]
    table_arn: str
    scope: AccessScope | None = None
    tenant_tag: str | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)

    def case(self, action: str, key: str | None, expect: str, why: str, *, index: str | None = None,
             tx: bool = False, tenant: str | None = OWN) -> None:
        context: dict[str, Any] = {} if key is None else {"dynamodb:LeadingKeys": [key]}
        if tx:
            context["dynamodb:EnclosingOperation"] = "TransactWriteItems"
        tags = {self.tenant_tag: tenant} if self.tenant_tag and tenant is not None else {}
        self.cases.append({
            "subject": self.name, "why": why, "expect": expect, "action": action, "policies": [self.policy],
            "resource": self.table_arn + (f"/index/{index}" if index else ""), "context": context,
            "principal": f"arn:aws:iam::{ACCOUNT}:role/{self.name.replace('/', '-')}", "principal_tags": tags,
            "account": ACCOUNT,
        })


def pk_template(model: Model, entity: str, index: str | None) -> Any:
    ent = model.entity(entity)
    return ent.pk_template if index is None else ent.indexes[index].pk_template


def sample_key(model: Model, entity: Entity, template: Any, tenant: str) -> str:
    out = []
    for seg in template.segments:
        if not isinstance(seg, Placeholder):
            out.append(seg)
        elif seg.field == model.tenant_field:
            out.append(tenant)
        else:
            out.append("2026-01" if seg.bucket else "v1")
    return "#".join(out)


def shape_prefix(model: Model, template: Any, tenant: str) -> str:
    """Literals and the tenant up to the first other field: what IAM can confine."""
    out = []
    for seg in template.segments:
        if isinstance(seg, Placeholder):
            if seg.field != model.tenant_field:
                return "#".join(out) + "#"
            out.append(tenant)
        else:
            out.append(seg)
    return "#".join(out)


def declared(model: Model, scope: AccessScope) -> list[tuple[str, str | None, bool, str]]:
    """(action, index, transaction only, entity) the scope declares."""
    out = []
    for name in scope.patterns:
        r = model.resolved_patterns[name]
        out += [(f"dynamodb:{r.operation}", r.index.name if r.index else None, False, e) for e in r.entities]
    out += [("dynamodb:BatchGetItem", None, False, e) for e in scope.batch_gets]
    for entity, kinds in scope.writes.items():
        out += [(WRITE_ACTIONS[k][0], None, WRITE_ACTIONS[k][1], entity) for k in kinds]
    return out


def scoped_cases(s: Subject) -> None:
    model, scope = s.model, s.scope
    assert scope is not None
    grants = declared(model, scope)
    tenant_bound = scope.tenant not in (None, ANY_TENANT)
    own = scope.tenant_id or OWN

    def allowed(action: str, index: str | None, key: str, tx: bool) -> bool:
        return any(a == action and i == index and (tx or not t)
                   and key.startswith(shape_prefix(model, pk_template(model, e, i), own)) for a, i, t, e in grants)

    resources = [None] + sorted(model.indexes)
    for action, index, tx, entity in grants:
        key = sample_key(model, model.entity(entity), pk_template(model, entity, index), own)
        # Allowed: what the scope declares
        s.case(action, key, "Allowed", f"{action} {entity} on {index or 'table'}", index=index, tx=tx)
        # Denied: the same request without a leading key (ForAllValues alone would pass it)
        s.case(action, None, "Denied", f"{action} without LeadingKeys", index=index, tx=tx)
        if tx:
            s.case(action, key, "Denied", f"plain {action} {entity} (declared in transactions only)", index=index)
        if tenant_bound:
            other = sample_key(model, model.entity(entity), pk_template(model, entity, index), OTHER)
            s.case(action, other, "Denied", f"{action} {entity} of another tenant", index=index, tx=tx)
            if s.tenant_tag:
                s.case(action, key, "Denied", f"{action} {entity} without a tenant tag", index=index, tx=tx, tenant=None)
        # Denied: keys of other entities (and a prefix no entity uses) on the same resource
        foreign = ["ZZZ#v1"] + [sample_key(model, e, pk_template(model, e.name, index), own)
                                for e in model.entities.values()
                                if index is None or index in e.indexes or model.index(index).kind == "LSI"]
        for other_key in dict.fromkeys(foreign):
            if not allowed(action, index, other_key, True):
                s.case(action, other_key, "Denied", f"{action} on {index or 'table'} with key {other_key}", index=index,
                       tx=tx)
        # Denied: every item action the scope does not grant for this key, and Scan
        for other_action in (*ITEM_ACTIONS, "dynamodb:Scan"):
            for r in resources:
                if not allowed(other_action, r, key, True):
                    s.case(other_action, key, "Denied", f"undeclared {other_action} on {r or 'table'}", index=r)


def coarse_cases(s: Subject, *, actions: tuple[str, ...], indexes: tuple[str | None, ...],
                 denied_indexes: tuple[str, ...] = (), tenant_keys: bool = False) -> None:
    """A coarse grant: every listed action allowed on any key (of the principal's tenant), Scan denied."""
    for action in actions:
        for index in indexes:
            key = f"TENANT#{OWN}#DOC#v1" if tenant_keys else "ANY#v1"
            s.case(action, key, "Allowed", f"coarse {action} on {index or 'table'}", index=index)
            if tenant_keys:
                s.case(action, f"TENANT#{OTHER}#DOC#v1", "Denied", "another tenant", index=index)
        for index in denied_indexes:
            s.case(action, f"STATUS#DRAFT#{OWN}", "Denied", f"{action} on tenant-mixing {index}", index=index)
    for index in indexes:
        s.case("dynamodb:Scan", None, "Denied", "Scan", index=index)


# The synthesized app and the evaluation ----------------------------------------------------------
@dataclass
class Evaluation:
    subjects: list[Subject]
    decisions: list[dict[str, Any]]
    seconds: float

    @property
    def cases(self) -> list[dict[str, Any]]:
        return [c for s in self.subjects for c in s.cases]


def _logical_id(construct: Any) -> str:
    return cdk.Stack.of(construct).get_logical_id(construct.node.default_child)


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory, shop_model: Model) -> Evaluation:
    from app import build_app
    from examples.saas.stack import EDITOR_SCOPE, TENANT_TAG, SaasStack

    app = build_app(str(tmp_path_factory.mktemp("scope-cdk-out")))
    # A side stack: the orders API's scope and the same function with the coarse default grant
    side = cdk.Stack(app, "ScopeSideBySide")
    table = SingleTable(side, "Shop", model=shop_model)
    twins = {"Coarse": TableFunction(side, "Coarse", table=table, entry=HANDLER, access="read_write"),
             "Scoped": TableFunction(side, "Scoped", table=table, entry=HANDLER, **ORDERS_SCOPE)}
    # AND on a multi-tenant table: a function of one literal tenant, and one of every tenant
    docs = SingleTable(side, "Docs", model=saas_model)
    TableFunction(side, "AcmeEditor", table=docs, entry=HANDLER, tenant="acme",
                  patterns=["document latest", "docs of an owner"], batch_gets=["Doc"],
                  writes={"Doc": ["put", "update"], "DocVersion": ["batch_put", "condition_check"]})
    TableFunction(side, "AllTenantsByStatus", table=docs, entry=HANDLER, tenant=ANY_TENANT,
                  patterns=["docs by status"])
    assembly = app.synth()
    subjects: list[Subject] = []
    for stack in (c for c in app.node.children if isinstance(c, cdk.Stack)):
        template = json.loads(Path(assembly.get_stack_by_name(stack.stack_name).template_full_path).read_text())

        def subject(name: str, role: iam.IRole, model: Model, template: dict[str, Any] = template,
                    **kw: Any) -> Subject:
            policy = role_policy(template, _logical_id(role))
            arns = [r for st in policy["Statement"] for r in ([st["Resource"]] if isinstance(st["Resource"], str)
                                                                else st["Resource"]) if ":dynamodb:" in r
                    and ":table/" in r and "/stream/" not in r]
            return Subject(name, model, policy, arns[0].split("/index/")[0], **kw)

        for fn in (c for c in stack.node.find_all() if isinstance(c, TableFunction)):
            if fn.scope is not None:
                subjects.append(subject(fn.node.path, fn.function.role, fn.table.model, scope=fn.scope))
        if isinstance(stack, SaasStack):
            subjects.append(subject("SaasStack/EditorRole", stack.editor_role, stack.docs.model,
                                    scope=EDITOR_SCOPE, tenant_tag=TENANT_TAG))
            s = subject("SaasStack/TenantRole", stack.tenant_role, stack.docs.model, tenant_tag=TENANT_TAG)
            coarse_cases(s, actions=("dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem"),
                         indexes=(None, "ByOwner"), denied_indexes=("ByStatus",), tenant_keys=True)
            subjects.append(s)
            s = subject("SaasStack/BackOfficeRole", stack.back_office_role, stack.docs.model)
            coarse_cases(s, actions=("dynamodb:Query",), indexes=("ByStatus",))
            s.case("dynamodb:Query", "TENANT#acme#DOC#v1", "Denied", "Query on the table", index=None)
            s.case("dynamodb:GetItem", "STATUS#DRAFT#acme", "Denied", "GetItem on ByStatus", index="ByStatus")
            subjects.append(s)
        if stack is side:
            s = subject("ScopeSideBySide/Coarse", twins["Coarse"].function.role, shop_model)
            coarse_cases(s, actions=ITEM_ACTIONS, indexes=(None,))
            coarse_cases(s, actions=("dynamodb:Query", "dynamodb:GetItem"), indexes=tuple(shop_model.indexes))
            subjects.append(s)
    for s in subjects:
        if s.scope is not None:
            scoped_cases(s)
    cases = [c for s in subjects for c in s.cases]
    started = time.perf_counter()
    out = subprocess.run(["node", str(EVALUATOR)], input=json.dumps({"cases": cases}), capture_output=True, text=True,
                         cwd=REPO, check=True, timeout=600)
    seconds = time.perf_counter() - started
    return Evaluation(subjects, json.loads(out.stdout)["decisions"], seconds)


def test_every_showcase_function_declares_a_scope(evaluation: Evaluation) -> None:
    # GIVEN every TableFunction of the showcase app
    scoped = {s.name for s in evaluation.subjects if s.scope is not None}
    # THEN each one was evaluated with its declared scope
    assert {"ShopStack/OrdersApi", "IotTelemetryStack/Ingest", "IotTelemetryStack/Queries", "ViralVideoStack/ViewsApi",
            "ShopReportingStack/PendingOrdersReport", "SaasStack/EditorRole", "ScopeSideBySide/AcmeEditor",
            "ScopeSideBySide/AllTenantsByStatus"} <= scoped


def test_the_evaluator_accepts_every_request(evaluation: Evaluation) -> None:
    # THEN no request or policy was rejected as malformed (a typo'd action or condition key would be)
    errors = [(c["subject"], c["why"], d["errors"])
              for c, d in zip(evaluation.cases, evaluation.decisions, strict=True) if d["errors"]]
    assert errors == []
    # AND every context key applies to its action (Scan has no dynamodb:LeadingKeys: it reads every key)
    ignored = {(c["action"], k) for c, d in zip(evaluation.cases, evaluation.decisions, strict=True) for k in d["ignored"]}
    assert ignored <= {("dynamodb:Scan", "dynamodb:LeadingKeys")}


def test_every_decision_is_the_expected_one(evaluation: Evaluation) -> None:
    # GIVEN each policy and each request, WHEN the IAM evaluator decides
    wrong = []
    for case, decision in zip(evaluation.cases, evaluation.decisions, strict=True):
        got = "Allowed" if decision["result"] == "Allowed" else "Denied"
        if got != case["expect"]:
            wrong.append(f"{case['subject']}: {case['why']} -> {decision['result']} ({case['action']} "
                         f"{case['resource']} {case['context']})")
    # THEN every allowed request is Allowed and every request outside the grant is Denied
    assert wrong == [], "\n".join(wrong)


def test_each_subject_has_both_allowed_and_denied_requests(evaluation: Evaluation) -> None:
    for s in evaluation.subjects:
        expects = [c["expect"] for c in s.cases]
        assert expects.count("Allowed") >= 1 and expects.count("Denied") >= 1, s.name
    totals = {e: sum(c["expect"] == e for c in evaluation.cases) for e in ("Allowed", "Denied")}
    print(f"\nIAM evaluator: {len(evaluation.cases)} requests, {len(evaluation.subjects)} principals, "
          f"{totals['Allowed']} allowed, {totals['Denied']} denied, {evaluation.seconds:.1f} s")
    assert totals["Allowed"] >= 40 and totals["Denied"] >= 200


def test_tenant_mixing_index_is_explicitly_denied_to_the_tenant_role(evaluation: Evaluation) -> None:
    # GIVEN reads of the ByStatus index (keys start with the status) by the tenant role
    results = [d["result"] for c, d in zip(evaluation.cases, evaluation.decisions, strict=True)
               if c["subject"] == "SaasStack/TenantRole" and "tenant-mixing" in c["why"]
               and c["action"] in ("dynamodb:GetItem", "dynamodb:Query")]
    # THEN its explicit Deny decides, whatever the key
    assert results and set(results) == {"ExplicitlyDenied"}


# Synth-time refusals ------------------------------------------------------------------------------
def test_scope_and_access_exclude_each_other(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    table = SingleTable(scratch_stack, "ExclusiveShop", model=shop_model)
    with pytest.raises(ConstructPropsError, match=r"access='read' and a declared scope .* exclude each other"):
        TableFunction(scratch_stack, "Both", table=table, entry=HANDLER, access="read", patterns=["user profile"])
    with pytest.raises(ConstructPropsError, match="pattern 'nope' is not declared in model 'shop'"):
        TableFunction(scratch_stack, "Unknown", table=table, entry=HANDLER, patterns=["nope"])
    with pytest.raises(ConstructPropsError, match=r"writes of 'Order': \['upsert'\]"):
        TableFunction(scratch_stack, "BadWrite", table=table, entry=HANDLER, writes={"Order": ["upsert"]})
    with pytest.raises(ConstructPropsError, match="declares no tenant_field"):
        TableFunction(scratch_stack, "Tenant", table=table, entry=HANDLER, patterns=["user profile"], tenant="acme")


def test_partition_key_starting_with_a_field_is_refused(scratch_stack: cdk.Stack) -> None:
    # GIVEN an entity whose partition key has no literal prefix
    model = Model("bare", entities=[Entity("Thing", pk="{thing_id}", sk="THING", fields=["thing_id"])],
                  access_patterns=[])
    table = SingleTable(scratch_stack, "Bare", model=model)
    role = iam.Role(scratch_stack, "BareRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    # THEN a scope writing it fails at synth instead of granting every partition
    with pytest.raises(ConstructPropsError, match=r"partition key '\{thing_id\}' \(table\) starts with field"):
        table.grant_scope(role, AccessScope(writes={"Thing": ["put"]}))


def test_tenant_scopes_refuse_tenant_mixing_indexes(scratch_stack: cdk.Stack) -> None:
    table = SingleTable(scratch_stack, "Docs", model=saas_model)
    role = iam.Role(scratch_stack, "DocsRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    with pytest.raises(ConstructPropsError, match="reads GSI 'ByStatus'"):
        table.grant_scope(role, AccessScope(patterns=["docs by status"], tenant=principal_tag()))
    with pytest.raises(ConstructPropsError, match="needs tenant="):
        table.grant_scope(role, AccessScope(patterns=["document latest"]))
    # AND ANY_TENANT is the explicit way to read it
    table.grant_scope(role, AccessScope(patterns=["docs by status"], tenant=ANY_TENANT))



def test_describe_lists_each_function_with_its_scope_and_iam(capsys: pytest.CaptureFixture[str]) -> None:
    from constructs_lib.__main__ import main

    # WHEN the showcase app is described
    assert main(["describe", str(REPO / "app.py")]) == 0
    text = capsys.readouterr().out
    # THEN each table's functions are listed with their declared scope and the statements derived from it
    # (shop, iot, viral, the imported shop table and the global documents table)
    assert text.count("## Functions and their slices") == 5
    assert ("| `ShopStack/OrdersApi` | `user's orders newest first`, `order by id`, `items of an order`, "
            "`orders by status newest first` | `Order`: update, transaction_put<br>`OrderItem`: transaction_put | "
            "table, GSI1, GSI3 | reads `Order`, `OrderItem`; writes `Order`, `OrderItem` | Query on the table for "
            "ORDER#*, USER#*<br>UpdateItem on the table for USER#*<br>PutItem on the table for ORDER#*, USER#* (in "
            "transactions only)<br>Query on GSI1 for ORDER#*<br>Query on GSI3 for STATUS#*#* |") in text
    assert ("| `IotTelemetryStack/Ingest` | none | `Reading`: batch_put | none | reads nothing; writes `Reading` | "
            "BatchWriteItem on the table for SENSOR#*#* |") in text


def test_a_scope_iam_cannot_confine_fails_before_bundling(scratch_stack: cdk.Stack) -> None:
    model = Model("bare2", entities=[Entity("Thing", pk="{thing_id}", sk="THING", fields=["thing_id"])])
    table = SingleTable(scratch_stack, "Bare2", model=model)
    with pytest.raises(ConstructPropsError, match=r"TableFunction 'BareFn': entity 'Thing' partition key"):
        TableFunction(scratch_stack, "BareFn", table=table, entry=HANDLER, writes={"Thing": ["put"]})
    # AND nothing was built under the function's id
    assert [c.node.id for c in scratch_stack.node.find_child("BareFn").node.children] == []


def test_a_customer_managed_key_gets_its_permissions_once(shop_model: Model) -> None:
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk import aws_kms as kms
    from aws_cdk.assertions import Template

    # GIVEN a table encrypted with a customer-managed key and a read-only and a writing scope
    stack = cdk.Stack(cdk.App(), "ScopeCmk", env=cdk.Environment(region="eu-west-1"))
    key = kms.Key(stack, "Key")
    table = SingleTable(stack, "Shop", model=shop_model,
                        encryption=dynamodb.TableEncryptionV2.customer_managed_key(key))
    roles = {name: iam.Role(stack, name, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
             for name in ("Reader", "Writer")}
    table.grant_scope(roles["Reader"], AccessScope(patterns=["order by id", "user profile"]))
    table.grant_scope(roles["Writer"], AccessScope(writes={"Order": ["update"]}, patterns=["order by id"]))
    template = Template.from_stack(stack).to_json()
    for name, expected in (("Reader", ["kms:Decrypt", "kms:DescribeKey"]),
                           ("Writer", ["kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey",
                                       "kms:ReEncryptFrom", "kms:ReEncryptTo"])):
        role_id = _logical_id(roles[name])
        statements = role_policy(template, role_id)["Statement"]
        # THEN one KMS statement, on the key only, with decrypt for readers and encrypt too for writers
        (kms_statement,) = [s for s in statements if "kms:Decrypt" in s["Action"]]
        assert kms_statement["Action"] == expected and ":kms:" in kms_statement["Resource"]
