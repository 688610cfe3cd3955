"""Errors raised by the runtime client.

Every error names the offending value and the rule it broke. Errors that wrap an AWS
``ClientError`` keep it as ``__cause__`` and expose the AWS error code as ``code``.
"""

from __future__ import annotations

from typing import Any


class RuntimeClientError(Exception):
    """Base class of every error raised by :mod:`constructs_lib.runtime`."""


class KeyValueError(RuntimeClientError, ValueError):
    """A value cannot be encoded into (or decoded from) a key.

    Raised for empty strings, wrong types, numbers that would not sort, naive datetimes,
    strings that are not valid UTF-8, and keys that do not match their template.
    """


class SettingsError(RuntimeClientError, ValueError):
    """A client or a call option was given a value against its rule: an empty table name, a
    ``limit`` that is not a positive int, a consistent read of a GSI, a cursor key too short,
    an unknown retry mode or a missing environment variable. The message names the value and
    the rule."""


class UnknownFieldError(KeyValueError, TypeError):
    """A call named a field or option the entity, key or access pattern does not take (e.g. a
    non-key field in a key, a misspelt query option). Raised before any AWS call; the message
    lists what is accepted."""


class ItemValidationError(RuntimeClientError, ValueError):
    """An item or attribute update breaks a rule of the data model."""


class UpdateRejectedError(ItemValidationError):
    """A partial update cannot keep the derived keys consistent (e.g. a template input is
    changed without the other inputs that template needs)."""


class UnknownAccessPatternError(RuntimeClientError, LookupError):
    """A query named an access pattern the model does not declare."""


class CursorError(RuntimeClientError, ValueError):
    """A pagination cursor is malformed or belongs to another query."""


class DynamoDBError(RuntimeClientError):
    """An AWS call failed. ``code`` is the AWS error code; ``__cause__`` the original error."""

    def __init__(self, message: str, *, code: str | None = None, operation: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.operation = operation


class ConditionFailedError(DynamoDBError):
    """A condition expression was not met (e.g. create-only put of an existing item)."""

    #: The stored item (wire format) DynamoDB returned with the failure, or None; set by the AWS-call
    #: seam (``_aws.translate``) only, so read it with ``getattr(exc, "old_item", None)``.
    old_item: dict[str, Any] | None

    def __init__(self, message: str, *, key: dict[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.key = key


class ItemExistsError(ConditionFailedError):
    """``put(..., create_only=True)`` found an item with the same key."""


class VersionConflictError(ConditionFailedError):
    """Optimistic locking failed: the stored version is not the expected one."""

    def __init__(self, message: str, *, expected: int | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.expected = expected


class ConditionNotMetError(ConditionFailedError):
    """The caller's own ``condition=`` was not met (the model's conditions — version, existence —
    held). ``item`` is the stored item (decoded) the condition was evaluated against, or None
    when there was none; ``condition`` the condition as given."""

    def __init__(self, message: str, *, item: dict[str, Any] | None = None, condition: Any = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.item = item
        self.condition = condition


class InvalidConditionError(RuntimeClientError, ValueError, TypeError):
    """A condition, filter or projection is built against its rules: a malformed attribute path,
    a value that cannot match (``None``, an undeclared choice, a negative size), a condition used
    as a bool (``and``/``or``/chained comparisons instead of ``&``/``|``/``between``), or a
    filter where the read has none (GetItem). Raised before any call; the message names it."""


class UnknownAttributeError(UnknownFieldError):
    """A condition, filter or projection names an attribute the entity's items cannot carry: an
    attribute the model manages (key attributes, the entity attribute), one a non-``ALL`` index
    does not project, or one an entity declaring its ``attributes`` does not declare.
    ``attribute`` and ``entity`` name them."""

    def __init__(self, message: str, *, attribute: str, entity: str) -> None:
        super().__init__(message)
        self.attribute = attribute
        self.entity = entity


class TransactionCanceledError(DynamoDBError):
    """A transaction was cancelled; ``reasons`` lists one cancellation reason per action."""

    def __init__(self, message: str, *, reasons: list[dict[str, Any]] | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.reasons = reasons or []


class BatchIncompleteError(DynamoDBError):
    """A batch call did not complete: unprocessed keys/items remained after every retry, or
    DynamoDB refused a chunk.

    ``unprocessed`` holds what was not done and ``written`` (batch writes) what was, so the
    caller can decide; nothing is dropped silently. When DynamoDB refused a chunk, the refusal
    is ``__cause__``.
    """

    def __init__(
        self, message: str, *, unprocessed: list[Any] | None = None, written: list[Any] | None = None, **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.unprocessed = unprocessed or []
        self.written = written or []


class ItemNotFoundError(ConditionFailedError):
    """An update or delete that requires the item to exist found none."""


class IdempotencyKeyReusedError(RuntimeClientError, ValueError):
    """An idempotency key was reused for a different operation (e.g. another increment amount,
    or a transaction's ``client_request_token`` for other writes)."""


class IdempotencyTokenConflictError(DynamoDBError):
    """DynamoDB answered a ClientRequestToken as another request's (IdempotentParameterMismatch)
    and nothing on the table says this request was applied, even after a retry with a fresh token:
    the request was not applied."""


class RedactionError(RuntimeClientError, ValueError):
    """Redacted attributes cannot be protected as configured — e.g. ``redaction="hash"`` with
    no salt. Raised instead of hashing without a secret or storing the clear value."""


class ImageOmittedError(RuntimeClientError, LookupError):
    """A point-in-time read needs an audit record's ``image``, but the record was too large to
    keep it (``image_omitted``), so the item's state at that time cannot be rebuilt."""


class TenantAccessError(RuntimeClientError, PermissionError):
    """A tenant-scoped client was asked to touch another tenant's keys (or a GSI that mixes tenants)."""


class OutOfScopeError(RuntimeClientError, PermissionError):
    """A function declared an access scope (``TableFunction(patterns=..., writes=...)``) and asked
    for a pattern, entity, write or tenant outside it; refused before any call reaches AWS."""


class TrafficInsightError(RuntimeClientError, ValueError):
    """Traffic recording or its report was configured against a rule (a sample rate outside
    (0, 1], a negative threshold, one recorder for two tables…); the message names the value."""


class SnapshotFileError(TrafficInsightError):
    """A traffic snapshot file cannot be read or written: it is missing, not JSON, of another
    format or version, or a field breaks its rule. The message names the file (``path``) and
    the problem."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"traffic snapshot {path}: {problem}")
        self.path = path
        self.problem = problem


class TrafficInsightNotBundledError(RuntimeClientError, ImportError):
    """Traffic recording was asked for (``record_traffic``, ``traffic=``, a name of
    :mod:`constructs_lib.runtime.stats`) in a function whose asset leaves the recorder out: it
    ships only with ``TableFunction(..., traffic_insight=True)``. An ``ImportError`` too, so code
    probing for the feature keeps working; the message names the option."""


class ModelMismatchError(RuntimeClientError):
    """The model bundled with a function is not the model the deployed table was designed for
    (their fingerprints differ, see :mod:`constructs_lib.runtime.contract`). Raised before any
    request, so no key of the wrong shape is ever written. ``bundled`` and ``deployed`` hold the
    two fingerprints."""

    def __init__(self, message: str, *, bundled: str, deployed: str) -> None:
        super().__init__(message)
        self.bundled = bundled
        self.deployed = deployed


class ContractBreakError(ModelMismatchError):
    """The table's published contract changed an entity or index this function uses (its slice,
    :mod:`constructs_lib.runtime.contract`). Raised at cold start, before any request. ``breaks``
    holds one :class:`~constructs_lib.model.slices.SliceBreak` per entity or index, naming what
    changed old → new."""

    def __init__(self, message: str, *, bundled: str, deployed: str, breaks: list[Any]) -> None:
        super().__init__(message, bundled=bundled, deployed=deployed)
        self.breaks = breaks


class ContractUnavailableError(RuntimeClientError):
    """The table's published contract (an SSM parameter) could not be read or understood, so the
    function cannot know whether its slice still holds; it refuses rather than skip the check.
    ``parameter`` names the parameter."""

    def __init__(self, message: str, *, parameter: str) -> None:
        super().__init__(message)
        self.parameter = parameter


class ForeignItemError(RuntimeClientError, LookupError):
    """The item stored at an entity's table key belongs to another entity (or to none): keys of
    two layouts collide (an item written outside the model, or a model changed under stored
    items). A get refuses to read it as the entity asked for, rather than return it or hide it."""


class IndexNotReadyError(RuntimeClientError, LookupError):
    """An access pattern reads an index the table does not have yet (a model rollout creates
    GSIs one deployment at a time); querying it would fail or silently return nothing."""


class ReplicatedDeleteError(DynamoDBError):
    """A delete on a replicated table gave up: other writes replaced its region stamp between the
    stamp and the delete in every round (``runtime/replication.py``); nothing was deleted."""


class BackfillError(RuntimeClientError):
    """A backfill job cannot start or continue (bad spec, another job's checkpoints, ...)."""


class TransactionConditionNotMetError(ConditionNotMetError, TransactionCanceledError):
    """A transaction was cancelled because one action's own ``condition=`` was not met: both a
    :class:`ConditionNotMetError` (``item``, ``key``, ``condition``) and a
    :class:`TransactionCanceledError` (``reasons``). ``action`` is the failing action's index."""

    def __init__(self, message: str, *, action: int, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.action = action
