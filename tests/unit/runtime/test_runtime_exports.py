"""The runtime's public surface: each package's exports come from one table (ADR 0047)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGES = [
    "constructs_lib.runtime",
    "constructs_lib.runtime.patterns.audit",
    "constructs_lib.runtime.patterns.backfill",
    "constructs_lib.runtime.patterns.counter",
    "constructs_lib.runtime.stats",
]
RUNTIME = Path(__file__).resolve().parents[3] / "constructs_lib" / "runtime"


def _type_checking_imports(package: str) -> dict[str, str]:
    """name -> module of every ``from .x import name as name`` under ``if TYPE_CHECKING:``."""
    path = Path(importlib.import_module(package).__file__)  # type: ignore[arg-type]
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1, f"{package}: only relative imports"
                for alias in imp.names:
                    assert alias.asname == alias.name, f"{package}: {alias.name} must be re-exported as itself"
                    found[alias.name] = imp.module or ""
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_all_lazy_map_and_type_checking_block_agree(package: str) -> None:
    # GIVEN a runtime package and its one table of exports
    module = importlib.import_module(package)
    # WHEN reading __all__ and the TYPE_CHECKING re-exports
    typed = _type_checking_imports(package)
    # THEN all three name the same names, each from the same submodule
    assert sorted(module.__all__) == sorted(module.EXPORTS)
    assert typed == module.EXPORTS
    # AND every name resolves lazily to an object its submodule defines
    for name, sub in module.EXPORTS.items():
        assert getattr(module, name) is getattr(importlib.import_module(f"{package}.{sub}"), name)
    # AND an unknown name is an AttributeError naming the package
    with pytest.raises(AttributeError, match=package.replace(".", r"\.")):
        module.NoSuchName  # noqa: B018


def test_every_runtime_package_with_exports_is_checked() -> None:
    # GIVEN every package __init__ of the runtime that defines __all__
    with_all = {
        ".".join(("constructs_lib", "runtime", *p.parent.relative_to(RUNTIME).parts))
        for p in RUNTIME.rglob("__init__.py") if "__all__" in p.read_text()
    }
    # THEN each is one of the packages checked above
    assert with_all == set(PACKAGES)


def test_runtime_exports_at_most_30_names() -> None:
    # GIVEN the runtime package / THEN it exports what a handler uses: at most 30 names
    import constructs_lib.runtime as runtime

    assert len(runtime.__all__) <= 30, sorted(runtime.__all__)
    # AND the clients, the builders and the base error are among them
    assert {"TableClient", "Transaction", "Page", "CounterClient", "AuditClient", "attr", "Name", "Condition",
            "RuntimeClientError"} <= set(runtime.__all__)
