"""Lazy package exports driven by one table (public name -> the submodule defining it).

Each runtime package's ``__init__`` holds its table, takes ``__all__``, ``__getattr__`` and
``__dir__`` from :func:`lazy_exports`, and repeats the table as explicit re-exports under
``TYPE_CHECKING`` for type checkers (a unit test holds the two equal). A submodule is loaded on
first access of a name it defines, so a cold start runs only the modules its handler uses. A name
a package or module (``lazy_exports(__name__, {})``) no longer defines may be one it answered for
before: :mod:`._deprecated` says (loaded then; a function using no old name ships it not).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package`` exporting ``exports`` (name -> submodule,
    relative to ``package``)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            try:
                deprecated = import_module("._deprecated", __package__)
            except ModuleNotFoundError:  # not shipped: this function's code uses no old name
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
            return deprecated.moved(package, name)
        value = getattr(import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return sorted(exports), __getattr__, __dir__
