"""Typed values of Lambda's stream JSON (binary values are base64 text) and their sizes."""

from __future__ import annotations

import base64
import binascii
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
