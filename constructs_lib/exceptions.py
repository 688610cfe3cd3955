"""Errors raised by the CDK constructs (at construction time, i.e. during ``cdk synth``)."""

from __future__ import annotations

from .model.exceptions import ModelError


class ConstructPropsError(ValueError):
    """A construct was given props that would fail at deploy time or break a safety rule.

    The message names the prop, the offending value and the rule.
    """


__all__ = ["ConstructPropsError", "ModelError"]
