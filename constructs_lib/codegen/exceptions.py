"""Errors of the typed-module generator: one root, :class:`CodegenError` (a ``ValueError``, not a
:class:`~constructs_lib.model.ModelError`: the model is valid, only its generated module is not)."""

from __future__ import annotations


class CodegenError(ValueError):
    """The model cannot be turned into a typed module (e.g. a field name that is not a Python
    identifier, or one that collides with an option of the method it would be a parameter of);
    names the value and the rule."""
