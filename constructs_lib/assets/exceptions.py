"""Errors raised while building a Lambda asset: one root, :class:`AssetError`.

The constructs raise them again as :class:`~constructs_lib.constructs.exceptions.ConstructPropsError`
(the asset error as its ``__cause__``), so a construct's caller sees one error type.
"""

from __future__ import annotations


class AssetError(ValueError):
    """A function's code, dependencies or bundled modules cannot make a working asset.

    The message names the construct, the offending file, package or value, and the rule.
    """


__all__ = ["AssetError"]
