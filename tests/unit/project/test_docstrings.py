"""Module docstrings stay short and point to the design records.

A module docstring says what the module is for in at most 12 lines (the lines its string
literal spans, quotes included); the reasons behind a design live in ``docs/adr/`` and the module
links to them. Every ``docs/...`` path a docstring names must exist, and no docstring of the
package speaks of how the project is developed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "constructs_lib"
MAX_LINES = 12
DOC_LINK = re.compile(r"\bdocs/[\w./-]+\.md\b")
JARGON = re.compile(r"\bseed \d{3}\b|\bissue \d+\b|\bhelper session\b", re.IGNORECASE)


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def module_docstring_lines(source: str) -> int:
    """Source lines spanned by the module docstring (0 when there is none)."""
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].end_lineno - body[0].lineno + 1  # type: ignore[operator]
    return 0


def docstrings(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring of a module: the module's, its classes' and functions'."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                yield (node.body[0].lineno, text)


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_the_measure_counts_the_lines_a_docstring_spans() -> None:
    # GIVEN a one-line docstring, one spanning 13 lines, and a module without one
    short = '"""One line."""\nx = 1\n'
    long = '"""Summary.\n' + "more\n" * 11 + '"""\nx = 1\n'
    # WHEN measured THEN the 13-line one is over the limit and the others are not
    assert module_docstring_lines(short) == 1
    assert module_docstring_lines(long) == 13 > MAX_LINES
    assert module_docstring_lines("x = 1\n") == 0


def test_the_package_has_modules_to_check() -> None:
    # GIVEN the package THEN the walk finds its layers (an empty walk would pass every check)
    found = {rel(p) for p in modules()}
    assert "constructs_lib/__init__.py" in found and len(found) > 50
    assert any(p.startswith("constructs_lib/runtime/") for p in found)
    assert any(p.startswith("constructs_lib/model/") for p in found)


@pytest.mark.parametrize("path", modules(), ids=rel)
def test_module_docstring_is_at_most_12_lines(path: Path) -> None:
    # GIVEN a module of the package WHEN its docstring is measured
    lines = module_docstring_lines(path.read_text(encoding="utf-8"))
    # THEN it spans at most 12 lines (move the rationale to docs/adr/ and link it)
    assert lines <= MAX_LINES, f"{rel(path)}: module docstring spans {lines} lines (limit {MAX_LINES})"


def test_docs_named_in_docstrings_exist() -> None:
    # GIVEN every docs/... path named in a docstring of the package
    named = {
        (rel(path), line, link)
        for path in modules()
        for line, text in docstrings(path.read_text(encoding="utf-8"))
        for link in DOC_LINK.findall(text)
    }
    assert any(link.startswith("docs/adr/") for _, _, link in named)
    # THEN each names a file of the repository
    missing = sorted(f"{p}:{line}: {link}" for p, line, link in named if not (REPO / link).is_file())
    assert not missing, "docstrings link to missing documents:\n" + "\n".join(missing)


def test_docstrings_speak_of_the_code_not_of_its_development() -> None:
    # GIVEN every docstring of the package
    found = sorted(
        f"{rel(path)}:{line}: {m.group(0)!r}"
        for path in modules()
        for line, text in docstrings(path.read_text(encoding="utf-8"))
        for m in JARGON.finditer(text)
    )
    # THEN none refers to development history ("seed 001", "issue 12", ...)
    assert not found, "\n".join(found)
