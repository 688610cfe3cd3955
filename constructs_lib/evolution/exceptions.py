"""Errors of model evolution (lock, diff, contract commands): one root, :class:`EvolutionError`.

A ``ValueError`` like the other packages' roots, and not a
:class:`~constructs_lib.model.ModelError`: the model is valid, its evolution is refused.
"""

from __future__ import annotations


class EvolutionError(ValueError):
    """Base class of every model-evolution error."""


class LockError(EvolutionError):
    """The lock cannot be written or advanced as asked (names the table and the reason)."""


class BreakingChangeError(EvolutionError):
    """The model changes in a way existing items or callers cannot follow (names each change)."""


class ContractReadError(EvolutionError):
    """A contract, slice or published parameter named on the command line cannot be read (exit 2)."""


__all__ = ["BreakingChangeError", "ContractReadError", "EvolutionError", "LockError"]
