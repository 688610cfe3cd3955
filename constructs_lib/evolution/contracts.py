"""Command line for consumer contracts (registered by :mod:`constructs_lib.__main__`).

``contract slice TARGET -o FILE``: the slice of a consumer app — every function on an imported
table, merged into one file per consumer. ``contract verify TARGET --against FILE|ssm:/prefix``:
exit 0 (compatible), 1 (incompatible, with the classified differences of what it uses; or a
generated typed module a function ships is stale, with the ``codegen`` command regenerating it), 2
(could not read, or the contract is another model's). :func:`consumer_breaks`: the producer's
``diff`` checks registered consumer slices. Paths in messages are relative to the app's project
directory. See docs/adr/0042-compatibility-by-slice.md, docs/adr/0065-consumer-day-two.md.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..model.exceptions import ModelError
from ..model.fingerprints import digest, entity_schema, index_schema
from ..model.model import Model
from ..model.project_paths import project_directory, shown
from ..model.slices import (
    PublishedFingerprints,
    Slice,
    SliceBreak,
    SliceError,
    check_slice,
    merge_slices,
    read_published,
    read_slice,
    schema_changes,
    slice_of,
)
from .diff import diff_models
from .exceptions import ContractReadError  # importable from here too
from .typed_modules import TypedModule, read_typed_module

PROG = "python -m constructs_lib"

#: Where a producer keeps the slices its consumers registered (next to the app).
CONSUMERS_DIR = "contracts/consumers"


@dataclass(frozen=True)
class ConsumerFunction:
    """A function of a consumer app on an imported table: its construct path, declared scope (None:
    the whole model) and the source files of the code its asset ships."""

    path: str
    scope: Any
    files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Consumer:
    """A table a consumer app imports from published parameters: its construct path, the model the
    functions bundle, the functions on it, and the pinned contract file (None when not pinned)."""

    path: str
    model: Model
    functions: tuple[ConsumerFunction, ...]
    pinned: Any = None


def add_commands(contract_commands: Any, *, load_consumers: Callable[[str], list[Consumer]]) -> None:
    """Add ``contract slice`` and ``contract verify``."""
    slice_cmd = contract_commands.add_parser(
        "slice", help="write what a consumer app uses of its producers' contracts (its slice)",
        description="Write the slice of every function on an imported table in TARGET, merged per consumer "
                    "(docs/contract-format.md); the producer commits it under contracts/consumers/.",
    )
    slice_cmd.add_argument("target", metavar="TARGET", help="the consumer's CDK app (app.py)")
    slice_cmd.add_argument("--consumer", metavar="NAME",
                           help="the consumer's name (default: the output file's stem, else the app's directory)")
    slice_cmd.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    slice_cmd.set_defaults(run=_slice, load_consumers=load_consumers)
    verify = contract_commands.add_parser(
        "verify", help="check a consumer's slices against a producer's contract (exit 0 / 1 / 2)",
        description="Check what TARGET uses against a contract file or the published parameter, and the typed "
                    "modules its functions ship against the models they bundle: exit 0 compatible, 1 incompatible "
                    "(the differences printed) or a typed module stale (the codegen command printed), 2 could not "
                    "read or not the contract of the model TARGET uses.",
    )
    verify.add_argument("target", metavar="TARGET", help="the consumer's CDK app (app.py) or a slice file (*.json)")
    verify.add_argument("--against", required=True, metavar="FILE|ssm:/prefix",
                        help="the producer's contract file, or ssm:<parameter prefix> to read <prefix>/contract")
    verify.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    verify.set_defaults(run=_verify, load_consumers=load_consumers)


# contract slice -----------------------------------------------------------------------------------
def consumer_slices(consumers: list[Consumer], name: str) -> Slice:
    pieces = [slice_of(c.model, f.scope, consumer=f.path) for c in consumers for f in c.functions]
    return merge_slices(name, pieces)


def _consumer_name(args: argparse.Namespace) -> str:
    if args.consumer:
        return str(args.consumer)
    if args.output:
        return Path(args.output).name.removesuffix(".json")
    target = Path(args.target.split(":")[0])
    return (target.resolve().parent if target.suffix == ".py" else Path.cwd()).name


def _slice(args: argparse.Namespace) -> str:
    consumers = args.load_consumers(args.target)
    return consumer_slices(consumers, _consumer_name(args)).to_json()


# contract verify ----------------------------------------------------------------------------------
def read_against(against: str) -> PublishedFingerprints:
    """The producer's contract: a contract file, or ``ssm:/prefix`` (``<prefix>/contract``)."""
    if against.startswith("ssm:"):
        from ..runtime import _aws
        from ..runtime.exceptions import ContractUnavailableError

        name = against.removeprefix("ssm:").rstrip("/") + "/contract"
        try:
            return read_published(_aws.get_parameter(name), source=f"SSM parameter {name!r}")
        except (ContractUnavailableError, SliceError) as exc:
            raise ContractReadError(str(exc)) from exc
    from ..model.contract_file import read_contract

    try:
        found = read_contract(against, Model)
    except ModelError as exc:
        raise ContractReadError(str(exc)) from exc
    return PublishedFingerprints(found.model.name, found.fingerprint, dict(found.entity_fingerprints),
                                 dict(found.index_fingerprints), found.model.to_dict(), found.source)


def classified(old: Model, new: Model | None, piece: Slice, breaks: Sequence[SliceBreak]) -> list[str]:
    """The model diff's classified changes touching the slice's entities and indexes (the
    consumer's own access patterns, which only its view declares, are no producer change)."""
    if new is None:
        return []
    names = {b.name for b in breaks}
    own = {f"pattern-removed:{name}" for name in old.consumer_patterns}
    return [f"    [{c.level}] {c.id}: {c.message}" for c in diff_models(old, new).changes
            if c.id not in own
            and (c.entity in names or c.index in names or (c.entity is None and c.index is None and names))]


def described(piece: Slice, breaks: Sequence[SliceBreak], new: Mapping[str, Any] | None,
              old: Model | None = None) -> list[SliceBreak]:
    """``breaks`` with what changed old → new filled in where the check could not: from the schemas
    the slice file holds, else from ``old`` (e.g. the producer's model lock) where its fingerprint
    is the slice's."""
    if new is None:
        return list(breaks)
    old_data = old.to_dict() if old is not None else None
    out = []
    for b in breaks:
        if b.changes or b.new is None:
            out.append(b)
            continue
        if b.kind not in ("entity", "index"):
            out.append(b)  # how items are stored: the check names it from the locked model
            continue
        schema = entity_schema if b.kind == "entity" else index_schema
        before = (piece.entity_schemas if b.kind == "entity" else piece.index_schemas).get(b.name)
        if before is None and old_data is not None:
            try:
                candidate = schema(old_data, b.name)
            except (StopIteration, KeyError):
                candidate = None
            before = candidate if candidate is not None and digest(candidate) == b.old else None
        try:
            after = schema(new, b.name)
        except (StopIteration, KeyError):
            after = None
        out.append(replace(b, changes=schema_changes(b.name, before, after)) if before and after else b)
    return out


def _verify(args: argparse.Namespace) -> str:
    published = read_against(args.against)
    new_model = Model.from_dict(dict(published.model)) if published.model is not None else None
    out: list[str] = []
    broken = stale = False
    project = Path.cwd()
    if args.target.endswith(".json"):
        try:
            pieces: list[tuple[Slice, Model | None, Any]] = [(read_slice(args.target), None, None)]
        except SliceError as exc:
            raise ContractReadError(str(exc)) from exc
        if pieces[0][0].model_name != published.model_name:
            raise ContractReadError(
                f"slice file {args.target!r} is of model {pieces[0][0].model_name!r}, but {published.source} is of "
                f"model {published.model_name!r}: check it against the contract of model {pieces[0][0].model_name!r}"
            )
        consumers: list[Consumer] = []
    else:
        project = app_project(args.target)
        loaded = args.load_consumers(args.target)
        consumers = [c for c in loaded if c.model.name == published.model_name]
        if not consumers:
            found = sorted({c.model.name for c in loaded})
            imports = f"it imports model {', '.join(map(repr, found))}" if found else "it imports no table"
            raise ContractReadError(f"target {args.target!r} imports no table of model {published.model_name!r} "
                                    f"({imports}), so {published.source} is not its producer's contract")
        pieces = [(slice_of(c.model, f.scope, consumer=f.path), c.model, c.pinned) for c in consumers for f in c.functions]
    for piece, model, pinned in pieces:
        breaks = described(piece, check_slice(piece, published, model=model), published.model)
        if breaks:
            broken = True
            out.append(f"{piece.consumer}: INCOMPATIBLE with {published.source} (model {published.model_name!r} "
                       f"{published.fingerprint}):")
            out += [f"  {b.describe()}" for b in breaks]
            if model is not None:
                out += classified(model, new_model, piece, breaks)
        else:
            out.append(f"{piece.consumer}: compatible ({len(piece.entities)} entities, {len(piece.indexes)} indexes)")
        if pinned is not None and pinned.fingerprint != published.fingerprint:
            out.append(f"  the pinned {pinned.source} ({pinned.fingerprint}) is older than "
                       f"{published.source} ({published.fingerprint})"
                       + (": what this function uses is unchanged, so it keeps working; refresh the pin to keep "
                          "it current (contract export in the producer's repository, or copy its "
                          "cdk.out/<model>.contract.json), then regenerate its typed modules (codegen)" if not breaks
                          else ": refresh the pin, adapt the functions to the changed entities and indexes, and "
                          "redeploy"))
    if consumers:
        lines, stale = typed_module_findings(consumers, project, args.target)
        out += lines
    if broken:
        out.append("incompatible: adapt the functions named above to the producer's contract (refresh the pinned "
                   "contract, rebuild, redeploy) or ask the producer to keep those keys")
    if stale:
        out.append("stale: regenerate the typed modules named above (their functions would refuse to start), "
                   "then verify again")
    args.exit_status = 1 if broken or stale else 0
    return "\n".join(out) + "\n"


def app_project(target: str) -> Path:
    """The project directory of an app target: the nearest ``cdk.json`` above its file, else its
    file's directory (a module target: the working directory)."""
    head = target.rpartition(":")[0] if target.count(":") and not target.endswith(".py") else target
    path = Path(head)
    if path.suffix != ".py" or not path.is_file():
        return Path.cwd()
    return project_directory(path) or path.resolve().parent


def typed_module_findings(consumers: list[Consumer], project: Path, target: str) -> tuple[list[str], bool]:
    """One line per generated typed module the consumer's functions ship (up to date, or stale with
    the command regenerating it), checked against the model each function bundles; and whether
    one is stale."""
    from ..runtime.contract import model_digest

    app_models = {model_digest(c.model): c.model for c in consumers}
    verdicts: dict[Path, tuple[TypedModule, set[str]]] = {}
    for consumer in consumers:
        for function in consumer.functions:
            for path in function.files:
                module = read_typed_module(path) if path.suffix == ".py" else None
                if module is not None and module.model_name == consumer.model.name:
                    verdicts.setdefault(path, (module, set()))[1].add(model_digest(consumer.model))
    out: list[str] = []
    stale = False
    for path, (module, wanted) in sorted(verdicts.items()):
        where = shown(path, project)
        if wanted == {module.digest}:
            out.append(f"{where}: typed module of model {module.model_name!r} is up to date (digest {module.digest})")
            continue
        stale = True
        distinct = {model_digest(m) for m in app_models.values() if m.name == module.model_name}
        source = target if len(distinct) == 1 else f"{target}:<the attribute holding the model>"
        out.append(
            f"{where}: STALE typed module of model {module.model_name!r}: generated from digest {module.digest}, "
            f"the functions shipping it bundle {' and '.join(sorted(wanted))}, so its table class refuses their "
            f"client at cold start (ModelMismatchError); regenerate it:\n    {PROG} codegen {source} -o {shown(path)}"
        )
    return out, stale


# The producer's diff ------------------------------------------------------------------------------
def read_consumer_slices(directory: Path) -> list[tuple[Path, Slice]]:
    """Every registered consumer slice in ``directory`` (``SliceError`` naming a malformed file)."""
    return [(path, read_slice(path)) for path in sorted(directory.glob("*.json"))]


def consumer_breaks(model: Model, slices: list[tuple[Path, Slice]], *, locked: Model | None = None,
                    ) -> list[tuple[Path, Slice, list[SliceBreak]]]:
    """Registered consumer slices of ``model``'s name, each with the breaks ``model`` makes
    (empty: it holds), what changed old → new named from the slice's schemas or ``locked`` (the
    model lock's model)."""
    from ..model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints

    data = model.to_dict()
    current = PublishedFingerprints(model.name, fingerprint(data), entity_fingerprints(data),
                                    index_fingerprints(data), data, "the current model")
    return [(path, piece, described(piece, check_slice(piece, current, model=locked), data, locked))
            for path, piece in slices if piece.model_name == model.name]


__all__ = ["CONSUMERS_DIR", "Consumer", "ConsumerFunction", "ContractReadError", "add_commands", "app_project",
           "consumer_breaks", "described", "read_consumer_slices", "typed_module_findings"]
