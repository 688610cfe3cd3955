"""The one list of ``TableClient`` keyword options the typed methods expose, and those they omit.

A new option of ``TableClient.put``/``get``/``update``/``delete``/``query``/``query_all`` is added
here (name, annotation in the generated module, default, the imports it needs, where it
applies); ``tests/unit/test_codegen.py`` compares this list with ``TableClient``'s signatures, so
an option added there and not here (or with another default) fails the unit tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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
    if resolved is None or resolved.pattern.sk != "between" or not resolved.sk_fields:
        return False
    entity = model.entities[resolved.pattern.entities[0]]
    index = resolved.index
    template = entity.pk_template if index is None or index.kind == "LSI" else entity.index_templates(index.name)[0]
    return any(isinstance(s, Placeholder) and s.field == resolved.sk_fields[-1] and s.bucket for s in template.segments)


@dataclass(frozen=True)
class Option:
    """One keyword option: ``name: annotation = default`` in the generated signature."""

    name: str
    #: ``{attributes}`` stands for the ``Literal`` of the method's entity's attribute names.
    annotation: str
    default: str
    #: Names the annotation uses, as ``(module, name)`` imports of the generated module.
    imports: tuple[tuple[str, str], ...] = ()
    #: Whether a typed method of this access pattern (None: an entity method) takes it.
    applies: Callable[[ResolvedPattern | None, Model], bool] = field(default=_always, compare=False)


_DATETIME = (("datetime", "datetime"),)
_TIMEDELTA = (("datetime", "timedelta"),)
_EXPIRY = (
    Option("expires_in", "timedelta | None", "None", _TIMEDELTA),
    Option("expires_at", "datetime | None", "None", _DATETIME),
)

#: Method of ``TableClient`` → the options its typed counterparts take, in signature order.
OPTIONS: dict[str, tuple[Option, ...]] = {
    "put": (
        Option("create_only", "bool", "False"),
        Option("expected_version", "int | None", "None"),
        *_EXPIRY,
    ),
    "get": (Option("consistent", "bool", "False"),),
    "update": (
        Option("expected_version", "int | None", "None"),
        Option("must_exist", "bool", "True"),
        *_EXPIRY,
    ),
    "delete": (
        Option("expected_version", "int | None", "None"),
        Option("must_exist", "bool", "False"),
    ),
    "query": (
        Option("limit", "int | None", "None", applies=_paged),
        Option("cursor", "str | None", "None", applies=_paged),
        Option("descending", "bool | None", "None", applies=_paged),
        Option("consistent", "bool", "False", applies=_consistent),
        Option("partition_at", "datetime | None", "None", _DATETIME, applies=_bucketed),
    ),
    "query_all": (
        Option("descending", "bool | None", "None"),
        Option("consistent", "bool", "False", applies=_consistent),
    ),
}

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
    "query": {"raw": "raw items keep their key attributes, which the entity's TypedDict does not describe"},
    "query_all": {},
}
