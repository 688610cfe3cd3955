"""Entities: one kind of item in the single table, with its key templates."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .exceptions import ModelValidationError
from .fields import ATTRIBUTE_KINDS, Field
from .templates import KeyTemplate

#: The placeholder a write-sharded index key puts its shard number in: ``STATUS#{status}#{shard}``.
SHARD = "shard"
#: Shard counts an index key may use: reading one page costs one Query per shard.
MIN_SHARDS, MAX_SHARDS = 2, 100
#: How the shard number is written in keys: two zero-padded digits (``00`` .. ``99``).
SHARD_FIELD = Field("number", width=2)
#: DynamoDB's largest item: 400 KB (names and values), the bound of a ``typical_item_bytes`` hint.
MAX_ITEM_BYTES = 400 * 1024

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


class EntityParts(NamedTuple):
    """What :meth:`Entity.parts` checks and normalizes (the resolution step's input)."""

    fields: dict[str, Field]
    indexes: dict[str, IndexKey]
    required: tuple[str, ...]
    attributes: dict[str, str]
    pk: KeyTemplate
    sk: KeyTemplate | None
    #: Index name → the declared (pk, sk) templates, parsed (pk None for an LSI key).
    templates: dict[str, tuple[KeyTemplate | None, KeyTemplate | None]]


@dataclass(frozen=True)
class IndexKey:
    """An entity's key templates for one secondary index.

    Parameters
    ----------
    pk
        Partition-key template for a GSI (e.g. ``"EMAIL#{email}"``). Must be None for an LSI.
    sk
        Sort-key template; required when the index has a sort key, forbidden otherwise.
    when_present
        Sparse membership: the item is in the index only while this attribute is present.
        Default None (membership follows the presence of the template inputs only).
    when_equals
        Sparse membership: the item is in the index only while each named attribute equals
        one of the given values, e.g. ``{"status": ("PENDING",)}``. Default None.
    shards
        Write-shard the GSI partition key over this many partitions (2–100): the ``pk``
        template holds a ``{shard}`` placeholder, filled with a number derived from the item's
        ``shard_by`` fields (a stable hash, so every write of the item lands in the same shard).
        A query on the index reads all ``shards`` partitions and merges them in sort-key
        order. Size it from an expected write rate with
        :func:`constructs_lib.runtime.sharding.index_shards`. Default None.
    shard_by
        The declared field (or tuple of fields) the shard is derived from, e.g. ``"order_id"``:
        pick an id, so items spread evenly. Required with ``shards``, forbidden without.

    Notes
    -----
    Every attribute named here counts as an input of the index key: an update that sets
    one of them must supply the others (unless they are part of the item's table key), and
    removing one removes the item from the index.
    """

    pk: str | None = None
    sk: str | None = None
    when_present: str | None = None
    when_equals: Mapping[str, Sequence[str]] | None = None
    shards: int | None = None
    shard_by: str | Sequence[str] | None = None

    def __post_init__(self) -> None:
        self.shard_fields()
        self.frozen_when_equals()

    def frozen_when_equals(self) -> dict[str, tuple[str, ...]]:
        """``when_equals`` checked and normalized: attribute → the set of allowed values as a sorted
        tuple without duplicates, attributes sorted (declaration order and repeats change nothing:
        not the model JSON, not a fingerprint); {} if not given."""
        if self.when_equals is None:
            return {}
        if not isinstance(self.when_equals, Mapping):
            raise ModelValidationError(
                f"when_equals {self.when_equals!r} must be a mapping of attribute name to allowed values"
            )
        frozen: dict[str, tuple[str, ...]] = {}
        for attr, values in dict(self.when_equals).items():
            if isinstance(values, str):
                vals: tuple[Any, ...] = (values,)
            elif isinstance(values, (set, frozenset, Sequence)):
                vals = tuple(values)
            else:
                vals = ()
            if not vals or not all(isinstance(v, str) and v for v in vals):
                raise ModelValidationError(
                    f"when_equals[{attr!r}] = {values!r} must be a non-empty string or tuple of strings"
                )
            frozen[attr] = tuple(sorted(set(vals)))
        return dict(sorted(frozen.items()))

    def to_dict(self) -> dict[str, Any]:
        """The key's JSON form, as the model writes it (:meth:`Model.to_dict`)."""
        shard_by = self.shard_fields()
        when_equals = self.frozen_when_equals()
        return {
            "pk": self.pk,
            "sk": self.sk,
            "when_present": self.when_present,
            "when_equals": {a: list(v) for a, v in when_equals.items()} if when_equals else None,
            **({"shards": self.shards, "shard_by": list(shard_by)} if shard_by else {}),
        }

    def shard_fields(self) -> tuple[str, ...]:
        """``shard_by`` checked and normalized to a tuple of field names; () if not sharded."""
        shards, by = self.shards, self.shard_by
        if shards is None:
            if by is not None:
                raise ModelValidationError(f"shard_by {by!r} given without shards; pass shards=N (2-{MAX_SHARDS})")
            return ()
        if isinstance(shards, bool) or not isinstance(shards, int) or not MIN_SHARDS <= shards <= MAX_SHARDS:
            raise ModelValidationError(
                f"shards {shards!r} must be an int from {MIN_SHARDS} to {MAX_SHARDS}: one shard is no sharding, and "
                f"a query reads every shard (one Query each)"
            )
        fields = (by,) if isinstance(by, str) else tuple(by) if isinstance(by, Sequence) else ()
        if not fields or not all(isinstance(f, str) and f for f in fields) or len(set(fields)) != len(fields):
            raise ModelValidationError(
                f"shards={shards} needs shard_by: the field (or tuple of distinct fields) the shard is derived "
                f"from, e.g. shard_by='order_id'; got {by!r}"
            )
        if SHARD in fields:
            raise ModelValidationError(f"shard_by {by!r} may not name {SHARD!r}, the shard placeholder itself")
        return fields

    @property
    def sharded(self) -> bool:
        """True if the key is write-sharded (``shards`` set)."""
        return self.shards is not None


@dataclass(frozen=True)
class Entity:
    """One entity type of the model.

    Parameters
    ----------
    name
        Entity name (``[A-Za-z][A-Za-z0-9_]*``, ≤ 64 chars); stored on every item in the
        model's entity attribute so mixed item collections parse back into entities.
    pk
        Table partition-key template, e.g. ``"USER#{user_id}"``. Must contain a placeholder.
    sk
        Table sort-key template, e.g. ``"ORDER#{created_at}#{order_id}"``. Required when the
        table has a sort key (i.e. when any entity declares one).
    fields
        Types of template inputs: a mapping of name → :class:`Field` (or kind string such as
        ``"timestamp"`` / ``"number:10"``), or a sequence of names (all strings). Every field
        used in a template or sparse condition must be declared. Default: none.
    indexes
        Index name → :class:`IndexKey` (or a ``(pk, sk)`` tuple) for each secondary index the
        entity takes part in. Default: none.
    required
        Attribute names every item of this entity must carry on put. Table-key fields are
        always required. Default: none.
    version_attribute
        Name of a numeric attribute for optimistic locking; when set, ``put``/``update``/
        ``delete`` may pass ``expected_version`` and every write bumps it. Default None.
    description
        Free text for generated docs.
    attributes
        Other attributes the entity's items carry, name → kind (one of
        :data:`~constructs_lib.model.fields.ATTRIBUTE_KINDS`, e.g. ``{"price_cents": "integer"}``).
        They type the generated typed module (``python -m constructs_lib codegen``), which
        refuses undeclared attribute names; the runtime stores them as given. A name may not be
        a declared field or the version attribute. A name may hold ``.`` or ``[`` (DynamoDB
        allows it): conditions and projections then name it with ``Name("a.b")``, since a path
        string ``"a.b"`` means ``b`` inside ``a``. Default: none.
    typical_item_bytes
        The size in bytes of a typical stored item of this entity (attribute names and values,
        key attributes included), a positive int up to 400 KB (409,600). Capacity estimates
        (:mod:`constructs_lib.capacity.estimate`, ``describe``, synth-time cost warnings) use it
        instead of the size of an item built from example values. It is written into the model
        JSON when set and changes no fingerprint. Default None (estimate from the declared fields
        and attributes).
    """

    name: str
    pk: str
    sk: str | None = None
    fields: Mapping[str, Field | str] | Sequence[str] = ()
    indexes: Mapping[str, IndexKey | tuple[str | None, str | None]] = field(default_factory=dict)
    required: Sequence[str] = ()
    version_attribute: str | None = None
    description: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)
    typical_item_bytes: int | None = None

    def __post_init__(self) -> None:
        # Validate only: the declared entity keeps what the user wrote; the model's resolution
        # step (model/resolve.py) builds the normalized form from the same parts.
        self.parts()

    def to_dict(self) -> dict[str, Any]:
        """The entity's JSON form, as the model writes it (:meth:`Model.to_dict`): what was declared,
        normalized (fields as specs, ``(pk, sk)`` tuples as index keys)."""
        parts = self.parts()
        return {
            "name": self.name,
            "pk": self.pk,
            "sk": self.sk,
            "fields": {k: f.to_dict() for k, f in parts.fields.items()},
            "indexes": {name: key.to_dict() for name, key in parts.indexes.items()},
            "required": list(parts.required),
            "version_attribute": self.version_attribute,
            "description": self.description,
            # Only when declared, so models without them keep their JSON byte for byte.
            **({"attributes": dict(parts.attributes)} if parts.attributes else {}),
        }

    def parts(self) -> EntityParts:
        """The entity checked and normalized: fields as :class:`Field`, index keys as
        :class:`IndexKey`, attributes as a dict, every template parsed (errors surface where the
        entity is declared)."""
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ModelValidationError(
                f"entity name {self.name!r} must start with a letter and contain only letters, digits "
                "and '_' (max 64)"
            )
        where = f"entity {self.name!r}"
        if isinstance(self.fields, Mapping):
            fields = {k: Field.coerce(v, where=f"{where} field {k!r}").canonical() for k, v in self.fields.items()}
        elif isinstance(self.fields, str):
            raise ModelValidationError(f"{where}: fields {self.fields!r} must be a mapping or a list of names")
        else:
            fields = {name: Field() for name in self.fields}
        index_keys: dict[str, IndexKey] = {}
        for index_name, key in dict(self.indexes).items():
            if isinstance(key, tuple) and len(key) == 2:
                key = IndexKey(pk=key[0], sk=key[1])
            if not isinstance(key, IndexKey):
                raise ModelValidationError(
                    f"{where}: key for index {index_name!r} is {key!r}; use IndexKey(pk=..., sk=...) or (pk, sk)"
                )
            index_keys[index_name] = key
        attributes = self._checked_attributes(fields)
        self._check_size_hint()
        pk = KeyTemplate.parse(self.pk, where=f"{where} pk")
        sk = None if self.sk is None else KeyTemplate.parse(self.sk, where=f"{where} sk")
        templates: dict[str, tuple[KeyTemplate | None, KeyTemplate | None]] = {}
        for index_name, key in index_keys.items():
            at = f"{where} index {index_name!r}"
            pk_t = KeyTemplate.parse(key.pk, where=f"{at} pk") if key.pk is not None else None
            sk_t = KeyTemplate.parse(key.sk, where=f"{at} sk") if key.sk is not None else None
            _check_shard_placeholder(at, key, pk_t, sk_t, fields)
            templates[index_name] = (pk_t, sk_t)
        return EntityParts(fields, index_keys, self._checked_required(), attributes, pk, sk, templates)

    def _checked_required(self) -> tuple[str, ...]:
        """``required`` as a set: sorted, each name once (the order it was declared in changes nothing)."""
        names = self.required
        if isinstance(names, str) or not isinstance(names, Sequence | set | frozenset) or not all(
            isinstance(n, str) and n for n in names
        ):
            raise ModelValidationError(
                f"entity {self.name!r}: required {names!r} must be a list of attribute names (a tuple, even for one: "
                "('email',))"
            )
        return tuple(sorted(set(names)))

    def _check_size_hint(self) -> None:
        hint = self.typical_item_bytes
        if hint is None:
            return
        if isinstance(hint, bool) or not isinstance(hint, int) or not 1 <= hint <= MAX_ITEM_BYTES:
            raise ModelValidationError(
                f"entity {self.name!r}: typical_item_bytes {hint!r} must be a whole number of bytes from 1 to "
                f"{MAX_ITEM_BYTES:,} (DynamoDB's 400 KB item limit)"
            )

    def _checked_attributes(self, fields: Mapping[str, Field]) -> dict[str, str]:
        where = f"entity {self.name!r}"
        if not isinstance(self.attributes, Mapping):
            raise ModelValidationError(f"{where}: attributes {self.attributes!r} must be a mapping of name to kind")
        out: dict[str, str] = {}
        for name, kind in self.attributes.items():
            if not isinstance(name, str) or not name:
                raise ModelValidationError(f"{where}: attribute name {name!r} must be a non-empty string")
            if kind not in ATTRIBUTE_KINDS:
                raise ModelValidationError(
                    f"{where}: attribute {name!r} has kind {kind!r}; use one of {', '.join(ATTRIBUTE_KINDS)}"
                )
            if name in fields or name == self.version_attribute:
                what = "a declared field (its kind is the field's)" if name in fields else "the version attribute"
                raise ModelValidationError(f"{where}: attribute {name!r} is {what}; declare it once")
            out[name] = kind
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entity:
        return cls(
            name=data["name"],
            pk=data["pk"],
            sk=data["sk"],
            fields={k: Field.from_dict(v) for k, v in data["fields"].items()},
            indexes={
                name: IndexKey(
                    pk=k["pk"], sk=k["sk"], when_present=k["when_present"],
                    when_equals={a: tuple(v) for a, v in k["when_equals"].items()} if k["when_equals"] else None,
                    shards=k.get("shards"), shard_by=tuple(k["shard_by"]) if k.get("shard_by") else None,
                )
                for name, k in data["indexes"].items()
            },
            required=tuple(data["required"]),
            version_attribute=data["version_attribute"],
            description=data.get("description", ""),
            attributes=data.get("attributes") or {},
            typical_item_bytes=data.get("typical_item_bytes"),
        )


def _check_shard_placeholder(
    where: str, key: IndexKey, pk: KeyTemplate | None, sk: KeyTemplate | None, fields: Mapping[str, Field]
) -> None:
    """A sharded key's pk holds ``{shard}`` exactly once (no bucket), its sk none, and the entity
    declares no field of that name; an unsharded key may not use ``{shard}`` undeclared."""
    in_pk = [p for p in (pk.placeholders if pk else ()) if p.field == SHARD]
    in_sk = [p for p in (sk.placeholders if sk else ()) if p.field == SHARD]
    if not key.sharded:
        return  # '{shard}' is then an ordinary field, which the model checks is declared
    if SHARD in fields:
        raise ModelValidationError(
            f"{where}: field {SHARD!r} is declared, but a sharded index key fills the {{{SHARD}}} placeholder "
            "itself; rename the field"
        )
    if pk is None:
        raise ModelValidationError(
            f"{where}: shards={key.shards} needs a GSI partition-key template holding {{{SHARD}}}; an LSI shares "
            "the table's partition key and cannot be sharded"
        )
    if len(in_pk) != 1 or in_pk[0].bucket is not None:
        raise ModelValidationError(
            f"{where}: shards={key.shards} needs the pk template {pk.source!r} to hold the placeholder "
            f"{{{SHARD}}} exactly once, e.g. 'STATUS#{{status}}#{{{SHARD}}}'"
        )
    if in_sk:
        raise ModelValidationError(
            f"{where}: the sk template {sk.source if sk else ''!r} uses {{{SHARD}}}; the shard belongs in the "
            "partition key only"
        )
    for name in key.shard_fields():
        if name not in fields:
            raise ModelValidationError(
                f"{where}: shard_by field {name!r} is not a declared field of the entity (declared: "
                f"{', '.join(fields) or 'none'}); the shard is derived from declared fields' key encodings"
            )
