"""Typed fields: how a value used in a key template is encoded.

Only fields that appear in key templates (or in sparse-index conditions) need declaring;
other attributes of an item are free-form. The encoding itself lives in
``constructs_lib.runtime.key_segments`` so the runtime and the model agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from .exceptions import ModelValidationError

FieldKind = Literal["string", "number", "timestamp", "date"]
KINDS: tuple[str, ...] = ("string", "number", "timestamp", "date")

#: Kinds of the other (non-field) attributes an entity may declare (``Entity(attributes=...)``),
#: with the value each holds: ``"number"`` is an int or Decimal (reads give int when integral),
#: ``"integer"`` an int, ``"string_set"``/``"number_set"`` sets, ``"list"``/``"map"`` JSON-like
#: containers, ``"any"`` anything storable. They type generated code (``codegen``) and docs.
AttributeKind = Literal[
    "string", "number", "integer", "decimal", "boolean", "binary", "string_set", "number_set", "list", "map", "any"
]
ATTRIBUTE_KINDS: tuple[str, ...] = (
    "string", "number", "integer", "decimal", "boolean", "binary", "string_set", "number_set", "list", "map", "any",
)


@dataclass(frozen=True)
class Field:
    """A key-template input.

    Parameters
    ----------
    kind
        ``"string"`` (default; escaped), ``"number"`` (non-negative int, zero-padded to
        ``width`` so it sorts), ``"timestamp"`` (aware datetime → ISO-8601 UTC, fixed width),
        ``"date"`` (``YYYY-MM-DD``).
    width
        Digits for ``"number"`` (1–38, required there); must be None otherwise.
    choices
        For enum-like string fields: the allowed values, a set (the model keeps them sorted, each
        once: :meth:`canonical`). Declaring them also tells the model the field has low
        cardinality (used for hot-partition warnings). Default: any value.
    max_length
        For string fields: the longest value in characters (writes of longer values are
        refused). Lets synth bound every key built from the field (key-length pre-flight,
        :mod:`constructs_lib.evolution.preflight`). Default None (unbounded).
    """

    kind: FieldKind = "string"
    width: int | None = None
    choices: tuple[str, ...] | None = None
    max_length: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ModelValidationError(f"field kind {self.kind!r} is unknown; choose one of {', '.join(KINDS)}")
        if self.kind == "number":
            if not isinstance(self.width, int) or isinstance(self.width, bool) or not 1 <= self.width <= 38:
                raise ModelValidationError(
                    f"number field width {self.width!r} must be an int from 1 to 38 (zero padding keeps "
                    "numbers sorting correctly as strings)"
                )
        elif self.width is not None:
            raise ModelValidationError(f"width {self.width!r} only applies to number fields, not {self.kind!r}")
        if self.choices is not None:
            if self.kind != "string" or not self.choices or not all(isinstance(c, str) and c for c in self.choices):
                raise ModelValidationError(
                    f"choices {self.choices!r} must be a non-empty tuple of non-empty strings on a string field"
                )

        if self.max_length is not None and (
            self.kind != "string" or isinstance(self.max_length, bool) or not isinstance(self.max_length, int)
            or self.max_length < 1
        ):
            raise ModelValidationError(
                f"max_length {self.max_length!r} must be a positive int on a string field (kind is {self.kind!r})"
            )

    def canonical(self) -> Field:
        """This field with ``choices`` as a set: sorted, each value once (the order they were
        declared in changes neither the model JSON nor a fingerprint). The model resolves every
        declared field to this form; the field itself keeps what was written."""
        if self.choices is None:
            return self
        choices = tuple(sorted(set(self.choices)))
        return self if choices == self.choices else Field(self.kind, self.width, choices, self.max_length)

    # Convenience constructors -------------------------------------------------------------
    @classmethod
    def string(cls, max_length: int | None = None) -> Field:
        """A free-form string (escaped in keys), at most ``max_length`` characters if given."""
        return cls("string", max_length=max_length)

    @classmethod
    def number(cls, width: int = 10) -> Field:
        """A non-negative integer zero-padded to ``width`` digits (default 10)."""
        return cls("number", width=width)

    @classmethod
    def timestamp(cls) -> Field:
        """A timezone-aware datetime, stored and keyed as ISO-8601 UTC with microseconds."""
        return cls("timestamp")

    @classmethod
    def date(cls) -> Field:
        """A calendar date, ``YYYY-MM-DD``."""
        return cls("date")

    @classmethod
    def enum(cls, *choices: str) -> Field:
        """A string restricted to ``choices`` (low cardinality: never a partition key alone)."""
        return cls("string", choices=tuple(choices))

    # Serialization -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.width is not None:
            out["width"] = self.width
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.max_length is not None:
            out["max_length"] = self.max_length
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Field:
        choices = data.get("choices")
        return cls(data["kind"], width=data.get("width"), choices=tuple(choices) if choices else None,
                   max_length=data.get("max_length"))

    @classmethod
    def coerce(cls, value: object, *, where: str) -> Field:
        """Accept a :class:`Field`, a kind name (``"timestamp"``) or ``"number:8"``."""
        if isinstance(value, Field):
            return value
        if isinstance(value, str):
            kind, _, width = value.partition(":")
            if kind == "number":
                if not (width.isascii() and width.isdigit()):
                    raise ModelValidationError(f"{where}: field spec {value!r} needs a width, e.g. 'number:10'")
                return cls("number", width=int(width))
            if width:
                raise ModelValidationError(f"{where}: field spec {value!r}: only number fields take ':width'")
            if kind in KINDS:
                return cls(cast(FieldKind, kind))  # a member of KINDS, the FieldKind literals
        raise ModelValidationError(
            f"{where}: field spec {value!r} must be a Field or one of {', '.join(KINDS)} (number as 'number:WIDTH')"
        )
