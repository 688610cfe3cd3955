"""End to end: the showcase's audit trail on DynamoDB Local.

Both tables (the shop table and the audit table) are created from the synthesized template; the
bundled audit handler runs from its cdk.out asset in a warm process that can import only the
asset; the local stream runner feeds it the shop table's **real stream records** with the
synthesized mapping's filters, batch size, partial batch responses, bisect and capped retries.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from boto3.dynamodb.types import TypeSerializer

from constructs_lib.runtime import AuditClient, TableClient
from constructs_lib.runtime.environment import ENV_AUDIT_SALT, ENV_AUDIT_SALT_SECRET
from constructs_lib.testing import LocalDeployment, asset_dir
from constructs_lib.testing.handlers import Fault, LocalFunction
from constructs_lib.testing.streams import StreamRunner

pytestmark = pytest.mark.e2e

AUDIT_HANDLER = "constructs_lib.runtime.handlers.audit.handler"
EMAIL = "ada.secret@example.com"
#: Products of the many-changes test, each changed 20 times: 50 (1,000 changes, 10 batches) under
#: ``make soak`` (CONSTRUCTS_LIB_SOAK=1), 10 (200 changes, 2 batches) in ``make test``.
SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
PRODUCTS = 50 if SOAK else 10


@pytest.fixture(scope="module")
def audit_fn_id(shop_template: dict[str, Any]) -> str:
    (lid,) = [lid for lid, r in shop_template["Resources"].items()
              if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == AUDIT_HANDLER]
    return lid


@pytest.fixture
def audit_env(shop_deployment: LocalDeployment, audit_fn_id: str) -> dict[str, str]:
    """The audit function's environment, resolved to the local tables. The redaction salt comes
    from a Secrets Manager secret on AWS; DynamoDB Local has none, so the test sets the salt."""
    return shop_deployment.function_environment(audit_fn_id, overrides={ENV_AUDIT_SALT_SECRET: None, ENV_AUDIT_SALT: "test-salt"})


@pytest.fixture
def start_audit(shop_cdk_out: Path, shop_template: dict[str, Any], audit_fn_id: str, audit_env: dict[str, str],
                dynamodb_local: Any) -> Iterator[Callable[..., LocalFunction]]:
    """``start_audit(faults=())``: the bundled audit handler, warm, from its cdk.out asset."""
    started: list[LocalFunction] = []

    def start(faults: tuple[Fault, ...] = ()) -> LocalFunction:
        fn = LocalFunction(asset_dir(shop_cdk_out, shop_template, audit_fn_id), AUDIT_HANDLER,
                           environment=audit_env, endpoint=dynamodb_local.endpoint, faults=faults)
        started.append(fn)
        return fn

    yield start
    for fn in started:
        fn.close()


@pytest.fixture
def runner(shop_deployment: LocalDeployment, shop_template: dict[str, Any], audit_fn_id: str,
           dynamodb_streams_client: Any) -> Callable[..., StreamRunner]:
    def make(handler: Any, **kw: Any) -> StreamRunner:
        runner = StreamRunner.from_deployment(shop_deployment, shop_template, handler=handler,
                                              streams_client=dynamodb_streams_client, function_logical_id=audit_fn_id)
        for name, value in kw.items():
            setattr(runner, name, value)
        return runner
    return make


@pytest.fixture
def audit(audit_env: dict[str, str], dynamodb_client: Any) -> AuditClient:
    return AuditClient.from_environment(environ=audit_env, client=dynamodb_client)


def audit_items(dynamodb_client: Any, audit: AuditClient) -> list[dict[str, Any]]:
    """Every item of the audit table (a Scan is fine in a test)."""
    pages = dynamodb_client.get_paginator("scan").paginate(TableName=audit.audit_table_name, ConsistentRead=True)
    return [item for page in pages for item in page["Items"]]


def test_a_users_life_is_audited_with_kinds_diffs_actors_and_no_clear_email(
    shop_table: TableClient, start_audit: Any, runner: Any, audit: AuditClient, dynamodb_client: Any,
    bundled_model: Any,
) -> None:
    before = datetime.now(UTC) - timedelta(minutes=2)
    # GIVEN a user inserted, modified twice (by two actors) and deleted
    shop_table.put("User", {"user_id": "u1", "email": EMAIL, "name": "Ada", "updated_by": "signup"})
    shop_table.update("User", {"user_id": "u1"}, set={"name": "Ada L.", "updated_by": "alice"})
    shop_table.update("User", {"user_id": "u1"}, set={"plan": "pro", "updated_by": "bob"})
    shop_table.delete("User", {"user_id": "u1"})
    # AND one counter increment, which the synthesized filter must keep away from the function
    shop_table.client.update_item(TableName=shop_table.table_name, Key={"PK": {"S": "COUNTER#x#1#S000"}, "SK": {"S": "SHARD"}},
                                  UpdateExpression="ADD #c :one SET #t = :t",
                                  ExpressionAttributeNames={"#c": "count", "#t": "_type"},
                                  ExpressionAttributeValues={":one": {"N": "1"}, ":t": {"S": "CounterShard"}})
    # WHEN the stream is fed to the bundled audit handler
    report = runner(start_audit()).run()
    assert (report.delivered, report.filtered_out, report.dead_lettered) == (4, 1, 0)
    # THEN the user's history has 4 records, newest first, with the right kinds and actors
    page = audit.history(entity="User", model=bundled_model, user_id="u1")
    assert [r.event for r in page.records] == ["REMOVE", "MODIFY", "MODIFY", "INSERT"]
    assert [r.actor for r in page.records] == ["unknown", "bob", "alice", "signup"]
    remove, second, first, insert = page.records
    assert all(r.entity == "User" and r.key == {"PK": "USER#u1", "SK": "PROFILE"} for r in page.records)
    # AND each diff names exactly what changed, with before/after values
    assert first.changes["name"] == {"before": "Ada", "after": "Ada L."}
    assert first.changes["updated_by"] == {"before": "signup", "after": "alice"}
    assert set(first.changed) == {"name", "updated_by", "version"}
    assert second.changes["plan"] == {"after": "pro"} and "name" not in second.changed
    assert remove.image is None and "plan" in remove.changed
    # AND the email (and GSI1PK, built from it) are hashed: equal values visibly equal, never in clear
    assert insert.changes["email"]["after"].startswith("sha256:")
    assert insert.image["email"].startswith("sha256:") and insert.image["GSI1PK"].startswith("sha256:")
    assert first.image["email"] == insert.image["email"]  # same value, same hash
    stored = json.dumps(audit_items(dynamodb_client, audit))
    assert EMAIL not in stored and "ada.secret" not in stored
    # AND the state is reconstructable: before the first change nothing, after the delete nothing
    assert audit.as_of({"PK": "USER#u1", "SK": "PROFILE"}, before) is None
    assert audit.as_of({"PK": "USER#u1", "SK": "PROFILE"}, datetime.now(UTC)) is None
    # AND "what changed today" finds the four records through the sharded day index
    today = [r for r in audit.changes(insert.changed_at.date()) if r.key["PK"] == "USER#u1"]
    assert [r.event for r in today] == ["INSERT", "MODIFY", "MODIFY", "REMOVE"]


def test_as_of_returns_the_latest_image_and_redelivery_adds_nothing(
    shop_table: TableClient, start_audit: Any, runner: Any, audit: AuditClient, dynamodb_client: Any,
) -> None:
    shop_table.put("Product", {"sku": "P1", "name": "Teapot", "price_cents": 2500, "updated_by": "ops"})
    shop_table.update("Product", {"sku": "P1"}, set={"price_cents": 2700, "updated_by": "pricing"})
    fn = start_audit()
    events: list[dict[str, Any]] = []
    runner(lambda e: (events.append(e), fn(e))[1]).run()
    # THEN as_of now is the item as it is, price included
    now = audit.as_of({"PK": "PRODUCT#P1", "SK": "PRODUCT"}, datetime.now(UTC))
    assert now is not None and now["price_cents"] == 2700 and now["name"] == "Teapot"
    count = len(audit_items(dynamodb_client, audit))
    # WHEN every batch is delivered again, twice (at-least-once delivery)
    for event in events * 2:
        assert fn(event) == {"batchItemFailures": []}
    # THEN no duplicate appears: the audit keys are deterministic from the records
    assert len(audit_items(dynamodb_client, audit)) == count == 2


def test_ttl_expiry_is_audited_as_expire(
    shop_table: TableClient, start_audit: Any, runner: Any, audit: AuditClient, dynamodb_client: Any,
) -> None:
    # GIVEN a pending order whose expiry time has just passed: DynamoDB deletes it at its next sweep,
    # and DynamoDB Local's first pass over a new table comes about a second after it is created (an
    # item expiring a second later would miss that pass and wait out the next, 10 s on). The client
    # refuses an expiry in the past, so the order it would store is written with the raw client.
    # (A session would be the natural example, but DynamoDB Local 3.3.1 never expires an item that
    # is missing from one of the table's GSIs; a pending order is in both GSI1 and GSI2. DynamoDB
    # itself expires any item.)
    created = datetime.now(UTC)
    key = {"user_id": "u7", "created_at": created, "order_id": "o-ttl"}
    expired_at = int(created.timestamp()) - 1
    item = {**shop_table.mapper.build_item(shop_table.entity("Order"), {**key, "status": "PENDING"}),
            "expires_at": expired_at}
    serialize = TypeSerializer().serialize
    dynamodb_client.put_item(TableName=shop_table.table_name, Item={k: serialize(v) for k, v in item.items()})
    table_key = shop_table.keys("Order", **key)
    # WHEN DynamoDB Local's TTL deletes it (it sweeps every second or so)
    deadline = time.monotonic() + 30
    while dynamodb_client.get_item(TableName=shop_table.table_name,
                                   Key={k: {"S": v} for k, v in table_key.items()}).get("Item"):
        assert time.monotonic() < deadline, "DynamoDB Local did not expire the item within 30 s"
        time.sleep(0.5)
    # AND the stream reaches the handler in AWS's form (a REMOVE by dynamodb.amazonaws.com; the runner
    # rewrites DynamoDB Local's UNKNOWN_TO_SDK_VERSION into it, and the synthesized filter for
    # removes matches on eventName REMOVE — the handler's own mapping of the Local form is unit-tested)
    report = runner(start_audit()).run()
    assert (report.delivered, report.dead_lettered) == (2, 0)
    # THEN one EXPIRE record, by the TTL actor, written once whichever form arrived
    expire, insert = audit.history(key=table_key).records
    assert (insert.event, expire.event, expire.actor, expire.image) == ("INSERT", "EXPIRE", "ttl", None)
    assert expire.changes["expires_at"] == {"before": expired_at}


def test_a_poison_record_is_reported_stored_before_and_dead_lettered_after_capped_retries(
    shop_table: TableClient, start_audit: Any, runner: Any, audit: AuditClient,
) -> None:
    # GIVEN five products written in order; every write of the third one's audit record fails
    for n in range(5):
        shop_table.put("Product", {"sku": f"S{n}", "name": "POISON" if n == 2 else f"ok-{n}", "price_cents": n})
    poison = (Fault(operation="BatchWriteItem", contains="POISON"), Fault(operation="PutItem", contains="POISON"))
    fn = start_audit(faults=poison)
    results: list[Any] = []

    def deliver(event: dict[str, Any]) -> Any:
        results.append(fn(event))
        return results[-1]

    # WHEN the stream is processed with the synthesized mapping (5 retries, bisect, partial responses)
    poisoned = runner(deliver)
    report = poisoned.run()
    # THEN the handler reported the poison record and every later one, in order
    assert [len(r["batchItemFailures"]) for r in results][0] == 3
    # AND the records before it are stored
    stored = {n for n in range(5) if audit.history(key={"PK": f"PRODUCT#S{n}", "SK": "PRODUCT"}).records}
    assert stored == {0, 1}
    # AND after the capped retries the failed range reached the on-failure path (the poison record
    # and the two after it, whose order must not be overtaken): nothing was lost
    assert report.retries == 5 and report.dead_lettered == 3
    (letter,) = poisoned.dead_letters
    assert letter["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert [r["dynamodb"]["Keys"]["PK"]["S"] for r in letter["records"]] == ["PRODUCT#S2", "PRODUCT#S3", "PRODUCT#S4"]
    assert letter["DDBStreamBatchInfo"]["batchSize"] == 3


def test_twenty_changes_to_each_of_many_items_keep_order_and_lose_nothing(
    shop_table: TableClient, start_audit: Any, runner: Any, audit: AuditClient,
) -> None:
    # GIVEN PRODUCTS products, each written once and then updated 19 times (20 changes each)
    for n in range(PRODUCTS):
        shop_table.put("Product", {"sku": f"K{n:02d}", "name": "p", "price_cents": 0, "updated_by": "w0"})
    for step in range(1, 20):
        for n in range(PRODUCTS):
            shop_table.update("Product", {"sku": f"K{n:02d}"}, set={"price_cents": step, "updated_by": f"w{step}"})
    # WHEN the stream is audited in batches of 100
    report = runner(start_audit()).run()
    assert (report.delivered, report.dead_lettered, report.invocations) == (20 * PRODUCTS, 0, 20 * PRODUCTS // 100)
    # THEN every item has its 20 records, newest first, in the order they were made
    for n in range(PRODUCTS):
        records = audit.history(key={"PK": f"PRODUCT#K{n:02d}", "SK": "PRODUCT"}, limit=1000).records
        assert [r.actor for r in records] == [f"w{step}" for step in range(19, -1, -1)]
        assert [r.event for r in records] == ["MODIFY"] * 19 + ["INSERT"]
