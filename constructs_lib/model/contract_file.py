"""The contract file: a producer's model, fingerprints and table description as one JSON document.

``<model name>.contract.json`` (format ``constructs_lib.contract``, :data:`FORMAT_VERSION`) holds
the model JSON, the whole-model, per-entity and per-index fingerprints
(:mod:`constructs_lib.model.fingerprints`) and the table the producer deploys (key schema,
indexes with their projections, TTL attribute, stream view type, name and ARN when known at
synth). :func:`build_contract` writes it; :func:`read_contract` (and ``Model.from_contract``)
reads and checks it. Pure Python: the runtime can read it at cold start.

The format is documented field by field in docs/contract-format.md; rationale in
docs/adr/0040-the-contract-is-a-file.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .exceptions import (
    ContractFormatError,
    ContractIntegrityError,
    ContractVersionError,
    ModelError,
)
from .fingerprints import entity_fingerprints, fingerprint, index_fingerprints, stored_fingerprints
from .jsontext import load_json

#: The ``format`` of every contract file.
FORMAT = "constructs_lib.contract"
#: The newest ``format_version`` this library writes and reads.
FORMAT_VERSION = 1
#: File name suffix of a contract file (``<model name>.contract.json``).
SUFFIX = ".contract.json"
#: Stream view types a table's stream may have.
STREAM_VIEW_TYPES = ("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES")
_EXPORT = "python -m constructs_lib contract export <producer app> -o <file>"


class _ModelLike(Protocol):
    name: str

    def to_dict(self) -> dict[str, Any]: ...


# Writing -----------------------------------------------------------------------------------------
def _projection(index: Mapping[str, Any], entity_attribute: str) -> dict[str, Any]:
    """The index projection as the table has it: the entity attribute is always projected, so
    ``KEYS_ONLY`` becomes ``INCLUDE [entity attribute]`` (as ``SingleTable`` synthesizes)."""
    projection = index["projection"]
    if projection == "ALL":
        return {"type": "ALL"}
    extra = [a for a in projection if a != entity_attribute] if isinstance(projection, list) else []
    return {"type": "INCLUDE", "non_key_attributes": [entity_attribute, *extra]}


def _key(name: str | None) -> dict[str, str] | None:
    return {"name": name, "type": "S"} if name else None


def table_schema(model: _ModelLike | Mapping[str, Any]) -> dict[str, Any]:
    """The part of the contract's ``table`` object that follows from the model alone."""
    data = model if isinstance(model, Mapping) else model.to_dict()
    indexes = []
    for index in data["indexes"]:
        pk = data["pk_attribute"] if index["kind"] == "LSI" else index["pk_attribute"]
        indexes.append({
            "name": index["name"], "kind": index["kind"], "partition_key": _key(pk),
            "sort_key": _key(index["sk_attribute"]), "projection": _projection(index, data["entity_attribute"]),
        })
    return {
        "partition_key": _key(data["pk_attribute"]), "sort_key": _key(data["sk_attribute"]),
        "indexes": indexes, "ttl_attribute": data["ttl_attribute"],
    }


def build_contract(
    model: _ModelLike,
    *,
    stream_view_type: str | None = None,
    table_name: str | None = None,
    table_arn: str | None = None,
    replication: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The contract document of ``model`` deployed as a table with the given stream and names.

    Parameters
    ----------
    model
        The producer's ``Model``.
    stream_view_type
        The table stream's view type (:data:`STREAM_VIEW_TYPES`). Default None: no stream.
    table_name, table_arn
        Recorded only when given (pass them only when they are concrete strings). Default None.
    replication
        A global table's ``replication`` object (consistency, Regions, witness, acknowledgements;
        docs/contract-format.md). Recorded only when given. Default None: a single-Region table.
    """
    if stream_view_type is not None and stream_view_type not in STREAM_VIEW_TYPES:
        raise ContractFormatError(
            f"stream_view_type {stream_view_type!r} must be one of {', '.join(STREAM_VIEW_TYPES)} or None"
        )
    data = model.to_dict()
    table = {**table_schema(data), "stream_view_type": stream_view_type}
    if table_name is not None:
        table["table_name"] = table_name
    if table_arn is not None:
        table["table_arn"] = table_arn
    if replication is not None:
        table["replication"] = _checked_replication(dict(replication), "build_contract")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model_name": model.name,
        "fingerprints": {
            "model": fingerprint(data), "entities": entity_fingerprints(data), "indexes": index_fingerprints(data),
        },
        "table": table,
        "model": data,
    }


_CONSISTENCY = ("EVENTUAL", "STRONG")


def _checked_replication(value: Any, where: str) -> dict[str, Any]:
    """``table.replication`` when well formed, else a ``ContractFormatError`` naming the field."""
    def text_list(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(r, str) for r in v)

    problems = []
    if not isinstance(value, Mapping):
        problems.append(f"is {value!r:.60}, expected an object")
    else:
        if value.get("consistency") not in _CONSISTENCY:
            problems.append(f"consistency {value.get('consistency')!r} must be one of {', '.join(_CONSISTENCY)}")
        if not isinstance(value.get("region"), str):
            problems.append(f"region {value.get('region')!r} must be a Region name")
        if not text_list(value.get("replica_regions")) or not value.get("replica_regions"):
            problems.append(f"replica_regions {value.get('replica_regions')!r} must be a non-empty list of Regions")
        if value.get("witness_region") is not None and not isinstance(value.get("witness_region"), str):
            problems.append(f"witness_region {value.get('witness_region')!r} must be a Region name or null")
        acknowledged = value.get("acknowledged", {})
        if not isinstance(acknowledged, Mapping) or not all(isinstance(v, str) for v in acknowledged.values()):
            problems.append(f"acknowledged {acknowledged!r:.60} must map keys to reasons")
    if problems:
        raise ContractFormatError(f"{where}: table.replication " + "; ".join(problems))
    return dict(value)


def contract_json(document: Mapping[str, Any]) -> str:
    """A contract document as the text of its file (sorted keys, 2-space indent, final newline)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# Reading -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Contract:
    """A contract file, read and checked (:func:`read_contract`).

    Attributes
    ----------
    model
        The producer's model.
    fingerprint, entity_fingerprints, index_fingerprints
        The whole-model, per-entity and per-index fingerprints of the model: those in the file,
        except that a file an older constructs_lib wrote with set-valued declarations out of
        order gets the fingerprints of their sorted form.
    stored_fingerprints
        Per entity, how its items are stored beyond their keys (TTL attribute, other declared
        fields, required attributes; :func:`~.fingerprints.stored_fingerprints`), from the model.
    table
        The ``table`` object: ``partition_key``, ``sort_key``, ``indexes``, ``ttl_attribute``,
        ``stream_view_type`` and, when known, ``table_name`` and ``table_arn``; a global table's
        ``replication`` too.
    source
        Where it was read from (a path, ``"contract JSON text"`` or ``"contract mapping"``).
    """

    model: Any
    fingerprint: str
    entity_fingerprints: Mapping[str, str]
    index_fingerprints: Mapping[str, str]
    table: Mapping[str, Any]
    source: str
    document: Mapping[str, Any] = field(repr=False)
    stored_fingerprints: Mapping[str, str] = field(default_factory=dict)


def _load(source: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[Any, str]:
    """(parsed document, description of the source) of a path, JSON text or mapping."""
    if isinstance(source, Mapping):
        return source, "contract mapping"
    if isinstance(source, str) and source.lstrip().startswith("{"):
        text, where = source, "contract JSON text"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        where = f"contract file {str(path)!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ContractFormatError(
                f"{where} does not exist; export it from the producer with {_EXPORT}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ContractFormatError(f"{where} cannot be read: {exc}") from exc
    else:
        raise ContractFormatError(
            f"a contract is a path, JSON text or a mapping, got {type(source).__name__} {source!r:.60}"
        )
    try:
        return load_json(text, where, ContractFormatError), where
    except json.JSONDecodeError as exc:
        ends_early = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated")
        raise ContractFormatError(
            f"{where} is not valid JSON ({exc.msg}: line {exc.lineno}, column {exc.colno}"
            f"{'; the text ends early, is it truncated?' if ends_early else ''}); "
            f"export it again with {_EXPORT}"
        ) from exc


def _field(document: Mapping[str, Any], path: str, kind: type | tuple[type, ...], where: str,
           *, optional: bool = False) -> Any:
    """The value at dotted ``path``; a ``ContractFormatError`` if it is missing or of another type."""
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise ContractFormatError(
                f"{where} has no field {path!r}; it is not a complete {FORMAT} version {FORMAT_VERSION} document "
                f"— export it again with {_EXPORT}"
            )
        value = value[part]
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ContractFormatError(
            f"{where}: field {path!r} is {value!r:.60}, expected {names}{' or null' if optional else ''}"
        )
    return value


def _check_header(document: Any, where: str) -> None:
    if not isinstance(document, Mapping):
        raise ContractFormatError(f"{where} is a JSON {type(document).__name__}, not a {FORMAT} object")
    if document.get("format") != FORMAT:
        raise ContractFormatError(
            f"{where} has format {document.get('format')!r}, not {FORMAT!r}: it is not a constructs_lib contract "
            f"(a model JSON is read with Model.from_json); export one with {_EXPORT}"
        )
    version = _field(document, "format_version", int, where)
    if version > FORMAT_VERSION:
        raise ContractVersionError(
            f"{where} has format_version {version}, but this constructs_lib reads {FORMAT} up to version "
            f"{FORMAT_VERSION}: the producer uses a newer constructs_lib — upgrade constructs_lib "
            "(pip install -U constructs_lib) to read it"
        )
    if version < 1:
        raise ContractFormatError(f"{where}: format_version {version} is not a version of {FORMAT} (versions start at 1)")


def _mismatches(label: str, written: Mapping[str, Any], computed: Mapping[str, Any]) -> list[str]:
    out = []
    for name in sorted(set(written) | set(computed)):
        if written.get(name) != computed.get(name):
            out.append(f"{label} {name!r}: {written.get(name)!r} in the file, {computed.get(name)!r} from its model")
    return out


def read_contract(
    source: str | os.PathLike[str] | Mapping[str, Any],
    model_class: Any,
) -> Contract:
    """Read and check a contract; ``model_class`` (``Model``) builds the model from its JSON.

    Parameters
    ----------
    source
        A path (``str`` or ``os.PathLike``), the JSON text (a ``str`` starting with ``{``) or the
        parsed mapping.
    model_class
        The class whose ``from_dict`` builds the model (``constructs_lib.model.Model``).

    Raises
    ------
    ContractFormatError
        Missing file, malformed or truncated JSON, not a contract, a missing field or one of the
        wrong type, or a model JSON that is not a valid model.
    ContractVersionError
        ``format_version`` is newer than :data:`FORMAT_VERSION`.
    ContractIntegrityError
        The fingerprints, the model name or the table's key schema and indexes disagree with the
        model the file holds.
    """
    document, where = _load(source)
    _check_header(document, where)
    name = _field(document, "model_name", str, where)
    written = {
        "model": _field(document, "fingerprints.model", str, where),
        "entities": _field(document, "fingerprints.entities", Mapping, where),
        "indexes": _field(document, "fingerprints.indexes", Mapping, where),
    }
    table = _field(document, "table", Mapping, where)
    for key, kind in (("partition_key", Mapping), ("sort_key", Mapping), ("indexes", list),
                      ("ttl_attribute", str), ("stream_view_type", str)):
        _field(document, f"table.{key}", kind, where, optional=key not in ("partition_key", "indexes"))
    for key in ("table_name", "table_arn"):
        if key in table:
            _field(document, f"table.{key}", str, where)
    if "replication" in table:
        _checked_replication(table["replication"], where)
    view = table["stream_view_type"]
    if view is not None and view not in STREAM_VIEW_TYPES:
        raise ContractFormatError(
            f"{where}: table.stream_view_type {view!r} must be one of {', '.join(STREAM_VIEW_TYPES)} or null"
        )
    data = _field(document, "model", Mapping, where)
    build: Callable[[Any], Any] = model_class.from_dict
    try:
        model = build(dict(data))
    except ModelError as exc:
        raise ContractFormatError(
            f"{where}: its model is not a valid constructs_lib model ({exc}); export it again with {_EXPORT}"
        ) from exc
    problems = []
    if model.name != name:
        problems.append(f"model_name {name!r} in the file, {model.name!r} in its model")
    # The file is checked against its model JSON as written: an older constructs_lib kept set-valued
    # declarations (choices, when_equals values, INCLUDE projections) in declared order, and hashed
    # them so. What the Contract reports is the model's own, resolved (sorted) form.
    as_written = dict(data)
    problems += _mismatches("fingerprint of the whole", {"model": written["model"]}, {"model": fingerprint(as_written)})
    problems += _mismatches("fingerprint of entity", written["entities"], entity_fingerprints(as_written))
    problems += _mismatches("fingerprint of index", written["indexes"], index_fingerprints(as_written))
    derived = table_schema(as_written)
    problems += _mismatches("table", {k: table.get(k) for k in derived}, derived)
    if problems:
        raise ContractIntegrityError(
            f"{where} does not match the model it holds — it was edited by hand or damaged ("
            + "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
            + f"). Do not edit a contract: export it again from the producer with {_EXPORT}"
        )
    computed = model.to_dict()
    return Contract(
        model=model, fingerprint=fingerprint(computed), entity_fingerprints=entity_fingerprints(computed),
        index_fingerprints=index_fingerprints(computed), table=dict(table), source=where, document=document,
        stored_fingerprints=stored_fingerprints(computed),
    )


__all__ = [
    "FORMAT", "FORMAT_VERSION", "STREAM_VIEW_TYPES", "SUFFIX", "Contract", "build_contract", "contract_json",
    "read_contract", "table_schema",
]
