"""``Transaction``: up to 100 writes of one table committed atomically (TransactWriteItems).

Each action is built by the same :mod:`.request_params` builders as the single-item call, so a
transactional put enforces exactly what a plain put does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from . import _aws, request_params, tokens
from .exceptions import (
    DynamoDBError,
    ItemValidationError,
    TransactionCanceledError,
    TransactionConditionNotMetError,
    UpdateRejectedError,
)
from .limits import TRANSACTION_LIMIT

if TYPE_CHECKING:
    from ..model import ResolvedEntity as Entity
    from .items import ItemMapper
    from .replication import Replication
    from .scope import ScopeGuard


class TableClient(Protocol):
    """What a transaction needs of the table client (``TableClient`` is one)."""

    client: Any
    hooks: tuple[_aws.CallHook, ...]
    mapper: ItemMapper
    table_name: str
    guard: ScopeGuard | None
    replication: Replication | None

    def entity(self, name: str) -> Entity: ...

    def _stamped(self, operation: str, params: Mapping[str, Any]) -> dict[str, Any]: ...


class Transaction:
    """Up to 100 writes committed with one TransactWriteItems.

    Each ``put``/``update``/``delete``/``condition_check`` takes the same arguments as the
    single-item call. ``client_request_token`` makes the commit idempotent for 10 minutes:
    a retried commit with the same token (and the same writes) is applied once; with other
    writes it raises :class:`IdempotencyKeyReusedError`. The token sent to DynamoDB is derived
    from this one and the table (``request_token``), so one token used on two tables names two
    transactions (ADR 0035).
    """

    def __init__(self, table: TableClient, client_request_token: str | None) -> None:
        self._table = table
        self._token = client_request_token
        #: The ClientRequestToken sent (None without ``client_request_token``).
        self.request_token = None if client_request_token is None else tokens.transaction_token(
            table.client, table.table_name, client_request_token)
        self._requests: list[request_params.Request] = []
        self.committed = False

    def _add(self, req: request_params.Request) -> Transaction:
        if self.committed:
            raise ItemValidationError("transaction already committed; start a new one")
        ident = (req.entity, tuple(sorted(req.key.items())))
        if any((r.entity, tuple(sorted(r.key.items()))) == ident for r in self._requests):
            raise ItemValidationError(f"transaction already has an action on {req.entity} {req.key!r}; one per item")
        if len(self._requests) >= TRANSACTION_LIMIT:
            raise ItemValidationError(f"a transaction holds at most {TRANSACTION_LIMIT} actions")
        self._requests.append(req)
        return self

    def _check(self, kind: str, entity: str, values: Mapping[str, Any]) -> None:
        guard = self._table.guard
        if guard is not None:
            guard.write(kind, self._table.entity(entity).name, values)

    def put(self, entity: str, item: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("transaction_put", entity, item)
        req = request_params.put(t.mapper, t.table_name, t.entity(entity), item, **kw)
        if req.kind == "continue_version":
            raise UpdateRejectedError(
                f"transaction put of versioned {entity} {req.key!r} needs create_only=True or expected_version=N: "
                "a transaction cannot read the stored version to continue it"
            )
        return self._add(req)

    def update(self, entity: str, key: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("transaction_update", entity, key)
        return self._add(request_params.update(t.mapper, t.table_name, t.entity(entity), key, **kw))

    def delete(self, entity: str, key: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("transaction_delete", entity, key)
        if t.replication is not None:
            raise UpdateRejectedError(
                f"transaction delete of {entity} {dict(key)!r} on a table replicated to "
                f"{', '.join(t.replication.regions)}: a delete inside a transaction cannot name its region "
                "(stream consumers would not know where it was made); use TableClient.delete()"
            )
        return self._add(request_params.delete(t.mapper, t.table_name, t.entity(entity), key, **kw))

    def condition_check(self, entity: str, key: Mapping[str, Any], **kw: Any) -> Transaction:
        t = self._table
        self._check("condition_check", entity, key)
        return self._add(request_params.condition_check(t.mapper, t.table_name, t.entity(entity), key, **kw))

    def commit(self) -> None:
        if not self._requests:
            raise ItemValidationError("transaction has no actions")
        items = []
        for req in self._requests:
            params = self._table._stamped(req.operation, req.params)
            if "ConditionExpression" in params:
                params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
            items.append({req.operation: params})
        extra = {"ClientRequestToken": self.request_token} if self.request_token else {}
        hooks = self._table.hooks
        # Names the entity of each action for observers of the AWS-call seam (only when one is attached).
        token = _aws.WRITE_ENTITIES.set([(r.entity, r.key) for r in self._requests]) if hooks else None
        try:
            _aws.call(self._table.client, "transact_write_items", hooks=hooks, TransactItems=items, **extra)
        except TransactionCanceledError as exc:
            details = []
            for req, reason in zip(self._requests, exc.reasons, strict=False):
                if reason.get("Code") not in (None, "None"):
                    details.append(f"{req.operation} {req.entity} {req.key!r}: {reason.get('Code')}")
            exc.args = (f"{exc.args[0]} [{'; '.join(details)}]",)
            self._raise_condition_not_met(exc)
            raise
        except DynamoDBError as exc:
            reused = tokens.token_reused(exc, self._token or "", self._table.table_name)
            if reused is None:
                raise
            raise reused from exc
        finally:
            if token is not None:
                _aws.WRITE_ENTITIES.reset(token)
        self.committed = True

    def _raise_condition_not_met(self, exc: TransactionCanceledError) -> None:
        """Raise :class:`TransactionConditionNotMetError` when an action's own ``condition=``
        failed (the model's conditions on it held on the stored item its reason carries)."""
        for number, (req, reason) in enumerate(zip(self._requests, exc.reasons, strict=False)):
            if reason.get("Code") != "ConditionalCheckFailed" or req.condition is None:
                continue
            wire = reason.get("Item")
            old = _aws.deserialize(wire) if wire else None
            if req.user_condition_failed(old):
                raise TransactionConditionNotMetError(
                    f"{exc.args[0]}: action {number}: condition {req.condition!r} not met",
                    action=number, item=self._table.mapper.decode(old) if old else None, condition=req.condition,
                    key=req.key, reasons=exc.reasons, code=exc.code, operation=exc.operation,
                ) from exc

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
