"""The stricter settings a stack opts in to (``constructs_lib.constructs.hardening``): a customer-managed key
everywhere, every generated function in a VPC. cdk-nag and cfn-lint cover the same stack as
``HardenedStack`` in ``test_cdk_nag.VARIANT_STACKS``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Template

from constructs_lib import (
    ConstructPropsError,
    Hardening,
    ShardedCounter,
    SingleTable,
    StreamAudit,
    TableFunction,
)
from constructs_lib.constructs.hardening import (
    CMK_CONTEXT,
    LAMBDA_VPC_ACTIONS,
    VPC_CIDR,
    VPC_CONTEXT,
)
from examples.shop.model import shop_model

HANDLER = Path(__file__).resolve().parents[2] / "examples" / "shop" / "handlers" / "orders_api.py"
REGION = "eu-west-1"
NEW_AND_OLD = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES


def _compose(stack: cdk.Stack) -> None:
    table = SingleTable(stack, "Data", model=shop_model, stream=NEW_AND_OLD)
    views = ShardedCounter(stack, "Views", table=table, name="views", shards=4)
    StreamAudit(stack, "Audit", source=table, redact=["email"], exclude_entities=ShardedCounter.ENTITIES)
    TableFunction(stack, "Api", table=table, entry=HANDLER, counters=[views])


def _template(context: dict[str, Any] | None = None, configure: Any = None) -> dict[str, Any]:
    app = cdk.App(context=context)
    stack = cdk.Stack(app, "S", env=cdk.Environment(region=REGION))
    if configure is not None:
        configure(stack)
    _compose(stack)
    return Template.from_stack(stack).to_json()


def _of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in template["Resources"].items() if r["Type"] == kind}


def _get_att_arn(value: Any) -> str | None:
    return value["Fn::GetAtt"][0] if isinstance(value, dict) and "Fn::GetAtt" in value else None


@pytest.fixture(scope="module")
def hardened() -> dict[str, Any]:
    return _template({CMK_CONTEXT: True, VPC_CONTEXT: True})


@pytest.fixture(scope="module")
def default() -> dict[str, Any]:
    return _template()


def test_cmk_everywhere_encrypts_every_resource_with_the_stacks_own_key(hardened: dict[str, Any]) -> None:
    # GIVEN the stack synthesized with constructs_lib:cmk-everywhere=true
    (key_id, key), = _of_type(hardened, "AWS::KMS::Key").items()
    # THEN one rotating, retained key exists...
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"
    # ...whose policy lets CloudWatch Logs use it for this account's log groups only
    (logs_statement,) = [s for s in key["Properties"]["KeyPolicy"]["Statement"]
                         if s.get("Sid") == "AllowCloudWatchLogsOfThisAccount"]
    assert logs_statement["Principal"] == {"Service": f"logs.{REGION}.amazonaws.com"}
    assert "kms:EncryptionContext:aws:logs:arn" in logs_statement["Condition"]["ArnLike"]
    # AND both tables, both queues, the secret, every log group and every function environment use it
    tables = _of_type(hardened, "AWS::DynamoDB::GlobalTable")
    assert len(tables) == 2
    for table in tables.values():
        assert table["Properties"]["SSESpecification"] == {"SSEEnabled": True, "SSEType": "KMS"}
        assert [_get_att_arn(r["SSESpecification"]["KMSMasterKeyId"]) for r in table["Properties"]["Replicas"]] == [key_id]
    queues = _of_type(hardened, "AWS::SQS::Queue")
    assert len(queues) == 2 and {_get_att_arn(q["Properties"]["KmsMasterKeyId"]) for q in queues.values()} == {key_id}
    (secret,) = _of_type(hardened, "AWS::SecretsManager::Secret").values()
    assert _get_att_arn(secret["Properties"]["KmsKeyId"]) == key_id
    log_groups = _of_type(hardened, "AWS::Logs::LogGroup")
    assert len(log_groups) == 4  # three functions and the VPC flow logs
    assert {_get_att_arn(g["Properties"]["KmsKeyId"]) for g in log_groups.values()} == {key_id}
    functions = _of_type(hardened, "AWS::Lambda::Function")
    assert len(functions) == 3 and {_get_att_arn(f["Properties"]["KmsKeyArn"]) for f in functions.values()} == {key_id}


def test_failure_queue_senders_get_exact_kms_actions_not_cdk_wildcards(hardened: dict[str, Any]) -> None:
    # GIVEN every identity-policy statement of the hardened stack
    statements = [s for p in _of_type(hardened, "AWS::IAM::Policy").values()
                  for s in p["Properties"]["PolicyDocument"]["Statement"]]
    kms_actions = {a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
                   if a.startswith("kms:")}
    # THEN sending to a customer-key queue asks for GenerateDataKey/Decrypt, never a kms:* wildcard
    assert "kms:GenerateDataKey" in kms_actions
    assert not [a for a in kms_actions if "*" in a]


def test_lambda_in_vpc_places_every_function_in_an_isolated_vpc_with_endpoints(hardened: dict[str, Any]) -> None:
    # GIVEN the stack synthesized with constructs_lib:lambda-in-vpc=true
    (vpc_id, vpc), = _of_type(hardened, "AWS::EC2::VPC").items()
    assert vpc["Properties"]["CidrBlock"] == VPC_CIDR
    # THEN its subnets are isolated: no internet or NAT gateway, no route to 0.0.0.0/0
    assert not _of_type(hardened, "AWS::EC2::InternetGateway") and not _of_type(hardened, "AWS::EC2::NatGateway")
    assert not [r for r in _of_type(hardened, "AWS::EC2::Route").values()
                if r["Properties"].get("DestinationCidrBlock") == "0.0.0.0/0"]
    subnets = set(_of_type(hardened, "AWS::EC2::Subnet"))
    assert len(subnets) == 2
    # AND DynamoDB (gateway) and Secrets Manager (interface, for the audit salt) are reachable
    endpoints = _of_type(hardened, "AWS::EC2::VPCEndpoint").values()
    kinds = sorted(e["Properties"]["VpcEndpointType"] for e in endpoints)
    assert kinds == ["Gateway", "Interface"]
    services = " ".join(str(e["Properties"]["ServiceName"]) for e in endpoints)
    assert "dynamodb" in services and "secretsmanager" in services
    # AND the VPC's traffic is logged
    (flow_log,) = _of_type(hardened, "AWS::EC2::FlowLog").values()
    assert flow_log["Properties"]["ResourceId"] == {"Ref": vpc_id}
    # AND every function runs in those subnets with a security group of its own, without inbound rules
    functions = _of_type(hardened, "AWS::Lambda::Function").values()
    groups = _of_type(hardened, "AWS::EC2::SecurityGroup")
    own_groups = set()
    for function in functions:
        config = function["Properties"]["VpcConfig"]
        assert {s["Ref"] for s in config["SubnetIds"]} == subnets
        (group,) = config["SecurityGroupIds"]
        own_groups.add(_get_att_arn(group))
    assert len(own_groups) == 3
    for lid in own_groups:
        assert "SecurityGroupIngress" not in groups[lid]["Properties"]
    # AND the endpoint admits HTTPS from the VPC's literal range only
    (endpoint_group,) = [g for lid, g in groups.items() if lid not in own_groups]
    assert endpoint_group["Properties"]["SecurityGroupIngress"] == [
        {"CidrIp": VPC_CIDR, "Description": "HTTPS from the VPC", "FromPort": 443, "IpProtocol": "tcp", "ToPort": 443}
    ]


def test_each_function_role_gets_exactly_the_network_interface_statement(hardened: dict[str, Any]) -> None:
    # GIVEN the policies of the hardened stack
    policies = _of_type(hardened, "AWS::IAM::Policy")
    eni = {lid: p for lid, p in policies.items() if "NetworkInterfaces" in lid}
    # THEN one per function, each one statement of the six actions, attached to that function's role
    assert len(eni) == 3
    for policy in eni.values():
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert sorted(statement["Action"]) == sorted(LAMBDA_VPC_ACTIONS) and statement["Resource"] == "*"
        assert len(policy["Properties"]["Roles"]) == 1
    # AND no other statement names resource "*"
    for lid, policy in policies.items():
        if lid not in eni:
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                assert statement["Resource"] != "*" and "*" not in statement["Resource"], (lid, statement)
    # AND each function waits for its network-interface policy (Lambda checks it at creation)
    for function in _of_type(hardened, "AWS::Lambda::Function").values():
        assert [d for d in function["DependsOn"] if "NetworkInterfaces" in d]


def test_without_the_flags_nothing_changes(default: dict[str, Any]) -> None:
    # GIVEN the same constructs in a stack that opted in to nothing
    # THEN no key, VPC or security group is created, queues use alias/aws/sqs, logs are not CMK-encrypted
    assert not _of_type(default, "AWS::KMS::Key") and not _of_type(default, "AWS::EC2::VPC")
    assert not _of_type(default, "AWS::EC2::SecurityGroup")
    assert {q["Properties"]["KmsMasterKeyId"] for q in _of_type(default, "AWS::SQS::Queue").values()} == {"alias/aws/sqs"}
    assert not [g for g in _of_type(default, "AWS::Logs::LogGroup").values() if "KmsKeyId" in g["Properties"]]
    assert not [f for f in _of_type(default, "AWS::Lambda::Function").values()
                if "VpcConfig" in f["Properties"] or "KmsKeyArn" in f["Properties"]]


def test_each_flag_works_alone() -> None:
    # GIVEN one stack with only the key flag and one with only the VPC flag
    cmk_only = _template({CMK_CONTEXT: "true"})
    vpc_only = _template({VPC_CONTEXT: True})
    # THEN the first has a key and no VPC, the second a VPC and no key (queues keep alias/aws/sqs)
    assert _of_type(cmk_only, "AWS::KMS::Key") and not _of_type(cmk_only, "AWS::EC2::VPC")
    assert _of_type(vpc_only, "AWS::EC2::VPC") and not _of_type(vpc_only, "AWS::KMS::Key")
    assert {q["Properties"]["KmsMasterKeyId"] for q in _of_type(vpc_only, "AWS::SQS::Queue").values()} == {"alias/aws/sqs"}
    assert all("VpcConfig" in f["Properties"] for f in _of_type(vpc_only, "AWS::Lambda::Function").values())


def test_configure_brings_your_own_key_and_vpc() -> None:
    # GIVEN a stack whose own key and VPC are handed to Hardening.configure before the constructs
    created: dict[str, Any] = {}

    def configure(stack: cdk.Stack) -> None:
        created["key"] = kms.Key(stack, "MyKey", enable_key_rotation=True)
        created["vpc"] = ec2.Vpc(stack, "MyVpc", max_azs=2, nat_gateways=1)
        Hardening.configure(stack, encryption_key=created["key"], vpc=created["vpc"],
                            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS))

    template = _template(configure=configure)
    # THEN that key encrypts the table and that VPC's private subnets hold the functions; nothing else is made
    (key_id,) = _of_type(template, "AWS::KMS::Key")
    assert key_id.startswith("MyKey")
    (vpc_id,) = _of_type(template, "AWS::EC2::VPC")
    assert vpc_id.startswith("MyVpc")
    assert not [e for e in _of_type(template, "AWS::EC2::VPCEndpoint")]  # your VPC, your routes (NAT here)
    private = {lid for lid, s in _of_type(template, "AWS::EC2::Subnet").items() if "Private" in lid}
    for function in _of_type(template, "AWS::Lambda::Function").values():
        assert {s["Ref"] for s in function["Properties"]["VpcConfig"]["SubnetIds"]} == private
        assert _get_att_arn(function["Properties"]["KmsKeyArn"]) == key_id


@pytest.mark.parametrize(
    "case, build, message",
    [
        ("explicit AWS-owned encryption under cmk-everywhere",
         lambda s: SingleTable(s, "T", model=shop_model, encryption=dynamodb.TableEncryptionV2.aws_managed_key()),
         "conflicts with the stack's cmk-everywhere"),
        ("configured twice",
         lambda s: (Hardening.configure(s), Hardening.configure(s)), "already has its settings"),
        ("subnets without a VPC",
         lambda s: Hardening.configure(s, vpc_subnets=ec2.SubnetSelection()), "vpc_subnets needs vpc"),
        ("a key with the flag turned off",
         lambda s: Hardening.configure(s, encryption_key=kms.Key(s, "K"), cmk_everywhere=False),
         "encryption_key given with cmk_everywhere=False"),
    ],
)
def test_contradictory_settings_are_refused(case: str, build: Any, message: str) -> None:
    # GIVEN a stack with cmk-everywhere on
    app = cdk.App(context={CMK_CONTEXT: True})
    stack = cdk.Stack(app, "S", env=cdk.Environment(region=REGION))
    # WHEN the settings contradict each other THEN construction fails, naming the rule
    with pytest.raises(ConstructPropsError, match=message):
        build(stack)


def test_cmk_everywhere_needs_a_region_and_a_boolean_flag() -> None:
    # GIVEN a region-agnostic stack with cmk-everywhere on
    stack = cdk.Stack(cdk.App(context={CMK_CONTEXT: True}), "S")
    # THEN the table cannot name its replica key: refused at construction, saying what to do
    with pytest.raises(ConstructPropsError, match=r"concrete region.*env=cdk.Environment"):
        SingleTable(stack, "T", model=shop_model)
    # AND a flag value that is not a boolean is refused, naming the value
    stack = cdk.Stack(cdk.App(context={VPC_CONTEXT: "sometimes"}), "S", env=cdk.Environment(region=REGION))
    with pytest.raises(ConstructPropsError, match=r"constructs_lib:lambda-in-vpc='sometimes' must be true or false"):
        SingleTable(stack, "T", model=shop_model)
