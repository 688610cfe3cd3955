"""AWS Lambda event filtering (EventBridge-style patterns) for the local stream runner.

Lambda evaluates every record against a mapping's ``FilterCriteria`` before batching and never
delivers records that match none; :func:`matches_any` reproduces that, so local runs drop exactly
the records AWS would. Every key of a pattern must match; a leaf is a list meaning "any of"
(literals, ``prefix``, ``suffix``, ``equals-ignore-case``, ``anything-but``, ``numeric``,
``exists``); several filters are OR-ed. What AWS leaves unspecified (``exists`` on an object) and
anything unknown raise :class:`EventFilterError` naming the operator or value.

The rules in full: docs/testing.md ("What the local stand-ins reproduce"). Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from constructs_lib.testing.exceptions import EventFilterError

__all__ = ["EventFilterError", "matches", "matches_any", "parse_filter_criteria", "validate_pattern"]

_STRING_OPS = ("prefix", "suffix", "equals-ignore-case")
_OPERATORS = frozenset({*_STRING_OPS, "anything-but", "numeric", "exists"})
_NUMERIC_OPS = frozenset({"=", "<", "<=", ">", ">="})
_LOWER_OPS = frozenset({">", ">="})
_UPPER_OPS = frozenset({"<", "<="})
_MISSING = object()


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_literal(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def _where(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "<root>"


def validate_pattern(pattern: Any, _path: tuple[str, ...] = ()) -> None:
    """Check that *pattern* is a well-formed Lambda filter pattern.

    Parameters
    ----------
    pattern : Mapping
        The decoded pattern (a JSON object).

    Raises
    ------
    EventFilterError
        The pattern is not an object, a leaf is not a non-empty list, an operator is unknown
        or has an operand of the wrong type. The message names the path and the rule.
    """
    if not isinstance(pattern, Mapping):
        raise EventFilterError(
            f"filter pattern at {_where(_path)} must be a JSON object, got {pattern!r}"
        )
    if not _path and not pattern:
        raise EventFilterError("filter pattern {} is empty; a pattern needs at least one key")
    for key, value in pattern.items():
        path = (*_path, str(key))
        if not isinstance(key, str):
            raise EventFilterError(f"filter pattern key {key!r} at {_where(_path)} must be a string")
        if key.startswith("$"):
            raise EventFilterError(
                f"filter pattern key {key!r} at {_where(path)} is an unsupported operator "
                "(Lambda event filtering supports no '$or'-style keys here)"
            )
        if isinstance(value, Mapping):
            if not value:
                raise EventFilterError(f"filter pattern object at {_where(path)} is empty")
            validate_pattern(value, path)
        elif isinstance(value, list):
            if not value:
                raise EventFilterError(
                    f"filter pattern leaf {_where(path)} is an empty list; a leaf needs at least one value"
                )
            for entry in value:
                _validate_entry(entry, path)
        else:
            raise EventFilterError(
                f"filter pattern value {value!r} at {_where(path)} must be a list of matchers or an "
                "object; leaf values are always lists (e.g. [\"INSERT\"])"
            )


def _validate_entry(entry: Any, path: tuple[str, ...]) -> None:
    if _is_literal(entry):
        return
    if not isinstance(entry, Mapping):
        raise EventFilterError(
            f"filter matcher {entry!r} at {_where(path)} must be a literal or an operator object"
        )
    if len(entry) != 1:
        raise EventFilterError(
            f"filter matcher {dict(entry)!r} at {_where(path)} must hold exactly one operator"
        )
    ((op, arg),) = entry.items()
    if op not in _OPERATORS:
        raise EventFilterError(
            f"filter operator {op!r} at {_where(path)} is not supported; supported operators are "
            f"{sorted(_OPERATORS)}"
        )
    if op in _STRING_OPS:
        if not isinstance(arg, str):
            raise EventFilterError(f"operator {op!r} at {_where(path)} needs a string operand, got {arg!r}")
    elif op == "exists":
        if not isinstance(arg, bool):
            raise EventFilterError(f"operator 'exists' at {_where(path)} needs true or false, got {arg!r}")
    elif op == "numeric":
        _validate_numeric(arg, path)
    else:
        _validate_anything_but(arg, path)


def _validate_numeric(arg: Any, path: tuple[str, ...]) -> None:
    rule = "'numeric' takes [op, number] or [lower-op, number, upper-op, number] with op in = < <= > >="
    if not isinstance(arg, list) or len(arg) not in (2, 4):
        raise EventFilterError(f"operator 'numeric' at {_where(path)} got {arg!r}; {rule}")
    ops, numbers = arg[0::2], arg[1::2]
    for op in ops:
        if op not in _NUMERIC_OPS:
            raise EventFilterError(f"numeric comparison {op!r} at {_where(path)} is not supported; {rule}")
    for number in numbers:
        if not _is_number(number):
            raise EventFilterError(f"numeric operand {number!r} at {_where(path)} is not a number; {rule}")
    if len(arg) == 4 and not (ops[0] in _LOWER_OPS and ops[1] in _UPPER_OPS):
        raise EventFilterError(
            f"numeric range {arg!r} at {_where(path)} must be a lower bound (> or >=) followed by an "
            "upper bound (< or <=)"
        )


def _validate_anything_but(arg: Any, path: tuple[str, ...]) -> None:
    if _is_literal(arg):
        return
    if isinstance(arg, list):
        if not arg or not all(_is_literal(v) for v in arg):
            raise EventFilterError(
                f"operator 'anything-but' at {_where(path)} got {arg!r}; a list operand must be a "
                "non-empty list of strings/numbers"
            )
        return
    if isinstance(arg, Mapping) and len(arg) == 1:
        ((op, operand),) = arg.items()
        if op in ("prefix", "suffix") and isinstance(operand, str):
            return
        raise EventFilterError(
            f"operator 'anything-but' at {_where(path)} does not support {{{op!r}: {operand!r}}}; "
            "only {'prefix': str} and {'suffix': str} may be nested"
        )
    raise EventFilterError(
        f"operator 'anything-but' at {_where(path)} got {arg!r}; it takes a value, a list of values, "
        "{'prefix': str} or {'suffix': str}"
    )


# --------------------------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------------------------
def _equal(expected: Any, actual: Any) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if _is_number(expected) or _is_number(actual):
        return _is_number(expected) and _is_number(actual) and float(expected) == float(actual)
    return bool(expected == actual)


def _compare(op: str, actual: float, bound: float) -> bool:
    if op == "=":
        return actual == bound
    if op == "<":
        return actual < bound
    if op == "<=":
        return actual <= bound
    if op == ">":
        return actual > bound
    return actual >= bound


def _is_leaf(value: Any) -> bool:
    if isinstance(value, list):
        return any(_is_literal(v) for v in value)
    return _is_literal(value)


def _match_scalar(entry: Any, actual: Any) -> bool:
    """One matcher entry against one (non-list) event value."""
    if _is_literal(entry):
        return _equal(entry, actual)
    ((op, arg),) = entry.items()
    if op == "prefix":
        return isinstance(actual, str) and actual.startswith(arg)
    if op == "suffix":
        return isinstance(actual, str) and actual.endswith(arg)
    if op == "equals-ignore-case":
        return isinstance(actual, str) and actual.casefold() == arg.casefold()
    if op == "numeric":
        if not _is_number(actual):
            return False
        return all(_compare(o, float(actual), float(n)) for o, n in zip(arg[0::2], arg[1::2], strict=False))
    # anything-but
    if not _is_literal(actual):
        return False
    if isinstance(arg, Mapping):
        ((sub, operand),) = arg.items()
        if not isinstance(actual, str):
            return False
        return not (actual.startswith(operand) if sub == "prefix" else actual.endswith(operand))
    values = arg if isinstance(arg, list) else [arg]
    return not any(_equal(v, actual) for v in values)


def _match_leaf(entries: list[Any], actual: Any) -> bool:
    for entry in entries:
        if isinstance(entry, Mapping) and "exists" in entry:
            wanted = entry["exists"]
            if isinstance(actual, Mapping) or (
                isinstance(actual, list) and actual and all(isinstance(a, Mapping) for a in actual)
            ):
                raise EventFilterError(
                    f"operator 'exists' met an object ({json.dumps(actual, default=str)[:60]}): AWS documents "
                    "'exists' as matching leaf nodes only and leaves its result on an object unspecified; write the "
                    "pattern on a leaf, e.g. {\"_type\": {\"S\": [{\"exists\": false}]}}"
                )
            present = actual is not _MISSING and _is_leaf(actual)
            if (wanted and present) or (not wanted and actual is _MISSING):
                return True
            continue
        if actual is _MISSING:
            continue
        candidates = actual if isinstance(actual, list) else [actual]
        if any(_match_scalar(entry, c) for c in candidates):
            return True
    return False


def _match(pattern: Mapping[str, Any], event: Any) -> bool:
    for key, sub in pattern.items():
        actual = event.get(key, _MISSING) if isinstance(event, Mapping) else _MISSING
        if isinstance(sub, Mapping):
            if actual is _MISSING:
                if not _match(sub, {}):
                    return False
            elif isinstance(actual, list):
                if not any(isinstance(a, Mapping) and _match(sub, a) for a in actual):
                    return False
            elif not (isinstance(actual, Mapping) and _match(sub, actual)):
                return False
        elif not _match_leaf(sub, actual):
            return False
    return True


def matches(pattern: Mapping[str, Any], event: Mapping[str, Any]) -> bool:
    """Whether *event* matches the Lambda filter *pattern*.

    Parameters
    ----------
    pattern : Mapping
        A decoded filter pattern, e.g. ``{"eventName": ["INSERT", "MODIFY"]}``.
    event : Mapping
        The record as Lambda would deliver it (for DynamoDB, a Lambda stream record).

    Returns
    -------
    bool
        True when every key of the pattern matches (see the module docstring for the rules).

    Raises
    ------
    EventFilterError
        The pattern is malformed or uses an unsupported operator (checked before matching, so
        the outcome never depends on which event is tested).
    """
    validate_pattern(pattern)
    return _match(pattern, event)


def matches_any(filters: Sequence[Mapping[str, Any]], event: Mapping[str, Any]) -> bool:
    """Whether *event* matches at least one of *filters* (True when there are no filters).

    Raises
    ------
    EventFilterError
        One of the patterns is malformed (all patterns are validated first).
    """
    for pattern in filters:
        validate_pattern(pattern)
    return not filters or any(_match(p, event) for p in filters)


def parse_filter_criteria(value: Any) -> tuple[dict[str, Any], ...]:
    """Decode the CloudFormation ``FilterCriteria`` property of an event source mapping.

    Parameters
    ----------
    value : Mapping or None
        ``{"Filters": [{"Pattern": "<json string>"}, ...]}`` as synthesized by CDK, or None
        (no filtering). An already-decoded object in ``Pattern`` is accepted too.

    Returns
    -------
    tuple[dict, ...]
        The decoded and validated patterns; empty when *value* is None or has no filters.

    Raises
    ------
    EventFilterError
        The property is not shaped as above, a pattern is not valid JSON (e.g. an unresolved
        intrinsic), or a pattern is malformed.
    """
    if value is None:
        return ()
    if not isinstance(value, Mapping) or set(value) - {"Filters"}:
        raise EventFilterError(
            f"FilterCriteria {value!r} must be an object with only a 'Filters' list"
        )
    filters = value.get("Filters") or []
    if not isinstance(filters, list):
        raise EventFilterError(f"FilterCriteria.Filters {filters!r} must be a list of {{'Pattern': ...}}")
    patterns: list[dict[str, Any]] = []
    for index, entry in enumerate(filters):
        if not isinstance(entry, Mapping) or "Pattern" not in entry:
            raise EventFilterError(f"FilterCriteria.Filters[{index}] {entry!r} must be {{'Pattern': '<json>'}}")
        raw = entry["Pattern"]
        if isinstance(raw, str):
            try:
                pattern = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise EventFilterError(
                    f"FilterCriteria.Filters[{index}].Pattern {raw!r} is not valid JSON: {exc}"
                ) from exc
        elif isinstance(raw, Mapping) and not any(str(k).startswith("Fn::") or k == "Ref" for k in raw):
            pattern = raw
        else:
            raise EventFilterError(
                f"FilterCriteria.Filters[{index}].Pattern {raw!r} must be a JSON string "
                "(intrinsic functions are not resolved locally)"
            )
        validate_pattern(pattern)
        patterns.append(json.loads(json.dumps(pattern)))
    return tuple(patterns)
