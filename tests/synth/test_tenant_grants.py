"""Tenant-scoped and per-index grants at synth time: the IAM policy JSON they produce."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from constructs_lib import ConstructPropsError, SingleTable
from constructs_lib.model import Model
from examples.saas.model import saas_model

TENANT = "${aws:PrincipalTag/tenant}"


@pytest.fixture(scope="module")
def policies(new_stack: Callable[[str], cdk.Stack]) -> dict[str, list[dict[str, Any]]]:
    """One role per grant on the SaaS table; role name -> its policy statements."""
    stack = new_stack("Tenants")
    table = SingleTable(stack, "Docs", model=saas_model)
    grants = {
        "TenantReader": lambda r: table.grant_tenant_access(r),
        "TenantWriter": lambda r: table.grant_tenant_access(r, actions="write", tenant_tag="org"),
        "OwnerQuery": lambda r: table.grant_query(r, index="ByOwner"),
        "TableQuery": lambda r: table.grant_query(r, index="table"),
    }
    for name, grant in grants.items():
        grant(iam.Role(stack, name, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")))
    template = Template.from_stack(stack).to_json()
    out: dict[str, list[dict[str, Any]]] = {}
    for name in grants:
        (role_id,) = [lid for lid, r in template["Resources"].items() if r["Type"] == "AWS::IAM::Role" and lid.startswith(name)]
        out[name] = [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
                     and {"Ref": role_id} in r["Properties"]["Roles"] for s in r["Properties"]["PolicyDocument"]["Statement"]]
    (table_id,) = [lid for lid, r in template["Resources"].items() if r["Type"] == "AWS::DynamoDB::GlobalTable"]
    out["_table"] = [{"id": table_id}]
    return out


def arn(policies: dict[str, Any], suffix: str = "") -> Any:
    table = {"Fn::GetAtt": [policies["_table"][0]["id"], "Arn"]}
    return {"Fn::Join": ["", [table, suffix]]} if suffix else table


def test_tenant_read_is_confined_by_leading_keys_to_own_tenant(policies: dict[str, Any]) -> None:
    allow, deny = policies["TenantReader"]
    # THEN reads are allowed on the table and the tenant-safe index only
    assert allow["Effect"] == "Allow"
    assert sorted(allow["Action"]) == ["dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem",
                                       "dynamodb:Query"]
    assert allow["Resource"] == [arn(policies), arn(policies, "/index/ByOwner")]
    # AND only for partition keys of the principal's own tenant: TENANT#<tag> or TENANT#<tag>#...
    assert allow["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"TENANT#{TENANT}", f"TENANT#{TENANT}#*"]},
        "Null": {"aws:PrincipalTag/tenant": "false", "dynamodb:LeadingKeys": "false"},
    }
    # AND every read of the index that mixes tenants is explicitly denied
    assert deny == {"Action": ["dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem",
                               "dynamodb:Query"], "Effect": "Deny", "Resource": arn(policies, "/index/ByStatus")}


def test_tenant_write_uses_the_given_tag_and_the_table_only(policies: dict[str, Any]) -> None:
    (allow,) = policies["TenantWriter"]
    assert sorted(allow["Action"]) == ["dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:PutItem",
                                       "dynamodb:UpdateItem"]
    assert allow["Resource"] == arn(policies)
    org = "${aws:PrincipalTag/org}"
    assert allow["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"] == [f"TENANT#{org}", f"TENANT#{org}#*"]


@pytest.mark.parametrize(("tenant", "key", "allowed"), [
    ("acme", "TENANT#acme", True), ("acme", "TENANT#acme#DOC#1", True),
    ("acme", "TENANT#acmecorp#DOC#1", False), ("acme", "TENANT#acme%23x#DOC#1", False), ("acme", "TENANT#acm", False),
])
def test_leading_keys_patterns_match_only_the_tenants_own_keys(
    policies: dict[str, Any], tenant: str, key: str, allowed: bool
) -> None:
    # GIVEN the LeadingKeys patterns with the tag substituted, evaluated as IAM StringLike does
    import fnmatch
    patterns = [p.replace(TENANT, tenant) for p in
                policies["TenantReader"][0]["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]]
    # THEN tenant 'acme' reaches its own keys and never 'acmecorp' or the escaped 'acme#x'
    assert any(fnmatch.fnmatchcase(key, p) for p in patterns) is allowed


def test_grant_query_names_exactly_one_index(policies: dict[str, Any]) -> None:
    (owner,) = policies["OwnerQuery"]
    assert (owner["Action"], owner["Resource"]) == ("dynamodb:Query", arn(policies, "/index/ByOwner"))
    (table,) = policies["TableQuery"]
    assert (table["Action"], table["Resource"]) == ("dynamodb:Query", arn(policies))


def test_grants_refuse_bad_input(new_stack: Callable[[str], cdk.Stack], shop_model: Model) -> None:
    stack = new_stack("BadTenantGrants")
    role = iam.Role(stack, "R", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    shop = SingleTable(stack, "Shop", model=shop_model)
    docs = SingleTable(stack, "Docs", model=saas_model)
    with pytest.raises(ConstructPropsError, match="needs a model with tenant_field"):
        shop.grant_tenant_access(role)
    with pytest.raises(ConstructPropsError, match="actions 'admin' must be"):
        docs.grant_tenant_access(role, actions="admin")  # type: ignore[arg-type]
    with pytest.raises(ConstructPropsError, match="tenant_tag 'a b' is not a valid IAM tag key"):
        docs.grant_tenant_access(role, tenant_tag="a b")
    with pytest.raises(ConstructPropsError, match="grant_query index 'GSI9' is not in model 'saas'"):
        docs.grant_query(role, index="GSI9")
