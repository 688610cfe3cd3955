"""Errors of the capacity calculation: one base class, :class:`CapacityError`."""

from __future__ import annotations

__all__ = ["CapacityError", "CapacityInputError", "CostInputError", "PriceFileError", "RatesError", "RecordingError"]


class CapacityError(Exception):
    """Base class of every error raised by :mod:`constructs_lib.capacity`."""


class CapacityInputError(CapacityError, ValueError):
    """A call or item the calculation cannot price (an unknown index, a strongly consistent
    read of a global secondary index, a negative size, ...); the message names the value and
    the DynamoDB rule it breaks."""


class CostInputError(CapacityError, ValueError):
    """A price file or a rates input the cost estimate cannot use. The message names the file,
    the line of the offending value, the value and the rule it breaks (``source``, ``line``)."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}, line {line}: {message}")
        self.source = source
        self.line = line


class PriceFileError(CostInputError):
    """A price file of another format or version, or with a missing, unknown or bad price."""


class RatesError(CostInputError):
    """A rates input naming an unknown table, pattern, entity, counter or key, or a rate that
    is negative or not a number."""


class RecordingError(RatesError):
    """A traffic recording (a snapshot file) that cannot be priced: unreadable, covering no time,
    or naming a pattern or entity its table's model does not declare. The message names the file
    (``source``) and the problem; ``line`` is 0 (a recording has no lines to point at)."""

    def __init__(self, source: str, message: str) -> None:
        CapacityError.__init__(self, f"recording {source}: {message}")
        self.source = source
        self.line = 0
