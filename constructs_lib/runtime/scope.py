"""The declared access scope, enforced in the client: the same rule IAM enforces in the cloud.

A ``TableFunction`` built with ``patterns=``/``writes=``/``batch_gets=`` ships its
:class:`~constructs_lib.model.AccessScope` as JSON in ``CONSTRUCTS_LIB_ACCESS_SCOPE``;
``TableClient.from_environment()`` reads it, and every query, get, write, batch and transaction
outside it raises :class:`OutOfScopeError` before a request is built or sent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..model.scope import AccessScope, AccessScopeError
from .environment import ENV_ACCESS_SCOPE
from .exceptions import OutOfScopeError

if TYPE_CHECKING:
    from ..model import Model



def scope_from_environment(model: Model) -> AccessScope | None:
    """The scope in ``$CONSTRUCTS_LIB_ACCESS_SCOPE`` checked against ``model``, or None if unset."""
    text = os.environ.get(ENV_ACCESS_SCOPE)
    return AccessScope.from_json(text).validate(model) if text else None


class ScopeGuard:
    """Checks each client call against one :class:`AccessScope` (validated against the model)."""

    def __init__(self, model: Model, scope: AccessScope) -> None:
        if not isinstance(scope, AccessScope):
            raise AccessScopeError(f"scope {scope!r} must be a constructs_lib.model.AccessScope")
        self.scope = scope.validate(model)
        self.model = model
        #: Entities a declared GetItem pattern reads: ``client.get(entity)`` is that same request.
        self.gets = frozenset(
            model.resolved_patterns[p].entities[0] for p in scope.patterns
            if model.resolved_patterns[p].operation == "GetItem"
        )

    def _refuse(self, what: str) -> OutOfScopeError:
        return OutOfScopeError(f"{what} is outside this function's declared access scope ({self.scope.summary()})")

    def pattern(self, name: str, values: Mapping[str, Any]) -> None:
        if name not in self.scope.patterns:
            raise self._refuse(f"access pattern {name!r}")
        self.tenant(values, f"access pattern {name!r}")

    def get(self, entity: str, values: Mapping[str, Any]) -> None:
        if entity not in self.gets:
            raise self._refuse(f"get of {entity} (no declared GetItem pattern reads it)")
        self.tenant(values, f"get of {entity}")

    def write(self, kind: str, entity: str, values: Mapping[str, Any]) -> None:
        if kind not in self.scope.writes.get(entity, ()):
            raise self._refuse(f"{kind} of {entity}")
        self.tenant(values, f"{kind} of {entity}")

    def batch_get(self, requests: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        for entity, values in requests:
            if entity not in self.scope.batch_gets:
                raise self._refuse(f"batch_get of {entity}")
            self.tenant(values, f"batch_get of {entity}")

    def for_tenant(self, tenant: str) -> None:
        expected = self.scope.tenant_id
        if expected is not None and tenant != expected:
            raise self._refuse(f"tenant {tenant!r}")

    def tenant(self, values: Mapping[str, Any], what: str) -> None:
        expected, field = self.scope.tenant_id, self.model.tenant_field
        if expected is not None and field is not None and values.get(field) != expected:
            raise self._refuse(f"{what} with {field}={values.get(field)!r}")
