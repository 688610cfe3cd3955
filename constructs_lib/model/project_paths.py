"""Where a relative path written in an app points: its project directory, not the working directory.

A contract file named in code (``Model.from_contract``, ``from_parameters(contract=...)``,
``local_deploy_contract``) is read relative to the **project directory** of the file whose code
passed it: the nearest directory above that file holding ``cdk.json``, where ``cdk synth`` runs
the app — the same file whatever the working directory of a test run, an IDE or the command
line. Without a ``cdk.json`` above it (or no calling file: a REPL) the working directory, as
before; absolute paths as given. Messages show paths relative to the project (:func:`shown`).
Standard library only. See docs/adr/0065-consumer-day-two.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FrameType

#: The CDK CLI's project file: its directory is where ``cdk synth`` runs the app.
CDK_JSON = "cdk.json"
#: This package: frames of its code are skipped when looking for the calling file.
_PACKAGE = Path(__file__).resolve().parents[1]


def calling_file() -> Path | None:
    """The file of the innermost frame outside this package (None for a REPL or ``python -c``)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<"):  # <frozen importlib._bootstrap>, <string>, <stdin>
            path = Path(name).resolve()
            if not path.is_relative_to(_PACKAGE):
                return path if path.is_file() else None
        frame = frame.f_back
    return None


def project_directory(start: str | os.PathLike[str] | None) -> Path | None:
    """The nearest directory at or above ``start`` (a file or directory) holding ``cdk.json``, else None."""
    if start is None:
        return None
    here = Path(start).resolve()
    for directory in (here, *here.parents) if here.is_dir() else here.parents:
        if (directory / CDK_JSON).is_file():
            return directory
    return None


def resolve_project_path(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """``(path to read, path to show)`` of a path an app passed in code.

    A relative ``path`` is joined to the project directory of the calling file (see the module
    docstring), else taken relative to the working directory; an absolute one is kept. The path
    to show is relative to that project directory (or the working directory) when inside it.
    """
    given = Path(path).expanduser()
    base = project_directory(calling_file()) or Path.cwd()
    full = given if given.is_absolute() else base / given
    return full, shown(full, base)


def shown(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
    """``path`` relative to ``base`` (default the working directory) when inside it, else absolute."""
    root = os.path.abspath(base if base is not None else os.getcwd())
    full = os.path.abspath(os.path.join(root, os.path.expanduser(path)))
    relative = os.path.relpath(full, root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return full
    return Path(relative).as_posix()


__all__ = ["CDK_JSON", "calling_file", "project_directory", "resolve_project_path", "shown"]
