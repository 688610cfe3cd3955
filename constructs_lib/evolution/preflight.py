"""Index-eligibility pre-flight: the worst-case byte length of every derived key.

DynamoDB refuses a table write whose partition key exceeds 2,048 bytes or sort key 1,024
bytes, and silently leaves an item out of a GSI whose key attribute would. From the field
declarations each template's longest key is bounded: a string of ``max_length`` characters
encodes to at most 4 bytes per character (a UTF-8 character is at most 4 bytes; an escaped
one is 3), numbers to ``width``, timestamps to 27, dates to 10, time buckets to their fixed
width. A string field without ``max_length`` leaves the key unbounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..model.model import Model
from ..model.resolved import ResolvedEntity
from ..model.templates import SEPARATOR, KeyTemplate

MAX_PARTITION_KEY_BYTES = 2048
MAX_SORT_KEY_BYTES = 1024
_FIXED = {"timestamp": 27, "date": 10}
_BUCKET_BYTES = {"year": 4, "month": 7, "day": 10, "hour": 13, "minute": 16, "week": 8}
_BYTES_PER_CHAR = 4


@dataclass(frozen=True)
class KeyLength:
    """Bounds of one key template's encoded length, in bytes (``worst`` None = unbounded)."""

    entity: str
    key: str  # "pk", "sk", "<index> pk", "<index> sk"
    template: str
    best: int
    worst: int | None
    limit: int
    unbounded_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
    level: Literal["error", "warning"]
    length: KeyLength
    message: str


def template_length(entity: ResolvedEntity, template: KeyTemplate) -> tuple[int, int | None, tuple[str, ...]]:
    """(shortest, longest or None, unbounded fields) encoded length of ``template``."""
    best = worst = len(SEPARATOR) * (len(template.segments) - 1)
    unbounded: list[str] = []
    for seg in template.segments:
        if isinstance(seg, str):
            size = len(seg.encode("utf-8"))
            best, worst = best + size, worst + size
            continue
        spec = entity.field(seg.field)
        if seg.bucket:
            lo = hi = _BUCKET_BYTES[seg.bucket]
        elif spec.kind == "number":
            lo = hi = int(spec.width or 0)
        elif spec.kind in _FIXED:
            lo = hi = _FIXED[spec.kind]
        elif spec.choices:
            sizes = [len(c.encode("utf-8")) + 2 * sum(1 for ch in c if ord(ch) <= 0x25) for c in spec.choices]
            lo, hi = min(sizes), max(sizes)
        else:
            lo = 1
            if spec.max_length is None:
                unbounded.append(seg.field)
                hi = 0
            else:
                hi = _BYTES_PER_CHAR * spec.max_length
        best, worst = best + lo, worst + hi
    return best, (None if unbounded else worst), tuple(unbounded)


def key_lengths(model: Model) -> list[KeyLength]:
    """Length bounds of every table and index key template of every entity."""
    out: list[KeyLength] = []
    for entity in model.entities.values():
        parts: list[tuple[str, KeyTemplate | None, int]] = [
            ("pk", entity.pk_template, MAX_PARTITION_KEY_BYTES),
            ("sk", entity.sk_template, MAX_SORT_KEY_BYTES),
        ]
        for index_name, index_key in entity.indexes.items():
            pk_t = index_key.pk_template if index_key.kind == "GSI" else None  # an LSI's pk is the table's, above
            parts += [(f"{index_name} pk", pk_t, MAX_PARTITION_KEY_BYTES),
                      (f"{index_name} sk", index_key.sk_template, MAX_SORT_KEY_BYTES)]
        for key, template, limit in parts:
            if template is None:
                continue
            best, worst, unbounded = template_length(entity, template)
            out.append(KeyLength(entity.name, key, template.source, best, worst, limit, unbounded))
    return out


def key_length_findings(model: Model) -> list[Finding]:
    """An error for a key that can never fit, a warning for one whose declared worst case can
    exceed its limit (items with such values are refused, or left out of the index)."""
    out: list[Finding] = []
    for k in key_lengths(model):
        kind = "partition" if k.limit == MAX_PARTITION_KEY_BYTES else "sort"
        where = f"entity {k.entity!r} {k.key} {k.template!r}"
        if k.best > k.limit:
            out.append(Finding("error", k, f"{where} is at least {k.best} bytes; DynamoDB {kind} keys are limited "
                                           f"to {k.limit} bytes, so no item can be written"))
        elif k.worst is not None and k.worst > k.limit:
            out.append(Finding("warning", k, f"{where} can reach {k.worst} bytes (from the fields' max_length) but "
                                             f"{kind} keys are limited to {k.limit} bytes; items with long values are "
                                             "refused on write (or left out of the index) — lower max_length or "
                                             "keep long values out of keys"))
    return out
