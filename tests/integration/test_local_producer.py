"""A consumer's tests run its functions as deployed with only the producer's contract file: the
``local_producer`` fixture creates the table from the file and serves the SSM parameters the
producer's ``ModelContract`` publishes (the same names and values as the producer's own template),
so a function of the consumer's assembly gets its table, its declared scope and the contract it
checks at cold start — and refuses a changed contract published later."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.constructs.model_contract import PARAMETERS
from constructs_lib.model import AccessScope, Model
from constructs_lib.model.contract_file import build_contract, contract_json
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.environment import ENV_ACCESS_SCOPE, ENV_CONTRACT_PARAMETER
from constructs_lib.testing import HandlerError, LocalDeployError, LocalProducer, contract_deploy
from examples.reporting.consumer_model import SINCE
from examples.shop.stack import CONTRACT_PREFIX

pytestmark = pytest.mark.integration

CONSUMER, PRODUCER, REPORT, HANDLER = "ShopReportingStack", "ShopStack", "PendingOrdersReport", "pending_orders.handler"
DAY = datetime(2024, 6, 3, 8, 0, tzinfo=UTC)


def test_it_publishes_what_the_producers_stack_publishes(
    shop_cdk_out: Path, shop_template: dict[str, Any], local_producer: Callable[..., LocalProducer]
) -> None:
    # GIVEN the shop's contract file, and the SSM parameters the shop's own stack creates
    stack = {r["Properties"]["Name"]: r["Properties"]["Value"] for r in shop_template["Resources"].values()
             if r["Type"] == "AWS::SSM::Parameter"}
    # WHEN a consumer's test makes the producer from the file alone
    shop = local_producer(shop_cdk_out / "shop.contract.json", parameter_prefix=CONTRACT_PREFIX)
    # THEN it serves the parameters the stack creates, under the same names
    assert sorted(shop.ssm.parameters) == sorted(stack)
    # AND with the same values, the table's name and ARNs being the local table's
    for name in ("model-fingerprint", "model", "contract"):
        assert shop.ssm.parameters[f"{CONTRACT_PREFIX}/{name}"] == stack[f"{CONTRACT_PREFIX}/{name}"], name
    assert shop.ssm.parameters[f"{CONTRACT_PREFIX}/table-name"] == shop.name
    assert shop.ssm.parameters[f"{CONTRACT_PREFIX}/table-arn"].endswith(f":table/{shop.name}")
    assert shop.ssm.parameters[f"{CONTRACT_PREFIX}/stream-arn"] == shop.table.stream
    # (the names it knows without importing the CDK are the construct's)
    assert {contract_deploy.TABLE_NAME, contract_deploy.TABLE_ARN, contract_deploy.STREAM_ARN,
            contract_deploy.MODEL_FINGERPRINT, contract_deploy.MODEL_JSON, contract_deploy.CONTRACT} <= set(PARAMETERS)


def test_a_consumer_function_runs_as_deployed_and_refuses_a_changed_contract(
    shop_cdk_out: Path, tmp_path: Path, local_producer: Callable[..., LocalProducer],
    local_function: Callable[..., Any], dynamodb_client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the producer made from the contract file the consumer commits (named relative to the
    # project, the directory of this repository's cdk.json, from another working directory), with
    # three orders
    monkeypatch.chdir(tmp_path)
    contract = "examples/reporting/contracts/shop.contract.json"
    shop = local_producer(contract, parameter_prefix=CONTRACT_PREFIX, name_prefix="consumer-")
    table = TableClient(shop.model, shop.name, client=dynamodb_client)
    for number, status in enumerate(["PENDING", "PAID", "PENDING"]):
        table.put("Order", {"user_id": "u1", "order_id": f"o{number}", "status": status,
                            "created_at": DAY + timedelta(days=number)})
    # WHEN the consumer's function gets its environment from the consumer's assembly alone
    env = shop.function_environment(shop_cdk_out, REPORT, stack=CONSUMER)
    # THEN it is the deployed one: this table, the declared scope, the contract checked at cold start
    assert env["TABLE_NAME"] == shop.name and env[ENV_CONTRACT_PARAMETER] == f"{CONTRACT_PREFIX}/contract"
    assert AccessScope.from_json(env[ENV_ACCESS_SCOPE]) == AccessScope(patterns=["pending orders by date", SINCE])
    # AND the bundled handler answers, having read the published contract once, at cold start
    report = local_function(shop_cdk_out / _asset(shop_cdk_out), HANDLER, environment=env)
    assert [o["order_id"] for o in report({"since": "2024-06-01T00:00:00Z"})["orders"]] == ["o0", "o2"]
    assert shop.ssm.requests == [("GetParameter", f"{CONTRACT_PREFIX}/contract")]
    # WHEN the producer publishes a contract changing Order's sort key, and the function starts again
    changed = copy.deepcopy(shop.model.to_dict())
    next(e for e in changed["entities"] if e["name"] == "Order")["sk"] = "ORDER#{order_id}#{created_at}"
    changed["access_patterns"] = [p for p in changed["access_patterns"] if p["name"] != "orders in a date range"]
    (tmp_path / "changed.contract.json").write_text(contract_json(build_contract(Model.from_dict(changed))),
                                                    encoding="utf-8")
    assert shop.publish(tmp_path / "changed.contract.json").model.name == "shop"
    again = local_function(shop_cdk_out / _asset(shop_cdk_out), HANDLER, environment=env)
    # THEN it refuses before any request, naming the entity
    with pytest.raises(HandlerError, match=r"ContractBreakError.*entity 'Order' changed"):
        again({"since": "2024-06-01T00:00:00Z"})
    # AND a bad prefix is a typed error naming it
    with pytest.raises(LocalDeployError, match=r"parameter_prefix 'shop/data/' must be a path"):
        local_producer(contract, parameter_prefix="shop/data/")


def _asset(cdk_out: Path) -> str:
    """The reporting function's asset directory (relative to the assembly)."""
    template = json.loads((cdk_out / f"{CONSUMER}.template.json").read_text(encoding="utf-8"))
    (function,) = [r for lid, r in template["Resources"].items()
                   if r["Type"] == "AWS::Lambda::Function" and lid.startswith(REPORT)]
    return str(function["Metadata"]["aws:asset:path"])
