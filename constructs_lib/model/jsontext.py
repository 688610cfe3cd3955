"""JSON text read with bounded nesting: the one way the model layer parses JSON it is given.

``json.loads`` recurses once per nested array or object, so a few kilobytes of ``[`` raise a
bare ``RecursionError`` (and a document just under the interpreter's limit breaks whatever
walks it next). :func:`load_json` counts the nesting first, without recursion, and refuses more
than :data:`MAX_JSON_DEPTH` levels with the caller's typed error naming the source, the place
and the limit. The runtime has its own copy (``runtime/jsontext.py``): a counter or audit
function never loads this package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate, repeat
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "load_json", "too_deep"]

#: Most arrays and objects one JSON document may nest (the model JSON nests 9 at most, a
#: contract file 10).
MAX_JSON_DEPTH = 64
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# A string (escapes and all) is one token, so brackets inside strings are not counted.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}]', re.DOTALL)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_ONLY_BRACKETS = {code: None for code in range(128) if chr(code) not in _STEP}


def too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Where ``text`` first nests more than ``limit`` arrays and objects (``"line L, column C"``),
    or None when it does not."""
    if text.count("[") + text.count("{") <= limit:
        return None
    # Outside strings, at C speed: without an escaped quote, every other piece between quotes.
    outside = _STRING.sub("", text) if '\\"' in text else "".join(text.split('"')[::2])
    steps = map(_STEP.get, outside.translate(_ONLY_BRACKETS), repeat(0))
    if max(accumulate(steps), default=0) <= limit:
        return None
    depth = 0
    for token in _TOKEN.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                pos = token.start()
                line, column = text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)
                return f"line {line}, column {column}"
        elif char in "]}":
            depth -= 1
    return None  # an unterminated string counted otherwise: json.loads stops there anyway


def load_json(text: str | bytes, source: str, error: Callable[[str], Exception],
              limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)`` with at most ``limit`` nested arrays and objects.

    Parameters
    ----------
    text
        JSON text; bytes are decoded as ``json.loads`` decodes them (UTF-8, -16 or -32).
    source
        What the text is, for the message (``"contract file 'shop.contract.json'"``).
    error
        The caller's typed error class (called with the message) for a too deeply nested text.
    limit
        Default :data:`MAX_JSON_DEPTH`.

    Raises
    ------
    TypeError
        ``text`` is not str, bytes or bytearray (as ``json.loads``).
    Exception
        ``error(message)`` naming ``source``, the place and the limit when the text nests deeper.
    json.JSONDecodeError
        The text is not JSON (as ``json.loads``; callers word their own message).
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
    elif not isinstance(text, str):
        raise TypeError(f"JSON text must be str, bytes or bytearray, not {type(text).__name__}")
    where = too_deep(text, limit)
    if where is not None:
        raise error(f"{source} nests arrays and objects more than {limit} levels deep ({where}); "
                    f"at most {limit} levels are read")
    return json.loads(text)
