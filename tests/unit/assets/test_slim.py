"""Slimming modules for Lambda assets: docstrings, comments and ``if TYPE_CHECKING:`` bodies go,
code and line numbers stay."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from constructs_lib.assets.slim import blank_type_checking, slim_source

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


# The bodies of `if TYPE_CHECKING:` blocks ------------------------------------------------------------
def test_blanks_type_checking_bodies_and_keeps_every_other_line() -> None:
    # GIVEN a module with TYPE_CHECKING blocks: one holding a nested block and a decorated def,
    # a one-line block, one on `typing.TYPE_CHECKING` opening with a decorated def, one with an
    # `else:` branch, and one in a class body
    source = (
        "from __future__ import annotations\n"
        "import typing\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from collections.abc import Mapping\n"
        "    if TYPE_CHECKING:\n"
        "        import os\n"
        "\n"
        "    @typing.overload\n"
        "    def f(x: int) -> int: ...\n"
        "if TYPE_CHECKING: import json\n"
        "if typing.TYPE_CHECKING:\n"
        "    @typing.overload\n"
        "    def g(x: str) -> str: ...\n"
        "if TYPE_CHECKING:\n"
        "    import sys\n"
        "else:\n"
        "    sys = None\n"
        "class C:\n"
        "    if TYPE_CHECKING:\n"
        "        x: Mapping[str, int]\n"
        "    y = 1\n"
    )
    # WHEN its TYPE_CHECKING bodies are blanked
    blanked = blank_type_checking(source)
    # THEN each outermost block's body, decorators included, is `pass` at its first line and blank
    # lines after it; the one-line block and the block with an `else:` are untouched
    assert blanked == (
        "from __future__ import annotations\n"
        "import typing\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    pass\n"
        "\n\n\n\n\n"
        "if TYPE_CHECKING: import json\n"
        "if typing.TYPE_CHECKING:\n"
        "    pass\n"
        "\n"
        "if TYPE_CHECKING:\n"
        "    import sys\n"
        "else:\n"
        "    sys = None\n"
        "class C:\n"
        "    if TYPE_CHECKING:\n"
        "        pass\n"
        "    y = 1\n"
    )
    # AND the line count is kept and the result compiles
    assert len(blanked.splitlines()) == len(source.splitlines())
    compile(blanked, "blanked.py", "exec")


def _type_checking_bodies(tree: ast.AST) -> list[tuple[int, int]]:
    """First and last line of each body of an ``if TYPE_CHECKING:`` block without an ``else``
    (decorators included; a one-line block has none)."""
    blocks = [n for n in ast.walk(tree) if isinstance(n, ast.If) and not n.orelse
              and ast.unparse(n.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING") and n.body[0].lineno != n.lineno]
    return [(min([b.body[0].lineno, *(d.lineno for d in getattr(b.body[0], "decorator_list", []))]),
             b.end_lineno or b.lineno) for b in blocks]


def test_every_shipped_module_loses_its_type_checking_bodies_and_keeps_its_lines() -> None:
    blanked_any = False
    for path in SHIPPED:
        # GIVEN a module the bundler ships, slimmed as it is shipped
        slim = slim_source(path.read_text(encoding="utf-8"))
        spans = _type_checking_bodies(ast.parse(slim))

        def outside(line: int, spans: list[tuple[int, int]] = spans) -> bool:
            return not any(lo <= line <= hi for lo, hi in spans)

        # WHEN its TYPE_CHECKING bodies are blanked
        blanked = blank_type_checking(slim)
        tree = ast.parse(blanked, str(path))
        # THEN every statement outside those bodies is where it was, the bodies hold a `pass` and
        # nothing else, the line count is the same, and the module compiles
        assert sorted(s for s in _statement_lines(tree) if outside(s[1])) == sorted(
            s for s in _statement_lines(ast.parse(slim)) if outside(s[1])), path
        assert {kind for kind, line in _statement_lines(tree) if not outside(line)} <= {"Pass"}, path
        assert len(blanked.splitlines()) == len(slim.splitlines()), path
        compile(blanked, str(path), "exec")
        blanked_any = blanked_any or bool(spans)
    # AND the package has such bodies to blank
    assert blanked_any
