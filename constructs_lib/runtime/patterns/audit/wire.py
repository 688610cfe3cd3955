"""BatchWriteItem with a body the audit writer serialized itself, sent through a botocore client.

The audit item is built in DynamoDB JSON from the stream's typed images, so its JSON text is
exactly what botocore would serialize (same ``json.dumps`` settings, binary values as canonical
base64). :func:`send_body` hands botocore a placeholder request whose only item has no key (a
server would refuse it) and swaps in the real body in ``before-call``; the endpoint, signing,
retries, the client's own hooks and response parsing stay botocore's. See
docs/adr/0059-audit-items-in-wire-format.md.
"""

from __future__ import annotations

import contextvars
import json
import weakref
from typing import TYPE_CHECKING, Any

from ... import _aws

if TYPE_CHECKING:
    from botocore.client import BaseClient

#: The before-call event and the unique id of the handler this module registers on a client.
EVENT, HANDLER_ID = "before-call.dynamodb.BatchWriteItem", "constructs_lib.audit.wire-body"
#: The body of the BatchWriteItem call in progress on this thread/task, and whether it was used.
_BODY: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("constructs_lib_audit_body", default=None)


def usable(client: Any) -> bool:
    """True for a botocore DynamoDB client (it emits ``before-call``) that has not failed to take a
    body; False for anything else (a test double, say): send it request items."""
    from botocore.client import BaseClient

    return isinstance(client, BaseClient) and client.meta.service_model.service_name == "dynamodb" \
        and client not in _REFUSED


def body(table: str, item_texts: list[str]) -> bytes:
    """The BatchWriteItem body botocore makes of ``{table: [{"PutRequest": {"Item": item}}, ...]}``,
    each ``item_texts`` entry being ``json.dumps(item)``."""
    puts = ", ".join(f'{{"PutRequest": {{"Item": {text}}}}}' for text in item_texts)
    return f'{{"RequestItems": {{{json.dumps(table)}: [{puts}]}}}}'.encode()


def _swap(params: dict[str, Any], **_: Any) -> None:
    pending = _BODY.get()
    if pending is not None:
        params["body"], pending[1] = pending[0], True


#: Clients that answered without emitting ``before-call`` (never seen: a guard for other botocore versions).
_REFUSED: weakref.WeakSet[Any] = weakref.WeakSet()


class NotSwapped(Exception):
    """The client never emitted ``before-call``: the placeholder went out instead (and was refused)."""


def send_body(client: BaseClient, table: str, payload: bytes) -> dict[str, Any]:
    """``client.batch_write_item`` with ``payload`` as the body; the parsed response.

    Raises what :func:`_aws.call` raises (DynamoDBError for an AWS error), or :class:`NotSwapped`.
    """
    client.meta.events.register(EVENT, _swap, unique_id=HANDLER_ID)
    pending: list[Any] = [payload, False]
    token = _BODY.set(pending)
    try:
        response = _aws.call(client, "batch_write_item", RequestItems={table: [{"PutRequest": {"Item": {}}}]})
    except Exception as exc:
        if not pending[1]:
            _REFUSED.add(client)
            raise NotSwapped(str(exc)) from exc
        raise
    finally:
        _BODY.reset(token)
    if not pending[1]:
        _REFUSED.add(client)
        raise NotSwapped("the placeholder request was answered")
    return response
