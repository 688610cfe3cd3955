"""Isolation analysis: may another entity's key satisfy a pattern's key condition?

A key is its template's segments joined by ``#`` and no encoded value contains ``#``, so two keys
are equal only when they have as many segments and each pair is equal; a ``begins_with`` prefix
and both ends of a ``between`` range end on a separator, so a key inside them has the prefix's
leading segments. Each segment takes texts from a *domain*: a literal's text, an enum's escaped
choices, a fixed-width shape (numbers, dates, timestamps, time buckets, the ``{shard}``), or any
escaped string. "May" means "not provably impossible": the answer errs towards "yes", which only
costs a filter. Rationale: docs/adr/0036-pattern-isolation-soundness.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .resolved import ResolvedEntity, ResolvedIndex
from .templates import KeyTemplate, Placeholder

_DIGITS = "0123456789"
# Fixed-width encodings, "D" standing for a digit (runtime/key_segments.py, runtime/buckets.py).
_SHAPES = {
    "timestamp": "DDDD-DD-DDTDD:DD:DD.DDDDDDZ", "date": "DDDD-DD-DD", "year": "DDDD", "month": "DDDD-DD",
    "day": "DDDD-DD-DD", "hour": "DDDD-DD-DDTDD", "minute": "DDDD-DD-DDTDD:DD", "week": "DDDD-WDD",
}
# What an escaped non-empty string can be (runtime/key_segments.py): characters above "%", or escapes.
_ESCAPED = re.compile(r"(?:[^\x00-\x25]|%(?:[01][0-9A-F]|2[0-5]))+")
#: Sort-key conditions not bounded to the entity's own key shape: always filtered.
UNBOUNDED = (None, "<", "<=", ">", ">=")


def escape(value: str) -> str:
    """The key encoding of a string value (``runtime.key_segments.escape``: code points up to ``%`` as ``%XX``)."""
    return "".join(f"%{ord(c):02X}" if ord(c) <= 0x25 else c for c in value)


@dataclass(frozen=True)
class Domain:
    """The texts one key segment can take: ``texts`` (a finite set), else ``shape`` (one string of
    allowed characters per position), else any escaped non-empty string."""

    texts: frozenset[str] | None = None
    shape: tuple[str, ...] | None = None

    def meets(self, other: Domain) -> bool:
        """False only if no text belongs to both domains."""
        if self.texts is not None and other.texts is not None:
            return not self.texts.isdisjoint(other.texts)
        if self.texts is not None or other.texts is not None:
            finite, rest = (self, other) if self.texts is not None else (other, self)
            texts = finite.texts if finite.texts is not None else frozenset()
            return any(rest.holds(t) for t in texts)
        if self.shape is not None and other.shape is not None:
            return len(self.shape) == len(other.shape) and all(
                set(a) & set(b) for a, b in zip(self.shape, other.shape, strict=True))
        return True  # any string meets a shape: shapes hold no character an escaped value lacks

    def holds(self, text: str) -> bool:
        """True if ``text`` is in the domain."""
        if self.texts is not None:
            return text in self.texts
        if self.shape is not None:
            return len(text) == len(self.shape) and all(c in s for c, s in zip(text, self.shape, strict=True))
        return _ESCAPED.fullmatch(text) is not None


ANY = Domain()


def _shape(name: str) -> Domain:
    return Domain(shape=tuple(_DIGITS if c == "D" else c for c in _SHAPES[name]))


def segment_domain(entity: ResolvedEntity, segment: str | Placeholder, *, stored: bool) -> Domain:
    """The texts ``segment`` of one of ``entity``'s templates can take. ``stored``: in an item
    written through the runtime (which refuses values outside an enum's choices); otherwise in a
    query's key condition, which does not check choices."""
    if isinstance(segment, str):
        return Domain(texts=frozenset((segment,)))
    if segment.bucket:
        return _shape(segment.bucket)
    spec = entity.field(segment.field)
    if spec.kind == "number":
        return Domain(shape=(_DIGITS,) * (spec.width or 1))  # Field requires a width for numbers
    if spec.kind in ("timestamp", "date"):
        return _shape(spec.kind)
    if stored and spec.choices:
        return Domain(texts=frozenset(escape(c) for c in spec.choices))
    return ANY


def domains(entity: ResolvedEntity, template: KeyTemplate, *, stored: bool) -> tuple[Domain, ...]:
    return tuple(segment_domain(entity, s, stored=stored) for s in template.segments)


@dataclass(frozen=True)
class KeyCondition:
    """The keys a Query's key condition admits: partition key equal to ``pk`` segment by segment;
    sort key (unless ``sk`` is None: any) whose leading segments equal ``sk`` and whose segment
    count is at least ``min_segments`` (and at most ``max_segments`` when given)."""

    pk: tuple[Domain, ...]
    sk: tuple[Domain, ...] | None = None
    min_segments: int = 1
    max_segments: int | None = None

    def admits(self, pk: tuple[Domain, ...], sk: tuple[Domain, ...] | None) -> bool:
        """False only if no key with these segment domains can satisfy the condition."""
        if len(pk) != len(self.pk) or not all(a.meets(b) for a, b in zip(self.pk, pk, strict=True)):
            return False
        if self.sk is None or sk is None:
            return True
        if len(sk) < self.min_segments or (self.max_segments is not None and len(sk) > self.max_segments):
            return False
        return all(a.meets(b) for a, b in zip(self.sk, sk, strict=False))


def key_condition(
    entity: ResolvedEntity, pk: KeyTemplate, sk: KeyTemplate | None, op: str | None, sk_fields: tuple[str, ...],
) -> KeyCondition:
    """What a pattern's key condition admits, for any values the caller may pass, as
    ``runtime.request_params`` builds it: ``=`` the whole key; ``begins_with`` the segments up to the
    first field not given (ending on a separator, so more segments follow) or, all given, the
    key and everything under it; ``between`` the segments before the range field (both bounds
    share them and the separator after them); the others any sort key of the partition."""
    own_pk = domains(entity, pk, stored=False)
    if op in UNBOUNDED or sk is None:
        return KeyCondition(own_pk)
    own_sk = domains(entity, sk, stored=False)
    n = len(sk.segments)
    if op == "=":
        return KeyCondition(own_pk, own_sk, n, n)
    if op == "begins_with":
        given = set(sk_fields)
        cut = next((i for i, s in enumerate(sk.segments) if isinstance(s, Placeholder) and s.field not in given), n)
        return KeyCondition(own_pk, own_sk[:cut], n if cut == n else cut + 1)
    # between: the range field's first segment; everything before it is shared by both bounds
    cut = next(i for i, s in enumerate(sk.segments) if isinstance(s, Placeholder) and s.field == sk_fields[-1])
    return KeyCondition(own_pk, own_sk[:cut], cut + 1)


def index_templates(entity: ResolvedEntity, index: ResolvedIndex | None) -> tuple[KeyTemplate, KeyTemplate | None] | None:
    """``entity``'s (pk, sk) templates in the table (``index`` None) or an index; None if the
    entity has no keys there."""
    if index is None:
        return entity.pk_template, entity.sk_template
    key = entity.indexes.get(index.name)
    return None if key is None else (key.pk_template, key.sk_template)


def intruders(
    entities: Mapping[str, ResolvedEntity], own: Iterable[str], condition: KeyCondition, index: ResolvedIndex | None,
) -> tuple[str, ...]:
    """Entities other than ``own`` with keys in the table/``index`` some of which may satisfy ``condition``."""
    mine = set(own)
    out = []
    for name, entity in entities.items():
        templates = None if name in mine else index_templates(entity, index)
        if templates is None:
            continue
        pk, sk = templates
        if condition.admits(domains(entity, pk, stored=True), None if sk is None else domains(entity, sk, stored=True)):
            out.append(name)
    return tuple(out)
