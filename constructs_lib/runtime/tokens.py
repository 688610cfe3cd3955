"""ClientRequestTokens derived from the table a request writes to and the request itself.

DynamoDB remembers a token per account and region (DynamoDB Local: per server) for 10
minutes, whatever the table, so a token must name the table as well as the request
(see docs/adr/0035-client-request-tokens-name-the-table-and-the-request.md).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botocore.client import BaseClient

#: Version of the derivation: changing what goes into a token changes this.
TOKEN_FORMAT = "constructs_lib/client-request-token/1"
#: DynamoDB's maximum ClientRequestToken length (characters); 36 hex digits are 144 bits.
TOKEN_LENGTH = 36


def table_identity(client: BaseClient, table_name: str) -> tuple[str, str, str]:
    """What the boto3 ``client`` knows of the table: its endpoint, its region and the table
    name (or ARN) as given. The account is not known without a call; a token's scope is one
    account already."""
    meta = getattr(client, "meta", None)
    return (str(getattr(meta, "endpoint_url", None) or ""), str(getattr(meta, "region_name", None) or ""), table_name)


def request_token(purpose: str, identity: tuple[str, ...], request: Any) -> str:
    """A ClientRequestToken: the first 36 hex digits of SHA-256 over the canonical JSON of the
    derivation's version, ``purpose``, the table ``identity`` and ``request`` (JSON values)."""
    canonical = json.dumps([TOKEN_FORMAT, purpose, list(identity), request], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:TOKEN_LENGTH]
