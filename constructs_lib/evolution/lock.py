"""The model lock: each table's model and secondary indexes as deployed.

A JSON file committed next to the app (``constructs_lib.lock.json``), written by
``python -m constructs_lib lock`` and advanced one rollout step at a time with
``lock --advance``. Synthesis diffs the current model against it (:mod:`.diff`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.exceptions import ModelFormatError
from ..model.indexes import Index
from ..model.jsontext import load_json
from ..model.model import Model
from ..model.resolve import resolve_index
from ..model.resolved import ResolvedIndex
from .diff import ModelDiff, apply_step, diff_models

LOCK_FORMAT = "constructs_lib.lock"
LOCK_VERSION = 1
LOCK_FILE = "constructs_lib.lock.json"


@dataclass(frozen=True)
class TableLock:
    """One table as deployed: the model of its last completed rollout and its indexes now."""

    model: Model
    indexes: tuple[ResolvedIndex, ...]

    @classmethod
    def of(cls, model: Model) -> TableLock:
        """A lock of ``model`` fully deployed."""
        return cls(model, tuple(model.indexes.values()))

    def diff(self, current: Model, *, acknowledge: Sequence[str] = ()) -> ModelDiff:
        return diff_models(self.model, current, deployed_indexes=self.indexes, acknowledge=acknowledge)

    def advance(self, current: Model, *, acknowledge: Sequence[str] = ()) -> tuple[TableLock, str]:
        """The lock after the next rollout step toward ``current`` was deployed, and what it
        recorded. The model itself is recorded once no GSI step remains."""
        steps = self.diff(current, acknowledge=acknowledge).steps
        if steps:
            indexes = apply_step(self.indexes, steps[0])
            remaining = diff_models(self.model, current, deployed_indexes=indexes, acknowledge=acknowledge).steps
            if remaining:
                return TableLock(self.model, indexes), f"recorded step 1 of {len(steps)}: {steps[0]}"
            return TableLock.of(current), f"recorded the last step ({steps[0]}) and the model"
        return TableLock.of(current), "recorded the model"

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "indexes": [i.to_dict() for i in self.indexes]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str) -> TableLock:
        try:
            model = Model.from_dict(dict(data["model"]))
            return cls(model, tuple(resolve_index(Index.from_dict(i), model.pk_attribute) for i in data["indexes"]))
        except (KeyError, TypeError) as exc:
            raise ModelFormatError(f"model lock {where}: table entry is incomplete ({exc})") from exc


@dataclass(frozen=True)
class ModelLock:
    """Every table of an app, by construct path (``"ShopStack/Data"``)."""

    tables: Mapping[str, TableLock]

    def to_json(self) -> str:
        data = {
            "format": LOCK_FORMAT,
            "version": LOCK_VERSION,
            "tables": {path: t.to_dict() for path, t in sorted(self.tables.items())},
        }
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, *, where: str = "lock") -> ModelLock:
        try:
            data = load_json(text, f"model lock {where}", ModelFormatError)
        except json.JSONDecodeError as exc:
            raise ModelFormatError(f"model lock {where} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != LOCK_FORMAT:
            raise ModelFormatError(f"model lock {where} is not a {LOCK_FORMAT} document")
        if data.get("version") != LOCK_VERSION:
            raise ModelFormatError(
                f"model lock {where} has version {data.get('version')!r}; this library reads version {LOCK_VERSION}"
            )
        tables = data.get("tables")
        if not isinstance(tables, dict):
            raise ModelFormatError(f"model lock {where} has no 'tables' object")
        return cls({path: TableLock.from_dict(t, where=f"{where} [{path}]") for path, t in tables.items()})

    @classmethod
    def load(cls, path: str | Path) -> ModelLock:
        p = Path(path)
        return cls.from_json(p.read_text(encoding="utf-8"), where=str(p))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")
