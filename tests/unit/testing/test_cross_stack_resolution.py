"""Cross-stack intrinsics of locally deployed templates: Fn::ImportValue, Fn::GetStackOutput and
SSM parameters, resolved through the values the deployed stacks share — with hand-written
templates in the shapes CDK 2.275 synthesizes, and no DynamoDB (no tables are involved)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from constructs_lib.testing import LocalDeployError, UnresolvableIntrinsicError
from constructs_lib.testing._resolver import CrossStackValues
from constructs_lib.testing.local_deploy import LocalDeployment, _record_parameters

CLIENT = SimpleNamespace(meta=SimpleNamespace(region_name="us-east-1"))
PRODUCER = {
    "Resources": {
        "NameParam": {"Type": "AWS::SSM::Parameter",
                      "Properties": {"Name": "/shop/table-name", "Type": "String", "Value": "shop-table"}},
        "ListParam": {"Type": "AWS::SSM::Parameter",
                      "Properties": {"Name": "/shop/list", "Type": "StringList", "Value": "a,b"}},
        "Unnamed": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": {"Fn::Sub": "${AWS::StackName}-x"}}},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {}},
    },
    "Outputs": {
        # CDK's "strong" reference (the default): an export
        "ExportsOutputRefName": {"Value": {"Fn::GetAtt": ["NameParam", "Value"]},
                                 "Export": {"Name": "Producer:ExportsOutputRefName"}},
        # CDK's "weak" reference (@aws-cdk/core:defaultCrossStackReferences = weak): a plain output
        "PublishOutputRefName": {"Value": {"Fn::Join": ["-", [{"Ref": "AWS::StackName"}, "published"]]}},
        "RoleArnOutput": {"Value": {"Fn::GetAtt": ["Role", "Arn"]}, "Export": {"Name": "Producer:RoleArn"}},
    },
}
CONSUMER = {
    "Parameters": {
        "SsmParameterValueshoptablename": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/shop/table-name"},
        "SsmParameterValuemissing": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/shop/missing"},
        "Plain": {"Type": "String", "Default": "x"},
    },
    "Resources": {},
}


def deploy(template: dict[str, Any], stack_name: str, shared: CrossStackValues) -> LocalDeployment:
    """What deploy_template does after creating tables (there are none here)."""
    deployment = LocalDeployment(client=CLIENT, template=template, stack_name=stack_name, shared=shared)
    deployment.skipped.update({lid: r["Type"] for lid, r in template["Resources"].items()})
    _record_parameters(deployment)
    shared.register(deployment)
    return deployment


@pytest.fixture
def stacks() -> tuple[LocalDeployment, LocalDeployment]:
    shared = CrossStackValues()
    return deploy(PRODUCER, "Producer", shared), deploy(CONSUMER, "Consumer", shared)


def test_string_parameters_are_created_and_others_stay_skipped(stacks) -> None:  # noqa: ANN001
    # GIVEN the producer's three SSM parameters: named String, StringList, unnamed String
    producer, _ = stacks
    # WHEN the producer is deployed
    # THEN the String ones are recorded (the unnamed one with a generated name), the StringList skipped
    assert producer.parameters["NameParam"] == "/shop/table-name"
    assert producer.parameters["Unnamed"].startswith("CFN-Unnamed-")
    assert producer.skipped == {"ListParam": "AWS::SSM::Parameter", "Role": "AWS::IAM::Role"}
    # AND Ref gives the name, GetAtt Value the value
    assert producer.resolve({"Ref": "NameParam"}) == "/shop/table-name"
    assert producer.resolve({"Fn::GetAtt": ["Unnamed", "Value"]}) == "Producer-x"


def test_import_value_reads_the_exporting_stacks_output(stacks) -> None:  # noqa: ANN001
    # GIVEN the consumer, deployed after the producer
    _, consumer = stacks
    # WHEN it imports the producer's export
    # THEN the output's value, resolved in the producer, comes back
    assert consumer.resolve({"Fn::ImportValue": "Producer:ExportsOutputRefName"}) == "shop-table"


def test_get_stack_output_reads_a_plain_output_of_the_named_stack(stacks) -> None:  # noqa: ANN001
    # GIVEN the shape CDK writes for a weak reference in the same account and region
    _, consumer = stacks
    intrinsic = {"Fn::GetStackOutput": {"StackName": "Producer", "Region": {"Ref": "AWS::Region"},
                                        "OutputName": "PublishOutputRefName"}}
    # WHEN it is resolved in the consumer
    # THEN the producer's output comes back, with AWS::StackName being the producer's
    assert consumer.resolve(intrinsic) == "Producer-published"


def test_ssm_parameter_reads_resolve_to_the_created_value(stacks) -> None:  # noqa: ANN001
    # GIVEN a template parameter of type AWS::SSM::Parameter::Value<String> and dynamic references
    _, consumer = stacks
    # WHEN they are resolved in the consumer
    # THEN they read the parameter the producer created
    assert consumer.resolve({"Ref": "SsmParameterValueshoptablename"}) == "shop-table"
    assert consumer.resolve("{{resolve:ssm:/shop/table-name}}") == "shop-table"
    assert consumer.resolve("t={{resolve:ssm:/shop/table-name:3}};") == "t=shop-table;"


@pytest.mark.parametrize(("intrinsic", "named", "rule"), [
    ({"Fn::ImportValue": "Other:Export"}, "Other:Export", "no locally deployed stack exports 'Other:Export'"),
    ({"Fn::GetStackOutput": {"StackName": "Nowhere", "OutputName": "X"}}, "Nowhere", "stack 'Nowhere' is not deployed locally"),
    ({"Fn::GetStackOutput": {"StackName": "Producer", "OutputName": "Nope"}}, "Nope", "stack 'Producer' has no output 'Nope'"),
    ({"Fn::GetStackOutput": {"StackName": "Producer", "OutputName": "PublishOutputRefName", "Region": "eu-west-1"}},
     "eu-west-1", "a cross-region reference"),
    ({"Fn::GetStackOutput": {"StackName": "Producer", "OutputName": "PublishOutputRefName",
                             "RoleArn": "arn:aws:iam::1:role/r"}}, "RoleArn", "a cross-account reference"),
    ({"Fn::ImportValue": "Producer:RoleArn"}, "Producer:RoleArn", "'Role' is a AWS::IAM::Role, which is not deployed"),
    ({"Ref": "SsmParameterValuemissing"}, "SsmParameterValuemissing",
     "reads SSM parameter '/shop/missing', which no locally deployed stack created"),
    ("{{resolve:ssm:/shop/list}}", "/shop/list", "which no locally deployed stack created"),
    ("{{resolve:secretsmanager:db:SecretString:password}}", "secretsmanager", "only resolve:ssm"),
    ({"Ref": "Plain"}, "Plain", "template parameter of type String"),
])
def test_unresolvable_references_name_the_intrinsic_and_the_reason(stacks, intrinsic: Any, named: str, rule: str) -> None:  # noqa: ANN001
    # GIVEN a reference the local deployments cannot satisfy
    _, consumer = stacks
    # WHEN it is resolved
    with pytest.raises(UnresolvableIntrinsicError) as info:
        consumer.resolve(intrinsic)
    # THEN the error is typed, carries and names the intrinsic, and says why
    assert named in str(info.value) and rule in str(info.value)
    assert info.value.intrinsic is not None


def test_a_second_stack_exporting_the_same_name_is_refused(stacks) -> None:  # noqa: ANN001
    # GIVEN a stack exporting a name the producer already exports
    producer, _ = stacks
    clash = {"Resources": {}, "Outputs": {"O": {"Value": "v", "Export": {"Name": "Producer:ExportsOutputRefName"}}}}
    # WHEN it is deployed into the same set of stacks
    # THEN the error names the export and both stacks
    with pytest.raises(LocalDeployError,
                       match=r"Export 'Producer:ExportsOutputRefName' of stack 'Clash' is already exported by stack 'Producer'"):
        deploy(clash, "Clash", producer.shared)


def test_a_second_stack_creating_the_same_parameter_is_refused(stacks) -> None:  # noqa: ANN001
    # GIVEN a stack creating an SSM parameter name the producer already created
    producer, _ = stacks
    clash = {"Resources": {"P": {"Type": "AWS::SSM::Parameter",
                                 "Properties": {"Name": "/shop/table-name", "Type": "String", "Value": "v"}}}}
    # WHEN it is deployed into the same set of stacks
    # THEN the error names the parameter and the stack that created it
    with pytest.raises(LocalDeployError, match=r"SSM parameter '/shop/table-name' \(P\) already exists: created by 'Producer'"):
        deploy(clash, "Clash", producer.shared)


def test_a_second_stack_with_the_same_name_is_refused(stacks) -> None:  # noqa: ANN001
    # GIVEN another deployment of a stack named like the deployed producer
    producer, _ = stacks
    # WHEN it is deployed with the same shared values (another app's assembly, say)
    # THEN it is refused, naming the stack: stack names are unique per account and region
    with pytest.raises(LocalDeployError, match=r"Stack 'Producer' is already deployed"):
        deploy({"Resources": {}}, "Producer", producer.shared)


def test_a_deleted_stacks_parameters_and_exports_are_gone(stacks) -> None:  # noqa: ANN001
    # GIVEN the producer and the consumer reading its parameter and its export
    producer, consumer = stacks
    assert consumer.resolve({"Ref": "SsmParameterValueshoptablename"}) == "shop-table"
    # WHEN the producer is deleted (it has no tables here)
    producer.delete()
    # THEN what it created no longer resolves, and nothing of it is left in the shared values
    with pytest.raises(UnresolvableIntrinsicError, match="which no locally deployed stack created"):
        consumer.resolve({"Ref": "SsmParameterValueshoptablename"})
    with pytest.raises(UnresolvableIntrinsicError, match="no locally deployed stack exports"):
        consumer.resolve({"Fn::ImportValue": "Producer:ExportsOutputRefName"})
    assert (sorted(consumer.shared.outputs), consumer.shared.exports, consumer.shared.parameters) == (["Consumer"], {}, {})
    # AND a stack of that name may be deployed again with the same shared values
    again = deploy(PRODUCER, "Producer", consumer.shared)
    assert consumer.resolve({"Ref": "SsmParameterValueshoptablename"}) == "shop-table"
    assert again.shared is consumer.shared
