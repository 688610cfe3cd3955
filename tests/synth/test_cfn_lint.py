"""cfn-lint finds neither errors nor warnings in what the constructs synthesize.

Informational findings (rule ids starting with ``I``) are not checked. cfn-lint runs in-process
through its Python API (tests/cfn_lint_check.py: ``lint_file``'s run, the rules loaded once per
process), on the files written to the cloud assembly.
Linted: app.py's ShopStack, a stack of non-default SingleTable options, and every construct
variant stack of ``test_cdk_nag.VARIANT_STACKS`` (the same stacks the cdk-nag gate checks).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from cfn_lint_check import lint_findings, lint_matches

# The construct-variant stacks of the cdk-nag gate (a sibling test module: pytest puts this
# directory on sys.path), so both gates check the same stacks.
from test_cdk_nag import VARIANT_STACKS, build_stack_app

from app import STACKS as APP_STACKS
from constructs_lib import SingleTable, TableFunction
from constructs_lib.model import Model

HANDLER = Path(__file__).resolve().parents[2] / "examples" / "shop" / "handlers" / "orders_api.py"


#: An unknown resource property (an error) and a DependsOn a reference already implies (W3005).
BROKEN_TEMPLATE = {
    "Resources": {
        "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"NoSuchProperty": 1}},
        "Queue": {"Type": "AWS::SQS::Queue", "DependsOn": ["Topic"], "Properties": {
            "QueueName": {"Fn::GetAtt": ["Topic", "TopicName"]}}},
    }
}


def write_broken_template(directory: Path) -> Path:
    path = directory / "broken.template.json"
    path.write_text(json.dumps(BROKEN_TEMPLATE), encoding="utf-8")
    return path


def test_cfn_lint_flags_a_broken_template(tmp_path: Path) -> None:
    # GIVEN a template with an unknown resource property and a redundant DependsOn
    path = write_broken_template(tmp_path)
    # WHEN it is linted
    findings = lint_findings(path)
    # THEN the checker reports both (so a clean result below means something)
    assert any(f.startswith("E") for f in findings), findings
    assert any(f.startswith("W3005") for f in findings), findings


def test_rules_loaded_once_find_what_lint_file_finds(tmp_path: Path) -> None:
    # GIVEN a template with an error and a warning, linted once already through the shared rules
    path = write_broken_template(tmp_path)
    lint_matches(path)

    def key(matches: list[Any]) -> list[tuple[Any, ...]]:
        return sorted((m.rule.id, m.message, tuple(map(str, getattr(m, "path", []) or [])), m.linenumber)
                      for m in matches)

    # WHEN it is linted again through them, and through cfn-lint's own per-file API
    from cfnlint.api import lint_file

    shared, fresh = key(lint_matches(path)), key(lint_file(path))
    # THEN both report the same matches, an error and a warning among them
    assert shared == fresh
    assert {rule[:1] for rule, *_ in fresh} >= {"E", "W"}, fresh


@pytest.mark.parametrize("stack", list(APP_STACKS))
def test_app_stack_templates_are_lint_clean(shop, stack: str) -> None:  # noqa: ANN001
    # GIVEN a template of app.py (the examples' stacks, the reporting consumer of the shop's table included)
    template_file = shop.outdir / f"{stack}.template.json"
    # WHEN cfn-lint checks it
    findings = lint_findings(template_file)
    # THEN it reports no error and no warning
    assert findings == []


@pytest.fixture(scope="module")
def options_template_file(tmp_path_factory: pytest.TempPathFactory, mixed_index_model: Model) -> Path:
    """A stack using the options away from the defaults: CMK, provisioned billing, an LSI, a
    GSI without sort key, INCLUDE projections, a stream, a read-only function."""
    outdir = tmp_path_factory.mktemp("options-cdk-out")
    app = cdk.App(outdir=str(outdir))
    stack = cdk.Stack(app, "OptionsStack", env=cdk.Environment(region="eu-west-1"))
    table = SingleTable(
        stack,
        "Data",
        model=mixed_index_model,
        stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
        encryption=dynamodb.TableEncryptionV2.customer_managed_key(kms.Key(stack, "Key", enable_key_rotation=True)),
        billing=dynamodb.Billing.provisioned(
            read_capacity=dynamodb.Capacity.fixed(5),
            write_capacity=dynamodb.Capacity.autoscaled(max_capacity=20),
        ),
        index_write_capacity=dynamodb.Capacity.autoscaled(max_capacity=10),
        table_class=dynamodb.TableClass.STANDARD_INFREQUENT_ACCESS,
        contributor_insights=True,
    )
    function = TableFunction(stack, "Reader", table=table, entry=HANDLER, access="read")
    table.grant_stream_read(function.function)
    assembly = app.synth()
    return outdir / assembly.get_stack_by_name("OptionsStack").template_file


def test_options_stack_template_is_lint_clean(options_template_file: Path) -> None:
    # GIVEN a template exercising the non-default options
    # WHEN cfn-lint checks it
    findings = lint_findings(options_template_file)
    # THEN it reports no error and no warning
    assert findings == []


@pytest.fixture(scope="module")
def variant_template_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each construct variant stack synthesized once, in its own app."""
    files = {}
    for name in VARIANT_STACKS:
        outdir = tmp_path_factory.mktemp(f"lint-{name}")
        assembly = build_stack_app(name, outdir).synth()
        files[name] = outdir / assembly.get_stack_by_name(name).template_file
    return files


@pytest.mark.parametrize("stack", list(VARIANT_STACKS))
def test_variant_stack_template_is_lint_clean(variant_template_files: dict[str, Path], stack: str) -> None:
    # GIVEN the template of a construct variant app.py does not cover (schedule-mode counter,
    # audit with its own key, audit dropping values, CMK + provisioned table with every construct)
    template_file = variant_template_files[stack]
    # WHEN cfn-lint checks it
    findings = lint_findings(template_file)
    # THEN it reports no error and no warning
    assert findings == []
