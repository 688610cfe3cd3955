"""The audit trail: the spec the construct hands to the runtime and the client that reads it.

The key layout is in :mod:`.keys`, the attribute names and limits in :mod:`.spec`, the typed
value helpers in :mod:`.values`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._exports import lazy_exports

#: The public surface: name -> the submodule defining it.
EXPORTS = {
    "AuditClient": "client",
    "AuditPage": "client",
    "AuditRecord": "client",
    "AuditSpec": "spec",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

if TYPE_CHECKING:
    from .client import AuditClient as AuditClient
    from .client import AuditPage as AuditPage
    from .client import AuditRecord as AuditRecord
    from .spec import AuditSpec as AuditSpec
