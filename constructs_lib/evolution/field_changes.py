"""Model diff of one declared field: kind and width, enum choices, max_length, added, removed.

Every write checks an item's declared fields (kind, width, choices, max_length), so a change
that refuses a value stored items may hold makes them unwritable: ``breaking``, whatever keys
use the field. Otherwise the level follows the keys: a changed encoding of a table-key input
is ``breaking``, of an index-key input ``backfill``. Rationale:
docs/adr/0038-model-diff-is-complete.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model.fields import Field
from .levels import BACKFILL, BREAKING, SAFE, Level

#: (old kind, new kind) pairs whose new kind accepts every value the old one stores (stored
#: timestamps and dates are ISO text, which a string field takes as it is).
_KIND_WIDENINGS = {("timestamp", "string"), ("date", "string")}


@dataclass(frozen=True)
class FieldChange:
    """One classified change of a field's declaration.

    ``covers`` names the keys of the field's JSON (``"kind"``, ``"choices"``, ...) the change
    accounts for; empty means the whole field. ``reencodes``: keys built from the field change
    their text, so the indexes using it need a backfill.
    """

    level: Level
    rule: str
    message: str
    covers: tuple[str, ...] = ()
    reencodes: bool = False


def spec_text(spec: Field) -> str:
    """``string``, ``number:8``, ``string (choices ['A', 'B'], max_length 5)``."""
    text = f"number:{spec.width}" if spec.kind == "number" else spec.kind
    extras = [f"choices {list(spec.choices)!r}"] if spec.choices is not None else []
    extras += [f"max_length {spec.max_length}"] if spec.max_length is not None else []
    return f"{text} ({', '.join(extras)})" if extras else text


def kind_refusal(before: Field, after: Field) -> str | None:
    """Why values stored under ``before``'s kind and width are refused by ``after``'s, or None."""
    if before.kind == after.kind == "number":
        assert before.width is not None and after.width is not None
        if after.width < before.width:
            return f"stored numbers of {after.width + 1} to {before.width} digits no longer fit width {after.width}"
        return None
    if before.kind == after.kind or (before.kind, after.kind) in _KIND_WIDENINGS:
        return None
    return f"stored {before.kind} values are not {after.kind} values"


def _choices_change(where: str, before: Field, after: Field, keys: str) -> FieldChange:
    old, new = before.choices, after.choices
    if new is None:
        return FieldChange(SAFE, "field-choices", f"field {where} is no longer restricted to choices {list(old or ())!r}",
                           ("choices",))
    if old is None:
        return FieldChange(BREAKING, "field-choices",
                           f"field {where} becomes restricted to choices {list(new)!r}; stored items holding any "
                           f"other value can no longer be put or updated (the value is refused){keys}", ("choices",))
    removed = [c for c in old if c not in new]
    if removed:
        return FieldChange(BREAKING, "field-choices",
                           f"field {where} drops choice(s) {removed!r} (choices {list(old)!r} -> {list(new)!r}); "
                           f"stored items holding {'it' if len(removed) == 1 else 'them'} can no longer be put or "
                           f"updated (the value is refused){keys}", ("choices",))
    added = [c for c in new if c not in old]
    what = f"adds choice(s) {added!r}" if added else "reorders its choices"
    return FieldChange(SAFE, "field-choices", f"field {where} {what} (choices {list(old)!r} -> {list(new)!r})",
                       ("choices",))


def _max_length_change(where: str, before: Field, after: Field, keys: str) -> FieldChange:
    old, new = before.max_length, after.max_length
    text = f"field {where} max_length changes from {old!r} to {new!r}"
    if new is not None and (old is None or new < old):
        return FieldChange(BREAKING, "field-max-length",
                           f"{text}; stored values longer than {new} characters are refused on write{keys}",
                           ("max_length",))
    return FieldChange(SAFE, "field-max-length", f"{text}; every stored value still fits", ("max_length",))


def _attribute_refusal(kind: str, after: Field) -> str | None:
    """Why values of a declared attribute of ``kind`` may be refused once it is the field ``after``."""
    if kind == "string" and after.kind == "string" and after.choices is None and after.max_length is None:
        return None
    return f"it was declared as a {kind} attribute, whose stored values a {spec_text(after)} field may refuse"


def field_changes(
    where: str,
    before: Field | None,
    after: Field | None,
    *,
    table_key: str | None,
    indexes: Sequence[str] = (),
    attribute: str | None = None,
    now_attribute: str | None = None,
) -> list[FieldChange]:
    """Classify the change of field ``where`` (``"Entity.field"``) from ``before`` to ``after``
    (None: not declared).

    ``table_key``: the table-key template(s) built from the field (before or after), if any;
    ``indexes``: the indexes whose keys use it; ``attribute``/``now_attribute``: its kind as a
    declared non-field attribute before/after, if it was/is one.
    """
    if before is None and after is None:
        return []
    if before is None:
        assert after is not None
        refusal = _attribute_refusal(attribute, after) if attribute is not None else None
        if refusal:
            return [FieldChange(BREAKING, "field-added", f"entity field {where} is declared ({spec_text(after)}); "
                                f"{refusal}, and stored items holding such a value can no longer be written")]
        return [FieldChange(SAFE, "field-added", f"entity field {where} is declared ({spec_text(after)})")]
    if after is None:
        note = f" (now declared as a {now_attribute} attribute)" if now_attribute else ""
        return [FieldChange(SAFE, "field-removed", f"field {where} is no longer declared{note}; stored values stay "
                            "and are no longer checked on write")]
    keys = ""
    if table_key:
        keys = f"; it builds the table key {table_key}, so such items also stay under keys no write can build"
    elif indexes:
        keys = f"; it is an input of the keys of {list(indexes)!r}"
    out = []
    if (before.kind, before.width) != (after.kind, after.width):
        refusal = kind_refusal(before, after)
        text = f"field {where} changes from {spec_text(before)} to {spec_text(after)}"
        if table_key:
            level, text = BREAKING, f"{text}; it builds the table key {table_key}, so existing keys no longer match"
        elif indexes:
            level, text = BACKFILL, f"{text}; keys of {list(indexes)!r} built from it change, existing items keep the old"
        else:
            level, text = SAFE, f"{text}; no key uses it"
        if refusal:
            level, text = BREAKING, f"{text}; {refusal}, so stored items holding them can no longer be written"
        out.append(FieldChange(level, "field-kind", text, ("kind", "width"), reencodes=bool(indexes)))
    if before.choices != after.choices:
        out.append(_choices_change(where, before, after, keys))
    if before.max_length != after.max_length:
        out.append(_max_length_change(where, before, after, keys))
    return out
