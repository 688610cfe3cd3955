"""ClientRequestTokens derived from the table a request writes to and the request itself.

DynamoDB remembers a token per account and region (DynamoDB Local: per server) for 10
minutes, whatever the table, so a token must name the table as well as the request
(see docs/adr/0035-client-request-tokens-name-the-table-and-the-request.md).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from .exceptions import DynamoDBError, IdempotencyKeyReusedError, SettingsError

if TYPE_CHECKING:
    from botocore.client import BaseClient

#: Version of the derivation: changing what goes into a token changes this.
TOKEN_FORMAT = "constructs_lib/client-request-token/1"
#: DynamoDB's maximum ClientRequestToken length (characters); 36 hex digits are 144 bits.
TOKEN_LENGTH = 36


def table_identity(client: BaseClient, table_name: str) -> tuple[str, str, str]:
    """What the boto3 ``client`` knows of the table: its endpoint (without a trailing ``/``), its
    region and the table name (or ARN) as given; what tokens and cursors bind. The account is
    not known without a call; a token's scope is one account already."""
    meta = getattr(client, "meta", None)
    endpoint, region = getattr(meta, "endpoint_url", None), getattr(meta, "region_name", None)
    return (endpoint.rstrip("/") if isinstance(endpoint, str) else "", region if isinstance(region, str) else "",
            table_name)


def request_token(purpose: str, identity: tuple[str, ...], request: Any) -> str:
    """A ClientRequestToken: the first 36 hex digits of SHA-256 over the canonical JSON of the
    derivation's version, ``purpose``, the table ``identity`` and ``request`` (JSON values)."""
    canonical = json.dumps([TOKEN_FORMAT, purpose, list(identity), request], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:TOKEN_LENGTH]


def transaction_token(client: BaseClient, table_name: str, client_request_token: str) -> str:
    """The token a :class:`~.client.Transaction` sends for the caller's ``client_request_token``:
    the table's identity and the caller's token, not the writes (the same token with other writes
    stays DynamoDB's IdempotentParameterMismatch, see :func:`token_reused`)."""
    if not isinstance(client_request_token, str) or not client_request_token:
        raise SettingsError(f"client_request_token {client_request_token!r} must be a non-empty string")
    request = {"client_request_token": client_request_token}
    return request_token("transaction", table_identity(client, table_name), request)


def token_reused(exc: DynamoDBError, client_request_token: str, table_name: str) -> IdempotencyKeyReusedError | None:
    """The error for a transaction whose token DynamoDB holds for other writes, else None."""
    if exc.code != "IdempotentParameterMismatchException":
        return None
    return IdempotencyKeyReusedError(
        f"client_request_token {client_request_token!r} was already used within the last 10 minutes for a "
        f"transaction with other writes on table {table_name!r}; a token names one transaction — use a new "
        "token per transaction (nothing was written)"
    )
