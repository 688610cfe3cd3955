"""The anti-pattern detector: typed findings with evidence and DynamoDB's recommendations."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..limits import PARTITION_RCU, PARTITION_WCU
from ..patterns.counter.sizing import DEFAULT_HEADROOM
from ..sharding import SHARD
from ._parse import TABLE, WRITE
from .sketch import KeyCount
from .snapshot import Snapshot, check, is_int, is_number

if TYPE_CHECKING:
    from ...model import Model

HOT_PARTITION, LOW_CARDINALITY = "hot_partition", "low_cardinality"
FILTER_HEAVY, SCAN, UNUSED_INDEX = "filter_heavy_query", "scan", "unused_index"
KINDS = (HOT_PARTITION, LOW_CARDINALITY, FILTER_HEAVY, SCAN, UNUSED_INDEX)
_ONE_PARTITION = (
    "One partition key value is served by one partition: at most 1,000 WCU/s and 3,000 RCU/s whatever the "
    "table's capacity (adaptive capacity can move a hot item to its own partition, not split one key)."
)


@dataclass(frozen=True)
class Finding:
    """One anti-pattern: ``kind`` (one of ``KINDS``), the ``index`` (``"table"`` or a GSI),
    the ``subject`` (a partition key, query shape or index name), a one-line ``summary`` with
    the numbers, the ``evidence`` (estimated counts already scaled by ``1 / sample_rate``) and
    the ``recommendation``."""

    kind: str
    index: str
    subject: str
    summary: str
    evidence: Mapping[str, Any]
    recommendation: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.summary}\n    -> {self.recommendation}"


@dataclass(frozen=True)
class TrafficReport:
    """What :func:`detect` found. ``findings`` is ordered: hot partitions (largest share first),
    low-cardinality keys, filter-heavy queries, scans, unused indexes. ``operations`` holds
    estimated requests per operation label."""

    table_name: str | None
    sample_rate: float
    sampled_requests: int
    estimated_requests: float
    duration_seconds: float
    operations: Mapping[str, float]
    findings: tuple[Finding, ...]
    thresholds: Mapping[str, Any] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Finding]:
        """The findings of one kind (one of ``KINDS``)."""
        check("kind", kind, f"one of {', '.join(KINDS)}", kind in KINDS)
        return [f for f in self.findings if f.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for logs and dashboards)."""
        return {
            "table_name": self.table_name, "sample_rate": self.sample_rate, "sampled_requests": self.sampled_requests,
            "estimated_requests": self.estimated_requests, "duration_seconds": self.duration_seconds,
            "operations": dict(self.operations), "thresholds": dict(self.thresholds),
            "findings": [{"kind": f.kind, "index": f.index, "subject": f.subject, "summary": f.summary,
                          "evidence": dict(f.evidence), "recommendation": f.recommendation} for f in self.findings],
        }

    def _header(self) -> str:
        return (f"{self.sampled_requests} sampled of ~{self.estimated_requests:,.0f} requests to table "
                f"{self.table_name!r} (sample rate {self.sample_rate:.4g}) over {self.duration_seconds:.1f} s")

    def __str__(self) -> str:
        lines = [f"Traffic report: {self._header()}; {len(self.findings)} finding(s)"]
        lines += [f"{n}. {f}" for n, f in enumerate(self.findings, 1)]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """A Markdown report: summary, requests per operation, findings table, recommendations."""
        out = [f"## Traffic report: `{self.table_name}`", "", self._header() + ".", ""]
        if self.operations:
            out += ["| Operation | Est. requests |", "|---|---:|"]
            out += [f"| {op} | {n:,.0f} |" for op, n in sorted(self.operations.items())]
            out.append("")
        if not self.findings:
            return "\n".join(out + ["No anti-patterns found with these thresholds."]) + "\n"
        out += [f"### Findings ({len(self.findings)})", "", "| # | Kind | Index | Subject | Evidence |",
                "|---:|---|---|---|---|"]
        for n, f in enumerate(self.findings, 1):
            out.append(f"| {n} | {f.kind.replace('_', ' ')} | {_cell(f.index)} | `{_cell(f.subject)}` | {_cell(f.summary)} |")
        out += ["", "### Recommendations", ""]
        out += [f"{n}. **{f.kind.replace('_', ' ')} — `{f.subject}`**: {f.recommendation}"
                for n, f in enumerate(self.findings, 1)]
        return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def detect(
    snapshot: Snapshot,
    *,
    model: Model | None = None,
    hot_share: float = 0.10,
    min_requests: int = 50,
    filter_ratio: float = 5.0,
    min_scanned: int = 50,
    min_total_requests: int = 100,
    low_cardinality_keys: int = 5,
    duration_seconds: float | None = None,
    headroom: float = DEFAULT_HEADROOM,
) -> TrafficReport:
    """Find anti-patterns in a recorder's :class:`Snapshot` (``recorder.report(...)`` calls this).

    Parameters
    ----------
    model
        The table's model (for its GSIs and declared patterns). Default: the recorder's.
    hot_share
        A partition key is hot when it certainly carried at least this share of its index's
        sampled reads (or writes). A number in (0, 1]; default 0.10.
    min_requests
        Sampled key hits an index needs (per direction) before hot or low-cardinality keys
        are judged on it. An int ≥ 1; default 50.
    filter_ratio
        A query shape is filter-heavy when it read at least this many items per item
        returned (``ScannedCount / Count``; 5.0 = under 20 % returned). A number > 1; default 5.0.
    min_scanned
        Sampled items a query shape must have read to be judged. An int ≥ 1; default 50.
    min_total_requests
        Sampled requests (any operation) the recording needs before a GSI without reads is
        reported unused. An int ≥ 1; default 100.
    low_cardinality_keys
        An index whose sampled traffic (≥ ``min_requests`` hits) touched at most this many
        distinct partition keys is reported low-cardinality. An int ≥ 0 (0 disables); default 5.
    duration_seconds
        Length of the recording, for per-second rates and shard counts. A number > 0; default:
        the recorder's elapsed time since creation or ``reset()``.
    headroom
        Multiplier for bursts in shard counts, a number from 1 to 10. Default 1.2.

    Raises
    ------
    TrafficInsightError
        If a threshold breaks its rule (the message names the value and the rule).
    """
    check("hot_share", hot_share, "a number in (0, 1]", is_number(hot_share) and 0 < hot_share <= 1)
    check("min_requests", min_requests, "an int ≥ 1", is_int(min_requests, 1))
    check("filter_ratio", filter_ratio, "a number > 1", is_number(filter_ratio) and filter_ratio > 1)
    check("min_scanned", min_scanned, "an int ≥ 1", is_int(min_scanned, 1))
    check("min_total_requests", min_total_requests, "an int ≥ 1", is_int(min_total_requests, 1))
    check("low_cardinality_keys", low_cardinality_keys, "an int ≥ 0", is_int(low_cardinality_keys, 0))
    check("duration_seconds", duration_seconds, "None or a number > 0",
          duration_seconds is None or (is_number(duration_seconds) and duration_seconds > 0))
    check("headroom", headroom, "a number from 1 to 10", is_number(headroom) and 1 <= headroom <= 10)
    model = model if model is not None else snapshot.model
    rate = snapshot.sample_rate
    duration = float(duration_seconds if duration_seconds is not None else snapshot.duration_seconds)
    thresholds = {"hot_share": hot_share, "min_requests": min_requests, "filter_ratio": filter_ratio,
                  "min_scanned": min_scanned, "min_total_requests": min_total_requests,
                  "low_cardinality_keys": low_cardinality_keys, "headroom": headroom}
    hot: list[tuple[float, Finding]] = []
    low: list[Finding] = []
    layouts = _shard_layouts(model) if model is not None else {}
    for (index, kind), (top, hits, exact, bound) in sorted(snapshot.sketches.items()):
        if hits < min_requests:
            continue
        # The shards of a write-sharded key are judged together: even spread, each carries 1/N.
        judged = _group_shards(top, layouts[index]) if index in layouts else [(kc, 1, ()) for kc in top]
        for kc, shards, members in judged:
            share = kc.guaranteed / hits
            if kc.count >= hot_share * hits * shards and share / shards >= hot_share:
                hot.append((share / shards, _hot(index, kind, kc, share, hits, rate, duration, hot_share, headroom,
                                                 bound, shards=shards, members=members)))
        if exact and 0 < len(top) <= low_cardinality_keys:
            low.append(_low_cardinality(index, kind, top, hits, rate, sharded=index in layouts))
    findings = [f for _, f in sorted(hot, key=lambda sf: -sf[0])] + low
    findings += _filter_heavy(snapshot, rate, filter_ratio, min_scanned)
    findings += _scans(snapshot, rate)
    if model is not None and snapshot.sampled_requests >= min_total_requests:
        findings += _unused(snapshot, model, rate, duration)
    ops = {op: n / rate for op, (n, _, _) in snapshot.operations.items()}
    return TrafficReport(snapshot.table_name, rate, snapshot.sampled_requests, snapshot.sampled_requests / rate,
                         duration, ops, tuple(findings), thresholds)


def _shards(units_per_second: float, limit: int, headroom: float) -> int:
    """``ceil(units/s × headroom / partition limit)``, as :func:`~constructs_lib.runtime.derive_shards`."""
    return max(1, math.ceil(round(units_per_second * headroom / limit, 9)))


def _shard_layouts(model: Model) -> dict[str, list[tuple[int, int, int]]]:
    """Per GSI with write-sharded keys: (segments, position of ``{shard}``, shards) of each such pk template."""
    out: dict[str, list[tuple[int, int, int]]] = {}
    for entity in model.entities.values():
        for index_name, key in entity.sharded_indexes().items():
            pk = key.pk_template
            assert key.shards is not None
            position = next(n for n, seg in enumerate(pk.segments) if getattr(seg, "field", None) == SHARD)
            layout = (len(pk.segments), position, key.shards)
            if layout not in out.setdefault(index_name, []):
                out[index_name].append(layout)
    return out


def _group_shards(top: list[KeyCount], layouts: list[tuple[int, int, int]]) -> list[tuple[KeyCount, int, tuple[str, ...]]]:
    """``top`` with the shard keys of one logical key (``STATUS#PAID#00``..) summed into one entry
    named with ``{shard}``: (count, shards, member keys), largest first."""
    groups: dict[str, tuple[int, list[KeyCount]]] = {}
    single: list[tuple[KeyCount, int, tuple[str, ...]]] = []
    for kc in top:
        parts = kc.key.split("#")
        for segments, position, shards in layouts:
            if len(parts) == segments and len(parts[position]) == 2 and parts[position].isdigit():
                logical = "#".join([*parts[:position], "{" + SHARD + "}", *parts[position + 1:]])
                groups.setdefault(logical, (shards, []))[1].append(kc)
                break
        else:
            single.append((kc, 1, ()))
    for logical, (shards, members) in groups.items():
        merged = KeyCount(logical, sum(m.count for m in members), sum(m.error for m in members),
                          sum(m.capacity_units for m in members), sum(m.throttled for m in members),
                          sum(m.estimated for m in members))
        single.append((merged, shards, tuple(m.key for m in members)))
    return sorted(single, key=lambda entry: -entry[0].count)


def _hot(index: str, kind: str, kc: Any, share: float, hits: int, rate: float, duration: float,
         hot_share: float, headroom: float, bound: float, *, shards: int = 1, members: tuple[str, ...] = ()) -> Finding:
    limit, unit = (PARTITION_WCU, "WCU") if kind == WRITE else (PARTITION_RCU, "RCU")
    assumed = kc.capacity_units == 0
    units = kc.estimated if assumed else kc.capacity_units / rate  # 1 unit per request when none was reported
    per_second = units / duration if duration > 0 else 0.0
    if shards > 1:
        return _hot_sharded(index, kind, kc, share, hits, rate, duration, hot_share, headroom, bound, shards, members,
                            per_second, units, assumed)
    by_capacity = _shards(per_second, limit, headroom)
    by_share = max(2, math.ceil(round(share / hot_share, 9)))
    shards = max(by_capacity, by_share)
    evidence = {
        "partition_key": kc.key, "direction": kind, "share": round(share, 4), "sampled_hits": kc.count,
        "index_sampled_hits": hits, "estimated_requests": kc.estimated, "index_estimated_requests": hits / rate,
        "count_error_bound": kc.error / rate, "sketch_error_bound": bound / rate, "capacity_units": units,
        "capacity_assumed": assumed, "throttled": kc.throttled / rate, "duration_seconds": duration,
        f"{unit.lower()}_per_second": per_second, "partition_limit": limit,
        "partition_utilization": per_second / limit, "shards_for_capacity": by_capacity,
        "shards_for_share": by_share, "shards": shards,
    }
    where = "the table" if index == TABLE else f"GSI {index}"
    summary = (f"{kc.key!r} carried {share:.1%} of {where}'s sampled {kind}s (~{kc.estimated:,.0f} of "
               f"~{hits / rate:,.0f}); ~{per_second:.3g} {unit}/s = {per_second / limit:.2%} of one partition"
               + (f"; {kc.throttled / rate:,.0f} throttled" if kc.throttled else ""))
    rate_text = (f"At the observed {per_second:.3g} {unit}/s capacity alone needs {by_capacity} shard(s) "
                 f"(x{headroom:g} headroom / {limit:,} {unit} per partition); {by_share} suffixes keep each under "
                 f"{hot_share:.0%} of the index's {kind}s, so use {shards}.")
    if kind == WRITE:
        advice = (f"Write-shard {kc.key!r}: append a suffix to the partition key ({kc.key}#0 ... {kc.key}#{shards - 1}, "
                  f"random or from a hash of the item id) and query all {shards} suffixes in parallel when reading; "
                  "or choose a higher-cardinality partition key (for counters use ShardedCounter).")
        if index != TABLE:
            advice += (" A throttled GSI throttles the table's writes too: derive this index's partition key from a "
                       "higher-cardinality attribute or add the suffix to its key template.")
    else:
        advice = (f"Spread the reads of {kc.key!r}: cache it (DAX or an application cache), use eventually "
                  f"consistent reads (half the RCU), or keep {shards} copies under suffixed keys and read a random one.")
    return Finding(HOT_PARTITION, index, kc.key, summary, evidence, f"{advice} {rate_text} {_ONE_PARTITION}")


def _hot_sharded(index: str, kind: str, kc: Any, share: float, hits: int, rate: float, duration: float,
                 hot_share: float, headroom: float, bound: float, declared: int, members: tuple[str, ...],
                 per_second: float, units: float, assumed: bool) -> Finding:
    """A hot logical key of a write-sharded index: its ``declared`` shards together."""
    limit, unit = (PARTITION_WCU, "WCU") if kind == WRITE else (PARTITION_RCU, "RCU")
    by_capacity = _shards(per_second, limit, headroom)
    by_share = math.ceil(round(share / hot_share, 9))
    shards = max(by_capacity, by_share, declared + 1)
    evidence = {
        "partition_key": kc.key, "direction": kind, "share": round(share, 4), "share_per_shard": round(share / declared, 4),
        "declared_shards": declared, "shard_keys": sorted(members), "sampled_hits": kc.count, "index_sampled_hits": hits,
        "estimated_requests": kc.estimated, "index_estimated_requests": hits / rate,
        "count_error_bound": kc.error / rate, "sketch_error_bound": bound / rate, "capacity_units": units,
        "capacity_assumed": assumed, "throttled": kc.throttled / rate, "duration_seconds": duration,
        f"{unit.lower()}_per_second": per_second, "partition_limit": limit,
        "partition_utilization": per_second / declared / limit, "shards_for_capacity": by_capacity,
        "shards_for_share": by_share, "shards": shards,
    }
    summary = (f"{kc.key!r} (write-sharded over {declared} partitions) carried {share:.1%} of GSI {index}'s sampled "
               f"{kind}s (~{share / declared:.1%} per shard, ~{kc.estimated:,.0f} of ~{hits / rate:,.0f}); "
               f"~{per_second / declared:.3g} {unit}/s per shard = {per_second / declared / limit:.2%} of one partition"
               + (f"; {kc.throttled / rate:,.0f} throttled" if kc.throttled else ""))
    if kind == WRITE:
        advice = (f"The key is already write-sharded (IndexKey(shards={declared})): raise shards= to {shards} "
                  f"(capacity alone needs {by_capacity} at the observed {per_second:.3g} {unit}/s x{headroom:g} "
                  f"headroom; {by_share} keep each shard under {hot_share:.0%} of the index's {kind}s). "
                  "runtime.sharding.index_shards(writes_per_second) sizes it from a rate; a changed shard count is a "
                  "key change, so existing items need a backfill (python -m constructs_lib diff).")
    else:
        advice = (f"Every read of {kc.key!r} reads all {declared} shards: cache it, use eventually consistent reads, "
                  "or narrow the reads with a sort-key condition; more shards spread writes, not reads.")
    return Finding(HOT_PARTITION, index, kc.key, summary, evidence, f"{advice} {_ONE_PARTITION}")


def _low_cardinality(index: str, kind: str, top: list[Any], hits: int, rate: float, *, sharded: bool = False) -> Finding:
    limit, unit = (PARTITION_WCU, "WCU") if kind == WRITE else (PARTITION_RCU, "RCU")
    shares = ", ".join(f"{k.key} {k.count / hits:.0%}" for k in top)
    where = "the table" if index == TABLE else f"GSI {index}"
    evidence = {"direction": kind, "distinct_keys": len(top), "index_sampled_hits": hits,
                "index_estimated_requests": hits / rate, "keys": {k.key: round(k.count / hits, 4) for k in top},
                "capacity_ceiling": len(top) * limit}
    summary = f"{hits:,} sampled {kind}s of {where} touched only {len(top)} partition key value(s): {shares}"
    advice = (f"All {kind}s of {where} land on at most {len(top)} partition(s), capping it near "
              f"{len(top) * limit:,} {unit}/s however large the table grows. Use a high-cardinality attribute (a user, "
              "order or device id) as partition key; if a low-cardinality value (a status, type or date) must lead, "
              "append a calculated suffix (e.g. STATUS#PENDING#0..9 from a hash of the item id) and query the "
              "suffixes in parallel, or make the index sparse so only the items that need it carry its keys.")
    if sharded:
        advice = (f"All {kind}s of {where} land on at most {len(top)} partition(s), its shards included, capping it "
                  f"near {len(top) * limit:,} {unit}/s. Its key is write-sharded: raise shards= on its IndexKey "
                  "(runtime.sharding.index_shards sizes it from a rate), or lead with a higher-cardinality attribute.")
    return Finding(LOW_CARDINALITY, index, where, summary, evidence, advice)


def _filter_heavy(snapshot: Snapshot, rate: float, ratio_limit: float, min_scanned: int) -> list[Finding]:
    out = []
    for s in sorted(snapshot.shapes, key=lambda s: -s.scanned):
        if s.operation != "Query" or s.scanned < min_scanned:
            continue
        ratio = s.scanned / s.returned if s.returned else math.inf
        if ratio < ratio_limit:
            continue
        evidence = {"pattern": s.pattern, "query": s.label, "estimated_requests": s.requests / rate,
                    "estimated_items_read": s.scanned / rate, "estimated_items_returned": s.returned / rate,
                    "read_per_returned": ratio, "returned_share": s.returned / s.scanned,
                    "capacity_units": s.capacity_units / rate}
        ratio_text = f"{ratio:.1f} items read per item returned" if s.returned else "no item returned"
        summary = (f"~{s.requests / rate:,.0f} queries read ~{s.scanned / rate:,.0f} items and returned "
                   f"~{s.returned / rate:,.0f} ({ratio_text}, {s.returned / s.scanned:.1%} kept)")
        advice = ("DynamoDB charges for every item a Query reads, before FilterExpression drops it. Move the filtered "
                  "condition into the sort key (e.g. SK = STATUS#{status}#{created_at}, then begins_with/between), or "
                  "into a sparse GSI that only holds the matching items, and declare the read as an access pattern.")
        if s.pattern is not None and s.label != s.pattern:  # the caller's filter= on a declared pattern
            advice = (f"Access pattern {s.pattern!r} is read with filter= ({s.label.split(' + filter ', 1)[-1]}), "
                      "applied after every item the key selects is read and charged. ") + advice.split(". ", 1)[1]
        elif s.pattern is not None:
            advice = (f"Access pattern {s.pattern!r} reads a partition shared with other entities or ranges and "
                      "filters them out. Give its items their own sort-key prefix so the key condition selects "
                      "only them (begins_with), or serve it from a sparse GSI. ") + advice.split(". ", 1)[1]
        out.append(Finding(FILTER_HEAVY, s.index, s.pattern or s.label, summary, evidence, advice))
    return out


def _scans(snapshot: Snapshot, rate: float) -> list[Finding]:
    per_index: dict[str, list[Any]] = {}
    for s in snapshot.shapes:
        if s.operation == "Scan":
            row = per_index.setdefault(s.index, [0, 0, 0, 0.0, []])
            row[0] += s.requests
            row[1] += s.scanned
            row[2] += s.returned
            row[3] += s.capacity_units
            row[4].append(s.label)
    out = []
    for index, (requests, scanned, returned, units, shapes) in sorted(per_index.items()):
        where = "the table" if index == TABLE else f"GSI {index}"
        evidence = {"estimated_requests": requests / rate, "estimated_items_read": scanned / rate,
                    "estimated_items_returned": returned / rate, "capacity_units": units / rate, "scans": shapes}
        summary = (f"~{requests / rate:,.0f} Scan request(s) on {where} read ~{scanned / rate:,.0f} items "
                   f"(~{units / rate:,.3g} RCU) and returned ~{returned / rate:,.0f}")
        advice = ("A Scan reads every item of the index and pays for each, filters included, and its cost grows with "
                  "the table. Declare the read as an access pattern so a Query on the table or a GSI serves it (the "
                  "model refuses to synthesize a pattern no index serves); for exports and analytics use DynamoDB "
                  "export to S3; if a scan must stay, run it off-peak with Limit and parallel segments.")
        out.append(Finding(SCAN, index, where, summary, evidence, advice))
    return out


def _unused(snapshot: Snapshot, model: Model, rate: float, duration: float) -> list[Finding]:
    out = []
    for gsi in model.gsis:
        if snapshot.index_reads.get(gsi.name, 0):
            continue
        writes, units = snapshot.index_writes.get(gsi.name, (0, 0.0))
        patterns = [p.name for p in model.access_patterns.values() if p.index == gsi.name]
        evidence = {"sampled_requests": snapshot.sampled_requests, "estimated_requests": snapshot.sampled_requests / rate,
                    "duration_seconds": duration, "estimated_reads": 0, "estimated_item_writes": writes / rate,
                    "write_capacity_units": units / rate, "declared_patterns": patterns, "projection": gsi.projection}
        summary = (f"no read of GSI {gsi.name} among {snapshot.sampled_requests:,} sampled requests "
                   f"(~{snapshot.sampled_requests / rate:,.0f} over {duration:.1f} s); it took ~{writes / rate:,.0f} "
                   f"item writes (~{units / rate:,.3g} WCU)")
        served = f"its patterns ({', '.join(repr(p) for p in patterns)})" if patterns else "no declared pattern"
        advice = (f"Every write of an item that carries {gsi.name}'s keys also writes the index (extra WCU and storage), "
                  f"and a throttled GSI throttles the table's writes. It serves {served}: if they are gone, remove the "
                  "index from the model (and the entities' keys for it); if they run rarely (month-end reports, back "
                  "office), record over a window that includes them before deciding, or make the index sparse so "
                  "only the items those reads need carry its keys.")
        out.append(Finding(UNUSED_INDEX, gsi.name, gsi.name, summary, evidence, advice))
    return out
