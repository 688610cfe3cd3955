"""The synth benchmark's parity check (benchmarks/template_parity.py): two apps' templates compared
resource by resource, logical ids modulo CDK's path hash."""

from __future__ import annotations

import copy
from typing import Any

from benchmarks.template_parity import base_id, compare_templates, normalize


def _stack(hash_: str) -> dict[str, Any]:
    """A small stack as CDK writes it: ids end in an 8-hex-digit hash (``hash_``) of the construct path."""
    table, role, policy, fn = (f"DataTable{hash_}", f"WorkerRole{hash_}", f"WorkerRoleDefaultPolicy{hash_}",
                               f"WorkerFunction{hash_}")
    return {"Resources": {
        table: {"Type": "AWS::DynamoDB::GlobalTable", "Properties": {
            "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}]}, "DeletionPolicy": "Retain"},
        role: {"Type": "AWS::IAM::Role", "Properties": {"Description": f"Execution role of Stack/{hash_}"}},
        policy: {"Type": "AWS::IAM::Policy", "Properties": {
            "PolicyName": policy, "Roles": [{"Ref": role}],
            "PolicyDocument": {"Statement": [{"Action": "dynamodb:Query", "Effect": "Allow",
                                              "Resource": {"Fn::GetAtt": [table, "Arn"]}}]}}},
        fn: {"Type": "AWS::Lambda::Function", "DependsOn": [policy, role],
             "Properties": {"Role": {"Fn::GetAtt": [role, "Arn"]},
                            "Code": {"S3Key": "5e1f.zip"},
                            "Environment": {"Variables": {"TABLE": {"Ref": table}}}},
             "Metadata": {"aws:cdk:path": f"Stack/{hash_}/Function"}},
        "CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": f"v2:deflate64:{hash_}"}},
    }, "Outputs": {"TableName": {"Value": {"Ref": table}}}}


def test_same_resources_under_other_construct_paths_match() -> None:
    # GIVEN two apps whose stacks differ only in construct paths (hashes), descriptions and metadata
    ours, theirs = {"S": _stack("0A1B2C3D")}, {"S": _stack("99887766")}
    # WHEN compared
    diffs = compare_templates(ours, theirs)
    # THEN nothing differs, and each resource is keyed by its type and the id without its hash
    assert diffs == []
    assert ("AWS::Lambda::Function", "WorkerFunction") in normalize(ours["S"])
    assert base_id("DataTable0A1B2C3D") == "DataTable" and base_id("CDKMetadata") == "CDKMetadata"


def test_a_removed_resource_is_caught() -> None:
    # GIVEN the hand-written app lacking one resource app.py builds
    ours, theirs = {"S": _stack("0A1B2C3D")}, {"S": _stack("99887766")}
    del theirs["S"]["Resources"]["WorkerRoleDefaultPolicy99887766"]
    # WHEN compared
    diffs = compare_templates(ours, theirs)
    # THEN the type count and the missing resource are reported
    assert "S AWS::IAM::Policy: app.py 1, hand-written 0" in diffs
    assert "S AWS::IAM::Policy WorkerRoleDefaultPolicy: only in app.py" in diffs


def test_an_added_resource_is_caught() -> None:
    # GIVEN the hand-written app with one resource more (same type as one it has, another name)
    ours, theirs = {"S": _stack("0A1B2C3D")}, {"S": _stack("99887766")}
    theirs["S"]["Resources"]["ExtraRole11223344"] = {"Type": "AWS::IAM::Role", "Properties": {}}
    # WHEN compared
    diffs = compare_templates(ours, theirs)
    # THEN both the count and the extra resource show
    assert "S AWS::IAM::Role: app.py 1, hand-written 2" in diffs
    assert "S AWS::IAM::Role ExtraRole: only in the hand-written app" in diffs


def test_a_changed_property_is_caught_with_its_path() -> None:
    # GIVEN the same resources, but one IAM statement grants another action and one variable differs
    ours, theirs = {"S": _stack("0A1B2C3D")}, {"S": _stack("99887766")}
    resources = theirs["S"]["Resources"]
    resources["WorkerRoleDefaultPolicy99887766"]["Properties"]["PolicyDocument"]["Statement"][0]["Action"] = "dynamodb:Scan"
    resources["WorkerFunction99887766"]["Properties"]["Environment"]["Variables"]["TABLE"] = "literal"
    # WHEN compared
    diffs = compare_templates(ours, theirs)
    # THEN each difference names the resource and the property path
    assert len(diffs) == 2
    assert diffs[0].startswith("S AWS::IAM::Policy WorkerRoleDefaultPolicy: "
                               "Properties.PolicyDocument.Statement.0.Action: app.py \"dynamodb:Query\"")
    assert diffs[1].startswith("S AWS::Lambda::Function WorkerFunction: Properties.Environment.Variables.TABLE")


def test_references_deletion_policy_asset_and_explicit_dependencies_are_compared() -> None:
    # GIVEN variants that each change one non-text part: a reference's target, the deletion
    # policy, the asset hash, an explicit dependency (not implied by a reference), an output
    base = _stack("0A1B2C3D")
    variants: list[tuple[str, Any]] = [
        ("reference", lambda r: r["WorkerFunction99887766"]["Properties"]["Environment"]["Variables"].update(
            TABLE={"Ref": "WorkerRole99887766"})),
        ("deletion", lambda r: r["DataTable99887766"].update(DeletionPolicy="Delete")),
        ("asset", lambda r: r["WorkerFunction99887766"]["Properties"]["Code"].update(S3Key="0000.zip")),
        ("depends", lambda r: r["WorkerFunction99887766"].update(DependsOn=["DataTable99887766"])),
    ]
    for label, change in variants:
        theirs = _stack("99887766")
        change(theirs["Resources"])
        # WHEN compared
        diffs = compare_templates({"S": copy.deepcopy(base)}, {"S": theirs})
        # THEN the one change is reported
        assert len(diffs) == 1, (label, diffs)
    theirs = _stack("99887766")
    theirs["Outputs"]["Extra"] = {"Value": "x"}
    assert compare_templates({"S": base}, {"S": theirs}) == ["S outputs: app.py ['TableName'], hand-written "
                                                            "['Extra', 'TableName']"]


def test_a_stack_on_one_side_only_is_caught() -> None:
    # GIVEN the hand-written app missing a whole stack
    # WHEN compared THEN the stack is named
    assert compare_templates({"S": _stack("0A1B2C3D"), "T": _stack("0A1B2C3D")}, {"S": _stack("99887766")}) == [
        "T: only in app.py"]
