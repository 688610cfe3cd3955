"""``AccessScope``: the access patterns and writes one function (or role) declares it makes.

The constructs derive the least-privilege IAM policy from it (actions, table and index ARNs,
``dynamodb:LeadingKeys`` patterns); the runtime client refuses, before any call, anything outside
it. Both read the same value: the construct ships it to the function as JSON. Rationale:
``docs/adr/0100-least-privilege-scopes.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .exceptions import AccessScopeError  # defined with the other model errors; importable from here too
from .jsontext import load_json
from .tenancy import TENANT_ID_RE, TENANT_ID_RULE

if TYPE_CHECKING:
    from .model import Model

#: Writes an entity may declare. ``transaction_*`` and ``condition_check`` happen only inside
#: ``TransactWriteItems``; ``batch_*`` only inside ``BatchWriteItem``.
WRITE_KINDS: tuple[str, ...] = (
    "put", "update", "delete",
    "transaction_put", "transaction_update", "transaction_delete", "condition_check",
    "batch_put", "batch_delete",
)
#: ``tenant=ANY_TENANT``: every tenant (an explicit choice; IAM then checks the key shape only).
ANY_TENANT = "*"
_TAG_RE = re.compile(r"\$\{aws:PrincipalTag/([A-Za-z0-9_.:/=+@-]{1,128})\}")


def principal_tag(tag: str = "tenant") -> str:
    """``tenant=principal_tag("tenant")``: the tenant is the caller's IAM principal tag (roles
    assumed with session tags); IAM checks it, the runtime cannot know it."""
    value = f"${{aws:PrincipalTag/{tag}}}"
    if not _TAG_RE.fullmatch(value):
        raise AccessScopeError(f"principal tag {tag!r} is not a valid IAM tag key")
    return value


def _names(what: str, value: object) -> tuple[str, ...]:
    """``value`` as names, each once in order; an :class:`AccessScopeError` naming ``what`` if it is one
    string, not iterable, or holds something other than strings."""
    if isinstance(value, str) or not isinstance(value, Iterable) or isinstance(value, Mapping):
        given = "one string" if isinstance(value, str) else type(value).__name__
        raise AccessScopeError(f"AccessScope {what} {value!r} must be a list of names, not {given}")
    names = tuple(value)
    odd = [name for name in names if not isinstance(name, str)]
    if odd:
        raise AccessScopeError(f"AccessScope {what}: {odd!r} are not names; each must be a string")
    return tuple(dict.fromkeys(names))


class AccessScope:
    """What a function reads and writes, by name.

    Parameters
    ----------
    patterns
        Names of the model's access patterns the function runs (``client.query(name)``; a
        GetItem pattern also allows ``client.get(entity)`` of its entity). Default none.
    writes
        Per entity, the writes it makes: ``put``, ``update``, ``delete`` (single-item calls),
        ``transaction_put``/``transaction_update``/``transaction_delete``/``condition_check``
        (inside ``client.transaction()``), ``batch_put``/``batch_delete`` (``batch_write``).
        Default none.
    batch_gets
        Entities read with ``client.batch_get``. Default none.
    tenant
        Required when the model has a ``tenant_field``, forbidden otherwise: a tenant id (every
        key must carry it), :func:`principal_tag` (the caller's IAM tag), or ``ANY_TENANT``
        (``"*"``: every tenant, an explicit choice). Default None.
    """

    __slots__ = ("_batch_gets", "_patterns", "_tenant", "_writes")

    def __init__(
        self,
        patterns: Sequence[str] = (),
        writes: Mapping[str, Sequence[str] | str] | None = None,
        batch_gets: Sequence[str] = (),
        tenant: str | None = None,
    ) -> None:
        names = {"patterns": _names("patterns", patterns), "batch_gets": _names("batch_gets", batch_gets)}
        writes = {} if writes is None else writes
        if not isinstance(writes, Mapping):
            raise AccessScopeError(f"AccessScope writes {writes!r} must map entity names to lists of writes")
        normalized: dict[str, tuple[str, ...]] = {}
        for entity, declared in writes.items():
            if not isinstance(entity, str):
                raise AccessScopeError(f"AccessScope writes key {entity!r} must be an entity name (a string)")
            kinds = (declared,) if isinstance(declared, str) else _names(f"writes of {entity!r}", declared)
            bad = [k for k in kinds if k not in WRITE_KINDS]
            if bad or not kinds:
                raise AccessScopeError(
                    f"AccessScope writes of {entity!r}: {bad or kinds!r} — each write must be one of {', '.join(WRITE_KINDS)}"
                )
            normalized[entity] = tuple(sorted(set(kinds), key=WRITE_KINDS.index))
        if tenant is not None and not isinstance(tenant, str):
            raise AccessScopeError(f"AccessScope tenant {tenant!r} must be a string or None")
        if tenant is not None and not (
            tenant == ANY_TENANT or _TAG_RE.fullmatch(tenant) or TENANT_ID_RE.fullmatch(tenant)
        ):
            raise AccessScopeError(
                f"AccessScope tenant {tenant!r} must be a tenant id ({TENANT_ID_RULE}), principal_tag(...) "
                f"or ANY_TENANT ({ANY_TENANT!r})"
            )
        self._patterns: tuple[str, ...] = names["patterns"]
        self._writes: Mapping[str, tuple[str, ...]] = MappingProxyType(dict(sorted(normalized.items())))
        self._batch_gets: tuple[str, ...] = names["batch_gets"]
        self._tenant = tenant
        if not (self._patterns or self._writes or self._batch_gets):
            raise AccessScopeError("AccessScope declares nothing: give patterns, writes or batch_gets")

    @property
    def patterns(self) -> tuple[str, ...]:
        """The access patterns, in declaration order, each once."""
        return self._patterns

    @property
    def writes(self) -> Mapping[str, tuple[str, ...]]:
        """Entity name → its write kinds (in :data:`WRITE_KINDS` order), entities sorted; read-only."""
        return self._writes

    @property
    def batch_gets(self) -> tuple[str, ...]:
        """The entities read with ``batch_get``, each once."""
        return self._batch_gets

    @property
    def tenant(self) -> str | None:
        """The tenant as declared (an id, a principal tag, ``ANY_TENANT``), or None."""
        return self._tenant

    def _identity(self) -> tuple[Any, ...]:
        return self._patterns, tuple(self._writes.items()), self._batch_gets, self._tenant

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AccessScope) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return (f"AccessScope(patterns={self._patterns!r}, writes={dict(self._writes)!r}, "
                f"batch_gets={self._batch_gets!r}, tenant={self._tenant!r})")

    # Tenancy -------------------------------------------------------------------------------------
    @property
    def tenant_tag(self) -> str | None:
        """The principal tag key when ``tenant=principal_tag(...)``, else None."""
        match = _TAG_RE.fullmatch(self.tenant or "")
        return match.group(1) if match else None

    @property
    def tenant_id(self) -> str | None:
        """The tenant id when the scope is confined to one literal tenant, else None."""
        return self.tenant if self.tenant not in (None, ANY_TENANT) and self.tenant_tag is None else None

    # Checks against the model ----------------------------------------------------------------------
    def validate(self, model: Model) -> AccessScope:
        """Check every name against ``model`` and the tenancy rules; returns self.

        Raises :class:`AccessScopeError` naming the unknown pattern/entity or the broken rule."""
        for name in self.patterns:
            if name not in model.resolved_patterns:
                raise AccessScopeError(
                    f"AccessScope pattern {name!r} is not declared in model {model.name!r}; declared: "
                    f"{', '.join(repr(p) for p in model.resolved_patterns) or 'none'}"
                )
        for what, names in (("writes", self.writes), ("batch_gets", self.batch_gets)):
            for entity in names:
                if entity not in model.entities:
                    raise AccessScopeError(
                        f"AccessScope {what} entity {entity!r} is not in model {model.name!r}; entities: "
                        f"{', '.join(model.entities)}"
                    )
        if model.tenant_field is None:
            if self.tenant is not None:
                raise AccessScopeError(
                    f"AccessScope tenant {self.tenant!r}: model {model.name!r} declares no tenant_field; drop tenant="
                )
            return self
        if self.tenant is None:
            raise AccessScopeError(
                f"AccessScope on multi-tenant model {model.name!r} needs tenant=: a tenant id, "
                f"principal_tag('<tag>') or ANY_TENANT ({ANY_TENANT!r}, every tenant)"
            )
        if self.tenant != ANY_TENANT:
            for name in self.patterns:
                index = model.resolved_patterns[name].index
                if index is not None and index.kind == "GSI" and index.name not in model.tenant_safe_gsis:
                    raise AccessScopeError(
                        f"AccessScope pattern {name!r} reads GSI {index.name!r}, whose partition keys do not start "
                        f"with the tenant, so no key condition can confine it to tenant {self.tenant!r}; use "
                        f"tenant=ANY_TENANT or a tenant-safe index ({', '.join(model.tenant_safe_gsis) or 'none'})"
                    )
        return self

    # Serialization ---------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"patterns": list(self.patterns), "writes": {e: list(k) for e, k in self.writes.items()},
                "batch_gets": list(self.batch_gets), "tenant": self.tenant}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AccessScope:
        unknown = set(data) - {"patterns", "writes", "batch_gets", "tenant"}
        if unknown:
            raise AccessScopeError(f"access scope has unknown key(s) {sorted(unknown)!r}")
        return cls(patterns=data.get("patterns") or (), writes=data.get("writes") or {},
                   batch_gets=data.get("batch_gets") or (), tenant=data.get("tenant"))

    @classmethod
    def from_json(cls, text: str) -> AccessScope:
        try:
            data = load_json(text, "access scope JSON", AccessScopeError)
        except AccessScopeError:
            raise
        except ValueError as exc:
            raise AccessScopeError(f"access scope JSON is malformed: {exc}") from exc
        if not isinstance(data, dict):
            raise AccessScopeError(f"access scope JSON must be an object, got {type(data).__name__}")
        return cls.from_dict(data)

    def summary(self) -> str:
        """One line for docs and errors: ``patterns [...]; writes {...}; batch_gets [...]; tenant``."""
        parts = [f"patterns {list(self.patterns)!r}"] if self.patterns else []
        if self.writes:
            parts.append("writes {" + ", ".join(f"{e}: {'/'.join(k)}" for e, k in self.writes.items()) + "}")
        if self.batch_gets:
            parts.append(f"batch_gets {list(self.batch_gets)!r}")
        if self.tenant is not None:
            parts.append(f"tenant {self.tenant!r}")
        return "; ".join(parts)
