"""Bytecode for Lambda assets, compiled by an interpreter of the function's Python version.

Lambda's ``/var/task`` is read-only, so a module shipped without a ``.pyc`` is compiled again at
every cold start. When an interpreter of the runtime's ``MAJOR.MINOR`` is found (the synth
interpreter, ``python3.X`` on ``PATH``, or a pyenv version) the bundled modules are compiled with
it into ``__pycache__/<name>.cpython-3X.pyc`` next to their sources, which stay for tracebacks.
The pycs are *unchecked-hash* pycs (PEP 552): no timestamp, so two synths of the same sources
give the same bytes and the same asset hash. Without such an interpreter the asset ships source
only, and one line on stderr says so (once per process and version).
"""

from __future__ import annotations

import base64
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from .analysis_cache import cached
from .exceptions import AssetError

__all__ = [
    "Compiler", "ImportStatement", "ModuleFacts", "compiler_for", "import_closure", "import_path", "module_facts",
    "pyc_path",
]

#: Set to ``0`` to ship source-only assets whatever interpreters exist.
ENV_DISABLE = "CONSTRUCTS_LIB_BYTECODE"
#: Compile without column positions (PEP 657): a quarter smaller pycs; tracebacks keep file and line.
EXTRA_FLAGS: list[str] = ["-X", "no_debug_ranges"]

#: The script the target interpreter runs: JSON {path: source} on stdin → JSON {path: base64 pyc} on stdout.
WORKER = Path(__file__).with_name("pyc_worker.py")


@cache
def worker_digest() -> bytes:
    """SHA-256 of the worker's code: a staged asset's pycs depend on how it compiles them."""
    return hashlib.sha256(WORKER.read_bytes()).digest()


class Compiler:
    """Compiles module sources into unchecked-hash pycs with one interpreter."""

    def __init__(self, executable: str, version: str, full_version: str) -> None:
        #: Path of the interpreter.
        self.executable = executable
        #: ``MAJOR.MINOR`` it runs.
        self.version = version
        #: Its full version (``3.13.0``): pycs may differ between patch releases.
        self.full_version = full_version
        self._cache: dict[tuple[str, str], bytes] = {}

    @property
    def tag(self) -> str:
        """The cache tag of its pyc names (``cpython-313``)."""
        return "cpython-" + self.version.replace(".", "")

    def compile(self, sources: dict[str, bytes], *, what: str) -> dict[str, bytes]:
        """``{asset path of the .py: pyc bytes}`` for every source (cached by path and content)."""
        todo = {p: s.decode("utf-8") for p, s in sources.items() if (p, s.decode("utf-8")) not in self._cache}
        if todo:
            proc = subprocess.run(
                [self.executable, "-I", "-S", *EXTRA_FLAGS, str(WORKER)], input=json.dumps(todo), capture_output=True,
                text=True, check=False,
            )
            if proc.returncode != 0:
                raise AssetError(
                    f"{what}: compiling the asset's modules with {self.executable} (Python {self.version}) failed: "
                    f"{proc.stderr.strip()[-500:]}"
                )
            answer = json.loads(proc.stdout)
            if answer["errors"]:
                path, error = min(answer["errors"].items())
                raise AssetError(
                    f"{what}: {path} does not compile for the function's Python {self.version} ({error}); the "
                    "function would fail to import it"
                )
            for path, pyc in answer["pycs"].items():
                self._cache[(path, todo[path])] = base64.b64decode(pyc)
        return {p: self._cache[(p, s.decode("utf-8"))] for p, s in sources.items()}


def pyc_path(source_path: str, tag: str) -> str:
    """``pkg/mod.py`` → ``pkg/__pycache__/mod.<tag>.pyc``."""
    head, _, name = source_path.rpartition("/")
    return f"{head + '/' if head else ''}__pycache__/{name.removesuffix('.py')}.{tag}.pyc"


def _probe(executable: str) -> tuple[str, str] | None:
    """(``MAJOR.MINOR``, full version) the interpreter runs, or None if it does not run."""
    try:
        proc = subprocess.run(
            [executable, "-I", "-S", str(WORKER), "--version"],
            capture_output=True, text=True, timeout=30, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    parts = proc.stdout.split()
    return (parts[0], parts[1]) if proc.returncode == 0 and len(parts) == 2 else None


def _pyenv_root() -> Path | None:
    """``$PYENV_ROOT``, else ``~/.pyenv``, else what ``pyenv root`` answers (a subprocess: last)."""
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    home = Path.home() / ".pyenv"
    if home.is_dir():
        return home
    pyenv = shutil.which("pyenv")
    if pyenv:
        try:
            proc = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30, check=False)
            if proc.returncode == 0 and proc.stdout.strip():
                return Path(proc.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    return None


def candidates(version: str) -> list[str]:
    """Interpreters that may run Python ``version``, in the order they are tried."""
    found = []
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version and sys.executable:
        found.append(sys.executable)
    on_path = shutil.which(f"python{version}")
    if on_path and Path(on_path).parent.name != "shims":  # a pyenv shim runs only the selected versions:
        found.append(on_path)  # the versions themselves are tried below
    root = _pyenv_root()
    if root is not None:
        # Newest patch release first (3.13.10 after 3.13.9: compare numerically).
        def patch(path: str) -> tuple[int, ...]:
            name = Path(path).parents[1].name.removeprefix(version + ".")
            return tuple(int(p) for p in name.split(".") if p.isdigit())

        found += sorted(glob.glob(str(root / "versions" / f"{version}.*" / "bin" / f"python{version}")),
                        key=patch, reverse=True)
    return list(dict.fromkeys(found))


@cache
def compiler_for(version: str) -> Compiler | None:
    """A compiler running Python ``version`` (``"3.13"``), or None — then one line on stderr says
    the assets of that version ship source only (once per process and version)."""
    if os.environ.get(ENV_DISABLE) == "0":
        return None
    for executable in candidates(version):
        probed = _probe(executable)
        if probed is not None and probed[0] == version:
            return Compiler(executable, version, probed[1])
    sys.stderr.write(
        f"constructs_lib: no Python {version} interpreter found (synth interpreter, python{version} on PATH, "
        f"pyenv): Lambda assets for the python{version} runtime ship source only, compiled at each cold start\n"
    )
    return None


class ImportStatement(NamedTuple):
    """One ``import`` or ``from … import`` statement, as the import graph reads it."""

    #: ``from … import`` (else ``import``).
    is_from: bool
    #: The module after ``from`` (None in ``from . import x``); None for ``import``.
    module: str | None
    #: Leading dots of a relative ``from`` import; 0 otherwise.
    level: int
    #: The imported names (``import a.b`` → ``"a.b"``; ``from m import x`` → ``"x"``).
    names: tuple[str, ...]
    #: Under ``if TYPE_CHECKING:``.
    typing_only: bool


class MovedName(NamedTuple):
    """A name a module answered for before it moved (an entry of ``runtime/_deprecated.py``'s
    ``TABLES``): using it loads ``attribute`` from the module it names."""

    #: The package or module the name was imported from.
    owner: str
    #: The old name.
    name: str
    #: The module the name went to, after its leading dots (None: the owner's package itself).
    module: str | None
    #: Leading dots of ``module`` (0: absolute), relative to the owner's package.
    level: int
    #: The first part of its name there (``ShardedCounter`` of ``ShardedCounter.ENTITIES``).
    attribute: str


class ModuleFacts(NamedTuple):
    """What the import graph needs of one module, from one parse of its source."""

    #: Statements run when the module is imported (module level, also in ``if``/``try``/``with``).
    imports: tuple[ImportStatement, ...]
    #: Every statement, also inside functions, classes and loops (run at some call).
    imports_at_call: tuple[ImportStatement, ...]
    #: Every string literal (``importlib.import_module("…")`` and the like).
    strings: frozenset[str]
    #: The moved names it lists (a module-level ``TABLES = {owner: {name: (module, attribute, ...)}}``).
    moved: tuple[MovedName, ...] = ()


def _is_type_checking(node: Any) -> bool:
    import ast

    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _statements(body: list[Any], *, typing_only: bool, at_call: bool) -> list[ImportStatement]:
    """The import statements of ``body`` with whether each sits under ``if TYPE_CHECKING:``."""
    import ast

    out: list[ImportStatement] = []
    for node in body:
        if isinstance(node, ast.If):
            out += _statements(node.body, typing_only=typing_only or _is_type_checking(node), at_call=at_call)
            out += _statements(node.orelse, typing_only=typing_only, at_call=at_call)
        elif isinstance(node, (ast.Try, ast.With)):
            for block in (node.body, *(h.body for h in getattr(node, "handlers", [])),
                          getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                out += _statements(block, typing_only=typing_only, at_call=at_call)
        elif isinstance(node, ast.Import):
            out.append(ImportStatement(False, None, 0, tuple(a.name for a in node.names), typing_only))
        elif isinstance(node, ast.ImportFrom):
            out.append(ImportStatement(True, node.module, node.level, tuple(a.name for a in node.names), typing_only))
        elif at_call and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out += _statements(node.body, typing_only=typing_only, at_call=at_call)
        elif at_call:  # for/while/match/… bodies
            for child in ast.iter_child_nodes(node):
                block = [child] if isinstance(child, ast.stmt) else (
                    child.body if isinstance(child, (ast.match_case, ast.ExceptHandler)) else [])
                out += _statements([n for n in block if isinstance(n, ast.stmt)], typing_only=typing_only,
                                   at_call=at_call)
    return out


def _moved(body: list[Any]) -> list[MovedName]:
    """The entries of a module-level ``TABLES = {owner: {name: (module, attribute, since, removed_in)}}``."""
    import ast

    out: list[MovedName] = []
    for node in body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
        if not (isinstance(target, ast.Name) and target.id == "TABLES" and isinstance(node.value, ast.Dict)):
            continue
        for owner, table in zip(node.value.keys, node.value.values, strict=True):
            if not (isinstance(owner, ast.Constant) and isinstance(owner.value, str) and isinstance(table, ast.Dict)):
                continue
            for key, value in zip(table.keys, table.values, strict=True):
                elts = value.elts if isinstance(value, ast.Tuple) else []
                texts = [e.value for e in elts[:2] if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and len(texts) == 2:
                    module, attribute = texts
                    level = len(module) - len(module.lstrip("."))
                    out.append(MovedName(owner.value, key.value, module[level:] or None, level,
                                         attribute.partition(".")[0]))
    return out


def _analyse(source: bytes) -> ModuleFacts:
    import ast

    tree = ast.parse(source)
    return ModuleFacts(
        tuple(_statements(tree.body, typing_only=False, at_call=False)),
        tuple(_statements(tree.body, typing_only=False, at_call=True)),
        frozenset(node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)),
        tuple(_moved(tree.body)),
    )


def _encode(facts: ModuleFacts) -> object:
    return {"imports": [list(s) for s in facts.imports], "imports_at_call": [list(s) for s in facts.imports_at_call],
            "strings": sorted(facts.strings), "moved": [list(m) for m in facts.moved]}


def _decode(data: object) -> ModuleFacts:
    """:class:`ModuleFacts` from :func:`_encode`'s JSON; raises on any other shape (then recomputed)."""
    def statement(row: list[Any]) -> ImportStatement:
        is_from, module, level, names, typing_only = row
        if not (isinstance(is_from, bool) and (module is None or isinstance(module, str)) and type(level) is int
                and isinstance(names, list) and all(isinstance(n, str) for n in names) and isinstance(typing_only, bool)):
            raise TypeError(f"not an import statement: {row!r}")
        return ImportStatement(is_from, module, level, tuple(names), typing_only)

    if not isinstance(data, dict):
        raise TypeError(f"not a module's facts: {type(data).__name__}")
    strings = data["strings"]
    if not (isinstance(strings, list) and all(isinstance(s, str) for s in strings)):
        raise TypeError("the string literals must be a list of strings")
    def moved(row: list[Any]) -> MovedName:
        owner, name, module, level, attribute = row
        if not (isinstance(owner, str) and isinstance(name, str) and (module is None or isinstance(module, str))
                and type(level) is int and isinstance(attribute, str)):
            raise TypeError(f"not a moved name: {row!r}")
        return MovedName(owner, name, module, level, attribute)

    return ModuleFacts(tuple(map(statement, data["imports"])), tuple(map(statement, data["imports_at_call"])),
                       frozenset(strings), tuple(map(moved, data["moved"])))


@lru_cache(maxsize=2048)
def module_facts(source: bytes) -> ModuleFacts:
    """A module's import statements and string literals, analysed once per content: per process
    (every function bundles the same runtime) and per user across processes (:mod:`.analysis_cache`).
    Raises ``SyntaxError`` if ``source`` is not valid Python."""
    return cached("imports", source, lambda: _analyse(source), _encode, _decode)


def import_path(sources: dict[str, bytes], entry_modules: list[str], *, at_call: bool = False) -> set[str]:
    """Asset paths of the ``.py`` files importing ``entry_modules`` loads, found statically.

    Followed: module-level ``import``/``from … import`` statements (also inside module-level
    ``if``/``try``/``with``, never inside functions or ``if TYPE_CHECKING:``), the packages
    above every module, ``from pkg import sub`` submodules, and names a package exports lazily
    (PEP 562), found in its ``if TYPE_CHECKING:`` block; a name it no longer defines (listed in
    ``runtime/_deprecated.py``, which ships only then) where it went. Imports inside functions run at the
    first call, not at cold start, and are not followed — unless ``at_call``: then every module
    the entry modules can ever import is returned (see :func:`import_closure`). What each module
    imports is analysed once per content (:func:`module_facts`), whatever asset it is bundled into.
    """
    modules = {}
    for rel in sources:
        if rel.endswith(".py"):
            name = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            modules[name] = rel

    def imports(module: str) -> tuple[ImportStatement, ...]:
        facts = module_facts(sources[modules[module]])
        return facts.imports_at_call if at_call else facts.imports

    def absolute(module: str, node: ImportStatement) -> str:
        if not node.level:
            return node.module or ""
        package = module if modules[module].endswith("__init__.py") else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{node.module}" if node.module else package

    def lazy_sources(package: str, name: str | None) -> list[str]:
        """The modules defining ``package``'s lazy export ``name`` (None: every lazy export)."""
        return [absolute(package, node) for node in imports(package)
                if node.typing_only and node.is_from and (name is None or name in node.names)]

    #: What moved names the sources list, by owner, and the module listing them (runtime/_deprecated.py):
    #: that module ships only when the code uses one of them, never through an import of it.
    listed = [m for m in modules if m.rpartition(".")[2] == "_deprecated"]
    moved_by_owner: dict[str, list[tuple[MovedName, str]]] = {}
    for lister in listed:
        for entry in module_facts(sources[modules[lister]]).moved:
            moved_by_owner.setdefault(entry.owner, []).append((entry, lister))
    granted: set[str] = set()

    def moved_sources(module: str, name: str | None) -> list[str]:
        """What using ``module``'s old name ``name`` (None: any) loads: the module listing it, the
        module it went to and there the module defining it, as ``from <that> import <attribute>``."""
        out = []
        for moved, lister in moved_by_owner.get(module, []) if module in modules else ():
            if name is None or moved.name == name:
                granted.add(lister)
                target = absolute(module, ImportStatement(True, moved.module, moved.level, (), False))
                out += [lister, target]
                if f"{target}.{moved.attribute}" in modules:
                    out.append(f"{target}.{moved.attribute}")
                elif target in modules and modules[target].endswith("__init__.py"):
                    out += lazy_sources(target, moved.attribute)[:1]
        return out

    def whole(module: str) -> list[str]:
        """What using ``module`` as an object (``pkg.Name``, ``import *``) may load, if ``at_call``."""
        if not at_call or module not in modules or not modules[module].endswith("__init__.py"):
            return []
        return lazy_sources(module, None) + moved_sources(module, None)

    found: set[str] = set()
    todo = list(entry_modules)
    while todo:
        module = todo.pop()
        if module in found or module not in modules or (module in listed and module not in granted):
            continue
        found.add(module)
        parent = module.rpartition(".")[0]
        if parent:
            todo.append(parent)
        if at_call:  # importlib.import_module("constructs_lib.…") and the like, with a literal name
            todo += sorted(module_facts(sources[modules[module]]).strings & modules.keys())
        for node in imports(module):
            if node.typing_only:
                continue
            if not node.is_from:
                for name in node.names:
                    todo += [name, *whole(name)]
                continue
            base = absolute(module, node)
            todo.append(base)
            for name in node.names:
                sub = f"{base}.{name}"
                if name == "*":
                    todo += whole(base)
                elif sub in modules:
                    todo += [sub, *whole(sub)]
                elif base in modules and modules[base].endswith("__init__.py") and (lazy := lazy_sources(base, name)):
                    todo += lazy[:1]
                else:
                    todo += moved_sources(base, name)
    return {modules[m] for m in found}


def import_closure(sources: dict[str, bytes], entry_modules: list[str]) -> set[str]:
    """Asset paths of every ``.py`` file ``entry_modules`` can import, at cold start or later.

    :func:`import_path` also following imports inside functions and classes, every lazy export
    of a package used as an object (``import pkg`` then ``pkg.Name``, ``from pkg import *``)
    and string literals naming a bundled module (``importlib.import_module("…")``).
    """
    return import_path(sources, entry_modules, at_call=True)
