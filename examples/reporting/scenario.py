"""Reporting scenario on DynamoDB Local: a consumer stack using the shop's table through its
published contract.

1. creates the shop's tables from ``ShopStack``'s synthesized template (the producer);
2. reads the contract the producer publishes — its ``AWS::SSM::Parameter`` resources, resolved
   against the local tables — and gives the consumer's function the values its template reads
   from SSM at deploy time (``AWS::SSM::Parameter::Value<String>`` parameters);
3. shows the consumer's only permission on the table: Query on the ``GSI2`` index ARN;
4. writes orders as the shop would (pending and paid, over two days) and invokes the consumer's
   **bundled** report handler from its ``cdk.out`` asset: pending orders by day, from ``GSI2``.
   At cold start it reads the shop's published contract (``<prefix>/contract``, served by a
   local SSM endpoint) and checks the entity and index it uses (its slice);
5. runs the same handler with no end date: "pending orders since", the pattern the reporting
   team declares on its view of the shop's committed contract file (same fingerprint as the shop's);
6. the shop publishes an additive change (a new entity, index and pattern): the consumer, not
   rebuilt, still runs;
7. the shop publishes a changed ``Order`` key template: the same handler now refuses to start with
   ``ContractBreakError`` naming ``Order`` and the template old -> new, before any request.

Run it from the repository root: ``.venv/bin/python -m examples.reporting.scenario`` (synthesizes
the app to a temporary directory, starts DynamoDB Local, runs, stops it). ``make demo`` runs it as
part of the showcase; tests call :func:`run`.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `examples` and `constructs_lib` importable
    sys.path.insert(0, str(ROOT))

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.model.slices import published_json
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.contract import fingerprint, load_bundled_model
from constructs_lib.runtime.environment import ENV_CONTRACT_PARAMETER
from constructs_lib.testing import asset_dir, deploy_assembly_stack, read_stack_template
from constructs_lib.testing.handlers import HandlerError, invoke_handler
from constructs_lib.testing.local_ssm import LocalSsm
from examples._scenario import function_id, run_standalone, show
from examples.reporting.consumer_model import SINCE

if TYPE_CHECKING:
    from constructs_lib.testing import DynamoDBLocal, LocalDeployment

PRODUCER, CONSUMER = "ShopStack", "ShopReportingStack"
HANDLER = "pending_orders.handler"
SSM_VALUE = "AWS::SSM::Parameter::Value<String>"
DAY = datetime(2024, 6, 3, 8, 0, tzinfo=UTC)


def published_parameters(producer: LocalDeployment) -> dict[str, str]:
    """SSM parameter name -> value of every ``AWS::SSM::Parameter`` the producer's template
    creates, with references to its tables resolved against the local deployment."""
    return {
        resource["Properties"]["Name"]: producer.resolve(resource["Properties"]["Value"])
        for resource in producer.template["Resources"].values()
        if resource["Type"] == "AWS::SSM::Parameter"
    }


def consumer_environment(
    template: Mapping[str, Any], function: str, published: Mapping[str, str]
) -> dict[str, str]:
    """The environment of the consumer's ``function`` as CloudFormation would deploy it: each
    variable that is a ``Ref`` to an SSM-typed template parameter gets the published value of
    the SSM parameter it names (resolved here, as the testing helpers do not read SSM)."""
    parameters = template.get("Parameters") or {}
    variables = template["Resources"][function]["Properties"]["Environment"]["Variables"]
    env = {}
    for name, value in variables.items():
        ref = value.get("Ref") if isinstance(value, Mapping) else None
        if ref is not None and parameters.get(ref, {}).get("Type") == SSM_VALUE:
            env[name] = published[parameters[ref]["Default"]]
        elif isinstance(value, str):
            env[name] = value
        else:
            raise LookupError(f"{function}: environment variable {name} = {json.dumps(value)} is not from SSM")
    return env


def run(cdk_out: Path, server: DynamoDBLocal) -> dict[str, Any]:
    """Run the scenario with ``ShopStack`` and ``ShopReportingStack`` synthesized into ``cdk_out``;
    the tables are deleted afterwards. Returns the report (the open-ended one under ``"since"``);
    raises ``AssertionError`` if anything it shows does not hold."""
    producer = deploy_assembly_stack(cdk_out, PRODUCER, client=server.client(), name_prefix="reporting-")
    try:
        return _run(cdk_out, server, producer)
    finally:
        producer.delete()


def _run(cdk_out: Path, server: DynamoDBLocal, producer: LocalDeployment) -> dict[str, Any]:
    with LocalSsm() as ssm:
        return _steps(cdk_out, server, producer, ssm)


def _steps(cdk_out: Path, server: DynamoDBLocal, producer: LocalDeployment, ssm: LocalSsm) -> dict[str, Any]:
    show("The shop's published contract (SSM parameters of ShopStack)")
    published = published_parameters(producer)
    ssm.parameters.update(published)
    for name, value in sorted(published.items()):
        print(f"{name} = {value if len(value) < 90 else value[:87] + '...'}")
    model = Model.from_json(next(v for n, v in published.items() if n.endswith("/model")))

    show("The consumer: ShopReportingStack owns no table, imports the shop's")
    template = read_stack_template(cdk_out, CONSUMER)
    fn_id = function_id(template, HANDLER)
    env = consumer_environment(template, fn_id, published)
    asset = asset_dir(cdk_out, template, fn_id)
    print(f"function {fn_id}: TABLE_NAME={env['TABLE_NAME']} (from SSM), "
          f"{ENV_CONTRACT_PARAMETER}={env[ENV_CONTRACT_PARAMETER]} (read at cold start)")
    env.update(ssm.environment)
    statements = [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
                  for s in r["Properties"]["PolicyDocument"]["Statement"] if str(s["Action"]).startswith("dynamodb:")]
    for statement in statements:
        print(f"grant: {statement['Action']} on {json.dumps(statement['Resource'])}")
    assert [s["Action"] for s in statements] == ["dynamodb:Query"], statements
    assert json.dumps(statements[0]["Resource"]).endswith('"/index/GSI2"]]}')

    show("The shop writes orders; the report reads the pending ones from GSI2")
    shop = TableClient(model, env["TABLE_NAME"], client=server.client())
    statuses = ["PENDING", "PAID", "PENDING", "PENDING", "SHIPPED", "PENDING"]
    for i, status in enumerate(statuses):
        created = DAY + timedelta(hours=10 * i)
        shop.put("Order", {"user_id": f"u{i % 2 + 1}", "order_id": f"o{i:03d}", "created_at": created,
                           "status": status})
        print(f"order o{i:03d} {created:%Y-%m-%d %H:%M} {status}")
    window = {"since": DAY.isoformat(), "until": (DAY + timedelta(days=3)).isoformat()}
    report = invoke_handler(asset, HANDLER, window, environment=env, endpoint=server.endpoint).result
    print(f"report {window['since'][:10]}..{window['until'][:10]}: {report['count']} pending, by day "
          f"{report['by_day']}")
    assert report["count"] == statuses.count("PENDING"), report
    assert [o["order_id"] for o in report["orders"]] == ["o000", "o002", "o003", "o005"], report

    show("The report's own pattern, from its view: pending orders since")
    view = load_bundled_model(asset / "model.json")
    assert view.consumer_patterns == (SINCE,) and fingerprint(view) == fingerprint(model), view.consumer_patterns
    print(f"bundled model: the shop's contract file + consumer pattern {SINCE!r}, fingerprint {fingerprint(view)} "
          "(the shop's)")
    since = (DAY + timedelta(days=1)).replace(hour=0)
    opened = invoke_handler(asset, HANDLER, {"since": since.isoformat()}, environment=env, endpoint=server.endpoint).result
    print(f"pending orders since {since:%Y-%m-%d} (the reporting team's own pattern): {opened['count']} pending, "
          f"{[o['order_id'] for o in opened['orders']]}")
    assert [o["order_id"] for o in opened["orders"]] == ["o002", "o003", "o005"], opened
    report = {**report, "since": opened}

    parameter = env[ENV_CONTRACT_PARAMETER]
    show("The shop adds an entity, an index and a pattern: the consumer, not rebuilt, keeps working")
    grown = copy.deepcopy(model.to_dict())
    grown["entities"].append(Entity("Coupon", pk="COUPON#{code}", sk="COUPON", fields={"code": Field(), "kind": Field()},
                                    indexes={"GSI9": IndexKey(pk="KIND#{kind}", sk="COUPON#{code}")}).to_dict())
    grown["indexes"].append(Index("GSI9").to_dict())
    grown["access_patterns"].append(AccessPattern("coupons by kind", "Coupon", index="GSI9").to_dict())
    ssm.parameters[parameter] = published_json(Model.from_dict(grown))
    again = invoke_handler(asset, HANDLER, window, environment=env, endpoint=server.endpoint).result
    assert again["count"] == report["count"], again
    print(f"report after the additive change: {again['count']} pending (its slice: Order, GSI2 unchanged)")

    show("The shop changes Order's sort-key template: the consumer refuses to start")
    changed = copy.deepcopy(model.to_dict())
    next(e for e in changed["entities"] if e["name"] == "Order")["sk"] = "ORDER#{order_id}#{created_at}"
    changed["access_patterns"] = [p for p in changed["access_patterns"] if p["name"] != "orders in a date range"]
    ssm.parameters[parameter] = published_json(Model.from_dict(changed))
    try:
        invoke_handler(asset, HANDLER, window, environment=env, endpoint=server.endpoint)
    except HandlerError as exc:
        line = [x for x in str(exc).splitlines() if x.startswith("constructs_lib.runtime.exceptions.")][-1]
        assert line.startswith("constructs_lib.runtime.exceptions.ContractBreakError:"), line
        assert "entity 'Order' changed: Order sk template: 'ORDER#{created_at}#{order_id}' -> " in line, line
        print(line.removeprefix("constructs_lib.runtime.exceptions."))
    else:
        raise AssertionError("the consumer ran against a contract that changed the keys it uses")
    return report


def main() -> int:
    from examples.reporting.app import build_app

    return run_standalone("reporting", build_app, run)


if __name__ == "__main__":
    raise SystemExit(main())
