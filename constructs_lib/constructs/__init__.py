"""The AWS CDK constructs (need the ``cdk`` extra).

This package re-exports nothing: the public constructs, and their errors, are the names of
:mod:`constructs_lib` (one list, ``constructs_lib._LAZY``), imported lazily from the modules here.
"""

from __future__ import annotations

__all__: list[str] = []
