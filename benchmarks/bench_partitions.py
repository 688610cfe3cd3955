"""Partition key designs under load: the modelled throttled fraction (``partition_sim``).

Arithmetic, not a measurement — DynamoDB Local does not throttle. Five key designs from
DynamoDB's partition key guidance are offered 500 … 100,000 writes/s (1 WCU each) and the
simulator (:mod:`benchmarks.partition_sim`) says what fraction is throttled, under adaptive
capacity (each partition key value ≤ one partition's 1,000 WCU/s) and, for contrast, without
it (keys hashed onto a fixed set of partitions). Plotted to ``partition_throttling.png``.
"""

from __future__ import annotations

from benchmarks._harness import (
    Context,
    Row,
    Section,
    Series,
    Table,
    log,
    save_line_plot,
)
from benchmarks.partition_sim import (
    PARTITION_WCU,
    KeyDesign,
    Outcome,
    constant_key,
    date_key,
    log_loads,
    status_key,
    sweep,
    write_sharded,
    zipf_users,
)
from constructs_lib.runtime.patterns.counter import derive_shards

NAME = "partitions"
TITLE = "Partition key designs under load (modelled)"
NEEDS_DYNAMODB = False

PLOT_FILE = "partition_throttling.png"
#: The seed's hot-counter target: the write-sharded design is sized for it.
TARGET = 50_000
LOADS_SHOWN = (1_000, 2_000, 5_000, 10_000, 50_000, 100_000)


def designs() -> list[KeyDesign]:
    """The designs compared, bad ones first."""
    return [
        constant_key(),
        date_key(0.99, 7),
        status_key(),
        zipf_users(100_000, 0.6),
        write_sharded(TARGET),
    ]


def _pct(x: float) -> str:
    return "0%" if x == 0 else (f"{x:.1%}" if x >= 0.001 else "<0.1%")


def run(ctx: Context) -> Section:
    """Sweep every design over the loads under both models; table, rows and plot."""
    ds = designs()
    loads = sorted({*log_loads(500, 100_000, per_decade=4 if ctx.quick else 12), *LOADS_SHOWN})
    log(f"partitions: {len(ds)} designs x {len(loads)} loads x 2 models")
    adaptive = sweep(ds, loads)
    fixed = sweep(ds, loads, model="fixed")

    def at(result: dict[str, list[Outcome]], design: KeyDesign, load: float) -> Outcome:
        return result[design.name][loads.index(load)]

    rows: list[Row] = []
    for d in ds:
        frac = at(adaptive, d, TARGET).throttled_fraction
        if d.good:
            goal, met = "0% (a good design carries the target)", frac == 0
        else:
            goal, met = "none (counter-example: throttles by design)", None
        rows.append(Row.measured(f"throttled at {TARGET:,} writes/s, adaptive capacity", d.name, "%", [frac * 100],
                                 goal=goal, met=met))
    headers = ["design", "partition keys", "hottest key's share", "throttling starts at"] + [
        f"{x:,}/s" for x in LOADS_SHOWN]
    tables = [
        Table(
            title=f"Throttled fraction, adaptive capacity (a key ≤ {PARTITION_WCU:,} WCU/s; table sized for 2× the load)",
            headers=headers,
            rows=[[d.name, f"{len(d.keys):,}", f"{d.hottest_share:.1%}", f"{d.throttle_onset():,.0f} writes/s"]
                  + [_pct(at(adaptive, d, x).throttled_fraction) for x in LOADS_SHOWN] for d in ds],
        ),
        Table(
            title=(f"Throttled fraction without adaptive capacity (keys hashed onto ceil(2 × load / {PARTITION_WCU:,}) "
                   f"partitions of {PARTITION_WCU:,} WCU/s each)"),
            headers=["design"] + [f"{x:,}/s" for x in LOADS_SHOWN],
            rows=[[d.name] + [_pct(at(fixed, d, x).throttled_fraction) for x in LOADS_SHOWN] for d in ds],
        ),
    ]
    styles = ["o-", "s-", "^-", "D-", "v-"]
    series = [Series(d.name, loads, [o.throttled_fraction * 100 for o in adaptive[d.name]], style)
              for d, style in zip(ds, styles, strict=True)]
    series += [Series(f"{d.name} — no adaptive capacity", loads, [o.throttled_fraction * 100 for o in fixed[d.name]],
                      ":") for d in ds if d.good]
    save_line_plot(
        ctx.out_dir / PLOT_FILE, series,
        title=f"Modelled throttling by partition key design ({PARTITION_WCU:,} WCU/s per partition)",
        xlabel="offered writes/s, 1 WCU each (log)", ylabel="throttled writes (%)", log_x=True,
        vlines=[(TARGET, f"{TARGET:,} writes/s (write-sharded design's target)")], legend_loc="below",
    )
    sharded = ds[-1]
    users = ds[-2]
    by_name = {"date": ds[1], "status": ds[2]}
    notes = [
        (f"Model (`benchmarks/partition_sim.py`, unit-tested): a design is a fixed set of partition key values with "
         f"each one's share of the writes; offered load L puts share × L writes/s on each key. With adaptive "
         f"capacity, hot keys get partitions of their own, so what is throttled is each key's excess over one "
         f"partition ({PARTITION_WCU:,} WCU/s: a single partition key value can never exceed it), within a table of "
         f"ceil(2 × L / {PARTITION_WCU:,}) partitions (an on-demand table absorbs up to twice its previous peak). "
         f"Without it, keys hash (seeded MD5) onto those partitions and each partition's excess is throttled. A "
         f"fluid model: expected rates, no per-request randomness or bursts, so real tables throttle somewhat "
         f"earlier than shown."),
        (f"Designs: constant key (1 − {PARTITION_WCU:,}/L throttled above {PARTITION_WCU:,}/s); `date`: "
         f"{by_name['date'].description}; `status`: {by_name['status'].description} (`PENDING`); user id: "
         f"{users.description} (the most active user does {users.hottest_share:.2%} of the writes, so this design "
         f"would throttle only above {users.throttle_onset():,.0f} writes/s); one hot item write-sharded over "
         f"{len(sharded.keys)} keys, the shard count `constructs_lib.runtime.patterns.counter.derive_shards({TARGET:_})` "
         f"gives (its default headroom ×{derive_shards(TARGET).headroom:g}): no throttling up to "
         f"{sharded.throttle_onset():,.0f} writes/s."),
        "Nothing here is measured (DynamoDB Local does not throttle); the figures follow the arithmetic exactly.",
    ]
    return Section(
        name=NAME,
        title=TITLE,
        summary=(
            f"The throttled fraction of offered writes for five partition key designs from DynamoDB's guidance, "
            f"500 … 100,000 writes/s, from a deterministic model of {PARTITION_WCU:,} WCU/s partitions."
        ),
        rows=rows,
        tables=tables,
        notes=notes,
        plots=[PLOT_FILE],
        meta={"loads": loads, "adaptive": {d.name: [round(o.throttled_fraction, 6) for o in adaptive[d.name]] for d in ds},
              "fixed": {d.name: [round(o.throttled_fraction, 6) for o in fixed[d.name]] for d in ds}},
    )
