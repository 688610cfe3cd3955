"""Value classes that generate no code at import (docs/adr/0057-value-classes-without-generated-code.md).

``@dataclass`` writes a class's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen, ``__setattr__``)
as source text and compiles it while the module is imported: about half of a handler's import
time went there. A runtime value class is instead ``@record`` or ``@frozen_record`` with its own
``__init__``: still a dataclass (``dataclasses.fields``, ``replace`` and ``asdict`` work, type
checkers see one), whose ``==``, ``repr`` and — frozen — ``hash`` and refused assignment
(``FrozenInstanceError``) are shared functions that behave as the generated ones. A frozen
record's ``__init__`` sets its fields through ``self.__dict__``.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, fields
from typing import Any, TypeVar, dataclass_transform

_T = TypeVar("_T")
_as_dataclass = dataclass(init=False, repr=False, eq=False)  # generates no method


def _values(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, f.name) for f in fields(obj))


def _eq(self: Any, other: object) -> Any:  # bool, or NotImplemented for another class
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _repr(self: Any) -> str:
    return f"{type(self).__qualname__}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in fields(self))})"


def _hash(self: Any) -> int:
    return hash(_values(self))


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _install(cls: type[_T], methods: dict[str, Any]) -> type[_T]:
    for name, method in methods.items():
        if name not in cls.__dict__:  # as @dataclass, a method the class writes itself stays
            setattr(cls, name, method)
    if not cls.__doc__:  # shipped bytecode has no docstrings: spare @dataclass the inspect.signature
        cls.__doc__ = cls.__name__  # it would call to write one
    return _as_dataclass(cls)


@dataclass_transform()
def record(cls: type[_T]) -> type[_T]:
    """A mutable dataclass's ``==`` and ``repr`` (and no ``hash``) for ``cls``, which writes its ``__init__``."""
    return _install(cls, {"__eq__": _eq, "__repr__": _repr, "__hash__": None})


@dataclass_transform(frozen_default=True)
def frozen_record(cls: type[_T]) -> type[_T]:
    """A frozen dataclass's ``==``, ``repr``, ``hash`` and refused assignment for ``cls``, which
    writes its ``__init__`` (setting the fields through ``self.__dict__``)."""
    return _install(cls, {"__eq__": _eq, "__repr__": _repr, "__hash__": _hash, "__setattr__": _setattr,
                          "__delattr__": _delattr})
