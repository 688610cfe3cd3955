"""The model diff's completeness check over the fingerprint's input.

:func:`constructs_lib.runtime.contract.fingerprint` hashes
:func:`~constructs_lib.runtime.contract.key_schema`. :func:`leaves` flattens that schema into
named paths (``entities[Team].fields[kind].choices``); :func:`unexplained` returns the paths
whose values differ between two models and that no classified change claims. The diff reports
each as a breaking ``unclassified`` change, so two models with different fingerprints always
differ by at least one change. Rationale: docs/adr/0038-model-diff-is-complete.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..model.model import Model
from ..runtime.contract import key_schema

#: A position in the key schema: ("entities", "Team", "fields", "kind", "choices").
Path = tuple[str, ...]
#: Keys whose value maps names to members: the component after one is a name.
_COLLECTIONS = frozenset({"entities", "indexes", "fields", "when_equals"})
#: Marks a leaf that is an empty object or list (explained by a claim below it).
_EMPTY = ("{}", "[]")


def _named(members: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {m["name"]: {k: v for k, v in m.items() if k != "name"} for m in members}


def leaves(model: Model) -> dict[Path, str]:
    """Every leaf of the model's key schema, as canonical JSON text, by path. Lists of named
    members (indexes, entities) become objects keyed by name; empty objects and lists are leaves."""
    schema = dict(key_schema(model))
    schema["indexes"] = _named(schema["indexes"])
    schema["entities"] = _named(schema["entities"])
    out: dict[Path, str] = {}

    def walk(path: Path, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, member in value.items():
                walk((*path, str(key)), member)
        else:
            out[path] = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    walk((), schema)
    return out


def render(path: Path) -> str:
    """``entities[Team].fields[kind].choices``: names in brackets, keys joined by dots."""
    out, name_next = "", False
    for part in path:
        if name_next:
            out += f"[{part}]"
            name_next = False
        else:
            out += f".{part}" if out else part
            name_next = part in _COLLECTIONS
    return out or "(model)"


def unexplained(old: Model, new: Model, claims: Iterable[Path]) -> list[tuple[Path, str | None, str | None]]:
    """``(path, old JSON, new JSON)`` of each differing leaf (None: absent on that side) that no
    claim covers. A claim covers the leaves below it, and an empty object or list above it."""
    before, after = leaves(old), leaves(new)
    claimed = tuple(claims)
    out = []
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path), after.get(path)
        if a == b:
            continue
        covered = any(path[: len(c)] == c for c in claimed) or (
            (a in _EMPTY or b in _EMPTY) and any(c[: len(path)] == path for c in claimed)
        )
        if not covered:
            out.append((path, a, b))
    return out
