"""Slim a Python module for a Lambda asset: blank its docstrings and comments, keep its lines.

The runtime and model packages are documented at length for their readers; a Lambda function
only executes them, and every byte of the asset is paid for at each cold start (download and
unzip). So the bundler ships each module with

* every docstring (module, class, function) replaced by ``""`` followed by as many newlines as
  the docstring spanned, and
* every comment removed (the text from ``#`` to the end of its line),

and nothing else changed: the code is byte-for-byte the source's on every line that holds code,
and every statement keeps its line number — so a traceback from a deployed function points at
the same lines of the published source. ``__doc__`` of the shipped modules is ``""``.
"""

from __future__ import annotations

import ast
import io
import tokenize
from functools import lru_cache


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
    per process. Raises ``SyntaxError`` if ``source`` is not valid Python.
    """
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
