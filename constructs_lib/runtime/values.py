"""Plain values: to and from DynamoDB, the checks DynamoDB would make, and the item-size rule.

:func:`to_dynamo` makes a Python value storable (or refuses it, naming where it is),
:func:`from_dynamo` reads one back; :func:`item_size` / :func:`wire_item_size` are the one size
rule (DynamoDB's documented one) used by items, backfill budgets and the audit writer.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .exceptions import ItemValidationError, KeyValueError
from .limits import MAX_ITEM_BYTES, MAX_NAME_BYTES, MAX_PK_BYTES


def check_key_size(text: str, limit: int, where: str, advice: str) -> str:
    """``text`` if it fits DynamoDB's key size ``limit`` (:data:`MAX_PK_BYTES` or
    :data:`MAX_SK_BYTES`), else :class:`KeyValueError` naming ``where``, the size and ``advice``."""
    size = len(text.encode("utf-8"))
    if size > limit:
        kind = "partition" if limit == MAX_PK_BYTES else "sort"
        raise KeyValueError(
            f"{where} {text[:40]!r}... is {size} bytes; DynamoDB {kind} key values are limited to {limit} bytes{advice}"
        )
    return text


#: DynamoDB nests maps and lists at most 32 levels deep, counting the attribute itself: a value
#: may hold 31 containers inside one another (sets are leaves). Measured on DynamoDB Local.
MAX_NESTED_CONTAINERS = 31


def to_dynamo(value: Any, *, where: str, _depth: int = 0) -> Any:
    """Make a Python value storable: floats → Decimal (exact repr), datetimes rejected unless
    declared as fields, sets and nested containers converted recursively. Values DynamoDB cannot
    hold — NaN/infinite or over-38-digit numbers, text with lone surrogates, mixed or empty sets,
    map keys that are not non-empty strings, nesting deeper than 32 levels — are refused here,
    naming where they are."""
    if type(value) is int and -_INT_38_DIGITS < value < _INT_38_DIGITS:  # what _number answers, without Decimal
        return value
    if isinstance(value, bool) or value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ItemValidationError(
                f"{where}: text {value[:40]!r} has a lone surrogate at index {exc.start}; DynamoDB strings "
                "must be valid UTF-8"
            ) from None
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ItemValidationError(f"{where}: {value!r} cannot be stored (DynamoDB numbers are finite)")
        value = Decimal(repr(value))
    if isinstance(value, (int, Decimal)):
        return _number(value, where)
    if isinstance(value, (Mapping, list, tuple)):
        if _depth >= MAX_NESTED_CONTAINERS:
            raise ItemValidationError(
                f"{where}: maps and lists nested more than 32 levels deep (counting the attribute) cannot be "
                f"stored; DynamoDB allows {MAX_NESTED_CONTAINERS} containers inside one another"
            )
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                check_attribute_name(k, where=f"{where}: map key")
                out[k] = to_dynamo(v, where=f"{where}.{k}", _depth=_depth + 1)
            return out
        return [to_dynamo(v, where=f"{where}[{i}]", _depth=_depth + 1) for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        if not value:
            raise ItemValidationError(f"{where}: empty set cannot be stored (DynamoDB sets are non-empty)")
        kinds = {"number" if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) else type(v).__name__
                 for v in value}
        if len(kinds) != 1 or not kinds <= {"number", "str", "bytes"}:
            raise ItemValidationError(
                f"{where}: set {sorted(map(repr, value))[:5]} mixes or holds unsupported types {sorted(kinds)}; "
                "a DynamoDB set holds only numbers, only strings or only binary values"
            )
        return {to_dynamo(v, where=where, _depth=_depth) for v in value}
    if type(value).__name__ == "Binary" and isinstance(getattr(value, "value", None), bytes):
        return value.value  # boto3's Binary wrapper, e.g. from an item read with another client
    raise ItemValidationError(
        f"{where}: value {value!r} of type {type(value).__name__} cannot be stored; declare it as a "
        "timestamp/date field or convert it (str, int, Decimal, bool, bytes, list, dict, set)"
    )


#: Integers below this magnitude have at most 38 digits: storable as they are.
_INT_38_DIGITS = 10**38


def check_attribute_name(name: Any, *, where: str) -> str:
    """``name`` if DynamoDB accepts it as an attribute name (a non-empty str of valid UTF-8, at
    most 65,535 bytes); else :class:`ItemValidationError` naming it."""
    if not isinstance(name, str) or not name:
        raise ItemValidationError(f"{where} {name!r:.60} must be a non-empty string")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise ItemValidationError(f"{where} {name[:40]!r} is not valid UTF-8 (lone surrogate)") from None
    if size > MAX_NAME_BYTES:
        raise ItemValidationError(
            f"{where} {name[:40]!r}... is {size} bytes; DynamoDB attribute names are limited to {MAX_NAME_BYTES} bytes"
        )
    return name


def _number(value: int | Decimal, where: str) -> int | Decimal:
    """A number DynamoDB can store: finite, at most 38 significant digits, magnitude 1e-130..1e126."""
    dec = Decimal(value)
    if not dec.is_finite():
        raise ItemValidationError(f"{where}: {value!r} cannot be stored (DynamoDB numbers are finite)")
    if dec != 0:
        # Count without Decimal.normalize(), which rounds to the 28-digit default context.
        digits = len("".join(map(str, dec.as_tuple().digits)).strip("0"))
        exponent = dec.adjusted()
        if digits > 38 or not -130 <= exponent <= 125:
            raise ItemValidationError(
                f"{where}: {str(value)[:50]} has {digits} significant digits and exponent {exponent}; DynamoDB "
                "numbers hold at most 38 significant digits with magnitude 1E-130 to 9.9E+125 (store it as a string)"
            )
        sign, coefficient, exp = dec.as_tuple()
        if len(coefficient) > 38:  # e.g. 10**40: same number, written with its trailing zeros in the exponent
            kept = "".join(map(str, coefficient)).rstrip("0")
            return Decimal((sign, tuple(int(c) for c in kept), int(exp) + len(coefficient) - len(kept)))
    return value


def from_dynamo(value: Any) -> Any:
    """Integral Decimals become int, boto3's ``Binary`` becomes ``bytes``; containers are
    converted recursively."""
    if isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    if type(value).__name__ == "Binary":
        return bytes(value.value)
    if isinstance(value, dict):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    if isinstance(value, set):
        return {from_dynamo(v) for v in value}
    return value


def item_size(item: Mapping[str, Any]) -> int:
    """The size DynamoDB counts for ``item`` in Python form (what :func:`to_dynamo` makes, or
    what boto3's resource layer reads): attribute names plus values, by :func:`_value_size`
    (text inline: nearly every value of an item, and this runs on every write)."""
    size = 0
    for name, value in item.items():
        size += len(name.encode("utf-8", "surrogatepass"))
        size += len(value.encode("utf-8", "surrogatepass")) if type(value) is str else _value_size(value, wire=False)
    return size


def wire_item_size(item: Mapping[str, Any]) -> int:
    """The size DynamoDB counts for ``item`` in wire form (``{"S": ...}`` typed values, as the
    low-level client and stream records hold them; binary values as bytes or base64 text) —
    the same rule as :func:`item_size`."""
    return sum(utf8_size(k) + _value_size(v, wire=True) for k, v in item.items())


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (a lone surrogate counts as the 3 bytes it would take)."""
    return len(text.encode("utf-8", "surrogatepass"))


#: Base-100 digit pairs a number spans at most (38 digits not aligned on the decimal point).
MAX_NUMBER_PAIRS = 20


def number_size(value: Any) -> int:
    """The size of a number, as DynamoDB counts it: 1 byte per base-100 digit pair, plus 1, plus
    1 if negative — unless it spans :data:`MAX_NUMBER_PAIRS` pairs (a negative number is then no
    larger than a positive one: ``-9.99...`` with 37 nines takes 21 bytes, as ``9.99...``); zero is 1.

    DynamoDB documents "1 byte per two significant digits, plus 1" (leading and trailing zeros
    trimmed); the pairs are aligned on the decimal point, so ``123.456`` spans 4 (``01 23 . 45 60``)
    and takes 5 bytes, ``-123.456`` 6.
    Derived from DynamoDB Local's 1 KB write-unit boundary and its 400 KB limit over every sign,
    digit count (1-38) and exponent (-130..125): ``tests/integration/number_sizes.py``, ADR 0051.
    ``value``: an int, a Decimal or decimal text."""
    if type(value) is int and -_INT_38_DIGITS < value < _INT_38_DIGITS:  # its digits, without Decimal (same count)
        if not value:
            return 1
        text = str(-value if value < 0 else value)
        kept = text.rstrip("0")
        low = len(text) - len(kept)
        pairs = (low + len(kept) - 1) // 2 - low // 2 + 1
        return pairs + 1 + (value < 0 and pairs < MAX_NUMBER_PAIRS)
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not number.is_finite():
        return 2  # not storable; validation refuses it before any size matters
    if not number:
        return 1  # zero: the length byte alone
    negative, digits, exponent = number.as_tuple()
    text = "".join(map(str, digits)).lstrip("0")
    kept = text.rstrip("0")
    low = int(exponent) + len(text) - len(kept)  # the place of the lowest significant digit
    high = low + len(kept) - 1
    pairs = high // 2 - low // 2 + 1
    return pairs + 1 + (bool(negative) and pairs < MAX_NUMBER_PAIRS)


def _binary_size(value: Any) -> int:
    """Raw byte length of a binary value: bytes, boto3's ``Binary``, or base64 text (wire form)."""
    if isinstance(value, str):
        return len(value) * 3 // 4 - (len(value) - len(value.rstrip("=")))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    return len(value.value)  # boto3's Binary


def _tag_of(value: Any) -> str:
    """The DynamoDB type of a value in Python form."""
    if isinstance(value, str):
        return "S"
    if isinstance(value, bool):
        return "BOOL"
    if value is None:
        return "NULL"
    if isinstance(value, (int, float, Decimal)):
        return "N"
    if isinstance(value, Mapping):
        return "M"
    if isinstance(value, (list, tuple)):
        return "L"
    if isinstance(value, (set, frozenset)):
        return _tag_of(next(iter(value))) + "S" if value else "SS"
    return "B"  # bytes, bytearray, boto3's Binary


def _value_size(value: Any, *, wire: bool) -> int:
    """The one size rule (DynamoDB's documented rule, "Item sizes and formats"): strings their
    UTF-8 bytes; numbers :func:`number_size`; binary its raw bytes; booleans and null 1 byte;
    sets the sum of their elements; maps and lists 3 bytes plus, per element, 1 byte and its size
    (and, in a map, its name's bytes). ``wire``: ``value`` is a typed one-key map."""
    if wire:
        ((tag, inner),) = value.items()
    else:
        tag, inner = _tag_of(value), value
    if tag == "S":
        return utf8_size(inner)
    if tag == "N":
        return number_size(inner)
    if tag == "B":
        return _binary_size(inner)
    if tag == "SS":
        return sum(utf8_size(v) for v in inner)
    if tag == "NS":
        return sum(number_size(v) for v in inner)
    if tag == "BS":
        return sum(_binary_size(v) for v in inner)
    if tag == "M":
        return 3 + sum(utf8_size(k) + 1 + _value_size(v, wire=wire) for k, v in inner.items())
    if tag == "L":
        return 3 + sum(1 + _value_size(v, wire=wire) for v in inner)
    return 1  # BOOL, NULL


def check_size(item: Mapping[str, Any], *, where: str) -> None:
    """:class:`ItemValidationError` if ``item`` (Python form) is over DynamoDB's 400 KB item limit."""
    size = item_size(item)
    if size > MAX_ITEM_BYTES:
        raise ItemValidationError(
            f"{where} item is {size} bytes; DynamoDB items are limited to {MAX_ITEM_BYTES} bytes (400 KB) — "
            "store large payloads in S3 and keep a pointer"
        )
