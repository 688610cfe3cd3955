"""Synth cost: ``app.py`` vs the same stacks written by hand, in-process cost, growth with model size.

Three figures (see ``benchmarks/README.md``):

1. **Synthesis as ``cdk synth`` runs it** — wall time of ``python app.py`` in a subprocess
   (``CDK_OUTDIR`` a fresh temp dir, ``CDK_CONTEXT_JSON`` = ``cdk.json``'s context plus the
   CLI's metadata flags) vs ``python benchmarks/handwritten_app.py``, the same resources in
   plain aws-cdk-lib. Both pay the jsii/Node start; goal ≤ 1.15×. The two apps' templates are
   compared resource type by resource type first, so the comparison stays honest if
   ``app.py`` grows.
2. **In-process construction + synth** — one process that has already imported aws_cdk and
   started jsii; building both stacks and ``app.synth()`` for each app, interleaved.
3. **Growth** — a generated model of 10, 50 and 200 entities (two access patterns each) and a
   ``SingleTable`` on it, built and synthesized in-process; plotted to ``synth_growth.png``.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._harness import (
    BENCH_DIR,
    Context,
    Row,
    Section,
    Series,
    Stats,
    Table,
    interleave,
    log,
    save_line_plot,
)
from benchmarks.template_parity import compare_templates, load_templates
from constructs_lib.assets.analysis_cache import ENV_DISABLE as ANALYSIS_CACHE_ENV

NAME = "synth"
TITLE = "Synth cost"
NEEDS_DYNAMODB = False

REPO = BENCH_DIR.parent
APP = REPO / "app.py"
HANDWRITTEN = BENCH_DIR / "handwritten_app.py"
#: The stacks of app.py the hand-written app reproduces.
STACKS = ("ShopStack", "SaasStack")
PLOT_FILE = "synth_growth.png"
#: Synth-time goal: app.py at most 15 % slower than the hand-written app.
SYNTH_GOAL = 1.15
#: In-process goal (build + synth with jsii running): the constructs' own cost at most 30 % more.
INPROCESS_GOAL = 1.30
GROWTH_SIZES = (10, 50, 200)
#: What the CDK CLI adds to the context when it runs the app (cdk synth).
CLI_CONTEXT = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:version-reporting": True,
}


@dataclass(frozen=True)
class Plan:
    """Rounds per figure."""

    subprocess_rounds: int
    inprocess_rounds: int
    growth_rounds: int

    @classmethod
    def for_context(cls, ctx: Context) -> Plan:
        return cls(2, 2, 2) if ctx.quick else cls(5, 6, 5)


# -----------------------------------------------------------------------------------------------
# Running an app as `cdk synth` does
# -----------------------------------------------------------------------------------------------
def cli_environment(outdir: Path, **extra: str) -> dict[str, str]:
    """The environment ``cdk synth`` gives the app: ``CDK_OUTDIR`` and ``CDK_CONTEXT_JSON`` (cdk.json's
    context + the CLI's flags). With ``PYTHONPYCACHEPREFIX`` in *extra*, bytecode is written there
    even where ``PYTHONDONTWRITEBYTECODE`` is set, as on a user's machine."""
    context = json.loads((REPO / "cdk.json").read_text(encoding="utf-8")).get("context", {})
    env = dict(os.environ)
    if "PYTHONPYCACHEPREFIX" in extra:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        CDK_OUTDIR=str(outdir),
        CDK_CONTEXT_JSON=json.dumps({**context, **CLI_CONTEXT}),
        JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
        CDK_DISABLE_CLI_TELEMETRY="true",
        **extra,
    )
    return env


#: ``python -c`` program synthesizing only :data:`STACKS` of app.py, as ``build_app`` builds them.
#: The same steps as :func:`build_covered`, inline so the child imports nothing of the benchmarks.
COVERED_DRIVER = f"""\
import os
import aws_cdk as cdk
import app as showcase
names = {STACKS!r}
registry = getattr(showcase, "STACKS", None) or {{name: (getattr(showcase, name), None) for name in names}}
app = cdk.App(outdir=os.environ["CDK_OUTDIR"])
for name in names:
    stack_class, description = registry[name]
    stack_class(app, name, description=description)
app.synth()
"""


def build_covered(outdir: str) -> Any:
    """A ``cdk.App`` with only :data:`STACKS` of app.py, each built as app.py's ``build_app`` builds it.

    Uses app.py's ``STACKS`` registry (name → (stack class, description)) when it has one, else
    its module-level stack classes of the same names.
    """
    import aws_cdk as cdk

    import app as showcase

    registry = getattr(showcase, "STACKS", None) or {name: (getattr(showcase, name), None) for name in STACKS}
    app = cdk.App(outdir=outdir)
    for name in STACKS:
        stack_class, description = registry[name]
        stack_class(app, name, description=description)
    return app


def synth_subprocess(script: Path | str, outdir: Path, **extra_env: str) -> Path:
    """Run ``python <script>`` (or ``python -c <program>`` for a str) with the CLI's environment, writing
    the assembly to *outdir*; return *outdir*.

    Raises
    ------
    RuntimeError
        If the app exits non-zero (with the end of its stderr).
    """
    argv = [sys.executable, str(script)] if isinstance(script, Path) else [sys.executable, "-c", script]
    proc = subprocess.run(
        argv, cwd=REPO, env=cli_environment(outdir, **extra_env), capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        name = script.name if isinstance(script, Path) else "python -c program"
        raise RuntimeError(f"{name} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return outdir


def resource_types(outdir: Path) -> dict[str, Counter[str]]:
    """Stack name → resource type → count, from the ``*.template.json`` files of an assembly."""
    out: dict[str, Counter[str]] = {}
    for path in sorted(outdir.glob("*.template.json")):
        template = json.loads(path.read_text(encoding="utf-8"))
        out[path.name.removesuffix(".template.json")] = Counter(
            r["Type"] for r in template.get("Resources", {}).values()
        )
    return out


def compare_types(ours: dict[str, Counter[str]], theirs: dict[str, Counter[str]]) -> tuple[list[list[str]], list[str]]:
    """Table rows (stack, type, app.py, hand-written, same?) and the list of differences."""
    rows, diffs = [], []
    for stack in sorted(set(ours) | set(theirs)):
        a, b = ours.get(stack, Counter()), theirs.get(stack, Counter())
        for rtype in sorted(set(a) | set(b)):
            same = a[rtype] == b[rtype]
            rows.append([stack, f"`{rtype}`", str(a[rtype]), str(b[rtype]), "yes" if same else "**no**"])
            if not same:
                diffs.append(f"{stack} {rtype}: app.py {a[rtype]}, hand-written {b[rtype]}")
    return rows, diffs


class Outdirs:
    """Fresh, numbered output directories under one temp root (created outside timed blocks' cost),
    and the environment every synth subprocess gets: bytecode written to one ``pycache`` prefix
    there, so after the untimed first synth neither app compiles its modules again (as a user's
    second ``cdk synth``; aws-cdk-lib's were compiled at install, the repository's own are not
    where ``PYTHONDONTWRITEBYTECODE`` is set)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._n = itertools.count()
        self.env = {"PYTHONPYCACHEPREFIX": str(root / "pycache")}

    def new(self, label: str) -> Path:
        path = self.root / f"{label}-{next(self._n)}"
        path.mkdir()
        return path


#: Hand-written asset directory ← (stack, function logical-id prefix) of app.py whose asset it copies.
ASSET_SOURCES = {
    "shop-counter": ("ShopStack", "ProductViews"),
    "shop-audit": ("ShopStack", "Audit"),
    "orders-api": ("ShopStack", "OrdersApi"),
    "saas-audit": ("SaasStack", "Audit"),
}
#: The hand-written app's contract parameters ← the base logical id of app.py's ShopStack parameter.
CONTRACT_SOURCES = {"model": "DataContractModel", "model-fingerprint": "DataContractModelFingerprint",
                    "contract": "DataContract"}


def stage_from_assembly(cdk_out: Path, root: Path) -> Path:
    """The hand-written app's asset directories under *root*: copies of app.py's synthesized assets.

    So both apps hash and copy exactly the same bytes (whatever app.py's bundling ships). The shop
    contract's literal parameter values (model JSON, fingerprint, contract) are taken from app.py's
    template the same way, as a build step would generate them.
    """
    from benchmarks import handwritten_app
    from benchmarks.template_parity import base_id
    from constructs_lib.testing import asset_dir

    assert set(ASSET_SOURCES) == {handwritten_app.SHOP_COUNTER, handwritten_app.SHOP_AUDIT, handwritten_app.ORDERS_API,
                                  handwritten_app.SAAS_AUDIT}
    for name, (stack, prefix) in ASSET_SOURCES.items():
        template = json.loads((cdk_out / f"{stack}.template.json").read_text(encoding="utf-8"))
        shutil.copytree(asset_dir(cdk_out, template, prefix), root / name)
    shop = json.loads((cdk_out / "ShopStack.template.json").read_text(encoding="utf-8"))["Resources"]
    values = {base_id(i): r["Properties"]["Value"] for i, r in shop.items() if r["Type"] == "AWS::SSM::Parameter"}
    (root / handwritten_app.SHOP_CONTRACT).write_text(
        json.dumps({name: values[source] for name, source in CONTRACT_SOURCES.items()}), encoding="utf-8")
    return root


@contextmanager
def _workspace() -> Iterator[tuple[Outdirs, Path, Path]]:
    """A temp root with output dirs, app.py's covered stacks synthesized once, and the hand-written
    app's assets staged from them; removed on exit."""
    root = Path(tempfile.mkdtemp(prefix="bench-synth-"))
    try:
        dirs = Outdirs(root)
        log(f"synth: synthesizing app.py's {' + '.join(STACKS)} once (assets for the baseline, warm-up)")
        covered_out = synth_subprocess(COVERED_DRIVER, dirs.new("covered"), **dirs.env)
        yield dirs, stage_from_assembly(covered_out, root / "handwritten-assets"), covered_out
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -----------------------------------------------------------------------------------------------
# 1. Subprocess synth
# -----------------------------------------------------------------------------------------------
def _subprocess_figure(
    dirs: Outdirs, assets: Path, covered_out: Path, plan: Plan,
) -> tuple[list[Row], list[Table], list[str], dict[str, Any]]:
    log("synth: synthesizing the whole app.py and the hand-written app once (resources, warm-up)")
    full = resource_types(synth_subprocess(APP, dirs.new("app"), **dirs.env))
    ours = resource_types(covered_out)
    hand_out = synth_subprocess(HANDWRITTEN, dirs.new("hand"), HANDWRITTEN_ASSETS=str(assets), **dirs.env)
    theirs = resource_types(hand_out)
    type_rows, diffs = compare_types(ours, theirs)
    parity = compare_templates(load_templates(covered_out, STACKS), load_templates(hand_out, STACKS))
    extra_stacks = sorted(set(full) - set(STACKS))
    covered = " + ".join(STACKS)

    variants: dict[str, Callable[[], object]] = {
        f"hand-written aws-cdk-lib app ({covered})":
            lambda: synth_subprocess(HANDWRITTEN, dirs.new("hand"), HANDWRITTEN_ASSETS=str(assets), **dirs.env),
        f"app.py's {covered}": lambda: synth_subprocess(COVERED_DRIVER, dirs.new("covered"), **dirs.env),
        f"app.py's {covered}, analysis cache off": lambda: synth_subprocess(
            COVERED_DRIVER, dirs.new("covered"), **dirs.env, **{ANALYSIS_CACHE_ENV: "0"}),
        f"python app.py, all {len(full)} stacks": lambda: synth_subprocess(APP, dirs.new("app"), **dirs.env),
    }
    base, ours_name, cold_name, full_name = variants
    log(f"synth: subprocess synth, {plan.subprocess_rounds} rounds x {len(variants)} apps")
    t = interleave(variants, baseline=base, rounds=plan.subprocess_rounds, ops=1, warmup_ops=0)
    figure = "synthesis in a fresh process, as cdk synth runs the app"
    ratio = Stats.of(t.time_ratio(ours_name))
    resources = f"resources in {covered}"
    rows = [
        Row.measured(figure, base, "s", t.seconds[base], baseline=True),
        Row.measured(figure, ours_name, "s", t.seconds[ours_name], ratios=t.time_ratio(ours_name),
                     goal=f"≤ {SYNTH_GOAL:.2f}× (same templates)", met=ratio.median <= SYNTH_GOAL and not parity),
        Row.measured(figure, cold_name, "s", t.seconds[cold_name], ratios=t.time_ratio(cold_name),
                     goal="none (context: a user's first synth after installing or upgrading)"),
        Row.measured(figure, full_name, "s", t.seconds[full_name], ratios=t.time_ratio(full_name),
                     goal="none (context: more stacks than the baseline)" if extra_stacks else "none (context)"),
        Row.measured(resources, "app.py", "resources", [sum(sum(c.values()) for c in ours.values())]),
        Row.measured(resources, "hand-written app", "resources", [sum(sum(c.values()) for c in theirs.values())],
                     goal="same resources as app.py", met=not diffs and not parity),
    ]
    table = Table(title="Resource types of the two apps' templates (what the synth-time comparison compares)",
                  headers=["stack", "type", "app.py", "hand-written", "same?"], rows=type_rows)
    notes = [
        (f"Subprocess synth: `{Path(sys.executable).name} benchmarks/handwritten_app.py` (baseline) vs app.py's "
         f"{covered} alone (`{Path(sys.executable).name} -c` building an App with just those two of app.py's stacks, "
         f"as its `build_app` builds them — the like-for-like comparison the goal applies to) and the whole "
         f"`{Path(sys.executable).name} app.py` ({', '.join(sorted(full))}; context), each with `CDK_OUTDIR` a fresh "
         "temp dir and `CDK_CONTEXT_JSON` = cdk.json's "
         f"context plus what the CLI adds ({', '.join(f'`{k}`' for k in CLI_CONTEXT)}): the environment `cdk synth` "
         f"gives the app, without the CLI's own start-up (the same for all). Wall time of the whole process (Python "
         f"and jsii/Node start, imports, construction, synthesis, asset staging and copying), {plan.subprocess_rounds} "
         f"interleaved rounds after one untimed synth of each (the resource comparison). The hand-written app's "
         f"{len(ASSET_SOURCES)} Lambda asset directories are copies of the asset directories app.py's functions got "
         f"in that first synth, and its contract parameters' literal values are app.py's (made before timing), so "
         f"both apps hash and copy exactly the same bytes; app.py also stages its assets (bundling) inside the "
         f"timed process, which is part of what it costs. Every process writes and reads its bytecode under one "
         f"`PYTHONPYCACHEPREFIX` of the run, so after the first synth neither app compiles its modules again, as on "
         f"a user's machine (this one sets `PYTHONDONTWRITEBYTECODE`). The bundler's analysis of the shipped "
         f"modules (slimming, imports) is read from the per-user cache the first synth filled, as in every synth "
         f"after a user's first with a given library version; the \"analysis cache off\" row "
         f"(`{ANALYSIS_CACHE_ENV}=0`) analyses them again in every process, as that first synth does."),
        (f"Resource comparison ({covered}, `benchmarks/template_parity.py`): " + (
            "the two apps synthesize the same resources in both stacks — the same types in the same numbers, and "
            "each resource (matched by type and logical id without its hash) with the same properties, references, "
            "explicit dependencies and deletion policies, asset hashes included; only descriptions and the "
            "dashboards' Markdown text are not compared."
            if not parity else
            f"**the templates differ, so the ratios compare different apps and the goals count as not met** "
            f"({len(parity)} difference(s)): " + "; ".join(parity[:12]) + ("; …" if len(parity) > 12 else "") + ".")
         + (f" app.py also synthesizes {', '.join(extra_stacks)}, which the hand-written app does not reproduce: "
            f"they are only in the `python app.py` context row." if extra_stacks else "")),
    ]
    meta = {"app_stacks": sorted(full), "resource_types": {"app.py": {s: dict(c) for s, c in ours.items()},
                               "handwritten": {s: dict(c) for s, c in theirs.items()}},
            "type_differences": diffs, "template_differences": parity}
    return rows, [table], notes, {**meta, "parity": not parity}


# -----------------------------------------------------------------------------------------------
# 2. In-process construction + synth
# -----------------------------------------------------------------------------------------------
def _inprocess_figure(dirs: Outdirs, assets: Path, plan: Plan, *, parity: bool) -> tuple[list[Row], list[str]]:
    import aws_cdk  # noqa: F401 - jsii starts here, before anything is timed

    from benchmarks import handwritten_app

    covered = " + ".join(STACKS)
    variants: dict[str, Callable[[], object]] = {
        f"hand-written {covered}": lambda: handwritten_app.build_app(str(dirs.new("hand-inproc")), assets=assets).synth(),
        f"app.py's {covered} (constructs_lib)": lambda: build_covered(str(dirs.new("app-inproc"))).synth(),
    }
    base, ours = variants
    log(f"synth: in-process build + synth, {plan.inprocess_rounds} rounds x {len(variants)} apps")
    t = interleave(variants, baseline=base, rounds=plan.inprocess_rounds, ops=1)
    figure = f"in-process: build {covered} + app.synth() (jsii already started)"
    rows = [
        Row.measured(figure, base, "ms", [s * 1000 for s in t.seconds[base]], baseline=True),
        Row.measured(figure, ours, "ms", [s * 1000 for s in t.seconds[ours]], ratios=t.time_ratio(ours),
                     goal=f"≤ {INPROCESS_GOAL:.2f}× (same templates)",
                     met=Stats.of(t.time_ratio(ours)).median <= INPROCESS_GOAL and parity),
    ]
    ours_profile = profile_build(lambda: build_covered(str(dirs.new("app-profile"))).synth())
    hand_profile = profile_build(
        lambda: handwritten_app.build_app(str(dirs.new("hand-profile")), assets=assets).synth())
    spots = "; ".join(f"{label} {ms:,.0f} ms" for label, ms in ours_profile.spots.items())
    notes = [
        (f"In-process: one Python process that has imported aws_cdk (jsii/Node already running) builds a new "
         f"`cdk.App` with the two stacks and calls `app.synth()` into a fresh directory — app.py's stacks built as its "
         f"`build_app` does vs the hand-written `build_app` — {plan.inprocess_rounds} interleaved rounds after one "
         "untimed build of each. "
         f"This isolates what the constructs cost (model validation, derived grants and filters, asset bundling, "
         f"more jsii calls) from process and jsii start-up. app.py's asset staging is content-addressed "
         f"(`{tempfile.gettempdir()}/constructs-lib-assets/<hash>`), so after the first build a rebuild only "
         f"reads and prepares the bundled files."),
        (f"Where the time goes (one more, untimed build of each under cProfile, which inflates Python-heavy work): "
         f"app.py's stacks took {ours_profile.total_ms:,.0f} ms with {ours_profile.round_trips} jsii round trips "
         f"({ours_profile.jsii_ms:,.0f} ms waiting for the kernel's answers); the hand-written app "
         f"{hand_profile.total_ms:,.0f} ms with {hand_profile.round_trips} round trips ({hand_profile.jsii_ms:,.0f} ms "
         f"waiting). app.py's own spots (cumulative, overlapping): {spots}. Before docs/adr/0056-synth-cost.md the "
         "same profile found the import analysis of the bundled runtime redone for every function (a third of the "
         "build) and 979 round trips (185 of them re-reading the table's name and creating one `Duration` per metric)."),
    ]
    return rows, notes


@dataclass(frozen=True)
class BuildProfile:
    """One build + synth under cProfile: total, jsii round trips and the time spent waiting for them, and
    named spots of constructs_lib (cumulative ms)."""

    total_ms: float
    round_trips: int
    jsii_ms: float
    spots: dict[str, float]


#: Profile spots: label → (file suffix, function name) whose cumulative time is reported.
SPOTS = {
    "asset bundling": ("constructs_lib/assets/bundling.py", "bundle"),
    "its import analysis": ("constructs_lib/assets/bytecode.py", "import_path"),
    "operations view": ("constructs_lib/constructs/operations/construct.py", "__init__"),
    "model docs and contract files": ("constructs_lib/docgen/cloud_assembly.py", "write_model_docs"),
}


def profile_build(build: Callable[[], object]) -> BuildProfile:
    """Run ``build`` once under cProfile, counting the requests sent to the jsii kernel."""
    import cProfile
    import pstats

    from jsii._kernel.providers import process as jsii_process

    original = jsii_process._NodeProcess.send
    sent = [0]

    def counted(self: Any, request: Any, response_type: Any) -> Any:
        sent[0] += 1
        return original(self, request, response_type)

    jsii_process._NodeProcess.send = counted
    profile = cProfile.Profile()
    try:
        started = time.perf_counter()
        profile.runcall(build)
        total = time.perf_counter() - started
    finally:
        jsii_process._NodeProcess.send = original
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(profile).stats

    def cumulative(suffix: str, name: str) -> float:
        return 1000 * sum(v[3] for (file, _, func), v in stats.items() if file.endswith(suffix) and func == name)

    return BuildProfile(total * 1000, sent[0], cumulative(jsii_process.__file__, "_next_message"),
                        {label: cumulative(*where) for label, where in SPOTS.items()})


# -----------------------------------------------------------------------------------------------
# 3. Growth with the model
# -----------------------------------------------------------------------------------------------
def generated_model(entities: int) -> Any:
    """A valid model of *entities* entities, each with a GSI key on one of three overloaded GSIs and two access patterns."""
    from constructs_lib.model import (
        AccessPattern,
        Entity,
        Field,
        Index,
        IndexKey,
        Model,
    )

    gsis = ("GSI1", "GSI2", "GSI3")
    ents, patterns = [], []
    for i in range(entities):
        name, gsi = f"E{i:03d}", gsis[i % len(gsis)]
        ents.append(Entity(
            name, pk=f"{name}#{{id}}", sk="META",
            fields={"id": "string", "owner": "string", "created_at": Field.timestamp()},
            indexes={gsi: IndexKey(pk=f"{name}OWNER#{{owner}}", sk="{created_at}")},
        ))
        patterns += [
            AccessPattern(f"{name} by id", entity=name, sk="="),
            AccessPattern(f"{name} by owner and date", entity=name, index=gsi, sk="between"),
        ]
    return Model(f"generated{entities}", entities=ents, indexes=[Index(g) for g in gsis[: min(entities, 3)]],
                 access_patterns=patterns, ttl_attribute="expires_at")


def _growth_figure(ctx: Context, dirs: Outdirs, plan: Plan) -> tuple[list[Row], list[str], list[str], dict[str, Any]]:
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as dynamodb

    from constructs_lib import SingleTable

    def one(n: int) -> None:
        app = cdk.App(outdir=str(dirs.new(f"growth{n}")))
        stack = cdk.Stack(app, f"Generated{n}")
        SingleTable(stack, "Data", model=generated_model(n), stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        app.synth()

    variants: dict[str, Callable[[], object]] = {
        f"{n} entities, {2 * n} access patterns": (lambda n=n: one(n)) for n in GROWTH_SIZES
    }
    names = list(variants)
    base = names[0]
    log(f"synth: growth, {plan.growth_rounds} rounds x {len(variants)} model sizes")
    t = interleave(variants, baseline=base, rounds=plan.growth_rounds, ops=1)
    figure = "Model + SingleTable: build + synth in-process"
    rows: list[Row] = []
    medians = []
    for n, name in zip(GROWTH_SIZES, names, strict=True):
        ms = [s * 1000 for s in t.seconds[name]]
        medians.append(Stats.of(ms).median)
        if name == base:
            rows.append(Row.measured(figure, name, "ms", ms, baseline=True))
        else:
            linear = n / GROWTH_SIZES[0]
            ratio = Stats.of(t.time_ratio(name)).median
            rows.append(Row.measured(figure, name, "ms", ms, ratios=t.time_ratio(name),
                                     goal=f"≤ {linear:.0f}× (no worse than linear)", met=ratio <= linear))
    small, large = GROWTH_SIZES[0], GROWTH_SIZES[-1]
    per_entity = (medians[-1] - medians[0]) / (large - small)
    save_line_plot(
        ctx.out_dir / PLOT_FILE,
        [Series("build + synth (median)", list(GROWTH_SIZES), medians),
         Series(f"linear from {small} entities", list(GROWTH_SIZES),
                [medians[0] * n / small for n in GROWTH_SIZES], "--")],
        title="Synth time vs model size (Model + SingleTable, in-process)",
        xlabel="entities in the model (2 access patterns each)", ylabel="ms (median)",
        xticks=list(GROWTH_SIZES), legend_loc="upper left",
    )
    notes = [
        (f"Growth: a generated model of N entities (`E000#{{id}}` / `META`, each with a key on one of three "
         f"overloaded GSIs and two access patterns: GetItem by id, Query by owner and date range) and a "
         f"`SingleTable` with a stream, in a new App and Stack, built and synthesized in-process (model validation "
         f"included), {plan.growth_rounds} interleaved rounds after one untimed build of each. Ratios are against the "
         f"{small}-entity build of the same round; the goal is growth no worse than linear (the fixed cost of an App "
         f"and a table keeps it well below). Marginal cost ≈ {per_entity:.2f} ms per entity "
         f"(({medians[-1]:.0f} − {medians[0]:.0f}) ms / {large - small} entities)."),
    ]
    return rows, notes, [PLOT_FILE], {"growth_median_ms": dict(zip(map(str, GROWTH_SIZES), medians, strict=True)),
                                      "ms_per_entity": round(per_entity, 3)}


# -----------------------------------------------------------------------------------------------
# Entry point
# -----------------------------------------------------------------------------------------------
def run(ctx: Context) -> Section:
    """Run the synth benchmark and return its section."""
    plan = Plan.for_context(ctx)
    with _workspace() as (dirs, assets, covered_out):
        sub_rows, tables, sub_notes, sub_meta = _subprocess_figure(dirs, assets, covered_out, plan)
        in_rows, in_notes = _inprocess_figure(dirs, assets, plan, parity=sub_meta["parity"])
        growth_rows, growth_notes, plots, growth_meta = _growth_figure(ctx, dirs, plan)
    return Section(
        name=NAME,
        title=TITLE,
        summary=(
            "What the constructs cost at synth time: `app.py` against the same resources written by hand in plain "
            "aws-cdk-lib (`benchmarks/handwritten_app.py`), as a fresh process like `cdk synth` and in-process without "
            "jsii start-up, and how synth time grows with the model."
        ),
        rows=sub_rows + in_rows + growth_rows,
        tables=tables,
        notes=sub_notes + in_notes + growth_notes,
        plots=plots,
        meta={"plan": plan.__dict__, **sub_meta, **growth_meta},
    )
