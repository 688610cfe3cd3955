"""The GlobalTables harness keeps time as its documentation says, on DynamoDB Local.

- A change on a cut link (in flight, or made while it is cut) is held and sent again at
  ``heal()``: it arrives its own delay after the heal, never at the next ``advance`` for free.
- Changes of one item cross a link in the order they were made, whatever their delays.
- A TTL deletion (DynamoDB Local: eventName ``UNKNOWN_TO_SDK_VERSION``, the item's GSI keys in the
  record's ``Keys``) is replicated as a delete of the item; the other region sees a plain REMOVE.
- Step by step, the harness agrees with an independent reference: last writer wins per item,
  a delay per change and link, partitions that hold changes, heals that send them again
  (``CONSTRUCTS_LIB_SOAK=1`` runs ten times the examples).

Tables come from hand-written templates, so no test here loads the AWS CDK.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.testing import GlobalTables, StreamRunner
from constructs_lib.testing.exceptions import LocalDeployError

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 150 if SOAK else 15
EAST, WEST = "us-east-1", "eu-west-1"


def _table(*, sessions: bool = False) -> dict[str, Any]:
    """A template of one streamed table: ``PK`` only, or (``sessions``) ``PK``/``SK`` with a GSI
    and TTL on ``expires_at``."""
    keys = ["PK", "SK"] if sessions else ["PK"]
    props: dict[str, Any] = {
        "KeySchema": [{"AttributeName": k, "KeyType": t} for k, t in zip(keys, ["HASH", "RANGE"], strict=False)],
        "AttributeDefinitions": [{"AttributeName": k, "AttributeType": "S"} for k in keys],
        "BillingMode": "PAY_PER_REQUEST",
        "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
    }
    if sessions:
        props["AttributeDefinitions"] += [{"AttributeName": k, "AttributeType": "S"} for k in ("GSI1PK", "GSI1SK")]
        props["GlobalSecondaryIndexes"] = [{
            "IndexName": "GSI1", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}, {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
        }]
        props["TimeToLiveSpecification"] = {"AttributeName": "expires_at", "Enabled": True}
    return {"Resources": {"Data": {"Type": "AWS::DynamoDB::Table", "Properties": props}}}


@pytest.fixture
def harness_factory(dynamodb_local: Any, dynamodb_streams_client: Any) -> Iterator[Callable[..., GlobalTables]]:
    made: list[GlobalTables] = []

    def make(delay: Any, *, sessions: bool = False) -> GlobalTables:
        harness = GlobalTables(
            _table(sessions=sessions), regions=[EAST, WEST], tables=["Data"], streams_client=dynamodb_streams_client,
            client_factory=lambda r: boto3.client("dynamodb", **{**dynamodb_local.client_kwargs(), "region_name": r}),
            delay=delay,
        )
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.delete()


def put(h: GlobalTables, region: str, key: str, value: str) -> None:
    h.write(region, lambda: h.clients[region].put_item(
        TableName=h.table_name(region, "Data"), Item={"PK": {"S": key}, "v": {"S": value}}))


def delete(h: GlobalTables, region: str, key: str) -> None:
    h.write(region, lambda: h.clients[region].delete_item(TableName=h.table_name(region, "Data"), Key={"PK": {"S": key}}))


def values(h: GlobalTables, region: str) -> dict[str, str]:
    return {i["PK"]["S"]: i["v"]["S"] for i in h.items(region, "Data")}


# The timing rules ----------------------------------------------------------------------------------------------
def test_a_change_held_by_a_partition_arrives_its_delay_after_the_heal(harness_factory: Callable[..., GlobalTables]) -> None:
    # GIVEN a 4 s link, cut before a write in us-east-1
    h = harness_factory(4.0)
    h.partition(EAST, WEST)
    put(h, EAST, "k", "v1")
    # WHEN 10 s pass and the link heals
    assert h.advance(10) == 0 and h.pending() == 1
    h.heal()
    # THEN one second later the change is still on its way (it was delivered here before)
    assert h.advance(1) == 0 and values(h, WEST) == {} and h.pending() == 1
    # AND it arrives 4 s after the heal, not before
    assert h.advance(2.75) == 0
    assert h.advance(0.25) == 1 and values(h, WEST) == {"k": "v1"} and h.pending() == 0


def test_a_change_in_flight_when_the_link_is_cut_is_sent_again_at_the_heal(
    harness_factory: Callable[..., GlobalTables],
) -> None:
    # GIVEN a write on a 4 s link, cut 1 s later (it was due at 4 s)
    h = harness_factory(4.0)
    put(h, EAST, "k", "v1")
    h.advance(1)
    h.partition(EAST, WEST)
    # WHEN the link heals at 2 s, before the change was due
    h.advance(1)
    h.heal()
    # THEN it arrives 4 s after the heal (6 s), not at 4 s
    assert h.advance(3.75) == 0 and values(h, WEST) == {}
    assert h.advance(0.25) == 1 and values(h, WEST) == {"k": "v1"}
    # AND settle() refuses to wait on a cut link: it names the held changes and says to heal
    h.partition(EAST, WEST)
    put(h, WEST, "k", "v2")
    with pytest.raises(LocalDeployError, match=r"1 change\(s\) held by a partition on links eu-west-1->us-east-1: .*heal"):
        h.settle()
    h.heal()
    assert h.settle() == 1 and values(h, EAST) == {"k": "v2"}


def test_changes_of_one_item_cross_a_link_in_the_order_they_were_made(
    harness_factory: Callable[..., GlobalTables],
) -> None:
    # GIVEN per-change delays: the first write of an item takes 4 s, the second 0.5 s
    delays = iter([4.0, 0.5, 2.0, 0.25])
    h = harness_factory(lambda source, target, rng: next(delays))
    put(h, EAST, "k", "v1")
    put(h, EAST, "k", "v2")
    # WHEN 0.5 s pass THEN the second has not overtaken the first
    assert h.advance(0.5) == 0 and values(h, WEST) == {}
    # AND at 4 s both arrive, in order: both applied, none discarded by last-writer-wins
    assert h.advance(3.5) == 2 and values(h, WEST) == {"k": "v2"}
    assert (h.report.applied, h.report.discarded) == (2, 0)
    # AND held changes are sent again in the order they were made (2 s, then 0.25 s after the heal)
    h.partition(EAST, WEST)
    put(h, EAST, "k", "v3")
    put(h, EAST, "k", "v4")
    h.heal()
    assert h.advance(1.75) == 0
    assert h.advance(0.25) == 2 and values(h, WEST) == {"k": "v4"} and h.report.discarded == 0


# A TTL deletion ----------------------------------------------------------------------------------------------------
def test_a_ttl_deletion_is_replicated_as_a_delete_of_the_item(
    harness_factory: Callable[..., GlobalTables], dynamodb_streams_client: Any,
) -> None:
    # GIVEN a session already expired, in every GSI (DynamoDB Local expires only those), written in
    # eu-west-1: its table is the newest, so DynamoDB Local's first TTL pass (about a second after
    # the table is created) deletes it
    h = harness_factory(1.0, sessions=True)
    client, name = h.clients[WEST], h.table_name(WEST, "Data")
    key = {"PK": {"S": "SESSION#s1"}, "SK": {"S": "SESSION"}}
    client.put_item(TableName=name, Item={**key, "GSI1PK": {"S": "USER#u1"}, "GSI1SK": {"S": "SESSION#s1"},
                                          "expires_at": {"N": str(int(time.time()) - 1)}})
    deadline = time.monotonic() + 30
    while client.get_item(TableName=name, Key=key).get("Item"):
        assert time.monotonic() < deadline, "DynamoDB Local did not expire the item within 30 s"
        time.sleep(0.2)
    # WHEN the harness reads eu-west-1's stream: the put and the TTL deletion, whose Keys hold the GSI keys too
    assert h.observe(WEST) == 2
    (_, _, insert), (_, _, expiry) = h.changes
    assert (insert["eventName"], expiry["eventName"]) == ("INSERT", "REMOVE")
    assert expiry["userIdentity"]["principalId"] == "dynamodb.amazonaws.com"
    assert sorted(expiry["dynamodb"]["Keys"]) == ["GSI1PK", "GSI1SK", "PK", "SK"]
    # AND replication settles
    assert h.settle() == 2
    # THEN the session is gone in us-east-1 too: the put applied, then the delete of the same item
    assert h.items(EAST, "Data") == [] and (h.report.applied, h.report.discarded) == (2, 0)
    # AND us-east-1's stream shows a plain REMOVE of the item's key: a replicated TTL deletion carries no TTL identity
    seen: list[dict[str, Any]] = []
    StreamRunner(dynamodb_streams_client, h.deployments[EAST].stream_arn("Data"),
                 lambda event: seen.extend(event["Records"]), region=EAST).run()
    assert [r["eventName"] for r in seen] == ["INSERT", "REMOVE"]
    assert seen[1]["dynamodb"]["Keys"] == {"PK": {"S": "SESSION#s1"}, "SK": {"S": "SESSION"}}
    assert "userIdentity" not in seen[1]


# Step by step against a reference ---------------------------------------------------------------------------------
@dataclass
class _Change:
    """A change on its way from ``source`` to ``target``; ``due`` None while a cut link holds it."""

    n: int
    source: str
    target: str
    key: str
    value: str | None
    stamp: tuple[float, int]
    delay: float
    due: float | None = None
    done: bool = False


@dataclass
class Reference:
    """MREC as the harness documents it, written independently of it: last writer wins per item
    (deletes leave their stamp), each change drawn one delay per link, nothing crosses a cut link,
    a held change leaves at the heal and arrives its delay later, an item's changes in order."""

    regions: tuple[str, ...]
    delays: Iterator[float]
    now: float = 0.0
    items: dict[str, dict[str, str]] = field(default_factory=dict)
    stamps: dict[str, dict[str, tuple[float, int]]] = field(default_factory=dict)
    cut: set[frozenset[str]] = field(default_factory=set)
    changes: list[_Change] = field(default_factory=list)
    last_due: dict[tuple[str, str, str], float] = field(default_factory=dict)
    applied: int = 0
    discarded: int = 0

    def __post_init__(self) -> None:
        self.items = {r: {} for r in self.regions}
        self.stamps = {r: {} for r in self.regions}

    def write(self, region: str, key: str, value: str | None) -> None:
        if value is None and key not in self.items[region]:
            return  # deleting nothing writes no stream record: nothing to replicate
        stamp = (self.now, len(self.changes) + 1)
        self._store(region, key, value, stamp)
        for target in self.regions:
            if target != region:
                change = _Change(len(self.changes), region, target, key, value, stamp, next(self.delays))
                self.changes.append(change)
                if frozenset((region, target)) not in self.cut:
                    self._leave(change)

    def _store(self, region: str, key: str, value: str | None, stamp: tuple[float, int]) -> None:
        self.stamps[region][key] = stamp
        if value is None:
            self.items[region].pop(key, None)
        else:
            self.items[region][key] = value

    def _leave(self, change: _Change) -> None:
        route = (change.source, change.target, change.key)
        change.due = max(self.now + change.delay, self.last_due.get(route, 0.0))
        self.last_due[route] = change.due

    def partition(self, a: str, b: str) -> None:
        self.cut.add(frozenset((a, b)))
        for change in self.changes:
            if not change.done and frozenset((change.source, change.target)) == frozenset((a, b)):
                change.due = None

    def heal(self) -> None:
        self.cut.clear()
        for change in self.changes:  # in the order they were made
            if not change.done and change.due is None:
                self._leave(change)

    def advance(self, seconds: float) -> int:
        end, delivered = self.now + seconds, 0
        while True:
            due = [c for c in self.changes if not c.done and c.due is not None and c.due <= end]
            if not due:
                break
            change = min(due, key=lambda c: (c.due, c.n))
            change.done, self.now = True, max(self.now, float(change.due or 0.0))
            delivered += 1
            current = self.stamps[change.target].get(change.key)
            if current is not None and current >= change.stamp:
                self.discarded += 1
            else:
                self.applied += 1
                self._store(change.target, change.key, change.value, change.stamp)
        self.now = end
        return delivered

    def pending(self) -> int:
        return sum(not c.done for c in self.changes)


DELAYS = st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0])
WRITE = st.tuples(st.sampled_from(["put", "put", "delete"]), st.sampled_from([EAST, WEST]), st.sampled_from(["a", "b"]))
ADVANCE = st.tuples(st.just("advance"), st.sampled_from([0.25, 0.5, 1.0, 2.0, 5.0, 10.0]), st.just(""))
#: Rounds of: a cut or not, writes, a cut or not, time passing, a heal or not, time passing again
#: (a partition and a heal each find changes in flight, held or made since, often enough).
ROUNDS = st.lists(st.tuples(st.booleans(), st.lists(WRITE, min_size=1, max_size=3), st.booleans(), ADVANCE,
                            st.booleans(), ADVANCE), min_size=1, max_size=4)
CUT, HEAL = ("partition", "", ""), ("heal", "", "")


def flatten(rounds: list[tuple[bool, list[Any], bool, Any, bool, Any]]) -> list[tuple[str, Any, str]]:
    steps: list[tuple[str, Any, str]] = []
    for cut_before, writes, cut_after, first, heal, second in rounds:
        steps += [CUT] * cut_before + writes + [CUT] * cut_after + [first] + [HEAL] * heal + [second]
    return steps


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=ROUNDS, delays=st.lists(DELAYS, min_size=1, max_size=6))
def test_the_harness_agrees_with_the_reference_step_by_step(
    harness_factory: Callable[..., GlobalTables], rounds: list[Any], delays: list[float],
) -> None:
    steps = flatten(rounds)
    # GIVEN the harness and the reference, drawing the same delay for each change and link
    drawn, reference_drawn = iter(delays * 100), iter(delays * 100)
    h = harness_factory(lambda source, target, rng: next(drawn))
    ref = Reference((EAST, WEST), reference_drawn)
    # WHEN the same writes, deletes, advances, partitions and heals run on both
    for n, (kind, arg, key) in enumerate(steps):
        delivered = None
        if kind == "put":
            put(h, arg, key, f"v{n}")
            ref.write(arg, key, f"v{n}")
        elif kind == "delete":
            delete(h, arg, key)
            ref.write(arg, key, None)
        elif kind == "advance":
            delivered = (h.advance(arg), ref.advance(arg))
        elif kind == "partition":
            h.partition(EAST, WEST)
            ref.partition(EAST, WEST)
        else:
            h.heal()
            ref.heal()
        # THEN after every step each region holds what the reference holds, as much is on its way,
        # as much was delivered, applied and discarded
        where = f"after step {n} {kind} {arg} {key}"
        assert {r: values(h, r) for r in (EAST, WEST)} == ref.items, where
        assert h.pending() == ref.pending(), where
        assert delivered is None or delivered[0] == delivered[1], where
        assert (h.report.applied, h.report.discarded) == (ref.applied, ref.discarded), where
    # AND once healed and settled both regions agree with the reference and with each other
    h.heal()
    ref.heal()
    h.settle()
    while ref.pending():
        ref.advance(1.0)
    assert {r: values(h, r) for r in (EAST, WEST)} == ref.items and ref.items[EAST] == ref.items[WEST]
