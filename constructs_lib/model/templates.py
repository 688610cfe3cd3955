"""Key templates: ``USER#{user_id}``, ``ORDER#{created_at}#{order_id}``, ``SENSOR#{id}#{at:month}``.

A template is a list of *segments* joined by the separator ``#``. Each segment is either a
literal (``USER``) or exactly one placeholder (``{user_id}``, or ``{at:month}`` for a time
bucket of a timestamp/date field). Requiring every placeholder to stand alone between
separators is what makes keys parseable: values are escaped so they never contain ``#``,
hence splitting a built key on ``#`` gives back the segments one to one (see
``constructs_lib.runtime.key_segments``). Templates that glue a value to a literal or to another
value (``USER{id}``, ``{a}{b}``) are rejected: concatenation without delimiters is ambiguous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from .exceptions import TemplateError

SEPARATOR = "#"
#: Granularities a ``{field:bucket}`` placeholder may use.
BUCKETS = ("year", "month", "day", "hour", "minute", "week")

_FIELD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLACEHOLDER_RE = re.compile(r"^\{([^{}:]*)(?::([^{}]*))?\}$")


@dataclass(frozen=True)
class Placeholder:
    """One ``{field}`` or ``{field:bucket}`` segment."""

    field: str
    bucket: str | None = None

    def __str__(self) -> str:
        return "{" + self.field + (f":{self.bucket}" if self.bucket else "") + "}"


@dataclass(frozen=True)
class KeyTemplate:
    """A parsed key template.

    Parameters
    ----------
    source
        The template text, e.g. ``"ORDER#{created_at}#{order_id}"``.
    segments
        Literal strings and :class:`Placeholder` objects, in order.
    """

    source: str
    segments: tuple[str | Placeholder, ...]
    #: The placeholders, in order (derived from ``segments`` by :meth:`parse`; keys are built on
    #: every request, so it is computed once). Takes no part in equality or repr.
    placeholders: tuple[Placeholder, ...] = dataclass_field(compare=False, repr=False)
    #: Distinct input field names, in order of first use (derived like ``placeholders``).
    fields: tuple[str, ...] = dataclass_field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: object, *, where: str = "template") -> KeyTemplate:
        """Parse ``text``; ``where`` names its place in the model for error messages.

        Raises
        ------
        TemplateError
            If the text is empty, has an empty segment (``A##B``), a placeholder glued to
            other text, an invalid field name, an unknown bucket, or a literal containing
            a character that values must escape (``%``, braces, space, controls).
        """
        if not isinstance(text, str) or not text:
            raise TemplateError(f"{where}: key template {text!r} must be a non-empty string")
        segments: list[str | Placeholder] = []
        for raw in text.split(SEPARATOR):
            if raw == "":
                raise TemplateError(
                    f"{where}: key template {text!r} has an empty segment; segments are joined "
                    f"by a single {SEPARATOR!r} and may not start or end with it"
                )
            if "{" in raw or "}" in raw:
                match = _PLACEHOLDER_RE.match(raw)
                if not match:
                    raise TemplateError(
                        f"{where}: key template {text!r} segment {raw!r} must be a literal or exactly "
                        f"one placeholder like '{{user_id}}'; values glued to other text without a "
                        f"{SEPARATOR!r} make keys ambiguous"
                    )
                field, bucket = match.group(1), match.group(2)
                if not _FIELD_RE.match(field):
                    raise TemplateError(
                        f"{where}: key template {text!r} has invalid field name {field!r}; use letters, "
                        "digits and underscores, not starting with a digit"
                    )
                if bucket is not None and bucket not in BUCKETS:
                    raise TemplateError(
                        f"{where}: key template {text!r} uses unknown time bucket {bucket!r} for field "
                        f"{field!r}; choose one of {', '.join(BUCKETS)}"
                    )
                segments.append(Placeholder(field, bucket))
            else:
                bad = sorted({c for c in raw if ord(c) <= 0x24 or c == "%"})
                if bad:
                    raise TemplateError(
                        f"{where}: key template {text!r} literal {raw!r} contains {bad!r}; literals may "
                        "not contain '%', '$', spaces, quotes or control characters (values are escaped "
                        "with them)"
                    )
                segments.append(raw)
        placeholders = tuple(s for s in segments if isinstance(s, Placeholder))
        return cls(source=text, segments=tuple(segments), placeholders=placeholders,
                   fields=tuple(dict.fromkeys(p.field for p in placeholders)))

    @property
    def is_constant(self) -> bool:
        """True if the template has no placeholder (every item gets the same value)."""
        return not self.placeholders

    def literal_prefix(self) -> str:
        """The literal segments before the first placeholder, joined, with a trailing separator
        if a placeholder follows (``"ORDER#"`` for ``ORDER#{created_at}#{id}``)."""
        out: list[str] = []
        for seg in self.segments:
            if isinstance(seg, Placeholder):
                return SEPARATOR.join(out) + SEPARATOR if out else ""
            out.append(seg)
        return SEPARATOR.join(out)

    def leading_fields(self, count: int) -> tuple[str, ...]:
        """The field names of the first ``count`` placeholders."""
        return tuple(p.field for p in self.placeholders[:count])

    def same_shape_until(self, other: KeyTemplate, placeholders: int) -> bool:
        """True if both templates are identical up to (and including) their first
        ``placeholders`` placeholders and the literals that directly follow them — i.e. a
        prefix built from those fields is the same for both."""
        def cut(t: KeyTemplate) -> tuple[str | Placeholder, ...]:
            seen = 0
            for i, seg in enumerate(t.segments):
                if isinstance(seg, Placeholder):
                    if seen == placeholders:
                        return t.segments[:i]
                    seen += 1
            return t.segments

        return cut(self) == cut(other)

    def __str__(self) -> str:
        return self.source
