"""The data model: entities + indexes + access patterns + TTL, validated as a whole.

One :class:`Model` is read twice: at synth time by the CDK constructs (to build the table,
its indexes and grants) and at run time by the runtime client (to build keys). Its JSON form
(:meth:`Model.to_json`) is the versioned contract between the two.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from . import tenancy
from .access import CONSUMER_PATTERNS, AccessPattern, consumer_names
from .entity import SHARD, Entity
from .exceptions import FrozenModelError, ModelFormatError, ModelValidationError
from .exceptions import ModelWarning as ModelWarning  # re-exported: model.ModelWarning
from .indexes import Index
from .jsontext import load_json
from .resolve import resolve_entity, resolve_index, resolve_pattern
from .resolved import ResolvedEntity, ResolvedIndex, ResolvedPattern
from .templates import KeyTemplate

FORMAT = "constructs_lib.model"
#: Version of the JSON contract. Bump on any incompatible change; readers refuse others.
VERSION = 1

MAX_GSIS = 20
MAX_LSIS = 5
MAX_PROJECTED_ATTRIBUTES = 100

_N = TypeVar("_N", Entity, Index, AccessPattern)
_MODEL_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


class Model:
    """A validated single-table data model.

    Parameters
    ----------
    name
        Model name (letters, digits, ``_``, ``-``; ≤ 64). Used in generated names and docs.
    entities
        The entities stored in the table. At least one; names unique.
    indexes
        Secondary indexes the entities use (≤ 20 GSIs, ≤ 5 LSIs). Every declared index
        must be used by at least one entity. Default: none.
    access_patterns
        Every read the application performs. Each is checked to be servable by a GetItem
        or Query; a pattern that would need a Scan raises :class:`AccessPatternError`
        naming it. Default: none.
    ttl_attribute
        Item attribute holding the expiry time (epoch seconds) for DynamoDB TTL. Must not
        be a key attribute or template input. Default None (no TTL).
    pk_attribute, sk_attribute
        Table key attribute names. Default ``"PK"`` / ``"SK"``; the table has a sort key iff
        any entity declares an ``sk`` template (then all must).
    entity_attribute
        Attribute naming each item's entity. Default ``"_type"``.
    tenant_field
        The string field identifying the tenant, e.g. ``"tenant_id"``. Every entity's partition
        key must then start with the same literals followed by it (``TENANT#{tenant_id}#...``);
        see :mod:`constructs_lib.model.tenancy`. Default None (single-tenant).

    Raises
    ------
    ModelValidationError, TemplateError, AccessPatternError
        On any rule violation, naming the offending value.

    Notes
    -----
    A model is immutable once validated: its mappings (``entities``, ``indexes``,
    ``access_patterns``, ``resolved_patterns``) are read-only views and assigning or deleting
    one of its attributes raises :class:`~constructs_lib.model.exceptions.FrozenModelError`, so
    its JSON and fingerprints are those it was validated with.
    """

    def __init__(
        self,
        name: str,
        *,
        entities: Sequence[Entity | ResolvedEntity],
        indexes: Sequence[Index | ResolvedIndex] = (),
        access_patterns: Sequence[AccessPattern] = (),
        ttl_attribute: str | None = None,
        pk_attribute: str = "PK",
        sk_attribute: str = "SK",
        entity_attribute: str = "_type",
        tenant_field: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not _MODEL_NAME_RE.match(name):
            raise ModelValidationError(
                f"model name {name!r} must start with a letter and use letters, digits, '_' or '-' (max 64)"
            )
        self.name = name
        # Another model's resolved entities and indexes are accepted as the declarations they resolve.
        declared: dict[str, Entity] = _unique(
            [e.declared() if isinstance(e, ResolvedEntity) else e for e in entities], Entity, "entity"
        )
        #: The secondary indexes, resolved (default attribute names filled in; an LSI's partition
        #: key is the table's); read-only.
        self.indexes: Mapping[str, ResolvedIndex] = MappingProxyType({
            n: resolve_index(i, pk_attribute)
            for n, i in _unique([i.declared() if isinstance(i, ResolvedIndex) else i for i in indexes], Index, "index").items()
        })
        #: The access patterns as declared (their JSON form); :attr:`resolved_patterns` resolves them. Read-only.
        self.access_patterns: Mapping[str, AccessPattern] = MappingProxyType(
            _unique(access_patterns, AccessPattern, "access pattern")
        )
        self.ttl_attribute = ttl_attribute
        self.pk_attribute = pk_attribute
        self.sk_attribute = sk_attribute
        self.entity_attribute = entity_attribute
        if not declared:
            raise ModelValidationError(f"model {name!r} declares no entities; declare at least one")
        self.has_sort_key = any(e.sk is not None for e in declared.values())
        self._validate_limits()
        self._validate_attributes()
        #: The entities, resolved (normalized fields, parsed templates, each index key resolved); read-only.
        self.entities: Mapping[str, ResolvedEntity] = MappingProxyType(
            {n: resolve_entity(e, self.indexes) for n, e in declared.items()}
        )
        for entity in self.entities.values():
            self._validate_entity(entity)
        self._validate_index_usage()
        self._validate_key_overlap()
        self.tenant_field = tenant_field
        self.tenant_key_prefix: str | None = None
        self.tenant_safe_gsis: tuple[str, ...] = ()
        if tenant_field is not None:
            resolved = tuple(self.entities.values())
            self.tenant_key_prefix = tenancy.tenant_prefix(resolved, tenant_field)
            self.tenant_safe_gsis = tenancy.tenant_safe_gsis(resolved, self.gsis, tenant_field, self.tenant_key_prefix)
        #: Each access pattern resolved (index, key templates and fields, operation); read-only.
        self.resolved_patterns: Mapping[str, ResolvedPattern] = MappingProxyType({
            p.name: resolve_pattern(
                p, self.entities, self.indexes, pk_attribute=pk_attribute,
                sk_attribute=sk_attribute if self.has_sort_key else None,
            )
            for p in self.access_patterns.values()
        })
        self._consumer_patterns: tuple[str, ...] = ()
        self._validated = True  # from here on the model is read-only (__setattr__)

    @property
    def consumer_patterns(self) -> tuple[str, ...]:
        """Names of the access patterns a consumer view added (:meth:`view`); () in a producer's model."""
        return self._consumer_patterns

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and self.__dict__.get("_validated", False):
            raise FrozenModelError(
                f"model {self.__dict__.get('name')!r} is validated and read-only: {name!r} cannot be set (its JSON "
                "and fingerprints would no longer be those it was validated with); build a new Model instead"
            )
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("_") and self.__dict__.get("_validated", False):
            raise FrozenModelError(
                f"model {self.__dict__.get('name')!r} is validated and read-only: {name!r} cannot be deleted; build "
                "a new Model instead"
            )
        super().__delattr__(name)

    # Lookups --------------------------------------------------------------------------------
    def entity(self, name: str) -> ResolvedEntity:
        try:
            return self.entities[name]
        except KeyError:
            raise ModelValidationError(
                f"model {self.name!r} has no entity {name!r}; entities: {', '.join(self.entities)}"
            ) from None

    def index(self, name: str) -> ResolvedIndex:
        try:
            return self.indexes[name]
        except KeyError:
            raise ModelValidationError(
                f"model {self.name!r} has no index {name!r}; indexes: {', '.join(self.indexes) or 'none'}"
            ) from None

    @property
    def gsis(self) -> list[ResolvedIndex]:
        return [i for i in self.indexes.values() if i.kind == "GSI"]

    @property
    def lsis(self) -> list[ResolvedIndex]:
        return [i for i in self.indexes.values() if i.kind == "LSI"]

    def key_attributes(self) -> list[str]:
        """Every key attribute of the table and its indexes (all strings), in order."""
        out = [self.pk_attribute] + ([self.sk_attribute] if self.has_sort_key else [])
        for index in self.indexes.values():
            out += [a for a in index.key_attributes if a not in out]
        return out

    def view(self, extra_patterns: Sequence[AccessPattern] | AccessPattern = (), **refused: Any) -> Model:
        """A consumer's view: this model plus ``extra_patterns``, resolved like the model's own (an
        unservable one raises :class:`AccessPatternError` naming it), listed in :attr:`consumer_patterns`.
        Keys cannot change, so every fingerprint stays the model's; any other argument, a non-pattern
        or a taken pattern name raises :class:`~constructs_lib.model.exceptions.ViewError`."""
        from .view import consumer_view  # construction time only: not shipped in Lambda assets

        return consumer_view(self, extra_patterns, refused, type(self).from_dict)

    # Validation -----------------------------------------------------------------------------
    def _validate_limits(self) -> None:
        if len(self.gsis) > MAX_GSIS:
            raise ModelValidationError(
                f"model {self.name!r} declares {len(self.gsis)} GSIs; DynamoDB allows at most {MAX_GSIS} per "
                "table — overload GSIs across entities instead of adding one per access pattern"
            )
        if len(self.lsis) > MAX_LSIS:
            raise ModelValidationError(
                f"model {self.name!r} declares {len(self.lsis)} LSIs; DynamoDB allows at most {MAX_LSIS} per table"
            )
        if self.lsis and not self.has_sort_key:
            raise ModelValidationError(
                f"LSI {self.lsis[0].name!r} needs a table sort key, but no entity declares an sk template"
            )
        projected = {a for i in self.indexes.values() if isinstance(i.projection, tuple) for a in i.projection}
        if any(i.projection != "ALL" for i in self.indexes.values()):
            projected.add(self.entity_attribute)  # always projected so index items parse back
        if len(projected) > MAX_PROJECTED_ATTRIBUTES:
            raise ModelValidationError(
                f"indexes project {len(projected)} distinct INCLUDE attributes; DynamoDB allows at most "
                f"{MAX_PROJECTED_ATTRIBUTES} across all indexes of a table"
            )

    def _validate_attributes(self) -> None:
        names = [("pk_attribute", self.pk_attribute), ("entity_attribute", self.entity_attribute)]
        if self.has_sort_key:
            names.append(("sk_attribute", self.sk_attribute))
        for index in self.indexes.values():
            names += [(f"index {index.name!r} key attribute", a) for a in index.key_attributes]
        if self.ttl_attribute is not None:
            names.append(("ttl_attribute", self.ttl_attribute))
        seen: dict[str, str] = {}
        for role, attr in names:
            if not isinstance(attr, str) or not attr:
                raise ModelValidationError(f"{role} {attr!r} must be a non-empty attribute name")
            if len(attr.encode("utf-8", "surrogatepass")) > 255:
                raise ModelValidationError(
                    f"{role} {attr[:40]!r}... is {len(attr.encode('utf-8', 'surrogatepass'))} bytes; DynamoDB key "
                    "attribute names are limited to 255 bytes"
                )
            if attr in seen:
                raise ModelValidationError(
                    f"attribute name {attr!r} is used as both {seen[attr]} and {role}; each key, entity and "
                    "TTL attribute needs its own name"
                )
            seen[attr] = role
        self._reserved = seen

    def _validate_entity(self, entity: ResolvedEntity) -> None:
        where = f"entity {entity.name!r}"
        if self.has_sort_key and entity.sk is None:
            raise ModelValidationError(
                f"{where} has no sk template, but the table has a sort key ({self.sk_attribute!r}) because "
                "other entities declare one; give it a constant sk such as 'PROFILE' or 'METADATA'"
            )
        if entity.pk_template.is_constant:
            raise ModelValidationError(
                f"{where} pk template {entity.pk!r} is a constant: every item would share one partition "
                "(1,000 WCU / 3,000 RCU at most); include a high-cardinality field such as '{id}'"
            )
        templates: list[tuple[str, KeyTemplate]] = [("pk", entity.pk_template)]
        if entity.sk_template is not None:
            templates.append(("sk", entity.sk_template))
        sparse_inputs: list[str] = []
        sharded_parts: set[str] = set()  # the pk of a sharded index key fills {shard} itself
        for index_name, key in entity.indexes.items():
            # an LSI key's partition template is the table's, checked above
            own: list[tuple[str, KeyTemplate]] = [("pk", key.pk_template)] if key.kind == "GSI" else []
            own += [("sk", key.sk_template)] if key.sk_template is not None else []
            templates += [(f"index {index_name!r} {part}", t) for part, t in own]
            if key.sharded:
                sharded_parts.add(f"index {index_name!r} pk")
            sparse_inputs += key.sparse_inputs
        declared = entity.fields
        for part, template in templates:
            for ph in template.placeholders:
                if ph.field == SHARD and part in sharded_parts:
                    continue
                if ph.field not in declared:
                    raise ModelValidationError(
                        f"{where} {part} template {template.source!r} uses unknown field {ph.field!r}; declare it "
                        f"in fields (declared: {', '.join(declared) or 'none'})"
                    )
                kind = entity.field(ph.field).kind
                if ph.bucket and kind not in ("timestamp", "date"):
                    raise ModelValidationError(
                        f"{where} {part} template {template.source!r}: time bucket {ph.bucket!r} needs a timestamp or "
                        f"date field, but {ph.field!r} is a {kind} field"
                    )
        for attr in list(declared) + sparse_inputs + list(entity.required) + (
            [entity.version_attribute] if entity.version_attribute else []
        ):
            if attr == self.ttl_attribute and attr not in declared and attr not in sparse_inputs and (
                attr != entity.version_attribute
            ):
                continue  # requiring the TTL attribute on every item is fine; it is no key input
            if attr in self._reserved:
                raise ModelValidationError(
                    f"{where}: attribute {attr!r} is reserved as the model's {self._reserved[attr]}; rename the field"
                )
        key_inputs = {f for _, t in templates for f in t.fields} | set(sparse_inputs)
        if entity.version_attribute and entity.version_attribute in key_inputs:
            raise ModelValidationError(
                f"{where}: version_attribute {entity.version_attribute!r} is also a key input; keys must not "
                "change on every write"
            )

    def _validate_key_overlap(self) -> None:
        """Two entities must never be able to build the same table key: an item of one would
        overwrite (and parse back as) an item of the other. Templates may meet when, segment by
        segment, their literals agree or a placeholder faces anything (a value can equal a literal)."""
        entities = list(self.entities.values())
        for i, a in enumerate(entities):
            for b in entities[i + 1:]:
                pairs = [(a.pk_template, b.pk_template)]
                if a.sk_template is not None and b.sk_template is not None:  # both set iff the table has a sort key
                    pairs.append((a.sk_template, b.sk_template))
                if all(_may_meet(x, y) for x, y in pairs):
                    keys_a = " / ".join(t.source for t, _ in pairs)
                    keys_b = " / ".join(t.source for _, t in pairs)
                    raise ModelValidationError(
                        f"entities {a.name!r} ({keys_a}) and {b.name!r} ({keys_b}) can build the same table key "
                        "(a value may equal the other's literal); give each entity a distinct literal in the "
                        "same segment, e.g. 'ORDER#{order_id}' vs 'ITEM#{line}'"
                    )

    def entities_overlapping(self, pk: str, sk: str | None = None) -> list[str]:
        """Names of entities whose table keys could equal a key built from templates ``pk``/``sk``.

        Lets other key layouts sharing the table (e.g. counter shards ``COUNTER#views#{id}#{shard}``)
        prove they can never overwrite an entity's items. ``sk`` is required when the table has
        a sort key.
        """
        pk_t = KeyTemplate.parse(pk, where="overlap check")
        sk_t = KeyTemplate.parse(sk, where="overlap check") if sk is not None else None
        if self.has_sort_key and sk_t is None:
            raise ModelValidationError(f"model {self.name!r} has a sort key; the overlap check of {pk!r} needs one too")
        hits = []
        for entity in self.entities.values():
            if _may_meet(pk_t, entity.pk_template) and (
                sk_t is None or entity.sk_template is None or _may_meet(sk_t, entity.sk_template)
            ):
                hits.append(entity.name)
        return hits

    def _validate_index_usage(self) -> None:
        used = {name for e in self.entities.values() for name in e.indexes}
        for name in self.indexes:
            if name not in used:
                raise ModelValidationError(
                    f"index {name!r} is declared but no entity has keys for it; an unused index only costs "
                    "storage and write capacity — remove it or add IndexKey entries"
                )

    # Design warnings --------------------------------------------------------------------------
    def warnings(self) -> list[ModelWarning]:
        """Design smells that are legal but risky, e.g. low-cardinality partition keys
        (:func:`~constructs_lib.model.design_warnings.design_warnings`)."""
        from .design_warnings import design_warnings  # synth time only: not shipped in Lambda assets

        return design_warnings(self)

    # Serialization ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "pk_attribute": self.pk_attribute,
            "sk_attribute": self.sk_attribute if self.has_sort_key else None,
            "entity_attribute": self.entity_attribute,
            "ttl_attribute": self.ttl_attribute,
            "tenant_field": self.tenant_field,
            "indexes": [i.to_dict() for i in self.indexes.values()],
            "entities": [e.to_dict() for e in self.entities.values()],
            "access_patterns": [p.to_dict() for p in self.access_patterns.values()],
            **({CONSUMER_PATTERNS: list(self.consumer_patterns)} if self.consumer_patterns else {}),
        }

    def to_json(self, *, indent: int | None = 2, compact: bool = False) -> str:
        """The model as JSON (the synth-time → run-time contract; deterministic output).
        ``compact``: one line without spaces after separators (where bytes count, e.g. in SSM)."""
        if compact:
            return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Model:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ModelFormatError(f"not a {FORMAT} document (format={data.get('format') if isinstance(data, dict) else data!r})")
        if data.get("version") != VERSION:
            raise ModelFormatError(
                f"model JSON version {data.get('version')!r} is not supported; this library reads version {VERSION} "
                "— re-synthesize with a matching constructs_lib"
            )
        try:
            entities = []
            for n, entry in enumerate(data["entities"]):
                if not isinstance(entry, dict):
                    raise ModelFormatError(
                        f"model JSON entities[{n}] is {entry!r:.60}; each entity must be an object with name, pk, ..."
                    )
                entities.append(Entity.from_dict(entry))
            indexes = [Index.from_dict(i) for i in data["indexes"]]
            patterns = [AccessPattern.from_dict(p) for p in data["access_patterns"]]
            name, ttl, pk_attr = data["name"], data["ttl_attribute"], data["pk_attribute"]
            sk_attr, entity_attr = data["sk_attribute"] or "SK", data["entity_attribute"]
        except KeyError as exc:
            raise ModelFormatError(
                f"model JSON is missing key {exc.args[0]!r}; it is not a complete {FORMAT} version {VERSION} document"
            ) from exc
        except (TypeError, AttributeError) as exc:
            raise ModelFormatError(f"model JSON has an unexpected shape: {exc}") from exc
        model = cls(
            name,
            entities=entities,
            indexes=indexes,
            access_patterns=patterns,
            ttl_attribute=ttl,
            pk_attribute=pk_attr,
            sk_attribute=sk_attr,
            entity_attribute=entity_attr,
            tenant_field=data.get("tenant_field"),
        )
        model._consumer_patterns = consumer_names(data, model.access_patterns)
        return model

    @classmethod
    def from_json(cls, text: str | bytes) -> Model:
        try:
            data = load_json(text, "model JSON", ModelFormatError)
        except json.JSONDecodeError as exc:
            raise ModelFormatError(f"model JSON is not valid JSON: {exc}") from exc
        return cls.from_dict(data)

    @classmethod
    def from_contract(cls, source: Any) -> Model:
        """The producer's model from its contract file: a path, the JSON text or the parsed dict, checked
        (raises ``ContractError`` subclasses; see :func:`constructs_lib.model.contract_file.read_contract`).
        A relative path is read from the caller's project directory (the nearest ``cdk.json`` above
        the calling file, else the working directory; :mod:`constructs_lib.model.project_paths`)."""
        import os

        from .contract_file import read_contract
        from .project_paths import resolve_project_path, shown

        if isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
            source = shown(resolve_project_path(source)[0])  # the same file, named from the working directory
        model = read_contract(source, cls).model
        if not isinstance(model, Model):  # read_contract builds it with the class it is given
            raise TypeError(f"contract reader returned {type(model).__name__}, not a Model")
        return model

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.to_json(indent=None))

    def __repr__(self) -> str:
        return f"Model({self.name!r}, entities={list(self.entities)}, indexes={list(self.indexes)})"


def _may_meet(a: KeyTemplate, b: KeyTemplate) -> bool:
    """True if some values could make templates ``a`` and ``b`` build the same key."""
    if len(a.segments) != len(b.segments):
        return False
    return all(
        not isinstance(x, str) or not isinstance(y, str) or x == y for x, y in zip(a.segments, b.segments, strict=True)
    )


def _unique(items: Sequence[_N], cls: type[_N], what: str) -> dict[str, _N]:
    out: dict[str, _N] = {}
    for item in items:
        if not isinstance(item, cls):
            raise ModelValidationError(f"{what} {item!r} must be a {cls.__name__}")
        if item.name in out:
            raise ModelValidationError(f"duplicate {what} name {item.name!r}; names must be unique")
        out[item.name] = item
    return out
