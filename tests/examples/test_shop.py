"""The e-commerce example (examples/shop) as an app of its own: template shape, cdk-nag and
cfn-lint, the model docs written at synth, and the scenario end to end on DynamoDB Local.
(The access patterns, handler and patterns are tested in depth in tests/integration and tests/e2e
against the showcase app, which holds the same stack.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from examples.shop import scenario
from examples.shop.model import shop_model

STACK = "ShopStack"


@pytest.fixture(scope="module")
def shop(synth_example: Callable[[str], Any]) -> Any:
    return synth_example("examples.shop.app")


def test_stack_holds_every_construct_of_the_example(shop: Any) -> None:
    # GIVEN the example app synthesized on its own
    count = {kind: len(shop.resources(STACK, kind)) for kind in (
        "AWS::DynamoDB::GlobalTable", "AWS::Lambda::Function", "AWS::Lambda::EventSourceMapping",
        "AWS::SQS::Queue", "AWS::CloudWatch::Dashboard", "AWS::SecretsManager::Secret",
    )}
    # THEN it has the shop table and the audit table, the orders API, the aggregator and the audit
    # writer (two of them on the stream, each with a failure queue), the salt and one dashboard
    assert count == {
        "AWS::DynamoDB::GlobalTable": 2, "AWS::Lambda::Function": 3, "AWS::Lambda::EventSourceMapping": 2,
        "AWS::SQS::Queue": 2, "AWS::CloudWatch::Dashboard": 1, "AWS::SecretsManager::Secret": 1,
    }
    # AND the table has exactly the model's GSIs
    tables = shop.resources(STACK, "AWS::DynamoDB::GlobalTable")
    (table,) = [t for lid, t in tables.items() if lid.startswith("DataTable")]
    assert sorted(g["IndexName"] for g in table["Properties"]["GlobalSecondaryIndexes"]) == sorted(
        i.name for i in shop_model.gsis
    )
    # AND alarms watch it (throttles, errors, latency, and the counter's and audit's consumers)
    assert len(shop.resources(STACK, "AWS::CloudWatch::Alarm")) >= 10


def test_passes_cdk_nag_and_cfn_lint(shop: Any, cfn_lint: Callable[..., list[str]]) -> None:
    # GIVEN the example synthesized with AwsSolutionsChecks THEN nothing is left unacknowledged
    shop.assert_nag_clean()
    # AND cfn-lint reports no error and no warning
    assert cfn_lint(shop.template_file(STACK)) == []


def test_model_docs_are_written_beside_the_template(shop: Any) -> None:
    # GIVEN the cloud assembly THEN it holds the table's data-model docs, naming every access pattern
    doc = (shop.outdir / f"{STACK}.Data.model.md").read_text(encoding="utf-8")
    for pattern in shop_model.access_patterns:
        assert pattern in doc
    assert "```mermaid" in doc
    assert (shop.outdir / f"{STACK}.Data.workbench.json").is_file()


def test_scenario_runs_end_to_end(shop: Any, dynamodb_local: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the example's cloud assembly and DynamoDB Local
    # WHEN the scenario runs (it asserts each step itself: access patterns, handler, counter, audit)
    scenario.run(shop.outdir, dynamodb_local)
    out = capsys.readouterr().out
    # THEN every pattern was served and the counter and audit steps reported exact results
    assert "11 access patterns served" in out
    assert "merged read = the 2 PAID orders newest first" in out
    assert "typed: get_user -> version 1; users_orders_newest_first(limit=1) -> ['" in out  # the typed module
    assert "0 dead-lettered" in out
    # AND the retried view was one increment item, the retries duplicates, and the product's total
    # equals its exact read once the stream was aggregated
    assert "duplicate=[False, True, True]" in out
    assert "SKU-2: aggregated 334 at" in out and "exact 334, increments made 334" in out
    assert "emails in clear anywhere in the 17 audit items: 0" in out
    # AND the conditional write shipped the order once, then was refused with the stored item
    assert "mark_shipped again via handler -> ok=False" in out
    assert "ConditionNotMetError: condition (attr('status') == 'PAID') refused" in out and "status=SHIPPED" in out
