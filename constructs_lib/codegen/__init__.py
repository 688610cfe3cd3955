"""Typed access: a Python module generated from a model, wrapping ``TableClient``.

``generate(model)`` writes one ``TypedDict`` per entity and a table class with a typed method per
entity operation and access pattern, each delegating to the runtime ``TableClient``; a type
checker then refuses a wrong entity, pattern, field name or value type. Reads ``model`` and
``runtime``; runs from ``python -m constructs_lib codegen`` and is never bundled (the module it
writes is). See docs/typed-access.md and docs/adr/0032-typed-access-by-generated-code.md.
"""

from .exceptions import CodegenError
from .render import generate

__all__ = ["CodegenError", "generate"]
