"""The script an interpreter of a function's Python version runs to compile the asset's modules.

``python3.X -I -S pyc_worker.py`` reads ``{asset path: source}`` as JSON on stdin and writes
``{"tag", "version", "pycs": {path: base64 pyc}, "errors": {path: message}}`` as JSON on stdout;
``pyc_worker.py --version`` prints ``MAJOR.MINOR FULL_VERSION``. The pycs are unchecked-hash pycs
(PEP 552). The library's own modules (paths under ``constructs_lib/``) are compiled without their
docstrings, as ``-OO`` would, but keep their ``assert`` statements and line numbers; nothing reads
their ``__doc__`` at run time, and the bytecode of a function is about 15 % smaller (docs/adr/0057).
A user's modules keep everything. Standard library only: it runs outside this package's
interpreter and import path (:mod:`.bytecode` starts it).
"""

from __future__ import annotations

import ast
import base64
import importlib.util
import json
import marshal
import sys

__all__ = ["LIBRARY_PREFIX", "compile_sources", "main", "unchecked_hash_pyc", "version", "without_docstrings"]

#: Asset paths of the library's own modules, compiled without docstrings.
LIBRARY_PREFIX = "constructs_lib/"


def without_docstrings(tree: ast.Module) -> ast.Module:
    """``tree`` with the docstring of the module and of every class and function removed (a body
    left empty gets ``pass`` on the docstring's line); every other node keeps its line."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                body[0:1] = [] if len(body) > 1 else [ast.copy_location(ast.Pass(), first)]
    return tree


def unchecked_hash_pyc(source: bytes, path: str, *, docstrings: bool = True) -> bytes:
    """The pyc of ``source`` as this interpreter writes it, flagged unchecked-hash: no timestamp,
    so the same source gives the same bytes; without docstrings unless ``docstrings``. Raises
    ``SyntaxError``."""
    compiled: bytes | ast.Module = source if docstrings else without_docstrings(ast.parse(source, path))
    # dont_inherit: this script's own ``from __future__`` imports must not apply to the module.
    code = compile(compiled, path, "exec", dont_inherit=True, optimize=0)
    flags = (1).to_bytes(4, "little")  # hash-based, check_source off
    return importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source) + marshal.dumps(code)


def compile_sources(sources: dict[str, str]) -> dict[str, object]:
    """The answer for ``sources``: every pyc (base64) and, per module that does not compile, its error."""
    pycs: dict[str, str] = {}
    errors: dict[str, str] = {}
    for path, text in sources.items():
        try:
            pyc = unchecked_hash_pyc(text.encode("utf-8"), path, docstrings=not path.startswith(LIBRARY_PREFIX))
            pycs[path] = base64.b64encode(pyc).decode()
        except SyntaxError as exc:
            errors[path] = f"line {exc.lineno}: {exc.msg}"
    return {"tag": sys.implementation.cache_tag, "version": sys.version.split()[0], "pycs": pycs, "errors": errors}


def version() -> str:
    """``MAJOR.MINOR FULL_VERSION`` of this interpreter (``"3.13 3.13.0"``)."""
    return f"{sys.version_info[0]}.{sys.version_info[1]} {sys.version.split()[0]}"


def main(argv: list[str]) -> int:
    """Answer ``--version``, or compile the JSON on stdin (see the module docstring)."""
    if argv == ["--version"]:
        sys.stdout.write(version() + "\n")
        return 0
    if argv:
        sys.stderr.write(f"usage: pyc_worker.py [--version] (got {argv!r})\n")
        return 2
    json.dump(compile_sources(json.load(sys.stdin)), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
