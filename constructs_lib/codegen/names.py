"""Python names for a model's entities, access patterns and key fields, with collisions resolved.

Method names are ``snake_case`` ASCII; a name already taken (by an earlier entity or pattern,
in declaration order, or by a member of the table class) gets the first free ``_2``, ``_3``...
suffix, so the same model always yields the same names. The generated module names every type
through a module alias (:data:`ALIASES`: ``_b.str``, ``_t.Literal``), which no generated
method, parameter or ``TypedDict`` key may take, so no model name can shadow a type.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterable

from .exceptions import CodegenError

#: Members of the generated table class that no generated method may take.
RESERVED_MEMBERS = frozenset({"client", "from_environment", "transaction"})
#: Module → the alias the generated module imports it as; every annotation and call goes
#: through one (``_b.str``, ``_dt.date``), so a method named ``str`` shadows nothing it uses.
ALIASES: dict[str, str] = {
    "builtins": "_b",
    "collections.abc": "_abc",
    "datetime": "_dt",
    "decimal": "_decimal",
    "typing": "_t",
    "constructs_lib.runtime": "_rt",
    "constructs_lib.runtime.conditions": "_conditions",
    "constructs_lib.runtime.contract": "_contract",
}
#: Names no parameter of a generated method may take: the aliases its body uses, and ``self``.
RESERVED_PARAMETERS = frozenset({"self", *ALIASES.values()})
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


def parameters(fields: Iterable[str], taken: Iterable[str]) -> dict[str, str]:
    """Key field → its keyword parameter: the field's name, or (a keyword, ``self``, a module
    alias, or a name in ``taken``, e.g. an option of the method) the name with the first free
    run of trailing ``_``: ``class`` → ``class_``, ``limit`` → ``limit_``."""
    used = set(taken) | RESERVED_PARAMETERS
    out: dict[str, str] = {}
    for name in fields:
        param = name
        while keyword.iskeyword(param) or param in used:
            param += "_"
        used.add(param)
        out[name] = param
    return out


def is_class_key(name: str) -> bool:
    """Whether ``name`` can be a key of a class-syntax ``TypedDict`` (else the functional syntax is used)."""
    return (bool(_IDENTIFIER.match(name)) and not keyword.iskeyword(name) and not name.startswith("__")
            and name not in RESERVED_PARAMETERS)


def check_get_keys(fields: Iterable[str], options: Iterable[str], *, where: str) -> None:
    """Refuse a table-key field ``TableClient.get`` cannot take: it takes the key as keyword
    arguments beside ``options`` (its own parameters), so a field of such a name never reaches it."""
    clash = sorted(set(fields) & set(options))
    if clash:
        raise CodegenError(
            f"{where}: field {clash[0]!r} has the name of a parameter of TableClient.get, which takes the table key "
            f"as keyword arguments beside its parameters ({', '.join(sorted(options))}); rename the field in the model"
        )
