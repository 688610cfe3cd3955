"""IoT scenario on DynamoDB Local: time-bucketed readings across a month boundary, and TTL.

What it does, against tables created **from the synthesized template** (no hand-written schema):

1. registers three sensors on two sites (Sensor + SiteSensor items in one transaction each);
2. on a simulated clock whose "now" is 20 minutes after the next turn of a month (UTC), sends
   3 h 20 min of readings (one every 5 minutes per sensor) to the **bundled ingest handler**
   from its ``cdk.out`` asset — one malformed reading is rejected, the rest are written to two
   month partitions per sensor, each with a TTL 30 days after the reading was taken;
3. asks the **bundled query handler** for the last hour: it straddles the month boundary, so
   two month buckets are queried; an hour inside one month queries one;
4. reads one sensor's readings month by month, the sensor's metadata and a site's sensors;
5. shows the TTL attribute values (epoch seconds = reading time + 30 days);
6. expiry without idling: a reading taken 30 days minus 3 s ago, ingested first in step 2, is
   past its ``expires_at`` by now. What DynamoDB Local stores (a consistent GetItem) and what a
   client reads (a Query filtering on ``expires_at``: AWS deletes expired items only within days)
   are shown apart;
7. DynamoDB Local's own TTL sweep, checked last (``meanwhile`` runs first: the demo runs the other
   scenarios there) with a final poll of at most ``sweep_wait_s``: deleted, or still stored. It
   scans each TTL table 20 items a page with 10 s between pages (docs/adr/0060-demo-time.md).

Run it from the repository root: ``.venv/bin/python -m examples.iot.scenario`` (synthesizes the
app to a temporary directory, starts DynamoDB Local, runs, stops it). Tests call :func:`run`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `examples` and `constructs_lib` importable
    sys.path.insert(0, str(ROOT))

from constructs_lib.model import Model
from constructs_lib.runtime import TableClient, attr
from constructs_lib.testing import asset_dir, deploy_assembly_stack
from constructs_lib.testing.handlers import LocalFunction
from examples._scenario import function_id, run_standalone

if TYPE_CHECKING:
    from constructs_lib.testing import DynamoDBLocal, LocalDeployment

STACK = "IotTelemetryStack"
INGEST_HANDLER = "iot_ingest.handler"
QUERIES_HANDLER = "iot_queries.handler"
SENSORS = {  # sensor id -> (site, kind, unit)
    "s-1": ("plant-a", "temperature", "C"),
    "s-2": ("plant-a", "humidity", "%"),
    "s-3": ("plant-b", "temperature", "C"),
}
STEP = timedelta(minutes=5)
HISTORY = timedelta(hours=3, minutes=20)  # readings from now - HISTORY to now, every STEP
#: The expiring reading's ``expires_at`` is this many seconds after it is ingested.
EXPIRES_AFTER_S = 3
#: Default final poll for DynamoDB Local's own TTL sweep (step 7).
SWEEP_WAIT_S = 5.0
#: Longest poll that surely sees the sweep: a pass over this ~130-item table takes 7 pages of
#: 20 items with 10 s after each, about 70 s (the test waits this long; the demo does not).
EXPIRY_DEADLINE_S = 90.0


@dataclass
class IotOutcome:
    """What the scenario observed (asserted by the tests)."""

    now: datetime
    written: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)
    last_hour: dict[str, Any] = field(default_factory=dict)
    inside_month: dict[str, Any] = field(default_factory=dict)
    month_counts: dict[str, int] = field(default_factory=dict)
    sensor: dict[str, Any] | None = None
    site_sensors: list[str] = field(default_factory=list)
    ttl_samples: list[tuple[str, int]] = field(default_factory=list)
    #: The expiring reading: its ``expires_at``; whether a consistent GetItem still found it in
    #: step 6 (DynamoDB Local's sweep had not reached it); what the filtering Query returned.
    expiring_at: int = 0
    stored_after_expiry: bool | None = None
    client_read: list[dict[str, Any]] = field(default_factory=list)
    client_read_unfiltered: int = 0
    #: Step 7: whether DynamoDB Local's own TTL sweep deleted it, seen how long after expiry.
    expired: bool = False
    expiry_wait_s: float | None = None


def next_month_start(moment: datetime) -> datetime:
    """The first instant (UTC) of the month after ``moment``'s."""
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")



def run(cdk_out: Path, server: DynamoDBLocal, *, out: Callable[[str], None] = print,
        real_now: datetime | None = None, meanwhile: Callable[[], None] | None = None,
        sweep_wait_s: float = SWEEP_WAIT_S) -> IotOutcome:
    """Run the scenario on ``server`` with the stack synthesized into ``cdk_out``.

    Parameters
    ----------
    cdk_out : Path
        Cloud assembly holding ``IotTelemetryStack``.
    server : DynamoDBLocal
        A running DynamoDB Local.
    out : Callable[[str], None], optional
        Where the narration goes. Default ``print``.
    real_now : datetime, optional
        The wall clock (aware). Default ``datetime.now(UTC)``. The simulated clock is
        20 minutes after the next month boundary after it, so every TTL is in the future.
    meanwhile : Callable[[], None], optional
        Called between step 6 and step 7 (the demo runs its other scenarios there, so the
        sweep's time overlaps them). Default none.
    sweep_wait_s : float, optional
        Step 7 polls this long at most for DynamoDB Local's sweep. Default :data:`SWEEP_WAIT_S`.

    Returns
    -------
    IotOutcome
        What was observed. The tables are deleted before returning.
    """
    real_now = real_now or datetime.now(UTC)
    deployment = deploy_assembly_stack(cdk_out, STACK, client=server.client(), name_prefix="iot-")
    try:
        return _run(cdk_out, server, deployment, out, real_now, meanwhile, sweep_wait_s)
    finally:
        deployment.delete()


def _run(cdk_out: Path, server: DynamoDBLocal, deployment: LocalDeployment, out: Callable[[str], None],
         real_now: datetime, meanwhile: Callable[[], None] | None, sweep_wait_s: float) -> IotOutcome:
    template = dict(deployment.template)
    (table_id,) = deployment.tables
    desc = deployment.describe(table_id)
    ttl = server.client().describe_time_to_live(TableName=desc["TableName"])["TimeToLiveDescription"]
    out(f"== table {desc['TableName']} created from {STACK}.template.json ({table_id})")
    out(f"   key {[k['AttributeName'] for k in desc['KeySchema']]}, "
        f"GSIs {[g['IndexName'] for g in desc.get('GlobalSecondaryIndexes', [])]}, "
        f"TTL on {ttl.get('AttributeName')!r} ({ttl['TimeToLiveStatus']})")

    ingest_id, queries_id = function_id(template, INGEST_HANDLER), function_id(template, QUERIES_HANDLER)
    ingest_asset = asset_dir(cdk_out, template, ingest_id)
    model = Model.from_json((ingest_asset / "model.json").read_text(encoding="utf-8"))
    table = TableClient(model, desc["TableName"], client=server.client())
    ingest_env = deployment.function_environment(ingest_id)
    retention_days = int(ingest_env["RETENTION_DAYS"])

    out("\n== 1. sensors: metadata item + site listing, one transaction per sensor")
    for sensor_id, (site, kind, unit) in SENSORS.items():
        with table.transaction() as tx:
            tx.put("Sensor", {"sensor_id": sensor_id, "site_id": site, "kind": kind, "unit": unit}, create_only=True)
            tx.put("SiteSensor", {"site_id": site, "sensor_id": sensor_id, "kind": kind, "unit": unit},
                   create_only=True)
        keys = (table.keys("Sensor", sensor_id=sensor_id), table.keys("SiteSensor", site_id=site, sensor_id=sensor_id))
        out(f"   {sensor_id}: {keys[0]['PK']} / {keys[0]['SK']}  +  {keys[1]['PK']} / {keys[1]['SK']}")

    boundary = next_month_start(real_now)
    now = boundary + timedelta(minutes=20)
    outcome = IotOutcome(now=now)
    out(f"\n== 2. ingest through the bundled handler (simulated clock: now = {iso(now)}, "
        f"{iso(boundary)[:10]} is the first day of a month)")
    steps = int(HISTORY / STEP)
    readings = [
        {"sensor_id": sensor_id, "ts": iso(now - HISTORY + i * STEP), "value": round(20 + n + 0.1 * i, 1)}
        for n, sensor_id in enumerate(SENSORS) for i in range(steps + 1)
    ]
    readings.insert(7, {"sensor_id": "s-1", "ts": "2024-06-30 23:55", "value": 1.0})  # no UTC offset
    with LocalFunction(ingest_asset, INGEST_HANDLER, environment=ingest_env, endpoint=server.endpoint) as ingest:
        # First, a reading that expires EXPIRES_AFTER_S from now (step 6): DynamoDB Local's TTL sweep gets the
        # rest of the scenario (in the demo, the rest of the demo) to reach it.
        taken = datetime.now(UTC) - timedelta(days=retention_days) + timedelta(seconds=EXPIRES_AFTER_S)
        old = {"sensor_id": "s-3", "ts": iso(taken), "value": 18.0}
        reply = ingest({"readings": [old]})
        assert reply["written"] == 1, reply
        outcome.expiring_at = int(table.get("Reading", sensor_id="s-3", ts=old["ts"], consistent=True)["expires_at"])
        out(f"   first, s-3 at {old['ts']} (30 days minus {EXPIRES_AFTER_S} s ago) into {reply['partitions'][0]}: "
            f"expires_at={outcome.expiring_at}, {EXPIRES_AFTER_S} s from now (step 6)")
        reply = ingest({"readings": readings})
        outcome.written, outcome.rejected, outcome.partitions = reply["written"], reply["rejected"], reply["partitions"]
        out(f"   {len(readings)} readings sent in one event -> {reply['written']} written (BatchWriteItem, "
            f"25 per call), {len(reply['rejected'])} rejected:")
        for bad in reply["rejected"]:
            out(f"     #{bad['index']}: {bad['error']}")
        out(f"   partitions written: {', '.join(reply['partitions'])}")

        queries_asset = asset_dir(cdk_out, template, queries_id)
        queries_env = deployment.function_environment(queries_id)
        with LocalFunction(queries_asset, QUERIES_HANDLER, environment=queries_env, endpoint=server.endpoint) as api:
            out("\n== 3. last hour of s-1 (one Query per month bucket the hour touches)")
            for label, at in (("across the boundary", now), ("inside one month", boundary - timedelta(minutes=90))):
                reply = api({"op": "last_hour", "sensor_id": "s-1", "now": iso(at)})
                found = reply["readings"]
                summary = {"buckets": reply["buckets"], "queries": reply["queries"], "count": len(found),
                           "first": found[0]["ts"] if found else None, "last": found[-1]["ts"] if found else None}
                if label == "across the boundary":
                    outcome.last_hour = summary
                else:
                    outcome.inside_month = summary
                partitions = [table.keys("Reading", sensor_id="s-1", ts=f"{b}-01T00:00:00Z")["PK"]
                              for b in reply["buckets"]]
                out(f"   {label}: {reply['start'][:16]} .. {reply['end'][:16]} -> buckets {reply['buckets']} "
                    f"({', '.join(partitions)}), {reply['queries']} Query call(s), {len(found)} readings "
                    f"{summary['first']} .. {summary['last']}")

            out("\n== 4. a sensor's months, its metadata, a site's sensors")
            for month in (iso(boundary - timedelta(days=1))[:7], iso(boundary)[:7]):
                reply = api({"op": "month", "sensor_id": "s-1", "month": month})
                outcome.month_counts[month] = len(reply["readings"])
                out(f"   readings of s-1 in {month}: {len(reply['readings'])} (one partition, {reply['partition']})")
            reply = api({"op": "sensor", "sensor_id": "s-2"})
            outcome.sensor = reply["sensor"]
            out(f"   sensor metadata s-2 (GetItem): {reply['sensor']}")
            reply = api({"op": "sensors_of_site", "site_id": "plant-a"})
            outcome.site_sensors = [s["sensor_id"] for s in reply["sensors"]]
            out(f"   sensors of plant-a (Query SITE#plant-a, begins_with SENSOR#): {outcome.site_sensors}")

        out(f"\n== 5. TTL: expires_at = reading time + {retention_days} days (epoch seconds, set at ingest)")
        for sent in (readings[0], readings[-1]):
            item = table.get("Reading", sensor_id=sent["sensor_id"], ts=sent["ts"])
            assert item is not None, sent
            expires = int(item["expires_at"])
            outcome.ttl_samples.append((sent["ts"], expires))
            out(f"   {sent['sensor_id']} at {sent['ts']}: expires_at={expires} "
                f"({iso(datetime.fromtimestamp(expires, UTC))})")

        out(f"\n== 6. the reading of s-3 from step 2 is past its expires_at ({outcome.expiring_at})")
        _show_expiry(table, old, outcome, out)
    remaining = len(list(table.query_all("readings of a sensor in a month", sensor_id="s-1", ts=iso(now))))
    out(f"   the other readings are untouched: s-1 still has {remaining} readings in {iso(now)[:7]}")
    if meanwhile is not None:
        meanwhile()
    _watch_sweep(table, old, outcome, out, sweep_wait_s)
    return outcome


def _show_expiry(table: TableClient, old: dict[str, Any], outcome: IotOutcome, out: Callable[[str], None]) -> None:
    """Step 6: what DynamoDB Local stores, and what a client that filters on expires_at reads."""
    late = outcome.expiring_at - time.time()
    if late >= 0:  # a fast run: the expiry is at most EXPIRES_AFTER_S ahead
        time.sleep(late + 1)
    now_s = int(time.time())
    stored = table.get("Reading", sensor_id="s-3", ts=old["ts"], consistent=True)
    outcome.stored_after_expiry = stored is not None
    if stored is not None:
        out(f"   DynamoDB Local still stores it {now_s - outcome.expiring_at} s after expiry (consistent GetItem): "
            "its TTL sweep has not reached it yet (step 7)")
    else:
        out(f"   DynamoDB Local's TTL sweep already deleted it (consistent GetItem, {now_s - outcome.expiring_at} s "
            "after expiry)")
    # The reading's own instant as a time range (its month may also hold s-3's live readings).
    instant = {"sensor_id": "s-3", "ts": (old["ts"], old["ts"])}
    plain = table.query("readings of a sensor in a time range", instant, consistent=True)
    live = table.query("readings of a sensor in a time range", instant, consistent=True,
                       filter=attr("expires_at") > now_s)
    outcome.client_read_unfiltered, outcome.client_read = len(plain.items), list(live.items)
    out(f"   a client read of it filtering on expires_at > now ({now_s}): {len(live.items)} of the "
        f"{len(plain.items)} stored returned. This is the client's rule, not DynamoDB's: AWS deletes an "
        "expired item within a few days, so a read that must not see expired data filters on expires_at")


def _watch_sweep(table: TableClient, old: dict[str, Any], outcome: IotOutcome, out: Callable[[str], None],
                 wait_s: float) -> None:
    """Step 7: DynamoDB Local's own TTL sweep, polled at most ``wait_s`` seconds (1 s apart)."""
    out(f"\n== 7. DynamoDB Local's own TTL sweep, for the reading of s-3 (expires_at {outcome.expiring_at})")
    deadline = time.monotonic() + wait_s
    while True:
        gone = table.get("Reading", sensor_id="s-3", ts=old["ts"], consistent=True) is None
        if gone or time.monotonic() >= deadline:
            break
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    seen_after = time.time() - outcome.expiring_at
    outcome.expired, outcome.expiry_wait_s = gone, seen_after
    if gone:
        out(f"   deleted by DynamoDB Local's TTL sweep: gone when checked {seen_after:.0f} s after expiry")
    else:
        out(f"   still stored {seen_after:.0f} s after expiry: DynamoDB Local's TTL sweep has not reached it (it scans "
            "each TTL table 20 items a page, 10 s between pages: about 70 s a pass over this table). Nothing "
            "deleted it; the client's filter in step 6 is what hides it")
    out("   (AWS: TTL deletes an expired item typically within a few days of its expires_at)")


def main() -> int:
    """Synthesize the app to a temporary directory, start DynamoDB Local, run, stop."""
    from examples.iot.app import build_app

    return run_standalone("iot", build_app, run)


if __name__ == "__main__":
    raise SystemExit(main())
