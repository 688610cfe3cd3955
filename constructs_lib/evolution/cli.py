"""Command line for evolving live models (registered by :mod:`constructs_lib.__main__`).

``lock TARGET [--lock FILE] [--advance]``: record each ``SingleTable``'s model as deployed
(``--advance``: the next GSI rollout step, after it deployed). ``diff TARGET [--lock FILE]
[--acknowledge ID] [--consumers DIR]``: the classified diff against the lock, the rollout plan and
the registered consumer slices it breaks (exit status 3 on an unacknowledged breaking change).
``backfill TARGET --table NAME``: rewrite derived keys.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..model.jsontext import load_json
from ..model.model import Model
from ..model.project_paths import shown
from .exceptions import EvolutionError, LockError  # LockError: importable from here too
from .lock import LOCK_FILE, ModelLock, TableLock

CONTEXT_LOCK = "constructs_lib:lock"
CONTEXT_ACKNOWLEDGE = "constructs_lib:acknowledge"


def add_commands(
    commands: Any, run: Callable[[argparse.Namespace], str], *, load_models: Callable[[str], Any],
    target_error: type[Exception],
) -> None:
    """Add the subcommands; ``load_models``/``target_error`` are the command line's target loader
    and its "no such target" error."""
    lock = commands.add_parser(
        "lock", help="record each SingleTable's model as deployed in the model lock",
        description="Record the model of every SingleTable in TARGET in the model lock file.",
    )
    lock.add_argument("--advance", action="store_true",
                      help="record the next rollout step (after it deployed successfully)")
    diff = commands.add_parser(
        "diff", help="classified model diff against the lock, with the GSI rollout plan",
        description="Print every model change against the lock (safe / backfill / breaking) and the rollout plan.",
    )
    backfill = commands.add_parser(
        "backfill", help="rewrite derived keys of existing items with TARGET's model",
        description="Run a resumable, rate-limited backfill of derived keys against a table (segment-parallel "
                    "Scan in this process; checkpoints in the table, so a rerun resumes).",
    )
    backfill.add_argument("--table", required=True, help="physical table name")
    backfill.add_argument("--model", help="with several tables in TARGET: the construct path of the one to use")
    backfill.add_argument("--job", default="default", help="job id (checkpoints are per job; default 'default')")
    backfill.add_argument("--segments", type=int, default=4, help="parallel Scan segments (default 4)")
    backfill.add_argument("--wcu", type=float, default=100.0, help="write budget in WCU per second (default 100)")
    backfill.add_argument("--index", action="append", default=None,
                          help="recompute only this index's keys (repeatable; default: every index)")
    backfill.add_argument("--endpoint-url", help="DynamoDB endpoint (e.g. DynamoDB Local)")
    backfill.add_argument("--region", default=None, help="AWS region")
    backfill.add_argument("--status", action="store_true", help="only print the job's progress")
    for sub in (lock, diff, backfill):
        sub.add_argument("target", metavar="TARGET", help="the CDK app: a module or a file (app.py)")
        sub.add_argument("--context", "-c", action="append", default=[], metavar="KEY=VALUE",
                         help="context for the app, as `cdk -c` passes it (repeatable)")
        sub.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
        sub.set_defaults(run=run, load_models=load_models, target_error=target_error)
    for sub in (lock, diff):
        sub.add_argument("--lock", metavar="FILE",
                         help=f"lock file (default: {CONTEXT_LOCK!r} of cdk.json next to TARGET, else {LOCK_FILE} there)")
    diff.add_argument("--acknowledge", action="append", default=[], metavar="ID",
                      help="treat this breaking change id as acknowledged (repeatable); consumer:<name> "
                           "acknowledges breaking a registered consumer")
    diff.add_argument("--consumers", metavar="DIR",
                      help="registered consumer slices (default: contracts/consumers next to TARGET, if present)")


def run(args: argparse.Namespace) -> str:
    context: dict[str, str] = {}
    for pair in args.context:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LockError(f"--context {pair!r} must be KEY=VALUE")
        context[key] = value
    with _app_context(context):
        return {"lock": _lock, "diff": _diff, "backfill": _backfill}[args.command](args)


@contextlib.contextmanager
def _app_context(context: dict[str, str]) -> Iterator[None]:
    """While the target loads, every ``cdk.App`` it builds gets ``context`` (as ``cdk -c`` would
    pass it; the environment cannot carry it once the CDK's Node process is running)."""
    if not context:
        yield
        return
    import aws_cdk as cdk

    original = cdk.App.__init__

    def init(self: Any, *a: Any, **kw: Any) -> None:
        kw["context"] = {**(kw.get("context") or {}), **context}
        original(self, *a, **kw)

    cdk.App.__init__ = init  # type: ignore[method-assign]  # every App the user's app builds gets the context
    try:
        yield
    finally:
        cdk.App.__init__ = original  # type: ignore[method-assign]  # restored: the patch lasts one synth


# Loading ------------------------------------------------------------------------------------------
def load_tables(args: argparse.Namespace) -> dict[str, Model]:
    """Construct path -> model of every SingleTable in the app ``args.target``."""
    target = args.target
    tables: dict[str, Model] = {}
    for title, model in args.load_models(target):
        if title is None:
            raise args.target_error(
                f"target {target!r} holds a bare model; the lock records tables of a CDK app (app.py / build_app)"
            )
        tables[title.split(" — ")[0]] = model
    return tables


def _project_dir(target: str) -> Path:
    head = target.rpartition(":")[0] if target.count(":") and not target.endswith(".py") else target
    path = Path(head)
    return path.resolve().parent if path.suffix == ".py" and path.is_file() else Path.cwd()


def _cdk_context(project: Path) -> dict[str, Any]:
    cdk_json = project / "cdk.json"
    if not cdk_json.is_file():
        return {}
    return dict(_read_cdk_json(cdk_json).get("context") or {})


def _read_cdk_json(path: Path) -> dict[str, Any]:
    """The object in ``path`` (:class:`EvolutionError` when it is not a JSON object)."""
    where = str(path)
    try:
        data = load_json(path.read_text(encoding="utf-8"), where, EvolutionError)
    except json.JSONDecodeError as exc:
        raise EvolutionError(f"{where} is not valid JSON ({exc.msg}: line {exc.lineno}, column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise EvolutionError(f"{where} must hold a JSON object, found {type(data).__name__}")
    return data


def lock_path(args: argparse.Namespace) -> Path:
    if getattr(args, "lock", None):
        return Path(args.lock)
    project = _project_dir(args.target)
    configured = _cdk_context(project).get(CONTEXT_LOCK)
    return project / (configured or LOCK_FILE)


def _register_in_cdk_json(project: Path, path: Path) -> str:
    cdk_json = project / "cdk.json"
    if not cdk_json.is_file():
        return ""
    data = _read_cdk_json(cdk_json)
    context = data.setdefault("context", {})
    if context.get(CONTEXT_LOCK):
        return ""
    try:
        context[CONTEXT_LOCK] = str(path.resolve().relative_to(project.resolve()))
    except ValueError:
        context[CONTEXT_LOCK] = str(path.resolve())
    cdk_json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return f"set context {CONTEXT_LOCK!r} = {context[CONTEXT_LOCK]!r} in {cdk_json}\n"


def _acknowledged(args: argparse.Namespace) -> list[str]:
    raw = _cdk_context(_project_dir(args.target)).get(CONTEXT_ACKNOWLEDGE) or []
    acks = [p.strip() for p in raw.split(",")] if isinstance(raw, str) else list(raw)
    return [a for a in acks + list(getattr(args, "acknowledge", []) or []) if a]


# Commands -----------------------------------------------------------------------------------------
def _lock(args: argparse.Namespace) -> str:
    path = lock_path(args)
    current = load_tables(args)
    existing = ModelLock.load(path).tables if path.is_file() else {}
    acks = _acknowledged(args)
    tables: dict[str, TableLock] = dict(existing)
    out: list[str] = []
    for table_path, model in current.items():
        locked = existing.get(table_path)
        if locked is None:
            tables[table_path] = TableLock.of(model)
            out.append(f"{table_path}: locked model {model.name!r}")
            continue
        diff = locked.diff(model, acknowledge=acks)
        if diff.empty:
            out.append(f"{table_path}: unchanged")
            continue
        if not args.advance:
            raise LockError(
                f"{table_path}: the model differs from the lock ({len(diff.changes)} change(s), {len(diff.steps)} GSI "
                "step(s)); after deploying, record it with `lock --advance` (one GSI step at a time)"
            )
        diff.check(where=f"{table_path}")
        tables[table_path], what = locked.advance(model, acknowledge=acks)
        out.append(f"{table_path}: {what}")
        if diff.backfill:
            pairs = ", ".join(f"{e}/{i}" for e, i in diff.backfill)
            out.append(f"{table_path}: existing items need a backfill for {pairs} (Backfill construct or "
                       "`python -m constructs_lib backfill`)")
    ModelLock(tables).save(path)
    note = _register_in_cdk_json(_project_dir(args.target), path)
    return "\n".join(out) + f"\nwrote {shown(path, _project_dir(args.target))}\n" + note


def _diff(args: argparse.Namespace) -> str:
    from .contracts import CONSUMERS_DIR, consumer_breaks, read_consumer_slices
    from .preflight import key_length_findings

    path = lock_path(args)
    current = load_tables(args)
    acks = _acknowledged(args)
    existing = ModelLock.load(path).tables if path.is_file() else None
    project = _project_dir(args.target)
    consumers = Path(args.consumers) if args.consumers else project / CONSUMERS_DIR
    if args.consumers and not consumers.is_dir():
        raise LockError(f"--consumers {args.consumers!r} is not a directory of consumer slice files")
    slices = read_consumer_slices(consumers) if consumers.is_dir() else []
    out: list[str] = []
    breaking = False
    for table_path, model in current.items():
        out.append(f"{table_path} (model {model.name!r})")
        locked = existing.get(table_path) if existing is not None else None
        if existing is None:
            out.append(f"  no model lock at {shown(path, project)}: run `python -m constructs_lib lock {args.target}` "
                       "after a deploy\n")
        elif locked is None:
            out.append("  not in the lock yet (a new table)\n")
        else:
            diff = locked.diff(model, acknowledge=acks)
            breaking = breaking or bool(diff.unacknowledged)
            out.append(diff.render())
        checked = consumer_breaks(model, slices, locked=locked.model if locked is not None else None)
        for slice_file, piece, breaks in checked:
            if not breaks:
                continue
            ack = f"consumer:{piece.consumer}"
            state = "acknowledged" if ack in acks else "breaking"
            breaking = breaking or ack not in acks
            out.append(f"  [{state}] {ack}: this change breaks registered consumer {piece.consumer!r} "
                       f"({shown(slice_file, project)}):")
            out += [f"    {b.describe()}" for b in breaks]
            if ack not in acks:
                out.append(f"    the consumer's functions would refuse to start: agree the change with {piece.consumer!r} "
                           f"(it adapts and registers its slice again), or go ahead with --acknowledge {ack}")
            out.append("")
        holding = [f"{piece.consumer!r} ({shown(slice_file, project)})" for slice_file, piece, breaks in checked
                   if not breaks]
        if holding:
            out.append(f"  registered consumers checked, unaffected: {', '.join(holding)}\n")
        elif slices and not checked:
            out.append(f"  no registered consumer of model {model.name!r} in {shown(consumers, project)} "
                       f"({len(slices)} slice file(s) of other models)\n")
        findings = key_length_findings(model)
        if findings:
            out.append("  key-length pre-flight:")
            out += [f"    [{f.level}] {f.message}" for f in findings]
            out.append("")
    args.exit_status = 3 if breaking else 0
    return "\n".join(out).rstrip("\n") + "\n"


def _backfill(args: argparse.Namespace) -> str:
    from ..runtime import _aws
    from ..runtime.patterns.backfill import BackfillSpec, progress, run_job

    current = load_tables(args)
    if args.model:
        if args.model not in current:
            raise LockError(f"--model {args.model!r} is not a SingleTable of the app; tables: {sorted(current)}")
        model = current[args.model]
    elif len({m.name for m in current.values()}) == 1:
        model = next(iter(current.values()))
    else:
        raise LockError(f"the app has several tables ({sorted(current)}); pick one with --model PATH")
    client = _aws.make_client(endpoint_url=args.endpoint_url, region_name=args.region)
    spec = BackfillSpec(job_id=args.job, segments=args.segments, wcu_per_second=args.wcu,
                        indexes=tuple(args.index) if args.index else None)
    if args.status:
        return json.dumps(progress(client, args.table, model, spec), indent=2, default=str) + "\n"
    report = run_job(client, args.table, model, spec, log=lambda line: print(line, file=sys.stderr))
    return json.dumps(report, indent=2, default=str) + "\n"
