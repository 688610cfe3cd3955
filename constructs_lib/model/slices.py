"""A consumer's slice of a producer's contract, and the check of a slice against a contract.

A :class:`Slice` is what one consumer (a function, or all functions of a consumer app) uses of a
producer's model: the entities it reads or writes and the indexes its patterns read, with their
fingerprints (:mod:`.fingerprints`) as the consumer was built, and how the items it stores or
reads whole are stored beyond their keys. :func:`check_slice` compares it with a contract's
fingerprints and returns the breaks, naming what changed old → new when both models are at
hand. Also the published fingerprints document a producer writes to SSM (:func:`published_document`,
:func:`read_published`). Imports no other module of the model but :mod:`.fingerprints`,
:mod:`.exceptions` and :mod:`.scope` (types only). See docs/contract-format.md and ADR 0042.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .exceptions import SliceError  # defined with the other model errors; importable from here too
from .fingerprints import (
    ModelLike,
    _data,
    canonical,
    digest,
    entity_fingerprints,
    entity_schema,
    fingerprint,
    index_fingerprints,
    index_schema,
    stored_fingerprints,
    stored_schema,
)
from .jsontext import load_json

if TYPE_CHECKING:
    from .model import Model
    from .scope import AccessScope

SLICE_FORMAT = "constructs_lib.slice"
SLICE_VERSION = 1
PUBLISHED_FORMAT = "constructs_lib.published"
PUBLISHED_VERSION = 1
#: The writes of an entity (:data:`~.scope.WRITE_KINDS`) that store its attributes, so depend on how
#: its items are stored (the TTL attribute ``expires_in`` sets, declared fields, required
#: attributes); deletes and condition checks send its key only.
STORING_WRITES = ("put", "update", "transaction_put", "transaction_update", "batch_put")
_HEX = frozenset("0123456789abcdef")


# The slice ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Slice:
    """What one consumer uses of a contract.

    Attributes
    ----------
    consumer
        Who uses it: a function's construct path, or a consumer app's name.
    model_name
        The contract's model name.
    entities, indexes
        Entity / index name → its fingerprint in the model the consumer was built with.
    contract_fingerprint
        The whole-model fingerprint of that model (so a stale pin can be told from a break).
    stored
        Entity name → how its items are stored beyond their keys (the fingerprint of
        :func:`~.fingerprints.stored_schema`), for the entities the consumer stores or reads whole
        (:func:`stored_names`). Default: none (a slice written by an older constructs_lib has
        none, and is checked without).
    entity_schemas, index_schemas, stored_schemas
        Entity / index name → what its fingerprint hashes (``entity_schema``, ``index_schema``,
        ``stored_schema``), so a producer can say what it changed old → new; empty for a slice
        written without them.
    """

    consumer: str
    model_name: str
    entities: Mapping[str, str]
    indexes: Mapping[str, str]
    contract_fingerprint: str
    stored: Mapping[str, str] = field(default_factory=dict)
    entity_schemas: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    index_schemas: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    stored_schemas: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "format": SLICE_FORMAT, "format_version": SLICE_VERSION, "consumer": self.consumer,
            "model_name": self.model_name, "contract_fingerprint": self.contract_fingerprint,
            "entities": dict(sorted(self.entities.items())), "indexes": dict(sorted(self.indexes.items())),
            # Only when there are some, so a file that has none reads as it did.
            **({"stored": dict(sorted(self.stored.items()))} if self.stored else {}),
        }
        if self.entity_schemas or self.index_schemas:
            schemas: dict[str, Any] = {"entities": dict(sorted(self.entity_schemas.items())),
                                       "indexes": dict(sorted(self.index_schemas.items()))}
            if self.stored_schemas:
                schemas["stored"] = dict(sorted(self.stored_schemas.items()))
            data["schemas"] = schemas
        return data

    def to_json(self) -> str:
        """The slice file's text (sorted keys, 2-space indent, final newline)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "slice mapping") -> Slice:
        """Read a slice document, checking every field (:class:`SliceError` naming ``source``)."""
        again = "write it again with `python -m constructs_lib contract slice TARGET -o FILE`"
        if not isinstance(data, Mapping):
            raise SliceError(f"{source} must be a JSON object, got {type(data).__name__}; {again}")
        if data.get("format") != SLICE_FORMAT:
            raise SliceError(f"{source}: format {data.get('format')!r} is not {SLICE_FORMAT!r}; {again}")
        version = data.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise SliceError(f"{source}: format_version {version!r} must be a positive integer; {again}")
        if version > SLICE_VERSION:
            raise SliceError(f"{source}: format_version {version} is newer than this constructs_lib reads "
                             f"({SLICE_VERSION}); upgrade constructs_lib")
        for name in ("consumer", "model_name"):
            if not isinstance(data.get(name), str) or not data[name]:
                raise SliceError(f"{source}: {name} {data.get(name)!r} must be a non-empty string; {again}")
        _check_fingerprint(data.get("contract_fingerprint"), f"{source}: contract_fingerprint", again)
        maps = {}
        for name in ("entities", "indexes"):
            value = data.get(name)
            if not isinstance(value, Mapping):
                raise SliceError(f"{source}: {name} {value!r} must map names to fingerprints; {again}")
            for key, given in value.items():
                _check_fingerprint(given, f"{source}: {name}[{key!r}]", again)
            maps[name] = dict(value)
        if not maps["entities"] and not maps["indexes"]:
            raise SliceError(f"{source}: the slice names no entity and no index; {again}")
        stored = data.get("stored", {})
        if not isinstance(stored, Mapping):
            raise SliceError(f"{source}: stored {stored!r} must map entity names to fingerprints; {again}")
        for key, given in stored.items():
            _check_fingerprint(given, f"{source}: stored[{key!r}]", again)
            if key not in maps["entities"]:
                raise SliceError(f"{source}: stored names entity {key!r}, which is not among its entities; {again}")
        schemas = _read_schemas(data.get("schemas"), {**maps, "stored": dict(stored)}, source, again)
        return cls(data["consumer"], data["model_name"], maps["entities"], maps["indexes"],
                   data["contract_fingerprint"], stored=dict(stored), entity_schemas=schemas["entities"],
                   index_schemas=schemas["indexes"], stored_schemas=schemas["stored"])


def _read_schemas(value: Any, prints: Mapping[str, Mapping[str, str]], source: str,
                  again: str) -> dict[str, dict[str, Any]]:
    """The optional ``schemas`` of a slice document: each must hash to its fingerprint."""
    out: dict[str, dict[str, Any]] = {"entities": {}, "indexes": {}, "stored": {}}
    if value is None:
        return out
    if not isinstance(value, Mapping):
        raise SliceError(f"{source}: schemas {value!r:.60} must hold entities and indexes; {again}")
    for kind in ("entities", "indexes", "stored"):
        given = value.get(kind, {})
        if not isinstance(given, Mapping):
            raise SliceError(f"{source}: schemas.{kind} {given!r:.60} must map names to schemas; {again}")
        for name, schema in given.items():
            if name not in prints[kind]:
                raise SliceError(f"{source}: schemas.{kind}[{name!r}] names no entry of {kind}; {again}")
            if digest(schema) != prints[kind][name]:
                raise SliceError(f"{source}: schemas.{kind}[{name!r}] does not hash to its fingerprint "
                                 f"{prints[kind][name]} (edited by hand?); {again}")
            out[kind][name] = schema
    return out


def _check_fingerprint(value: Any, where: str, again: str) -> None:
    if not isinstance(value, str) or len(value) != 32 or not set(value) <= _HEX:
        raise SliceError(f"{where} {value!r} is not a fingerprint (32 lowercase hex digits); {again}")


def read_slice(source: str | os.PathLike[str] | Mapping[str, Any]) -> Slice:
    """A slice from a path, JSON text or mapping (:class:`SliceError` naming the file)."""
    if isinstance(source, Mapping):
        return Slice.from_dict(source)
    if isinstance(source, str) and source.lstrip().startswith("{"):
        text, where = source, "slice JSON text"
    else:
        where = f"slice file {str(source)!r}"
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SliceError(f"{where} cannot be read ({exc}); write it with "
                             "`python -m constructs_lib contract slice TARGET -o FILE`") from exc
    try:
        data = load_json(text, where, SliceError)
    except json.JSONDecodeError as exc:
        raise SliceError(f"{where} is not valid JSON ({exc.msg}: line {exc.lineno}, column {exc.colno}); write it "
                         "again with `python -m constructs_lib contract slice TARGET -o FILE`") from exc
    return Slice.from_dict(data, source=where)


def used_names(model: Model, scope: AccessScope | None = None) -> tuple[list[str], list[str]]:
    """(entities, indexes) a function with ``scope`` uses; without a scope, all of the model's."""
    if scope is None:
        return list(model.entities), list(model.indexes)
    entities: dict[str, None] = {}
    indexes: dict[str, None] = {}
    for name in scope.patterns:
        resolved = model.resolved_patterns[name]
        entities.update(dict.fromkeys(resolved.entities))
        if resolved.index is not None:
            indexes[resolved.index.name] = None
    for name in (*scope.writes, *scope.batch_gets):
        entities[name] = None
    return list(entities), list(indexes)


def stored_names(model: Model, scope: AccessScope | None = None) -> list[str]:
    """The entities whose items a function with ``scope`` stores (:data:`STORING_WRITES`) or reads
    whole (batch gets, patterns on the table or on an index projecting non-key attributes); without
    a scope, all of the model's. Deletes, condition checks and reads of a ``KEYS_ONLY`` index send
    and return keys only, which the entity fingerprints cover."""
    if scope is None:
        return list(model.entities)
    names = {name: None for name, kinds in scope.writes.items() if any(k in STORING_WRITES for k in kinds)}
    names.update(dict.fromkeys(scope.batch_gets))
    for pattern in scope.patterns:
        resolved = model.resolved_patterns[pattern]
        if resolved.index is None or resolved.index.projection != "KEYS_ONLY":
            names.update(dict.fromkeys(resolved.entities))
    return sorted(names)


def slice_of(model: Model, scope: AccessScope | None = None, *, consumer: str = "function") -> Slice:
    """The slice of ``model`` a function with ``scope`` uses (no scope: every entity and index)."""
    entities, indexes = used_names(model, scope)
    data = model.to_dict()
    entity_schemas = {e: entity_schema(data, e) for e in entities}
    index_schemas = {i: index_schema(data, i) for i in indexes}
    stored_schemas = {e: stored_schema(data, e) for e in stored_names(model, scope)}
    return Slice(
        consumer=consumer, model_name=model.name,
        entities={e: digest(schema) for e, schema in entity_schemas.items()},
        indexes={i: digest(schema) for i, schema in index_schemas.items()},
        contract_fingerprint=fingerprint(data),
        stored={e: digest(schema) for e, schema in stored_schemas.items()},
        entity_schemas=entity_schemas, index_schemas=index_schemas, stored_schemas=stored_schemas,
    )


def merge_slices(consumer: str, slices: Iterable[Slice]) -> Slice:
    """One slice holding every entity and index of ``slices`` (all built against one model)."""
    items = list(slices)
    if not items:
        raise SliceError(f"consumer {consumer!r} has no function bound to an imported table: there is no slice")
    entities: dict[str, str] = {}
    indexes: dict[str, str] = {}
    stored: dict[str, str] = {}
    for piece in items:
        for target, names in ((entities, piece.entities), (indexes, piece.indexes), (stored, piece.stored)):
            for name, piece_digest in names.items():
                if target.setdefault(name, piece_digest) != piece_digest:
                    raise SliceError(f"consumer {consumer!r}: {name!r} has two fingerprints in its functions' "
                                     "slices; its functions were built against different models")
    first = items[0]
    others = {p.model_name for p in items} - {first.model_name}
    if others:
        raise SliceError(f"consumer {consumer!r} uses models {sorted({first.model_name, *others})}; write one "
                         "slice file per producer's model (contract slice --table NAME)")
    entity_schemas = {n: s for piece in items for n, s in piece.entity_schemas.items()}
    index_schemas = {n: s for piece in items for n, s in piece.index_schemas.items()}
    stored_schemas = {n: s for piece in items for n, s in piece.stored_schemas.items()}
    return Slice(consumer, first.model_name, entities, indexes, first.contract_fingerprint, stored,
                 entity_schemas, index_schemas, stored_schemas)


# The published document (SSM) --------------------------------------------------------------------
@dataclass(frozen=True)
class PublishedFingerprints:
    """A producer's published fingerprints (a contract file or the ``<prefix>/contract`` parameter).

    ``stored_fingerprints`` is None when the document does not hold them (they follow from
    ``model`` when it is there; :func:`check_slice` computes them)."""

    model_name: str
    fingerprint: str
    entity_fingerprints: Mapping[str, str]
    index_fingerprints: Mapping[str, str]
    model: Mapping[str, Any] | None = field(default=None, repr=False)
    source: str = "published contract"
    stored_fingerprints: Mapping[str, str] | None = None


def published_document(model: ModelLike, *, include_model: bool = True) -> dict[str, Any]:
    """What a producer publishes in SSM: the fingerprints (and the model's ``to_dict()``). Without
    the model, the stored fingerprints too (``fingerprints.stored``; with it, readers compute them,
    which keeps the parameter within the 4 KB standard tier longer)."""
    data = _data(model)
    prints: dict[str, Any] = {"model": fingerprint(data), "entities": entity_fingerprints(data),
                              "indexes": index_fingerprints(data)}
    document: dict[str, Any] = {
        "format": PUBLISHED_FORMAT, "format_version": PUBLISHED_VERSION, "model_name": data["name"],
        "fingerprints": prints,
    }
    if include_model:
        document["model"] = dict(data)
    else:
        prints["stored"] = stored_fingerprints(data)
    return document


def published_json(model: ModelLike, *, include_model: bool = True) -> str:
    """:func:`published_document` as compact JSON (the parameter's value)."""
    return json.dumps(published_document(model, include_model=include_model), sort_keys=True, separators=(",", ":"))


def read_published(text: str | Mapping[str, Any], *, source: str) -> PublishedFingerprints:
    """Parse a published document (or take a contract file's fingerprints); :class:`SliceError`
    naming ``source`` when it is not one."""
    try:
        data = load_json(text, source, SliceError) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise SliceError(f"{source} is not valid JSON ({exc.msg}); the producer publishes it with "
                         "SingleTable(publish=ModelContract(...)) — redeploy the producer") from exc
    if not isinstance(data, Mapping) or data.get("format") not in (PUBLISHED_FORMAT, "constructs_lib.contract"):
        raise SliceError(f"{source} is not a published contract (format {PUBLISHED_FORMAT!r}); the producer "
                         "publishes it with SingleTable(publish=ModelContract(...)) — redeploy the producer")
    if not isinstance(data.get("format_version"), int) or data["format_version"] > PUBLISHED_VERSION:
        raise SliceError(f"{source}: format_version {data.get('format_version')!r} is newer than this "
                         f"constructs_lib reads ({PUBLISHED_VERSION}); upgrade constructs_lib and rebuild")
    prints = data.get("fingerprints")
    if not isinstance(prints, Mapping) or not all(
        isinstance(prints.get(k), Mapping) for k in ("entities", "indexes")
    ) or not isinstance(prints.get("model"), str):
        raise SliceError(f"{source}: fingerprints must hold model, entities and indexes; redeploy the producer")
    stored = prints.get("stored")
    if stored is not None and not isinstance(stored, Mapping):
        raise SliceError(f"{source}: fingerprints.stored must map entity names to fingerprints; redeploy the producer")
    model = data.get("model")
    return PublishedFingerprints(str(data.get("model_name")), prints["model"], dict(prints["entities"]),
                                 dict(prints["indexes"]), model if isinstance(model, Mapping) else None, source,
                                 dict(stored) if stored is not None else None)


# Checking ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SliceBreak:
    """One entity or index of a slice the contract no longer serves as the consumer expects.

    ``kind`` is ``"entity"``, ``"index"`` or ``"stored"`` (how the items of an entity the consumer
    stores or reads whole are stored: TTL attribute, other declared fields, required attributes);
    ``new`` is None when the contract lacks it; ``changes`` lists what changed, old → new, when
    both models were at hand.
    """

    kind: str
    name: str
    old: str
    new: str | None
    changes: tuple[str, ...] = ()

    def describe(self) -> str:
        what = "; ".join(self.changes) or f"fingerprint {self.old} -> {self.new}"
        if self.kind == "stored":
            if self.new is None:
                return (f"how items of entity {self.name!r} are stored cannot be checked: the contract holds neither "
                        "its model nor its stored fingerprints (a producer on an older constructs_lib with "
                        "include_model=False); redeploy the producer with this version")
            return f"how items of entity {self.name!r} are stored changed: {what}"
        if self.new is None:
            return f"{self.kind} {self.name!r} is not in the contract any more"
        return f"{self.kind} {self.name!r} changed: {what}"


def _leaves(value: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if isinstance(value, Mapping) and value:
        out: dict[tuple[str, ...], Any] = {}
        for key, inner in value.items():
            out.update(_leaves(inner, (*path, str(key))))
        return out
    return {path: value}


def _label(name: str, path: tuple[str, ...]) -> str:
    if path in (("ttl_attribute",), ("required",)):  # of a stored schema
        return f"{name} {'TTL attribute' if path[0] == 'ttl_attribute' else 'required attributes'}"
    if path[:1] == ("fields",):  # a stored schema's other declared fields
        return f"{name} field {' '.join([repr(path[1]), *path[2:]]) if len(path) > 1 else ''}".strip()
    parts = [p for p in path if p not in ("indexes", "writers", "index")]
    if parts and parts[0] == "key_fields":
        parts = ["key field", repr(parts[1]) if len(parts) > 1 else "", *parts[2:]]
    text = " ".join(p for p in parts if p)
    if path and path[-1] in ("pk", "sk"):
        text += " template"
    return f"{name} {text}".strip()


#: The members of an entity schema (its index keys) and of an index schema (its writers) that are
#: named as a whole when one side lacks them, rather than leaf by leaf.
_MEMBERS = ("indexes", "writers")


def _members(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[str], set[tuple[str, str]]]:
    """One line per index key an entity gained or lost, or per writer an index gained or lost;
    and the (group, member) pairs those lines account for."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for group in _MEMBERS:
        a, b = old.get(group), new.get(group)
        if not isinstance(a, Mapping) or not isinstance(b, Mapping):
            continue
        for member in sorted(set(a) ^ set(b)):
            seen.add((group, member))
            rule = b.get(member) if member in b else a[member]
            keys = ", ".join(f"{k} {rule[k]!r}" for k in ("pk", "sk") if isinstance(rule, Mapping) and rule.get(k))
            keys = f" ({keys})" if keys else ""
            if group == "writers":
                out.append(f"{name}: entity {member!r} writes it now{keys}" if member in b
                           else f"{name}: entity {member!r} writes it no longer")
            else:
                out.append(f"{name}: writes index {member!r} now{keys}" if member in b
                           else f"{name}: writes index {member!r} no longer")
    return out, seen


def _described(path: tuple[str, ...], value: Any, whole: set[tuple[str, str]]) -> bool:
    """Whether a leaf is accounted for by a whole-member line (or is an empty group)."""
    return tuple(path[:2]) in whole or (len(path) == 1 and path[0] in _MEMBERS and value == {})


def schema_changes(name: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    """``"<name> <part>: old -> new"`` for every leaf of two entity or index schemas that differs;
    an index key or a writer only one side has is one line (``"GSI2: entity 'A' writes it now ..."``)."""
    out, whole = _members(name, old, new)
    a, b = ({path: v for path, v in _leaves(schema).items() if not _described(path, v, whole)} for schema in (old, new))
    for path in sorted(set(a) | set(b)):
        before, after = a.get(path, _ABSENT), b.get(path, _ABSENT)
        if (before is _ABSENT and after == {}) or (after is _ABSENT and before == {}):
            continue  # a mapping's first entry added (or its last removed): the entry's own line says it
        if before != after:
            out.append(f"{_label(name, path)}: {_show(before)} -> {_show(after)}")
    return tuple(out)


_ABSENT = object()


def _show(value: Any) -> str:
    return "absent" if value is _ABSENT else repr(value)


def _stored_now(name: str, data: Mapping[str, Any], old: str, new: str) -> str:
    now = stored_schema(data, name)
    return (f"fingerprint {old} -> {new}; {name} items are now stored with TTL attribute {now['ttl_attribute']!r}, "
            f"required attributes {now['required']!r}, other declared fields {sorted(now['fields'])!r}")


def _digest_of(schema: Any, data: Mapping[str, Any], name: str) -> str | None:
    try:
        return digest(schema(data, name))
    except (StopIteration, KeyError):
        return None


def check_slice(
    piece: Slice, contract: Any, *, model: ModelLike | None = None
) -> list[SliceBreak]:
    """The breaks of ``piece`` against ``contract`` (anything with ``entity_fingerprints`` and
    ``index_fingerprints``: a contract file's :class:`~.contract_file.Contract`, a
    :class:`PublishedFingerprints`). The slice's stored fingerprints are checked against the
    contract's ``stored_fingerprints``, else those of its model. With ``model`` (the model the
    slice was built from) and the contract's model (``contract.model``), each break names what
    changed, old → new. Empty: compatible."""
    new_model = getattr(contract, "model", None)
    # Both sides as this version hashes them, when needed: sets sorted (a producer on an older
    # constructs_lib hashed them in declared order; the same model, sorted, is no change).
    sorted_models: dict[str, dict[str, Any] | None] = {}

    def new_data() -> dict[str, Any] | None:
        if "new" not in sorted_models:
            sorted_models["new"] = canonical(new_model) if new_model is not None else None
        return sorted_models["new"]

    def old_data() -> dict[str, Any] | None:
        if "old" not in sorted_models:
            sorted_models["old"] = canonical(model) if model is not None else None
        return sorted_models["old"]

    published_stored = getattr(contract, "stored_fingerprints", None)

    def stored_print(name: str) -> str | None:
        if published_stored is not None:
            found: str | None = published_stored.get(name)
            return found
        data = new_data()
        return None if data is None else _digest_of(stored_schema, data, name)

    breaks = []
    for kind, names, published, schema in (
        ("entity", piece.entities, contract.entity_fingerprints.get, entity_schema),
        ("index", piece.indexes, contract.index_fingerprints.get, index_schema),
        ("stored", piece.stored, stored_print, stored_schema),
    ):
        for name, old in sorted(names.items()):
            if kind == "stored" and name not in contract.entity_fingerprints:
                continue  # the entity itself is missing: one break says so
            new = published(name)
            if new == old:
                continue
            now = new_data() if new is not None else None
            if now is not None and _digest_of(schema, now, name) == old:
                continue
            changes: tuple[str, ...] = ()
            before = old_data() if now is not None else None
            held = {"entity": piece.entity_schemas, "index": piece.index_schemas, "stored": piece.stored_schemas}
            written = held[kind].get(name)  # what the slice file holds of it, if it holds it
            if now is not None and before is not None and _digest_of(schema, before, name) == old:
                try:  # (the model the slice was built from: what changed, old -> new)
                    changes = schema_changes(name, schema(before, name), schema(now, name))
                except (StopIteration, KeyError):  # fingerprints that name what the model does not hold
                    changes = ()
            elif kind == "stored" and now is not None and written is not None:  # from the slice file
                try:
                    changes = schema_changes(name, written, schema(now, name))
                except (StopIteration, KeyError):
                    changes = ()
            elif kind == "stored" and new is not None and now is not None:  # the new side, at least
                changes = (_stored_now(name, now, old, new),)
            breaks.append(SliceBreak(kind, name, old, new, changes))
    return breaks


__all__ = [
    "PUBLISHED_FORMAT", "PUBLISHED_VERSION", "SLICE_FORMAT", "SLICE_VERSION", "STORING_WRITES", "PublishedFingerprints",
    "Slice", "SliceBreak", "SliceError", "check_slice", "merge_slices", "published_document", "published_json",
    "read_published", "read_slice", "schema_changes", "slice_of", "stored_names", "used_names",
]
