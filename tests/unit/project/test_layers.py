"""The package's layers and the absence of import cycles, read from the source with ``ast``.

Layers, bottom to top: ``model`` imports nothing else of the package; ``runtime`` imports only
``model``; ``capacity``, ``evolution``, ``codegen`` and ``assets`` (asset building) only ``model``
and ``runtime``; ``docgen`` those and ``capacity`` (describe's capacity tables and cost warnings);
``constructs`` anything but ``codegen`` and ``testing``; ``testing`` anything. Every
``import`` counts, wherever it sits: module level, inside functions, under ``TYPE_CHECKING``; and no
module may reach itself through them (a type named across a cycle is declared in the lower module,
e.g. as a ``Protocol``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

PACKAGE = "constructs_lib"
ROOT = Path(__file__).resolve().parents[3]

#: Layer -> the layers its modules may import (their own included).
ALLOWED = {
    "model": {"model"},
    "runtime": {"model", "runtime"},
    # describe prices its capacity tables and cost warnings with capacity
    "docgen": {"model", "runtime", "capacity", "docgen"},
    "evolution": {"model", "runtime", "evolution"},
    "codegen": {"model", "runtime", "codegen"},
    # capacity units per call, predicted from the model: reads model and runtime; no CDK
    "capacity": {"model", "runtime", "capacity"},
    # building Lambda assets: reads the model (model.json) and ships runtime modules; no CDK
    "assets": {"model", "runtime", "assets"},
    "constructs": {"model", "runtime", "docgen", "evolution", "capacity", "assets", "constructs"},
    "testing": {"model", "runtime", "docgen", "evolution", "codegen", "capacity", "assets", "constructs", "testing",
                "root"},
    # constructs_lib/__init__.py (lazy exports) and __main__.py (the command line)
    "root": {"model", "runtime", "docgen", "evolution", "codegen", "capacity", "constructs", "root"},
}


def modules(root: Path, package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``) for every module under ``package``."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_graph(root: Path, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (resolved to the deepest existing module),
    wherever the import sits."""
    found = modules(root, package)

    def existing(name: str) -> str:
        while name not in found and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in found.items():
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
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
    # GIVEN every import of the package, type-only and function-level ones included
    # WHEN looking for modules that reach themselves THEN there are none
    assert cycles(import_graph(ROOT)) == []


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
    # a type-only import reaching up, beside an import of a sibling...
    "constructs_lib/runtime/client.py": (
        "from typing import TYPE_CHECKING\nfrom . import tenant\nif TYPE_CHECKING:\n    from ..docgen.describe import x\n"
    ),
    # ... closing a cycle through a type-only import
    "constructs_lib/runtime/tenant.py": (
        "import typing\nif typing.TYPE_CHECKING:\n    from constructs_lib.runtime.client import TableClient\n"
    ),
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
    # AND both cycles are found, the one closed by a type-only import too
    assert cycles(import_graph(tmp_path)) == [
        ["constructs_lib.constructs.table", "constructs_lib.testing.plugin"],
        ["constructs_lib.runtime.client", "constructs_lib.runtime.tenant"],
    ]


def test_a_cycle_through_type_only_or_function_level_imports_is_a_cycle(tmp_path: Path) -> None:
    # GIVEN modules that name each other's types under TYPE_CHECKING, or import each other inside
    # a function (the ways a cycle is usually hidden rather than broken)
    _write(tmp_path, {
        "constructs_lib/__init__.py": "",
        "constructs_lib/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
        "constructs_lib/b.py": "from .a import A\n",
        "constructs_lib/c.py": "def f():\n    from . import d\n",
        "constructs_lib/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n",
        "constructs_lib/e.py": "from .a import A\n",
    })
    # WHEN looking for cycles THEN both are found, and the module that only imports one side is not in them
    assert cycles(import_graph(tmp_path)) == [
        ["constructs_lib.a", "constructs_lib.b"],
        ["constructs_lib.c", "constructs_lib.d"],
    ]


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
