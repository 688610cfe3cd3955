"""The tables of an app as ``python -m constructs_lib describe`` documents them.

A :class:`TableView` says whether the app owns the table or imports it, where an imported
table's contract comes from, and each function built on it with its slice of the model
(:func:`function_slice`: the patterns it may run, the entities it reads and writes, the indexes
it queries). The command line fills the views from the construct tree; this module only reads
``model`` and ``runtime``. See docs/adr/0041-consumer-tooling-sees-imported-tables.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.slices import used_names
from ..runtime.contract import fingerprint
from .describe import _cell, _code, _table, describe

if TYPE_CHECKING:
    from ..model.model import Model
    from ..model.scope import AccessScope

__all__ = ["DEPLOY_TIME", "FunctionSlice", "FunctionView", "TableView", "describe_table", "function_slice"]

#: A fingerprint given as a token (known at deploy time only).
DEPLOY_TIME = "(deploy time)"


@dataclass(frozen=True)
class FunctionView:
    """A function built on a table: its construct path, its declared scope (None: none declared),
    one line per IAM statement derived from the scope, and without a scope the coarse grant it
    got (``"read_write: GetItem, ... on the table and every index"``; None: no grant by the function)."""

    path: str
    scope: AccessScope | None = None
    statements: tuple[str, ...] = ()
    grant: str | None = None


@dataclass(frozen=True)
class TableView:
    """One table of an app.

    Attributes
    ----------
    path, model
        The construct path and the table's data model.
    imported
        True for a table deployed elsewhere (``SingleTable.from_parameters`` and the other importers).
    parameter_prefix
        Owned: where it publishes its contract (or None); imported: the SSM prefix it was imported
        from (None when imported by name or ARN).
    expected_fingerprint
        Imported from parameters: the fingerprint pinned with ``expected_fingerprint=`` (a literal,
        :data:`DEPLOY_TIME` for a token, or None).
    pinned_contract
        Imported from parameters with ``contract=``: where the committed contract file was read
        from and its fingerprint (``"contract file '...shop.contract.json', fingerprint ..."``), else None.
    deployed_fingerprint
        Imported by name or ARN: the ``model_fingerprint=`` given — a literal, :data:`DEPLOY_TIME`
        for a token, or None.
    table_name
        Imported by name or ARN: the literal name or ARN, else None (a deploy-time value).
    functions
        The functions built on it.
    """

    path: str
    model: Model
    imported: bool = False
    parameter_prefix: str | None = None
    expected_fingerprint: str | None = None
    pinned_contract: str | None = None
    deployed_fingerprint: str | None = None
    table_name: str | None = None
    functions: tuple[FunctionView, ...] = ()

    @property
    def title(self) -> str:
        """``"<path> — data model `<name>`"``, with ``" (imported)"`` for an imported table."""
        return f"{self.path} — data model `{self.model.name}`" + (" (imported)" if self.imported else "")


@dataclass(frozen=True)
class FunctionSlice:
    """The part of a model one function uses: access patterns, entities read and written (model
    order), and the indexes its patterns read (``"table"`` for the table itself)."""

    patterns: tuple[str, ...]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    indexes: tuple[str, ...]
    everything: bool = False


def function_slice(model: Model, scope: AccessScope | None) -> FunctionSlice:
    """The slice of ``model`` a function with ``scope`` uses; without a scope, all of it. Its
    entities and indexes are :func:`~constructs_lib.model.slices.used_names` — what the contract
    check compares — split here into reads and writes, with ``"table"`` for reads of the table."""
    entities, indexes = used_names(model, scope)
    if scope is None:
        return FunctionSlice(tuple(model.resolved_patterns), tuple(entities), tuple(entities), ("table", *indexes),
                             everything=True)
    read = set(scope.batch_gets)
    reads_table = bool(scope.batch_gets)
    for name in scope.patterns:
        resolved = model.resolved_patterns[name]
        read.update(resolved.entities)
        reads_table = reads_table or resolved.index is None
    order = list(model.entities)
    return FunctionSlice(
        patterns=tuple(scope.patterns),
        reads=tuple(e for e in order if e in read),
        writes=tuple(e for e in order if e in scope.writes),
        indexes=(("table",) if reads_table else ()) + tuple(i for i in model.indexes if i in indexes),
    )


def describe_table(view: TableView) -> str:
    """:func:`~constructs_lib.docgen.describe.describe` of the table's model, with where the table
    comes from and, when it has functions, each function's slice."""
    sections = _functions_section(view) if view.functions else []
    return describe(view.model, title=view.title, intro=_table_section(view), sections=sections)


def _table_section(view: TableView) -> list[str]:
    own = fingerprint(view.model)
    if not view.imported:
        lines = ["- **owned** by this app (`SingleTable`): it creates the table."]
        if view.parameter_prefix:
            lines.append(f"- publishes its contract under SSM prefix {_code(view.parameter_prefix)} "
                         "(consumers import it with `SingleTable.from_parameters`).")
        lines.append(f"- model fingerprint {_code(own)}.")
        return ["## Table", "", *lines, ""]
    lines = ["- **imported**: deployed by another stack or repository; this app creates no resource for it and "
             "builds its functions with the model below."]
    if view.parameter_prefix is not None:
        lines.append(f"- contract: SSM parameters under {_code(view.parameter_prefix)} (`SingleTable.from_parameters`): "
                     "table name and ARN are read at deploy time; each function reads the published contract "
                     f"({_code(view.parameter_prefix + '/contract')}) at cold start and checks its slice against it.")
        if view.pinned_contract:
            lines.append(f"- pinned (`contract=`): the {view.pinned_contract}; every function's slice is checked "
                         "against it at synth.")
        if view.expected_fingerprint == DEPLOY_TIME:
            lines.append("- expected fingerprint (`expected_fingerprint=`): a deploy-time value, not checked at synth.")
        elif view.expected_fingerprint:
            lines.append(f"- expected fingerprint {_code(view.expected_fingerprint)} (`expected_fingerprint=`, "
                         "checked against this model at synth).")
        elif not view.pinned_contract:
            lines.append("- nothing pinned (`contract=` or `expected_fingerprint=`): only the functions' cold-start "
                         "check compares this model with the published contract.")
    else:
        where = _code(view.table_name) if view.table_name else "a deploy-time value"
        lines.append(f"- table: {where} (`SingleTable.from_table_name` / `from_table_attributes`).")
        fp = view.deployed_fingerprint
        lines.append(
            f"- deployed model fingerprint {_code(fp)} (checked at synth)." if fp and fp != DEPLOY_TIME
            else "- deployed model fingerprint: a deploy-time value, checked by each function at run time." if fp
            else "- no deployed model fingerprint given (`model_fingerprint=`): nothing checks that the deployed "
                 "table was designed for this model."
        )
    lines.append(f"- model fingerprint {_code(own)} (of this app's copy of the model).")
    return ["## Table", "", *lines, ""]


def _names(names: Sequence[str]) -> str:
    return ", ".join(_code(n) for n in names)


def _functions_section(view: TableView) -> list[str]:
    """Each function with the patterns it may run, its writes, the indexes it queries, its slice
    and the IAM statements granted."""
    model = view.model
    rows = []
    for fn in view.functions:
        part = function_slice(model, fn.scope)
        if fn.scope is None:
            grant = fn.grant or "none by the function (access=None): grants made elsewhere are not shown"
            rows.append((_code(fn.path), "any (no declared scope)", "any", ", ".join(part.indexes),
                         f"no declared scope: every entity of the model: {_names(part.reads)}", _cell(grant)))
            continue
        scope = fn.scope
        writes = [f"{_code(e)}: {', '.join(kinds)}" for e, kinds in scope.writes.items()]
        runs = [_names(part.patterns)] if part.patterns else []
        if scope.batch_gets:
            runs.append(f"batch_get: {_names(scope.batch_gets)}")
        used = f"reads {_names(part.reads) or 'nothing'}; writes {_names(part.writes) or 'nothing'}"
        if scope.tenant is not None:
            used += f"; tenant {_code(scope.tenant)}"
        rows.append((
            _code(fn.path), "<br>".join(runs) or "none", "<br>".join(_cell(w) for w in writes) or "none",
            ", ".join(part.indexes) or "none", used, "<br>".join(_cell(s) for s in fn.statements),
        ))
    intro = ("Each function built on this table and the slice of the model it uses: the access patterns it may run, "
             "the entities it may write, the indexes its patterns query, and the IAM statements derived from its "
             "declared scope (`dynamodb:LeadingKeys` per statement).")
    header = ("function", "access patterns", "writes", "indexes queried", "slice", "IAM granted")
    return ["## Functions and their slices", "", intro, "", *_table(header, rows), ""]
