"""A local stand-in for DynamoDB global tables in multi-Region eventual consistency (MREC).

:class:`GlobalTables` deploys a template once per region into one DynamoDB Local (tables told
apart by name) and replicates the chosen tables as MREC does: each local change read from a
region's stream is applied in the other regions after the link's delay, only if its write
timestamp is later than the item's (last writer wins, deletes included), so it shows on their
streams too; a TTL deletion is replicated like a delete. Changes of one item cross a link in the
order they were made. Links can be partitioned until healed: a change on a cut link (in flight
or made while it is cut) is held, and sent again when the link heals, arriving its own delay
later. Time is virtual (:meth:`advance`, :meth:`settle`).
Fidelity: docs/patterns/global-tables.md and docs/adr/0055-patterns-under-global-tables.md.
"""

from __future__ import annotations

import base64
import heapq
import itertools
import json
import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .exceptions import LocalDeployError
from .local_deploy import LocalDeployment, deploy_template
from .streams import _TTL_EVENT_NAME, MappingSettings, StreamRunner

__all__ = ["GlobalTables", "Replicated"]

Key = tuple[tuple[str, str], ...]
Delay = float | Callable[[str, str, random.Random], float]


@dataclass(order=True)
class _Message:
    deliver_at: float
    seq: int
    source: str = field(compare=False)
    target: str = field(compare=False)
    table: str = field(compare=False)
    key: Key = field(compare=False)
    image: dict[str, Any] | None = field(compare=False)  # wire format; None: a delete
    stamp: tuple[float, str] = field(compare=False)
    delay: float = field(compare=False, default=0.0)  # its trip on the link, drawn when it was made

    @property
    def route(self) -> tuple[str, str, str, Key]:
        """(source, target, table, key): the changes that must arrive in the order they were made."""
        return self.source, self.target, self.table, self.key


@dataclass
class Replicated:
    """What the replicator did (for assertions and reports)."""

    sent: int = 0  #: local changes queued to another region
    applied: int = 0  #: replicated changes written (they won last-writer-wins)
    discarded: int = 0  #: replicated changes that lost last-writer-wins (an item written later was there)
    local_changes: int = 0  #: local changes seen on the streams


def _wire(value: Any) -> Any:
    """A Lambda-format typed value back to the boto3 wire format (base64 binaries decoded)."""
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for kind, inner in value.items():
        if kind == "B":
            out[kind] = base64.b64decode(inner)
        elif kind == "BS":
            out[kind] = [base64.b64decode(v) for v in inner]
        elif kind == "M":
            out[kind] = {k: _wire(v) for k, v in inner.items()}
        elif kind == "L":
            out[kind] = [_wire(v) for v in inner]
        else:
            out[kind] = inner
    return out


def _key(keys: Mapping[str, Any]) -> Key:
    return tuple(sorted((name, json.dumps(value, sort_keys=True)) for name, value in keys.items()))


class GlobalTables:
    """Replicas of a template's tables in several regions, replicated with MREC semantics.

    Parameters
    ----------
    template : Mapping or path
        The synthesized template (as for :func:`deploy_template`), deployed once per region.
    regions : sequence of str
        Two or more region names, e.g. ``["us-east-1", "eu-west-1"]``.
    client_factory : Callable[[str], client]
        Returns a ``dynamodb`` client for a region, pointed at DynamoDB Local (e.g.
        ``lambda r: boto3.client("dynamodb", **{**local.client_kwargs(), "region_name": r})``).
    streams_client : botocore client
        A ``dynamodbstreams`` client of the same DynamoDB Local.
    tables : sequence of str
        Logical ids (or unique prefixes) of the replicated tables; their streams must be
        ``NEW_AND_OLD_IMAGES`` or ``NEW_IMAGE`` with old images not needed. Others stay regional.
    delay : float or Callable[[source, target, rng], float]
        Seconds of virtual time between a change and its arrival in another region (drawn once
        per change and link; a change never overtakes an earlier change of the same item on the
        same link). Default 0.5.
    clock_skew : Mapping[str, float]
        Seconds added to a region's write timestamps (clocks that disagree). Default none.
    seed : int
        Seed of the random source handed to ``delay``. Default 0.
    """

    def __init__(
        self, template: Mapping[str, Any] | str | os.PathLike[str], *, regions: Sequence[str],
        client_factory: Callable[[str], Any], streams_client: Any, tables: Sequence[str],
        delay: Delay = 0.5, clock_skew: Mapping[str, float] | None = None, seed: int = 0,
    ) -> None:
        regions = list(regions)
        if len(regions) < 2 or len(set(regions)) != len(regions):
            raise LocalDeployError(f"regions {regions!r} must be two or more distinct names")
        self.regions = regions
        self.now = 0.0
        self.delay = delay
        self.clock_skew = dict(clock_skew or {})
        self.rng = random.Random(seed)
        self.report = Replicated()
        #: Every local change seen, in order: (region, table logical id, Lambda-format stream record).
        self.changes: list[tuple[str, str, dict[str, Any]]] = []
        self._streams = streams_client
        self._queue: list[_Message] = []
        #: Changes on cut links, in the order they were made (sent again by :meth:`heal`).
        self._held: list[_Message] = []
        #: (source, target, table, key) -> when its latest change is due there: no change overtakes it.
        self._due: dict[tuple[str, str, str, Key], float] = {}
        self._seq = itertools.count()
        self._tick = itertools.count(1)
        self._down: set[frozenset[str]] = set()
        #: Region -> its deployment (table names differ per region).
        self.deployments: dict[str, LocalDeployment] = {}
        self.clients: dict[str, Any] = {}
        try:
            for region in regions:
                client = client_factory(region)
                self.clients[region] = client
                self.deployments[region] = deploy_template(template, client=client, name_prefix=f"{region}-")
            self.replicated = [self.deployments[regions[0]].logical_id(t) for t in tables]
            # table logical id -> its key attributes: a TTL deletion's Keys on DynamoDB Local also
            # hold the item's GSI keys, which are not part of the item's identity
            first = self.deployments[regions[0]]
            self._key_attributes = {
                lid: frozenset(k["AttributeName"] for k in self.clients[regions[0]].describe_table(
                    TableName=first.tables[lid])["Table"]["KeySchema"])
                for lid in self.replicated
            }
        except Exception:
            self.delete()
            raise
        # region -> table logical id -> (stream reader, records it collected)
        self._readers: dict[str, dict[str, tuple[StreamRunner, list[dict[str, Any]]]]] = {}
        # region -> (table, key) -> (write timestamp, writing region) of the item there (tombstones kept)
        self._stamps: dict[str, dict[tuple[str, Key], tuple[float, str]]] = {r: {} for r in regions}
        for region in regions:
            self._readers[region] = {}
            for lid in self.replicated:
                sink: list[dict[str, Any]] = []
                runner = self._reader(region, lid, sink)
                self._readers[region][lid] = (runner, sink)

    def _reader(self, region: str, lid: str, sink: list[dict[str, Any]]) -> StreamRunner:
        def collect(event: dict[str, Any]) -> None:
            sink.extend(event["Records"])

        return StreamRunner(
            self._streams, self.deployments[region].stream_arn(lid), collect,
            settings=MappingSettings(batch_size=1000), region=region,
        )

    # Lookups ---------------------------------------------------------------------------------------
    def table_name(self, region: str, logical_id_or_prefix: str) -> str:
        """The physical name of a table in ``region``."""
        return self.deployments[region].table_name(logical_id_or_prefix)

    def function_environment(self, region: str, function: str, template: Any = None, **kw: Any) -> dict[str, str]:
        """A function's resolved environment as deployed in ``region``, with ``AWS_REGION`` set."""
        env = self.deployments[region].function_environment(function, template, **kw)
        env["AWS_REGION"] = region
        return env

    # Links -------------------------------------------------------------------------------------------
    def partition(self, a: str, b: str) -> None:
        """Cut the link between regions ``a`` and ``b``: nothing crosses it until :meth:`heal`.
        Changes on their way across it are held, and so is every change made while it is cut."""
        link = frozenset((a, b))
        self._down.add(link)
        cut = [m for m in self._queue if frozenset((m.source, m.target)) == link]
        if cut:
            self._queue = [m for m in self._queue if frozenset((m.source, m.target)) != link]
            heapq.heapify(self._queue)
            self._held = sorted([*self._held, *cut], key=lambda m: m.seq)

    def heal(self, a: str | None = None, b: str | None = None) -> None:
        """Restore the link between ``a`` and ``b`` (all links when both are None). Each change
        it held is sent again now and arrives its own delay later, the changes of one item in
        the order they were made."""
        if a is None and b is None:
            self._down.clear()
        else:
            self._down.discard(frozenset((str(a), str(b))))
        held, self._held = self._held, []
        for msg in held:  # in the order they were made
            if self._link_up(msg.source, msg.target):
                self._send(msg)
            else:
                self._held.append(msg)

    def _link_up(self, a: str, b: str) -> bool:
        return frozenset((a, b)) not in self._down

    # Observing local writes -------------------------------------------------------------------------
    def observe(self, region: str | None = None) -> int:
        """Read the new stream records of ``region`` (every region when None): the changes not
        written by the replicator are local writes, stamped with the current time and queued to
        the other regions. Returns how many local changes were found. Call it right after a
        write to give the write its own timestamp (:meth:`write` does)."""
        found = 0
        for r in [region] if region is not None else self.regions:
            for lid, (runner, sink) in self._readers[r].items():
                sink.clear()
                runner.run()
                for record in sink:
                    found += 1
                    self._local_change(r, lid, record)
                sink.clear()
        return found

    def write(self, region: str, call: Callable[[], Any]) -> Any:
        """Run ``call`` (a write to ``region``'s replica) and observe it at once, so its write
        timestamp is now (each write gets its own)."""
        result = call()
        self.observe(region)
        return result

    def _stamp(self, region: str) -> tuple[float, str]:
        # now, made unique and ordered by a tick; a skewed clock shifts it
        return (self.now + self.clock_skew.get(region, 0.0) + next(self._tick) * 1e-9, region)

    def _local_change(self, region: str, lid: str, record: Mapping[str, Any]) -> None:
        ddb = record["dynamodb"]
        key = _key({k: v for k, v in ddb["Keys"].items() if k in self._key_attributes[lid]})
        removed = record["eventName"] in ("REMOVE", _TTL_EVENT_NAME)  # a TTL deletion, as AWS or DynamoDB Local name it
        image = None if removed else {k: _wire(v) for k, v in ddb["NewImage"].items()}
        stamp = self._stamp(region)
        self._stamps[region][(lid, key)] = (stamp[0], region)
        self.report.local_changes += 1
        self.changes.append((region, lid, dict(record)))
        for target in self.regions:
            if target == region:
                continue
            d = self.delay(region, target, self.rng) if callable(self.delay) else float(self.delay)
            msg = _Message(0.0, next(self._seq), region, target, lid, key, image, (stamp[0], region), max(0.0, d))
            if self._link_up(region, target):
                self._send(msg)
            else:
                self._held.append(msg)
            self.report.sent += 1

    def _send(self, msg: _Message) -> None:
        """Put ``msg`` on its link now: due its delay later, and not before the item's previous change."""
        msg.deliver_at = max(self.now + msg.delay, self._due.get(msg.route, 0.0))
        self._due[msg.route] = msg.deliver_at
        heapq.heappush(self._queue, msg)

    # Replication -------------------------------------------------------------------------------------
    def _apply(self, msg: _Message) -> None:
        self.observe(msg.target)  # local writes made before this arrival keep their own timestamps
        current = self._stamps[msg.target].get((msg.table, msg.key))
        if current is not None and current >= msg.stamp:
            self.report.discarded += 1
            return
        client = self.clients[msg.target]
        name = self.deployments[msg.target].tables[msg.table]
        if msg.image is None:
            client.delete_item(TableName=name, Key={k: json.loads(v) for k, v in msg.key})
        else:
            client.put_item(TableName=name, Item=msg.image)
        self._stamps[msg.target][(msg.table, msg.key)] = msg.stamp
        self.report.applied += 1
        for _, sink in self._readers[msg.target].values():
            sink.clear()
        for runner, sink in self._readers[msg.target].values():  # its own stream record: not a local change
            runner.run()
            sink.clear()

    def pending(self) -> int:
        """Changes sent but not yet applied or discarded (those held by a partition included)."""
        return len(self._queue) + len(self._held)

    def advance(self, seconds: float) -> int:
        """Move virtual time forward by ``seconds``, delivering every change due on a link that
        is up; returns how many were delivered."""
        if seconds < 0:
            raise LocalDeployError(f"advance({seconds!r}): time only moves forward")
        self.observe()
        end = self.now + seconds
        delivered = 0
        while self._queue and self._queue[0].deliver_at <= end:  # only live links have changes queued
            msg = heapq.heappop(self._queue)
            self.now = max(self.now, msg.deliver_at)
            self._apply(msg)
            delivered += 1
        self.now = end
        return delivered

    def settle(self, max_seconds: float = 3600.0) -> int:
        """Deliver everything on live links (jumping time forward) until nothing is queued;
        raises LocalDeployError when changes are still due after ``max_seconds``, or are held
        by a partition (call :meth:`heal` first)."""
        delivered, deadline = 0, self.now + max_seconds
        self.observe()
        while self._queue:
            if self.now >= deadline:
                stuck = sorted({f"{m.source}->{m.target}" for m in self._queue})
                raise LocalDeployError(
                    f"{len(self._queue)} change(s) still pending after {max_seconds:g} s of virtual time on links "
                    f"{', '.join(stuck)}"
                )
            step = max(self._queue[0].deliver_at - self.now, 0.0) + 1e-6
            delivered += self.advance(min(step, deadline - self.now))
            self.observe()
        if self._held:
            cut = sorted({f"{m.source}->{m.target}" for m in self._held})
            raise LocalDeployError(
                f"{len(self._held)} change(s) held by a partition on links {', '.join(cut)}: nothing crosses a cut "
                "link; call heal() first"
            )
        return delivered

    # Reading ---------------------------------------------------------------------------------------
    def items(self, region: str, logical_id_or_prefix: str) -> list[dict[str, Any]]:
        """Every item of a table in ``region`` (wire format; a Scan: for assertions only)."""
        client, name = self.clients[region], self.table_name(region, logical_id_or_prefix)
        out: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"TableName": name, "ConsistentRead": True}
        while True:
            page = client.scan(**kwargs)
            out.extend(page.get("Items") or [])
            if "LastEvaluatedKey" not in page:
                return out
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def delete(self) -> None:
        """Delete every region's tables."""
        for deployment in self.deployments.values():
            deployment.delete()

    def __enter__(self) -> GlobalTables:
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()
