"""Counters and the audit trail under MREC global tables, on the multi-region harness.

Random interleavings of increments, puts, updates and deletes from 2–3 regions, random
replication delays and a partition that heals: after convergence every counter total is exact in
every region, every change is audited exactly once (in the region that wrote it), and no
region-affine shard item is lost. The same run with the naive layout (every region writing the
same shard items) loses increments — the harness detects the failure it guards against.
CONSTRUCTS_LIB_SOAK=1 runs ten times the examples.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.runtime import CounterClient, TableClient
from constructs_lib.runtime.handlers import audit as audit_handler
from constructs_lib.runtime.handlers.counter import aggregate
from constructs_lib.runtime.patterns.audit.spec import AuditSpec
from constructs_lib.runtime.patterns.counter.spec import CounterSpec
from constructs_lib.runtime.replication import Replication
from constructs_lib.testing import GlobalTables, MappingSettings, StreamRunner

pytestmark = pytest.mark.integration

EXAMPLES = 4 * (10 if os.environ.get("CONSTRUCTS_LIB_SOAK") else 1)
REGIONS = ("us-east-1", "eu-west-1", "ap-south-1")
MODEL = Model(
    "globaldocs",
    entities=[Entity("Doc", pk="DOC#{doc_id}", sk="DOC", fields={"doc_id": "string"})],
    access_patterns=[AccessPattern("doc by id", entity="Doc", sk="=")],
)


@pytest.fixture(scope="module")
def templates() -> dict[str, dict[str, Any]]:
    """One synthesized stack per region: the table (home there, replicated to the others), a
    counter family and an audit of that region."""
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk.assertions import Template

    from constructs_lib import ShardedCounter, SingleTable, StreamAudit

    out: dict[str, dict[str, Any]] = {}
    for region in REGIONS:
        app = cdk.App()
        stack = cdk.Stack(app, f"Global-{region}", env=cdk.Environment(account="000000000000", region=region))
        table = SingleTable(stack, "Data", model=MODEL, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
                            deletion_protection=False, removal_policy=cdk.RemovalPolicy.DESTROY,
                            replicas=[r for r in REGIONS if r != region])
        ShardedCounter(stack, "Views", table=table, name="views", shards=2)
        StreamAudit(stack, "Audit", source=table, exclude_entities=ShardedCounter.ENTITIES,
                    deletion_protection=False, removal_policy=cdk.RemovalPolicy.DESTROY)
        out[region] = Template.from_stack(stack).to_json()
    return out


class World:
    """The harness plus, per region, a TableClient, a CounterClient and the two stream consumers."""

    def __init__(self, harness: GlobalTables, templates: dict[str, dict[str, Any]], streams: Any,
                 regions: tuple[str, ...], counter_regions: tuple[str, ...]) -> None:
        self.harness, self.regions = harness, regions
        spec = CounterSpec(family="views", shards=2, regions=counter_regions)
        self.tables: dict[str, TableClient] = {}
        self.counters: dict[str, CounterClient] = {}
        self.consumers: list[StreamRunner] = []
        audit_spec: AuditSpec | None = None
        for region in regions:
            client, data = harness.clients[region], harness.table_name(region, "Data")
            self.tables[region] = TableClient(MODEL, data, client=client, replication=Replication(region, regions))
            counter = CounterClient(spec, data, client=client, region=region if counter_regions else None)
            self.counters[region] = counter
            tpl = templates[region]
            env = harness.function_environment(region, "AuditFunction", tpl, overrides={"CONSTRUCTS_LIB_AUDIT_SALT": "s"})
            audit_spec = AuditSpec.from_json(env["CONSTRUCTS_LIB_AUDIT"])
            audit_table = harness.table_name(region, "AuditTable")

            def write(event: dict[str, Any], *, c: Any = client, t: str = audit_table, s: AuditSpec = audit_spec,
                      src: str = data) -> dict[str, Any]:
                records = audit_handler._written_here(event["Records"])
                failed = audit_handler.write_records(c, t, s, src, records)
                return {"batchItemFailures": [{"itemIdentifier": f} for f in failed]}

            for mapping, handler in (("Audit", write), ("Views", lambda e, cc=counter: aggregate(cc, e))):
                settings_ = MappingSettings.from_template(tpl, function_logical_id=_function(tpl, mapping))
                self.consumers.append(StreamRunner(
                    streams, harness.deployments[region].stream_arn("Data"), handler, settings=settings_, region=region,
                ))

    def run_consumers(self) -> None:
        for runner in self.consumers:
            report = runner.run()
            assert not report.dead_lettered, runner.dead_letters



def _function(template: dict[str, Any], prefix: str) -> str:
    ids = [lid for lid, r in template["Resources"].items()
           if r["Type"] == "AWS::Lambda::Function" and lid.startswith(prefix)]
    assert len(ids) == 1, ids
    return ids[0]


@pytest.fixture
def world_factory(templates: dict[str, dict[str, Any]], dynamodb_local: Any,
                  dynamodb_streams_client: Any) -> Iterator[Callable[..., World]]:
    made: list[GlobalTables] = []

    def make(regions: tuple[str, ...], delays: list[float], naive: bool = False) -> World:
        delay_iter = iter(delays * 1000)
        harness = GlobalTables(
            templates[regions[0]], regions=regions, streams_client=dynamodb_streams_client, tables=["Data"],
            client_factory=lambda r: boto3.client("dynamodb", **{**dynamodb_local.client_kwargs(), "region_name": r}),
            delay=lambda a, b, rng: next(delay_iter),
        )
        made.append(harness)
        return World(harness, templates, dynamodb_streams_client, regions, () if naive else regions)

    yield make
    for harness in made:
        harness.delete()


Op = tuple[str, int, int, int]  # (kind, region index, doc/counter index, amount)
ops_strategy = st.lists(
    st.tuples(st.sampled_from(["inc", "inc", "put", "update", "delete", "tick"]), st.integers(0, 2),
              st.integers(0, 2), st.integers(1, 5)),
    min_size=4, max_size=14,
)


def play(world: World, ops: list[Op], partition_at: int) -> dict[str, int]:
    """Run ``ops``; a partition between the first two regions from op ``partition_at`` until the end."""
    h, regions = world.harness, world.regions
    expected: dict[str, int] = {}
    for n, (kind, r, i, amount) in enumerate(ops):
        region = regions[r % len(regions)]
        if n == partition_at:
            h.partition(regions[0], regions[1])
        doc = f"d{i}"
        if kind == "inc":
            world.counters[region].increment(f"c{i}", by=amount)
            h.observe(region)  # its write timestamp is now
            expected[f"c{i}"] = expected.get(f"c{i}", 0) + amount
        elif kind == "put":
            world.tables[region].put("Doc", {"doc_id": doc, "title": f"t{n}"})
            h.observe(region)  # its write timestamp is now
        elif kind == "update":
            world.tables[region].update("Doc", {"doc_id": doc}, set={"title": f"u{n}"}, must_exist=False)
            h.observe(region)
        elif kind == "delete":
            world.tables[region].delete("Doc", {"doc_id": doc})
            h.observe(region)  # its write timestamp is now
        else:
            h.advance(amount * 0.2)
        world.run_consumers()
    h.heal()
    h.settle()
    world.run_consumers()
    h.settle()  # each region's total is an item too (TOTAL#<region>): a read sums every region's
    return expected


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops_strategy, three=st.booleans(), delays=st.lists(st.floats(0.0, 2.0), min_size=1, max_size=5),
       partition_at=st.integers(0, 14))
def test_counters_and_audit_converge_exactly_under_mrec(
    world_factory: Callable[..., World], ops: list[Op], three: bool, delays: list[float], partition_at: int
) -> None:
    # GIVEN 2 or 3 regions with random replication delays and a partition that heals
    world = world_factory(REGIONS if three else REGIONS[:2], delays)
    # WHEN the operations run and replication converges
    expected = play(world, ops, partition_at)
    # THEN every region reads every counter exactly (its own aggregated total and the exact sum)
    for region in world.regions:
        for counter_id, total in expected.items():
            assert world.counters[region].get(counter_id, exact=True).total == total
            assert world.counters[region].get(counter_id).total == total, (region, counter_id)
    # AND no region-affine shard item was lost: each region holds every region's shards
    shard_sets = {r: {(i["PK"]["S"], i["SK"]["S"]) for i in world.harness.items(r, "Data") if i["SK"]["S"].startswith("SUM#")}
                  for r in world.regions}
    assert len({frozenset(s) for s in shard_sets.values()}) == 1
    assert all(shard_sets.values()) or not expected
    # AND every Doc change is audited exactly once, in the region that wrote it
    assert audited_per_region(world) == doc_changes_per_region(world)


def doc_changes_per_region(world: World) -> dict[str, int]:
    """Doc changes each region's application made (its delete stamps are half of a delete, not a change)."""
    counts = dict.fromkeys(world.regions, 0)
    for region, _, record in world.harness.changes:
        ddb = record["dynamodb"]
        if not ddb["Keys"]["PK"]["S"].startswith("DOC#"):
            continue
        if record["eventName"] == "MODIFY" and "_deleted_in" in ddb.get("NewImage", {}):
            continue
        counts[region] += 1
    return counts


def audited_per_region(world: World) -> dict[str, int]:
    return {r: len(world.harness.items(r, "AuditTable")) for r in world.regions}


def test_the_naive_layout_loses_increments_and_the_harness_shows_it(world_factory: Callable[..., World]) -> None:
    # GIVEN two regions whose counters write the SAME shard items (no region in the sort key)
    world = world_factory(REGIONS[:2], [1.0], naive=True)
    east, west = world.counters["us-east-1"], world.counters["eu-west-1"]
    east.shard_for = west.shard_for = lambda counter_id, idempotency_key=None: 0  # type: ignore[method-assign]
    # WHEN both regions add to the same counter before either write has replicated
    world.harness.write("us-east-1", lambda: east.increment("c0", by=1))
    world.harness.write("eu-west-1", lambda: west.increment("c0", by=2))
    world.harness.settle()
    world.run_consumers()
    # THEN last-writer-wins kept one region's item: the other increment is lost everywhere
    totals = {r: world.counters[r].get("c0", exact=True).total for r in world.regions}
    assert totals == {"us-east-1": 2, "eu-west-1": 2}, totals
    assert world.harness.report.discarded == 1


def test_region_affine_shards_keep_both_increments(world_factory: Callable[..., World]) -> None:
    # GIVEN the same race with the region in the shard's sort key
    world = world_factory(REGIONS[:2], [1.0])
    east, west = world.counters["us-east-1"], world.counters["eu-west-1"]
    east.shard_for = west.shard_for = lambda counter_id, idempotency_key=None: 0  # type: ignore[method-assign]
    world.harness.write("us-east-1", lambda: east.increment("c0", by=1))
    world.harness.write("eu-west-1", lambda: west.increment("c0", by=2))
    world.harness.settle()
    world.run_consumers()
    world.harness.settle()  # each region's total (TOTAL#<region>) reaches the other: a read sums them
    # THEN both survive, and each region's aggregated total is exact
    assert {r: world.counters[r].get("c0").total for r in world.regions} == {"us-east-1": 3, "eu-west-1": 3}
