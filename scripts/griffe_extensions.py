"""Griffe extensions for the API reference: mkdocs.yml has mkdocstrings' Python handler load them,
and tests/unit/project/test_api_reference.py loads the package with them as the docs build does.

- :class:`LazyExports`: a package whose ``__all__`` is computed from its lazy map (``_LAZY`` or
  ``EXPORTS``, read by ``__getattr__``) has an ``__all__`` griffe cannot read, so griffe saw no
  public name in it. Its ``__all__`` is read from the imported package instead (cheap: the names
  stay lazy, no AWS CDK, no boto3); they resolve through the ``TYPE_CHECKING`` imports.
- :class:`TupleAssignments`: module constants bound together (``READ, WRITE = "read", "write"``)
  and instance attributes set together in ``__init__`` (``self.a, b = ...``), which griffe skips,
  become attributes.
- :class:`PytestFixtures`: a ``@pytest.fixture`` function is labelled a fixture with its scope,
  and its docstring opens with the scope, what the test gets and the fixtures it requests.
- :class:`SphinxRoles`: ``:class:`~a.b.C``` and the other roles some docstrings use become
  cross-references (plain code where the name is not in the reference).

The reasons: docs/adr/0111-an-api-reference-by-group.md.
"""

from __future__ import annotations

import ast
import html
import importlib
import re
from typing import Any

import griffe


def _all_is_literal(module: ast.Module) -> bool:
    """Whether every assignment to ``__all__`` in ``module`` is a list or tuple of strings (what
    griffe reads); True when there is none."""
    for node in module.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if "__all__" not in {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}:
            continue
        value = node.value
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or not isinstance(value, ast.List | ast.Tuple):
            return False
        if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
            return False
    return True


class LazyExports(griffe.Extension):
    """``__all__`` of a package that computes it, read from the imported package."""

    def on_module_members(self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, **kwargs: Any) -> None:
        if isinstance(node, ast.Module) and not _all_is_literal(node):
            mod.exports = list(importlib.import_module(mod.path).__all__)


class TupleAssignments(griffe.Extension):
    """``A, B = x, y`` at module level binds attributes ``A = x`` and ``B = y``; ``self.a, b = ...``
    in a class's ``__init__`` binds the instance attribute ``a``."""

    def on_class_members(self, *, node: ast.AST | griffe.ObjectNode, cls: griffe.Class, **kwargs: Any) -> None:
        if not isinstance(node, ast.ClassDef):
            return
        for init in (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"):
            for stmt in ast.walk(init):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else []
                for target in (e for t in targets if isinstance(t, ast.Tuple) for e in t.elts):
                    if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == "self" and target.attr not in cls.members):
                        attribute = griffe.Attribute(target.attr, lineno=stmt.lineno, endlineno=stmt.end_lineno)
                        attribute.labels.add("instance-attribute")
                        cls.set_member(target.attr, attribute)

    def on_module_members(self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, **kwargs: Any) -> None:
        if not isinstance(node, ast.Module):
            return
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)):
                continue
            names = stmt.targets[0].elts
            values: list[ast.expr | None] = [None] * len(names)
            if isinstance(stmt.value, ast.Tuple) and len(stmt.value.elts) == len(names):
                values = list(stmt.value.elts)
            for target, value in zip(names, values, strict=True):
                if isinstance(target, ast.Name) and target.id not in mod.members:
                    attribute = griffe.Attribute(target.id, value=ast.unparse(value) if value else None,
                                                 lineno=stmt.lineno, endlineno=stmt.end_lineno)
                    attribute.labels.add("module-attribute")
                    mod.set_member(target.id, attribute)


def fixture_scope(node: ast.AST) -> str | None:
    """The scope of a ``@pytest.fixture`` function (``"function"`` unless given); None: no fixture."""
    for decorator in getattr(node, "decorator_list", ()):
        call = decorator if isinstance(decorator, ast.Call) else None
        if ast.unparse(call.func if call else decorator) not in {"pytest.fixture", "fixture"}:
            continue
        scope = next((k.value for k in call.keywords if k.arg == "scope"), None) if call else None
        return str(scope.value) if isinstance(scope, ast.Constant) else "function"
    return None


_ITERATORS = {"Iterator", "Generator", "Iterable", "AsyncIterator", "AsyncGenerator"}


def fixture_value(annotation: ast.expr | None) -> str | None:
    """What a test gets from a fixture annotated to return ``annotation`` (None: not told)."""
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).split(".")[-1] in _ITERATORS:
        inner = annotation.slice
        annotation = inner.elts[0] if isinstance(inner, ast.Tuple) else inner
    if annotation is None or ast.unparse(annotation) in {"Any", "typing.Any"}:
        return None
    if (isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).split(".")[-1] == "Callable"
            and isinstance(annotation.slice, ast.Tuple) and len(annotation.slice.elts) == 2):
        return f"a factory returning `{ast.unparse(annotation.slice.elts[1])}`"
    return f"`{ast.unparse(annotation)}`"


class PytestFixtures(griffe.Extension):
    """A fixture's entry says it is one: labels ``pytest fixture`` and ``<scope> scope``, and a
    first line with its scope, what the test gets and the fixtures it requests."""

    def on_function_instance(self, *, node: ast.AST | griffe.ObjectNode, func: griffe.Function, **kwargs: Any) -> None:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or (scope := fixture_scope(node)) is None:
            return
        func.labels |= {"pytest fixture", f"{scope} scope"}
        facts = [f"**pytest fixture**, scope `{scope}`"]
        if (value := fixture_value(node.returns)) is not None:
            facts.append(f"gives {value}")
        if requests := [a.arg for a in node.args.args if a.arg != "request"]:
            facts.append("requests " + ", ".join(f"`{name}`" for name in requests))
        lead = "; ".join(facts) + "."
        if func.docstring is None:
            func.docstring = griffe.Docstring(lead, parent=func)
        else:
            func.docstring.value = f"{lead}\n\n{func.docstring.value}"


_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|exc|data|obj|const):`(~?)([\w.]+)(\(\))?`")


def _identifier(obj: griffe.Object | griffe.Alias, target: str) -> str:
    """The full path ``target`` names in the scope of ``obj``'s docstring (as written if unknown)."""
    if target.startswith("."):
        module = obj if obj.is_module else obj.module
        base = module.path if module.is_init_module else module.path.rpartition(".")[0]
        dots = len(target) - len(target.lstrip("."))
        return ".".join([base.rsplit(".", dots - 1)[0] if dots > 1 else base, target.lstrip(".")])
    head, _, rest = target.partition(".")
    scope = obj if obj.is_module or obj.is_class else obj.parent
    while scope is not None:
        try:
            found = scope.resolve(head)
        except griffe.NameResolutionError:
            scope = scope.parent
            continue
        return ".".join([found, rest]) if rest else found
    return target


def roles_to_references(obj: griffe.Object | griffe.Alias, text: str) -> str:
    """``text`` with each Sphinx role made an optional cross-reference (plain code when unresolved)."""

    def reference(match: re.Match[str]) -> str:
        short, target, call = match.groups()
        title = (target.rsplit(".", 1)[-1] if short else target) + (call or "")
        identifier = html.escape(_identifier(obj, target), quote=True)
        return f'<autoref identifier="{identifier}" optional><code>{html.escape(title)}</code></autoref>'

    return _ROLE.sub(reference, text)


class SphinxRoles(griffe.Extension):
    """Sphinx roles in docstrings rendered as cross-references, ``::`` before a code block as ``:``."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        objects: list[griffe.Object] = [pkg]
        while objects:
            obj = objects.pop()
            objects += [m for m in obj.members.values() if not m.is_alias]
            if obj.docstring is not None:
                text = roles_to_references(obj, obj.docstring.value)
                obj.docstring.value = re.sub(r"(\S) ?::\n", r"\1:\n", text)
