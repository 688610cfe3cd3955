"""Python names for a model's entities and access patterns, with collisions resolved.

Method names are ``snake_case`` ASCII; a name already taken (by an earlier entity or pattern,
in declaration order, or by a member of the table class) gets the first free ``_2``, ``_3``...
suffix, so the same model always yields the same names.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterable

from .exceptions import CodegenError

#: Members of the generated table class that no generated method may take.
RESERVED_MEMBERS = frozenset({"client", "from_environment", "transaction"})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def snake(text: str) -> str:
    """``"user's orders newest first"`` → ``users_orders_newest_first``; ``"OrderItem"`` → ``order_item``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    ascii_text = re.sub(r"['’`]", "", ascii_text)
    ascii_text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", ascii_text)
    ascii_text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", ascii_text)
    name = re.sub(r"[^A-Za-z0-9]+", "_", ascii_text).strip("_").lower()
    if not name:
        name = "pattern"
    if name[0].isdigit():
        name = f"p_{name}"
    if keyword.iskeyword(name):
        name += "_"
    return name


def camel(text: str) -> str:
    """``"shop-v2"`` → ``ShopV2`` (starts with a letter)."""
    parts = re.split(r"[^A-Za-z0-9]+", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii"))
    name = "".join(p[:1].upper() + p[1:] for p in parts if p)
    return name if name[:1].isalpha() else f"Model{name}"


class Namer:
    """Hands out method names of one class, each unique; ``claim`` is deterministic."""

    def __init__(self, reserved: Iterable[str] = RESERVED_MEMBERS) -> None:
        self.taken: set[str] = set(reserved)

    def claim(self, base: str, *, with_suffixes: tuple[str, ...] = ("",)) -> str:
        """The first of ``base``, ``base_2``, ... for which every ``name + suffix`` is free; claims them all."""
        n = 1
        while True:
            name = base if n == 1 else f"{base}_{n}"
            if not any(name + s in self.taken for s in with_suffixes):
                self.taken.update(name + s for s in with_suffixes)
                return name
            n += 1


def check_parameter(name: str, *, where: str) -> str:
    """``name`` if it can be a keyword parameter of a generated method; else :class:`CodegenError`."""
    if not _IDENTIFIER.match(name) or keyword.iskeyword(name) or name in ("self", "_cast"):
        raise CodegenError(
            f"{where}: field {name!r} cannot be a keyword parameter of a generated method (it must be a Python "
            "identifier, not a keyword or 'self'); rename the field in the model, or use the untyped TableClient"
        )
    return name


def check_unique(names: list[str], *, where: str) -> None:
    """Refuse a signature in which a field and an option share a name."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise CodegenError(
                f"{where}: {name!r} is both a key field and an option of the method; rename the field in the model"
            )
        seen.add(name)


def is_class_key(name: str) -> bool:
    """Whether ``name`` can be a key of a class-syntax ``TypedDict`` (else the functional syntax is used)."""
    return bool(_IDENTIFIER.match(name)) and not keyword.iskeyword(name) and not name.startswith("__")
