"""Errors of the typed-module generator."""

from __future__ import annotations

from ..model.exceptions import ModelError


class CodegenError(ModelError):
    """The model cannot be turned into a typed module (e.g. a field name that is not a Python
    identifier, or one that collides with an option of the method it would be a parameter of);
    names the value and the rule."""
