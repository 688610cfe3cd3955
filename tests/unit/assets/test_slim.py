"""Slimming modules for Lambda assets: docstrings and comments go, code and line numbers stay."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from constructs_lib.assets.slim import slim_source

PACKAGE = Path(__file__).resolve().parents[3] / "constructs_lib"
SHIPPED = sorted(
    p for sub in ("model", "runtime") for p in (PACKAGE / sub).rglob("*.py")
    if "__pycache__" not in p.parts
)


def _without_docstrings(tree: ast.AST) -> str:
    """The AST dump with every docstring set to "" (what slimming promises to change)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body[0].value.value = ""
    return ast.dump(tree, include_attributes=False)


def _statement_lines(tree: ast.AST) -> list[tuple[str, int]]:
    return [(type(n).__name__, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def test_blanks_docstrings_and_comments_and_keeps_everything_else() -> None:
    # GIVEN a module with docstrings, comments, a '#' inside strings and non-ASCII text
    source = (
        '#!/usr/bin/env python3\n'
        '"""Module doc,\n'
        'two lines."""\n'
        'SEP = "#"  # the separator\n'
        'class A:\n'
        '    """Doc of A — with a dash."""\n'
        '    def f(self):  # trailing\n'
        "        '''one-line'''\n"
        '        return "é#x"  # é\n'
        'def g(): """inline"""; return 1\n'
    )
    # WHEN slimmed
    slim = slim_source(source)
    # THEN docstrings are "" on the same lines, comments are gone, strings holding '#' are intact
    assert slim == (
        '\n'
        '""\n'
        '\n'
        'SEP = "#"\n'
        'class A:\n'
        '    ""\n'
        '    def f(self):\n'
        '        ""\n'
        '        return "é#x"\n'
        'def g(): ""; return 1\n'
    )


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_every_shipped_module_keeps_its_code_and_line_numbers(path: Path) -> None:
    # GIVEN a module the bundler ships in Lambda assets
    source = path.read_text(encoding="utf-8")
    # WHEN slimmed
    slim = slim_source(source)
    original, slimmed = ast.parse(source), ast.parse(slim)
    # THEN it has the same code (its AST differs only in docstrings) ...
    assert _without_docstrings(slimmed) == _without_docstrings(original)
    # ... every statement is on the same line, and the line count is unchanged
    assert _statement_lines(slimmed) == _statement_lines(original)
    assert len(slim.splitlines()) == len(source.splitlines())
    # AND it is no larger, with no comment left
    assert len(slim) <= len(source)


def test_shipped_package_is_much_smaller() -> None:
    # GIVEN every module shipped in an asset
    before = sum(len(p.read_bytes()) for p in SHIPPED)
    after = sum(len(slim_source(p.read_text(encoding="utf-8")).encode()) for p in SHIPPED)
    # THEN slimming saves at least a fifth of the bytes (the sources are documented at length)
    assert after < before * 0.8, (before, after)


def test_refuses_invalid_python() -> None:
    # GIVEN text that is not Python THEN slimming raises instead of shipping it
    with pytest.raises(SyntaxError):
        slim_source("def broken(:\n")
