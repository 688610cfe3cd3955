"""The package's layers and the absence of import cycles, read from the source with ``ast``.

Layers, bottom to top: ``model`` imports nothing else of the package; ``runtime`` imports only
``model``; ``docgen`` only ``model`` and ``runtime``; ``constructs`` anything but ``testing``;
``testing`` anything. Every ``import`` counts for the layers, wherever it sits: module level,
inside functions, under ``TYPE_CHECKING``. No module may reach itself through the imports that
run (all but those under ``TYPE_CHECKING``, which only name types for annotations).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

PACKAGE = "constructs_lib"
ROOT = Path(__file__).resolve().parents[2]

#: Layer -> the layers its modules may import (their own included).
ALLOWED = {
    "model": {"model"},
    "runtime": {"model", "runtime"},
    "docgen": {"model", "runtime", "docgen"},
    "constructs": {"model", "runtime", "docgen", "constructs"},
    "testing": {"model", "runtime", "docgen", "constructs", "testing", "root"},
    # constructs_lib/__init__.py (lazy exports) and __main__.py (the command line)
    "root": {"model", "runtime", "docgen", "constructs", "root"},
}


def modules(root: Path, package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``) for every module under ``package``."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _type_only(tree: ast.AST) -> set[int]:
    """ids of the import statements inside ``if TYPE_CHECKING:`` blocks."""
    found: set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and (
            (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
        ):
            found |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return found


def import_graph(root: Path, package: str = PACKAGE, *, type_only: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (resolved to the deepest existing module);
    without the imports under ``TYPE_CHECKING`` when ``type_only`` is False."""
    found = modules(root, package)

    def existing(name: str) -> str:
        while name not in found and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in found.items():
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = set() if type_only else _type_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets |= {existing(a.name) for a in node.names if a.name.split(".")[0] == package}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                if module.split(".")[0] != package:
                    continue
                # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one
                targets |= {existing(f"{module}.{a.name}") for a in node.names}
        graph[name] = targets - {name}
    return graph


def layer(module: str, package: str = PACKAGE) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else "root"


def layer_violations(graph: Mapping[str, set[str]], package: str = PACKAGE) -> list[str]:
    """``"a -> b (layer x may not import layer y)"`` for every edge the layer rule forbids."""
    return sorted(
        f"{source} -> {target} (layer {layer(source, package)} may not import layer {layer(target, package)})"
        for source, targets in graph.items()
        for target in targets
        if layer(target, package) not in ALLOWED[layer(source, package)]
    )


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


# The checks themselves ---------------------------------------------------------------------------
def test_every_import_respects_the_layers() -> None:
    # GIVEN the import graph of the package, function-level and type-only imports included
    graph = import_graph(ROOT)
    assert {"constructs_lib.model", "constructs_lib.runtime.client", "constructs_lib.constructs.single_table"} <= set(graph)
    # WHEN checking each import against the layer rule
    # THEN none crosses a layer upwards
    assert layer_violations(graph) == []


def test_there_is_no_import_cycle() -> None:
    # GIVEN the imports of the package that run WHEN looking for modules that reach themselves
    # THEN there are none
    assert cycles(import_graph(ROOT, type_only=False)) == []


# The checks can fail -----------------------------------------------------------------------------
def _write(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


BAD_PACKAGE = {
    "constructs_lib/__init__.py": "",
    "constructs_lib/model/__init__.py": "",
    # the bottom layer reaching up, inside a function
    "constructs_lib/model/entity.py": "def f():\n    from ..runtime import client\n",
    "constructs_lib/runtime/__init__.py": "",
    # a cycle through a type-only import
    "constructs_lib/runtime/client.py": (
        "from typing import TYPE_CHECKING\nfrom . import tenant\nif TYPE_CHECKING:\n    from ..docgen.describe import x\n"
    ),
    "constructs_lib/runtime/tenant.py": "from constructs_lib.runtime.client import TableClient\n",
    "constructs_lib/docgen/__init__.py": "",
    "constructs_lib/docgen/describe.py": "from ..model import Entity\n",
    "constructs_lib/constructs/__init__.py": "",
    "constructs_lib/constructs/table.py": "import constructs_lib.testing.plugin\n",
    "constructs_lib/testing/__init__.py": "",
    "constructs_lib/testing/plugin.py": "from constructs_lib.constructs import table\n",
}


def test_a_bad_package_is_caught(tmp_path: Path) -> None:
    # GIVEN a package breaking the rules in each way the parser must see: a function-level import,
    # a type-only import, an absolute import, ``from package import submodule``
    _write(tmp_path, BAD_PACKAGE)
    # WHEN building its graph
    graph = import_graph(tmp_path)
    # THEN every forbidden edge is reported
    assert layer_violations(graph) == [
        "constructs_lib.constructs.table -> constructs_lib.testing.plugin (layer constructs may not import layer testing)",
        "constructs_lib.model.entity -> constructs_lib.runtime.client (layer model may not import layer runtime)",
        "constructs_lib.runtime.client -> constructs_lib.docgen.describe (layer runtime may not import layer docgen)",
    ]
    # AND both cycles are found
    assert cycles(import_graph(tmp_path, type_only=False)) == [
        ["constructs_lib.constructs.table", "constructs_lib.testing.plugin"],
        ["constructs_lib.runtime.client", "constructs_lib.runtime.tenant"],
    ]


def test_a_cycle_through_type_only_imports_is_not_an_import_cycle(tmp_path: Path) -> None:
    # GIVEN two modules naming each other's types, one under TYPE_CHECKING
    _write(tmp_path, {
        "constructs_lib/__init__.py": "",
        "constructs_lib/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
        "constructs_lib/b.py": "from .a import A\n",
    })
    # WHEN looking for cycles among the imports that run THEN there is none; with all imports, one
    assert cycles(import_graph(tmp_path, type_only=False)) == []
    assert cycles(import_graph(tmp_path)) == [["constructs_lib.a", "constructs_lib.b"]]


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set(), "c": {"b"}}, []),
    ],
)
def test_cycles_are_found_across_several_modules(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    # GIVEN a small graph WHEN looking for cycles THEN a three-module loop is found, a tree is not
    assert cycles(graph) == expected
