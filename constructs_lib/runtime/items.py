"""Entity items: from application attributes to stored items and back.

This is where the model's derived-key rule is enforced. Every key attribute — the table's
and every secondary index's — is a function of the item's own attributes:

* on ``put`` all of them are computed; an index whose inputs are not all present (or whose
  sparse condition is not met) gets no key attributes, so the item is not in it;
* on ``update`` every index key whose inputs are touched is recomputed *in the same
  UpdateItem*; setting one input without the others the template needs is rejected
  (:class:`UpdateRejectedError`), unless the others are table-key fields (known from the key);
  removing an input, or failing a sparse condition, removes the index key attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from . import _aws, _exports, key_segments, keys, sharding, ttl
from ._records import frozen_record, record
from .exceptions import (
    ItemValidationError,
    KeyValueError,
    UnknownFieldError,
    UpdateRejectedError,
)
from .limits import MAX_PK_BYTES, MAX_SK_BYTES
from .sharding import SHARD
from .values import check_attribute_name, check_key_size, check_size, from_dynamo, to_dynamo

if TYPE_CHECKING:
    from ..model import KeyTemplate, Model
    from ..model import ResolvedEntity as Entity
    from ..model import ResolvedIndexKey as IndexKey



@record
class UpdatePlan:
    """Attribute changes for one UpdateItem, derived keys included (each empty unless given)."""

    set: dict[str, Any]
    remove: list[str]
    add: dict[str, Any]
    delete: dict[str, Any]
    #: Upserts only: required attributes the update does not write; creating the item without
    #: them is refused (the update then applies only to an existing item).
    create_missing: list[str]

    def __init__(self, set: dict[str, Any] | None = None, remove: list[str] | None = None,  # noqa: A002
                 add: dict[str, Any] | None = None, delete: dict[str, Any] | None = None,
                 create_missing: list[str] | None = None) -> None:
        self.set = {} if set is None else set
        self.remove = [] if remove is None else remove
        self.add = {} if add is None else add
        self.delete = {} if delete is None else delete
        self.create_missing = [] if create_missing is None else create_missing


@frozen_record
class _IndexPlan:
    """One entity's key in one index, as :meth:`ItemMapper.index_key` reads it on every write."""

    key: IndexKey
    inputs: frozenset[str]
    when_equals: tuple[tuple[str, tuple[str, ...]], ...]
    #: (attribute, template, where errors say it is, whether the shard goes into it)
    written: tuple[tuple[str, KeyTemplate, str, bool], ...]
    #: The attribute checked against the partition-key size limit (a GSI's pk), or None.
    size_pk_attribute: str | None
    #: A write-sharded key's shard placeholder encoded, by shard number; () unless sharded.
    shard_texts: tuple[str, ...]

    def __init__(self, key: IndexKey, inputs: frozenset[str], when_equals: tuple[tuple[str, tuple[str, ...]], ...],
                 written: tuple[tuple[str, KeyTemplate, str, bool], ...], size_pk_attribute: str | None,
                 shard_texts: tuple[str, ...]) -> None:
        self.__dict__.update(key=key, inputs=inputs, when_equals=when_equals, written=written,
                             size_pk_attribute=size_pk_attribute, shard_texts=shard_texts)


class ItemMapper:
    """Builds stored items and update plans for the entities of one model."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.key_attributes = tuple(model.key_attributes())
        self.reserved = set(self.key_attributes) | {model.entity_attribute}
        # Per entity, every (key attribute, template) its items can carry: decode() runs per item.
        self._templates_by_entity = {name: self._key_templates(e) for name, e in model.entities.items()}
        self._fields_by_entity = {
            name: frozenset(f for _, _, fields in templates for f in fields)
            for name, templates in self._templates_by_entity.items()
        }
        self._key_attribute_set = frozenset(self.key_attributes)
        # Per (entity, index): the attributes its key depends on (every write asks).
        self._inputs: dict[tuple[str, str], frozenset[str]] = {}
        # Per (entity, index): what index_key reads of the model, gathered once (every write asks).
        self._index_plans: dict[tuple[str, str], _IndexPlan] = {}
        # Per entity: each declared field's spec and the name its errors give (every write asks).
        self._field_specs = {
            name: {f: (spec, f"{name}.{f}") for f, spec in e.fields.items()} for name, e in model.entities.items()
        }

    # Keys ------------------------------------------------------------------------------------
    def table_key(
        self, entity: Entity, values: Mapping[str, Any], *, memo: dict[Any, str] | None = None
    ) -> dict[str, str]:
        """The table key attributes (``PK``/``SK``) built from ``values`` (``memo``: see :func:`keys.build`)."""
        tenant_field = self.model.tenant_field
        if tenant_field is not None and values.get(tenant_field) is not None:
            keys.check_tenant_id(values[tenant_field], field=tenant_field)
        out = {self.model.pk_attribute: keys.build(entity, entity.pk_template, values, where="pk", memo=memo)}
        if entity.sk_template is not None:
            out[self.model.sk_attribute] = keys.build(entity, entity.sk_template, values, where="sk", memo=memo)
        return _check_key_sizes(entity, out, self.model.pk_attribute)

    def index_inputs(self, entity: Entity, index_name: str) -> set[str]:
        """Every attribute an index key of ``entity`` depends on (templates + sparse conditions)."""
        return set(self._index_inputs(entity, index_name))

    def _index_inputs(self, entity: Entity, index_name: str) -> frozenset[str]:
        cached = self._inputs.get((entity.name, index_name))
        if cached is not None and self.model.entities.get(entity.name) is entity:
            return cached
        key = entity.indexes[index_name]
        inputs = self._value_inputs(entity, index_name)
        if key.when_present:
            inputs.add(key.when_present)
        if self.model.entities.get(entity.name) is entity:
            self._inputs[(entity.name, index_name)] = frozenset(inputs)
        return frozenset(inputs)

    def index_key(
        self, entity: Entity, index_name: str, values: Mapping[str, Any], *, memo: dict[Any, str] | None = None
    ) -> dict[str, str] | None:
        """The index key attributes, or None if the item does not belong in the index."""
        plan = self._index_plan(entity, index_name)
        for name in plan.inputs:
            if values.get(name) is None:
                return None
        if plan.when_equals and any(values.get(a) not in allowed for a, allowed in plan.when_equals):
            return None
        out: dict[str, str] = {}
        for attr, template, where, sharded in plan.written:
            if sharded:  # the shard goes into this pk only: not into the memo others share
                shard = sharding.shard_of(entity, plan.key, values, memo=memo)
                if memo is None or not plan.shard_texts:
                    out[attr] = keys.build(entity, template, {**values, SHARD: shard}, where=where, memo=None)
                else:  # the other fields' encodings, and the shard's
                    local = dict(memo)
                    local[(SHARD, None)] = plan.shard_texts[shard]
                    out[attr] = keys.build(entity, template, {**values, SHARD: shard}, where=where, memo=local)
            else:
                out[attr] = keys.build(entity, template, values, where=where, memo=memo)
        return _check_key_sizes(entity, out, plan.size_pk_attribute)

    def _index_plan(self, entity: Entity, index_name: str) -> _IndexPlan:
        """What :meth:`index_key` reads of ``entity``'s key in ``index_name``, gathered once per
        entity of the model (an entity from elsewhere is read afresh)."""
        plan = self._index_plans.get((entity.name, index_name))
        if plan is not None and self.model.entities.get(entity.name) is entity:
            return plan
        key = entity.indexes[index_name]
        written = tuple(
            (attr, template, f"{index_name} {'pk' if attr == key.pk_attribute else 'sk'}",
             key.sharded and attr == key.pk_attribute)
            for attr, template in key.written
        )
        shard_texts: tuple[str, ...] = ()
        if key.sharded and key.shards is not None:  # each shard's encoding, as keys.build makes it
            (placeholder,) = [seg for seg in key.pk_template.segments if not isinstance(seg, str) and seg.field == SHARD]
            if placeholder.bucket is None:  # (the memo's key of it: (SHARD, None))
                shard_texts = tuple(keys.segment_value(entity, placeholder, n) for n in range(key.shards))
        plan = _IndexPlan(key, self._index_inputs(entity, index_name), tuple(key.when_equals.items()), written,
                          key.pk_attribute if key.kind == "GSI" else None, shard_texts)
        if self.model.entities.get(entity.name) is entity:
            self._index_plans[(entity.name, index_name)] = plan
        return plan

    def index_attributes(self, index_name: str) -> list[str]:
        """The attributes a (possibly sparse) index key occupies on an item (not the LSI's PK)."""
        return list(self.model.indexes[index_name].key_attributes)

    # Put -------------------------------------------------------------------------------------
    def normalize(
        self, entity: Entity, attrs: Mapping[str, Any], *, memo: dict[Any, str] | None = None
    ) -> dict[str, Any]:
        """Canonicalize declared fields (timestamps → ISO UTC text, numbers → int) and
        plain values (floats → Decimal); reject reserved attribute names. ``memo`` (see
        :func:`keys.build`) receives each declared field's key encoding, for the item's keys."""
        out: dict[str, Any] = {}
        specs = self._field_specs.get(entity.name) if self.model.entities.get(entity.name) is entity else None
        if specs is None:
            specs = {f: (spec, f"{entity.name}.{f}") for f, spec in entity.fields.items()}
        reserved = self.reserved
        for name, value in attrs.items():
            if not isinstance(name, str) or not name:
                raise ItemValidationError(f"{entity.name}: attribute name {name!r} must be a non-empty string")
            if name in reserved:
                if name == self.model.entity_attribute and value == entity.name:
                    continue
                raise ItemValidationError(
                    f"{entity.name}: attribute {name!r} is managed by the model (key or entity attribute) and "
                    "is computed from the item's fields; do not set it"
                )
            if value is None:
                continue
            declared = specs.get(name)
            if declared is not None:
                spec, where = declared
                value = key_segments.normalize_declared(value, spec.kind, spec.width, where)
                if spec.max_length is not None and len(value) > spec.max_length:
                    raise ItemValidationError(
                        f"{entity.name}.{name}: value of {len(value)} characters is longer than the field's "
                        f"max_length {spec.max_length}"
                    )
                if spec.choices is not None and value not in spec.choices:
                    raise ItemValidationError(
                        f"{entity.name}.{name}: value {value!r} is not one of the declared choices "
                        f"{list(spec.choices)!r}"
                    )
                if memo is not None:
                    memo[(name, None)] = key_segments.encode_normalized(value, spec.kind, spec.width)
                if type(value) is str:  # a declared field's text is checked (valid UTF-8) by now
                    out[name] = value
                    continue
            if type(value) is str:  # the common case of to_dynamo, inline: valid UTF-8 text is stored as is
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    pass  # to_dynamo says why
                else:
                    out[name] = value
                    continue
            out[name] = to_dynamo(value, where=f"{entity.name}.{name}")
        return out

    def build_item(self, entity: Entity, attrs: Mapping[str, Any], *, check: bool = True) -> dict[str, Any]:
        """The full stored item: attributes + entity attribute + table and index keys.

        Each key field is encoded once for all the item's templates. ``check=False`` leaves the
        item size check to the caller (who adds attributes first, then checks once)."""
        memo: dict[Any, str] = {}  # the fields' encoded values, shared by every template of the item
        item = self.normalize(entity, attrs, memo=memo)
        missing = [f for f in (*entity.table_key_fields, *entity.required) if item.get(f) is None]
        if missing:
            raise ItemValidationError(
                f"{entity.name} item is missing required attribute(s) {missing!r} (table-key fields and "
                f"declared required attributes must be present); given: {sorted(item)!r}"
            )
        item[self.model.entity_attribute] = entity.name
        item.update(self.table_key(entity, item, memo=memo))
        for index_name in entity.indexes:
            derived = self.index_key(entity, index_name, item, memo=memo)
            if derived:
                item.update(derived)
        if check:
            check_size(item, where=entity.name)
        return item

    # Update ----------------------------------------------------------------------------------
    def key_values(self, entity: Entity, values: Mapping[str, Any], *, what: str) -> dict[str, str]:
        """The table key built from exactly the entity's table-key fields: any other name in
        ``values`` raises :class:`UnknownFieldError` (a non-key field in a key would be used to
        build nothing, or worse, trusted as the stored value)."""
        accepted = entity.table_key_fields
        unknown = [name for name in values if name not in accepted]
        if unknown:
            raise UnknownFieldError(
                f"{entity.name} {what}: {sorted(map(str, unknown))!r} are not fields of the table key; a key takes "
                f"exactly {list(accepted)!r}"
            )
        return self.table_key(entity, values)

    def plan_update(
        self,
        entity: Entity,
        key_values: Mapping[str, Any],
        set_values: Mapping[str, Any],
        remove: Iterable[str],
        add: Mapping[str, Any] | None = None,
        delete: Mapping[str, Any] | None = None,
        *,
        upsert: bool = False,
    ) -> UpdatePlan:
        """Plan a partial update, recomputing every affected derived key.

        ``upsert`` (an update that may create the item) also writes what a put would: the
        entity attribute, the table-key fields and every index key whose inputs the key and
        the update determine, so a created item is complete and visible to its patterns.
        """
        remove = list(remove)
        set_values = dict(set_values)
        add, delete = dict(add or {}), dict(delete or {})
        for clause, names in (("set", set_values), ("remove", remove), ("add", add), ("delete", delete)):
            for name in names:
                check_attribute_name(name, where=f"{entity.name}: {clause} attribute name")
        _refuse_overlaps(entity.name, set_values, remove, add, delete)
        # ``None`` in set means remove.
        for name, value in list(set_values.items()):
            if value is None:
                remove.append(name)
                del set_values[name]
        key_fields = set(entity.table_key_fields)
        for name in [*set_values, *remove, *add, *delete]:
            if name in key_fields:
                raise UpdateRejectedError(
                    f"{entity.name}: {name!r} is part of the table key {entity.pk!r}/{entity.sk!r} and cannot be "
                    "updated in place; delete the item and put it under the new key (e.g. in a transaction)"
                )
            if name in self.reserved:
                raise UpdateRejectedError(
                    f"{entity.name}: attribute {name!r} is managed by the model (key or entity attribute) and is "
                    "computed from the item's fields; do not set, remove, add or delete it"
                )
            if name in remove and name in entity.required:
                raise UpdateRejectedError(
                    f"{entity.name}: {name!r} is a required attribute of the entity and cannot be removed"
                )
            if name == entity.version_attribute:
                raise UpdateRejectedError(
                    f"{entity.name}: {name!r} is the version attribute and is bumped automatically; pass "
                    "expected_version instead"
                )
            if name == self.model.ttl_attribute and name in set_values:
                set_values[name] = ttl.validate_ttl_value(set_values[name], attribute=name)
        set_memo: dict[Any, str] = {}
        plan = UpdatePlan(set=self.normalize(entity, set_values, memo=set_memo), remove=list(remove))
        plan.add = self._amounts(entity, add, "ADD")
        plan.delete = self._amounts(entity, delete, "DELETE")
        # Encoded field values of ``known`` (which does not change), shared by the index keys; what
        # ``present`` adds is never a template field (ADD on a declared field is refused above).
        memo: dict[Any, str] = {}
        known = {**self.normalize(entity, key_values, memo=memo), **plan.set}
        memo.update(set_memo)
        # ADD on a presence-only input makes it present, whatever it held before.
        present = {name: True for name in plan.add if name not in known}
        set_names, removed_names = set(plan.set) | set(present), set(plan.remove)
        for index_name in entity.indexes:
            inputs = self._index_inputs(entity, index_name)
            touched_set = inputs & set_names
            touched_remove = inputs & removed_names
            attrs = self.index_attributes(index_name)
            if not touched_set and not touched_remove:
                derived = self.index_key(entity, index_name, known, memo=memo) if upsert else None
                if derived:  # every input is a table-key field: what a put of a new item would write
                    plan.set.update(derived)
                continue
            if touched_remove:
                plan.remove += [a for a in attrs if a not in plan.remove]
                continue
            values = {**known, **present}
            missing = sorted(f for f in inputs if values.get(f) is None)
            if missing:
                raise UpdateRejectedError(
                    f"{entity.name}: update sets {sorted(touched_set)!r}, an input of index {index_name!r}'s key, "
                    f"but not {missing!r}, which that key also needs; supply them in the same update so the "
                    "index key can be recomputed"
                )
            derived = self.index_key(entity, index_name, values, memo=memo)
            if derived is None:  # sparse condition not met: leave the index
                plan.remove += [a for a in attrs if a not in plan.remove]
            else:
                plan.set.update(derived)
        if upsert:
            plan.set[self.model.entity_attribute] = entity.name
            for name in entity.table_key_fields:
                plan.set[name] = known[name]
            plan.create_missing = [
                r for r in entity.required if r not in plan.set and r not in plan.add and r != entity.version_attribute
            ]
        return plan

    def _amounts(self, entity: Entity, amounts: Mapping[str, Any], clause: str) -> dict[str, Any]:
        """ADD/DELETE operands, checked: never on a declared field or an input whose new value
        an index key would need (ADD adds an unknown amount; DELETE may empty a set, which
        removes the attribute)."""
        out = {}
        for name, value in amounts.items():
            inputs = [i for i in entity.indexes if name in self.index_inputs(entity, i)]
            value_inputs = [
                i for i in inputs if name in self._value_inputs(entity, i)
            ] if clause == "ADD" else inputs
            if name in entity.fields or value_inputs:
                why = (f"it is an input of index {value_inputs[0]!r}'s key" if value_inputs
                       else "it is a declared field, whose stored form the model controls")
                raise UpdateRejectedError(
                    f"{entity.name}: {clause} on {name!r} is not allowed: {why}, and its value after {clause} is "
                    "unknown before the call; SET it instead"
                )
            value = to_dynamo(value, where=f"{entity.name}.{name} ({clause})")
            if clause == "ADD":
                if not isinstance(value, (int, Decimal, set)) or isinstance(value, bool):
                    raise UpdateRejectedError(
                        f"{entity.name}: ADD {name}={value!r} needs a number or a set (ADD adds to numbers and sets)"
                    )
            elif not isinstance(value, set):
                raise UpdateRejectedError(
                    f"{entity.name}: DELETE {name}={value!r} needs a non-empty set (DELETE removes elements from a set)"
                )
            out[name] = value
        return out

    def _value_inputs(self, entity: Entity, index_name: str) -> set[str]:
        """Inputs of an index key whose *value* matters (templates, ``when_equals``) — all but a
        presence-only ``when_present`` attribute."""
        key = entity.indexes[index_name]
        out = {f for _, t in key.written for f in t.fields}
        out.update(key.when_equals)
        if key.sharded:  # the shard is derived from shard_by, which is what the key depends on
            out.discard(SHARD)
            out.update(key.shard_by)
        return out

    # Read ------------------------------------------------------------------------------------
    def entity_of(self, item: Mapping[str, Any]) -> Entity | None:
        name = item.get(self.model.entity_attribute)
        return self.model.entities.get(name) if isinstance(name, str) else None

    def _key_templates(self, entity: Entity) -> list[tuple[str, KeyTemplate, frozenset[str]]]:
        """(key attribute, template, its fields) of every key the entity's items can carry."""
        pairs: list[tuple[str, KeyTemplate | None]] = [
            (self.model.pk_attribute, entity.pk_template),
            (self.model.sk_attribute, entity.sk_template),
        ]
        sharded: set[str] = set()
        for key in entity.indexes.values():
            pairs += list(key.written)
            if key.sharded:
                sharded.add(key.pk_attribute)
        return [
            (attr, t, frozenset(
                seg.field for seg in t.segments if not isinstance(seg, str) and not (attr in sharded and seg.field == SHARD)
            ))
            for attr, t in pairs if attr and t is not None
        ]

    def decode_wire(self, item: Mapping[str, Any], *, raw: bool = False) -> dict[str, Any]:
        """:meth:`decode` of a wire-format item (``{"S": ...}``, ``{"N": ...}``, ...), in one pass:
        the same result as ``decode(_aws.deserialize(item))``."""
        out: dict[str, Any] = {}
        held: dict[str, Any] = {}  # key attributes: dropped from the result, parsed if a field is missing
        key_attributes = () if raw else self._key_attribute_set
        for name, value in item.items():
            if len(value) == 1 and "S" in value:
                converted = value["S"]
            else:
                data = value.get("N") if len(value) == 1 else None
                # Plain integers (nearly every number) as int directly; the rest as boto3 makes them.
                if data is not None and len(data) < 19 and data.isascii() and data.isdigit():
                    converted = int(data)
                else:
                    converted = from_dynamo(_aws.deserialize_value(value))
            if name in key_attributes:
                held[name] = converted
            else:
                out[name] = converted
        if raw or not held:
            return out
        entity = self.entity_of(out)
        if entity is not None:
            templates, every_field = self._templates_by_entity[entity.name], self._fields_by_entity[entity.name]
            if not every_field <= out.keys():
                for attr, template, fields in templates:
                    text = held.get(attr)
                    if isinstance(text, str) and not fields <= out.keys():  # a field to recover from it
                        for name, value in keys.parse(entity, template, text).items():
                            if name in fields and name not in out:
                                out[name] = _stored_form(entity, name, value)
        return out

    def decode(self, item: Mapping[str, Any], *, raw: bool = False) -> dict[str, Any]:
        """An application item from a stored one: key attributes dropped (unless ``raw``),
        integral numbers as int, and fields missing from a projection (``KEYS_ONLY``) parsed
        back from the table and index keys the item carries."""
        if raw:
            return {k: from_dynamo(v) for k, v in item.items()}
        key_attributes = self._key_attribute_set
        out = {k: v if type(v) is str or type(v) is int else from_dynamo(v)
               for k, v in item.items() if k not in key_attributes}
        entity = self.entity_of(out)
        if entity is not None and not self._fields_by_entity[entity.name] <= out.keys():
            for attr, template, fields in self._templates_by_entity[entity.name]:
                text = item.get(attr)
                if isinstance(text, str) and not fields <= out.keys():  # a field to recover from it
                    for name, value in keys.parse(entity, template, text).items():
                        # (a time-bucket component, parsed as "field:bucket", is not a field)
                        if name in fields and name not in out:
                            out[name] = _stored_form(entity, name, value)
        return out


def _stored_form(entity: Entity, name: str, value: Any) -> Any:
    spec = entity.field(name)
    return key_segments.normalize(value, spec.kind, width=spec.width, field=f"{entity.name}.{name}")


def _check_key_sizes(entity: Entity, key: dict[str, str], pk_attribute: str | None) -> dict[str, str]:
    for attr, text in key.items():
        limit = MAX_PK_BYTES if attr == pk_attribute else MAX_SK_BYTES
        if 4 * len(text) > limit:  # (a character takes at most 4 bytes in UTF-8: shorter keys fit)
            check_key_size(text, limit, f"{entity.name}: {attr}",
                           " — shorten the values in the key (keep large data out of keys)")
    return key


def require_fields(entity: Entity, values: Mapping[str, Any], fields: Iterable[str], *, what: str) -> None:
    missing = [f for f in fields if values.get(f) is None]
    if missing:
        raise KeyValueError(
            f"{entity.name} {what} needs field(s) {missing!r}; given: {sorted(values) or 'nothing'}"
        )


def _refuse_overlaps(
    entity: str, set_values: Mapping[str, Any], remove: list[str], add: Mapping[str, Any], delete: Mapping[str, Any]
) -> None:
    """DynamoDB refuses an UpdateExpression whose clauses name one attribute twice ("Two
    document paths overlap"); say so before the call, naming the attribute."""
    seen: dict[str, str] = {}
    for clause, names in (("set", list(set_values)), ("remove", remove), ("add", list(add)), ("delete", list(delete))):
        for name in names:
            if name in seen:
                first = seen[name]
                how = f"listed twice in {clause}" if first == clause else f"named in both {first} and {clause}"
                raise UpdateRejectedError(
                    f"{entity}: attribute {name!r} is {how}; an update may change each attribute once"
                )
            seen[name] = clause


if not TYPE_CHECKING:  # its names of 0.1.0 (runtime/_deprecated.py); a type checker flags them
    __getattr__ = _exports.lazy_exports(__name__, {})[1]
