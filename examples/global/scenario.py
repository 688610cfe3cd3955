"""Global documents scenario: two regions writing at once, a partition that heals, counters and
the audit trail exact afterwards (on the ``GlobalTables`` harness, DynamoDB Local).

What it does, with the table created **from the synthesized template** in each region and the
bundled handlers run **from their asset directories** with each region's environment:

1. each region saves a document through its documents API; the harness replicates it (MREC,
   last writer wins, virtual time) and the copy names the region that wrote it (``_origin_region``);
2. both regions count views of one document (each writes only its own ``SUM#<region>`` items);
3. the link between the regions is cut: both rename the same document, keep counting views, and
   one deletes a document; each region sees only its own writes;
4. the link heals and replication settles: the document has one title everywhere (the later
   rename wins), every region's view total (its own total plus the other region's, replicated)
   and exact read equal the views made in all regions, and
   each region's audit (fed its own stream through the synthesized filters) recorded exactly the
   changes written in that region, once each;
5. for contrast, the naive layout (both regions adding to the same shard item) loses the
   increments of one region: last writer wins keeps a single item.

Run it from the repository root: ``.venv/bin/python -m examples.global.scenario``. Tests call :func:`run`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `examples` and `constructs_lib` importable
    sys.path.insert(0, str(ROOT))

from constructs_lib.runtime import CounterClient
from constructs_lib.runtime.patterns.counter.spec import CounterSpec
from constructs_lib.testing import GlobalTables, MappingSettings, StreamRunner, asset_dir, read_stack_template
from constructs_lib.testing.handlers import LocalFunction
from examples._scenario import function_id, run_standalone

if TYPE_CHECKING:
    from constructs_lib.testing import DynamoDBLocal

STACK = "GlobalDocsStack"
HOME, REPLICA = "us-east-1", "eu-west-1"
REGIONS = (HOME, REPLICA)
API = "documents_api.handler"
AGGREGATOR = "constructs_lib.runtime.handlers.counter.handler"
AUDIT = "constructs_lib.runtime.handlers.audit.handler"
#: Virtual seconds between a write and its arrival in the other region.
DELAY = 0.8
PLAN, NOTES = "d-plan", "d-notes"


def filters_for(settings: MappingSettings, home: str, region: str) -> MappingSettings:
    """The home audit's mapping settings with its filters for ``region``: what the ``StreamAudit``
    of the same stack deployed in ``region`` synthesizes (the example test compares the two)."""
    text = json.dumps(list(settings.filters)).replace(f'"{home}"', f'"{region}"').replace(f'"{home}#"', f'"{region}#"')
    return replace(settings, filters=tuple(json.loads(text)))


@dataclass
class GlobalOutcome:
    """What the scenario observed (asserted by the tests)."""

    views_made: Counter[str] = field(default_factory=Counter)  # region -> views made there
    partitioned_titles: dict[str, str] = field(default_factory=dict)  # region -> d-plan's title during the cut
    titles: dict[str, str] = field(default_factory=dict)  # region -> d-plan's title after convergence
    origins: dict[str, str] = field(default_factory=dict)  # region -> d-plan's _origin_region after convergence
    notes_present: dict[str, bool] = field(default_factory=dict)
    totals: dict[str, tuple[int, int]] = field(default_factory=dict)  # region -> (aggregated, exact)
    written: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # region -> (event, pk) made there
    audited: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # region -> (event, pk) audited there
    filtered_out: dict[str, int] = field(default_factory=dict)  # region -> records its audit's filters dropped
    naive: tuple[int, int, int] = (0, 0, 0)  # (increments made, total after convergence, discarded writes)


class _Region:
    """One region's functions, warm from their assets, and its two stream consumers."""

    def __init__(self, harness: GlobalTables, cdk_out: Path, template: dict[str, Any], region: str,
                 server: DynamoDBLocal) -> None:
        self.region = region
        ids = {name: function_id(template, handler) for name, handler in
               (("api", API), ("aggregator", AGGREGATOR), ("audit", AUDIT))}
        env = {name: harness.function_environment(region, lid, template) for name, lid in ids.items()}
        self.functions = {name: LocalFunction(asset_dir(cdk_out, template, lid), handler, environment=env[name],
                                              endpoint=server.endpoint)
                          for (name, lid), handler in zip(ids.items(), (API, AGGREGATOR, AUDIT), strict=True)}
        self.api = self.functions["api"]
        stream = harness.deployments[region].stream_arn("Data")
        streams = server.streams_client()
        audit_settings = filters_for(MappingSettings.from_template(template, function_logical_id=ids["audit"]),
                                     HOME, region)
        self.aggregator = StreamRunner(
            streams, stream, self.functions["aggregator"], region=region,
            settings=MappingSettings.from_template(template, function_logical_id=ids["aggregator"]))
        self.audit = StreamRunner(streams, stream, self.functions["audit"], settings=audit_settings, region=region)

    def close(self) -> None:
        for fn in self.functions.values():
            fn.close()


def run(cdk_out: Path, server: DynamoDBLocal, *, out: Callable[[str], None] = print) -> GlobalOutcome:
    """Run the scenario on ``server`` with the stack synthesized into ``cdk_out``.

    Parameters
    ----------
    cdk_out : Path
        Cloud assembly holding ``GlobalDocsStack``.
    server : DynamoDBLocal
        A running DynamoDB Local.
    out : Callable[[str], None], optional
        Where the narration goes. Default ``print``.

    Returns
    -------
    GlobalOutcome
        What was observed. Every region's tables are deleted before returning.
    """
    import boto3

    template = read_stack_template(cdk_out, STACK)
    harness = GlobalTables(
        template, regions=REGIONS, tables=["Data"], streams_client=server.streams_client(), delay=DELAY,
        client_factory=lambda r: boto3.client("dynamodb", **{**server.client_kwargs(), "region_name": r}),
    )
    regions: dict[str, _Region] = {}
    try:
        for region in REGIONS:
            regions[region] = _Region(harness, cdk_out, template, region, server)
        return _run(harness, regions, out)
    finally:
        for r in regions.values():
            r.close()
        harness.delete()


def _run(h: GlobalTables, regions: Mapping[str, _Region], out: Callable[[str], None]) -> GlobalOutcome:
    outcome = GlobalOutcome()

    def call(region: str, event: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = h.write(region, lambda: regions[region].api(event))
        if not reply.get("ok"):
            raise RuntimeError(f"documents API in {region} refused {event}: {reply}")
        return reply

    def views(region: str, n: int) -> None:
        for _ in range(n):
            call(region, {"op": "view", "doc_id": PLAN})
        outcome.views_made[region] += n

    def title(region: str) -> str:
        doc = regions[region].api({"op": "get", "doc_id": PLAN})["doc"]
        return str(doc["title"]) if doc else "(none)"

    out(f"== table {h.table_name(HOME, 'Data')} from {STACK}.template.json, deployed in {', '.join(REGIONS)} "
        f"(harness: MREC, last writer wins, {DELAY} s of virtual time per replication)")
    regions_env = h.function_environment(HOME, "DocumentsApi", None)["CONSTRUCTS_LIB_REPLICA_REGIONS"]
    out(f"   documents API environment: CONSTRUCTS_LIB_REPLICA_REGIONS={regions_env}, AWS_REGION=<its region>")

    out("\n== 1. each region saves a document; replication copies it to the other")
    call(HOME, {"op": "save", "doc_id": PLAN, "title": "Launch plan", "author": "ada"})
    call(REPLICA, {"op": "save", "doc_id": NOTES, "title": "Meeting notes", "author": "grace"})
    h.settle()
    for region in REGIONS:
        stored = {i["PK"]["S"]: i.get("_origin_region", {}).get("S") for i in h.items(region, "Data")}
        out(f"   {region}: {', '.join(f'{pk} (_origin_region={o})' for pk, o in sorted(stored.items()))}")

    out(f"\n== 2. views of {PLAN} in both regions (each region adds to its own SUM#<region> items)")
    views(HOME, 30)
    views(REPLICA, 20)
    out(f"   views made: {dict(outcome.views_made)}")

    out(f"\n== 3. the link {HOME} <-> {REPLICA} is cut; both regions keep writing")
    h.partition(HOME, REPLICA)
    call(HOME, {"op": "rename", "doc_id": PLAN, "title": "Launch plan v2"})
    views(HOME, 15)
    h.advance(1.0)
    call(REPLICA, {"op": "rename", "doc_id": PLAN, "title": "Launch plan (EU review)"})
    call(REPLICA, {"op": "delete", "doc_id": NOTES})
    views(REPLICA, 25)
    h.advance(5.0)
    outcome.partitioned_titles = {r: title(r) for r in REGIONS}
    out(f"   after 5 s: {h.pending()} change(s) held by the partition; {PLAN}'s title per region: "
        f"{outcome.partitioned_titles}")

    out("\n== 4. the link heals; replication settles; each region's aggregator and audit read its own stream")
    h.heal()
    h.settle()
    for r in regions.values():
        r.aggregator.run()
    h.settle()  # the totals are items too (TOTAL#<region>): each region's own
    for region, r in regions.items():
        report = r.audit.run()
        outcome.filtered_out[region] = report.filtered_out
    for region in REGIONS:
        items = {i["PK"]["S"]: i for i in h.items(region, "Data")}
        plan = items[f"DOC#{PLAN}"]
        outcome.titles[region] = plan["title"]["S"]
        outcome.origins[region] = plan["_origin_region"]["S"]
        outcome.notes_present[region] = f"DOC#{NOTES}" in items
        counter = CounterClient(CounterSpec.from_json(
            h.function_environment(region, "DocumentsApi", None)["CONSTRUCTS_LIB_COUNTER_DOC_VIEWS"]),
            h.table_name(region, "Data"), client=h.clients[region], region=region)
        outcome.totals[region] = (counter.get(PLAN, consistent=True).total, counter.get(PLAN, exact=True).total)
    made = sum(outcome.views_made.values())
    for region in REGIONS:
        aggregated, exact = outcome.totals[region]
        out(f"   {region}: {PLAN} title {outcome.titles[region]!r} (_origin_region={outcome.origins[region]}), "
            f"{NOTES} {'present' if outcome.notes_present[region] else 'deleted'}; views aggregated {aggregated}, "
            f"exact {exact} (made: {made})")
    outcome.written = _written(h)
    for region in REGIONS:
        outcome.audited[region] = sorted((i["event"]["S"], i["key"]["M"]["PK"]["S"])
                                         for i in h.items(region, "AuditTable"))
        out(f"   {region} audit: {len(outcome.audited[region])} record(s) {outcome.audited[region]}; "
            f"{outcome.filtered_out[region]} stream records filtered out (replicated copies, counter items, "
            "delete stamps)")
    once = all(outcome.audited[r] == sorted(outcome.written[r]) for r in REGIONS)
    out(f"   every change audited once, in the region that wrote it: {once}")

    out("\n== 5. for contrast: the naive layout (both regions add to the same shard item, SK = SUM)")
    outcome.naive = _naive(h)
    made_naive, total, discarded = outcome.naive
    out(f"   {made_naive} increments made during a partition, total after convergence {total} in every region: "
        f"{made_naive - total} lost ({discarded} replicated write(s) discarded by last writer wins)")
    return outcome


def _written(h: GlobalTables) -> dict[str, list[tuple[str, str]]]:
    """The document changes each region's application made, from the harness's record of local
    changes (a delete's stamp is half of the delete, not a change; counter items are not audited)."""
    written: dict[str, list[tuple[str, str]]] = {r: [] for r in REGIONS}
    for region, _, record in h.changes:
        ddb = record["dynamodb"]
        pk = ddb["Keys"]["PK"]["S"]
        if not pk.startswith("DOC#") or (record["eventName"] == "MODIFY" and "_deleted_in" in ddb.get("NewImage", {})):
            continue
        written[region].append((record["eventName"], pk))
    return written


def _naive(h: GlobalTables) -> tuple[int, int, int]:
    """Both regions increment one counter on a spec without regions (one shared ``SUM`` item)."""
    spec = CounterSpec(family="naive_views", shards=1)
    clients = {r: CounterClient(spec, h.table_name(r, "Data"), client=h.clients[r]) for r in REGIONS}
    discarded = h.report.discarded
    h.partition(HOME, REPLICA)
    for n, region in enumerate([HOME, REPLICA, HOME, REPLICA, REPLICA]):
        h.write(region, lambda c=clients[region]: c.increment(PLAN))
        h.advance(0.1 * (n + 1))
    h.heal()
    h.settle()
    totals = {clients[r].get(PLAN, exact=True).total for r in REGIONS}
    if len(totals) != 1:
        raise RuntimeError(f"regions disagree after convergence: {totals}")
    return 5, totals.pop(), h.report.discarded - discarded


def main() -> int:
    """Synthesize the app to a temporary directory, start DynamoDB Local, run, stop."""
    import importlib

    build_app = importlib.import_module("examples.global.app").build_app
    return run_standalone("global", build_app, run)


if __name__ == "__main__":
    raise SystemExit(main())
