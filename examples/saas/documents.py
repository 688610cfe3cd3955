"""Versioned documents: sort-key versions, optimistic locking and a history of versions.

The classic DynamoDB layout, on the model of :mod:`examples.saas.model`: a document is one
item collection holding its **latest** item (``SK = DOC``, with the current ``version``) and one
immutable **snapshot** per version (``SK = V#000001``, ``V#000002``, ...).

Saving version ``n + 1`` is *one* ``TransactWriteItems`` of two actions:

1. ``Put`` the snapshot ``V#<n+1>`` with ``attribute_not_exists(PK)`` (snapshots are never
   overwritten);
2. ``Update`` the latest item with ``version = :n AND attribute_exists(PK)`` (the optimistic
   lock) setting the new content, the editor, and ``version = n + 1``.

Either both are written or neither: a writer holding a stale version gets
:class:`DocumentConflictError` (with the stored version, read from the cancellation reason) and
the table is unchanged. :meth:`DocumentStore.edit` is the read-modify-write loop around it:
re-read, re-apply the change, retry — a bounded number of times.

Every call goes through a tenant-scoped client (``TableClient.for_tenant``), so a store can only
build keys of its tenant; the snapshots of a document are read newest first with one Query
(``begins_with(SK, "V#")``, descending) and one version with one GetItem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from constructs_lib.runtime import (
    ItemExistsError,
    ItemNotFoundError,
    ItemValidationError,
    TenantAccessError,
    TransactionCanceledError,
    VersionConflictError,
)
from constructs_lib.runtime.tenant import TenantTableClient
from examples.saas.model import ACTOR_ATTRIBUTE, VERSION_ATTRIBUTE, VERSION_WIDTH

__all__ = [
    "Document",
    "DocumentConflictError",
    "DocumentExistsError",
    "DocumentNotFoundError",
    "DocumentStore",
    "Snapshot",
    "VersionPage",
]

#: The largest version a snapshot key can hold (``V#999999``).
MAX_VERSION = 10**VERSION_WIDTH - 1
#: The cancellation-reason code of a failed condition inside TransactWriteItems.
CONDITION_FAILED = "ConditionalCheckFailed"
#: The cancellation-reason code of a transaction that collided with another one on an item.
TRANSACTION_CONFLICT = "TransactionConflict"


# Errors ---------------------------------------------------------------------------------------------
class DocumentConflictError(VersionConflictError):
    """Saving with ``expected_version`` failed because the document moved on; nothing was written.

    Attributes
    ----------
    doc_id : str
        The document.
    expected : int
        The version the writer based its change on.
    current : int or None
        The stored version when the save was refused (None when another transaction on the
        document was in flight, so the stored version is not known).
    """

    def __init__(self, message: str, *, doc_id: str, current: int | None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.doc_id = doc_id
        self.current = current


class DocumentExistsError(ItemExistsError):
    """``create`` found a document with the same id; nothing was written."""


class DocumentNotFoundError(ItemNotFoundError):
    """``save`` of a document that does not exist; nothing was written."""


# Values ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Document:
    """The latest state of a document (the ``Doc`` item)."""

    tenant_id: str
    doc_id: str
    version: int
    title: str
    body: str
    owner: str
    status: str
    updated_by: str
    updated_at: str

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Document:
        return cls(
            tenant_id=item["tenant_id"], doc_id=item["doc_id"], version=int(item[VERSION_ATTRIBUTE]),
            title=item.get("title", ""), body=item.get("body", ""), owner=item["owner"], status=item["status"],
            updated_by=item.get(ACTOR_ATTRIBUTE, ""), updated_at=item.get("updated_at", ""),
        )


@dataclass(frozen=True)
class Snapshot:
    """One immutable version of a document (a ``DocVersion`` item)."""

    tenant_id: str
    doc_id: str
    version: int
    title: str
    body: str
    updated_by: str
    saved_at: str

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Snapshot:
        return cls(
            tenant_id=item["tenant_id"], doc_id=item["doc_id"], version=int(item["version"]),
            title=item["title"], body=item["body"], updated_by=item[ACTOR_ATTRIBUTE], saved_at=item["saved_at"],
        )


@dataclass(frozen=True)
class VersionPage:
    """One page of a document's snapshots, newest first; ``cursor`` is None on the last page."""

    snapshots: list[Snapshot]
    cursor: str | None

    def __iter__(self) -> Any:
        return iter(self.snapshots)

    def __len__(self) -> int:
        return len(self.snapshots)


def _now() -> datetime:
    return datetime.now(UTC)


def _text(name: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        rule = "a str" if allow_empty else "a non-empty str"
        raise ItemValidationError(f"document {name} {value!r} must be {rule}")
    return value


def _version(name: str, value: Any, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_VERSION:
        raise ItemValidationError(
            f"{name} {value!r} must be an int from {minimum} to {MAX_VERSION} (versions are {VERSION_WIDTH} "
            "zero-padded digits in the sort key)"
        )
    return value


# The store ------------------------------------------------------------------------------------------
class DocumentStore:
    """Create, version and read the documents of one tenant.

    Parameters
    ----------
    table : TenantTableClient
        A client confined to the tenant (``TableClient(...).for_tenant("acme")``); a plain
        ``TableClient`` is refused, so a store can never build another tenant's keys.
    clock : callable, optional
        Returns the aware ``datetime`` written as ``updated_at``/``saved_at``. Default: now, UTC.

    Raises
    ------
    TenantAccessError
        If ``table`` is not tenant-scoped.
    """

    def __init__(self, table: TenantTableClient, *, clock: Callable[[], datetime] = _now) -> None:
        if not isinstance(table, TenantTableClient):
            raise TenantAccessError(
                f"DocumentStore needs a tenant-scoped client (TableClient.for_tenant(tenant)); got a {type(table).__name__}, "
                "which could build any tenant's keys"
            )
        self.table = table
        self.tenant = table.tenant
        self._clock = clock

    def _stamp(self) -> str:
        return self._clock().astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    # Writes ---------------------------------------------------------------------------------------
    def create(
        self, doc_id: str, *, owner: str, title: str, body: str, editor: str, status: str = "DRAFT",
    ) -> Snapshot:
        """Create a document at version 1: its latest item and snapshot ``V#000001``, in one
        transaction, both ``attribute_not_exists``.

        Parameters
        ----------
        doc_id, owner, editor : str
            Non-empty. ``editor`` is recorded as ``updated_by`` (the audit trail's actor).
        title : str
            Non-empty.
        body : str
            The content (may be empty; the whole snapshot must stay under 400 KB).
        status : {"DRAFT", "REVIEW", "PUBLISHED"}, optional
            Default ``"DRAFT"``.

        Returns
        -------
        Snapshot
            Version 1 as written.

        Raises
        ------
        DocumentExistsError
            A document with this id exists (nothing written).
        ItemValidationError, KeyValueError
            Bad input, before any call.
        """
        for name, value in (("doc_id", doc_id), ("owner", owner), ("title", title), ("editor", editor)):
            _text(name, value)
        _text("body", body, allow_empty=True)
        now = self._stamp()
        snapshot = self._snapshot(doc_id, 1, title, body, editor, now)
        tx = self.table.transaction()
        tx.put("Doc", {"tenant_id": self.tenant, "doc_id": doc_id, "owner": owner, "status": status, "title": title,
                       "body": body, ACTOR_ATTRIBUTE: editor, "updated_at": now}, create_only=True)
        tx.put("DocVersion", snapshot, create_only=True)
        try:
            tx.commit()
        except TransactionCanceledError as exc:
            if any(r.get("Code") == CONDITION_FAILED for r in exc.reasons):
                raise DocumentExistsError(
                    f"document {doc_id!r} of tenant {self.tenant!r} already exists; nothing was written",
                    key=self.table.keys("Doc", doc_id=doc_id), code=exc.code, operation=exc.operation,
                ) from exc
            raise
        return Snapshot.from_item(snapshot)

    def save(
        self, doc_id: str, *, expected_version: int, title: str, body: str, editor: str, status: str | None = None,
    ) -> Snapshot:
        """Save version ``expected_version + 1``: one transaction puts its snapshot
        (``attribute_not_exists``) and updates the latest item under ``version = :expected``.

        Parameters
        ----------
        doc_id : str
            The document.
        expected_version : int
            The version this change is based on (1..999,998), as read from :meth:`latest`.
        title, body, editor : str
            The new content (title non-empty, body may be empty) and who made it (non-empty).
        status : {"DRAFT", "REVIEW", "PUBLISHED"}, optional
            A new lifecycle status of the latest item (its ``ByStatus`` keys are recomputed in
            the same update). Default None: unchanged.

        Returns
        -------
        Snapshot
            The new version as written.

        Raises
        ------
        DocumentConflictError
            The stored version is not ``expected_version`` (or another transaction on the
            document was in flight); nothing was written. Re-read and retry.
        DocumentNotFoundError
            No such document; nothing was written.
        ItemValidationError, KeyValueError
            Bad input, before any call.
        """
        _text("doc_id", doc_id)
        _version("expected_version", expected_version, minimum=1)
        new = _version("new version", expected_version + 1)
        _text("title", title)
        _text("body", body, allow_empty=True)
        _text("editor", editor)
        now = self._stamp()
        snapshot = self._snapshot(doc_id, new, title, body, editor, now)
        changes: dict[str, Any] = {"title": title, "body": body, ACTOR_ATTRIBUTE: editor, "updated_at": now}
        if status is not None:
            changes["status"] = status
        tx = self.table.transaction()
        tx.put("DocVersion", snapshot, create_only=True)
        tx.update("Doc", {"tenant_id": self.tenant, "doc_id": doc_id}, set=changes, expected_version=expected_version)
        try:
            tx.commit()
        except TransactionCanceledError as exc:
            error = self._save_error(doc_id, expected_version, exc)
            if error is exc:
                raise
            raise error from exc
        return Snapshot.from_item(snapshot)

    def edit(
        self, doc_id: str, change: Callable[[Document], tuple[str, str]], *, editor: str, attempts: int = 3,
        on_conflict: Callable[[DocumentConflictError], None] | None = None,
    ) -> Snapshot:
        """Read-modify-write with optimistic locking: read the latest (strongly consistent),
        compute the new ``(title, body)`` with ``change``, :meth:`save`; on a conflict re-read
        and re-apply ``change`` to the newer version, at most ``attempts`` times.

        Parameters
        ----------
        change : callable
            ``change(latest) -> (title, body)``; called once per attempt, on fresh data.
        editor : str
            Who makes the change.
        attempts : int, optional
            Saves tried before giving up, 1..10. Default 3.
        on_conflict : callable, optional
            Called with each conflict before retrying (for logging). Default None.

        Raises
        ------
        DocumentConflictError
            Every attempt lost the race (the last conflict).
        DocumentNotFoundError
            No such document.
        """
        if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= 10:
            raise ItemValidationError(f"attempts {attempts!r} must be an int from 1 to 10")
        for attempt in range(1, attempts + 1):
            latest = self.latest(doc_id)
            if latest is None:
                raise DocumentNotFoundError(f"document {doc_id!r} of tenant {self.tenant!r} does not exist",
                                            key=self.table.keys("Doc", doc_id=doc_id))
            title, body = change(latest)
            try:
                return self.save(doc_id, expected_version=latest.version, title=title, body=body, editor=editor)
            except DocumentConflictError as conflict:
                if attempt == attempts:
                    raise
                if on_conflict is not None:
                    on_conflict(conflict)
        raise AssertionError("unreachable")  # pragma: no cover

    # Reads ----------------------------------------------------------------------------------------
    def latest(self, doc_id: str, *, consistent: bool = True) -> Document | None:
        """Access pattern "document latest": one GetItem of the latest item (strongly consistent
        by default, as a read before a conditional write should be). None if absent."""
        page = self.table.query("document latest", doc_id=_text("doc_id", doc_id), consistent=consistent)
        return Document.from_item(page.items[0]) if page.items else None

    def versions(self, doc_id: str, *, limit: int | None = None, cursor: str | None = None) -> VersionPage:
        """Access pattern "document versions newest first": one Query ``begins_with(SK, "V#")``,
        descending, on the document's partition. ``limit`` snapshots per page (default: all);
        pass the returned ``cursor`` back for the next page."""
        page = self.table.query("document versions newest first", doc_id=_text("doc_id", doc_id), limit=limit,
                                cursor=cursor, consistent=True)
        return VersionPage([Snapshot.from_item(i) for i in page.items], page.cursor)

    def at_version(self, doc_id: str, version: int) -> Snapshot | None:
        """Access pattern "document at version": one GetItem of snapshot ``V#<version>``. None if absent."""
        page = self.table.query("document at version", doc_id=_text("doc_id", doc_id),
                                version=_version("version", version), consistent=True)
        return Snapshot.from_item(page.items[0]) if page.items else None

    # Helpers --------------------------------------------------------------------------------------
    def _snapshot(self, doc_id: str, version: int, title: str, body: str, editor: str, now: str) -> dict[str, Any]:
        return {"tenant_id": self.tenant, "doc_id": doc_id, "version": version, "title": title, "body": body,
                ACTOR_ATTRIBUTE: editor, "saved_at": now}

    def _save_error(self, doc_id: str, expected: int, exc: TransactionCanceledError) -> Exception:
        """The typed error a cancelled save implies, from the per-action cancellation reasons
        (action 0: the snapshot put, action 1: the conditional update of the latest item)."""
        reasons = list(exc.reasons) + [{}, {}]
        snapshot_reason, latest_reason = reasons[0], reasons[1]
        key = self.table.keys("Doc", doc_id=doc_id)
        common = {"key": key, "code": exc.code, "operation": exc.operation, "expected": expected, "doc_id": doc_id}
        where = f"document {doc_id!r} of tenant {self.tenant!r}"
        if latest_reason.get("Code") == CONDITION_FAILED:
            stored = latest_reason.get("Item")
            if not stored:
                return DocumentNotFoundError(f"{where} does not exist; nothing was written", key=key, code=exc.code,
                                             operation=exc.operation)
            current = int(stored[VERSION_ATTRIBUTE]["N"]) if VERSION_ATTRIBUTE in stored else None
            return DocumentConflictError(
                f"{where} is at version {current}, not the expected {expected}: it was saved concurrently; "
                "nothing was written — re-read it and retry", current=current, **common,
            )
        if any(r.get("Code") == TRANSACTION_CONFLICT for r in reasons):
            return DocumentConflictError(
                f"{where}: another write to it was in progress; nothing was written — re-read it and retry",
                current=None, **common,
            )
        if snapshot_reason.get("Code") == CONDITION_FAILED:
            return DocumentConflictError(
                f"{where}: snapshot of version {expected + 1} already exists; nothing was written — re-read it "
                "and retry", current=None, **common,
            )
        return exc
