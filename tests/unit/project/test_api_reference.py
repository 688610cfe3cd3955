"""The API reference shows the API (docs/adr/0111-an-api-reference-by-group.md).

griffe loads the package with the paths, extensions and docstring style ``mkdocs.yml`` gives
mkdocstrings, and the ``:::`` directives of ``docs/reference/`` are read as mkdocstrings renders
them: a name has an entry when a page of the nav renders its object. Every name of each covered
package's ``__all__`` (the pytest plugin's fixtures included) must have one; ``make docs``
(``mkdocs build --strict``) then renders them. About two seconds: nothing is built.
"""

from __future__ import annotations

import ast
import importlib
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import griffe
import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs"
REFERENCE = DOCS / "reference"
MKDOCS = REPO / "mkdocs.yml"

#: The packages the reference covers: every name of their ``__all__`` has an entry.
COVERED = (
    "constructs_lib",
    "constructs_lib.runtime",
    "constructs_lib.runtime.stats",
    "constructs_lib.model",
    "constructs_lib.capacity",
    "constructs_lib.testing",
    "constructs_lib.testing.plugin",
    "constructs_lib.testing.localstack",
    "constructs_lib.codegen",
    "constructs_lib.constructs.operations",
)
#: Packages with an ``__all__`` the reference leaves out, and why.
INTERNAL = {
    "constructs_lib.runtime.patterns.audit": "the audit pattern's building blocks (spec, keys, wire form) used by the "
    "construct and its handler; AuditClient and its results are exported by constructs_lib.runtime",
    "constructs_lib.runtime.patterns.counter": "the counter pattern's building blocks (spec, sizing) used by the "
    "construct and its aggregator; CounterClient and its results are exported by constructs_lib.runtime",
    "constructs_lib.runtime.patterns.backfill": "the backfill worker shipped with the Backfill construct's function",
}
PLUGIN = REPO / "constructs_lib" / "testing" / "plugin.py"


def python_all(package: str) -> list[str]:
    """The package's ``__all__``: its literal list when it has one (so the AWS CDK is not imported
    for ``constructs_lib.constructs.operations``), else the imported package's (cheap: they export
    lazily)."""
    base = REPO.joinpath(*package.split("."))
    source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.List | ast.Tuple)
                and [ast.unparse(t) for t in (node.targets if isinstance(node, ast.Assign) else [node.target])] == ["__all__"]
                and all(isinstance(e, ast.Constant) for e in node.value.elts)):
            return list(ast.literal_eval(node.value))
    return list(importlib.import_module(package).__all__)


# Reading what the docs build reads -----------------------------------------------------------------
def mkdocs_config() -> dict[str, Any]:
    return yaml.safe_load(MKDOCS.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def python_handler(config: dict[str, Any]) -> dict[str, Any]:
    """mkdocstrings' Python handler configuration (``paths``, ``options``)."""
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            return plugin["mkdocstrings"]["handlers"]["python"]  # type: ignore[no-any-return]
    raise AssertionError("mkdocs.yml configures no mkdocstrings plugin")


def load_api(handler: dict[str, Any], root: Path = REPO, package: str = "constructs_lib") -> griffe.GriffeLoader:
    """``package`` as mkdocstrings loads it: its search paths and extensions (relative to ``root``, the
    directory of mkdocs.yml, as mkdocstrings resolves them) and its docstring style."""
    options = handler.get("options", {})
    extensions = []
    for extension in options.get("extensions", []):
        path, sep, name = str(extension).partition(":")
        extensions.append(f"{root / path}{sep}{name}" if path.endswith(".py") else extension)
    loader = griffe.GriffeLoader(
        search_paths=[str(root / p) for p in handler.get("paths", ["."])],
        extensions=griffe.load_extensions(*extensions),
        docstring_parser=griffe.Parser(options.get("docstring_style", "google")),
    )
    loader.load(package)
    return loader


def nav_pages(nav: Any) -> Iterator[str]:
    """The pages of an mkdocs nav, depth first."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from nav_pages(value)


@dataclass(frozen=True)
class Directive:
    page: str
    identifier: str
    options: dict[str, Any] = field(default_factory=dict)


DIRECTIVE = re.compile(r"^::: ([\w.]+)[ \t]*\n((?:(?:    .*)?\n)*)", flags=re.MULTILINE)


def directives(docs: Path, pages: list[str]) -> list[Directive]:
    """The ``:::`` directives of ``pages`` (paths relative to ``docs``), with their options."""
    found = []
    for page in pages:
        for match in DIRECTIVE.finditer((docs / page).read_text(encoding="utf-8")):
            block = yaml.safe_load(textwrap.dedent(match.group(2))) if match.group(2).strip() else None
            found.append(Directive(page, match.group(1), (block or {}).get("options") or {}))
    return found


def _target(obj: griffe.Object | griffe.Alias) -> griffe.Object:
    return obj.final_target if obj.is_alias else obj  # type: ignore[return-value]


def _kept(name: str, filters: list[str] | str) -> bool:
    """mkdocstrings' ``filters``: the last matching pattern decides, ``!`` rejects; with no match, a
    name is kept unless every pattern includes."""
    if filters == "public":
        return True
    keep = None
    for pattern in filters:
        if re.search(pattern.removeprefix("!"), name):
            keep = not pattern.startswith("!")
    return keep if keep is not None else {p.startswith("!") for p in filters} != {False}


def rendered(loader: griffe.GriffeLoader, directive: Directive, defaults: dict[str, Any]) -> Iterator[str]:
    """Canonical paths of the objects a directive renders an entry for, as mkdocstrings selects
    them: the object itself; then, for a module, the members of an explicit ``members`` list, else
    the public ones its ``filters`` keep that have a docstring (unless ``show_if_no_docstring``);
    submodules with ``show_submodules``."""
    options = {**defaults, **directive.options}
    obj = _target(loader.modules_collection[directive.identifier])
    yield obj.path
    explicit = options.get("members")
    if not obj.is_module or explicit is False or explicit == []:
        return
    for name, member in obj.members.items():
        if isinstance(explicit, list) and name not in explicit:
            continue
        if not isinstance(explicit, list) and not (_kept(name, options.get("filters", [])) and member.is_public):
            continue
        try:
            target = _target(member)
        except griffe.AliasResolutionError:
            continue
        if not isinstance(explicit, list) and not options.get("show_if_no_docstring") and not target.has_docstrings:
            continue
        if target.is_module:
            if options.get("show_submodules") and not member.is_alias:
                yield from rendered(loader, Directive(directive.page, member.path, directive.options), defaults)
            continue
        yield target.path


def entries(loader: griffe.GriffeLoader, found: list[Directive], defaults: dict[str, Any]) -> dict[str, str]:
    """Canonical path -> the page of its first entry."""
    pages: dict[str, str] = {}
    for directive in found:
        for path in rendered(loader, directive, defaults):
            pages.setdefault(path, directive.page)
    return pages


def missing_entries(loader: griffe.GriffeLoader, package: str, exported: list[str], documented: dict[str, str]) -> list[str]:
    """``package.name`` for each exported name griffe cannot resolve or no page renders."""
    missing = []
    module = loader.modules_collection[package]
    for name in exported:
        try:
            path = _target(module.members[name]).path
        except (KeyError, griffe.AliasResolutionError):
            missing.append(f"{package}.{name} (griffe cannot resolve it)")
            continue
        if path not in documented:
            missing.append(f"{package}.{name}")
    return missing


# The reference as it is ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site() -> tuple[griffe.GriffeLoader, dict[str, str], list[Directive], dict[str, Any]]:
    config = mkdocs_config()
    handler = python_handler(config)
    loader = load_api(handler)
    pages = [p for p in nav_pages(config["nav"]) if p.startswith("reference/")]
    found = directives(DOCS, pages)
    defaults = handler.get("options", {})
    return loader, entries(loader, found, defaults), found, defaults


@pytest.mark.parametrize("package", COVERED)
def test_griffe_reads_each_package_all_as_python_does(site: Any, package: str) -> None:
    # GIVEN the package loaded as the docs build loads it, and the package imported
    loader, *_ = site
    # WHEN their __all__ are compared (constructs_lib, runtime, runtime.stats and testing compute
    # theirs from their lazy maps)
    exports = loader.modules_collection[package].exports
    # THEN griffe has the same names, so it takes each for public
    assert exports is not None and list(exports) == python_all(package)


@pytest.mark.parametrize("package", COVERED)
def test_every_exported_name_has_an_entry(site: Any, package: str) -> None:
    # GIVEN the entries the reference pages of the nav render
    loader, documented, *_ = site
    # WHEN each name of the package's __all__ is looked up (a re-exported object once: the
    # entry of constructs_lib.model.AccessScope serves constructs_lib.AccessScope)
    missing = missing_entries(loader, package, python_all(package), documented)
    # THEN every one has an entry
    assert missing == [], f"no entry in docs/reference/ (add it to the page of its group): {missing}"


def test_every_fixture_of_the_plugin_has_an_entry_as_a_fixture(site: Any) -> None:
    # GIVEN the plugin's fixtures, read from its source, and the reference
    loader, documented, *_ = site
    tree = ast.parse(PLUGIN.read_text(encoding="utf-8"))
    fixtures = {node.name: scope for node in tree.body if isinstance(node, ast.FunctionDef)
                and (scope := _fixture_scope(node)) is not None}
    assert "dynamodb_local" in fixtures and fixtures["dynamodb_local"] == "session"
    # WHEN each is looked up THEN it has an entry, labelled a fixture with its scope
    plugin = loader.modules_collection["constructs_lib.testing.plugin"]
    assert sorted(name for name in fixtures if plugin[name].path not in documented) == []
    assert {name: plugin[name].labels for name in fixtures} == {
        name: {"pytest fixture", f"{scope} scope"} for name, scope in fixtures.items()}


def _fixture_scope(node: ast.FunctionDef) -> str | None:
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        if ast.unparse(call.func if call else decorator) == "pytest.fixture":
            scope = next((k.value for k in call.keywords if k.arg == "scope"), None) if call else None
            return str(scope.value) if isinstance(scope, ast.Constant) else "function"
    return None


def test_every_entry_resolves(site: Any) -> None:
    # GIVEN every directive of the reference pages
    loader, _, found, _ = site
    # WHEN griffe looks up what each names
    unresolved = []
    for directive in found:
        try:
            _target(loader.modules_collection[directive.identifier])
        except (KeyError, griffe.AliasResolutionError):
            unresolved.append(f"{directive.page}: {directive.identifier}")
    # THEN each is an object of the package (mkdocs --strict would fail on the others)
    assert unresolved == []


def test_each_overview_lists_what_its_group_pages_hold(site: Any) -> None:
    # GIVEN the overview page of each package with group pages, and the pages it links
    _, _, found, _ = site
    by_page: dict[str, list[str]] = {}
    for directive in found:
        by_page.setdefault(directive.page, []).append(directive.identifier)
    overviews = sorted(p for p in REFERENCE.glob("*/index.md"))
    assert len(overviews) >= 5
    for overview in overviews:
        text = overview.read_text(encoding="utf-8")
        rows = re.findall(r"^\| \[[^\]]+\]\(([\w-]+\.md)\) \| (.*) \|$", text, flags=re.MULTILINE)
        # WHEN the names of each row are compared with the entries of the page it links
        for page, names in rows:
            listed = re.findall(r"\]\[([\w.]+)\]", names)
            # THEN they are the same, in the same order
            assert listed == by_page[f"reference/{overview.parent.name}/{page}"], (overview.name, page)
        # AND every group page of the package is in the table
        linked = {page for page, _ in rows}
        assert linked == {p.name for p in overview.parent.glob("*.md")} - {"index.md"}, overview


def test_every_package_with_an_all_is_covered_or_named_internal() -> None:
    # GIVEN every package of the library whose __all__ is not empty
    packages = set()
    for init in sorted((REPO / "constructs_lib").rglob("__init__.py")):
        name = ".".join(init.parent.relative_to(REPO).parts)
        if python_all(name) if "__all__" in init.read_text(encoding="utf-8") else False:
            packages.add(name)
    # THEN the reference covers it, or it is named internal with the reason
    assert packages - {"constructs_lib.testing.plugin"} <= set(COVERED) | set(INTERNAL)
    assert packages >= (set(COVERED) - {"constructs_lib.testing.plugin"}) | set(INTERNAL)


# The checks can fail -----------------------------------------------------------------------------------
LAZY_INIT = '''"""A package exporting lazily."""
from typing import TYPE_CHECKING

_LAZY = {"Thing": "lazypkg.things", "helper": "lazypkg.things", "ALPHA": "lazypkg.things", "BETA": "lazypkg.things"}
__all__ = list(_LAZY)

if TYPE_CHECKING:
    from .things import ALPHA as ALPHA
    from .things import BETA as BETA
    from .things import Thing as Thing
    from .things import helper as helper


def __getattr__(name):
    import importlib
    return getattr(importlib.import_module(_LAZY[name]), name)
'''
THINGS = '''"""Things."""
from collections.abc import Iterator

import pytest

ALPHA, BETA = "a", "b"


class Thing:
    """A thing; see :func:`helper` and :class:`~lazypkg.things.Thing`::

        Thing()
    """


def helper():
    """Help."""


@pytest.fixture(scope="module")
def a_fixture(tmp_path_factory) -> Iterator[Thing]:
    """A thing per module."""
'''


@pytest.fixture
def lazy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "lazypkg").mkdir()
    (tmp_path / "lazypkg" / "__init__.py").write_text(LAZY_INIT, encoding="utf-8")
    (tmp_path / "lazypkg" / "things.py").write_text(THINGS, encoding="utf-8")
    (tmp_path / "docs").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "lazypkg", raising=False)
    return tmp_path


def test_without_the_extensions_a_lazy_package_shows_nothing(lazy_package: Path) -> None:
    # GIVEN a package whose __all__ is computed from its lazy map, documented by one directive
    (lazy_package / "docs" / "lazypkg.md").write_text("# lazypkg\n\n::: lazypkg\n", encoding="utf-8")
    # WHEN it is loaded with no extension (mkdocs.yml before) and its entries are read
    loader = load_api({"paths": [str(lazy_package)], "options": {"filters": ["!^_"]}}, package="lazypkg")
    found = directives(lazy_package / "docs", ["lazypkg.md"])
    documented = entries(loader, found, {"filters": ["!^_"]})
    # THEN griffe has no __all__ it can use, and every name misses its entry
    assert loader.modules_collection["lazypkg"].exports == []
    assert missing_entries(loader, "lazypkg", ["ALPHA", "BETA", "Thing", "helper"], documented) == [
        "lazypkg.ALPHA (griffe cannot resolve it)", "lazypkg.BETA (griffe cannot resolve it)", "lazypkg.Thing", "lazypkg.helper"]


def test_with_the_extensions_every_name_of_a_lazy_package_has_an_entry(lazy_package: Path) -> None:
    # GIVEN the same package, documented by the package directive (which, as mkdocstrings does,
    # leaves out the members without a docstring) and one directive per constant
    (lazy_package / "docs" / "lazypkg.md").write_text("# lazypkg\n\n::: lazypkg\n", encoding="utf-8")
    (lazy_package / "docs" / "constants.md").write_text("::: lazypkg.ALPHA\n\n::: lazypkg.BETA\n", encoding="utf-8")
    handler = python_handler(mkdocs_config())
    # WHEN it is loaded with the docs build's extensions
    loader = load_api({"paths": [str(lazy_package)], "options": handler["options"]}, package="lazypkg")
    package_page = entries(loader, directives(lazy_package / "docs", ["lazypkg.md"]), handler["options"])
    both = entries(loader, directives(lazy_package / "docs", ["lazypkg.md", "constants.md"]), handler["options"])
    # THEN griffe reads __all__ from the package, the package page has an entry for each documented
    # name, the constants (bound together) have theirs on their page, the fixture is labelled with
    # its scope and the roles are cross-references
    assert loader.modules_collection["lazypkg"].exports == ["Thing", "helper", "ALPHA", "BETA"]
    assert missing_entries(loader, "lazypkg", ["ALPHA", "BETA", "Thing", "helper"], package_page) == [
        "lazypkg.ALPHA", "lazypkg.BETA"]
    assert missing_entries(loader, "lazypkg", ["ALPHA", "BETA", "Thing", "helper"], both) == []
    assert loader.modules_collection["lazypkg.things.BETA"].value == "'b'"
    fixture = loader.modules_collection["lazypkg.things.a_fixture"]
    assert fixture.labels == {"pytest fixture", "module scope"}
    assert fixture.docstring is not None and fixture.docstring.value.startswith(
        "**pytest fixture**, scope `module`; gives `Thing`; requests `tmp_path_factory`.")
    thing = loader.modules_collection["lazypkg.things.Thing"].docstring
    assert thing is not None and thing.value.splitlines()[0] == (
        'A thing; see <autoref identifier="lazypkg.things.helper" optional><code>helper</code></autoref> and '
        '<autoref identifier="lazypkg.things.Thing" optional><code>Thing</code></autoref>:')


def test_a_name_on_a_page_outside_the_nav_or_filtered_out_has_no_entry(lazy_package: Path) -> None:
    # GIVEN entries for two names, one of them on a page left out of the nav, and a members list
    docs = lazy_package / "docs"
    (docs / "in.md").write_text("::: lazypkg.Thing\n\n::: lazypkg.things\n    options:\n      members: [helper]\n",
                                encoding="utf-8")
    (docs / "out.md").write_text("::: lazypkg.ALPHA\n", encoding="utf-8")
    handler = python_handler(mkdocs_config())
    loader = load_api({"paths": [str(lazy_package)], "options": handler["options"]}, package="lazypkg")
    # WHEN only the nav's page is read THEN the name of the other page misses its entry
    documented = entries(loader, directives(docs, ["in.md"]), handler["options"])
    missing = missing_entries(loader, "lazypkg", ["ALPHA", "BETA", "Thing", "helper"], documented)
    assert missing == ["lazypkg.ALPHA", "lazypkg.BETA"]
