"""Typed values of Lambda's stream JSON (binary values are base64 text), their sizes and wire form."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from decimal import Context, Decimal, InvalidOperation
from typing import Any

from ...exceptions import KeyValueError

_TYPES = ("S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "M", "L")
_EXACT = Context(prec=100)


def typed_tag(value: Any, where: str) -> tuple[str, Any]:
    if not isinstance(value, Mapping) or len(value) != 1 or next(iter(value)) not in _TYPES:
        raise KeyValueError(f"{where} is not a DynamoDB typed value (one of {', '.join(_TYPES)} as a one-key map)")
    return next(iter(value.items()))


def binary(value: Any, where: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise KeyValueError(f"{where}: binary value is not base64 text") from None


def number_text(text: Any, where: str) -> str:
    """Plain decimal text of a DynamoDB number, trailing zeros removed (``"1.50"`` → ``"1.5"``)."""
    try:
        number = Decimal(text) if isinstance(text, str) else Decimal("NaN")
    except InvalidOperation:
        number = Decimal("NaN")
    if not number.is_finite():
        raise KeyValueError(f"{where}: number value is not decimal text")
    return format(_EXACT.normalize(number), "f")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# Wire form: what botocore's JSON serializer sends for a typed value ---------------------------------
#: Decimal text Decimal() reads as a finite number (a subset: anything else takes the checked path).
_PLAIN_NUMBER = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _is_b64(text: Any) -> bool:
    if type(text) is not str:
        return False
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode("ascii") == text
    except (binascii.Error, ValueError):
        return False


def is_wire(value: Any) -> bool:
    """True if ``value`` is a valid typed value already in the form botocore serializes: dicts and
    lists, numbers as decimal text, binary as canonical base64 text. False for anything else, valid
    or not (such values take the checked path: :func:`to_wire` after the validating diff)."""
    if type(value) is not dict or len(value) != 1:
        return False
    ((tag, inner),) = value.items()
    if tag == "S":
        return type(inner) is str
    if tag == "N":
        return type(inner) is str and _PLAIN_NUMBER.fullmatch(inner) is not None
    if tag == "M":
        return type(inner) is dict and all(map(is_wire, inner.values()))
    if tag == "L":
        return type(inner) is list and all(map(is_wire, inner))
    if tag == "BOOL" or tag == "NULL":
        return type(inner) is bool
    if tag == "SS":
        return type(inner) is list and all(type(s) is str for s in inner)
    if tag == "NS":
        return type(inner) is list and all(type(s) is str and _PLAIN_NUMBER.fullmatch(s) is not None for s in inner)
    if tag == "B":
        return _is_b64(inner)
    if tag == "BS":
        return type(inner) is list and all(map(_is_b64, inner))
    return False


def to_wire(value: Mapping[str, Any]) -> dict[str, Any]:
    """A valid typed value (any mapping or sequence form, binary as bytes or base64 text) in the
    form botocore would serialize it: dicts and lists, binary as canonical base64 text."""
    ((tag, inner),) = value.items()
    if tag == "B":
        return {"B": b64(binary(inner, "B"))}
    if tag == "BS":
        return {"BS": [b64(binary(b, "BS")) for b in inner]}
    if tag == "M":
        return {"M": {k: to_wire(v) for k, v in inner.items()}}
    if tag == "L":
        return {"L": [to_wire(v) for v in inner]}
    return {tag: inner}
