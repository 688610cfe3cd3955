"""Synth-time model evolution of a ``SingleTable``: lock lookup, diff, GSI rollout step.

The lock file is named by the context key ``constructs_lib:lock`` (a path relative to the
working directory; ``python -m constructs_lib lock`` adds it to ``cdk.json``). Breaking changes
fail synthesis unless their ids are listed in ``constructs_lib:acknowledge`` or in
``SingleTable(acknowledge=...)``. See docs/adr/0110-model-evolution.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aws_cdk as cdk
import jsii
from constructs import Construct, IValidation

from ..evolution.diff import ModelDiff, synthesized_gsis
from ..evolution.exceptions import BreakingChangeError
from ..evolution.lock import LOCK_FILE, ModelLock, TableLock
from ..evolution.preflight import key_length_findings
from ..model import Model, ResolvedIndex
from ..model.jsontext import load_json
from . import defaults
from .exceptions import ConstructPropsError

CONTEXT_LOCK = "constructs_lib:lock"
CONTEXT_ACKNOWLEDGE = "constructs_lib:acknowledge"


@dataclass(frozen=True)
class Evolution:
    """What one synthesis of a table carries while its model evolves."""

    lock_path: str | None
    locked: TableLock | None
    diff: ModelDiff | None
    #: The GSIs this template declares (the deployed ones with at most one step applied).
    gsis: tuple[ResolvedIndex, ...]
    #: GSIs of the model the template does not declare yet (their patterns are refused).
    unavailable_indexes: tuple[str, ...] = ()
    acknowledged: tuple[str, ...] = field(default_factory=tuple)


def acknowledgements(scope: Construct, explicit: Sequence[str] | None) -> tuple[str, ...]:
    raw = scope.node.try_get_context(CONTEXT_ACKNOWLEDGE)
    ids: list[str] = list(explicit or ())
    if isinstance(raw, str):
        text = raw.strip()
        ids += _id_list(text) if text.startswith("[") else [p.strip() for p in text.split(",") if p.strip()]
    elif isinstance(raw, list):
        ids += [str(p) for p in raw]
    elif raw is not None:
        raise ConstructPropsError(
            f"context {CONTEXT_ACKNOWLEDGE!r} = {raw!r} must be a list of change ids or a comma-separated string"
        )
    path = scope.node.path
    # "<construct path>:<id>" limits an acknowledgement to one table.
    return tuple(dict.fromkeys(i.split("::", 1)[1] if i.startswith(path + "::") else i for i in ids))


def plan(scope: Construct, model: Model, *, acknowledge: Sequence[str] | None = None) -> Evolution:
    """Read the lock for ``scope`` (a SingleTable being built) and plan this synthesis."""
    preflight(scope, model)
    lock_path = scope.node.try_get_context(CONTEXT_LOCK)
    acks = acknowledgements(scope, acknowledge)
    if lock_path is None:
        cdk.Annotations.of(scope).add_info(
            f"model evolution unchecked: no model lock (run `python -m constructs_lib lock <app>` after a deploy "
            f"to record it; it writes {LOCK_FILE} and sets context {CONTEXT_LOCK!r})"
        )
        return Evolution(None, None, None, tuple(model.gsis), (), acks)
    path = Path(str(lock_path))
    if not path.is_file():
        cdk.Annotations.of(scope).add_info(
            f"model evolution unchecked: lock file {str(path)!r} does not exist yet (run `python -m constructs_lib "
            "lock <app>` after the first deploy)"
        )
        return Evolution(str(path), None, None, tuple(model.gsis), (), acks)
    locked = ModelLock.load(path).tables.get(scope.node.path)
    if locked is None:
        cdk.Annotations.of(scope).add_info(
            f"model evolution unchecked: {str(path)!r} has no entry for {scope.node.path!r} (a new table; run "
            "`python -m constructs_lib lock <app>` after its first deploy)"
        )
        return Evolution(str(path), None, None, tuple(model.gsis), (), acks)
    diff = locked.diff(model, acknowledge=acks)
    gsis = tuple(synthesized_gsis(locked.indexes, list(model.indexes.values()), diff.steps))
    present = {i.name for i in gsis}
    unavailable = tuple(i.name for i in model.gsis if i.name not in present)
    evolution = Evolution(str(path), locked, diff, gsis, unavailable, acks)
    annotate(scope, evolution)
    return evolution


def annotate(scope: Construct, evolution: Evolution) -> None:
    diff = evolution.diff
    assert diff is not None
    node = cdk.Annotations.of(scope)
    if diff.unacknowledged:
        scope.node.add_validation(_RefuseBreaking(scope.node.path, diff))
    if diff.steps:
        node.add_warning_v2(
            f"{defaults.ANNOTATION_PREFIX}:RolloutStep",
            f"GSI rollout: this template applies step 1 of {len(diff.steps)} ({diff.steps[0]}); after it deploys "
            "run `python -m constructs_lib lock --advance <app>` and deploy again",
        )
    if evolution.unavailable_indexes:
        node.add_warning_v2(
            f"{defaults.ANNOTATION_PREFIX}:IndexNotReady",
            f"index(es) {list(evolution.unavailable_indexes)!r} are not created by this template yet; access "
            "patterns on them raise IndexNotReadyError at run time",
        )
    if diff.backfill:
        pairs = ", ".join(f"{e}/{i}" for e, i in diff.backfill)
        node.add_warning_v2(
            f"{defaults.ANNOTATION_PREFIX}:BackfillNeeded",
            f"existing items need their derived keys rewritten for {pairs} (a Backfill construct, or "
            "`python -m constructs_lib backfill`)",
        )


def preflight(scope: Construct, model: Model) -> None:
    """Key-length pre-flight: warn when a derived key can exceed DynamoDB's limits, refuse
    synthesis when one can never fit."""
    errors = []
    for finding in key_length_findings(model):
        if finding.level == "error":
            errors.append(finding.message)
        else:
            cdk.Annotations.of(scope).add_warning_v2(f"{defaults.ANNOTATION_PREFIX}:KeyTooLong", finding.message)
    if errors:
        scope.node.add_validation(_Refuse(errors))


@jsii.implements(IValidation)
class _Refuse:
    def __init__(self, errors: list[str]) -> None:
        self._errors = errors

    def validate(self) -> list[str]:
        return list(self._errors)


@jsii.implements(IValidation)
class _RefuseBreaking:
    def __init__(self, path: str, diff: ModelDiff) -> None:
        self._path, self._diff = path, diff

    def validate(self) -> list[str]:
        try:
            self._diff.check(where=f"SingleTable {self._path!r}")
        except BreakingChangeError as exc:
            return [str(exc)]
        return []


def _id_list(text: str) -> list[str]:
    """The change ids of context value ``text``, a JSON array of strings (:class:`ConstructPropsError` otherwise)."""
    where = f"context {CONTEXT_ACKNOWLEDGE!r}"
    try:
        ids = load_json(text, where, ConstructPropsError)
    except json.JSONDecodeError as exc:
        raise ConstructPropsError(f"{where} = {text!r:.80} is not a JSON array ({exc.msg}); give a JSON array of "
                                  "change ids or a comma-separated string") from exc
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ConstructPropsError(f"{where} = {text!r:.80} must be a JSON array of change ids (strings)")
    return ids
