"""Slim a Python module for a Lambda asset: blank its docstrings and comments, keep its lines.

Every docstring becomes ``""`` followed by as many newlines as it spanned and every comment is
removed; nothing else changes, so each code line is byte-for-byte the source's at the same line
number and a traceback from a deployed function points at the published source. ``__doc__`` of
the shipped modules is ``""``. Once the bundle knows what it ships, :func:`blank_type_checking`
also blanks the bodies of ``if TYPE_CHECKING:`` blocks, which never run (the import analysis
reads them first). See docs/adr/0018-bundling-ships-model-and-runtime.md.
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


def _type_checking_blocks(tree: ast.Module) -> list[ast.If]:
    """The outermost ``if TYPE_CHECKING:`` blocks without an ``else`` (their bodies never run)."""
    def names_it(test: ast.expr) -> bool:
        return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")

    found = [n for n in ast.walk(tree) if isinstance(n, ast.If) and names_it(n.test) and not n.orelse and n.body]
    spans = {n: (n.lineno, n.end_lineno or n.lineno) for n in found}
    return [n for n in found if not any(lo < n.lineno <= hi for m, (lo, hi) in spans.items() if m is not n)]


@lru_cache(maxsize=512)
def blank_type_checking(source: str) -> str:
    """``source`` with the body of every ``if TYPE_CHECKING:`` block replaced by ``pass`` and blank
    lines: what never runs leaves the asset, every other line stays where it was."""
    lines = source.splitlines(keepends=True)
    for block in _type_checking_blocks(ast.parse(source)):
        head = block.body[0]
        first = min([head.lineno, *(d.lineno for d in getattr(head, "decorator_list", ()))]) - 1
        last = (block.body[-1].end_lineno or block.body[-1].lineno) - 1
        if head.lineno == block.lineno:
            continue  # `if TYPE_CHECKING: import x` on one line keeps it
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        lines[first:last + 1] = [indent + "pass\n"] + ["\n"] * (last - first)
    return "".join(lines)


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
