"""Typed conditions, filters and projections: ``attr("status") == "PAID"``, ``size(attr("tags")) > 3``.

A condition is an immutable tree built with :func:`attr`, :func:`size`, comparisons, ``between``,
``is_in``, ``begins_with``, ``contains``, ``exists``/``not_exists`` and ``&``, ``|``, ``~``.
:func:`render` turns it into expression text for the entities a request touches: names checked,
values encoded like on write, every name and value through its own placeholders (``#c0``/``:c0``
for write conditions, ``#f0``/``:f0`` for filters, ``#p0`` for projections), so they never meet
the request's own ``#n``/``:v``. A path string is a DynamoDB document path (``a.b`` nested,
``w[0]`` a list element); :class:`Name` names one attribute whose name holds ``.`` or ``[``. See
docs/adr/0031-conditions-filters-projections.md and docs/adr/0039-names-and-attribute-paths.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from . import key_segments
from ._records import frozen_record
from .exceptions import InvalidConditionError, KeyValueError, UnknownAttributeError
from .values import check_attribute_name, to_dynamo

if TYPE_CHECKING:
    from ..model import Field, Model
    from ..model import ResolvedEntity as Entity
    from ..model import ResolvedIndex as Index

__all__ = ["Condition", "Name", "Path", "Size", "attr", "size"]

#: DynamoDB's limit on the operands of one ``IN``.
MAX_IN_VALUES = 100

_PART = re.compile(r"([^\[\]]+)((?:\[[0-9]+\])*)")
_INDEX = re.compile(r"\[([0-9]+)\]")
_NO_BOOL = "a condition has no truth value: combine with &, |, ~ (not and/or/not); write ranges with .between()"


_COMPARISONS = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class Condition:
    """A condition on one item; combine with ``&`` (and), ``|`` (or), ``~`` (not). ``op`` is a
    comparison (``=``, ``<>``, ...), ``between``, ``is_in``, ``begins_with``, ``contains``,
    ``exists``, ``not_exists``, ``AND``, ``OR`` or ``NOT``; ``args`` its operands."""

    __slots__ = ("args", "op")

    def __init__(self, op: str, *args: Any) -> None:
        self.op = op
        self.args = args

    def __and__(self, other: Condition) -> Condition:
        return Condition("AND", self, _condition(other, "&"))

    def __or__(self, other: Condition) -> Condition:
        return Condition("OR", self, _condition(other, "|"))

    def __invert__(self) -> Condition:
        return Condition("NOT", self)

    def __bool__(self) -> bool:
        raise InvalidConditionError(_NO_BOOL)

    def __repr__(self) -> str:
        op, args = self.op, self.args
        if op in ("AND", "OR"):
            return "(" + (" & " if op == "AND" else " | ").join(map(repr, args)) + ")"
        if op == "NOT":
            return f"~{args[0]!r}"
        if op in _COMPARISONS:
            return f"({args[0]!r} {_COMPARISONS[op]} {args[1]!r})"
        return f"{args[0]!r}.{op}({', '.join(map(repr, args[1:]))})"


def _condition(value: Any, op: str) -> Condition:
    if not isinstance(value, Condition):
        raise InvalidConditionError(f"{op} combines conditions; {value!r:.60} is not one")
    return value


class _Operand:
    """What comparisons apply to: an attribute path or its size."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # == builds a condition, so no hashing

    def __eq__(self, other: Any) -> Condition:  # type: ignore[override]  # == builds a condition, not a bool
        return Condition("=", self, other)

    def __ne__(self, other: Any) -> Condition:  # type: ignore[override]  # != builds a condition, not a bool
        return Condition("<>", self, other)

    def __lt__(self, other: Any) -> Condition:
        return Condition("<", self, other)

    def __le__(self, other: Any) -> Condition:
        return Condition("<=", self, other)

    def __gt__(self, other: Any) -> Condition:
        return Condition(">", self, other)

    def __ge__(self, other: Any) -> Condition:
        return Condition(">=", self, other)

    def between(self, low: Any, high: Any) -> Condition:
        """``low <= self <= high`` (both inclusive)."""
        return Condition("between", self, low, high)

    def is_in(self, *values: Any) -> Condition:
        """Equal to one of ``values`` (1 to 100; a single list, tuple or set is unpacked)."""
        if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
            values = tuple(values[0])
        if not 1 <= len(values) <= MAX_IN_VALUES:
            raise InvalidConditionError(f"is_in() takes 1 to {MAX_IN_VALUES} values; got {len(values)}")
        return Condition("is_in", self, *values)


class Name:
    """One top-level attribute, by its exact name: ``attr(Name("a.b"))`` is the attribute called
    ``a.b``, where ``attr("a.b")`` is the document path ``a`` → ``b`` (as in DynamoDB)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = check_attribute_name(name, where="Name: attribute name")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Name) and other.name == self.name

    def __hash__(self) -> int:
        return hash((Name, self.name))

    def __repr__(self) -> str:
        return f"Name({self.name!r})"


class Path(_Operand):
    """An attribute of the item: a document path (``a.b[0]`` reaches into maps and lists), or a
    :class:`Name` for one attribute whose name holds ``.`` or ``[``."""

    __slots__ = ("exact", "segments", "text")

    def __init__(self, name: str | Name) -> None:
        #: Whether the path is one attribute named exactly (a :class:`Name`), not a document path.
        self.exact = isinstance(name, Name)
        if isinstance(name, Name):
            self.segments: tuple[str | int, ...] = (name.name,)
            self.text = name.name
            return
        if not isinstance(name, str) or not name:
            raise InvalidConditionError(
                f"attribute path {name!r:.60} must be a non-empty string (a document path such as 'a.b[0]') or a "
                "Name('exact name')"
            )
        segments: list[str | int] = []
        for part in name.split("."):
            m = _PART.fullmatch(part)
            if m is None:
                raise InvalidConditionError(f"attribute path {name!r}: bad segment {part!r} (write 'a', 'a.b[0]')")
            segments.append(check_attribute_name(m.group(1), where=f"attribute path {name!r}: name"))
            segments += [int(i) for i in _INDEX.findall(m.group(2))]
        self.segments = tuple(segments)
        self.text = name

    @property
    def shown(self) -> str:
        """The path as written: ``'a.b[0]'`` or ``Name('a.b')``."""
        return f"Name({self.text!r})" if self.exact else repr(self.text)

    @property
    def root(self) -> str:
        root = self.segments[0]
        assert isinstance(root, str)  # a path starts with a name, indexes only follow one
        return root

    def begins_with(self, prefix: str) -> Condition:
        """The attribute is text (or binary) starting with ``prefix``."""
        return Condition("begins_with", self, prefix)

    def contains(self, value: Any) -> Condition:
        """The text holds the substring ``value``, or the set/list holds the element ``value``."""
        return Condition("contains", self, value)

    def exists(self) -> Condition:
        """The item has this attribute (``attribute_exists``)."""
        return Condition("exists", self)

    def not_exists(self) -> Condition:
        """The item lacks this attribute (``attribute_not_exists``)."""
        return Condition("not_exists", self)

    def __repr__(self) -> str:
        return f"attr({self.shown})"

    __str__ = __repr__


class Size(_Operand):
    """The size of an attribute: characters of text, bytes of binary, elements of a set, list or map."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        if not isinstance(path, Path):
            raise InvalidConditionError(f"size() takes attr(name), not {path!r:.60}")
        self.path = path

    def __repr__(self) -> str:
        return f"size({self.path!r})"

    __str__ = __repr__


def attr(name: str | Name) -> Path:
    """The attribute at document path ``name`` (``"status"``; ``"a.b[0]"`` for nested values), or
    the one attribute ``Name("a.b")`` names exactly."""
    return Path(name)


def size(path: Path | Name | str) -> Size:
    """``size(attr("tags")) > 3``: the size of an attribute (see :class:`Size`)."""
    return Size(Path(path) if isinstance(path, (str, Name)) else path)


# Rendering ----------------------------------------------------------------------------------------
class Placeholders:
    """``#<p>N`` names and ``:<p>N`` values for one expression; ``prefix`` keeps them apart from
    the request's own (``#n``/``:v``) and from the other expressions of the same request."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}
        self._placeholder: dict[str, str] = {}

    def name(self, name: str) -> str:
        placeholder = self._placeholder.get(name)
        if placeholder is None:
            placeholder = self._placeholder[name] = f"#{self.prefix}{len(self.names)}"
            self.names[placeholder] = name
        return placeholder

    def value(self, value: Any) -> str:
        placeholder = f":{self.prefix}{len(self.values)}"
        self.values[placeholder] = value
        return placeholder

    def path(self, path: Path) -> str:
        out = ""
        for segment in path.segments:
            out += f"[{segment}]" if isinstance(segment, int) else (("." if out else "") + self.name(segment))
        return out


@frozen_record
class Rendered:
    """An expression's text and its placeholders (values as Python values, not yet serialized)."""

    text: str
    names: dict[str, str]
    values: dict[str, Any]

    def __init__(self, text: str, names: dict[str, str], values: dict[str, Any]) -> None:
        self.__dict__.update(text=text, names=names, values=values)


class Attributes:
    """What the items a request touches can carry: the entities (for field types and messages),
    the attributes the model manages, and — reading a non-``ALL`` index — what it projects."""

    def __init__(self, model: Model, entities: Sequence[Entity], index: Index | None = None) -> None:
        self.model = model
        self.entities = tuple(entities)
        self.label = "/".join(e.name for e in self.entities)
        self.managed = frozenset(model.key_attributes()) | {model.entity_attribute}
        self.fields: dict[str, tuple[Entity, Field]] = {}
        for entity in self.entities:
            for name, spec in entity.fields.items():
                self.fields.setdefault(name, (entity, spec))
        self.index = index
        #: Every attribute the entities' items may carry, when each declares its ``attributes``
        #: (None: free-form items, any name goes).
        self.known: frozenset[str] | None = None
        if self.entities and all(e.attributes for e in self.entities):
            self.known = frozenset(
                name for e in self.entities
                for name in (*e.fields, *e.attributes, e.version_attribute, model.ttl_attribute) if name
            )
        #: Attributes the index stores besides keys (None: every attribute, an ``ALL`` projection).
        self.projected: frozenset[str] | None = None
        if index is not None and index.projection != "ALL":
            self.projected = frozenset(index.projection if isinstance(index.projection, tuple) else ())

    def check(self, path: Path, what: str, *, key_fields_ok: bool = False) -> Path:
        root = path.root
        if root in self.managed:
            raise UnknownAttributeError(
                f"{what} names {root!r}, an attribute the model manages on {self.label} items; name "
                f"fields instead: {', '.join(self.fields) or 'none declared'}", attribute=root, entity=self.label,
            )
        if self.known is not None and root not in self.known:
            hint = (f"; the path {path.text!r} reads {root!r} and then a nested value, and {path.text!r} is a declared "
                    f"attribute: name it with Name({path.text!r})" if not path.exact and path.text in self.known else "")
            raise UnknownAttributeError(
                f"{what} names {root!r}, which {self.label} does not declare; its attributes: "
                f"{', '.join(sorted(self.known))}{hint}", attribute=root, entity=self.label,
            )
        if self.projected is not None and root not in self.projected:
            if key_fields_ok and len(path.segments) == 1 and self._key_field(root):
                return path
            assert self.index is not None
            raise UnknownAttributeError(
                f"{what} names {root!r}, which index {self.index.name!r} does not project (it has "
                f"{sorted(self.projected) or 'keys only'}): nothing would match or come back",
                attribute=root, entity=self.label,
            )
        return path

    def _key_field(self, name: str) -> bool:
        """A field the index items' keys carry (parsed back from them on read)."""
        for entity in self.entities:
            templates = [entity.pk_template, entity.sk_template]
            key = entity.indexes.get(self.index.name) if self.index is not None else None
            if key is not None:
                templates += [key.pk_template, key.sk_template]
            if any(t is not None and name in t.fields for t in templates):
                return True
        return False

    def value(self, path: Path, value: Any, how: str) -> Any:
        """``value`` as stored on write: a declared field through the key codec (timestamps as
        ISO text, numbers as int, choices checked), anything else as :func:`to_dynamo` makes it."""
        where = f"condition {path} {how}"
        if value is None:
            raise InvalidConditionError(f"{where}: None never matches; use {path}.not_exists() or .exists()")
        found = self.fields.get(path.root) if len(path.segments) == 1 else None
        if found is None:
            return to_dynamo(value, where=f"{where}: value")
        entity, spec = found
        if how in ("begins_with", "contains"):
            if spec.kind == "number" or not isinstance(value, str):
                raise InvalidConditionError(f"{where}: {entity.name}.{path.root} is a {spec.kind} field; {how} takes text")
            return value
        try:
            value = key_segments.normalize(value, spec.kind, width=spec.width, field=f"{entity.name}.{path.root}")
        except KeyValueError as exc:
            raise InvalidConditionError(f"{where}: {exc}") from None
        if spec.choices is not None and value not in spec.choices:
            raise InvalidConditionError(f"{where}: {value!r} is not one of the declared choices {list(spec.choices)!r}")
        return value


def render(condition: Condition, scope: Attributes, prefix: str, *, what: str = "condition") -> Rendered:
    """``condition`` as expression text for the items of ``scope``, with ``prefix`` placeholders."""
    if not isinstance(condition, Condition):
        raise InvalidConditionError(f"{what}={condition!r:.60} must be a condition built with attr(...)")
    ph = Placeholders(prefix)
    text = _render(condition, scope, ph, what)
    return Rendered(text, ph.names, ph.values)


def _render(c: Condition, scope: Attributes, ph: Placeholders, what: str) -> str:
    op, args = c.op, c.args
    if op in ("AND", "OR"):
        return f" {op} ".join(f"({_render(p, scope, ph, what)})" for p in args)
    if op == "NOT":
        return f"NOT ({_render(args[0], scope, ph, what)})"
    left = _operand(args[0], scope, ph, what)
    if op in ("exists", "not_exists"):
        return f"attribute_{op}({left})"
    if op in ("begins_with", "contains"):
        return f"{op}({left}, {ph.value(scope.value(args[0], args[1], op))})"
    values = [_right(args[0], v, op, scope, ph, what) for v in args[1:]]
    if op == "between":
        return f"{left} BETWEEN {values[0]} AND {values[1]}"
    if op == "is_in":
        return f"{left} IN ({', '.join(values)})"
    return f"{left} {op} {values[0]}"


def _operand(operand: _Operand, scope: Attributes, ph: Placeholders, what: str) -> str:
    if isinstance(operand, Size):
        return f"size({ph.path(scope.check(operand.path, what))})"
    assert isinstance(operand, Path)
    return ph.path(scope.check(operand, what))


def _right(left: _Operand, value: Any, how: str, scope: Attributes, ph: Placeholders, what: str) -> str:
    if isinstance(value, _Operand):  # attribute against attribute: attr("a") < attr("b")
        return _operand(value, scope, ph, what)
    if isinstance(value, Condition):
        raise InvalidConditionError(f"{what}: {left} {how} {value!r:.60}: a condition is not a value")
    if isinstance(left, Size):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidConditionError(f"{what}: {left} {how} {value!r:.60}: a size is a non-negative int")
        return ph.value(value)
    assert isinstance(left, Path)
    return ph.value(scope.value(left, value, how))


def projection(attributes: Iterable[str | Name], scope: Attributes, always: Iterable[str]) -> Rendered:
    """A ``ProjectionExpression`` of ``attributes`` (document paths or :class:`Name` s, checked
    against ``scope``) plus the attributes ``always`` kept (entity attribute, keys), with ``#p``
    placeholders."""
    if isinstance(attributes, (str, bytes, Name)) or not isinstance(attributes, Iterable):
        raise InvalidConditionError(
            f"attributes={attributes!r:.60} must be a list of attribute names (document paths such as 'a.b[0]', "
            "or Name('exact name'))"
        )
    paths = [scope.check(Path(a), "attributes", key_fields_ok=True) for a in attributes]
    if not paths:
        raise InvalidConditionError("attributes=[] projects nothing; pass None to read whole items")
    for i, path in enumerate(paths):
        for other in paths[:i]:
            shorter, longer = sorted((other.segments, path.segments), key=len)
            if longer[: len(shorter)] == shorter:
                raise InvalidConditionError(f"attributes: {other.shown} and {path.shown} overlap; name each value once")
    ph = Placeholders("p")
    # On an index that does not project it, a key field comes back parsed from the keys (always read).
    parts = [ph.path(p) for p in paths if scope.projected is None or p.root in scope.projected]
    roots = {p.root for p in paths if len(p.segments) == 1}
    parts += [ph.name(a) for a in dict.fromkeys(always) if a not in roots]
    return Rendered(", ".join(parts), ph.names, {})

