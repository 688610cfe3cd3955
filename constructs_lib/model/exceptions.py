"""Errors raised while declaring or loading a data model.

All of them are raised at construction time (and so at ``cdk synth``), never at deploy time.
Messages name the offending value and the rule it broke.
"""

from __future__ import annotations

from dataclasses import dataclass


class ModelError(ValueError):
    """Base class of every data-model error."""


class TemplateError(ModelError):
    """A key template is malformed (unbalanced braces, missing separators, unknown fields...)."""


class ModelValidationError(ModelError):
    """The model breaks a rule: duplicate names, too many indexes, TTL used as a key..."""


class AccessPatternError(ModelError):
    """A declared access pattern cannot be served by a Query or GetItem on any key or index."""


class ViewError(ModelValidationError):
    """A consumer view (``Model.view``) was asked for more than extra access patterns, or for a
    pattern whose name the model already has."""


class AccessScopeError(ModelValidationError):
    """An access scope names something the model does not declare, or breaks a scope rule."""


class FrozenModelError(ModelError, AttributeError):
    """A validated ``Model`` was asked to change: its attributes and mappings are read-only (build
    a new ``Model`` from the declarations instead). Also an ``AttributeError``, as for a frozen
    dataclass."""


class ModelFormatError(ModelError):
    """A serialized model (JSON) has an unknown format or an unsupported version."""


class ContractError(ModelFormatError):
    """A contract file (``<model>.contract.json``) cannot be used; the message names the file."""


class ContractFormatError(ContractError):
    """A contract file is not valid JSON, not a contract, or lacks a field or has one of a wrong type."""


class ContractVersionError(ContractError):
    """A contract file's ``format_version`` is newer than this constructs_lib reads (upgrade it)."""


class ContractIntegrityError(ContractError):
    """A contract file's fingerprints or table description disagree with the model it holds
    (edited by hand or damaged)."""


class SliceError(ContractError):
    """A slice file or a published contract document cannot be used (names the source and what to do)."""


@dataclass(frozen=True)
class ModelWarning:
    """A design smell worth a synth-time warning (not an error)."""

    code: str
    where: str
    message: str
