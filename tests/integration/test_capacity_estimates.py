"""Capacity estimates (``capacity.write_estimate``/``read_estimate``) equal what DynamoDB Local
reports for the representative item they assume.

Every model with a table in ``app.py``'s assembly plus a model with local secondary indexes (the
machinery of ``test_capacity_consumed.py``: tables created from the synthesized templates, the
runtime's AWS-call seam asking each call for ``ConsumedCapacity="INDEXES"``). For every entity,
the representative item is put through the real ``TableClient`` (and read back: it is what the
estimate assumed, byte for byte), then updated, deleted, written in a transaction and in a batch:
each of the eight write kinds is compared with its estimate, table and every index. For every
pattern, its partition is filled with items of the representative item's size (same-length
values) so that one page reads exactly what the estimate assumes (checked entry by entry before
the figures are compared), and the page's report is compared with ``read_estimate``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from test_capacity_consumed import LSI_MODEL, Harness, assembly_tables, read_by, reported, table_logical_id

from constructs_lib import capacity
from constructs_lib.capacity import Capacity
from constructs_lib.model import Model
from constructs_lib.model.examples import HIGH, example_value
from constructs_lib.runtime import _aws
from constructs_lib.runtime.merged_reads import first_read_limit
from constructs_lib.runtime.values import item_size
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

MODELS = ["shop", "saas", "iot", "viral", "store", "tickets"]
#: Items per page compared (a GetItem pattern reads one).
ITEMS = 3
PAD = "zz_pad"
RESULTS: dict[str, list[str]] = {"compared": [], "not compared": []}


@pytest.fixture(scope="module")
def estimate_harnesses(shop_cdk_out: Path, synth_table_template: Callable[..., dict[str, Any]],
                       dynamodb_local: Any) -> Iterator[dict[str, Harness]]:
    from constructs_lib.testing.local_deploy import deploy_template

    client = dynamodb_local.client()
    deployments: list[LocalDeployment] = []
    out = {}
    for stack, construct_id, model in assembly_tables(shop_cdk_out):
        template = json.loads((shop_cdk_out / f"{stack}.template.json").read_text(encoding="utf-8"))
        deployment = deploy_template(template, client=client, name_prefix=f"est-{stack}-")
        deployments.append(deployment)
        out[model.name] = Harness(model, deployment.table_name(table_logical_id(template, construct_id)), client)
    deployment = deploy_template(synth_table_template(LSI_MODEL), client=client, name_prefix="est-lsi-")
    deployments.append(deployment)
    (name,) = deployment.tables.values()
    out[LSI_MODEL.name] = Harness(LSI_MODEL, name, client)
    yield out
    for d in deployments:
        d.delete()


def app_attributes(model: Model, item: Mapping[str, Any], entity: str) -> dict[str, Any]:
    """The attributes a caller passes to put ``item`` (stored form minus what the runtime adds)."""
    managed = {model.entity_attribute, model.entity(entity).version_attribute, *model.key_attributes()}
    return {k: v for k, v in item.items() if k not in managed}


def check(what: str, estimate: Capacity, response: Mapping[str, Any]) -> None:
    got = reported(response)
    assert got is not None, f"{what}: DynamoDB Local reported no ConsumedCapacity"
    want = (estimate.table, dict(estimate.global_indexes), dict(estimate.local_indexes))
    have = (got.table, dict(got.global_indexes), dict(got.local_indexes))
    assert have == want, f"{what}: estimated (table, GSIs, LSIs) {want}, DynamoDB Local reported {have}"
    RESULTS["compared"].append(what)


def other_value(value: Any) -> Any:
    """A different value of the same stored size."""
    if isinstance(value, str) and value:
        return value[:-1] + ("b" if value[-1] != "b" else "c")
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1 if value % 10 != 9 else value - 1
    raise AssertionError(f"no same-size variant of {value!r}")


@pytest.mark.parametrize("model_name", MODELS)
def test_write_estimates_equal_dynamodb_local(estimate_harnesses: dict[str, Harness], model_name: str) -> None:
    h = estimate_harnesses[model_name]
    model = h.model
    for entity in model.entities:
        # GIVEN the representative item (padded by one free attribute when it has none to update)
        rep = capacity.representative_item(model, entity)
        attr = capacity.update_attribute(model, entity)
        if attr is None:
            rep, attr = {**rep, PAD: "ab"}, PAD
        size = item_size(rep)
        item_bytes = None if attr != PAD else size
        attrs = app_attributes(model, rep, entity)
        key = {k: rep[k] for k in h.keys}
        fields = h.key_fields(entity, attrs)

        def estimate(kind: capacity.WriteKind, entity: str = entity, item_bytes: int | None = item_bytes) -> Capacity:
            return capacity.write_estimate(model, entity, kind, item_bytes=item_bytes)

        # WHEN it is put as a new item THEN the stored item is the one assumed, and the put costs the estimate
        h.table.put(entity, attrs)
        assert h.read_raw(key) == rep
        check(f"{model_name}.{entity} put", estimate("put"), h.one_call("put_item"))
        # WHEN a non-key attribute changes to a value of the same size
        h.table.update(entity, fields, set={attr: other_value(rep[attr])})
        stored = h.read_raw(key)
        assert stored is not None and item_size(stored) == size
        check(f"{model_name}.{entity} update", estimate("update"), h.one_call("update_item"))
        h.table.delete(entity, fields)
        check(f"{model_name}.{entity} delete", estimate("delete"), h.one_call("delete_item"))
        # WHEN the same writes run in transactions
        h.table.transaction().put(entity, attrs, create_only=True).commit()
        assert h.read_raw(key) == rep
        check(f"{model_name}.{entity} transaction_put", estimate("transaction_put"), h.one_call("transact_write_items"))
        h.table.transaction().update(entity, fields, set={attr: other_value(rep[attr])}).commit()
        check(f"{model_name}.{entity} transaction_update", estimate("transaction_update"),
              h.one_call("transact_write_items"))
        h.table.transaction().delete(entity, fields).commit()
        check(f"{model_name}.{entity} transaction_delete", estimate("transaction_delete"),
              h.one_call("transact_write_items"))
        # WHEN the item is put and deleted by BatchWriteItem (sent as is: the runtime refuses batches
        # of a versioned entity, DynamoDB prices them all the same)
        for kind, request in (("batch_put", {"PutRequest": {"Item": _aws.serialize(rep)}}),
                              ("batch_delete", {"DeleteRequest": {"Key": _aws.serialize(key)}})):
            response = h.raw.batch_write_item(RequestItems={h.name: [request]}, ReturnConsumedCapacity="INDEXES")
            assert not response.get("UnprocessedItems")
            check(f"{model_name}.{entity} {kind}", estimate(kind), response)  # type: ignore[arg-type]
        assert h.read_raw(key) is None


def variants(model: Model, entity: str, rep: Mapping[str, Any], fixed: set[str], count: int) -> list[dict[str, Any]]:
    """``count`` items like ``rep`` (same size), each field outside ``fixed`` changed to its ``k``-th
    same-length value."""
    resolved = model.entity(entity)
    out = []
    for k in range(count):
        attrs = app_attributes(model, rep, entity)
        for name in resolved.fields:
            spec = resolved.fields[name]
            if name in fixed or name not in attrs or spec.choices:
                continue
            if spec.kind in ("timestamp", "date", "number"):
                attrs[name] = example_value(resolved, name, 1 + k % 28)
            elif isinstance(attrs[name], str):
                attrs[name] = attrs[name][:-1] + (string.ascii_letters + string.digits)[k % 62]
        out.append(attrs)
    return out


def query_values(model: Model, name: str, rep: Mapping[str, Any]) -> dict[str, Any] | None:
    """The values of the pattern's key condition that select the representative item's partition
    and its variants (None when its condition cannot hold for them: a strict lower bound)."""
    r = model.resolved_patterns[name]
    entity = model.entity(r.entities[0])
    values = {f: rep[f] for f in (*r.pk_fields, *r.sk_fields) if f in rep}
    if r.sk in ("<", "<=") and r.sk_fields:
        values[r.sk_fields[-1]] = example_value(entity, r.sk_fields[-1], HIGH)
    elif r.sk == "between":
        last = r.sk_fields[-1]
        values[last] = (example_value(entity, last, 1), example_value(entity, last, HIGH))
    elif r.sk == ">":
        return None
    return values


@pytest.mark.parametrize("model_name", MODELS)
def test_read_estimates_equal_dynamodb_local(estimate_harnesses: dict[str, Harness], model_name: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    h = estimate_harnesses[model_name]
    model = h.model
    for name, r in model.resolved_patterns.items():
        index = r.index_name
        reps = {e: capacity.representative_item(model, e, index=index) for e in r.entities}
        first = reps[r.entities[0]]
        values = query_values(model, name, first)
        if values is None:
            RESULTS["not compared"].append(f"{model_name}: {name} (a strict lower bound the examples cannot meet)")
            continue
        # GIVEN its partition filled with items of the representative items' sizes (every shard: its share)
        per = first_read_limit(ITEMS, r.shards) if r.shards else ITEMS
        # fixed: what selects the partition (a field only in a time bucket may vary within it) and the
        # sort-key condition (a range's last field may vary: days 1..28 lie within its bounds)
        bucketed = {p.field for p in r.pk_template.placeholders if p.bucket} - {
            p.field for p in r.pk_template.placeholders if not p.bucket}
        ranged = {r.sk_fields[-1]} if r.sk in ("<", "<=", "between") and r.sk_fields else set()
        fixed = (set(r.pk_fields) - bucketed) | (set(r.sk_fields) - ranged) | {
            a for k in model.entity(r.entities[0]).indexes.values() for a in k.when_equals}
        count = (per * r.shards * 4) if r.shards else per
        for entity, rep in reps.items():
            for attrs in [app_attributes(model, rep, entity), *variants(model, entity, rep, fixed, count)]:
                h.table.put(entity, attrs)
                h.read_raw(h.table_key(entity, attrs))
        h.recorder.take()
        # WHEN one page is read (GetItem: the item; Query: ITEMS items)
        if r.operation == "GetItem":
            h.table.get(r.entities[0], consistent=True, **h.key_fields(r.entities[0], values))
            check(f"{model_name}: {name}", capacity.read_estimate(model, name, consistent=True), h.one_call("get_item"))
            continue
        h.table.query(name, values, limit=ITEMS)
        calls = h.recorder.take()
        assert len(calls) == (r.shards or 1), calls
        # THEN each Query read exactly the entries assumed: `per` entries of the representative sizes
        sizes = [capacity.read_bytes(model, r.index, item) for item in (reps[e] for e in r.entities)]
        for _, params, _ in calls:
            read = [capacity.read_bytes(model, r.index, item) for item in read_by(h, params)]
            if sorted(read) != sorted(sizes[n % len(sizes)] for n in range(per)):
                RESULTS["not compared"].append(f"{model_name}: {name} (the page read entries of sizes {read})")
                break
        else:
            # AND the page's reported units equal the estimate (a sharded page: summed over its Queries)
            total: dict[str, Any] = {"ConsumedCapacity": _summed([reported(resp) for _, _, resp in calls])}
            check(f"{model_name}: {name}", capacity.read_estimate(model, name, items=ITEMS), total)
    with capsys.disabled():
        print(f"\n[estimates] {model_name}: compared so far {len(RESULTS['compared'])}; "
              f"not compared: {RESULTS['not compared']}")


def _summed(parts: list[Capacity | None]) -> dict[str, Any]:
    total = Capacity.sum("read", (Capacity("read", p.table, p.global_indexes, p.local_indexes)
                                  for p in parts if p is not None))
    return {**total.reported()}


def test_every_pattern_and_write_was_compared(estimate_harnesses: dict[str, Harness]) -> None:
    # GIVEN the two tests above have run THEN every write kind of every entity and every pattern was
    # compared, except those listed as not comparable (each with its reason)
    models = [h.model for h in estimate_harnesses.values() if h.model.name in MODELS]
    writes = {f"{m.name}.{e} {k}" for m in models for e in m.entities for k in capacity.WRITE_KINDS}
    reads = {f"{m.name}: {p}" for m in models for p in m.resolved_patterns}
    skipped = {s.split(" (", 1)[0] for s in RESULTS["not compared"]}
    assert writes <= set(RESULTS["compared"]), sorted(writes - set(RESULTS["compared"]))
    assert reads - skipped <= set(RESULTS["compared"]), sorted(reads - skipped - set(RESULTS["compared"]))
    print(f"[estimates] {len(RESULTS['compared'])} estimates equal DynamoDB Local's ConsumedCapacity; "
          f"not compared: {RESULTS['not compared']}")
