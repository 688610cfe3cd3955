"""Slim a Python module for a Lambda asset: blank its docstrings and comments, keep its lines.

Every docstring becomes ``""`` followed by as many newlines as it spanned and every comment is
removed; nothing else changes, so each code line is byte-for-byte the source's at the same line
number and a traceback from a deployed function points at the published source. ``__doc__`` of
the shipped modules is ``""``. See docs/adr/0018-bundling-ships-model-and-runtime.md.
"""

from __future__ import annotations

import ast
import io
import tokenize
from functools import lru_cache

from .analysis_cache import cached


def _docstring_nodes(tree: ast.Module) -> list[ast.Constant]:
    owners: list[ast.AST] = [tree]
    owners += [n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    found = []
    for owner in owners:
        body = getattr(owner, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            found.append(body[0].value)
    return found


@lru_cache(maxsize=512)
def slim_source(source: str) -> str:
    """``source`` with docstrings blanked and comments removed, line numbers preserved.

    Cached by content: every generated function ships the same modules, so each is slimmed once
    per process, and once per user across processes (:mod:`.analysis_cache`). Raises
    ``SyntaxError`` if ``source`` is not valid Python.
    """
    return cached("slim", source.encode(), lambda: _slim(source), lambda text: text, _text)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"a slimmed module is text, not {type(value).__name__}")
    return value


def _slim(source: str) -> str:
    lines = source.splitlines(keepends=True)
    # 1. Docstrings, last first so earlier offsets stay valid. ast offsets are UTF-8 byte columns.
    for node in sorted(_docstring_nodes(ast.parse(source)), key=lambda n: (n.lineno, n.col_offset), reverse=True):
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = node.lineno - 1, node.end_lineno - 1
        head = lines[first].encode()[: node.col_offset].decode()
        tail = lines[last].encode()[node.end_col_offset:].decode()
        replacement = head + '""' + "\n" * (last - first) + tail
        lines[first:last + 1] = replacement.splitlines(keepends=True)
    text = "".join(lines)
    # 2. Comments: tokenize knows which '#' start a comment (not those inside strings).
    lines = text.splitlines(keepends=True)
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    for token in tokens:
        if token.type == tokenize.COMMENT:
            row, col = token.start
            line = lines[row - 1]
            ending = line[len(line.rstrip("\r\n")):]
            lines[row - 1] = line[:col].rstrip() + ending
    return "".join(lines)
