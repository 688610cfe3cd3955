"""SingleTable grants are least privilege: exact actions, on the table and its index ARNs only.

One role per grant method, in two stacks: a table with the default (DynamoDB-owned) key and a
table with a customer-managed KMS key. Policies are found through the role they attach to.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Template

from constructs_lib import ConstructPropsError, SingleTable
from constructs_lib.model import Model

GRANTS = ("grant_read_data", "grant_write_data", "grant_read_write_data", "grant_stream_read")
READ = {"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem"}
WRITE = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
DESCRIBE = {"dynamodb:DescribeTable"}
STREAM = {"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}
LIST_STREAMS = "dynamodb:ListStreams"
KMS_DECRYPT = {"kms:Decrypt", "kms:DescribeKey"}
KMS_ENCRYPT_DECRYPT = KMS_DECRYPT | {"kms:Encrypt", "kms:GenerateDataKey", "kms:ReEncryptFrom", "kms:ReEncryptTo"}

DATA_ACTIONS = {
    "grant_read_data": READ | DESCRIBE,
    "grant_write_data": WRITE | DESCRIBE,
    "grant_read_write_data": READ | WRITE | DESCRIBE,
}
KMS_ACTIONS = {
    "grant_read_data": KMS_DECRYPT,
    "grant_write_data": KMS_ENCRYPT_DECRYPT,
    "grant_read_write_data": KMS_ENCRYPT_DECRYPT,
    "grant_stream_read": KMS_DECRYPT,
}


@dataclass
class GrantStack:
    template: Template
    roles: dict[str, str]  # grant method -> logical id of the role it was given to
    table_id: str
    key_id: str | None

    def statements(self, grant: str) -> list[dict[str, Any]]:
        """Every policy statement attached to the role that received *grant*."""
        role_ref = {"Ref": self.roles[grant]}
        policies = [
            p for p in self.template.find_resources("AWS::IAM::Policy").values() if role_ref in p["Properties"]["Roles"]
        ]
        assert policies, f"no policy attached to the {grant} role"
        return [s for p in policies for s in p["Properties"]["PolicyDocument"]["Statement"]]

    def table_arn(self) -> dict[str, Any]:
        return {"Fn::GetAtt": [self.table_id, "Arn"]}

    def index_arn(self, name: str) -> dict[str, Any]:
        return {"Fn::Join": ["", [self.table_arn(), f"/index/{name}"]]}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def actions_of(statements: list[dict[str, Any]]) -> set[str]:
    return {a for s in statements for a in as_list(s["Action"])}


def iter_all_statements(template: Template) -> Iterator[dict[str, Any]]:
    for policy in template.find_resources("AWS::IAM::Policy").values():
        yield from policy["Properties"]["PolicyDocument"]["Statement"]


def build(model: Model, *, cmk: bool) -> GrantStack:
    env = cdk.Environment(region="eu-west-1") if cmk else None
    stack = cdk.Stack(cdk.App(), "GrantsCmk" if cmk else "Grants", env=env)
    key = kms.Key(stack, "Key") if cmk else None
    table = SingleTable(
        stack,
        "Data",
        model=model,
        stream=dynamodb.StreamViewType.NEW_IMAGE,
        encryption=dynamodb.TableEncryptionV2.customer_managed_key(key) if key else None,
    )
    roles = {}
    for grant in GRANTS:
        role = iam.Role(stack, f"Role-{grant}", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        getattr(table, grant)(role)
        roles[grant] = stack.resolve(role.node.default_child.logical_id)
    template = Template.from_stack(stack)
    (table_id,) = template.find_resources("AWS::DynamoDB::GlobalTable")
    key_id = stack.resolve(key.node.default_child.logical_id) if key else None
    return GrantStack(template, roles, table_id, key_id)


@pytest.fixture(scope="module")
def plain(mixed_index_model: Model) -> GrantStack:
    """Table with three GSIs and an LSI, a stream, the default encryption; one role per grant."""
    return build(mixed_index_model, cmk=False)


@pytest.fixture(scope="module")
def cmk(mixed_index_model: Model) -> GrantStack:
    """The same table encrypted with a customer-managed KMS key."""
    return build(mixed_index_model, cmk=True)


@pytest.fixture(params=["plain", "cmk"])
def either(request: pytest.FixtureRequest) -> GrantStack:
    return request.getfixturevalue(request.param)


def test_no_wildcard_actions(either: GrantStack) -> None:
    # GIVEN every grant method applied to its own role
    # WHEN the stack is synthesized
    actions = actions_of(list(iter_all_statements(either.template)))
    # THEN no action is "*" or a service wildcard such as "dynamodb:*"
    assert actions, "expected some policy statements"
    assert not [a for a in actions if a == "*" or a.endswith(":*") or "*" in a]


@pytest.mark.parametrize("grant", ["grant_read_data", "grant_write_data", "grant_read_write_data"])
def test_data_grants_have_exact_dynamodb_actions(plain: GrantStack, grant: str) -> None:
    # GIVEN a role granted read, write or read-write data access
    # WHEN the stack is synthesized
    statements = plain.statements(grant)
    # THEN it holds exactly the DynamoDB actions of that access level, and nothing else
    assert actions_of(statements) == DATA_ACTIONS[grant]


@pytest.mark.parametrize("grant", ["grant_read_data", "grant_read_write_data"])
def test_read_grants_cover_table_and_each_declared_index(
    plain: GrantStack, mixed_index_model: Model, grant: str
) -> None:
    # GIVEN a role allowed to read (reads may Query an index)
    # WHEN the stack is synthesized
    resources = [r for s in plain.statements(grant) for r in as_list(s["Resource"])]
    # THEN the resources are the table ARN and one ARN per declared index (GSIs and the LSI)
    expected = [plain.table_arn()] + [plain.index_arn(name) for name in mixed_index_model.indexes]
    assert len(mixed_index_model.indexes) == 4
    assert sorted(map(repr, resources)) == sorted(map(repr, expected))
    # AND never an index wildcard
    assert "index/*" not in repr(resources)


def test_write_grant_covers_the_table_only(plain: GrantStack) -> None:
    # GIVEN a role allowed to write (writes always address the table)
    # WHEN the stack is synthesized
    resources = [r for s in plain.statements("grant_write_data") for r in as_list(s["Resource"])]
    # THEN the only resource is the table ARN, a GetAtt on the GlobalTable
    assert resources == [plain.table_arn()]


def test_stream_grant_uses_the_stream_arn(plain: GrantStack) -> None:
    # GIVEN a role granted stream read
    # WHEN the stack is synthesized
    statements = plain.statements("grant_stream_read")
    # THEN it reads records (and lists streams) on the table's stream ARN only
    assert actions_of(statements) == STREAM | {LIST_STREAMS}
    assert [r for s in statements for r in as_list(s["Resource"])] == [{"Fn::GetAtt": [plain.table_id, "StreamArn"]}]


def test_no_grant_uses_a_star_resource(either: GrantStack) -> None:
    # GIVEN every grant method applied to its own role
    # WHEN the stack is synthesized
    on_star = [s for s in iter_all_statements(either.template) if "*" in as_list(s["Resource"])]
    # THEN no statement names "*" as its resource
    assert on_star == []


def test_default_encryption_adds_no_kms_permissions(plain: GrantStack) -> None:
    # GIVEN a table with the DynamoDB-owned key
    # WHEN the stack is synthesized
    actions = actions_of(list(iter_all_statements(plain.template)))
    # THEN no grant includes any KMS action
    assert not [a for a in actions if a.startswith("kms:")]


@pytest.mark.parametrize("grant", GRANTS)
def test_cmk_table_grants_kms_actions_on_the_key_only(cmk: GrantStack, grant: str) -> None:
    # GIVEN a table encrypted with a customer-managed key
    # WHEN a role receives a grant
    statements = cmk.statements(grant)
    kms_statements = [s for s in statements if any(a.startswith("kms:") for a in as_list(s["Action"]))]
    # THEN it also gets exactly the KMS actions that access needs
    assert actions_of(kms_statements) == KMS_ACTIONS[grant]
    # AND only on the key's ARN, in statements holding no DynamoDB action
    assert [r for s in kms_statements for r in as_list(s["Resource"])] == [{"Fn::GetAtt": [cmk.key_id, "Arn"]}]
    assert not [a for a in actions_of(kms_statements) if not a.startswith("kms:")]


@pytest.mark.parametrize("grant", ["grant_read_data", "grant_write_data", "grant_read_write_data"])
def test_cmk_table_dynamodb_actions_unchanged(cmk: GrantStack, grant: str) -> None:
    # GIVEN a CMK-encrypted table
    # WHEN a role receives a data grant
    dynamodb_actions = {a for a in actions_of(cmk.statements(grant)) if a.startswith("dynamodb:")}
    # THEN its DynamoDB actions are the same as with the default key
    assert dynamodb_actions == DATA_ACTIONS[grant]


def test_stream_grant_without_stream_is_rejected(scratch_stack: cdk.Stack, pk_only_model: Model) -> None:
    # GIVEN a table built without a stream
    table = SingleTable(scratch_stack, "NoStream", model=pk_only_model)
    role = iam.Role(scratch_stack, "NoStreamReader", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    # WHEN a stream grant is requested
    # THEN it fails with a props error saying the table has no stream
    with pytest.raises(ConstructPropsError, match="has no stream"):
        table.grant_stream_read(role)
