"""Errors of the command line (``python -m constructs_lib``): one root, :class:`CliError`."""

from __future__ import annotations


class CliError(ValueError):
    """Base class of every command-line error (not a model error: the model was never reached)."""


class TargetError(CliError):
    """The command-line target cannot be loaded or holds no data model (names the target)."""


__all__ = ["CliError", "TargetError"]
