"""The one list of ``TableClient`` keyword options the typed methods expose, and those they omit.

A new option of ``TableClient.put``/``get``/``update``/``delete``/``query``/``query_all`` is added
here (name, annotation in the generated module, default, imports, where it applies); an option
the installed ``TableClient`` lacks is left out of the generated signatures. A unit test compares
this list with ``TableClient``'s signatures: an option added there and not here fails it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from ..model import Model, ResolvedPattern
from ..model.templates import Placeholder


def _always(resolved: ResolvedPattern | None, model: Model) -> bool:
    return True


def _paged(resolved: ResolvedPattern | None, model: Model) -> bool:
    """Query patterns page; a GetItem pattern returns at most one item and refuses a cursor."""
    return resolved is None or resolved.operation == "Query"


def _consistent(resolved: ResolvedPattern | None, model: Model) -> bool:
    """GSIs do not support consistent reads (the runtime refuses ``consistent=True`` there)."""
    return resolved is None or resolved.index is None or resolved.index.kind != "GSI"


def _bucketed(resolved: ResolvedPattern | None, model: Model) -> bool:
    """``partition_at`` applies to a ``between`` range whose partition key buckets the range field."""
    if resolved is None or resolved.sk != "between" or not resolved.sk_fields:
        return False
    segments = resolved.pk_template.segments
    return any(isinstance(s, Placeholder) and s.field == resolved.sk_fields[-1] and bool(s.bucket) for s in segments)


@dataclass(frozen=True)
class Option:
    """One keyword option: ``name: annotation = default`` in the generated signature."""

    name: str
    #: Every name qualified by its module alias (``_b.int | None``, see ``names.ALIASES``);
    #: ``{attributes}`` stands for the ``Literal`` of the method's entity's attribute names.
    annotation: str
    default: str
    #: Modules the annotation (and the argument) use (each imported under its alias).
    imports: tuple[str, ...] = ("builtins",)
    #: Whether a typed method of this access pattern (None: an entity method) takes it.
    applies: Callable[[ResolvedPattern | None, Model], bool] = field(default=_always, compare=False)
    #: What the method passes on to ``TableClient`` (None: the parameter as it is).
    argument: str | None = None

    @property
    def call(self) -> str:
        """``name=argument`` in the delegating call."""
        return f"{self.name}={self.argument or self.name}"


@cache
def accepted(method: str) -> frozenset[str]:
    """The keyword names ``TableClient.<method>`` takes (``query_all`` passes its own to ``query``;
    ``Transaction.<op>`` passes them to ``request_params.<op>``, which builds the action)."""
    from ..runtime import request_params
    from ..runtime.client import TableClient

    if method.startswith("transaction."):
        target = getattr(request_params, method.removeprefix("transaction."))
    else:
        target = getattr(TableClient, "query" if method == "query_all" else method)
    return frozenset(inspect.signature(target).parameters)


@cache
def get_parameters() -> frozenset[str]:
    """The named parameters of ``TableClient.get`` (``self`` and ``entity`` included): it takes a
    table key as keyword arguments beside them, so a key field of one of these names cannot be passed."""
    from ..runtime.client import TableClient

    parameters = inspect.signature(TableClient.get).parameters.values()
    return frozenset(p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD)


_DATETIME = ("datetime",)
_CONDITION = ("constructs_lib.runtime.conditions",)
_NAMES = ("collections.abc",)
_EXPIRY = (
    Option("expires_in", "_dt.timedelta | None", "None", _DATETIME),
    Option("expires_at", "_dt.datetime | None", "None", _DATETIME),
)

#: A condition on the stored item (``attr("status") == "PAID"``, :mod:`constructs_lib.runtime.conditions`).
_WRITE_CONDITION = Option("condition", "_conditions.Condition | None", "None", _CONDITION)
#: Read only these attributes (a projection; the item's key fields and entity come back too). The
#: typed names are attribute names, not document paths: each goes on as a ``Name`` (``a.b`` is
#: the attribute so named, never ``a`` → ``b``; docs/adr/0039-names-and-attribute-paths.md).
_PROJECTION = Option(
    "attributes", "_abc.Sequence[{attributes}] | None", "None", (*_NAMES, *_CONDITION),
    argument="None if attributes is None else [_conditions.Name(a) for a in attributes]",
)
#: Drop items that fail a condition after they are read (no read cost saved).
_FILTER = Option("filter", "_conditions.Condition | None", "None", _CONDITION, applies=_paged)

#: Method of ``TableClient`` → the options its typed counterparts take, in signature order.
OPTIONS: dict[str, tuple[Option, ...]] = {
    "put": (
        Option("create_only", "_b.bool", "False"),
        Option("expected_version", "_b.int | None", "None"),
        *_EXPIRY,
        _WRITE_CONDITION,
    ),
    "get": (Option("consistent", "_b.bool", "False"), _PROJECTION),
    "update": (
        Option("expected_version", "_b.int | None", "None"),
        Option("must_exist", "_b.bool", "True"),
        *_EXPIRY,
        _WRITE_CONDITION,
    ),
    "delete": (
        Option("expected_version", "_b.int | None", "None"),
        Option("must_exist", "_b.bool", "False"),
        _WRITE_CONDITION,
    ),
    "query": (
        Option("limit", "_b.int | None", "None", applies=_paged),
        Option("cursor", "_b.str | None", "None", applies=_paged),
        Option("descending", "_b.bool | None", "None", applies=_paged),
        Option("consistent", "_b.bool", "False", applies=_consistent),
        Option("partition_at", "_dt.datetime | None", "None", _DATETIME, applies=_bucketed),
        _FILTER,
        _PROJECTION,
    ),
    "query_all": (
        Option("descending", "_b.bool | None", "None"),
        Option("consistent", "_b.bool", "False", applies=_consistent),
        _FILTER,
        _PROJECTION,
    ),
    "transaction.condition_check": (
        Option("exists", "_b.bool", "True"),
        Option("expected_version", "_b.int | None", "None"),
        _WRITE_CONDITION,
    ),
}
# A transaction's put, update and delete take the single-item calls' options.
OPTIONS.update({f"transaction.{op}": OPTIONS[op] for op in ("put", "update", "delete")})

#: Keyword parameters of ``TableClient`` methods the typed methods take in another form or leave
#: out, with the reason (the untyped client, ``.client``, still has them).
OMITTED: dict[str, dict[str, str]] = {
    "put": {},
    "get": {"raw": "raw items keep their key attributes, which the entity's TypedDict does not describe"},
    "update": {
        "key": "the table-key fields are typed keyword parameters",
        "set": "typed as the entity's Patch", "remove": "typed as the entity's attribute names",
        "add": "typed as the entity's Patch", "delete": "typed as the entity's Patch",
    },
    "delete": {"key": "the table-key fields are typed keyword parameters"},
    "transaction.condition_check": {},
    "query": {"raw": "raw items keep their key attributes, which the entity's TypedDict does not describe"},
    "query_all": {},
}
OMITTED.update({f"transaction.{op}": OMITTED[op] for op in ("put", "update", "delete")})
