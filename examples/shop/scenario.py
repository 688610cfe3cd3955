"""The e-commerce scenario on DynamoDB Local: users, products, orders, a sharded product-view
counter and an audit trail, all against tables created **from the synthesized template**.

1. creates the tables of ``ShopStack`` from its synthesized CloudFormation template;
2. loads the model from the Lambda asset's ``model.json`` (what would deploy) and drives the
   runtime ``TableClient`` — users, products and a session through the typed module generated
   from the model (``models_typed.py``: ``shop.put_user({...})``), orders untyped;
3. invokes the bundled orders API handler from its ``cdk.out`` asset directory, in a separate
   process that can only import what the asset contains;
4. runs every declared access pattern and prints the keys built and the items found;
5. shows the derived-key rules: a partial update moving an order out of the sparse GSI2,
   a conditional write (ship only a PAID order) met once then refused with the stored item,
   a filter and a projection, an optimistic-locking conflict, a create-only conflict;
6. the sharded product-view counter: concurrent increments, idempotent retries through the
   handler, then the table's real stream records fed (with the synthesized event filter) to
   the bundled aggregator, exact vs aggregated reads, and a replayed batch changing nothing;
7. the audit trail: the same stream fed to the bundled audit handler (counter items filtered
   out), a user's history newest first with diffs and actors (email hashed, never in clear),
   the day's changes through the sharded index, an item's state as of a time, and a
   redelivered batch adding nothing.

Run it from the repository root: ``.venv/bin/python -m examples.shop.scenario`` (synthesizes the
app to a temporary directory, starts DynamoDB Local, runs, stops it). ``make demo`` runs it as
part of the whole showcase; tests call :func:`run`.
"""

from __future__ import annotations

import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `examples` and `constructs_lib` importable
    sys.path.insert(0, str(ROOT))

from constructs_lib.model import AccessScope, Model
from constructs_lib.runtime import (
    AuditClient,
    ConditionNotMetError,
    CounterClient,
    ItemExistsError,
    TableClient,
    VersionConflictError,
    attr,
)
from constructs_lib.runtime.environment import ENV_ACCESS_SCOPE, ENV_AUDIT_SALT, ENV_AUDIT_SALT_SECRET
from constructs_lib.runtime.exceptions import OutOfScopeError
from constructs_lib.testing import (
    DynamoDBLocal,
    LocalDeployment,
    asset_dir,
    deploy_assembly_stack,
)
from constructs_lib.testing.handlers import LocalFunction, invoke_handler
from constructs_lib.testing.streams import StreamRunner
from examples._scenario import args_text, fmt, function_id, run_standalone, show
from examples.shop.models_typed import ShopTable

STACK = "ShopStack"
AGGREGATOR_HANDLER = "constructs_lib.runtime.handlers.counter.handler"
AUDIT_HANDLER = "constructs_lib.runtime.handlers.audit.handler"


def run(cdk_out: Path, server: DynamoDBLocal) -> None:
    """Run the scenario on ``server`` with ``ShopStack`` synthesized into ``cdk_out``; the tables
    are deleted afterwards. Raises ``AssertionError`` if anything it shows does not hold."""
    deployment = deploy_assembly_stack(cdk_out, STACK, client=server.client(), name_prefix="shop-")
    try:
        _run(cdk_out, server, deployment)
    finally:
        deployment.delete()


def _run(cdk_out: Path, server: DynamoDBLocal, deployment: LocalDeployment) -> None:
    template = deployment.template
    for logical_id, name in deployment.tables.items():
        desc = deployment.describe(logical_id)
        gsis = [g["IndexName"] for g in desc.get("GlobalSecondaryIndexes", [])]
        print(
            f"created {name} from {logical_id}: key {[k['AttributeName'] for k in desc['KeySchema']]}, GSIs {gsis}"
        )
        print(f"  not reproducible locally (recorded, not dropped): {deployment.ignored.get(logical_id, [])}")

    fn_id = function_id(template, "orders_api.")
    asset = asset_dir(cdk_out, template, fn_id)
    model = Model.from_json((asset / "model.json").read_text(encoding="utf-8"))
    env = deployment.function_environment(fn_id)
    table = TableClient(model, env["TABLE_NAME"], client=server.client())
    handler = template["Resources"][fn_id]["Properties"]["Handler"]
    print(f"model {model.name!r} v{model.to_dict()['version']} loaded from asset {asset.name}; handler {handler}")

    show("Writing users, products and a session through the typed module (models_typed.ShopTable)")
    # Generated from the model by `python -m constructs_lib codegen examples.shop.model`: a type
    # checker refuses a misspelled entity, field, pattern or value type; each call is TableClient's.
    shop = ShopTable(table)
    for user_id, email, name in (("u1", "ada@example.com", "Ada"), ("u2", "linus@example.com", "Linus")):
        shop.put_user({"user_id": user_id, "email": email, "name": name, "updated_by": "signup"}, create_only=True)
        print(f"User {user_id}: keys {table.all_keys('User', user_id=user_id, email=email)}")
    for sku, name, price in (("SKU-1", "Teapot", 2500), ("SKU-2", "Cup", 800)):
        shop.put_product({"sku": sku, "name": name, "price_cents": price})
    session = shop.put_session({"session_id": "s-1", "user_id": "u1"}, expires_in=timedelta(hours=1))
    print(f"Session s-1 expires_at={session['expires_at']} (epoch seconds, TTL attribute)")

    show("Orders: two written directly (past dates), three placed through the bundled handler")
    base = datetime(2024, 6, 1, 9, 30, tzinfo=UTC)
    for i, status in enumerate(("SHIPPED", "PAID")):
        order = {
            "user_id": "u1",
            "order_id": f"legacy-{i}",
            "created_at": base + timedelta(days=10 * i),
            "status": status,
        }
        table.put("Order", order)
        print(f"Order legacy-{i}: keys {table.all_keys('Order', **order)}")
    placed = []
    for user, lines in (
        ("u1", [{"sku": "SKU-1", "quantity": 1}]),
        ("u1", [{"sku": "SKU-2", "quantity": 4}, {"sku": "SKU-1", "quantity": 1}]),
        ("u2", [{"sku": "SKU-2", "quantity": 2}]),
    ):
        run = invoke_handler(
            asset,
            handler,
            {"op": "place_order", "user_id": user, "lines": lines},
            environment=env,
            endpoint=server.endpoint,
        )
        assert run.result["ok"] and not run.cdk_modules, run
        placed.append((user, run.result))
        print(
            f"handler place_order({user}) -> order {run.result['order_id']} ({run.duration_s:.2f} s, "
            f"no CDK modules loaded, runtime from {Path(run.package_file).parent.parent.name})"
        )
    first_user, first = placed[0]

    show("Every declared access pattern")
    last_u1 = placed[1][1]
    order_created = datetime.fromisoformat(last_u1["created_at"])
    examples: dict[str, dict[str, Any]] = {
        "user profile": {"user_id": "u1"},
        "user by email": {"email": "linus@example.com"},
        "user's orders newest first": {"user_id": "u1"},
        "orders in a date range": {"user_id": "u1", "created_at": (base, base + timedelta(days=15))},
        "user with orders": {"user_id": "u1"},
        "order by id": {"order_id": last_u1["order_id"]},
        "items of an order": {"order_id": last_u1["order_id"]},
        "pending orders by date": {"status": "PENDING", "created_at": (base, order_created + timedelta(days=1))},
        "orders by status newest first": {"status": "PENDING"},
        "product by sku": {"sku": "SKU-1"},
        "session by id": {"session_id": "s-1"},
    }
    missing = set(model.access_patterns) - set(examples)
    if missing:
        raise SystemExit(f"demo has no example for access pattern(s) {sorted(missing)}")
    for name, values in examples.items():
        resolved = model.resolved_patterns[name]
        page = table.query(name, values)
        where = resolved.index.name if resolved.index else "table"
        operation = f"{resolved.shards} Queries merged" if resolved.shards else resolved.operation
        print(f"[{operation} on {where}] {name!r}({args_text(values)}) -> {len(page)} item(s)")
        for item in page:
            print(f"    {item['_type']}: {fmt(item)}"[:150])
        assert page.items, f"access pattern {name!r} returned nothing"

    show("Derived keys: a partial update moves the order out of the sparse GSI2")
    key = {"user_id": first_user, "created_at": first["created_at"], "order_id": first["order_id"]}
    before = len(table.query("pending orders by date", examples["pending orders by date"]))
    run = invoke_handler(asset, handler, {"op": "mark_paid", **key}, environment=env, endpoint=server.endpoint)
    after = len(table.query("pending orders by date", examples["pending orders by date"]))
    print(f"mark_paid via handler -> status {run.result['order']['status']}; pending orders {before} -> {after}")
    assert after == before - 1

    show("Write-sharded GSI3: orders by status over every shard, merged newest first")
    sharded_orders = [("u1", f"legacy-{i}", base + timedelta(days=10 * i)) for i in range(2)]
    sharded_orders += [(u, r["order_id"], datetime.fromisoformat(r["created_at"])) for u, r in placed]
    for user_id, order_id, created_at in sharded_orders:
        raw = table.get("Order", raw=True, user_id=user_id, created_at=created_at, order_id=order_id)
        assert raw is not None
        print(f"  order {order_id:<26} status {raw['status']:<8} GSI3PK {raw['GSI3PK']}")
    shards = model.resolved_patterns["orders by status newest first"].shards
    run = invoke_handler(asset, handler, {"op": "orders_by_status", "status": "PAID", "limit": 1},
                         environment=env, endpoint=server.endpoint)
    merged, cursor = list(run.result["orders"]), run.result["cursor"]
    while cursor is not None:  # one order per page: the cursor resumes every shard where it stopped
        run = invoke_handler(asset, handler, {"op": "orders_by_status", "status": "PAID", "limit": 1, "cursor": cursor},
                             environment=env, endpoint=server.endpoint)
        merged += run.result["orders"]
        cursor = run.result["cursor"]
    print(f"handler orders_by_status(PAID, limit=1), page after page ({shards} Queries per page, in parallel):")
    for order in merged:
        print(f"    {order['created_at']}  {order['order_id']}")
    paid = sorted((o for o in sharded_orders if table.get("Order", user_id=o[0], created_at=o[2], order_id=o[1])
                   ["status"] == "PAID"), key=lambda o: (o[2], o[1]), reverse=True)
    assert [o["order_id"] for o in merged] == [o[1] for o in paid], merged
    print(f"merged read = the {len(paid)} PAID orders newest first, none lost or repeated across pages")

    show("Conditional writes: ship an order only if it is PAID")
    run = invoke_handler(asset, handler, {"op": "mark_shipped", **key}, environment=env, endpoint=server.endpoint)
    print(f"mark_shipped via handler -> {run.result['order']['status']}")
    again = invoke_handler(asset, handler, {"op": "mark_shipped", **key}, environment=env, endpoint=server.endpoint)
    print(f"mark_shipped again via handler -> ok={again.result['ok']}: {again.result['error']} "
          f"(stored status {again.result['status']})")
    assert run.result["ok"] and not again.result["ok"] and again.result["status"] == "SHIPPED"
    try:
        table.update("Order", key, set={"status": "SHIPPED"}, condition=attr("status") == "PAID")
    except ConditionNotMetError as exc:
        assert exc.item is not None and exc.item["status"] == "SHIPPED"
        print(f"ConditionNotMetError: condition {exc.condition!r} refused; the stored item it carries: "
              f"{fmt(exc.item)}"[:220])
    else:
        raise SystemExit("a SHIPPED order was shipped again")

    show("A filter and a projection on a declared pattern")
    paid = table.query("user's orders newest first", user_id="u1", filter=attr("status").is_in("PAID", "SHIPPED"))
    print(f"u1's orders, filter status in (PAID, SHIPPED) -> {[(o['order_id'], o['status']) for o in paid]} "
          "(the filter runs after the read: every order of u1 was read and charged)")
    slim = table.query("user's orders newest first", user_id="u1", attributes=["status"], limit=2)
    print(f"projection attributes=['status'], limit=2 -> {[fmt(o) for o in slim]} (+ key fields, parsed from the keys)")
    assert all(set(o) == {"_type", "status", "user_id", "created_at", "order_id"} for o in slim)
    assert {o["status"] for o in paid} <= {"PAID", "SHIPPED"} and len(paid) >= 2
    shipped = table.query("orders by status newest first", status="SHIPPED", filter=attr("user_id") == "u1",
                          attributes=["created_at"], limit=1)
    print(f"sharded GSI3, status SHIPPED, filter user_id == 'u1', attributes=['created_at'], limit=1 -> "
          f"{[o['order_id'] for o in shipped]} (every shard read, the filter applied to each)")
    assert len(shipped) == 1 and shipped.items[0]["user_id"] == "u1"

    show("Least privilege: the orders API's declared scope, in IAM and in its client")
    scope = AccessScope.from_json(env[ENV_ACCESS_SCOPE])
    print(f"declared: {scope.summary()}")
    role_statements = [s for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
                       and {"Ref": template["Resources"][fn_id]["Properties"]["Role"]["Fn::GetAtt"][0]}
                       in r["Properties"]["Roles"] for s in r["Properties"]["PolicyDocument"]["Statement"]]
    for s in role_statements:
        keys = s.get("Condition", {}).get("ForAllValues:StringLike", {}).get("dynamodb:LeadingKeys")
        if keys:
            only_tx = " (in transactions only)" if "StringEquals" in s["Condition"] else ""
            where = s["Resource"]["Fn::Join"][1][-1].rsplit("/", 1)[-1] if "Fn::Join" in s["Resource"] else "table"
            print(f"  IAM: {s['Action']} on {where} for {keys}{only_tx}")
    scoped = TableClient(model, env["TABLE_NAME"], client=server.client(), scope=scope)
    try:
        scoped.query("user profile", user_id="u1")
    except OutOfScopeError as exc:
        print(f"OutOfScopeError (no call made): {exc}"[:200])
    else:
        raise SystemExit("the orders API's client ran a pattern outside its declared scope")

    show("Optimistic locking and create-only writes")
    user = shop.get_user(user_id="u1")
    assert user is not None and "version" in user
    newest = shop.users_orders_newest_first(user_id="u1", limit=1).items
    print(f"typed: get_user -> version {user['version']}; users_orders_newest_first(limit=1) -> "
          f"{[o['order_id'] for o in newest]}")
    table.update("User", {"user_id": "u1"}, set={"email": "ada@new.example.com", "updated_by": "support"},
                 expected_version=user["version"])
    try:
        table.update("User", {"user_id": "u1"}, set={"name": "stale"}, expected_version=user["version"])
    except VersionConflictError as exc:
        print(f"VersionConflictError: {exc}")
    found = table.query("user by email", email="ada@new.example.com").items
    print(
        f"email changed -> GSI1 finds u1 under the new email: {bool(found)}; "
        f"old email finds {len(table.query('user by email', email='ada@example.com'))} item(s)"
    )
    try:
        table.put("User", {"user_id": "u2", "email": "x@example.com"}, create_only=True)
    except ItemExistsError as exc:
        print(f"ItemExistsError: {exc}")

    traffic_demo(server, model, env["TABLE_NAME"])
    counter_demo(server, deployment, cdk_out, asset, handler, env)
    audit_demo(server, deployment, cdk_out, model)

    show("Shop scenario done")
    print(f"{len(examples)} access patterns served, product views aggregated, changes audited")


def traffic_demo(server: DynamoDBLocal, model: Model, table_name: str) -> None:
    """Hot-partition insight: record a skewed workload and let the detector name what will throttle."""
    show("Hot-partition insight: a sampled traffic recording and the anti-pattern report")
    table = TableClient(model, table_name, client=server.client())
    recorder = table.record_traffic(sample_rate=1.0, seed=7)  # in production: 0.01 or less
    for i in range(300):  # a flash sale: most reads hit one product page
        table.get("Product", sku="SKU-1" if i % 10 else "SKU-2")
    for _ in range(5):
        table.query("user's orders newest first", user_id="u1")
    # A report that filters a whole partition instead of a key condition (read and charged, then
    # dropped), and a Scan made with the raw client the recorder wraps (the model offers none).
    table.query("user's orders newest first", user_id="u1", filter=attr("status") == "CANCELLED")
    raw = recorder.wrap(server.client())
    raw.scan(TableName=table_name, Limit=50)
    table.stop_recording()
    report = recorder.report(hot_share=0.10, min_requests=50, filter_ratio=3.0, min_scanned=3)
    for finding in report.findings:
        print(f"  {finding.kind}: {finding.recommendation}"[:200])
    kinds = {f.kind for f in report.findings}
    assert {"hot_partition", "scan", "filter_heavy_query"} <= kinds, kinds


def counter_demo(
    server: DynamoDBLocal, deployment: LocalDeployment, cdk_out: Path, api_asset: Path, api_handler: str,
    api_env: dict[str, str],
) -> None:
    """The ShardedCounter: increments spread over shards, aggregated from the real stream once each."""
    template = deployment.template
    agg_id = function_id(template, AGGREGATOR_HANDLER)
    agg_env = deployment.function_environment(agg_id)
    views = CounterClient.from_environment("product_views", environ=agg_env, client=server.client())
    show(f"Sharded counter 'product_views': {views.spec.shards} shards")
    print(f"derivation (aggregator environment): {agg_env['COUNTER_SHARDS_DERIVATION']}")

    def browse(seed: int) -> tuple[Counter[str], set[tuple[str, int]]]:
        client = CounterClient.from_environment("product_views", environ=agg_env, client=server.client())
        done: Counter[str] = Counter()
        shards: set[tuple[str, int]] = set()
        for i in range(250):
            sku = ("SKU-1", "SKU-1", "SKU-2")[(seed + i) % 3]
            shards.add((sku, client.increment(sku).shard))
            done[sku] += 1
        return done, shards

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(browse, range(4)))
    expected: Counter[str] = sum((done for done, _ in results), Counter())
    shard_items = set().union(*(shards for _, shards in results))
    print(f"4 writers x 250 increments -> {dict(expected)}; spread over {len(shard_items)} shard items "
          "(one UpdateItem ADD each, on a random shard)")

    with LocalFunction(api_asset, api_handler, environment=api_env, endpoint=server.endpoint) as api:
        replies = [api({"op": "view_product", "sku": "SKU-2", "request_id": "req-77"}) for _ in range(3)]
        expected["SKU-2"] += 1
        print(f"handler view_product(SKU-2, request_id=req-77) sent 3 times -> shard {replies[0]['shard']} each, "
              f"duplicate={[r['duplicate'] for r in replies]}: the first created the request id's increment item "
              "(one conditional PutItem), the retries were refused by it: counted once")
        assert [r["duplicate"] for r in replies] == [False, True, True]
        before = api({"op": "product_views", "sku": "SKU-1"})
        exact = views.get("SKU-1", exact=True)
        calls = -(-(views.spec.shards + 1) // 100)
        print(f"SKU-1 before aggregation: aggregated total {before['views']} (aggregated_at {before['aggregated_at']}), "
              f"exact {exact.total}: the sum of its {views.spec.shards} shards and of what its total holds besides "
              f"({calls} strongly consistent BatchGetItem call{'s' if calls > 1 else ''}; an idempotent view joins "
              "it once the aggregator has applied it)")

        agg_asset = asset_dir(cdk_out, template, agg_id)
        with LocalFunction(agg_asset, AGGREGATOR_HANDLER, environment=agg_env, endpoint=server.endpoint) as aggregator:
            events: list[dict[str, Any]] = []

            def deliver(event: dict[str, Any]) -> Any:
                events.append(event)
                return aggregator(event)

            runner = StreamRunner.from_deployment(deployment, template, handler=deliver,
                                                  streams_client=server.streams_client(), function_logical_id=agg_id)
            report = runner.run()
            print(f"stream -> bundled aggregator: {report.invocations} invocation(s), {report.delivered} counter records "
                  f"delivered, {report.filtered_out} other records kept out by the synthesized event filters, "
                  f"{report.dead_lettered} dead-lettered")
            assert report.dead_lettered == 0
            totals = {sku: views.get(sku, consistent=True) for sku in sorted(expected)}
            for sku, value in totals.items():
                exact_now = views.get(sku, exact=True).total
                print(f"  {sku}: aggregated {value.total} at {value.aggregated_at:%H:%M:%S.%f}, "
                      f"exact {exact_now}, increments made {expected[sku]}")
                assert value.total == exact_now == expected[sku]
            aggregator(events[0])
            aggregator(events[0])
            replayed = {sku: views.get(sku, consistent=True).total for sku in sorted(expected)}
            print(f"first batch delivered twice more (at-least-once): totals {replayed} — unchanged: each shard's "
                  "stream sequence numbers already applied are remembered on the total, so a record adds once")
            assert replayed == dict(sorted(expected.items()))
        after = api({"op": "product_views", "sku": "SKU-1"})
        print(f"handler product_views(SKU-1) -> {after['views']} (one GetItem of the total)")


def audit_demo(server: DynamoDBLocal, deployment: LocalDeployment, cdk_out: Path, model: Model) -> None:
    """The StreamAudit: the shop table's stream, audited by the bundled handler."""
    template = deployment.template
    fn_id = function_id(template, AUDIT_HANDLER)
    # On AWS the redaction salt is read from the construct's Secrets Manager secret; DynamoDB
    # Local has no Secrets Manager, so the demo provides one.
    env = deployment.function_environment(fn_id, overrides={ENV_AUDIT_SALT_SECRET: None, ENV_AUDIT_SALT: "demo-salt"})
    show("Audit trail: the stream fed to the bundled audit handler")
    with LocalFunction(asset_dir(cdk_out, template, fn_id), AUDIT_HANDLER, environment=env,
                       endpoint=server.endpoint) as audit_fn:
        events: list[dict[str, Any]] = []

        def deliver(event: dict[str, Any]) -> Any:
            events.append(event)
            return audit_fn(event)

        runner = StreamRunner.from_deployment(deployment, template, handler=deliver,
                                              streams_client=server.streams_client(), function_logical_id=fn_id)
        report = runner.run()
        print(f"{report.invocations} invocation(s): {report.delivered} changes audited, {report.filtered_out} counter "
              f"records kept out by the synthesized event filters, {report.dead_lettered} dead-lettered")
        audit = AuditClient.from_environment(environ=env, client=server.client())
        page = audit.history(entity="User", model=model, user_id="u1")
        print(f"history of User u1 (one Query on {audit.audit_pk({'PK': 'USER#u1', 'SK': 'PROFILE'})!r}, newest first):")
        for record in page:
            diff = ", ".join(f"{name}: {_short(c.get('before'))} -> {_short(c.get('after'))}"
                             for name, c in sorted(record.changes.items()) if name != "version")
            print(f"  {record.changed_at:%H:%M:%S} {record.event:<6} by {record.actor:<8} {diff}"[:150])
        raw = server.client().scan(TableName=audit.audit_table_name)["Items"]
        leaked = [i for i in raw if "ada@" in str(i) or "linus@" in str(i)]
        print(f"emails in clear anywhere in the {len(raw)} audit items: {len(leaked)} (hashed with a secret salt)")
        assert not leaked
        today = audit.changes(page.records[0].changed_at.date())
        kinds: Counter[str] = Counter(f"{r.entity} {r.event}" for r in today)
        print(f"changes today via the ByDay index ({audit.spec.day_shards} shards merged): {dict(sorted(kinds.items()))}")
        now = datetime.now(UTC)
        state = audit.as_of({"PK": "USER#u1", "SK": "PROFILE"}, now)
        print(f"as_of(now) of User u1: name={state['name'] if state else None}, version={state['version'] if state else None}")
        before = server.client().scan(TableName=audit.audit_table_name, Select="COUNT")["Count"]
        for event in events:
            audit_fn(event)
        after = server.client().scan(TableName=audit.audit_table_name, Select="COUNT")["Count"]
        print(f"every batch delivered again (at-least-once): audit items {before} -> {after} — keys are "
              "deterministic from the stream records, so nothing is duplicated")
        assert before == after


def _short(value: Any) -> str:
    text = "-" if value is None else str(value)
    return text if len(text) <= 24 else text[:21] + "..."


def main() -> int:
    """Synthesize the app to a temporary directory, start DynamoDB Local, run, stop."""
    from examples.shop.app import build_app

    return run_standalone("shop", build_app, run)


if __name__ == "__main__":
    raise SystemExit(main())
