"""The IAM statements an :class:`~constructs_lib.model.AccessScope` needs, derived from the model.

Pure Python (no CDK): ``ModelBoundTable.grant_scope`` turns each :class:`ScopeStatement` into a
policy statement. Per statement: the item actions, one resource (the table or one index), the
``dynamodb:LeadingKeys`` patterns (the partition-key templates of the declared entities on that
resource, placeholders as ``*``, the tenant as a literal, a principal tag or ``*``), and whether
the actions are allowed only inside ``TransactWriteItems``. Rationale:
``docs/adr/0100-least-privilege-scopes.md``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.exceptions import AccessScopeError
from ..model.scope import ANY_TENANT, AccessScope
from ..model.templates import SEPARATOR, Placeholder

if TYPE_CHECKING:
    from ..model import Model
    from ..model.templates import KeyTemplate

#: What each declared write needs: (IAM action, allowed only inside TransactWriteItems).
WRITE_ACTIONS: dict[str, tuple[str, bool]] = {
    "put": ("dynamodb:PutItem", False),
    "update": ("dynamodb:UpdateItem", False),
    "delete": ("dynamodb:DeleteItem", False),
    "transaction_put": ("dynamodb:PutItem", True),
    "transaction_update": ("dynamodb:UpdateItem", True),
    "transaction_delete": ("dynamodb:DeleteItem", True),
    "condition_check": ("dynamodb:ConditionCheckItem", False),
    "batch_put": ("dynamodb:BatchWriteItem", False),
    "batch_delete": ("dynamodb:BatchWriteItem", False),
}
#: ``dynamodb:EnclosingOperation`` value of the writes inside a transaction.
TRANSACT_WRITE = "TransactWriteItems"


@dataclass(frozen=True)
class ScopeStatement:
    """One allow statement: ``actions`` on the table (``index`` None) or one index, for keys
    matching ``leading_keys``; ``transaction_only`` adds the EnclosingOperation condition."""

    actions: tuple[str, ...]
    index: str | None
    leading_keys: tuple[str, ...]
    transaction_only: bool = False

    @property
    def writes(self) -> bool:
        return any(a not in ("dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem") for a in self.actions)


def _iam_literal(text: str) -> str:
    """A key literal inside a ``StringLike`` pattern: IAM's wildcards escaped (``${*}``, ``${?}``)."""
    return text.replace("*", "${*}").replace("?", "${?}")


def leading_key_pattern(model: Model, scope: AccessScope, entity: str, template: KeyTemplate, where: str) -> str:
    """The ``dynamodb:LeadingKeys`` pattern of one partition-key template: literals as they are,
    the tenant field as the scope's tenant, every other placeholder ``*``.

    Raises :class:`AccessScopeError` when the template starts with a (non-tenant) field: no
    literal prefix then confines the keys, and a bare ``*`` would grant every partition."""
    parts: list[str] = []
    for n, segment in enumerate(template.segments):
        if isinstance(segment, Placeholder):
            if model.tenant_field is not None and segment.field == model.tenant_field and segment.bucket is None:
                value = scope.tenant if scope.tenant != ANY_TENANT else "*"
                assert value is not None
                parts.append(value)
            elif n == 0:
                raise AccessScopeError(
                    f"entity {entity!r} partition key {template.source!r} ({where}) starts with field "
                    f"{{{segment.field}}}: no literal prefix can confine dynamodb:LeadingKeys to its items, and the "
                    f"grant would cover every partition. Give the template a literal prefix (e.g. "
                    f"'{entity.upper()}#{{{segment.field}}}'), or leave this entity out of the scope and grant the "
                    "table coarsely (TableFunction access=...)"
                )
            else:
                parts.append("*")
        else:
            parts.append(_iam_literal(segment))
    return SEPARATOR.join(parts)


def _pk_template(model: Model, entity: str, index: str | None) -> KeyTemplate:
    ent = model.entity(entity)
    return ent.pk_template if index is None else ent.indexes[index].pk_template


def derive_statements(model: Model, scope: AccessScope) -> list[ScopeStatement]:
    """The statements ``scope`` needs on ``model``'s table, in a stable order (validates the scope)."""
    scope.validate(model)
    # (index, action, transaction_only) -> leading-key patterns
    wanted: dict[tuple[str | None, str, bool], set[str]] = defaultdict(set)

    def add(index: str | None, action: str, tx: bool, entity: str) -> None:
        where = "table" if index is None else f"index {index!r}"
        wanted[(index, action, tx)].add(
            leading_key_pattern(model, scope, entity, _pk_template(model, entity, index), where)
        )

    for name in scope.patterns:
        resolved = model.resolved_patterns[name]
        index = resolved.index.name if resolved.index is not None else None
        for entity in resolved.entities:
            add(index, f"dynamodb:{resolved.operation}", False, entity)
    for entity in scope.batch_gets:
        add(None, "dynamodb:BatchGetItem", False, entity)
    for entity, kinds in scope.writes.items():
        for kind in kinds:
            action, tx = WRITE_ACTIONS[kind]
            add(None, action, tx, entity)
    # A transaction-only grant adds nothing where the plain grant already covers the same keys.
    for (index, action, tx), keys in list(wanted.items()):
        if tx:
            keys -= wanted.get((index, action, False), set())
            if not keys:
                del wanted[(index, action, tx)]
    grouped: dict[tuple[str | None, bool, tuple[str, ...]], list[str]] = defaultdict(list)
    for (index, action, tx), keys in wanted.items():
        grouped[(index, tx, tuple(sorted(keys)))].append(action)
    return [
        ScopeStatement(actions=tuple(sorted(actions)), index=index, leading_keys=keys, transaction_only=tx)
        for (index, tx, keys), actions in sorted(grouped.items(), key=lambda kv: (kv[0][0] or "", kv[0][1], kv[0][2]))
    ]
