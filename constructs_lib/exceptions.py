"""Errors of the command line (``python -m constructs_lib``): one root, :class:`CliError`."""

from __future__ import annotations


class CliError(ValueError):
    """Base class of every command-line error (not a model error: the model was never reached)."""


class TargetError(CliError):
    """The command-line target cannot be loaded or holds no data model (names the target)."""


class CostInputError(CliError):
    """``cost``: the rates or price file cannot be used (the message names the file, the line and
    the rule; the capacity layer's error is its ``__cause__``)."""


__all__ = ["CliError", "CostInputError", "TargetError"]
