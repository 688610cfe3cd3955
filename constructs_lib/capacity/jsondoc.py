"""JSON documents that remember where each value sits: what lets the price and rates files'
errors name the line of the offending value.

A small reader built on the standard library's string and number scanners: it returns the
parsed value and, for every path into it (a tuple of keys and list positions), the line its
value starts on. Duplicate keys are refused (``json`` would keep the last one silently), and so
is nesting deeper than ``MAX_JSON_DEPTH`` arrays and objects (the reader recurses once per level).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.jsontext import MAX_JSON_DEPTH
from .exceptions import CapacityInputError

__all__ = ["Document", "JsonSyntaxError", "parse", "read"]

Path_ = tuple[str | int, ...]
_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_DECODER = json.JSONDecoder()
_CONSTANTS = {"true": True, "false": False, "null": None}


class JsonSyntaxError(CapacityInputError):
    """Text that is not JSON, or nests deeper than ``MAX_JSON_DEPTH``; ``line`` is where the reader stopped."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Document:
    """A parsed JSON document: ``value``, where it came from, and the line of every value."""

    value: Any
    source: str
    lines: dict[Path_, int]

    def line(self, path: Path_) -> int:
        """The line of the value at ``path`` (of its nearest enclosing value when absent)."""
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path, 1)


def read(path: Path) -> Document:
    """Parse the JSON file at ``path`` (:class:`JsonSyntaxError` when it is not JSON)."""
    return parse(path.read_text(encoding="utf-8"), str(path))


def parse(text: str, source: str = "<string>") -> Document:
    """Parse ``text`` as one JSON value, recording each value's line."""
    lines: dict[Path_, int] = {}
    reader = _Reader(text, lines)
    pos = reader.skip(0)
    value, pos = reader.value(pos, ())
    pos = reader.skip(pos)
    if pos != len(text):
        raise reader.error(pos, "extra text after the JSON value")
    return Document(value, source, lines)


class _Reader:
    def __init__(self, text: str, lines: dict[Path_, int]) -> None:
        self.text = text
        self.lines = lines

    def line_of(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1

    def error(self, pos: int, what: str) -> JsonSyntaxError:
        line = self.line_of(pos)
        return JsonSyntaxError(f"line {line}: not JSON: {what}", line)

    def skip(self, pos: int) -> int:
        match = _WS.match(self.text, pos)
        return match.end() if match else pos

    def value(self, pos: int, path: Path_) -> tuple[Any, int]:
        text = self.text
        self.lines[path] = self.line_of(pos)
        if pos >= len(text):
            raise self.error(pos, "the text ends where a value was expected")
        char = text[pos]
        if char in "{[" and len(path) >= MAX_JSON_DEPTH:
            line = self.line_of(pos)
            raise JsonSyntaxError(f"line {line}: arrays and objects nest more than {MAX_JSON_DEPTH} levels deep "
                                  f"here; at most {MAX_JSON_DEPTH} levels are read", line)
        if char == "{":
            return self.object(pos + 1, path)
        if char == "[":
            return self.array(pos + 1, path)
        if char == '"':
            return self.string(pos + 1)
        for word, constant in _CONSTANTS.items():
            if text.startswith(word, pos):
                return constant, pos + len(word)
        match = _NUMBER.match(text, pos)
        if match is None:
            raise self.error(pos, f"unexpected {text[pos:pos + 12]!r}")
        integer, fraction, exponent = match.groups()
        number: Any = float(integer + (fraction or "") + (exponent or "")) if fraction or exponent else int(integer)
        return number, match.end()

    def string(self, pos: int) -> tuple[str, int]:
        try:
            value, end = _DECODER.raw_decode(self.text, pos - 1)
        except json.JSONDecodeError as exc:
            raise self.error(exc.pos, exc.msg) from None
        return str(value), end

    def object(self, pos: int, path: Path_) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        pos = self.skip(pos)
        if self.text.startswith("}", pos):
            return out, pos + 1
        while True:
            if not self.text.startswith('"', pos):
                raise self.error(pos, "expected a key in double quotes")
            key_line = self.line_of(pos)
            key, pos = self.string(pos + 1)
            if key in out:
                raise JsonSyntaxError(f"line {key_line}: key {key!r} appears twice in one object", key_line)
            pos = self.skip(pos)
            if not self.text.startswith(":", pos):
                raise self.error(pos, f"expected ':' after key {key!r}")
            pos = self.skip(pos + 1)
            out[key], pos = self.value(pos, (*path, key))
            self.lines[(*path, key)] = key_line
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
                continue
            if self.text.startswith("}", pos):
                return out, pos + 1
            raise self.error(pos, "expected ',' or '}'")

    def array(self, pos: int, path: Path_) -> tuple[list[Any], int]:
        out: list[Any] = []
        pos = self.skip(pos)
        if self.text.startswith("]", pos):
            return out, pos + 1
        while True:
            item, pos = self.value(pos, (*path, len(out)))
            out.append(item)
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
                continue
            if self.text.startswith("]", pos):
                return out, pos + 1
            raise self.error(pos, "expected ',' or ']'")
