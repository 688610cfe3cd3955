"""A traffic snapshot as a JSON file (versioned): write one, read one back with errors naming the field.

A snapshot holds partition key values (the sketches' top keys): treat the file like the table's data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..exceptions import SnapshotFileError
from ..jsontext import load_json
from .sketch import KeyCount
from .snapshot import QueryShape, Snapshot

__all__ = ["FORMAT", "VERSION", "read_snapshot", "snapshot_from_dict", "snapshot_to_dict", "write_snapshot"]

FORMAT, VERSION = "constructs_lib.traffic_snapshot", 1
_T = TypeVar("_T")


def snapshot_to_dict(snapshot: Snapshot) -> dict[str, Any]:
    """``snapshot`` as JSON-ready values (the model as its ``to_dict``)."""
    return {
        "format": FORMAT, "version": VERSION,
        "table_name": snapshot.table_name,
        "model": snapshot.model.to_dict() if snapshot.model is not None else None,
        "sample_rate": snapshot.sample_rate,
        "sampled_requests": snapshot.sampled_requests,
        "duration_seconds": snapshot.duration_seconds,
        "sketches": [
            {"index": index, "kind": kind, "hits": hits, "exact": exact, "error_bound": bound,
             "top": [{"key": k.key, "count": k.count, "error": k.error, "capacity_units": k.capacity_units,
                      "throttled": k.throttled, "estimated": k.estimated} for k in top]}
            for (index, kind), (top, hits, exact, bound) in snapshot.sketches.items()
        ],
        "operations": {label: {"requests": r, "key_hits": h, "capacity_units": u}
                       for label, (r, h, u) in snapshot.operations.items()},
        "errors": dict(snapshot.errors),
        "index_reads": dict(snapshot.index_reads),
        "index_writes": {gsi: {"writes": w, "capacity_units": u} for gsi, (w, u) in snapshot.index_writes.items()},
        "patterns": dict(snapshot.patterns),
        "shapes": [{"operation": s.operation, "index": s.index, "label": s.label, "pattern": s.pattern,
                    "requests": s.requests, "scanned": s.scanned, "returned": s.returned,
                    "capacity_units": s.capacity_units} for s in snapshot.shapes],
        "entity_writes": [{"entity": e, "kind": k, "writes": w, "capacity_units": u}
                          for (e, k), (w, u) in snapshot.entity_writes.items()],
        "unattributed_writes": {k: {"writes": w, "capacity_units": u}
                                for k, (w, u) in snapshot.unattributed_writes.items()},
    }


def write_snapshot(snapshot: Snapshot, path: str | Path) -> Path:
    """Write ``snapshot`` to ``path`` as JSON; returns the path (:class:`SnapshotFileError` if it cannot be written)."""
    file = Path(path)
    try:
        file.write_text(json.dumps(snapshot_to_dict(snapshot), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise SnapshotFileError(str(file), f"cannot be written: {exc.strerror or exc}") from None
    return file


def read_snapshot(path: str | Path) -> Snapshot:
    """Read a snapshot file written by :func:`write_snapshot`.

    Raises
    ------
    SnapshotFileError
        The file is missing or not JSON, of another format or version, or a field breaks its
        rule; the message names the file, the field and the rule.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SnapshotFileError(str(file), f"cannot be read: {reason}") from None
    try:
        data = load_json(text, "its JSON", lambda problem: SnapshotFileError(str(file), problem))
    except json.JSONDecodeError as exc:
        raise SnapshotFileError(str(file), f"is not JSON (line {exc.lineno}: {exc.msg})") from None
    return snapshot_from_dict(data, source=str(file))


def snapshot_from_dict(data: Any, *, source: str = "<snapshot>") -> Snapshot:
    """A :class:`Snapshot` from :func:`snapshot_to_dict`'s values (:class:`SnapshotFileError`
    naming ``source`` and the field that breaks its rule)."""
    return _Reader(source).snapshot(data)


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> SnapshotFileError:
        return SnapshotFileError(self.source, f"{where}: {message}" if where else message)

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a JSON object, found {value!r:.80}")
        return value

    def field(self, raw: Mapping[str, Any], name: str, where: str) -> Any:
        if name not in raw:
            raise self.fail(where, f"has no {name!r}")
        return raw[name]

    def count(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(where, f"{value!r:.80} must be a whole number, 0 or more")
        return value

    def number(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise self.fail(where, f"{value!r:.80} must be a number, 0 or more")
        return float(value)

    def text(self, value: Any, where: str, *, optional: bool = False) -> Any:
        if (value is None and optional) or isinstance(value, str):
            return value
        raise self.fail(where, f"{value!r:.80} must be a string{' or null' if optional else ''}")

    def each(self, value: Any, where: str, read: Callable[[Any, str], _T]) -> list[_T]:
        if not isinstance(value, list):
            raise self.fail(where, f"must be a JSON array, found {value!r:.80}")
        return [read(item, f"{where}[{n}]") for n, item in enumerate(value)]

    def counts(self, value: Any, where: str) -> dict[str, int]:
        return {k: self.count(v, f"{where}.{k}") for k, v in self.obj(value, where).items()}

    def pairs(self, value: Any, where: str, first: str) -> dict[str, tuple[int, float]]:
        out = {}
        for k, v in self.obj(value, where).items():
            at = f"{where}.{k}"
            raw = self.obj(v, at)
            out[k] = (self.count(self.field(raw, first, at), f"{at}.{first}"),
                      self.number(self.field(raw, "capacity_units", at), f"{at}.capacity_units"))
        return out

    def snapshot(self, data: Any) -> Snapshot:
        top = self.obj(data, "")
        if top.get("format") != FORMAT:
            raise self.fail("format", f"{top.get('format')!r} is not a traffic snapshot's: expected {FORMAT!r}")
        if top.get("version") != VERSION:
            raise self.fail("version", f"{top.get('version')!r} is not supported: this library reads version {VERSION}")
        model = None
        if top.get("model") is not None:
            from ...model import Model

            try:
                model = Model.from_dict(self.obj(top["model"], "model"))
            except SnapshotFileError:
                raise
            except Exception as exc:  # a model error of any kind: named, with its message
                raise self.fail("model", f"is not a valid model ({type(exc).__name__}: {exc})") from None
        sample_rate = self.number(self.field(top, "sample_rate", ""), "sample_rate")
        if not 0 < sample_rate <= 1:
            raise self.fail("sample_rate", f"{sample_rate!r} must be a number in (0, 1]")
        return Snapshot(
            self.text(top.get("table_name"), "table_name", optional=True), model, sample_rate,
            self.count(self.field(top, "sampled_requests", ""), "sampled_requests"),
            self.number(self.field(top, "duration_seconds", ""), "duration_seconds"),
            dict(self.each(top.get("sketches", []), "sketches", self.sketch)),
            {label: (self.count(self.field(v, "requests", f"operations.{label}"), f"operations.{label}.requests"),
                     self.count(self.field(v, "key_hits", f"operations.{label}"), f"operations.{label}.key_hits"),
                     self.number(self.field(v, "capacity_units", f"operations.{label}"),
                                 f"operations.{label}.capacity_units"))
             for label, v in ((k, self.obj(v, f"operations.{k}"))
                              for k, v in self.obj(top.get("operations", {}), "operations").items())},
            self.counts(top.get("errors", {}), "errors"),
            self.counts(top.get("index_reads", {}), "index_reads"),
            self.pairs(top.get("index_writes", {}), "index_writes", "writes"),
            self.counts(top.get("patterns", {}), "patterns"),
            self.each(top.get("shapes", []), "shapes", self.shape),
            dict(self.each(top.get("entity_writes", []), "entity_writes", self.entity_write)),
            self.pairs(top.get("unattributed_writes", {}), "unattributed_writes", "writes"),
        )

    def sketch(self, value: Any, where: str) -> tuple[tuple[str, str], tuple[list[KeyCount], int, bool, float]]:
        raw = self.obj(value, where)
        exact = self.field(raw, "exact", where)
        if not isinstance(exact, bool):
            raise self.fail(f"{where}.exact", f"{exact!r:.80} must be true or false")
        ident = (self.text(self.field(raw, "index", where), f"{where}.index"),
                 self.text(self.field(raw, "kind", where), f"{where}.kind"))
        return ident, (self.each(self.field(raw, "top", where), f"{where}.top", self.key_count),
                       self.count(self.field(raw, "hits", where), f"{where}.hits"), exact,
                       self.number(self.field(raw, "error_bound", where), f"{where}.error_bound"))

    def key_count(self, value: Any, where: str) -> KeyCount:
        raw = self.obj(value, where)
        return KeyCount(
            self.text(self.field(raw, "key", where), f"{where}.key"),
            self.count(self.field(raw, "count", where), f"{where}.count"),
            self.count(self.field(raw, "error", where), f"{where}.error"),
            self.number(self.field(raw, "capacity_units", where), f"{where}.capacity_units"),
            self.count(self.field(raw, "throttled", where), f"{where}.throttled"),
            self.number(self.field(raw, "estimated", where), f"{where}.estimated"),
        )

    def shape(self, value: Any, where: str) -> QueryShape:
        raw = self.obj(value, where)
        return QueryShape(
            self.text(self.field(raw, "operation", where), f"{where}.operation"),
            self.text(self.field(raw, "index", where), f"{where}.index"),
            self.text(self.field(raw, "label", where), f"{where}.label"),
            self.text(raw.get("pattern"), f"{where}.pattern", optional=True),
            self.count(self.field(raw, "requests", where), f"{where}.requests"),
            self.count(self.field(raw, "scanned", where), f"{where}.scanned"),
            self.count(self.field(raw, "returned", where), f"{where}.returned"),
            self.number(self.field(raw, "capacity_units", where), f"{where}.capacity_units"),
        )

    def entity_write(self, value: Any, where: str) -> tuple[tuple[str, str], tuple[int, float]]:
        raw = self.obj(value, where)
        return ((self.text(self.field(raw, "entity", where), f"{where}.entity"),
                 self.text(self.field(raw, "kind", where), f"{where}.kind")),
                (self.count(self.field(raw, "writes", where), f"{where}.writes"),
                 self.number(self.field(raw, "capacity_units", where), f"{where}.capacity_units")))
