"""Command line for consumer contracts (registered by :mod:`constructs_lib.__main__`).

``contract slice TARGET -o FILE``: the slice of a consumer app — every function on an imported
table, merged into one file per consumer. ``contract verify TARGET --against FILE|ssm:/prefix``:
exit 0 (compatible), 1 (incompatible, with the classified differences of what it uses), 2 (could
not read). :func:`consumer_breaks`: the producer's ``diff`` checks registered consumer slices.
See docs/adr/0042-compatibility-by-slice.md.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..model.exceptions import ModelError
from ..model.model import Model
from ..model.slices import (
    PublishedFingerprints,
    Slice,
    SliceBreak,
    SliceError,
    check_slice,
    merge_slices,
    read_published,
    read_slice,
    slice_of,
)
from .diff import diff_models
from .exceptions import ContractReadError  # importable from here too

#: Where a producer keeps the slices its consumers registered (next to the app).
CONSUMERS_DIR = "contracts/consumers"


#: (table path, consumer's model, [(function path, scope)], pinned contract or None) per imported table.
Consumer = tuple[str, Model, list[tuple[str, Any]], Any]


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
        description="Check what TARGET uses against a contract file or the published parameter: exit 0 "
                    "compatible, 1 incompatible (the differences printed), 2 could not read.",
    )
    verify.add_argument("target", metavar="TARGET", help="the consumer's CDK app (app.py) or a slice file (*.json)")
    verify.add_argument("--against", required=True, metavar="FILE|ssm:/prefix",
                        help="the producer's contract file, or ssm:<parameter prefix> to read <prefix>/contract")
    verify.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    verify.set_defaults(run=_verify, load_consumers=load_consumers)


# contract slice -----------------------------------------------------------------------------------
def consumer_slices(consumers: list[Consumer], name: str) -> Slice:
    pieces = [slice_of(model, scope, consumer=path) for _, model, functions, _ in consumers for path, scope in functions]
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
    """The model diff's classified changes touching the slice's entities and indexes."""
    if new is None:
        return []
    names = {b.name for b in breaks}
    return [f"    [{c.level}] {c.id}: {c.message}" for c in diff_models(old, new).changes
            if c.entity in names or c.index in names or (c.entity is None and c.index is None and names)]


def _verify(args: argparse.Namespace) -> str:
    published = read_against(args.against)
    new_model = Model.from_dict(dict(published.model)) if published.model is not None else None
    out: list[str] = []
    broken = False
    if args.target.endswith(".json"):
        try:
            pieces: list[tuple[Slice, Model | None, Any]] = [(read_slice(args.target), None, None)]
        except SliceError as exc:
            raise ContractReadError(str(exc)) from exc
    else:
        consumers = [c for c in args.load_consumers(args.target) if c[1].name == published.model_name]
        if not consumers:
            raise ContractReadError(f"target {args.target!r} imports no table of model {published.model_name!r}")
        pieces = [(slice_of(model, scope, consumer=path), model, pinned)
                  for _, model, functions, pinned in consumers for path, scope in functions]
    for piece, model, pinned in pieces:
        breaks = check_slice(piece, published, model=model)
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
            out.append(f"  the pinned contract {pinned.source} ({pinned.fingerprint}) is older than "
                       f"{published.source} ({published.fingerprint})"
                       + (": what this function uses is unchanged, so it keeps working; refresh the pin to keep "
                          "it current (contract export in the producer's repository, or copy its "
                          "cdk.out/<model>.contract.json)" if not breaks else
                          ": refresh the pin, adapt the functions to the changed entities and indexes, and redeploy"))
    if broken:
        out.append("incompatible: adapt the functions named above to the producer's contract (refresh the pinned "
                   "contract, rebuild, redeploy) or ask the producer to keep those keys")
    args.exit_status = 1 if broken else 0
    return "\n".join(out) + "\n"


# The producer's diff ------------------------------------------------------------------------------
def read_consumer_slices(directory: Path) -> list[tuple[Path, Slice]]:
    """Every registered consumer slice in ``directory`` (``SliceError`` naming a malformed file)."""
    return [(path, read_slice(path)) for path in sorted(directory.glob("*.json"))]


def consumer_breaks(
    model: Model, slices: list[tuple[Path, Slice]], *, previous: Model | None = None,
) -> list[tuple[Path, Slice, list[SliceBreak]]]:
    """Registered consumer slices of ``model``'s name that ``model`` breaks, with the breaks;
    ``previous`` (the locked model): each break built against it names what changed, old → new."""
    from ..model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints

    current = PublishedFingerprints(model.name, fingerprint(model), entity_fingerprints(model),
                                    index_fingerprints(model), model.to_dict(), "the current model")
    out = []
    for path, piece in slices:
        if piece.model_name != model.name:
            continue
        breaks = check_slice(piece, current, model=previous)
        if breaks:
            out.append((path, piece, breaks))
    return out


__all__ = ["CONSUMERS_DIR", "ContractReadError", "add_commands", "consumer_breaks", "read_consumer_slices"]
