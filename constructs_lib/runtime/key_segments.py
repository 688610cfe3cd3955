"""Value-level key codec: how one value becomes one component of a DynamoDB key.

:func:`escape` replaces every character of code point ``<= 0x24`` (among them the separator
``#`` and the bound marker ``$``) and ``%`` itself with ``%XX``; :func:`unescape` accepts exactly
what ``escape`` produces. Escaped values never contain ``#`` or ``$``, which sort below every
character they can contain, so keys parse back, never collide, sort by their components, and
prefix queries end on a separator. Field kinds: ``string`` (escaped), ``number`` (non-negative
int, zero-padded to a width of 1..38), ``timestamp`` (fixed-width ISO-8601 UTC with
microseconds), ``date`` (``YYYY-MM-DD``).

See docs/adr/0003-key-codec-escaping.md and docs/adr/0004-sortable-key-values.md.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal, get_args

from constructs_lib.runtime.exceptions import KeyValueError

__all__ = [
    "FIELD_KINDS",
    "MAX_NUMBER_WIDTH",
    "SEPARATOR",
    "UPPER_BOUND",
    "FieldKind",
    "decode",
    "encode",
    "escape",
    "normalize",
    "unescape",
]

SEPARATOR = "#"
"""Separator between key components (code point 0x23)."""

UPPER_BOUND = "$"
"""``chr(ord(SEPARATOR) + 1)``: ``prefix + UPPER_BOUND`` is an exclusive upper bound of every
key starting with ``prefix + SEPARATOR``."""

FieldKind = Literal["string", "number", "timestamp", "date"]
FIELD_KINDS: tuple[str, ...] = get_args(FieldKind)

MAX_NUMBER_WIDTH = 38
"""Widest zero-padded number: DynamoDB numbers carry at most 38 significant digits."""

_SHOW_LIMIT = 60

# Characters escaped: code points 0x00..0x24 and "%" (0x25). All are ASCII, one UTF-8 byte.
_ESCAPED_CODEPOINTS = tuple(range(0x26))
_ESCAPE_TABLE = {cp: f"%{cp:02X}" for cp in _ESCAPED_CODEPOINTS}
# A canonical escaped string: raw characters >= 0x26, or a canonical escape.
_CANONICAL_ESCAPED = re.compile(r"(?:[^\x00-\x25]|%(?:[01][0-9A-F]|2[0-5]))*")
_ESCAPE_SEQ = re.compile(r"%([0-9A-F]{2})")
_BAD_RAW = re.compile(r"[\x00-\x24]")
_ANY_PERCENT = re.compile(r"%(.{0,2})", re.DOTALL)

_TIMESTAMP_TEXT = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{6})Z"
)
_DATE_TEXT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


# --------------------------------------------------------------------------- helpers


def _show(value: Any) -> str:
    """Return ``repr(value)`` truncated to about 60 characters for error messages."""
    text = repr(value)
    if len(text) > _SHOW_LIMIT:
        text = text[: _SHOW_LIMIT - 3] + "..."
    return text


def _where(field: str) -> str:
    """Message prefix naming the field, or nothing when no field name was given."""
    return "" if field == "?" else f"field {field!r}: "


def _fail(field: str, value: Any, rule: str) -> KeyValueError:
    return KeyValueError(f"{_where(field)}{_show(value)} {rule}")


def _type_name(value: Any) -> str:
    return type(value).__name__


def _check_utf8(value: str, field: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(
            field,
            value,
            f"cannot be UTF-8 encoded (lone surrogate {value[exc.start]!r} at index "
            f"{exc.start}); key values must be valid Unicode text",
        ) from None


# --------------------------------------------------------------------------- escaping


def escape(value: str, *, field: str = "?") -> str:
    """Percent-escape a value so it can be one component of a ``#``-separated key.

    Parameters
    ----------
    value : str
        Any valid Unicode text (may be empty; field kinds decide whether empty is allowed).
    field : str, optional
        Field name used in error messages. Default ``"?"``.

    Returns
    -------
    str
        ``value`` with every character of code point ``<= 0x24`` and ``%`` replaced by
        ``%XX`` (uppercase hex). The result never contains ``#`` nor any character below it.

    Raises
    ------
    KeyValueError
        If ``value`` is not a ``str`` or cannot be UTF-8 encoded (lone surrogates).
    """
    if not isinstance(value, str):
        raise _fail(field, value, f"is a {_type_name(value)}; only str values can be escaped")
    _check_utf8(value, field)
    return value.translate(_ESCAPE_TABLE)


def unescape(text: str, *, field: str = "?") -> str:
    """Invert :func:`escape`, accepting only text that :func:`escape` could have produced.

    Parameters
    ----------
    text : str
        A canonical escaped value.
    field : str, optional
        Field name used in error messages. Default ``"?"``.

    Returns
    -------
    str
        The original value.

    Raises
    ------
    KeyValueError
        If ``text`` is not a ``str``, contains a raw character that must be escaped
        (code point ``<= 0x24``), has a ``%`` not followed by two uppercase hex digits, has a
        non-canonical escape of a character that is never escaped (e.g. ``%41``), or cannot
        be UTF-8 encoded.
    """
    if not isinstance(text, str):
        raise _fail(field, text, f"is a {_type_name(text)}; only str text can be unescaped")
    _check_utf8(text, field)
    if _CANONICAL_ESCAPED.fullmatch(text) is None:
        raise _fail(field, text, _explain_bad_escape(text))
    if "%" not in text:
        return text
    return _ESCAPE_SEQ.sub(lambda m: chr(int(m.group(1), 16)), text)


def _explain_bad_escape(text: str) -> str:
    raw = _BAD_RAW.search(text)
    for match in _ANY_PERCENT.finditer(text):
        if raw is not None and raw.start() < match.start():
            break
        digits = match.group(1)
        if len(digits) < 2 or any(c not in "0123456789abcdefABCDEF" for c in digits):
            return (
                f"is not a valid escaped value: '%' at index {match.start()} must be "
                "followed by two uppercase hex digits"
            )
        if digits != digits.upper():
            return (
                f"is not a canonical escaped value: escape '%{digits}' at index "
                f"{match.start()} uses lowercase hex; escapes are uppercase"
            )
        if int(digits, 16) not in _ESCAPE_TABLE:
            return (
                f"is not a canonical escaped value: escape '%{digits}' at index "
                f"{match.start()} encodes {chr(int(digits, 16))!r}, which is never escaped "
                "(only code points <= 0x24 and '%' are)"
            )
    assert raw is not None  # the regex failed, so one of the two problems exists
    return (
        f"is not a valid escaped value: raw character {raw.group()!r} at index {raw.start()} "
        "must be escaped (code points <= 0x24, including the separator '#' and '$')"
    )


# --------------------------------------------------------------------------- field kinds


def _check_kind(kind: Any, width: Any, field: str) -> None:
    if kind not in FIELD_KINDS:
        raise KeyValueError(
            f"{_where(field)}unknown field kind {_show(kind)}; kind must be one of "
            f"{', '.join(FIELD_KINDS)}"
        )
    if kind == "number":
        if isinstance(width, bool) or not isinstance(width, int):
            raise KeyValueError(
                f"{_where(field)}width {_show(width)} is invalid; number fields need an int "
                f"width between 1 and {MAX_NUMBER_WIDTH} (zero padding keeps numeric order)"
            )
        if not 1 <= width <= MAX_NUMBER_WIDTH:
            raise KeyValueError(
                f"{_where(field)}width {_show(width)} is out of range; width must be "
                f"between 1 and {MAX_NUMBER_WIDTH}"
            )
    elif width is not None:
        raise KeyValueError(
            f"{_where(field)}width {_show(width)} was given for kind {kind!r}; width only "
            "applies to number fields"
        )


def _number(value: Any, width: int, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, (float, Decimal)):
            rule = (
                f"is a {_type_name(value)}; keys that sort need integers "
                "(e.g. store cents, not dollars)"
            )
        else:
            rule = f"is a {_type_name(value)}; number fields need a non-negative int"
        raise _fail(field, value, rule)
    if value < 0:
        raise _fail(
            field,
            value,
            "is negative; number fields need a non-negative int (negative numbers do not "
            "sort as zero-padded text)",
        )
    if len(str(value)) > width:
        raise _fail(
            field,
            value,
            f"has more than {width} digits; it does not fit the field width {width} and "
            "would sort wrongly",
        )
    return value


def _timestamp(value: Any, field: str) -> datetime:
    if isinstance(value, datetime):
        dt = value
        if dt.tzinfo is None or dt.utcoffset() is None:
            raise _fail(
                field,
                value,
                "is a naive datetime; timestamps must be timezone-aware (naive is ambiguous)",
            )
    elif isinstance(value, date):
        raise _fail(
            field,
            value,
            "is a date; timestamp fields need a timezone-aware datetime (use kind 'date' "
            "for dates)",
        )
    elif isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise _fail(
                field,
                value,
                "is not an ISO-8601 timestamp; expected e.g. '2024-06-01T12:00:00Z' or "
                "'2024-06-01T14:00:00+02:00'",
            ) from None
        if dt.tzinfo is None or dt.utcoffset() is None:
            raise _fail(
                field,
                value,
                "has no UTC offset; timestamp strings must end in 'Z' or an offset such as "
                "'+02:00' (naive is ambiguous)",
            )
    else:
        raise _fail(
            field,
            value,
            f"is a {_type_name(value)}; timestamp fields need a timezone-aware datetime or "
            "an ISO-8601 string with an offset",
        )
    try:
        return dt.astimezone(UTC)
    except OverflowError:
        raise _fail(
            field, value, "is out of range once converted to UTC; years must be 1..9999"
        ) from None


def _format_timestamp(dt: datetime) -> str:
    # Built by hand: strftime("%Y") does not zero-pad years below 1000 on every platform.
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
        f"{dt.second:02d}.{dt.microsecond:06d}Z"
    )


def _date(value: Any, field: str) -> date:
    if isinstance(value, datetime):
        raise _fail(
            field,
            value,
            "is a datetime; date fields need a date (converting would silently drop the "
            "time of day — pass value.date() or use kind 'timestamp')",
        )
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        match = _DATE_TEXT.fullmatch(value)
        if match is not None:
            try:
                return date(*(int(g) for g in match.groups()))
            except ValueError:
                pass
        raise _fail(field, value, "is not a valid date; date strings must be 'YYYY-MM-DD'")
    raise _fail(
        field,
        value,
        f"is a {_type_name(value)}; date fields need a date or a 'YYYY-MM-DD' string",
    )


def _string(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise _fail(
            field,
            value,
            f"is a {_type_name(value)}; string fields need a str (no implicit conversion)",
        )
    if not value:
        raise _fail(field, value, "is empty; string fields need a non-empty str")
    _check_utf8(value, field)
    return value


def encode(value: Any, kind: FieldKind, *, width: int | None = None, field: str = "?") -> str:
    """Encode one value as a key component.

    Parameters
    ----------
    value : Any
        ``str`` for ``"string"``; non-negative ``int`` for ``"number"``; aware ``datetime``
        or ISO-8601 string with offset for ``"timestamp"``; ``date`` or ``"YYYY-MM-DD"`` for
        ``"date"``.
    kind : {"string", "number", "timestamp", "date"}
        The field kind.
    width : int, optional
        Digits of zero padding. Required for ``"number"`` (1..38); must be ``None`` for the
        other kinds. Default ``None``.
    field : str, optional
        Field name used in error messages. Default ``"?"``.

    Returns
    -------
    str
        The key component: escaped text, zero-padded digits, ``YYYY-MM-DDTHH:MM:SS.ffffffZ``
        or ``YYYY-MM-DD``. Never contains ``#``.

    Raises
    ------
    KeyValueError
        If the value breaks a rule of its kind (see the module docstring).
    """
    _check_kind(kind, width, field)
    return encode_declared(value, kind, width, field)


def encode_declared(value: Any, kind: FieldKind, width: int | None, field: str) -> str:
    """:func:`encode` for a kind and width already checked (a model's ``Field`` checks its own
    when declared): the same result and errors, without checking them again per value."""
    if kind == "string":
        escaped: str = _string(value, field).translate(_ESCAPE_TABLE)  # (what escape() makes of checked text)
        return escaped
    if kind == "number":
        assert width is not None
        return f"{_number(value, width, field):0{width}d}"
    if kind == "timestamp":
        return _format_timestamp(_timestamp(value, field))
    return _date(value, field).isoformat()


def encode_normalized(value: Any, kind: FieldKind, width: int | None = None) -> str:
    """:func:`encode` of a value :func:`normalize` returned for the same kind and width (so
    already checked): what ``encode`` gives, without checking again."""
    if kind == "string":
        escaped: str = value.translate(_ESCAPE_TABLE)
        return escaped
    if kind == "number":
        return f"{value:0{width}d}"
    text: str = value  # timestamps and dates: normalize() returns encode()'s text
    return text


def decode(text: str, kind: FieldKind, *, width: int | None = None, field: str = "?") -> Any:
    """Decode a key component produced by :func:`encode`.

    Parameters
    ----------
    text : str
        The key component.
    kind : {"string", "number", "timestamp", "date"}
        The field kind.
    width : int, optional
        Required for ``"number"``; the component must have exactly this many digits.
    field : str, optional
        Field name used in error messages. Default ``"?"``.

    Returns
    -------
    str | int | datetime | date
        The unescaped ``str``, the ``int``, an aware UTC ``datetime`` or a ``date``.

    Raises
    ------
    KeyValueError
        If ``text`` is not exactly what :func:`encode` produces for some value, so that
        ``decode(encode(v))`` and ``encode(decode(t))`` round-trip.
    """
    _check_kind(kind, width, field)
    if not isinstance(text, str):
        raise _fail(field, text, f"is a {_type_name(text)}; key components are str")
    if kind == "string":
        value = unescape(text, field=field)
        if not value:
            raise _fail(field, text, "is empty; string fields need a non-empty str")
        return value
    if kind == "number":
        if len(text) != width or not (text.isascii() and text.isdigit()):
            raise _fail(
                field,
                text,
                f"is not a {width}-digit zero-padded number; number components have exactly "
                f"{width} ASCII digits",
            )
        return int(text)
    if kind == "timestamp":
        match = _TIMESTAMP_TEXT.fullmatch(text)
        if match is not None:
            # Fixed-width fields + datetime's range checks make a match canonical.
            try:
                year, month, day, hour, minute, second, micro = (int(g) for g in match.groups())
                return datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)
            except ValueError:
                pass
        raise _fail(
            field,
            text,
            "is not a canonical timestamp; timestamp components are UTC "
            "'YYYY-MM-DDTHH:MM:SS.ffffffZ'",
        )
    return _date(text, field)


def normalize(value: Any, kind: FieldKind, *, width: int | None = None, field: str = "?") -> Any:
    """Return the value as it should be stored as an item attribute.

    Items carry the same canonical text their keys were built from, so a stored attribute
    can always rebuild its key.

    Parameters
    ----------
    value : Any
        As for :func:`encode`.
    kind : {"string", "number", "timestamp", "date"}
        The field kind.
    width : int, optional
        As for :func:`encode`.
    field : str, optional
        Field name used in error messages. Default ``"?"``.

    Returns
    -------
    str | int
        ``"string"``: the (unescaped) ``str``; ``"number"``: the ``int``; ``"timestamp"``:
        canonical UTC text; ``"date"``: ``YYYY-MM-DD``.

    Raises
    ------
    KeyValueError
        Exactly when :func:`encode` would.
    """
    _check_kind(kind, width, field)
    return normalize_declared(value, kind, width, field)


def normalize_declared(value: Any, kind: FieldKind, width: int | None, field: str) -> Any:
    """:func:`normalize` for a kind and width already checked (a model's ``Field`` checks its
    own when declared): the same result and errors, without checking them again per value."""
    if kind == "string":
        return _string(value, field)
    if kind == "number":
        assert width is not None
        return _number(value, width, field)
    if kind == "timestamp":
        return _format_timestamp(_timestamp(value, field))
    return _date(value, field).isoformat()


def require_aware(value: Any, name: str) -> datetime:
    """``value`` if it is a timezone-aware datetime; else KeyValueError naming it (``name``
    says what it is, e.g. ``"expires_at"``). Naive datetimes are ambiguous and rejected."""
    if not isinstance(value, datetime):
        raise KeyValueError(
            f"{name} {_show(value)} is a {_type_name(value)}; it must be a timezone-aware datetime"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise KeyValueError(
            f"{name} {_show(value)} is a naive datetime; it must be timezone-aware (naive is ambiguous)"
        )
    return value
