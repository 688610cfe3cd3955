"""``AccessScope``: the access patterns and writes one function (or role) declares it makes.

The constructs derive the least-privilege IAM policy from it (actions, table and index ARNs,
``dynamodb:LeadingKeys`` patterns); the runtime client refuses, before any call, anything outside
it. Both read the same value: the construct ships it to the function as JSON. Rationale:
``docs/adr/0100-least-privilege-scopes.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .exceptions import AccessScopeError  # defined with the other model errors; importable from here too
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


@dataclass(frozen=True, eq=True)
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

    patterns: Sequence[str] = ()
    writes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    batch_gets: Sequence[str] = ()
    tenant: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.patterns, str) or isinstance(self.batch_gets, str):
            raise AccessScopeError("AccessScope patterns and batch_gets must be sequences of names, not one string")
        if not isinstance(self.writes, Mapping):
            raise AccessScopeError(f"AccessScope writes {self.writes!r} must map entity names to lists of writes")
        writes: dict[str, tuple[str, ...]] = {}
        for entity, kinds in self.writes.items():
            kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
            bad = [k for k in kinds if k not in WRITE_KINDS]
            if bad or not kinds:
                raise AccessScopeError(
                    f"AccessScope writes of {entity!r}: {bad or kinds!r} — each write must be one of {', '.join(WRITE_KINDS)}"
                )
            writes[entity] = tuple(sorted(set(kinds), key=WRITE_KINDS.index))
        object.__setattr__(self, "writes", dict(sorted(writes.items())))
        object.__setattr__(self, "patterns", tuple(dict.fromkeys(self.patterns)))
        object.__setattr__(self, "batch_gets", tuple(dict.fromkeys(self.batch_gets)))
        if self.tenant is not None and not (
            self.tenant == ANY_TENANT or _TAG_RE.fullmatch(self.tenant) or TENANT_ID_RE.fullmatch(self.tenant)
        ):
            raise AccessScopeError(
                f"AccessScope tenant {self.tenant!r} must be a tenant id ({TENANT_ID_RULE}), principal_tag(...) "
                f"or ANY_TENANT ({ANY_TENANT!r})"
            )
        if not (self.patterns or self.writes or self.batch_gets):
            raise AccessScopeError("AccessScope declares nothing: give patterns, writes or batch_gets")

    __hash__ = None  # type: ignore[assignment]  # holds a dict (writes): equal scopes compare, none hashes

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
        return cls(patterns=tuple(data.get("patterns") or ()), writes=dict(data.get("writes") or {}),
                   batch_gets=tuple(data.get("batch_gets") or ()), tenant=data.get("tenant"))

    @classmethod
    def from_json(cls, text: str) -> AccessScope:
        try:
            data = json.loads(text)
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
