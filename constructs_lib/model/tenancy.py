"""Tenancy: which key component is the tenant, and which indexes keep tenants apart.

A model with ``tenant_field="tenant_id"`` promises that every entity's partition key starts
with the same literal segments followed by ``{tenant_id}`` (e.g. ``TENANT#{tenant_id}#...``).
Then one IAM ``dynamodb:LeadingKeys`` condition — ``TENANT#<tenant>`` or ``TENANT#<tenant>#*`` —
confines a principal to its tenant's partitions. Tenant ids are restricted to characters that
the key codec never escapes and that IAM principal-tag values may hold, so the unescaped tag
value in the policy equals the escaped value in the key.

A GSI is *tenant-safe* when every entity with keys in it starts its index partition key the
same way; queries on other GSIs are denied to tenant-scoped principals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .exceptions import ModelValidationError
from .templates import SEPARATOR, KeyTemplate, Placeholder

if TYPE_CHECKING:
    from .resolved import ResolvedEntity, ResolvedIndex

#: Characters a tenant id may use: never escaped in keys (all above ``$``, no ``%``), allowed
#: in IAM principal-tag values, and free of the IAM wildcards ``*`` and ``?``.
TENANT_ID_RE = re.compile(r"[A-Za-z0-9_.:/=+@-]{1,128}")
TENANT_ID_RULE = "1-128 characters from A-Z a-z 0-9 _ . : / = + @ - (no '#', '*', '?', '$', '%' or spaces)"


def leading_literals(template: KeyTemplate, field: str) -> tuple[str, ...] | None:
    """The literal segments before ``{field}`` when the template is ``L1#...#Lk#{field}#...``; None
    if the field is not there right after literals only."""
    literals: list[str] = []
    for segment in template.segments:
        if isinstance(segment, Placeholder):
            return tuple(literals) if segment.field == field and segment.bucket is None else None
        literals.append(segment)
    return None


def tenant_prefix(entities: Iterable[ResolvedEntity], field: str) -> str:
    """Validate the tenancy rule and return the literal key prefix before the tenant value
    (``"TENANT#"``, or ``""`` when keys start with the tenant)."""
    seen: dict[tuple[str, ...], str] = {}
    for entity in entities:
        if field not in entity.fields:
            raise ModelValidationError(
                f"tenant_field {field!r} is not a field of entity {entity.name!r}; every entity of a multi-tenant "
                "model must carry the tenant"
            )
        if entity.field(field).kind != "string":
            raise ModelValidationError(f"tenant_field {field!r} of entity {entity.name!r} must be a string field")
        literals = leading_literals(entity.pk_template, field)
        if literals is None:
            raise ModelValidationError(
                f"entity {entity.name!r} partition key {entity.pk_template.source!r} must start with literals "
                f"followed by {{{field}}} (e.g. 'TENANT#{{{field}}}#...') so IAM can confine a tenant to its keys"
            )
        seen.setdefault(literals, entity.name)
    if len(seen) > 1:
        shapes = ", ".join(f"{'#'.join(k) or '(none)'} in {v!r}" for k, v in seen.items())
        raise ModelValidationError(
            f"entities put different literals before {{{field}}} ({shapes}); one tenant prefix must fit all"
        )
    (literals,) = seen
    return "".join(f"{lit}{SEPARATOR}" for lit in literals)


def tenant_safe_gsis(
    entities: Sequence[ResolvedEntity], gsis: Iterable[ResolvedIndex], field: str, prefix: str,
) -> tuple[str, ...]:
    """Names of GSIs whose partition keys all start with ``prefix`` + the tenant (LSIs share
    the table's partition key and are always safe)."""
    safe = []
    for index in gsis:
        keys = [key for e in entities if (key := e.indexes.get(index.name)) is not None]
        ok = True
        for key in keys:
            literals = leading_literals(key.pk_template, field)
            if literals is None or "".join(f"{lit}{SEPARATOR}" for lit in literals) != prefix:
                ok = False
        if ok and keys:
            safe.append(index.name)
    return tuple(safe)
