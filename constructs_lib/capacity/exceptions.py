"""Errors of the capacity calculation: one base class, :class:`CapacityError`."""

from __future__ import annotations

__all__ = ["CapacityError", "CapacityInputError"]


class CapacityError(Exception):
    """Base class of every error raised by :mod:`constructs_lib.capacity`."""


class CapacityInputError(CapacityError, ValueError):
    """A call or item the calculation cannot price (an unknown index, a strongly consistent
    read of a global secondary index, a negative size, ...); the message names the value and
    the DynamoDB rule it breaks."""
