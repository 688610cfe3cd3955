"""A function's own code: one ``.py`` file or a directory, collected and checked at synth.

A file entry ships that module at the asset root (``orders_api.py`` → ``orders_api.handler``). A
directory entry ships its contents — modules, sub-packages, data files — except
:data:`EXCLUDED_DIRS`, :data:`EXCLUDED_FILES` and dotfiles; ``index`` names the handler module
(default ``index.py``) and its ``requirements.txt`` (else ``pyproject.toml`` dependencies) the
dependencies. The handler is checked statically: the module must define the handler name at its
top level, otherwise synthesis fails naming the module, the name and the names it does define.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .exceptions import AssetError

__all__ = [
    "DEFAULT_INDEX",
    "EXCLUDED_DIRS",
    "EXCLUDED_FILES",
    "HandlerCode",
    "defined_names",
    "resolve_handler_code",
]

#: Handler module of a directory entry when ``index`` is not given.
DEFAULT_INDEX = "index.py"
#: Directories never copied from an entry directory (at any depth), besides every dot-directory.
EXCLUDED_DIRS = frozenset({
    "__pycache__", "node_modules", "cdk.out", "venv", "env", "tests", "test", "build", "dist",
    "htmlcov", "site-packages",
})
#: File name patterns never copied from an entry directory, besides every dotfile. Dependency
#: declarations are read at synth time, not shipped.
EXCLUDED_FILES = (
    "*.pyc", "*.pyo", "*.egg-info", "test_*.py", "*_test.py", "conftest.py",
    "requirements*.txt", "pyproject.toml", "setup.cfg", "setup.py", "poetry.lock", "uv.lock", "Pipfile*",
)
#: Asset paths the bundler writes itself; a user file there would shadow the bundled runtime.
RESERVED_NAMES = frozenset({"constructs_lib", "model.json"})


@dataclass(frozen=True)
class HandlerCode:
    """The user's part of a function's asset.

    Attributes
    ----------
    files : tuple of (str, Path)
        Asset-relative POSIX path and source file, sorted by path.
    module : str
        Dotted module holding the handler (``"index"``, ``"api.routes"``).
    function : str
        Handler function name.
    requirements : Path or None
        ``requirements*.txt`` or ``pyproject.toml`` declaring the dependencies; None for none.
    """

    files: tuple[tuple[str, Path], ...]
    module: str
    function: str
    requirements: Path | None

    @property
    def handler(self) -> str:
        """The Lambda ``Handler`` string, ``"<module>.<function>"``."""
        return f"{self.module}.{self.function}"


def _excluded(name: str, *, is_dir: bool) -> bool:
    if name.startswith("."):
        return True
    if is_dir:
        return name in EXCLUDED_DIRS or name.endswith(".egg-info")
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in EXCLUDED_FILES)


def collect_directory(root: Path) -> list[tuple[str, Path]]:
    """Every file of *root* that belongs in an asset, sorted by asset path.

    Symbolic links to directories are not followed (a link cycle cannot hang the synth); links to
    files ship the target's content.
    """
    found: list[tuple[str, Path]] = []
    for base, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _excluded(d, is_dir=True) and not os.path.islink(os.path.join(base, d)))
        for name in sorted(files):
            path = Path(base) / name
            if not _excluded(name, is_dir=False) and path.is_file():
                found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def defined_names(source: str, *, filename: str) -> set[str]:
    """Names a module binds at its top level: functions, classes, assignments and imports.

    Statements nested in top-level ``if``/``try``/``with`` blocks count too (a handler defined
    under ``if TYPE_CHECKING: ... else: ...`` is still defined). Raises ``SyntaxError``.
    """
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*")
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.With):
                visit(node.body)

    visit(ast.parse(source, filename=filename).body)
    return names


def _check_defines(module_file: Path, module: str, function: str, what: str) -> None:
    try:
        names = defined_names(module_file.read_text(encoding="utf-8"), filename=str(module_file))
    except SyntaxError as exc:
        raise AssetError(
            f"{what}: handler module {module!r} ({module_file}) is not valid Python: {exc.msg} on line {exc.lineno}"
        ) from exc
    if function not in names:
        defined = ", ".join(sorted(n for n in names if not n.startswith("_"))) or "nothing public"
        raise AssetError(
            f"{what}: handler module {module!r} ({module_file}) does not define {function!r} at its top level "
            f"(a handler must be a top-level def, async def or assignment); it defines: {defined}"
        )


def _module_of(index: str, what: str) -> str:
    path = PurePosixPath(index.replace(os.sep, "/"))
    parts = path.with_suffix("").parts
    if path.is_absolute() or path.suffix != ".py" or not parts or not all(p.isidentifier() for p in parts):
        raise AssetError(
            f"{what}: index {index!r} must be a relative path of a .py module inside the entry directory, "
            "every part a Python identifier (e.g. 'index.py' or 'api/routes.py')"
        )
    return ".".join(parts)


def _explicit_requirements(requirements: str | os.PathLike[str], what: str) -> Path:
    path = Path(requirements).expanduser().resolve()
    if not path.is_file() or not (path.name == "pyproject.toml" or path.suffix == ".txt"):
        raise AssetError(
            f"{what}: requirements {str(path)!r} must be an existing requirements .txt file or a pyproject.toml"
        )
    return path


def resolve_handler_code(
    *,
    entry: str | os.PathLike[str],
    index: str | None,
    function: str,
    requirements: str | os.PathLike[str] | None,
    what: str,
) -> HandlerCode:
    """Collect and check a function's code (see the module docstring).

    Raises
    ------
    AssetError
        The entry is missing or neither a ``.py`` file nor a directory; ``index`` is given for a
        file or is not a module path; the handler module is missing or does not define
        ``function``; a file would shadow the bundled runtime (``constructs_lib/``,
        ``model.json``); the requirements file is missing.
    """
    if not function.isidentifier():
        raise AssetError(f"{what}: handler {function!r} must be a Python function name")
    root = Path(entry).expanduser().resolve()
    reqs = _explicit_requirements(requirements, what) if requirements is not None else None
    if root.is_file():
        if index is not None:
            raise AssetError(
                f"{what}: index {index!r} applies to a directory entry; entry {str(root)!r} is a file (its module is "
                "the handler module)"
            )
        if root.suffix != ".py" or not root.stem.isidentifier():
            raise AssetError(
                f"{what}: entry file {str(root)!r} must be a .py module whose name is a Python identifier"
            )
        files: list[tuple[str, Path]] = [(root.name, root)]
        module = root.stem
    elif root.is_dir():
        index = DEFAULT_INDEX if index is None else index
        module = _module_of(index, what)
        files = collect_directory(root)
        if reqs is None:
            reqs = next((p for p in (root / "requirements.txt", root / "pyproject.toml") if p.is_file()), None)
    else:
        raise AssetError(
            f"{what}: entry {str(root)!r} does not exist; it must be a handler .py file or a directory holding "
            "the handler module"
        )
    shadowing = sorted(rel for rel, _ in files if rel.split("/")[0] in RESERVED_NAMES or rel == "constructs_lib.py")
    if shadowing:
        raise AssetError(
            f"{what}: {', '.join(shadowing)} in entry {str(root)!r} would shadow what the construct bundles "
            "(constructs_lib/ runtime and model.json); rename or move it"
        )
    module_rel = module.replace(".", "/") + ".py"
    shipped = dict(files)
    if module_rel not in shipped:
        modules = sorted(rel for rel in shipped if rel.endswith(".py"))[:20]
        raise AssetError(
            f"{what}: handler module {module!r} ({module_rel}) is not in the bundle of entry {str(root)!r} "
            f"(missing or excluded; modules found: {', '.join(modules) or 'none'})"
        )
    _check_defines(shipped[module_rel], module, function, what)
    return HandlerCode(tuple(files), module, function, reqs)
