"""Checks of the deployed showcase stacks, through their deployed functions and AWS APIs only.

Each check writes through a deployed function (Lambda Invoke) or, where a second writer is the
point, through boto3; reads the resources back with boto3 (DynamoDB, SQS, SSM, CloudFormation);
and compares with values computed here from what it wrote, never with what the library reports
about itself. Each returns one line saying what held.
"""

from __future__ import annotations

import copy
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from scripts.deploy_check.aws import Aws, CheckFailed, expect, wait_for

#: Unique per run, so nothing a check reads can come from another run.
RUN = f"{int(time.time()):x}"


def _s(item: dict[str, Any], name: str) -> str | None:
    value = item.get(name)
    return None if value is None else str(next(iter(value.values())))


def _source_key(record: dict[str, Any]) -> tuple[str, str]:
    """(PK, SK) of the item an audit record is about."""
    key = record["key"]["M"]
    return str(_s(key, "PK")), str(_s(key, "SK"))


def _total(aws: Aws, table: str, pk: str, sk: str, *, region: str | None = None) -> int | None:
    item = aws.client("dynamodb", region).get_item(TableName=table, Key={"PK": {"S": pk}, "SK": {"S": sk}},
                                                   ConsistentRead=True).get("Item")
    return None if item is None else int(item["count"]["N"])


def shop_orders(aws: Aws, state: dict[str, Any]) -> str:
    """The orders API, invoked through Lambda, places orders: the order and its lines are in the table."""
    out = aws.outputs("ShopStack")
    api, table = out["OrdersApiFunction"], out["TableName"]
    user = f"u-{RUN}"
    lines = [[{"sku": "SKU-A", "quantity": 2}], [{"sku": "SKU-B", "quantity": 1}, {"sku": "SKU-C", "quantity": 5}],
             [{"sku": "SKU-A", "quantity": 1}]]
    placed = [aws.invoke(api, {"op": "place_order", "user_id": user, "lines": order}) for order in lines]
    expect(all(p.get("ok") for p in placed), f"place_order answered {placed}")
    ids = [p["order_id"] for p in placed]
    stored = aws.query_all(TableName=table, KeyConditionExpression="PK = :pk AND begins_with(SK, :o)",
                           ExpressionAttributeValues={":pk": {"S": f"USER#{user}"}, ":o": {"S": "ORDER#"}},
                           ConsistentRead=True)
    expect(sorted(_s(i, "order_id") or "" for i in stored) == sorted(ids), f"orders of {user} in {table}: {stored}")
    expect({_s(i, "status") for i in stored} == {"PENDING"}, f"new orders not PENDING: {stored}")
    for order_id, order in zip(ids, lines, strict=True):
        items = aws.query_all(TableName=table, KeyConditionExpression="PK = :pk AND begins_with(SK, :i)",
                              ExpressionAttributeValues={":pk": {"S": f"ORDER#{order_id}"}, ":i": {"S": "ITEM#"}},
                              ConsistentRead=True)
        got = sorted((_s(i, "sku"), int(_s(i, "quantity") or 0)) for i in items)
        expect(got == sorted((line["sku"], line["quantity"]) for line in order), f"lines of {order_id}: {got}")
    listed = aws.invoke(api, {"op": "list_orders", "user_id": user})["orders"]
    expect([o["order_id"] for o in listed] == list(reversed(ids)), f"list_orders newest first: {listed}")
    state.update(user=user, orders=placed, order_keys={(str(_s(i, "PK")), str(_s(i, "SK"))) for i in stored})
    return f"{len(ids)} orders placed through {api}: orders and {sum(map(len, lines))} lines stored, listed newest first"


def shop_counter(aws: Aws, state: dict[str, Any]) -> str:
    """Increments reach the total through the real event source mapping and its filter."""
    out = aws.outputs("ShopStack")
    api, table = out["OrdersApiFunction"], out["TableName"]
    sku, views = f"SKU-{RUN}", 7
    for n in range(views):
        aws.invoke(api, {"op": "view_product", "sku": sku, "request_id": f"{RUN}-{n}"})
    again = aws.invoke(api, {"op": "view_product", "sku": sku, "request_id": f"{RUN}-0"})
    expect(again.get("duplicate") is True, f"a retried view was counted again: {again}")
    total = wait_for(f"TOTAL of product_views {sku} == {views}",
                     lambda: views if _total(aws, table, f"COUNTER#product_views#{sku}", "TOTAL") == views else None,
                     timeout=60)
    read = aws.invoke(api, {"op": "product_views", "sku": sku})
    expect(read["views"] == views, f"product_views answered {read}, expected {views}")
    state["counter_sku"] = sku
    return f"{views} views (+1 retried, not counted) -> total item {total}, CounterClient.get {read['views']}"


def shop_audit(aws: Aws, state: dict[str, Any]) -> str:
    """The audit function records the changes (emails hashed) and no counter record."""
    from constructs_lib.runtime import TableClient
    from examples.shop.model import shop_model

    out = aws.outputs("ShopStack")
    email = f"ada-{RUN}@example.com"
    shop = TableClient(shop_model, out["TableName"], client=aws.client("dynamodb"))
    shop.put("User", {"user_id": state["user"], "email": email, "name": "Ada"})
    user_key = (f"USER#{state['user']}", "PROFILE")
    expected = {user_key, *state["order_keys"]}

    def audited() -> list[dict[str, Any]] | None:
        items = aws.scan_all(out["AuditTableName"])
        return items if expected <= {_source_key(i) for i in items} else None

    items = wait_for("audit records of the user and their orders", audited, timeout=60)
    text = json.dumps(items)
    expect(email not in text, f"the email {email} is stored in clear in the audit table")
    user = [i for i in items if _source_key(i) == user_key]
    hashed = user[0]["changes"]["M"]["email"]["M"]["after"]["S"]
    expect(hashed.startswith("sha256:") and hashed != email, f"audited email: {hashed!r}")
    counters = [i for i in items if _source_key(i)[0].startswith("COUNTER#")]
    expect(not counters, f"counter items were audited: {counters[:2]}")
    return (f"{len(items)} audit records, among them the user and their {len(state['orders'])} orders; email hashed "
            f"({hashed[:15]}...), no counter record")


def reporting(aws: Aws, state: dict[str, Any]) -> str:
    """The report reads the shop's table through the SSM contract; a changed slice refuses at cold start."""
    from constructs_lib.model import Model
    from constructs_lib.model.slices import published_json

    report = aws.outputs("ShopReportingStack")["PendingOrdersFunction"]
    api = aws.outputs("ShopStack")["OrdersApiFunction"]
    ssm = aws.client("ssm")
    prefix = "/constructs-lib-showcase/shop/data"
    config = aws.client("lambda").get_function_configuration(FunctionName=report)
    expect(config["Environment"]["Variables"]["TABLE_NAME"] == aws.outputs("ShopStack")["TableName"],
           f"the report's TABLE_NAME (from SSM) is not the shop's table: {config['Environment']['Variables']}")
    parameter = config["Environment"]["Variables"]["CONSTRUCTS_LIB_CONTRACT_PARAMETER"]
    original = ssm.get_parameter(Name=parameter)["Parameter"]["Value"]
    model = Model.from_json(ssm.get_parameter(Name=f"{prefix}/model")["Parameter"]["Value"])
    changed = copy.deepcopy(model.to_dict())
    next(e for e in changed["entities"] if e["name"] == "Order")["sk"] = "ORDER#{order_id}#{created_at}"
    changed["access_patterns"] = [p for p in changed["access_patterns"] if p["name"] != "orders in a date range"]
    now = datetime.now(UTC)
    window = {"since": (now - timedelta(hours=1)).isoformat(), "until": (now + timedelta(hours=1)).isoformat()}
    paid = state["orders"][0]
    aws.invoke(api, {"op": "mark_paid", "user_id": state["user"], "created_at": paid["created_at"],
                     "order_id": paid["order_id"]})
    pending = {o["order_id"] for o in state["orders"][1:]}
    result = aws.invoke(report, window)
    mine = {o["order_id"] for o in result["orders"] if o["user_id"] == state["user"]}
    expect(mine == pending, f"pending orders of {state['user']} in the report: {mine}, expected {pending}")
    # The shop publishes Order with other keys; a new version's first invocation is a cold start.
    ssm.put_parameter(Name=parameter, Value=published_json(Model.from_dict(changed)), Overwrite=True)
    try:
        version = aws.client("lambda").publish_version(FunctionName=report)["Version"]
        refused = aws.invoke_raw(f"{report}:{version}", window)
    finally:
        ssm.put_parameter(Name=parameter, Value=original, Overwrite=True)
    expect(refused["error"] and refused["payload"].get("errorType") == "ContractBreakError"
           and "entity 'Order' changed" in refused["payload"].get("errorMessage", ""),
           f"the report ran against a contract changing Order: {refused}")
    return (f"{len(pending)} pending orders of {len(state['orders'])} (1 paid) read from GSI2 through the SSM "
            f"contract; with Order changed in {parameter}, ContractBreakError at cold start (version {version})")


def global_docs(aws: Aws, state: dict[str, Any]) -> str:
    """Written in one Region, read in the other, audited once, counted per Region."""
    out = aws.outputs("GlobalDocsStack")
    api, table = out["DocumentsApiFunction"], out["TableName"]
    home, other = out["Regions"].split(",")[:2]
    doc, title, views = f"d-{RUN}", f"Plan {RUN}", 4
    saved = aws.invoke(api, {"op": "save", "doc_id": doc, "title": title, "author": "ada"})
    expect(saved.get("ok"), f"save answered {saved}")
    replica = aws.client("dynamodb", other).get_item(TableName=table, ConsistentRead=True,
                                                     Key={"PK": {"S": f"DOC#{doc}"}, "SK": {"S": "DOC"}}).get("Item")
    expect(replica is not None and _s(replica, "title") == title and _s(replica, "_origin_region") == home,
           f"{doc} read in {other}: {replica}")
    for _ in range(views):
        aws.invoke(api, {"op": "view", "doc_id": doc})
    wait_for(f"TOTAL#{home} of doc_views {doc} == {views}",
             lambda: True if _total(aws, table, f"COUNTER#doc_views#{doc}", f"TOTAL#{home}") == views else None)
    expect(_total(aws, table, f"COUNTER#doc_views#{doc}", f"TOTAL#{other}") is None,
           f"a TOTAL#{other} exists though no function runs in {other}")
    audit = next(r["PhysicalResourceId"] for r in aws.resources("GlobalDocsStack")
                 if r["ResourceType"] == "AWS::DynamoDB::GlobalTable" and r["LogicalResourceId"].startswith("Audit"))

    def records() -> list[dict[str, Any]]:
        return [i for i in aws.scan_all(audit) if _source_key(i) == (f"DOC#{doc}", "DOC")]

    wait_for(f"the audit record of {doc}", lambda: records() or None)
    time.sleep(2)  # a second record would come with the same batch or its retry
    found = records()
    expect(len(found) == 1, f"{doc} audited {len(found)} times: {found}")
    return (f"{doc} saved in {home}, read in {other} (origin {home}); {views} views -> TOTAL#{home} {views}, "
            f"no TOTAL#{other}; audited once")


def failure_queues_empty(aws: Aws, stacks: list[str]) -> str:
    """Every failure queue of every stack is empty."""
    sqs = aws.client("sqs")
    queues = [r["PhysicalResourceId"] for stack in stacks for r in aws.resources(stack)
              if r["ResourceType"] == "AWS::SQS::Queue"]
    counts = {}
    for url in queues:
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        counts[url.rsplit("/", 1)[-1]] = sum(int(v) for v in attrs.values())
    if any(counts.values()):
        raise CheckFailed(f"failure queues hold messages: { {k: v for k, v in counts.items() if v} }")
    return f"{len(queues)} failure queues, all empty"
