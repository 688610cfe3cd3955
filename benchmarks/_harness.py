"""Shared benchmark machinery: interleaved timing, the results registry, and a PNG helper.

Rules every benchmark here follows (the machines are shared, noisy, 2 cores):

* A figure is a **ratio against a baseline measured in the same run**. Variants are timed
  *interleaved* — round 1: A, B, C; round 2: C, B, A; round 3: B, C, A; … — so slow phases of
  the machine hit every variant alike, and each round yields one *paired* ratio (variant ÷
  baseline of the same round). We report the median of those paired ratios with their min and max.
* Absolute figures (ops/s, ms) are reported as median / min / max over the rounds, for
  context only: they say more about the machine than about the code.
* A benchmark is never a pass/fail test. Goals are shown with "met?" for the reader.

Three pieces:

:func:`interleave`
    Runs named variants in rotated, repeated rounds and returns their :class:`Timings`.
:class:`Results`
    The registry: each benchmark contributes one :class:`Section`, merged into
    ``results.json`` by name (other sections are kept), and ``results.md`` is regenerated
    from the whole JSON.
:func:`save_line_plot`
    A small matplotlib (Agg backend) helper for the curves worth a picture.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from constructs_lib.testing.dynamodb_local import DynamoDBLocal

#: Where results and plots go by default: this package's directory.
BENCH_DIR = Path(__file__).resolve().parent
RESULTS_JSON = "results.json"
RESULTS_MD = "results.md"
#: Version of the results.json layout.
RESULTS_FORMAT = 1
#: Legend positions :func:`save_line_plot` accepts.
LegendLoc = Literal["best", "upper left", "upper right", "lower left", "lower right", "center right", "below"]


# -----------------------------------------------------------------------------------------------
# Statistics
# -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stats:
    """Median, min and max of a list of samples."""

    median: float
    minimum: float
    maximum: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        """Summarize *values* (at least one)."""
        if not values:
            raise ValueError("Stats.of needs at least one value")
        return cls(float(statistics.median(values)), float(min(values)), float(max(values)), len(values))


# -----------------------------------------------------------------------------------------------
# Interleaved timing
# -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Timings:
    """Wall-clock seconds of each timed block, per variant, index-aligned by round.

    ``seconds[v][r]`` is how long variant ``v`` took to run its operation ``ops`` times in
    a row in round ``r``.
    """

    seconds: dict[str, list[float]]
    ops: int
    baseline: str

    @property
    def rounds(self) -> int:
        return len(self.seconds[self.baseline])

    def rate(self, variant: str) -> list[float]:
        """Operations per second, one value per round."""
        return [self.ops / s for s in self.seconds[variant]]

    def per_op(self, variant: str) -> list[float]:
        """Seconds per operation, one value per round."""
        return [s / self.ops for s in self.seconds[variant]]

    def rate_ratio(self, variant: str) -> list[float]:
        """Paired throughput ratio ``rate(variant) / rate(baseline)`` of each round (> 1 is faster)."""
        return [b / v for v, b in zip(self.seconds[variant], self.seconds[self.baseline], strict=True)]

    def time_ratio(self, variant: str) -> list[float]:
        """Paired time ratio ``time(variant) / time(baseline)`` of each round (> 1 is slower)."""
        return [v / b for v, b in zip(self.seconds[variant], self.seconds[self.baseline], strict=True)]


def round_orders(k: int) -> list[list[int]]:
    """Orders of *k* variants for successive rounds: a Williams (balanced Latin square) design.

    Over one cycle every variant takes every position once and directly follows every other
    variant equally often. A cycle is *k* rounds for even *k*, 2*k* (each row and its
    mirror) for odd *k*; variant 0 runs first in round 1.
    """
    if k < 1:
        raise ValueError(f"k {k!r} must be >= 1")
    first, lo, hi = [0], 1, k - 1
    while len(first) < k:
        first.append(lo)
        lo += 1
        if len(first) < k:
            first.append(hi)
            hi -= 1
    rows = [[(x + r) % k for x in first] for r in range(k)]
    if k % 2:
        rows = [row for r in rows for row in (r, r[::-1])]
    return rows


def interleave(
    variants: Mapping[str, Callable[[], object]],
    *,
    baseline: str,
    rounds: int,
    ops: int,
    warmup_ops: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Timings:
    """Time named variants in interleaved, repeated rounds.

    Parameters
    ----------
    variants
        Name → a callable performing **one** operation. Insertion order is the round-1 order.
    baseline
        Name of the variant the others are compared against (must be in *variants*).
    rounds
        Number of rounds (≥ 1). Each round times every variant once, in an order taken from
        a Williams design (see :func:`round_orders`): no variant always runs first or last,
        and none always follows the same other variant (a slow variant can leave work
        behind in the server that the next block pays for).
    ops
        Operations per timed block (≥ 1): the callable is called this many times in a row
        and the whole block is timed with :func:`time.perf_counter`.
    warmup_ops
        Untimed calls of each variant before round 1 (connections, caches and — for
        DynamoDB Local — the JVM's JIT, which needs about a thousand requests to settle).
        Default: ``ops`` (one untimed block each).
    clock
        What a block is timed with. Default :func:`time.perf_counter` (wall time);
        :func:`time.thread_time` times this thread's CPU alone (a figure of client-side CPU that
        other processes on a busy machine do not inflate).

    Returns
    -------
    Timings
    """
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not one of the variants {list(variants)}")
    if rounds < 1 or ops < 1:
        raise ValueError(f"rounds {rounds!r} and ops {ops!r} must be >= 1")
    names = list(variants)
    for name in names:
        for _ in range(ops if warmup_ops is None else warmup_ops):
            variants[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    orders = round_orders(len(names))
    for r in range(rounds):
        for name in (names[i] for i in orders[r % len(orders)]):
            op = variants[name]
            gc.collect()
            started = clock()
            for _ in range(ops):
                op()
            seconds[name].append(clock() - started)
    return Timings(seconds=seconds, ops=ops, baseline=baseline)


# -----------------------------------------------------------------------------------------------
# Results: rows, sections, registry
# -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One line of the results table.

    ``median``/``minimum``/``maximum`` are the variant's own figure in ``unit`` (over rounds);
    ``ratio`` the paired ratio against the baseline (None for the baseline itself, or where a
    ratio means nothing); ``goal`` the reader's target, ``met`` whether it was reached.
    """

    figure: str
    variant: str
    unit: str
    median: float
    minimum: float
    maximum: float
    ratio: Stats | None = None
    baseline: bool = False
    goal: str = ""
    met: bool | None = None

    @classmethod
    def measured(
        cls,
        figure: str,
        variant: str,
        unit: str,
        values: Sequence[float],
        *,
        ratios: Sequence[float] | None = None,
        baseline: bool = False,
        goal: str = "",
        met: bool | None = None,
    ) -> Row:
        """A row from raw per-round *values* and, optionally, per-round paired *ratios*."""
        s = Stats.of(values)
        return cls(
            figure, variant, unit, s.median, s.minimum, s.maximum,
            ratio=Stats.of(ratios) if ratios is not None else None, baseline=baseline, goal=goal, met=met,
        )


@dataclass(frozen=True)
class Table:
    """An extra Markdown table of a section (e.g. modelled figures, which have no spread)."""

    title: str
    headers: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    """Everything one benchmark reports; merged into the registry under ``name``."""

    name: str
    title: str
    summary: str
    rows: list[Row] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Plot files, relative to the results directory.
    plots: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def run_metadata() -> dict[str, Any]:
    """Where and when: UTC time, Python, platform, CPU count, git commit (read-only query)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=BENCH_DIR, capture_output=True, text=True, timeout=5, check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {
        "finished_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
        "commit": commit or "unknown",
    }


class Results:
    """The results registry of one results directory.

    :meth:`merge` replaces (or adds) one benchmark's section in ``results.json`` and keeps
    the others, then regenerates ``results.md`` from the JSON — so benchmarks can be run
    one at a time without clobbering each other.
    """

    def __init__(self, directory: str | os.PathLike[str] = BENCH_DIR) -> None:
        self.directory = Path(directory)
        self.json_path = self.directory / RESULTS_JSON
        self.md_path = self.directory / RESULTS_MD

    def load(self) -> dict[str, Any]:
        """The current results document (an empty one if missing, unreadable or of another format)."""
        try:
            doc = json.loads(self.json_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT or not isinstance(doc.get("sections"), dict):
            return {"format": RESULTS_FORMAT, "sections": {}}
        return doc

    def merge(self, section: Section) -> None:
        """Store *section* under its name (replacing an earlier run of it) and rewrite both files."""
        doc = self.load()
        doc["sections"][section.name] = asdict(section)
        doc["sections"] = dict(sorted(doc["sections"].items()))
        self.directory.mkdir(parents=True, exist_ok=True)
        self.json_path.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        self.md_path.write_text(render_markdown(doc), encoding="utf-8")


# -----------------------------------------------------------------------------------------------
# Markdown rendering (from the JSON document, so any section renders the same way)
# -----------------------------------------------------------------------------------------------
def fmt_number(value: float) -> str:
    """Readable number: thousands separators for large values, 3 significant digits for small."""
    if value == int(value) and abs(value) >= 1:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _ratio_cell(row: Mapping[str, Any]) -> str:
    if row.get("baseline"):
        return "baseline (1×)"
    ratio = row.get("ratio")
    if not ratio:
        return "—"
    return f"**{ratio['median']:.2f}×** ({ratio['minimum']:.2f}–{ratio['maximum']:.2f})"


def _met_cell(met: bool | None) -> str:
    return "—" if met is None else ("yes" if met else "**no**")


def _markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def render_markdown(doc: Mapping[str, Any]) -> str:
    """``results.md`` for a results document: one heading, table, extra tables, notes and plots per section."""
    out = [
        "# Benchmark results",
        "",
        ("Generated by `make bench` (`python -m benchmarks.run`); do not edit by hand — see "
         "[README.md](README.md) for what each figure means."),
        "",
        ("Every comparison is a **ratio against a baseline measured in the same run**, interleaved "
         "round by round; *ratio* is the median of the per-round paired ratios (min–max in brackets). "
         "Absolute figures (median / min / max over the rounds) describe this machine, not the code. "
         "Benchmarks are not pass/fail tests: *met?* only compares the ratio with its goal."),
        "",
    ]
    for section in doc.get("sections", {}).values():
        meta = section.get("meta", {})
        out += [f"## {section['title']} (`{section['name']}`)", ""]
        facts = [
            f"run {meta.get('finished_at', '?')}",
            f"{meta.get('duration_s', 0):.0f} s",
            f"{meta.get('cpus', '?')} CPUs",
            f"Python {meta.get('python', '?')}",
            f"commit {meta.get('commit', '?')}",
        ]
        if meta.get("quick"):
            facts.append("**quick mode (few rounds: indicative only)**")
        out += ["_" + " · ".join(facts) + "_", "", section.get("summary", ""), ""]
        if section.get("rows"):
            table_rows = [
                [
                    f"{r['figure']} [{r['unit']}]",
                    r["variant"],
                    fmt_number(r["median"]),
                    fmt_number(r["minimum"]),
                    fmt_number(r["maximum"]),
                    _ratio_cell(r),
                    r.get("goal") or "—",
                    _met_cell(r.get("met")),
                ]
                for r in section["rows"]
            ]
            out += _markdown_table(
                ["figure", "variant", "median", "min", "max", "ratio vs baseline", "goal", "met?"], table_rows
            )
            out.append("")
        for table in section.get("tables", []):
            out += [f"**{table['title']}**", ""]
            out += _markdown_table(table["headers"], table["rows"])
            out.append("")
        if section.get("notes"):
            out += [f"- {note}" for note in section["notes"]]
            out.append("")
        for plot in section.get("plots", []):
            out += [f"![{Path(plot).stem}]({plot})", ""]
    return "\n".join(out).rstrip() + "\n"


# -----------------------------------------------------------------------------------------------
# Plots
# -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Series:
    """One curve: points and a legend label (``style`` is a matplotlib format string)."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    style: str = "o-"


@dataclass(frozen=True)
class Annotation:
    """Text with an arrow to a point of the plot."""

    text: str
    xy: tuple[float, float]
    xytext: tuple[float, float]


def save_line_plot(
    path: str | os.PathLike[str],
    series: Sequence[Series],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    log_x: bool = False,
    log_y: bool = False,
    hlines: Sequence[tuple[float, str]] = (),
    vlines: Sequence[tuple[float, str]] = (),
    annotations: Sequence[Annotation] = (),
    xticks: Sequence[float] = (),
    legend_loc: LegendLoc = "best",
) -> Path:
    """Draw *series* as lines into a PNG at *path* (matplotlib, Agg backend; no display needed).

    ``hlines``/``vlines`` are ``(value, label)`` reference lines (dashed/dotted, in the legend);
    ``xticks`` labelled x positions (default: matplotlib's); ``legend_loc`` a matplotlib
    legend location, or ``"below"`` for a two-column legend under the axes. Returns the path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    try:
        for s in series:
            ax.plot(list(s.x), list(s.y), s.style, label=s.label)
        for value, label in hlines:
            ax.axhline(value, color="tab:red", linestyle="--", linewidth=1, label=label)
        for value, label in vlines:
            ax.axvline(value, color="grey", linestyle=":", linewidth=1, label=label)
        for a in annotations:
            ax.annotate(a.text, xy=a.xy, xytext=a.xytext, fontsize=8,
                        arrowprops={"arrowstyle": "->", "color": "black", "linewidth": 0.8})
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        readable = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}")
        if xticks:
            ax.set_xticks(list(xticks))
            ax.xaxis.set_minor_formatter(FuncFormatter(lambda _v, _pos: ""))
        ax.xaxis.set_major_formatter(readable)
        ax.yaxis.set_major_formatter(readable)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        if legend_loc == "below":  # under the axes, in two columns: for plots whose curves fill the area
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
        else:
            ax.legend(fontsize=8, loc=legend_loc)
        fig.tight_layout()
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, bbox_inches="tight" if legend_loc == "below" else None)
    finally:
        plt.close(fig)
    return out


# -----------------------------------------------------------------------------------------------
# The benchmark protocol
# -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Context:
    """What the runner hands each benchmark.

    ``ddb`` is the one shared DynamoDB Local (None for benchmarks that do not need it);
    ``out_dir`` where plots go (the results directory); ``quick`` asks for a few short
    rounds (a smoke run: numbers indicative only).
    """

    out_dir: Path
    ddb: DynamoDBLocal | None = None
    quick: bool = False


class Benchmark(Protocol):
    """A benchmark module: ``NAME``, ``TITLE``, ``NEEDS_DYNAMODB`` and ``run(ctx) -> Section``."""

    NAME: str
    TITLE: str
    NEEDS_DYNAMODB: bool

    def run(self, ctx: Context) -> Section: ...


def log(message: str) -> None:
    """Progress line on stderr (results go to files)."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)
