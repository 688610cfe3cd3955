"""The evolution example (examples/evolution): the StoreStack template against its lock (one GSI
step), cdk-nag and cfn-lint, and the scenario end to end — v1 items rewritten by the generated
backfill function run from its cdk.out asset, checked item by item against the v2 codec."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from examples.evolution import scenario

STACK = "StoreStack"


@pytest.fixture(scope="module")
def store(synth_example: Callable[[str], Any]) -> Any:
    return synth_example("examples.evolution.app")


def test_template_declares_the_v2_indexes_and_the_backfill_function(store: Any) -> None:
    # GIVEN the app synthesized without the lock context (the full v2 model)
    [table] = store.resources(STACK, "AWS::DynamoDB::GlobalTable").values()
    # THEN the table has the three GSIs and the backfill function is generated
    assert [g["IndexName"] for g in table["Properties"]["GlobalSecondaryIndexes"]] == ["GSI1", "GSI2", "GSI3"]
    assert store.function_id(STACK, scenario.BACKFILL_HANDLER)


def test_stack_passes_cdk_nag(store: Any) -> None:
    store.assert_nag_clean()


def test_template_is_cfn_lint_clean(store: Any, cfn_lint: Callable[[Path], list[str]]) -> None:
    assert cfn_lint(store.template_file(STACK)) == []


@pytest.mark.integration
def test_scenario_backfills_every_item_to_the_v2_codec(store: Any, dynamodb_local: Any) -> None:
    # WHEN the scenario writes v1 items and runs the generated backfill function
    lines: list[str] = []
    outcome = scenario.run(store.outdir, dynamodb_local, out=lines.append, items=400)
    # THEN every item's derived keys equal the v2 codec's, the too-long SKUs are reported, and the
    # new index now serves the old items
    assert outcome["mismatches"] == 0 and outcome["checked"] == 400 - scenario.LONG_SKU_ORDERS
    assert outcome["report"]["failed"] == scenario.LONG_SKU_ORDERS
    assert outcome["found_after"] >= 1
    assert any("step 2: create GSI 'GSI3'" in line for line in lines)
