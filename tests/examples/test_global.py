"""The global documents example (examples/global): the replicated table and the regional filters
in the template, the scenario end to end on the GlobalTables harness (DynamoDB Local, virtual
time; bundled handlers from the cloud assembly), cdk-nag and cfn-lint."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.runtime.environment import ENV_REPLICA_REGIONS
from constructs_lib.testing import MappingSettings

scenario = importlib.import_module("examples.global.scenario")  # `global` is a Python keyword

STACK = scenario.STACK


@pytest.fixture(scope="module")
def example(synth_example: Callable[[str], Any]) -> Any:
    return synth_example("examples.global.app")


@pytest.fixture(scope="module")
def template(example: Any) -> dict[str, Any]:
    return example.template(STACK)


# Template ----------------------------------------------------------------------------------------------------
def test_the_table_is_replicated_and_every_function_knows_its_regions(example: Any, template: dict[str, Any]) -> None:
    # GIVEN the synthesized stack
    tables = example.resources(STACK, "AWS::DynamoDB::GlobalTable")
    (data,) = [t for lid, t in tables.items() if lid.startswith("Data")]
    (audit,) = [t for lid, t in tables.items() if lid.startswith("Audit")]
    # THEN the data table has a replica in each region; the audit table stays in its own region
    assert sorted(r["Region"] for r in data["Properties"]["Replicas"]) == sorted(scenario.REGIONS)
    assert [r["Region"] for r in audit["Properties"]["Replicas"]] == [scenario.HOME]
    # AND every function (API, aggregator, audit) is told the table's regions, home first
    for handler in (scenario.API, scenario.AGGREGATOR, scenario.AUDIT):
        variables = template["Resources"][example.function_id(STACK, handler)]["Properties"]["Environment"]["Variables"]
        assert variables[ENV_REPLICA_REGIONS] == ",".join(scenario.REGIONS), handler


def test_the_replica_regions_audit_filters_are_what_its_stack_synthesizes(
    template: dict[str, Any], cdk_synth: Callable[..., Any],
) -> None:
    # GIVEN the same stack synthesized in the replica region (its table's home there)
    stack_module = importlib.import_module("examples.global.stack")

    def build(app: Any) -> None:
        import aws_cdk as cdk

        stack_module.GlobalDocsStack(app, "InReplica", replicas=[scenario.HOME],
                                     env=cdk.Environment(region=scenario.REPLICA))

    replica_template = cdk_synth(build, project_context=False).template("InReplica")

    def settings(tpl: dict[str, Any]) -> MappingSettings:
        fn = next(lid for lid, r in tpl["Resources"].items()
                  if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == scenario.AUDIT)
        return MappingSettings.from_template(tpl, function_logical_id=fn)

    # WHEN the scenario re-targets the home audit's filters to the replica region
    retargeted = scenario.filters_for(settings(template), scenario.HOME, scenario.REPLICA)
    # THEN they are the filters the replica region's StreamAudit synthesizes, and name only that region
    assert retargeted.filters == settings(replica_template).filters
    assert scenario.HOME not in json.dumps(retargeted.filters) and scenario.REPLICA in json.dumps(retargeted.filters)


# Scenario ----------------------------------------------------------------------------------------------------
def test_scenario_end_to_end(example: Any, dynamodb_local: Any) -> None:
    # GIVEN the synthesized app and DynamoDB Local
    lines: list[str] = []
    # WHEN the scenario runs (writes in two regions, a partition that heals)
    outcome = scenario.run(example.outdir, dynamodb_local, out=lines.append)
    made = sum(outcome.views_made.values())
    # THEN during the partition each region saw only its own rename
    assert outcome.partitioned_titles == {"us-east-1": "Launch plan v2", "eu-west-1": "Launch plan (EU review)"}
    # AND afterwards the later rename won everywhere, and the delete reached both regions
    assert set(outcome.titles.values()) == {"Launch plan (EU review)"}
    assert outcome.origins == dict.fromkeys(scenario.REGIONS, "eu-west-1")
    assert outcome.notes_present == dict.fromkeys(scenario.REGIONS, False)
    # AND every region's aggregated and exact view totals equal the views made in all regions
    assert made == 90 and outcome.totals == dict.fromkeys(scenario.REGIONS, (made, made))
    # AND each region audited exactly the document changes written there, once each
    assert outcome.audited == {r: sorted(outcome.written[r]) for r in scenario.REGIONS}
    assert outcome.audited == {
        "us-east-1": [("INSERT", "DOC#d-plan"), ("MODIFY", "DOC#d-plan")],
        "eu-west-1": [("INSERT", "DOC#d-notes"), ("MODIFY", "DOC#d-plan"), ("REMOVE", "DOC#d-notes")],
    }
    assert all(n > 0 for n in outcome.filtered_out.values())
    # AND the naive shared-shard layout lost increments, which the harness reports as discarded writes
    increments, total, discarded = outcome.naive
    assert total < increments and discarded > 0
    assert any("every change audited once, in the region that wrote it: True" in line for line in lines)


# Security checks -----------------------------------------------------------------------------------------------
def test_passes_aws_solutions_checks(example: Any) -> None:
    # GIVEN the app synthesized with cdk-nag's AwsSolutionsChecks THEN nothing is left unacknowledged,
    # and only the library's own acknowledgments suppress anything
    example.assert_nag_clean()


def test_template_is_cfn_lint_clean(example: Any, cfn_lint: Callable[[Path], list[str]]) -> None:
    # GIVEN the synthesized template WHEN cfn-lint checks it THEN no error and no warning
    assert cfn_lint(example.template_file(STACK)) == []
