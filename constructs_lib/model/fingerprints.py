"""Fingerprints of a model's key schema: the whole model, each entity, each index.

A fingerprint is the first 32 hex digits of a SHA-256 over the canonical JSON of exactly the
parts that decide keys and index entries: :func:`fingerprint` the whole model (ADR 0020), and
per entity (:func:`entity_fingerprints`: templates, key fields, index keys, sparse rules) and per
index (:func:`index_fingerprints`: keys, projection, its writers' templates and rules). Adding an
entity, index, access pattern or non-key field moves none of these. :func:`stored_fingerprints`:
how an entity's items are stored beyond their keys (TTL attribute, other declared fields, required
attributes). :func:`canonical`: a model JSON with its sets sorted. Works on a ``Model`` or its
``to_dict()``; imports no other module of the model. See docs/contract-format.md, ADR 0040, 0042.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Protocol

from .templates import KeyTemplate

#: Hex digits kept of the SHA-256 (128 bits).
FINGERPRINT_LENGTH = 32
_ENTITY_KEYS = ("name", "pk", "sk", "fields", "indexes", "version_attribute")
_MODEL_KEYS = ("format", "version", "pk_attribute", "sk_attribute", "entity_attribute", "ttl_attribute", "tenant_field")


class _Serializable(Protocol):
    """A ``Model`` (only its ``to_dict`` is used here)."""

    def to_dict(self) -> dict[str, Any]: ...


ModelLike = _Serializable | Mapping[str, Any]


def _data(model: ModelLike) -> Mapping[str, Any]:
    return model if isinstance(model, Mapping) else model.to_dict()


def digest(document: Any) -> str:
    """SHA-256 of ``document``'s canonical JSON (sorted keys, no spaces), first 32 hex digits."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


# The whole model ---------------------------------------------------------------------------------
def key_schema(model: ModelLike) -> dict[str, Any]:
    """The key-relevant part of a model (or of its ``to_dict()``), in a canonical order."""
    data = _data(model)
    schema = {key: data.get(key) for key in _MODEL_KEYS}
    schema["indexes"] = sorted(data["indexes"], key=lambda i: i["name"])
    schema["entities"] = sorted(
        ({key: entity.get(key) for key in _ENTITY_KEYS} for entity in data["entities"]), key=lambda e: e["name"]
    )
    return schema


def fingerprint(model: ModelLike) -> str:
    """SHA-256 of the canonical JSON of :func:`key_schema`, first :data:`FINGERPRINT_LENGTH` hex digits."""
    return digest(key_schema(model))


# Entities and indexes ----------------------------------------------------------------------------
def _fields_of(templates: list[str | None], rule: Mapping[str, Any] | None = None) -> set[str]:
    """Fields the templates read, plus the sparse and sharding inputs of an index key ``rule``."""
    used = {f for source in templates if source for f in KeyTemplate.parse(source).fields}
    if rule:
        if rule.get("when_present"):
            used.add(rule["when_present"])
        used.update(rule.get("when_equals") or ())
        used.update(rule.get("shard_by") or ())
    return used


def _typed(entity: Mapping[str, Any], used: set[str]) -> dict[str, Any]:
    """The declared specs of the fields in ``used`` (None for one that is not a typed field)."""
    fields = entity.get("fields") or {}
    return {name: fields.get(name) for name in sorted(used)}


def _index_attributes(index: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    pk = data["pk_attribute"] if index["kind"] == "LSI" else index["pk_attribute"]
    return {"kind": index["kind"], "pk_attribute": pk, "sk_attribute": index["sk_attribute"]}


def entity_schema(model: ModelLike, name: str) -> dict[str, Any]:
    """What :func:`entity_fingerprints` hashes for entity ``name``."""
    data = _data(model)
    entity = next(e for e in data["entities"] if e["name"] == name)
    indexes = {i["name"]: i for i in data["indexes"]}
    templates = [entity["pk"], entity["sk"]]
    keys: dict[str, Any] = {}
    used: set[str] = set()
    for index_name, rule in (entity.get("indexes") or {}).items():
        keys[index_name] = {**rule, "index": _index_attributes(indexes[index_name], data)}
        used |= _fields_of([rule.get("pk"), rule.get("sk")], rule)
    used |= _fields_of(templates)
    return {
        "entity": name, "pk": entity["pk"], "sk": entity["sk"], "key_fields": _typed(entity, used),
        "indexes": keys, "version_attribute": entity.get("version_attribute"),
        "pk_attribute": data["pk_attribute"], "sk_attribute": data["sk_attribute"],
        "entity_attribute": data["entity_attribute"], "tenant_field": data.get("tenant_field"),
    }


def index_schema(model: ModelLike, name: str) -> dict[str, Any]:
    """What :func:`index_fingerprints` hashes for index ``name``."""
    data = _data(model)
    index = next(i for i in data["indexes"] if i["name"] == name)
    writers: dict[str, Any] = {}
    for entity in data["entities"]:
        rule = (entity.get("indexes") or {}).get(name)
        if rule is None:
            continue
        pk = entity["pk"] if index["kind"] == "LSI" else rule.get("pk")  # an LSI partitions by the table pk
        writers[entity["name"]] = {
            **rule, "pk": pk, "key_fields": _typed(entity, _fields_of([pk, rule.get("sk")], rule)),
        }
    return {
        "index": name, **_index_attributes(index, data), "sort_key": index["sort_key"],
        "projection": index["projection"], "entity_attribute": data["entity_attribute"], "writers": writers,
    }


def stored_schema(model: ModelLike, name: str) -> dict[str, Any]:
    """What :func:`stored_fingerprints` hashes for entity ``name``: how its items are stored beyond
    their keys (:func:`entity_schema`) — the model's TTL attribute (where ``expires_in`` goes, and
    the name under which a read returns the expiry), the declared fields its keys do not read
    (their stored form, choices and length) and its required attributes. Sets are sorted, so a
    model JSON written in another order (an older constructs_lib kept the declared one) hashes alike."""
    data = _data(model)
    entity = next(e for e in data["entities"] if e["name"] == name)
    keyed = entity_schema(data, name)["key_fields"]
    fields = {f: _set_valued(spec) for f, spec in (entity.get("fields") or {}).items() if f not in keyed}
    return {
        "entity": name, "ttl_attribute": data.get("ttl_attribute"), "fields": fields,
        "required": sorted(set(entity.get("required") or ())),
    }


def _set_valued(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {**spec, "choices": sorted(set(spec["choices"]))} if spec.get("choices") else dict(spec)


def canonical(model: ModelLike) -> dict[str, Any]:
    """A model JSON document with its set-valued declarations as the model resolves them: sorted,
    each value once (``when_equals`` values, INCLUDE projections, field ``choices``, ``required``).
    The identity on a ``Model``'s ``to_dict()``; a document an older constructs_lib wrote keeps
    its declared order, and this gives the fingerprints the same model has now."""
    data = dict(_data(model))
    data["indexes"] = [
        {**i, "projection": sorted(set(i["projection"]))} if isinstance(i.get("projection"), list) else i
        for i in data["indexes"]
    ]
    entities = []
    for entity in data["entities"]:
        entity = dict(entity)
        entity["fields"] = {f: _set_valued(spec) for f, spec in (entity.get("fields") or {}).items()}
        entity["required"] = sorted(set(entity.get("required") or ()))
        entity["indexes"] = {
            i: {**rule, "when_equals": {a: sorted(set(v)) for a, v in sorted(rule["when_equals"].items())}}
            if rule.get("when_equals") else rule
            for i, rule in (entity.get("indexes") or {}).items()
        }
        entities.append(entity)
    data["entities"] = entities
    return data


def entity_fingerprints(model: ModelLike) -> dict[str, str]:
    """Entity name → fingerprint of :func:`entity_schema`."""
    data = _data(model)
    return {e["name"]: digest(entity_schema(data, e["name"])) for e in data["entities"]}


def index_fingerprints(model: ModelLike) -> dict[str, str]:
    """Index name → fingerprint of :func:`index_schema`."""
    data = _data(model)
    return {i["name"]: digest(index_schema(data, i["name"])) for i in data["indexes"]}


def stored_fingerprints(model: ModelLike) -> dict[str, str]:
    """Entity name → fingerprint of :func:`stored_schema`."""
    data = _data(model)
    return {e["name"]: digest(stored_schema(data, e["name"])) for e in data["entities"]}


__all__ = [
    "FINGERPRINT_LENGTH", "ModelLike", "canonical", "digest", "entity_fingerprints", "entity_schema", "fingerprint",
    "index_fingerprints", "index_schema", "key_schema", "stored_fingerprints", "stored_schema",
]
