"""Errors raised by the CDK constructs (at construction time, i.e. during ``cdk synth``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..assets.exceptions import AssetError
from ..model.exceptions import ModelError


class ConstructsError(Exception):
    """Base class of every error raised by :mod:`constructs_lib.constructs` (model errors keep
    their own root, :class:`~constructs_lib.model.ModelError`)."""


class ConstructPropsError(ConstructsError, ValueError):
    """A construct was given props that would fail at deploy time or break a safety rule.

    The message names the prop, the offending value and the rule.
    """


class ContractParameterSizeError(ConstructPropsError):
    """A published contract parameter's value exceeds what an SSM parameter holds (names the
    parameter, its size and what to do)."""


class MissingExtraError(ConstructsError, ImportError):
    """A part of the package needs an optional dependency that is not installed.

    The message names the missing module and the ``pip install`` command that adds it (the
    constructs need the ``cdk`` extra: ``pip install "constructs_lib[cdk]"``). The original
    ``ModuleNotFoundError`` is the ``__cause__``.
    """


@contextmanager
def asset_errors() -> Iterator[None]:
    """Raise an :class:`~constructs_lib.assets.exceptions.AssetError` of the block again as a
    :class:`ConstructPropsError` (same message, the asset error as ``__cause__``): a construct's
    caller sees the constructs' error type whichever layer found the problem."""
    try:
        yield
    except AssetError as exc:
        raise ConstructPropsError(str(exc)) from exc


__all__ = ["ConstructPropsError", "ConstructsError", "MissingExtraError", "ModelError", "asset_errors"]
