"""Every function bound to a replicated table is told the table's Regions.

``CONSTRUCTS_LIB_REPLICA_REGIONS`` (home Region first) is what makes the bundled
``TableClient.from_environment()`` stamp writes with ``AWS_REGION`` (ADR 0055); without it a
Region-filtered ``StreamAudit`` would drop every change. Owned tables and tables imported through
the producer's contract file both set it; a single-Region table does not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from constructs_lib import ConstructPropsError, ShardedCounter, SingleTable, TableFunction
from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.runtime.environment import ENV_REPLICA_REGIONS

HANDLER = Path(__file__).resolve().parents[1] / "e2e" / "global_docs" / "docs_api.py"
ACCOUNT, HOME, WEST, SYDNEY = "111111111111", "eu-west-1", "us-east-1", "ap-southeast-2"
MODEL = Model("notes", entities=[Entity("Note", pk="NOTE#{note_id}", sk="NOTE", fields=["note_id"])],
              access_patterns=[AccessPattern("note by id", entity="Note", sk="=")])


def stack(name: str, region: str = HOME) -> cdk.Stack:
    return cdk.Stack(cdk.App(), name, env=cdk.Environment(account=ACCOUNT, region=region))


def function_variables(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [r["Properties"].get("Environment", {}).get("Variables", {}) for r in template["Resources"].values()
            if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("Handler") != "index.handler"]


def test_functions_on_an_owned_replicated_table_get_its_regions_home_first() -> None:
    # GIVEN a global table with a TableFunction and a ShardedCounter (its aggregator)
    s = stack("Owned")
    table = SingleTable(s, "Data", model=MODEL, replicas=[WEST, SYDNEY])
    views = ShardedCounter(s, "Views", table=table, name="views", shards=2)
    TableFunction(s, "Api", table=table, entry=HANDLER, counters=[views])
    # THEN every function of the table carries its Regions, the home Region first
    variables = function_variables(Template.from_stack(s).to_json())
    assert len(variables) == 2
    assert all(v[ENV_REPLICA_REGIONS] == f"{HOME},{WEST},{SYDNEY}" for v in variables), variables
    assert table.runtime_environment[ENV_REPLICA_REGIONS] == f"{HOME},{WEST},{SYDNEY}"


def test_a_counter_on_a_replicated_table_is_aggregated_per_region_from_its_stream() -> None:
    # GIVEN a counter family on a global table (whose stream carries new and old images)
    s = stack("Counted")
    table = SingleTable(s, "Data", model=MODEL, replicas=[WEST])
    views = ShardedCounter(s, "Views", table=table, name="views", shards=2)
    template = Template.from_stack(s).to_json()
    # THEN the family is aggregated from the stream, with per-region items
    assert (views.spec.aggregation, views.spec.regions) == ("deltas", (HOME, WEST))
    # AND its filters let through every region's shard writes (SUM#<region>, and SHARD#<region> of the
    # recompute layout) and created increment items: each region's aggregator keeps its own
    (mapping,) = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    family = {"PK": {"S": [{"prefix": "COUNTER#views#"}]}}
    assert [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]] == [
        {"dynamodb": {"Keys": {**family, "SK": {"S": [{"prefix": "SUM#"}, {"prefix": "SHARD#"}]}}}},
        {"eventName": ["INSERT"], "dynamodb": {"Keys": {**family, "SK": {"S": [{"prefix": "KEY#"}]}}}},
    ]


def test_functions_on_a_table_imported_through_its_contract_get_its_regions(tmp_path: Path) -> None:
    # GIVEN the producer's contract file of a global table, imported in a replica Region's stack
    producer = SingleTable(stack("Producer"), "Data", model=MODEL, replicas=[WEST])
    path = tmp_path / "notes.contract.json"
    path.write_text(producer.contract_json(), encoding="utf-8")
    consumer = stack("Consumer", region=WEST)
    imported = SingleTable.from_parameters(consumer, "Notes", parameter_prefix="/notes/data", contract=path)
    TableFunction(consumer, "Reader", table=imported, entry=HANDLER)
    # THEN its function is told the producer's Regions (the producer's home first)
    (variables,) = function_variables(Template.from_stack(consumer).to_json())
    assert variables[ENV_REPLICA_REGIONS] == f"{HOME},{WEST}"


def test_a_single_region_table_sets_nothing() -> None:
    # GIVEN a table without replicas THEN its functions' environment is unchanged
    s = stack("Single")
    table = SingleTable(s, "Data", model=MODEL)
    TableFunction(s, "Api", table=table, entry=HANDLER)
    (variables,) = function_variables(Template.from_stack(s).to_json())
    assert ENV_REPLICA_REGIONS not in variables
    assert ENV_REPLICA_REGIONS not in table.runtime_environment


def test_the_variable_is_reserved_and_a_function_outside_the_tables_regions_is_refused() -> None:
    s = stack("Reserved")
    table = SingleTable(s, "Data", model=MODEL, replicas=[WEST])
    # WHEN a caller sets the variable itself THEN it is refused (the construct sets it)
    with pytest.raises(ConstructPropsError, match=ENV_REPLICA_REGIONS):
        TableFunction(s, "Api", table=table, entry=HANDLER, environment={ENV_REPLICA_REGIONS: "us-east-1"})
    # WHEN a function's stack is in a Region the table is not in THEN it is refused, naming both
    elsewhere = cdk.Stack(s.node.scope, "Sydney", env=cdk.Environment(account=ACCOUNT, region=SYDNEY))
    refused = r"'ap-southeast-2' is not a Region of SingleTable 'Data' \(eu-west-1, us-east-1\)"
    with pytest.raises(ConstructPropsError, match=refused):
        TableFunction(elsewhere, "Api", table=table, entry=HANDLER)
