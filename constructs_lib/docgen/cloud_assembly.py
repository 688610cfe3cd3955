"""Model docs in the cloud assembly: every ``SingleTable`` documents its model at synth.

During synthesis each ``SingleTable`` writes, next to the stack templates,
``<stack name>.<construct id>.model.md`` (the Markdown of ``python -m constructs_lib describe``)
and ``<stack name>.<construct id>.workbench.json`` (a NoSQL Workbench data model), and
``<model name>.contract.json`` (the contract file, docs/contract-format.md) when the table can
describe itself as one, through a construct validation that reports no error, so it never
changes what is synthesized.

See docs/adr/0026-model-docs-in-the-cloud-assembly.md and docs/adr/0040-the-contract-is-a-file.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeGuard

import aws_cdk as cdk
import constructs
import jsii

if TYPE_CHECKING:
    from ..model import Model


class DocumentedTable(constructs.IConstruct, Protocol):
    """A construct holding a model (a ``SingleTable``) whose docs go into the cloud assembly."""

    @property
    def model(self) -> Model: ...


class ContractTable(DocumentedTable, Protocol):
    """A documented table that describes itself as a contract file (a ``SingleTable``)."""

    def contract_json(self) -> str: ...


MARKDOWN_SUFFIX = ".model.md"
WORKBENCH_SUFFIX = ".workbench.json"
CONTRACT_SUFFIX = ".contract.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
#: Attribute marking a construct whose model docs are written (set by :func:`attach_model_docs`).
_MARK = "_constructs_lib_model_docs"


def attach_model_docs(table: DocumentedTable) -> None:
    """Have ``table`` write its model docs into the cloud assembly when the app synthesizes."""
    setattr(table, _MARK, True)
    table.node.add_validation(_ModelDocs(table))


def _documented(construct: constructs.IConstruct) -> TypeGuard[DocumentedTable]:
    """Whether ``construct`` is marked by :func:`attach_model_docs`."""
    return bool(getattr(construct, _MARK, False))


def _has_contract(table: DocumentedTable) -> TypeGuard[ContractTable]:
    return callable(getattr(table, "contract_json", None))


def doc_basename(table: DocumentedTable) -> str:
    """``<stack name>.<construct id>`` (the artifact id when the stack name is a token, as for
    nested stacks; characters outside ``[A-Za-z0-9_.-]`` become ``_``)."""
    stack = cdk.Stack.of(table)
    name = stack.artifact_id if cdk.Token.is_unresolved(stack.stack_name) else stack.stack_name
    return f"{_UNSAFE.sub('_', name)}.{_UNSAFE.sub('_', table.node.id)}"


def _first_writer(table: DocumentedTable, stage: cdk.Stage, basename: str) -> bool:
    """True if no documented table before ``table`` (construct-tree order) in ``stage`` uses ``basename``."""
    stage_path, table_path = stage.node.path, table.node.path  # each read is a jsii round trip
    for other in stage.node.find_all():
        if not _documented(other) or (of := cdk.Stage.of(other)) is None or of.node.path != stage_path:
            continue
        if other is table or other.node.path == table_path:
            return True
        if doc_basename(other) == basename:
            return False
    return True


def write_model_docs(table: DocumentedTable) -> list[Path]:
    """Write ``table``'s model docs (and contract file) into its stage's output directory; returns
    the paths written (none of those another table of the stage already writes, none outside a stage)."""
    from .describe import describe
    from .workbench import to_workbench_json

    stage = cdk.Stage.of(table)
    if stage is None:
        return []
    outdir = Path(stage.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    model = table.model
    written = []
    basename = doc_basename(table)
    if _first_writer(table, stage, basename):
        markdown = outdir / f"{basename}{MARKDOWN_SUFFIX}"
        workbench = outdir / f"{basename}{WORKBENCH_SUFFIX}"
        markdown.write_text(describe(model, title=f"{table.node.path} — data model `{model.name}`"), encoding="utf-8")
        workbench.write_text(to_workbench_json([(basename, model)], model_name=model.name), encoding="utf-8")
        written += [markdown, workbench]
    if _has_contract(table) and _first_contract_writer(table, stage):
        contract = outdir / f"{_UNSAFE.sub('_', model.name)}{CONTRACT_SUFFIX}"
        contract.write_text(table.contract_json(), encoding="utf-8")
        written.append(contract)
    return written


def _first_contract_writer(table: DocumentedTable, stage: cdk.Stage) -> bool:
    """True if no table before ``table`` (construct-tree order) in ``stage`` writes a contract for
    a model of the same name (``<model name>.contract.json`` is one file per stage)."""
    stage_path, table_path = stage.node.path, table.node.path
    for other in stage.node.find_all():
        if not _documented(other) or (of := cdk.Stage.of(other)) is None or of.node.path != stage_path:
            continue
        if other is table or other.node.path == table_path:
            return True
        if _has_contract(other) and other.model.name == table.model.name:
            return False
    return True


@jsii.implements(constructs.IValidation)
class _ModelDocs:
    """The validation that writes the docs; it reports an error only if they cannot be written."""

    def __init__(self, table: DocumentedTable) -> None:
        self._table = table

    def validate(self) -> list[str]:
        try:
            write_model_docs(self._table)
        except OSError as exc:
            return [f"SingleTable {self._table.node.path!r}: cannot write its model docs to the cloud assembly: {exc}"]
        return []
