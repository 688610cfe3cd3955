"""The reporting example (examples/reporting): a consumer stack owning no table, importing the
shop's from its published contract with its view of the shop's committed contract file — the
committed file kept current, template shape, cdk-nag and cfn-lint, and the scenario end to end on
DynamoDB Local (the bundled handler queries GSI2 through the shop's pattern and the view's own,
then refuses a changed model)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from constructs_lib.model import AccessScope, Model
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.environment import ENV_ACCESS_SCOPE, ENV_CONTRACT_PARAMETER
from examples.reporting import scenario
from examples.reporting import stack as reporting_stack
from examples.reporting.consumer_model import CONTRACT, REFRESH, SINCE, shop_view
from examples.shop.model import shop_model
from examples.shop.stack import CONTRACT_PREFIX

CONSUMER, PRODUCER = "ShopReportingStack", "ShopStack"


@pytest.fixture(scope="module")
def reporting(synth_example: Callable[[str], Any]) -> Any:
    return synth_example("examples.reporting.app")


def test_the_committed_contract_file_is_the_shops_current_contract(reporting: Any) -> None:
    # GIVEN the contract file the shop's synth wrote (ShopStack is in the example's app) and the
    # copy the reporting example commits
    current = (reporting.outdir / f"{shop_model.name}.contract.json").read_text(encoding="utf-8")
    committed = CONTRACT.read_text(encoding="utf-8")
    # THEN they are the same file: when the shop's model changes, this fails until the copy is refreshed
    assert committed == current, (
        f"{CONTRACT.relative_to(CONTRACT.parents[3])} is stale: the shop's contract changed "
        f"(model fingerprint {fingerprint(Model.from_contract(committed))} committed, "
        f"{fingerprint(Model.from_contract(current))} now). Refresh it from the repository root with:\n    {REFRESH}"
    )
    # AND the view built from it keeps the shop's fingerprint, adding one pattern of its own
    assert fingerprint(shop_view) == fingerprint(shop_model) and shop_view.consumer_patterns == (SINCE,)
    assert reporting_stack.CONTRACT_PREFIX == CONTRACT_PREFIX


def test_consumer_owns_no_table_and_reads_the_contract_from_ssm(reporting: Any) -> None:
    # GIVEN the consumer stack synthesized beside the producer
    template = reporting.template(CONSUMER)
    kinds = sorted({r["Type"] for r in template["Resources"].values()})
    # THEN it holds one function with its log group and role, and no table
    assert kinds == ["AWS::IAM::Policy", "AWS::IAM::Role", "AWS::Lambda::Function", "AWS::Logs::LogGroup"]
    # AND it reads the name, ARN and fingerprint the producer publishes, at deploy time
    read = {p["Default"] for p in template["Parameters"].values() if p["Type"] == "AWS::SSM::Parameter::Value<String>"}
    assert {f"{CONTRACT_PREFIX}/{n}" for n in ("table-name", "table-arn")} <= read
    # AND the producer publishes exactly those (and more), with the shop model's fingerprint
    published = {r["Properties"]["Name"]: r["Properties"]["Value"] for r in reporting.template(PRODUCER)[
        "Resources"].values() if r["Type"] == "AWS::SSM::Parameter"}
    assert read - {"/cdk-bootstrap/hnb659fds/version"} <= set(published)
    assert published[f"{CONTRACT_PREFIX}/model-fingerprint"] == fingerprint(shop_model)


def test_consumer_function_queries_one_index_and_checks_the_model(reporting: Any) -> None:
    template = reporting.template(CONSUMER)
    fn_id = reporting.function_id(CONSUMER, "pending_orders.handler")
    variables = template["Resources"][fn_id]["Properties"]["Environment"]["Variables"]
    # THEN the function gets the table name from an SSM parameter, the name of the published
    # contract it checks its slice against at cold start, and its declared scope (the shop's access
    # pattern and the view's own)
    assert set(variables) == {"TABLE_NAME", ENV_CONTRACT_PARAMETER, ENV_ACCESS_SCOPE}
    scope = AccessScope.from_json(variables.pop(ENV_ACCESS_SCOPE))
    assert scope == AccessScope(patterns=["pending orders by date", SINCE])
    assert variables.pop(ENV_CONTRACT_PARAMETER) == f"{CONTRACT_PREFIX}/contract"
    assert all(template["Parameters"][v["Ref"]]["Type"].startswith("AWS::SSM::") for v in variables.values())
    # AND its only DynamoDB permission is Query on the GSI2 index ARN, for STATUS# keys
    dynamo = [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
              for s in r["Properties"]["PolicyDocument"]["Statement"] if "dynamodb" in json.dumps(s["Action"])]
    assert len(dynamo) == 1 and dynamo[0]["Action"] == "dynamodb:Query"
    assert dynamo[0]["Resource"]["Fn::Join"][1][1] == "/index/GSI2"
    assert dynamo[0]["Condition"]["ForAllValues:StringLike"] == {"dynamodb:LeadingKeys": ["STATUS#*"]}


def test_passes_cdk_nag_and_cfn_lint(reporting: Any, cfn_lint: Callable[..., list[str]]) -> None:
    # GIVEN both stacks synthesized with AwsSolutionsChecks THEN nothing is left unacknowledged
    reporting.assert_nag_clean()
    # AND cfn-lint reports no error and no warning on the consumer
    assert cfn_lint(reporting.template_file(CONSUMER)) == []


def test_scenario_runs_end_to_end(reporting: Any, dynamodb_local: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the example's cloud assembly and DynamoDB Local
    # WHEN the scenario runs (it asserts each step itself)
    report = scenario.run(reporting.outdir, dynamodb_local)
    out = capsys.readouterr().out
    # THEN the bundled handler found the four pending orders, by day, through GSI2
    assert report["by_day"] == {"2024-06-03": 1, "2024-06-04": 2, "2024-06-05": 1}
    # AND through the view's own pattern, the pending orders from the second day on
    assert [o["order_id"] for o in report["since"]["orders"]] == ["o002", "o003", "o005"]
    assert "pending orders since 2024-06-04 (the reporting team's own pattern): 3 pending" in out
    # AND after an additive change it still ran; after a changed Order template it refused, naming it
    assert "report after the additive change: 4 pending" in out
    assert "ContractBreakError: " in out and "entity 'Order' changed: Order sk template: " in out
