"""Consumer views: a producer's model plus access patterns only a consumer performs.

``Model.view(extra_patterns=[...])`` returns a new ``Model`` built from the producer's, its
patterns validated by the same resolution; the view cannot change keys, so its whole, per-entity
and per-index fingerprints are the producer's. ``Model.consumer_patterns`` names the added
patterns; the model JSON carries them as ``consumer_patterns``. Rationale: docs/adr/0043-consumer-views.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from .access import CONSUMER_PATTERNS, AccessPattern
from .exceptions import AccessPatternError, ViewError
from .fingerprints import entity_fingerprints, fingerprint, index_fingerprints

#: The model JSON key listing the consumer-only access patterns (absent when there are none).


class _Model(Protocol):
    """A ``Model`` (what a view reads of it)."""

    @property
    def name(self) -> str: ...

    @property
    def access_patterns(self) -> Mapping[str, AccessPattern]: ...

    @property
    def consumer_patterns(self) -> tuple[str, ...]: ...

    def to_dict(self) -> dict[str, Any]: ...


M = TypeVar("M", bound=_Model)


def consumer_view(model: M, extra_patterns: Any, refused: Mapping[str, Any], from_dict: Any) -> M:
    """The view of ``model`` with ``extra_patterns`` (``Model.view``; ``from_dict`` builds the model)."""
    where = f"consumer view of model {model.name!r}"
    if refused:
        raise ViewError(
            f"{where}: {', '.join(f'{k}=' for k in sorted(refused))} cannot be given; a view only adds access "
            "patterns (extra_patterns=) — entities, keys, indexes, TTL, attribute names and tenancy are the "
            "producer's, and keeping them is what keeps the view's fingerprint equal to the producer's table"
        )
    patterns = _patterns(where, extra_patterns)
    owners = {name: "the producer declares" for name in model.access_patterns}
    owners.update((name, "this view already adds") for name in model.consumer_patterns)
    for pattern in patterns:
        if pattern.name in owners:
            owner = owners[pattern.name]
            raise ViewError(
                f"{where}: access pattern {pattern.name!r} clashes with a pattern {owner}; a view adds patterns "
                "and never redefines one (the runtime looks patterns up by name) — give it another name"
            )
        owners[pattern.name] = "this view already adds"
    data = model.to_dict()
    data["access_patterns"] = [*data["access_patterns"], *(p.to_dict() for p in patterns)]
    data[CONSUMER_PATTERNS] = [*model.consumer_patterns, *(p.name for p in patterns)]
    try:
        view: M = from_dict(data)
    except AccessPatternError as exc:
        raise AccessPatternError(f"{where}: {exc}") from exc
    _check_fingerprints(where, model, view)
    return view


def _patterns(where: str, extra: Any) -> list[AccessPattern]:
    if isinstance(extra, AccessPattern):
        return [extra]
    if isinstance(extra, (str, bytes, Mapping)) or not isinstance(extra, Sequence):
        raise ViewError(f"{where}: extra_patterns {extra!r:.80} must be a list of AccessPattern")
    for n, item in enumerate(extra):
        if not isinstance(item, AccessPattern):
            name = getattr(item, "name", None)
            what = f"{type(item).__name__} {name!r}" if isinstance(name, str) else f"{item!r:.60}"
            raise ViewError(
                f"{where}: extra_patterns[{n}] ({what}) is not an AccessPattern; a view accepts access patterns "
                "only — entities, indexes and keys are the producer's"
            )
    return list(extra)


def _check_fingerprints(where: str, model: _Model, view: _Model) -> None:
    """The view's key schema is the producer's (a broken invariant here is a library bug)."""
    checks: tuple[tuple[str, Any], ...] = (
        ("model", fingerprint), ("entity", entity_fingerprints), ("index", index_fingerprints),
    )
    for what, of in checks:
        if of(model) != of(view):
            raise ViewError(f"{where}: the view's {what} fingerprints {of(view)} differ from the producer's {of(model)}")
