"""In-memory reference of the model-based test (``test_model_based.py``).

The reference predicts what ``TableClient`` must do on the test model — items stored, keys
built, results of every access pattern (set and order), typed errors — from the semantics
docs/runtime/client.md states ("Semantics"), **without** the runtime's key encoding: escaping, zero
padding, UTC normalization, key templates, sparse membership and derived-key recomputation are
written here again, independently. Nothing from ``constructs_lib.runtime.key_segments/keys/items/values/request_params`` is
imported; only the error classes (the contract the caller catches).

Semantics encoded here (that page and the records in docs/adr/):

* key components: strings percent-escaped (code point <= 0x24 and ``%`` -> ``%XX`` uppercase),
  numbers zero-padded to the field width, timestamps ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC;
  components joined by ``#``; partition key values <= 2048 bytes, sort key values <= 1024.
* put: every derived key computed; an index whose inputs are not all present (or whose sparse
  condition fails) gets no keys. A versioned entity's plain put never moves the version
  backwards: version 1 on create, stored + 1 on overwrite; in a transaction, which cannot read
  the stored version, it is refused without create_only/expected_version.
* update: index keys whose inputs are touched are recomputed; a removed input removes the
  index keys; a set input needs every other input known from the key or the update
  (``UpdateRejectedError``); ADD on a ``when_present``-only input recomputes membership under
  the same rule; ADD on a template or ``when_equals`` input is refused. ``must_exist=False`` on
  a missing item creates a complete item (table-key fields, entity attribute, every index key
  whose inputs are known) — refused with ``ItemNotFoundError`` when the entity's required
  attributes are not all set by the update.
* unknown names (a non-key field in a key, an unknown ``query`` keyword) raise ``KeyValueError``
  before any call; ``bytes`` read back as ``bytes``; attribute names may contain ``:``.
"""

from __future__ import annotations

import builtins
import copy
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from constructs_lib.runtime import (
    ItemExistsError,
    ItemNotFoundError,
    ItemValidationError,
    KeyValueError,
    VersionConflictError,
)
from constructs_lib.runtime.exceptions import SettingsError, UnknownAccessPatternError, UpdateRejectedError

# --------------------------------------------------------------------------------- the model
PK, SK, TYPE, TTL = "PK", "SK", "_type", "expires_at"
MAX_PK_BYTES, MAX_SK_BYTES = 2048, 1024
#: TTL values are epoch seconds: above 1e11 they are milliseconds; more than five years in the
#: past DynamoDB ignores them (the runtime refuses both).
MAX_TTL, TTL_MAX_AGE = 10**11, 5 * 365 * 24 * 3600


@dataclass(frozen=True)
class FieldSpec:
    kind: str  # "string" | "number" | "timestamp"
    width: int | None = None
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class IndexKeySpec:
    pk: str
    sk: str
    when_present: str | None = None
    when_equals: Mapping[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class EntitySpec:
    name: str
    pk: str
    sk: str
    fields: Mapping[str, FieldSpec]
    indexes: Mapping[str, IndexKeySpec]
    required: tuple[str, ...] = ()
    version: str | None = None

    @property
    def key_fields(self) -> tuple[str, ...]:
        out: list[str] = []
        for t in (self.pk, self.sk):
            out += [f for f in template_fields(t) if f not in out]
        return tuple(out)

    def inputs(self, index: str) -> set[str]:
        key = self.indexes[index]
        out = set(template_fields(key.pk)) | set(template_fields(key.sk))
        if key.when_present:
            out.add(key.when_present)
        if key.when_equals:
            out |= set(key.when_equals)
        return out

    def templates(self) -> dict[str, str]:
        """Key attribute -> template, for every key this entity's items can carry."""
        out = {PK: self.pk, SK: self.sk}
        for name, key in self.indexes.items():
            out[f"{name}PK"], out[f"{name}SK"] = key.pk, key.sk
        return out


STRING, TIMESTAMP = FieldSpec("string"), FieldSpec("timestamp")
AMOUNT_WIDTH = 6
STATUSES = ("PENDING", "PAID", "SHIPPED")

ENTITIES: dict[str, EntitySpec] = {
    "Account": EntitySpec(
        "Account", pk="ACCT#{account_id}", sk="PROFILE",
        fields={"account_id": STRING, "email": STRING, "region": STRING, "team": STRING},
        indexes={
            "GSI1": IndexKeySpec("EMAIL#{email}", "ACCOUNT"),               # overloaded with Order
            "GSI3": IndexKeySpec("REGION#{region}#{team}", "ACCT#{account_id}"),  # two-field partition
            # Overloaded with Order on keys that can be identical: with an email equal to an order id
            # both entities' GSI5 keys are the same; with a team equal to an account id an Order's
            # GSI6 partition is this Account's and its sort key shares the "ACCT#" prefix.
            "GSI5": IndexKeySpec("HOLDS#{email}", "ITEM"),
            "GSI6": IndexKeySpec("{team}#R", "ACCT#{region}"),
        },
        required=("email",), version="version",
    ),
    "Order": EntitySpec(
        "Order", pk="ACCT#{account_id}", sk="ORDER#{created_at}#{order_id}",
        fields={"account_id": STRING, "order_id": STRING, "created_at": TIMESTAMP,
                "amount": FieldSpec("number", AMOUNT_WIDTH), "status": FieldSpec("string", choices=STATUSES)},
        indexes={
            "GSI1": IndexKeySpec("ORDER#{order_id}", "ORDER"),
            "GSI2": IndexKeySpec("STATUS#{status}", "{created_at}#{order_id}", when_equals={"status": ("PENDING",)}),
            "GSI4": IndexKeySpec("FLAG#{account_id}", "{amount}#{order_id}", when_present="escalations"),
            "GSI5": IndexKeySpec("HOLDS#{order_id}", "ITEM"),
            "GSI6": IndexKeySpec("{account_id}#R", "ACCT#{order_id}"),
        },
    ),
}
#: Index -> projection ("ALL", "KEYS_ONLY" or the INCLUDE attributes).
INDEXES: dict[str, Any] = {"GSI1": "ALL", "GSI2": "KEYS_ONLY", "GSI3": "ALL", "GSI4": ("escalations", "note"),
                           "GSI5": "ALL", "GSI6": "ALL"}
KEY_ATTRS = (PK, SK, *(f"{i}{p}" for i in INDEXES for p in ("PK", "SK")))
RESERVED = frozenset(KEY_ATTRS) | {TYPE}


@dataclass(frozen=True)
class PatternSpec:
    entities: tuple[str, ...]
    index: str | None = None  # None = the table
    op: str | None = None  # sort-key condition
    field: str | None = None  # the field carrying a range condition
    descending: bool = False
    get: bool = False  # served by GetItem

    @property
    def pk_template(self) -> str:
        ent = ENTITIES[self.entities[0]]
        return ent.pk if self.index is None else ent.indexes[self.index].pk

    @property
    def sort_attr(self) -> str:
        return SK if self.index is None else f"{self.index}SK"

    @property
    def pk_attr(self) -> str:
        return PK if self.index is None else f"{self.index}PK"

    @property
    def accepted(self) -> set[str]:
        return set(template_fields(self.pk_template)) | ({self.field} if self.field else set())


PATTERNS: dict[str, PatternSpec] = {
    "account profile": PatternSpec(("Account",), op="=", get=True),
    "account with orders": PatternSpec(("Account", "Order")),
    "orders newest first": PatternSpec(("Order",), op="begins_with", descending=True),
    "orders in a period": PatternSpec(("Order",), op="between", field="created_at"),
    "orders before": PatternSpec(("Order",), op="<", field="created_at"),
    "orders until": PatternSpec(("Order",), op="<=", field="created_at"),
    "account by email": PatternSpec(("Account",), index="GSI1"),
    "order by id": PatternSpec(("Order",), index="GSI1", op="="),
    "pending orders in a period": PatternSpec(("Order",), index="GSI2", op="between", field="created_at"),
    "pending orders since": PatternSpec(("Order",), index="GSI2", op=">=", field="created_at"),
    "team accounts": PatternSpec(("Account",), index="GSI3", op="begins_with"),
    "escalated orders from amount": PatternSpec(("Order",), index="GSI4", op=">=", field="amount"),
    "escalated orders above amount": PatternSpec(("Order",), index="GSI4", op=">", field="amount", descending=True),
    # Patterns over keys another entity can produce (GSI5, GSI6): each returns its own entity only.
    "holdings of email": PatternSpec(("Account",), index="GSI5", op="="),
    "holdings of order": PatternSpec(("Order",), index="GSI5", op="="),
    "team roster": PatternSpec(("Account",), index="GSI6", op="begins_with"),
    "account roster": PatternSpec(("Order",), index="GSI6", op="begins_with"),
}


# --------------------------------------------------------------------------------- errors
class Refused(Exception):
    """The reference predicts that the call raises one of ``classes`` (several when an input
    breaks more than one rule: which is reported first is the implementation's choice)."""

    def __init__(self, classes: Iterable[type[Exception]], why: str) -> None:
        self.classes = tuple(dict.fromkeys(classes))
        self.why = why
        super().__init__(f"{why} -> {', '.join(c.__name__ for c in self.classes)}")


class Errors:
    """Collects the rules a call breaks before any request is sent."""

    def __init__(self) -> None:
        self.found: list[tuple[type[Exception], str]] = []

    def add(self, cls: type[Exception], why: str) -> None:
        self.found.append((cls, why))

    def __bool__(self) -> bool:
        return bool(self.found)

    def raise_if_any(self) -> None:
        if self.found:
            raise Refused([c for c, _ in self.found], "; ".join(w for _, w in self.found))


_BAD = object()


# --------------------------------------------------------------------------------- values
def template_fields(template: str) -> list[str]:
    return [seg[1:-1] for seg in template.split("#") if seg.startswith("{")]


_ESCAPES = {code: f"%{code:02X}" for code in range(0x26)}


def escape(text: str) -> str:
    """``%XX`` for every code point <= 0x24 and ``%`` (0x25); everything else unchanged."""
    return text.translate(_ESCAPES)


def utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d{2}):(\d{2}))", re.ASCII
)


def utc_text(value: Any) -> str | None:
    """Canonical UTC text of an instant, or None when the value is not an aware instant."""
    if isinstance(value, datetime):
        offset = value.utcoffset()
        if offset is None:
            return None
        naive = value.replace(tzinfo=None) - offset
    elif isinstance(value, str):
        m = _ISO.fullmatch(value)
        if m is None:
            return None
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        micro = int((m.group(7) or "0").ljust(6, "0"))
        try:
            naive = datetime(y, mo, d, h, mi, s, micro)
        except ValueError:
            return None
        if m.group(8) is None:
            sign = 1 if m.group(9) == "+" else -1
            naive -= sign * timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
    else:
        return None
    return (f"{naive.year:04d}-{naive.month:02d}-{naive.day:02d}T{naive.hour:02d}:{naive.minute:02d}:"
            f"{naive.second:02d}.{naive.microsecond:06d}Z")


def normalize_field(ent: EntitySpec, name: str, value: Any, errors: Errors) -> Any:
    """The stored form of a declared field (str / int / canonical UTC text), or _BAD."""
    spec = ent.fields[name]
    where = f"{ent.name}.{name}={value!r:.40}"
    if spec.kind == "string":
        if not isinstance(value, str) or not value or not utf8_ok(value):
            errors.add(KeyValueError, f"{where}: string fields need non-empty valid text")
            return _BAD
        if spec.choices is not None and value not in spec.choices:
            errors.add(ItemValidationError, f"{where}: not one of {spec.choices}")
            return _BAD
        return value
    if spec.kind == "number":
        assert spec.width is not None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or len(str(value)) > spec.width:
            errors.add(KeyValueError, f"{where}: needs an int 0..{10**spec.width - 1}")
            return _BAD
        return value
    text = utc_text(value)
    if text is None:
        errors.add(KeyValueError, f"{where}: needs an aware datetime or ISO-8601 text with an offset")
        return _BAD
    return text


def component(ent: EntitySpec, name: str, stored: Any) -> str:
    spec = ent.fields[name]
    if spec.kind == "number":
        return str(stored).rjust(spec.width or 0, "0")
    if spec.kind == "timestamp":
        return stored  # already fixed-width UTC text
    return escape(stored)


def build(ent: EntitySpec, template: str, values: Mapping[str, Any]) -> str:
    parts = []
    for seg in template.split("#"):
        parts.append(component(ent, seg[1:-1], values[seg[1:-1]]) if seg.startswith("{") else seg)
    return "#".join(parts)


def key_limit(attr: str) -> int:
    return MAX_PK_BYTES if attr.endswith("PK") else MAX_SK_BYTES


def check_size(attr: str, text: str, errors: Errors) -> None:
    size = len(text.encode("utf-8"))
    if size > key_limit(attr):
        errors.add(KeyValueError, f"{attr} is {size} bytes > {key_limit(attr)}")


#: DynamoDB nests documents at most 32 levels deep, the attribute itself included.
MAX_NESTED_CONTAINERS = 31


def nesting(value: Any) -> int:
    if isinstance(value, Mapping):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return 1 + max(map(nesting, value), default=0)
    return 0


def free_value(value: Any, where: str, errors: Errors) -> Any:
    """A non-key attribute value as it reads back (ints as int, tuples as lists), or _BAD."""
    if nesting(value) > MAX_NESTED_CONTAINERS:
        errors.add(ItemValidationError, f"{where}: nested {nesting(value)} containers deep (DynamoDB: 32 levels)")
        return _BAD
    if isinstance(value, str):
        if not utf8_ok(value):
            errors.add(ItemValidationError, f"{where}: lone surrogate")
            return _BAD
        return value
    if isinstance(value, (bool, bytes)) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    if isinstance(value, (list, tuple)):
        out = [free_value(v, where, errors) for v in value]
        return _BAD if _BAD in out else out
    if isinstance(value, Mapping):
        out_map = {str(k): free_value(v, where, errors) for k, v in value.items()}
        return _BAD if _BAD in out_map.values() else out_map
    if isinstance(value, (set, frozenset)):
        if not value:
            errors.add(ItemValidationError, f"{where}: empty set")
            return _BAD
        return {free_value(v, where, errors) for v in value}
    errors.add(ItemValidationError, f"{where}: unsupported {type(value).__name__}")
    return _BAD


def ttl_value(value: Any, errors: Errors) -> Any:
    oldest = int(time.time()) - TTL_MAX_AGE
    if isinstance(value, bool) or not isinstance(value, int) or not oldest <= value <= MAX_TTL:
        errors.add(KeyValueError, f"{TTL}={value!r}: TTL needs epoch seconds")
        return _BAD
    return value


# --------------------------------------------------------------------------------- outcomes
@dataclass
class Outcome:
    """What a write does: the new state of each item it touches (None = absent) and what the
    call returns (decoded). ``condition`` is the error class of a failed condition (nothing is
    written then)."""

    writes: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    result: Any = None
    condition: type[Exception] | None = None
    why: str = ""


def decoded(item: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """An item as the client returns it from the table (or an ALL projection)."""
    if item is None:
        return None
    return {k: copy.deepcopy(v) for k, v in item.items() if k not in KEY_ATTRS}


def projected(item: Mapping[str, Any], index: str | None) -> dict[str, Any]:
    """An item as read from ``index``: KEYS_ONLY / INCLUDE carry the table and index keys,
    the entity attribute and the included attributes; fields come back from the keys."""
    projection = "ALL" if index is None else INDEXES[index]
    if projection == "ALL":
        return decoded(item)  # type: ignore[return-value]
    ent = ENTITIES[item[TYPE]]
    keep = {TYPE} | (set(projection) if isinstance(projection, tuple) else set())
    out = {k: copy.deepcopy(item[k]) for k in keep if k in item}
    templates = ent.templates()
    for attr in (PK, SK, f"{index}PK", f"{index}SK"):
        for name in template_fields(templates[attr]):
            out[name] = item[name]
    return out


class Reference:
    """The table as the semantics say it must be: ``(PK, SK) -> stored item`` (keys included)."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.foreign_in_partition = 0  # set by query()

    # keys ----------------------------------------------------------------------------------
    def table_key(self, ent: EntitySpec, key: Mapping[str, Any], errors: Errors, *, strict: bool) -> tuple[str, str] | None:
        """The (PK, SK) of ``key``; with ``strict``, names that are not table-key fields are errors."""
        values: dict[str, Any] = {}
        for name, value in key.items():
            if name not in ent.key_fields:
                if strict:
                    errors.add(KeyValueError, f"{ent.name}: {name!r} is not a table-key field")
                continue
            values[name] = normalize_field(ent, name, value, errors)
        missing = [f for f in ent.key_fields if key.get(f) is None]
        if missing:
            errors.add(KeyValueError, f"{ent.name}: key misses {missing}")
            return None
        if _BAD in values.values():
            return None
        pk, sk = build(ent, ent.pk, values), build(ent, ent.sk, values)
        check_size(PK, pk, errors)
        check_size(SK, sk, errors)
        return pk, sk

    def index_keys(self, ent: EntitySpec, index: str, values: Mapping[str, Any], errors: Errors) -> dict[str, str] | None:
        """The index key attributes of an item with ``values``, or None when not a member."""
        key = ent.indexes[index]
        if any(values.get(f) is None for f in ent.inputs(index)):
            return None
        if key.when_equals and any(values[a] not in allowed for a, allowed in key.when_equals.items()):
            return None
        out = {f"{index}PK": build(ent, key.pk, values), f"{index}SK": build(ent, key.sk, values)}
        for attr, text in out.items():
            check_size(attr, text, errors)
        return out

    def stored(self, key: tuple[str, str] | None) -> dict[str, Any] | None:
        return None if key is None else self.items.get(key)

    # put -----------------------------------------------------------------------------------
    def put(self, entity: str, attrs: Mapping[str, Any], *, create_only: bool = False,
            expected_version: int | None = None, in_transaction: bool = False) -> Outcome:
        ent = ENTITIES[entity]
        errors = Errors()
        if expected_version is not None and ent.version is None:
            errors.add(UpdateRejectedError, f"{entity} has no version attribute")
        if create_only and expected_version is not None:
            errors.add(UpdateRejectedError, "create_only with expected_version")
        if in_transaction and ent.version and not create_only and expected_version is None:
            # a transaction cannot read the stored version a plain put would continue
            errors.add(UpdateRejectedError, f"transaction put of versioned {entity} without create_only/expected_version")
        item: dict[str, Any] = {}
        failed: set[str] = set()
        for name, value in attrs.items():
            if name in RESERVED:
                errors.add(ItemValidationError, f"{name!r} is managed by the model")
                continue
            if value is None:
                continue
            if name == TTL:
                out = ttl_value(value, errors)
            elif name in ent.fields:
                out = normalize_field(ent, name, value, errors)
            else:
                out = free_value(value, f"{entity}.{name}", errors)
            if out is _BAD:
                failed.add(name)
            else:
                item[name] = out
        missing = [f for f in (*ent.key_fields, *ent.required) if f not in item and f not in failed]
        if missing:
            errors.add(ItemValidationError, f"{entity} item misses {missing}")
        # Every rule a call breaks is collected (the union is what the client may raise), so keys
        # are sized even when another value is refused.
        keys: dict[str, str] = {}
        if all(f in item for f in ent.key_fields):
            keys = {PK: build(ent, ent.pk, item), SK: build(ent, ent.sk, item)}
            check_size(PK, keys[PK], errors)
            check_size(SK, keys[SK], errors)
            for index in ent.indexes:  # an index whose inputs are not all present is skipped (sparse)
                keys.update(self.index_keys(ent, index, item, errors) or {})
        errors.raise_if_any()
        item.update(keys)
        item[TYPE] = entity
        key = (item[PK], item[SK])
        old = self.items.get(key)
        if create_only and old is not None:
            return Outcome(condition=ItemExistsError, why="create_only on an existing item")
        if expected_version is not None:
            if old is None:
                return Outcome(condition=ItemNotFoundError, why="expected_version on a missing item")
            if old[ent.version] != expected_version:  # type: ignore[index]
                return Outcome(condition=VersionConflictError, why=f"stored version {old[ent.version]}")  # type: ignore[index]
        if ent.version:
            item[ent.version] = 1 if old is None else old[ent.version] + 1
        return Outcome(writes={key: item}, result=decoded(item))

    # update --------------------------------------------------------------------------------
    def update(self, entity: str, key: Mapping[str, Any], *, set: Mapping[str, Any] | None = None,  # noqa: A002
               remove: Iterable[str] = (), add: Mapping[str, Any] | None = None,
               expected_version: int | None = None, must_exist: bool = True) -> Outcome:
        ent = ENTITIES[entity]
        errors = Errors()
        table_key = self.table_key(ent, key, errors, strict=True)
        set_values = dict(set or {})
        add = dict(add or {})
        removes = list(remove)
        if len(removes) != len(frozenset(removes)):
            errors.add(ItemValidationError, f"remove {removes} names an attribute twice")
        removes += [n for n, v in set_values.items() if v is None]
        set_values = {n: v for n, v in set_values.items() if v is not None}
        for name in [*set_values, *removes, *add]:
            if name in ent.key_fields:
                errors.add(UpdateRejectedError, f"{name!r} is a table-key field")
            elif name == ent.version:
                errors.add(UpdateRejectedError, f"{name!r} is the version attribute")
            elif name in RESERVED:
                errors.add(ItemValidationError if name in set_values else UpdateRejectedError, f"{name!r} is managed")
        for name in removes:
            if name in ent.required:
                errors.add(UpdateRejectedError, f"{name!r} is required")
        if frozenset(set_values) & frozenset(removes):
            errors.add(UpdateRejectedError, "an attribute is both set and removed")
        if frozenset(add) & (frozenset(set_values) | frozenset(removes)):
            errors.add(ItemValidationError, "an ADD attribute is also set or removed")
        if expected_version is not None and ent.version is None:
            errors.add(UpdateRejectedError, f"{entity} has no version attribute")
        normalized: dict[str, Any] = {}
        refused: set[str] = builtins.set()  # set values refused (their rule is already recorded)
        for name, value in set_values.items():
            if name in ent.key_fields or name == ent.version or name in RESERVED:
                continue
            if name == TTL:
                out = ttl_value(value, errors)
            elif name in ent.fields:
                out = normalize_field(ent, name, value, errors)
            else:
                out = free_value(value, f"{entity}.{name}", errors)
            if out is _BAD:
                refused.add(name)
            else:
                normalized[name] = out
        for name, value in add.items():
            if name in ent.fields:
                errors.add(UpdateRejectedError, f"ADD on key input {name!r}")
                refused.add(name)
            elif not (isinstance(value, int) and not isinstance(value, bool)
                      or isinstance(value, (builtins.set, frozenset)) and value):
                errors.add(UpdateRejectedError, f"ADD {name}={value!r} needs a number or a non-empty set")
        # Derived keys (rules collected even when another one is broken: the client may report any).
        # Inputs known without reading the item: table-key fields (from the key) and set values.
        index_changes: dict[str, dict[str, str] | None] = {}
        known: dict[str, Any] = {}
        if table_key is not None:
            known = {**{f: normalize_field(ent, f, key[f], errors) for f in ent.key_fields}, **normalized}
            for index in ent.indexes:
                inputs = ent.inputs(index)
                if not inputs & (frozenset(normalized) | frozenset(removes) | frozenset(add) | refused):
                    continue
                if inputs & frozenset(removes):
                    index_changes[index] = None
                    continue
                if inputs & refused:
                    continue
                unknown = sorted(f for f in inputs if f not in known and f not in add)
                if unknown:
                    errors.add(UpdateRejectedError, f"index {index} also needs {unknown}")
                    continue
                index_changes[index] = self.index_keys(ent, index, {**{a: True for a in add}, **known}, errors)
        errors.raise_if_any()
        assert table_key is not None
        old = self.items.get(table_key)
        if expected_version is not None:
            if old is None:
                return Outcome(condition=ItemNotFoundError, why="expected_version on a missing item")
            if old[ent.version] != expected_version:  # type: ignore[index]
                return Outcome(condition=VersionConflictError, why=f"stored version {old[ent.version]}")  # type: ignore[index]
        if old is None and must_exist:
            return Outcome(condition=ItemNotFoundError, why="update of a missing item")
        if old is None and any(r not in normalized for r in ent.required):
            return Outcome(condition=ItemNotFoundError, why=f"upsert of a missing item without {ent.required}")
        if old is None:
            new: dict[str, Any] = {f: known[f] for f in ent.key_fields}
            new[TYPE], new[PK], new[SK] = entity, table_key[0], table_key[1]
            for index in ent.indexes:  # untouched indexes whose inputs the key alone gives
                if index not in index_changes and ent.inputs(index) <= builtins.set(known) | builtins.set(add):
                    index_changes[index] = self.index_keys(ent, index, {**{a: True for a in add}, **known}, Errors())
        else:
            new = copy.deepcopy(old)
        new.update(normalized)
        for name in removes:
            new.pop(name, None)
        for name, value in add.items():
            if isinstance(value, (builtins.set, frozenset)):
                new[name] = builtins.set(new.get(name, ())) | builtins.set(value)
            else:
                new[name] = new.get(name, 0) + value
        for index, keys in index_changes.items():
            new.pop(f"{index}PK", None)
            new.pop(f"{index}SK", None)
            new.update(keys or {})
        if ent.version:
            new[ent.version] = 1 if old is None else old[ent.version] + 1
        return Outcome(writes={table_key: new}, result=decoded(new))

    # delete --------------------------------------------------------------------------------
    def delete(self, entity: str, key: Mapping[str, Any], *, expected_version: int | None = None,
               must_exist: bool = False) -> Outcome:
        ent = ENTITIES[entity]
        errors = Errors()
        table_key = self.table_key(ent, key, errors, strict=True)
        if expected_version is not None and ent.version is None:
            errors.add(UpdateRejectedError, f"{entity} has no version attribute")
        errors.raise_if_any()
        assert table_key is not None
        old = self.items.get(table_key)
        if expected_version is not None:
            if old is None:
                return Outcome(condition=ItemNotFoundError, why="expected_version on a missing item")
            if old[ent.version] != expected_version:  # type: ignore[index]
                return Outcome(condition=VersionConflictError, why=f"stored version {old[ent.version]}")  # type: ignore[index]
        elif must_exist and old is None:
            return Outcome(condition=ItemNotFoundError, why="delete of a missing item")
        return Outcome(writes={table_key: None}, result=decoded(old))

    def get(self, entity: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        errors = Errors()
        table_key = self.table_key(ENTITIES[entity], key, errors, strict=True)
        errors.raise_if_any()
        return decoded(self.items.get(table_key))  # type: ignore[arg-type]

    # batches and transactions ---------------------------------------------------------------
    def batch_write(self, puts: list[tuple[str, dict[str, Any]]], deletes: list[tuple[str, dict[str, Any]]]) -> Outcome:
        """Every item validated before anything is written; one item per key; no conditions."""
        errors = Errors()
        writes: dict[tuple[str, str], dict[str, Any] | None] = {}
        seen: list[tuple[str, str]] = []
        for entity, attrs in puts:  # unversioned entities only: a batch put has no condition
            assert ENTITIES[entity].version is None, "batch puts of versioned entities are not modelled"
            try:
                out = self.put(entity, attrs)
            except Refused as exc:
                errors.found += [(c, exc.why) for c in exc.classes]
                continue
            ((k, v),) = out.writes.items()
            seen.append(k)
            writes[k] = v
        for entity, key in deletes:
            e = Errors()
            k = self.table_key(ENTITIES[entity], key, e, strict=True)
            if e:
                errors.found += e.found
                continue
            assert k is not None
            seen.append(k)
            writes[k] = None
        if len(seen) != len(frozenset(seen)):
            errors.add(ItemValidationError, "a key appears twice in the batch")
        errors.raise_if_any()
        return Outcome(writes=writes, result=len(puts) + len(deletes))

    def apply(self, outcome: Outcome) -> None:
        for key, item in outcome.writes.items():
            if item is None:
                self.items.pop(key, None)
            else:
                self.items[key] = item

    # queries -------------------------------------------------------------------------------
    def query(self, name: str, args: Mapping[str, Any], *, consistent: bool = False,
              limit: Any = None) -> list[dict[str, Any]]:
        """Expected items of pattern ``name`` for ``args``, in the order the pattern reads them."""
        if name not in PATTERNS:
            raise Refused([UnknownAccessPatternError], f"pattern {name!r} is not declared")
        p = PATTERNS[name]
        ent = ENTITIES[p.entities[0]]
        self.foreign_in_partition = 0
        errors = Errors()
        unknown = sorted(set(args) - p.accepted - (set(ent.key_fields) if p.get else set()))
        if unknown:
            errors.add(KeyValueError, f"{name}: unknown argument(s) {unknown}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            errors.add(SettingsError, f"limit {limit!r}")
        if consistent and p.index is not None:
            errors.add(SettingsError, "consistent read on a GSI")
        needed = template_fields(p.pk_template) + ([p.field] if p.field else [])
        if p.get:
            needed = list(ent.key_fields)
        missing = [f for f in needed if args.get(f) is None]
        if missing:
            errors.add(KeyValueError, f"{name}: missing {missing}")
            errors.raise_if_any()
        values = {f: normalize_field(ent, f, args[f], errors) for f in template_fields(p.pk_template)}
        bound: Any = None
        if p.field:
            raw = args[p.field]
            if p.op == "between":
                if not isinstance(raw, (tuple, list)) or len(raw) != 2:
                    errors.add(KeyValueError, f"between needs a (low, high) pair, got {raw!r}")
                else:
                    bound = tuple(normalize_field(ent, p.field, v, errors) for v in raw)
                    if _BAD not in bound and bound[0] > bound[1]:
                        errors.add(KeyValueError, f"between: low {raw[0]!r} above high {raw[1]!r}")
            else:
                bound = normalize_field(ent, p.field, raw, errors)
        if _BAD not in values.values():
            check_size(p.pk_attr, build(ent, p.pk_template, values), errors)
        errors.raise_if_any()
        if p.get:
            item = self.get(ent.name, args)
            return [] if item is None else [item]
        pk = build(ent, p.pk_template, values)
        hits = []
        # Items of other entities in the partition read are counted: the pattern must not return them.
        for item in self.items.values():
            if item.get(p.pk_attr) != pk:
                continue
            if item[TYPE] not in p.entities:
                self.foreign_in_partition += 1
                continue
            if p.field is not None and not _holds(p.op, item[p.field], bound):  # type: ignore[arg-type]
                continue
            hits.append(item)
        hits.sort(key=lambda i: i[p.sort_attr].encode("utf-8"), reverse=p.descending)
        return [projected(i, p.index) for i in hits]

    def sort_key_of(self, name: str, item: Mapping[str, Any]) -> bytes:
        """The sort key (bytes) a pattern's result item sits at, rebuilt from its fields."""
        p = PATTERNS[name]
        ent = ENTITIES[item[TYPE]]
        template = ent.templates()[p.sort_attr]
        return build(ent, template, item).encode("utf-8")


def _holds(op: str, value: Any, bound: Any) -> bool:
    """Range conditions on a stored field (fixed-width UTC text or int): compared as values."""
    if op == "between":
        return bound[0] <= value <= bound[1]
    return {"<": value < bound, "<=": value <= bound, ">": value > bound, ">=": value >= bound}[op]


# --------------------------------------------------------------------------------- comparison
def canon(value: Any) -> Any:
    """A hashable, type-strict form: ``1``, ``True``, ``Decimal(1)`` and ``b"1"``/``Binary`` differ."""
    if isinstance(value, bool):
        return ("bool", value)
    if type(value) is int:
        return ("int", value)
    if isinstance(value, Decimal):
        return ("dec", value)
    if isinstance(value, str):
        return ("str", value)
    if type(value) is bytes:
        return ("bytes", value)
    if value is None:
        return ("null",)
    if type(value) is list:
        return ("list", tuple(canon(v) for v in value))
    if type(value) is dict:
        return ("map", tuple(sorted((k, canon(v)) for k, v in value.items())))
    if type(value) is set:
        return ("set", frozenset(canon(v) for v in value))
    return ("other", type(value).__name__, repr(value))


def canon_item(item: Mapping[str, Any] | None) -> Any:
    return None if item is None else tuple(sorted((k, canon(v)) for k, v in item.items()))
