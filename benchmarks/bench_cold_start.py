"""Lambda cold start: zipped size of every generated asset, import time of every bundled handler.

Two figures (see ``benchmarks/README.md``):

1. **Asset size** — each Lambda asset directory of ``app.py``'s synthesized cloud assembly
   (found through the function's ``Metadata["aws:asset:path"]``, as
   :func:`constructs_lib.testing.asset_dir` does), zipped in memory with deflate. Goal: the
   sources ≤ 100 KB (the bytecode comes on top, docs/adr/0018); the table shows both.
2. **Extra import time** of each bundled handler module over ``import boto3`` in a fresh
   interpreter of the function's runtime version (found like the bundler finds it, with boto3
   installed for it): child processes ``python3.X -B -c "import boto3"`` (baseline) and
   ``python3.X -B -c "import boto3; import <handler module>"`` with the asset directory as
   shipped (its bytecode included) on ``PYTHONPATH``, run interleaved; each child times its
   imports with ``perf_counter`` and prints them, so interpreter start-up is not in the figure.
   Goal ≤ 10 ms for every handler; a row names the worst one (highest median) and repeats its figure.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version as installed_version
from pathlib import Path

from benchmarks._harness import Context, Row, Section, Stats, Table, interleave, log
from benchmarks.bench_synth import APP, synth_subprocess
from constructs_lib.assets import bytecode

NAME = "cold_start"
TITLE = "Lambda cold start"
NEEDS_DYNAMODB = False

#: Zipped asset goal (KB, 1 KB = 1,024 bytes).
SIZE_GOAL_KB = 100
#: Extra import time goal over `import boto3` (ms), for every handler.
IMPORT_GOAL_MS = 10
#: Modules a bundled handler must never import.
FORBIDDEN = ("aws_cdk", "jsii", "constructs")

_CHILD = """\
import sys, time, json
t0 = time.perf_counter()
import boto3
t1 = time.perf_counter()
before = set(sys.modules)
module = None
if {module!r}:
    import importlib
    module = importlib.import_module({module!r})
t2 = time.perf_counter()
new = sorted(set(sys.modules) - before)
import os
compiled = [m for m in new if getattr(sys.modules[m], "__cached__", None) and os.path.exists(sys.modules[m].__cached__)]
print(json.dumps({{"boto3": t1 - t0, "extra": t2 - t1, "file": getattr(module, "__file__", None),
                  "new_modules": len(new), "from_bytecode": len(compiled), "version": "%d.%d.%d" % sys.version_info[:3],
                  "forbidden": [m for m in new if m.split(".")[0] in {forbidden!r}]}}))
"""

#: boto3 for an interpreter of the functions' runtime version is installed here once (pip --target).
BOTO3_CACHE = Path(__file__).resolve().parents[1] / ".make" / "bench-boto3"



@dataclass(frozen=True)
class Plan:
    """Rounds of the import-time figure."""

    import_rounds: int

    @classmethod
    def for_context(cls, ctx: Context) -> Plan:
        return cls(2) if ctx.quick else cls(8)


@dataclass(frozen=True)
class LambdaAsset:
    """One function of the synthesized app and where its code is."""

    stack: str
    logical_id: str
    handler: str
    directory: Path
    runtime: str = "python3.13"

    @property
    def python_version(self) -> str:
        return self.runtime.removeprefix("python")

    @property
    def module(self) -> str:
        return self.handler.rsplit(".", 1)[0]

    def code_digest(self) -> str:
        """Hash of the asset's Python files (what an import reads; model.json is read only when invoked)."""
        digest = hashlib.sha256()
        for path in sorted(self.directory.rglob("*.py")):
            digest.update(path.relative_to(self.directory).as_posix().encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()


def lambda_assets(cdk_out: Path) -> list[LambdaAsset]:
    """Every ``AWS::Lambda::Function`` of every stack template in *cdk_out*, with its asset directory."""
    from constructs_lib.testing import asset_dir

    found = []
    for path in sorted(cdk_out.glob("*.template.json")):
        template = json.loads(path.read_text(encoding="utf-8"))
        for lid, resource in template.get("Resources", {}).items():
            if resource.get("Type") == "AWS::Lambda::Function":
                props = resource["Properties"]
                found.append(LambdaAsset(path.name.removesuffix(".template.json"), lid, props["Handler"],
                                         asset_dir(cdk_out, template, lid), props.get("Runtime", "python3.13")))
    return found


@dataclass(frozen=True)
class ZipSize:
    """An asset directory zipped in memory: total bytes, unzipped bytes, and each file's compressed bytes."""

    zipped: int
    unzipped: int
    per_file: dict[str, int]


def zipped_size(directory: Path, *, bytecode: bool = True) -> ZipSize:
    """*directory* zipped in memory with deflate (zlib's default level); without its ``.pyc``
    files unless ``bytecode``."""
    buffer = io.BytesIO()
    raw = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in directory.rglob("*") if p.is_file() and (bytecode or p.suffix != ".pyc")):
            archive.write(path, path.relative_to(directory).as_posix())
            raw += path.stat().st_size
        per_file = {info.filename: info.compress_size for info in archive.infolist()}
    return ZipSize(len(buffer.getvalue()), raw, per_file)


@dataclass(frozen=True)
class Interpreter:
    """The interpreter the import children run, and where boto3 comes from for it."""

    executable: str
    version: str
    boto3_path: Path | None  # None: the interpreter's own site-packages
    matches_runtime: bool

    def describe(self) -> str:
        where = f"boto3 installed for it in `{self.boto3_path}`" if self.boto3_path else "its own boto3"
        if self.matches_runtime:
            return f"`{self.executable}` (Python {self.version}, the functions' runtime version; {where})"
        return (f"`{self.executable}` (Python {self.version}: **no interpreter of the functions' runtime version was "
                f"found**, so this is the synth interpreter; {where})")


def runtime_interpreter(version: str) -> Interpreter:
    """An interpreter of Python *version* with boto3 importable (installed once with pip --target), else this one."""
    compiler = bytecode.compiler_for(version)
    if compiler is not None:
        if compiler.executable == sys.executable:
            return Interpreter(sys.executable, compiler.full_version, None, True)
        target = BOTO3_CACHE / f"py{version}-boto3-{installed_version('boto3')}"
        if not (target / "boto3").is_dir():
            log(f"cold_start: installing boto3 {installed_version('boto3')} for Python {version} into {target}")
            proc = subprocess.run(
                [compiler.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target",
                 str(target), f"boto3=={installed_version('boto3')}"], capture_output=True, text=True, check=False,
            )
            if proc.returncode != 0:
                log(f"cold_start: could not install boto3 for Python {version}: {proc.stderr.strip()[-300:]}")
                shutil.rmtree(target, ignore_errors=True)
        if (target / "boto3").is_dir():
            return Interpreter(compiler.executable, compiler.full_version, target, True)
    return Interpreter(sys.executable, sys.version.split()[0], None, False)


def _import_child(module: str, pythonpath: Path | None, cwd: Path, python: Interpreter) -> dict[str, object]:
    """Run one fresh interpreter (``-B``: never writes bytecode) importing boto3 then *module*; its report."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
    paths = [str(p) for p in (pythonpath, python.boto3_path) if p is not None]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    proc = subprocess.run(
        [python.executable, "-B", "-c", _CHILD.format(module=module, forbidden=FORBIDDEN)],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"importing {module or 'boto3'} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _source_only_copy(asset: LambdaAsset, root: Path) -> Path:
    """A copy of the asset without its bytecode: what ships when no interpreter of the runtime exists."""
    target = root / f"{asset.stack}-{asset.logical_id}"
    shutil.copytree(asset.directory, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _sizes(assets: list[LambdaAsset]) -> tuple[list[Row], Table, str]:
    rows, table_rows = [], []
    seen: dict[Path, tuple[ZipSize, ZipSize]] = {}
    for a in assets:
        key = a.directory.resolve()
        if key not in seen:
            seen[key] = zipped_size(a.directory), zipped_size(a.directory, bytecode=False)
        size, sources = seen[key]
        zipped, raw, files = size.zipped, size.unzipped, len(size.per_file)
        pyc_kb = sum(b for n, b in size.per_file.items() if n.endswith(".pyc")) / 1024
        kb = zipped / 1024
        source_kb = sources.zipped / 1024  # the bytecode comes on top by choice (docs/adr/0018)
        rows.append(Row.measured("Lambda asset sources zipped (deflate)", f"{a.stack}/{a.logical_id} ({a.handler})",
                                 "KB", [source_kb], goal=f"≤ {SIZE_GOAL_KB} KB", met=source_kb <= SIZE_GOAL_KB))
        table_rows.append([a.stack, a.logical_id, f"`{a.handler}`", a.runtime, f"`{a.directory.name[:18]}…`", str(files),
                           f"{raw / 1024:,.1f}", f"{kb:,.1f}", f"{source_kb:,.1f}", f"{pyc_kb:,.1f}"])
    table = Table(title="Generated Lambda assets (from the synthesized cloud assembly)",
                  headers=["stack", "function", "handler", "runtime", "asset directory", "files", "unzipped KB",
                           "zipped KB", "sources alone, zipped KB", "of which bytecode (compressed)"],
                  rows=table_rows)
    largest = max((total for total, _ in seen.values()), key=lambda z: z.zipped)
    top = sorted(largest.per_file.items(), key=lambda kv: -kv[1])[:6]
    note = (f"Largest asset ({largest.zipped / 1024:,.1f} KB zipped, {len(largest.per_file)} files; zip headers "
            f"included): its biggest files compressed — " + ", ".join(f"`{n}` {b / 1024:.1f} KB" for n, b in top) + ".")
    return rows, table, note


def _imports(assets: list[LambdaAsset], plan: Plan, work: Path) -> tuple[list[Row], list[str]]:
    # One variant per distinct (handler module, code): identical code imports identically.
    distinct: dict[tuple[str, str], LambdaAsset] = {}
    for a in assets:
        distinct.setdefault((a.module, a.code_digest()), a)
    versions = sorted({a.python_version for a in assets})
    if len(versions) != 1:
        raise RuntimeError(f"the app's functions run several Python versions {versions}; one interpreter measures one")
    python = runtime_interpreter(versions[0])
    reports: dict[str, list[dict[str, object]]] = {}
    variants: dict[str, Callable[[], object]] = {}

    def variant(name: str, module: str, path: Path | None) -> None:
        reports[name] = []
        variants[name] = lambda: reports[name].append(_import_child(module, path, work, python))

    base = "import boto3 (baseline)"
    variant(base, "", None)
    shipped: dict[str, tuple[LambdaAsset, str]] = {}
    for a in distinct.values():
        has_pyc = any(a.directory.rglob("*.pyc"))
        name = f"+ import {a.module} (as shipped{': with bytecode' if has_pyc else ': source only'})"
        variant(name, a.module, a.directory)
        shipped[name] = (a, f"+ import {a.module} (source only, no bytecode)")
    copies = work / "source-only"
    for a, source_name in shipped.values():
        variant(source_name, a.module, _source_only_copy(a, copies))
    log(f"cold_start: import times with {python.executable}, {plan.import_rounds} rounds x {len(variants)} fresh "
        "interpreters")
    interleave(variants, baseline=base, rounds=plan.import_rounds, ops=1, warmup_ops=1)
    timed = {name: r[1:] for name, r in reports.items()}  # drop each variant's warm-up child

    def ms(name: str, key: str) -> list[float]:
        return [float(r[key]) * 1000 for r in timed[name]]  # type: ignore[arg-type]

    base_total = ms(base, "boto3")
    rows = [Row.measured("import time in a fresh interpreter", base, "ms", base_total, baseline=True)]
    problems = []
    from_bytecode: dict[str, int] = {}

    def ratios(n: str) -> list[float]:
        total = [b + e for b, e in zip(ms(n, "boto3"), ms(n, "extra"), strict=True)]
        return [t / b for t, b in zip(total, base_total, strict=True)]

    for name, (a, source_name) in shipped.items():
        for n, goal in ((name, f"≤ {IMPORT_GOAL_MS} ms extra"), (source_name, "none (context: source only)")):
            extra = ms(n, "extra")
            rows.append(Row.measured("extra import time over import boto3 (measured in the child)", n, "ms", extra,
                                     ratios=ratios(n), goal=goal,
                                     met=Stats.of(extra).median <= IMPORT_GOAL_MS if n == name else None))
            for r in timed[n]:
                where = str(r["file"] or "")
                root = a.directory if n == name else copies
                if not where.startswith(str(root)) or r["forbidden"]:
                    problems.append(f"{n}: imported from {where!r}, forbidden modules {r['forbidden']}")
                if n == source_name and r["from_bytecode"]:
                    problems.append(f"{n}: {r['from_bytecode']} modules came from bytecode")
            if n == name:
                from_bytecode[a.module] = int(timed[n][-1]["from_bytecode"])  # type: ignore[call-overload]
    # The goal holds for every handler: one row names the worst (highest median, as shipped) and repeats it.
    worst = max(shipped, key=lambda n: Stats.of(ms(n, "extra")).median)
    worst_extra = ms(worst, "extra")
    rows.append(Row.measured(
        "worst handler: extra import time over import boto3 (measured in the child)",
        f"{shipped[worst][0].module} (worst of {len(shipped)} handler modules, as shipped)", "ms", worst_extra,
        ratios=ratios(worst), goal=f"≤ {IMPORT_GOAL_MS} ms extra, every handler",
        met=all(Stats.of(ms(n, "extra")).median <= IMPORT_GOAL_MS for n in shipped)))
    paired = {
        name: [b_h + e - b for b_h, e, b in zip(ms(name, "boto3"), ms(name, "extra"), base_total, strict=True)]
        for name in shipped
    }
    notes = [
        (f"Interpreter: {python.describe()}. Every child is a fresh `{Path(python.executable).name} -B -c …` (`-B`: "
         f"no bytecode written, so the assets stay as synthesized, as on Lambda, whose `/var/task` is read-only), "
         f"with the asset directory (+ boto3) as `PYTHONPATH` and a scratch directory as working directory. *As "
         f"shipped* imports the synthesized asset itself, whose `__pycache__/*.cpython-3X.pyc` (when the synth found "
         f"an interpreter of the runtime's version; see `constructs_lib.assets.bytecode`) hold the handler's import path; "
         f"modules the handler's import loaded from that bytecode: "
         + ", ".join(f"{m} {k}" for m, k in from_bytecode.items())
         + ". *Source only* is a copy without `__pycache__`: what ships where no such interpreter exists, compiled "
         f"at every cold start. The child measures `import boto3` and then `import <handler module>` with "
         f"`time.perf_counter()` and prints both, so interpreter start-up is not in either figure. "
         f"{len(variants)} variants ({len(distinct)} distinct handler modules of {len(assets)} functions — identical "
         f"code imports identically — as shipped and source only) × {plan.import_rounds} "
         f"interleaved rounds after one untimed child each. *ratio* = (boto3 + handler) ÷ the baseline child's boto3 "
         f"import of the same round. Paired difference of the totals (handler child's boto3 + extra − baseline "
         f"child's boto3), median (min–max): "
         + "; ".join(f"{n.removeprefix('+ import ').split(' ')[0]} {Stats.of(v).median:.1f} ms "
                     f"({Stats.of(v).minimum:.1f}–{Stats.of(v).maximum:.1f})" for n, v in paired.items())
         + ". It carries the noise of two separate boto3 imports; the in-child figure does not."),
        (f"Sanity checks: every handler module was imported from its asset directory and none imported "
         f"{', '.join(FORBIDDEN)}; the source-only copies loaded no bytecode: "
         + ("yes." if not problems else "**no** — " + "; ".join(sorted(set(problems))[:5]))),
    ]
    return rows, notes


def run(ctx: Context) -> Section:
    """Synthesize app.py as `cdk synth` would, then measure its Lambda assets."""
    plan = Plan.for_context(ctx)
    with tempfile.TemporaryDirectory(prefix="bench-cold-start-") as tmp:
        work = Path(tmp)
        log("cold_start: synthesizing app.py (as cdk synth runs it)")
        cdk_out = synth_subprocess(APP, work / "cdk.out")
        assets = lambda_assets(cdk_out)
        size_rows, size_table, size_note = _sizes(assets)
        (work / "scratch").mkdir()
        import_rows, import_notes = _imports(assets, plan, work / "scratch")
    notes = [
        ("Sizes: each asset directory referenced by a function's `Metadata[\"aws:asset:path\"]` in the assembly "
         "`python app.py` writes with the CLI's context (`constructs_lib.testing.asset_dir`), zipped in memory "
         "with deflate at zlib's default level (what Lambda receives is a zip of the same files). Functions "
         "sharing an asset directory share its size."),
        size_note,
        *import_notes,
    ]
    return Section(
        name=NAME,
        title=TITLE,
        summary=(
            "What a generated Lambda function costs at cold start: the zipped size of each asset of `app.py`'s "
            "synthesized cloud assembly, and the time importing each bundled handler module adds to `import boto3` "
            "in a fresh interpreter."
        ),
        rows=size_rows + import_rows,
        tables=[size_table],
        notes=notes,
        meta={"plan": plan.__dict__, "functions": len(assets)},
    )
