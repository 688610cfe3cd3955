"""The resolved model: what :class:`~constructs_lib.model.model.Model` hands to every reader.

The declared classes (``Entity``, ``IndexKey``, ``Index``, ``AccessPattern``) keep what the user
wrote. :mod:`~constructs_lib.model.resolve` turns them into these immutable types, which carry
every derived fact once: normalized fields, parsed templates, each index key's partition and sort
key (attribute and template; an LSI's partition key is the table's), sparse and shard rules, the
normalized projection. Rationale: docs/adr/0046-declared-and-resolved-model.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .access import AccessPattern, Condition
from .entity import SHARD, SHARD_FIELD, Entity
from .fields import Field
from .indexes import Index, IndexKind, Projection
from .templates import KeyTemplate


@dataclass(frozen=True)
class ResolvedIndex:
    """A secondary index with every default filled in."""

    name: str
    kind: IndexKind
    #: The attribute the index's partition key is read from: the index's own for a GSI, the
    #: table's for an LSI.
    pk_attribute: str
    #: The sort-key attribute, or None when the index has no sort key.
    sk_attribute: str | None
    projection: Projection

    @property
    def sort_key(self) -> bool:
        """Whether the index has a sort key."""
        return self.sk_attribute is not None

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """The index's own key attributes (for an LSI only the sort key)."""
        own = (self.sk_attribute,) if self.kind == "LSI" else (self.pk_attribute, self.sk_attribute)
        return tuple(a for a in own if a)

    def declared(self) -> Index:
        """The index as a user declares it (to build another model from this one's parts)."""
        return Index.from_dict(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "pk_attribute": None if self.kind == "LSI" else self.pk_attribute,
            "sk_attribute": self.sk_attribute,
            "sort_key": self.sort_key,
            "projection": list(self.projection) if isinstance(self.projection, tuple) else self.projection,
        }


@dataclass(frozen=True)
class ResolvedIndexKey:
    """One entity's key in one secondary index."""

    index: str
    kind: IndexKind
    #: The partition-key template as declared (None for an LSI key, which declares none).
    pk: str | None
    #: The sort-key template as declared (None when the index has no sort key).
    sk: str | None
    #: Where and how the partition key is built: for an LSI the table's attribute and the
    #: entity's table pk template.
    pk_attribute: str
    pk_template: KeyTemplate
    sk_attribute: str | None
    sk_template: KeyTemplate | None
    #: Sparse membership: the item is in the index only while this attribute is present.
    when_present: str | None
    #: Sparse membership: attribute → allowed values, sorted by attribute; empty if none.
    when_equals: Mapping[str, tuple[str, ...]]
    #: Partitions of a write-sharded key, or None.
    shards: int | None
    #: The fields the shard is derived from; () unless sharded.
    shard_by: tuple[str, ...]

    @property
    def sharded(self) -> bool:
        """True if the key is write-sharded (``shards`` set)."""
        return self.shards is not None

    @property
    def written(self) -> tuple[tuple[str, KeyTemplate], ...]:
        """(attribute, template) of each key attribute a write of the item sets for the index
        (an LSI's partition key is the table's, which the table key already sets)."""
        out: list[tuple[str, KeyTemplate]] = [] if self.kind == "LSI" else [(self.pk_attribute, self.pk_template)]
        if self.sk_attribute is not None and self.sk_template is not None:
            out.append((self.sk_attribute, self.sk_template))
        return tuple(out)

    @property
    def sparse_inputs(self) -> tuple[str, ...]:
        """Attributes the sparse and shard rules read (besides the templates' fields)."""
        names = [*self.shard_by, *([self.when_present] if self.when_present else []), *self.when_equals]
        return tuple(dict.fromkeys(names))

    def to_dict(self) -> dict[str, Any]:
        return {
            "pk": self.pk,
            "sk": self.sk,
            "when_present": self.when_present,
            "when_equals": {a: list(v) for a, v in self.when_equals.items()} if self.when_equals else None,
            **({"shards": self.shards, "shard_by": list(self.shard_by)} if self.sharded else {}),
        }


@dataclass(frozen=True)
class ResolvedEntity:
    """An entity with its fields, attributes and every key template resolved."""

    name: str
    #: The table key templates as declared, and parsed.
    pk: str
    sk: str | None
    pk_template: KeyTemplate
    sk_template: KeyTemplate | None
    fields: Mapping[str, Field]
    #: Index name → the entity's key there.
    indexes: Mapping[str, ResolvedIndexKey]
    required: tuple[str, ...]
    version_attribute: str | None
    description: str
    attributes: Mapping[str, str]
    #: Fields that make up the table key (immutable once written), in order of first use.
    table_key_fields: tuple[str, ...]
    #: The declared size of a typical stored item in bytes (capacity estimates), or None.
    typical_item_bytes: int | None = None

    def field(self, name: str) -> Field:
        """The declared field ``name`` (the ``{shard}`` placeholder of a sharded index key is a
        two-digit number)."""
        spec = self.fields.get(name)
        if spec is None and name == SHARD and any(k.sharded for k in self.indexes.values()):
            return SHARD_FIELD
        return self.fields[name]

    def sharded_indexes(self) -> dict[str, ResolvedIndexKey]:
        """The entity's write-sharded index keys, by index name."""
        return {n: k for n, k in self.indexes.items() if k.sharded}

    def declared(self) -> Entity:
        """The entity as a user declares it (to build another model from this one's parts)."""
        return Entity.from_dict(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pk": self.pk,
            "sk": self.sk,
            "fields": {k: f.to_dict() for k, f in self.fields.items()},
            "indexes": {name: k.to_dict() for name, k in self.indexes.items()},
            "required": list(self.required),
            "version_attribute": self.version_attribute,
            "description": self.description,
            # Only when declared, so models without them keep their JSON byte for byte.
            **({"attributes": dict(self.attributes)} if self.attributes else {}),
            # Likewise: a size hint is written only when declared (no fingerprint reads it).
            **({"typical_item_bytes": self.typical_item_bytes} if self.typical_item_bytes is not None else {}),
        }


@dataclass(frozen=True)
class ResolvedPattern:
    """An access pattern after validation: which index, which key templates, which fields.

    The key attributes and templates are those of the pattern's first entity (its entities share
    one partition)."""

    #: The pattern's declaration in the form its JSON reads back to (a one-entity tuple as the
    #: entity's name, ``sk_fields`` as a tuple): patterns declared alike resolve equal.
    pattern: AccessPattern
    name: str
    entities: tuple[str, ...]
    index: ResolvedIndex | None  # None = the table
    #: The sort-key condition, or None (the whole partition).
    sk: Condition | None
    descending: bool
    description: str
    pk_attribute: str
    pk_template: KeyTemplate
    sk_attribute: str | None
    sk_template: KeyTemplate | None
    pk_fields: tuple[str, ...]
    sk_fields: tuple[str, ...]
    operation: str  # "GetItem" or "Query"
    #: Partitions of a write-sharded index key the pattern reads (one Query each), or None.
    shards: int | None = None
    #: Other entities whose keys in the pattern's table or index may satisfy its key condition
    #: (:mod:`~constructs_lib.model.overlap`; for an unbounded sort-key condition, those that may
    #: share its partition).
    intruders: tuple[str, ...] = ()
    #: The Query filters on the entity attribute: another entity's keys may satisfy its key
    #: condition, or the condition is not bounded to the entity's keys (none, ``<``, ``>``, ...).
    entity_filter: bool = False

    @property
    def index_name(self) -> str | None:
        """The index read, or None for the table."""
        return None if self.index is None else self.index.name

    def to_dict(self) -> dict[str, Any]:
        return self.pattern.to_dict()
