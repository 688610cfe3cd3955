"""Each package's public surface comes from one list, and no Python program hides in a string.

A package ``__init__`` with a lazy map (``_LAZY``: public name -> module) exports exactly its
eager names and the map's: ``__all__`` lists them, ``__getattr__`` loads from the map, and the
``TYPE_CHECKING`` imports (what type checkers and editors read) name the same modules; each module
really defines its name. Read from the source with ``ast``, so no package (and no CDK) is imported.

Code run in another process is a module of the package (docs/adr/0048-asset-building-is-its-own-package.md):
no string constant of the package may be a Python program.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from constructs_lib.assets.handler_code import defined_names

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "constructs_lib"


# The checks ---------------------------------------------------------------------------------------
def _is_type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _absolute(package: str, module: str | None, level: int) -> str:
    if not level:
        return module or ""
    base = package.split(".")[: len(package.split(".")) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _module_file(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def surface_problems(init: Path, root: Path = REPO) -> list[str]:
    """What breaks the one-list rule in the package ``__init__`` at ``init`` (empty: nothing)."""
    package = ".".join(init.parent.relative_to(root).parts)
    tree = ast.parse(init.read_text(encoding="utf-8"))
    lazy: dict[str, str] = {}
    all_node: ast.expr | None = None
    checked: dict[str, str] = {}  # TYPE_CHECKING import: name -> module
    eager: set[str] = set()
    getattr_reads_lazy = False
    for node in tree.body:
        if _is_type_checking(node):
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom):
                    for alias in sub.names:
                        checked[alias.asname or alias.name] = _absolute(package, sub.module, sub.level)
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id == "_LAZY" and node.value is not None:
                lazy = {k: v if v.split(".")[0] == package.split(".")[0] else _absolute(package, v, 1)
                        for k, v in ast.literal_eval(node.value).items()}
            elif isinstance(target, ast.Name) and target.id == "__all__":
                all_node = node.value
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            getattr_reads_lazy = any(isinstance(n, ast.Name) and n.id == "_LAZY" for n in ast.walk(node))
        eager |= defined_names(ast.unparse(node), filename=str(init))
    eager -= {"_LAZY", "__all__", "__getattr__", "__dir__", "annotations", "TYPE_CHECKING"}
    if all_node is None:
        return [] if not lazy else [f"{package}: a lazy map without __all__"]
    exported = eval(compile(ast.Expression(all_node), str(init), "eval"),  # noqa: S307 - the package's own literal
                    {"__builtins__": {"list": list, "sorted": sorted}}, {"_LAZY": dict.fromkeys(lazy)})
    problems = [f"{package}: {name!r} is listed twice in __all__" for name in sorted(set(exported))
                if exported.count(name) > 1]
    problems += [f"{package}: {name!r} is in __all__ but neither defined nor in the lazy map"
                 for name in exported if name not in eager and name not in lazy]
    if not lazy:
        return problems
    if not getattr_reads_lazy:
        problems.append(f"{package}: __getattr__ does not load from _LAZY")
    problems += [f"{package}: lazy {name!r} is not in __all__" for name in lazy if name not in exported]
    for name, module in sorted(lazy.items()):
        if name not in checked:
            problems.append(f"{package}: lazy {name!r} ({module}) has no TYPE_CHECKING import")
        elif checked[name] != module:
            problems.append(f"{package}: lazy {name!r} comes from {module} but TYPE_CHECKING imports it from "
                            f"{checked[name]}")
        source = _module_file(root, module)
        if source is None or name not in defined_names(source.read_text(encoding="utf-8"), filename=str(source)):
            problems.append(f"{package}: lazy {name!r}: {module} does not define it")
    problems += [f"{package}: TYPE_CHECKING imports {name!r}, which is not in the lazy map"
                 for name in sorted(set(checked) - set(lazy))]
    return problems


def _docstring_nodes(tree: ast.Module) -> set[int]:
    owners = [n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)]
    return {id(o.body[0].value) for o in owners
            if o.body and isinstance(o.body[0], ast.Expr) and isinstance(o.body[0].value, ast.Constant)}


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While, ast.With, ast.Try, ast.If)


def python_programs_in_strings(source: str) -> list[tuple[int, str]]:
    """(line, first code line) of every string constant — docstrings aside — that is a Python
    program: it parses, and holds a definition, a loop, a ``with``/``try``/``if`` block or more than
    one statement. One statement (a line of generated code, a module name) is not a program."""
    tree = ast.parse(source)
    docstrings = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docstrings:
            continue
        try:
            body = ast.parse(node.value).body
        except (SyntaxError, ValueError):
            continue
        if len(body) > 1 or any(isinstance(n, _COMPOUND) for n in body):
            found.append((node.lineno, node.value.strip().splitlines()[0]))
    return found


# The package meets them ----------------------------------------------------------------------------
INITS = sorted(p for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("init", INITS, ids=lambda p: p.parent.relative_to(REPO).as_posix())
def test_each_package_surface_comes_from_one_list(init: Path) -> None:
    # GIVEN a package __init__ of the library
    # WHEN its __all__, lazy map, __getattr__ and TYPE_CHECKING imports are compared
    # THEN they agree, and every lazily exported name is defined by the module the map names
    assert surface_problems(init) == []


def test_the_surfaces_are_the_documented_ones() -> None:
    # GIVEN the three public packages, read statically
    # WHEN their lazy maps are read
    import constructs_lib
    import constructs_lib.constructs
    import constructs_lib.testing

    # THEN the top level exports __version__ and its map (the settings object under its new name,
    # the old one gone), the constructs package nothing of its own, testing its map
    assert constructs_lib.__all__ == ["__version__", *constructs_lib._LAZY]
    assert "OperationsSettings" in constructs_lib.__all__ and "Operations" not in constructs_lib.__all__
    assert constructs_lib.constructs.__all__ == []
    assert constructs_lib.testing.__all__ == list(constructs_lib.testing._LAZY)
    assert constructs_lib.testing.LocalSsm.__name__ == "LocalSsm"


def test_no_python_program_hides_in_a_string_of_the_package() -> None:
    # GIVEN every module of the package
    # WHEN its string constants are parsed as Python
    found = [f"{path.relative_to(REPO)}:{line}: {first}"
             for path in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in path.parts
             for line, first in python_programs_in_strings(path.read_text(encoding="utf-8"))]
    # THEN none is a program: code run in another process is a module (assets/pyc_worker.py,
    # testing/handler_process.py)
    assert found == []


# The checks can fail --------------------------------------------------------------------------------
def test_a_program_in_a_string_is_found_and_other_strings_are_not() -> None:
    # GIVEN a module with the two kinds of programs that used to be strings (a script given to
    # ``python -c``, a one-line probe) beside strings that are not programs
    source = '''"""Docstring with code::

    def handler(event, context):
        return 1
"""
CHILD = r"""
import json, sys
for line in sys.stdin:
    print(line)
"""
PROBE = "import sys; print(sys.version)"
LINE = "from __future__ import annotations"
MESSAGE = "handler {name!r} must be a Python function name"
HANDLER = "constructs_lib.runtime.handlers.counter.handler"


def f():
    """def g(): pass"""
    return "def handler(event, context):\\n    return event"
'''
    # WHEN it is checked THEN the script, the probe and the handler source are found, no docstring,
    # single line of code or message is
    assert python_programs_in_strings(source) == [
        (6, "import json, sys"), (11, "import sys; print(sys.version)"), (19, "def handler(event, context):"),
    ]


def _package(root: Path, init: str, modules: dict[str, str]) -> Path:
    (root / "pkg").mkdir()
    for name, text in {"__init__.py": init, **modules}.items():
        (root / "pkg" / name).write_text(text, encoding="utf-8")
    return root / "pkg" / "__init__.py"


GOOD_INIT = '''from typing import TYPE_CHECKING
from .errors import Oops

_LAZY = {"Thing": "pkg.things", "helper": "pkg.things"}
__all__ = ["Oops", *_LAZY]

if TYPE_CHECKING:
    from .things import Thing as Thing
    from .things import helper as helper


def __getattr__(name):
    return _LAZY[name]
'''


def test_a_package_whose_lists_agree_passes(tmp_path: Path) -> None:
    # GIVEN a package whose __all__ is its eager names and its lazy map, typed by TYPE_CHECKING imports
    init = _package(tmp_path, GOOD_INIT, {"errors.py": "class Oops(Exception): ...\n",
                                          "things.py": "class Thing: ...\ndef helper(): ...\n"})
    # WHEN checked THEN nothing is reported
    assert surface_problems(init, tmp_path) == []


def test_every_way_the_lists_drift_apart_is_reported(tmp_path: Path) -> None:
    # GIVEN a package whose lists disagree: a lazy name without a TYPE_CHECKING import (the
    # testing package's LocalSsm before), one typed from the wrong module, a name the map's module
    # does not define, an __all__ name bound nowhere, a type-only name outside the map
    init = _package(tmp_path, '''from typing import TYPE_CHECKING

_LAZY = {"Thing": "pkg.things", "helper": "pkg.things", "LocalSsm": "pkg.ssm", "gone": "pkg.things"}
__all__ = [*_LAZY, "Ghost"]

if TYPE_CHECKING:
    from .things import Thing
    from .errors import helper, gone, Extra


def __getattr__(name):
    return _LAZY[name]
''', {"things.py": "class Thing: ...\ndef helper(): ...\n", "ssm.py": "class LocalSsm: ...\n",
      "errors.py": "helper = gone = Extra = None\n"})
    # WHEN checked THEN each disagreement is reported, naming the package, the name and the modules
    assert surface_problems(init, tmp_path) == [
        "pkg: 'Ghost' is in __all__ but neither defined nor in the lazy map",
        "pkg: lazy 'LocalSsm' (pkg.ssm) has no TYPE_CHECKING import",
        "pkg: lazy 'gone' comes from pkg.things but TYPE_CHECKING imports it from pkg.errors",
        "pkg: lazy 'gone': pkg.things does not define it",
        "pkg: lazy 'helper' comes from pkg.things but TYPE_CHECKING imports it from pkg.errors",
        "pkg: TYPE_CHECKING imports 'Extra', which is not in the lazy map",
    ]
