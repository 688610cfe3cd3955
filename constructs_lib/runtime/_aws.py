"""The one seam through which every AWS call passes.

It builds the boto3 client (injectable, retry mode configurable), converts between Python
values and DynamoDB's typed JSON, and wraps every ``ClientError`` in our own errors while
keeping the original as ``__cause__``.
"""

from __future__ import annotations

import contextvars
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack, cast

from ._records import record
from .exceptions import (
    BatchIncompleteError,
    ConditionFailedError,
    DynamoDBError,
    SettingsError,
    TransactionCanceledError,
)
from .limits import BATCH_GET_LIMIT

if TYPE_CHECKING:
    from decimal import Decimal

    from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
    from botocore.client import BaseClient
    from botocore.config import Config

#: The declared access pattern the current request serves (set by ``TableClient.query`` around its
#: calls; read by whatever observes the calls at this seam, e.g. the traffic recorder).
ACCESS_PATTERN: contextvars.ContextVar[str | None] = contextvars.ContextVar("constructs_lib_access_pattern", default=None)

#: The entity and table key (``{pk attribute: value, sk attribute: value}``) of every item the
#: current write request carries (set by ``TableClient`` around its writes only while a hook is
#: attached; read by the traffic recorder, which counts writes per entity). None: not known.
WRITE_ENTITIES: contextvars.ContextVar[Sequence[tuple[str, Mapping[str, str]]] | None] = contextvars.ContextVar(
    "constructs_lib_write_entities", default=None)

#: A hook at this seam, e.g. the traffic recorder's: ``hook(send, operation, params)`` makes the
#: call with ``send(**params)`` and returns the response the caller gets — what ``send`` returned,
#: unchanged in meaning (a hook may add a request option it then removes from the response). A
#: hook sees the boto3 ``ClientError`` of a failed call and re-raises it.
CallHook = Callable[[Callable[..., dict[str, Any]], str, dict[str, Any]], dict[str, Any]]

_serializer: TypeSerializer | None = None
_deserializer: TypeDeserializer | None = None
_number: Any = None  # DynamoDB's decimal context's create_decimal, set with _deserializer


def client_config(*, retry_mode: str = "adaptive", max_attempts: int = 10, service: str = "dynamodb") -> Config:
    """The botocore ``Config`` of the clients :func:`make_client` builds (:class:`SettingsError`
    for a retry mode botocore does not have).

    For DynamoDB, botocore's client-side parameter validation is off: every request is built by
    this package, whose builders check what they send (names, keys, sizes, limits), and
    re-validating it costs tens of µs per call. DynamoDB still refuses a malformed request, and
    that refusal arrives as our :class:`DynamoDBError`.
    """
    from botocore.config import Config

    if retry_mode not in ("adaptive", "standard", "legacy"):
        raise SettingsError(f"retry_mode {retry_mode!r} must be 'adaptive', 'standard' or 'legacy'")
    mode = cast(Literal["adaptive", "standard", "legacy"], retry_mode)  # the check above
    return Config(retries={"mode": mode, "max_attempts": max_attempts}, parameter_validation=service != "dynamodb")


def make_client(
    *,
    retry_mode: str = "adaptive",
    max_attempts: int = 10,
    region_name: str | None = None,
    endpoint_url: str | None = None,
    service: str = "dynamodb",
) -> BaseClient:
    """A boto3 client with the given botocore retry mode (``adaptive`` by default); see :func:`client_config`."""
    import boto3

    config = client_config(retry_mode=retry_mode, max_attempts=max_attempts, service=service)
    client: BaseClient = boto3.client(service, region_name=region_name, endpoint_url=endpoint_url, config=config)
    return client


class ConnectionOptions(TypedDict, total=False):
    """The keywords every runtime client (``TableClient``, ``CounterClient``, ``AuditClient``) takes
    for the boto3 client it builds when given none: :func:`make_client`'s ``retry_mode``
    (default ``"adaptive"``), ``max_attempts`` (10), ``region_name`` and ``endpoint_url``."""

    retry_mode: str
    max_attempts: int
    region_name: str | None
    endpoint_url: str | None


def bind(
    client: BaseClient | None, tables: Mapping[str, Any], *, what: str = "client", **options: Unpack[ConnectionOptions]
) -> BaseClient:
    """The one binding of table names to a boto3 client, shared by every runtime client.

    ``tables`` maps each argument name (``"table_name"``) to the name given; each must be a
    non-empty string (else :class:`SettingsError` naming it). Returns ``client``, or a new one
    from :func:`make_client` with ``options`` (``TypeError`` naming ``what`` for a keyword that
    is not one of :class:`ConnectionOptions`).
    """
    check_table_names(tables)
    unknown = sorted(set(options) - set(ConnectionOptions.__annotations__))
    if unknown:
        raise TypeError(
            f"{what}: unexpected keyword argument(s) {', '.join(map(repr, unknown))}; besides its own, it takes "
            f"{', '.join(ConnectionOptions.__annotations__)}"
        )
    if client is not None:
        return client
    return make_client(**options)


def check_table_names(tables: Mapping[str, Any]) -> None:
    """Raise :class:`SettingsError` naming the first of ``tables`` (argument name -> value) that
    is not a non-empty string."""
    for what, name in tables.items():
        if not isinstance(name, str) or not name:
            raise SettingsError(f"{what} {name!r} must be a non-empty string")


def environment(environ: Mapping[str, str], name: str, why: str) -> str:
    """The non-empty value of environment variable ``name``, else :class:`SettingsError` saying ``why``."""
    value = environ.get(name)
    if not value:
        raise SettingsError(f"environment variable {name!r} is not set; {why}")
    return value


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    """Python values as DynamoDB's typed JSON, as boto3's ``TypeSerializer`` makes it.

    Text, booleans and integers of up to 18 digits — nearly every value of an item — are
    converted inline; every other value goes through ``TypeSerializer``.
    """
    global _serializer
    if _serializer is None:
        _serializer = _full_range_codecs()[0]
    out: dict[str, Any] = {}
    for name, value in item.items():
        kind = type(value)
        if kind is str:
            out[name] = {"S": value}
        elif kind is bool:
            out[name] = {"BOOL": value}
        elif kind is int and -_INLINE_INT < value < _INLINE_INT:
            out[name] = {"N": str(value)}
        else:
            out[name] = _serializer.serialize(value)
    return out


#: Integers below this magnitude are serialized inline (str(n) is what TypeSerializer writes).
_INLINE_INT = 10**18


def _full_range_codecs() -> tuple[TypeSerializer, TypeDeserializer, Callable[[str], Decimal]]:
    """boto3's (de)serializer for all numbers DynamoDB stores (docs/runtime/client.md, Numbers)."""
    from decimal import Decimal

    from boto3.dynamodb import types

    context = types.DYNAMODB_CONTEXT.copy()
    context.Emin = -130  # exact down to DynamoDB's smallest number; boto3 stops at -128

    class Serializer(types.TypeSerializer):
        def _serialize_n(self, value: Any) -> str:
            number = context.create_decimal(value)
            if not number.is_finite():
                raise TypeError("Infinity and NaN not supported")
            return str(number)

    class Deserializer(types.TypeDeserializer):
        _deserialize_n = staticmethod(Decimal)  # as DynamoDB returns it: 1E+40 is 1 and 40 zeros

    return Serializer(), Deserializer(), Decimal


def deserialize(item: Mapping[str, Any]) -> dict[str, Any]:
    """A wire-format item as Python values, as boto3's ``TypeDeserializer`` makes them.

    Strings, numbers (``Decimal``) and booleans — nearly every value
    of an item — are converted inline; every other type goes through ``TypeDeserializer``.
    """
    global _deserializer, _number
    if _deserializer is None:
        _, _deserializer, _number = _full_range_codecs()
    out: dict[str, Any] = {}
    for name, value in item.items():
        if "S" in value and len(value) == 1:
            out[name] = value["S"]
        elif "N" in value and len(value) == 1:
            out[name] = _number(value["N"])
        elif "BOOL" in value and len(value) == 1:
            out[name] = value["BOOL"]
        else:
            out[name] = _deserializer.deserialize(value)
    return out


def deserialize_value(value: Mapping[str, Any]) -> Any:
    """One wire-format value as :func:`deserialize` makes it."""
    return deserialize({"v": value})["v"]


def call(client: BaseClient, operation: str, *, hooks: Sequence[CallHook] = (), **params: Any) -> dict[str, Any]:
    """Call ``client.<operation>(**params)`` through ``hooks`` (the first outermost; none: a direct
    call), translating AWS errors into ours."""
    method = _method(client, operation)
    try:
        if hooks:
            return _through(hooks, method, operation, params)
        return method(**params)
    except _client_error() as exc:
        raise translate(exc, operation) from exc


def _client_error() -> type[Exception]:
    """botocore's ``ClientError`` (imported when a call first fails: the seam imports no botocore before)."""
    from botocore.exceptions import ClientError

    return ClientError


def _method(client: BaseClient, operation: str) -> Callable[..., dict[str, Any]]:
    """``client.<operation>``: botocore makes a client's methods from the service's model at run time."""
    method: Callable[..., dict[str, Any]] = getattr(client, operation)
    return method


def _through(
    hooks: Sequence[CallHook], send: Callable[..., dict[str, Any]], operation: str, params: dict[str, Any]
) -> dict[str, Any]:
    if len(hooks) == 1:
        return hooks[0](send, operation, params)
    return hooks[0](lambda **inner: _through(hooks[1:], send, operation, inner), operation, params)


def translate(exc: Any, operation: str) -> DynamoDBError:
    error = exc.response.get("Error", {})
    code = error.get("Code", "Unknown")
    message = error.get("Message", str(exc))
    text = f"{operation} failed with {code}: {message}"
    if code == "ConditionalCheckFailedException":
        err = ConditionFailedError(text, code=code, operation=operation)
        item = exc.response.get("Item")
        err.old_item = deserialize(item) if item else None
        return err
    if code == "TransactionCanceledException":
        reasons = exc.response.get("CancellationReasons") or []
        return TransactionCanceledError(text, reasons=reasons, code=code, operation=operation)
    return DynamoDBError(text, code=code, operation=operation)




def get_parameter(name: str, *, client: BaseClient | None = None) -> str:
    """The value of SSM parameter ``name`` (one ``GetParameter``). Every failure — an AWS error,
    no endpoint or credentials — is a :class:`ContractUnavailableError` naming the parameter,
    with the original as ``__cause__``."""
    from botocore.exceptions import BotoCoreError, ClientError

    from .exceptions import ContractUnavailableError

    cause: Exception
    try:
        ssm = client if client is not None else make_client(service="ssm", max_attempts=3, retry_mode="standard")
        response = _method(ssm, "get_parameter")(Name=name)
        return str(response["Parameter"]["Value"])
    except ClientError as exc:
        error = exc.response.get("Error", {})
        cause, reason = exc, f"GetParameter failed with {error.get('Code', 'Unknown')}: {error.get('Message', str(exc))}"
    except (BotoCoreError, KeyError, TypeError) as exc:
        cause, reason = exc, f"GetParameter failed: {type(exc).__name__}: {exc}"
    raise ContractUnavailableError(
        f"the table's published contract, SSM parameter {name!r}, cannot be read ({reason}); this function "
        "checks the entities and indexes it uses against it before any request and does not run without it: "
        "check that the producer published it (SingleTable(publish=ModelContract(...))) and that the "
        "function's role may ssm:GetParameter on it", parameter=name,
    ) from cause


def batch_get(
    client: BaseClient,
    table_name: str,
    keys: list[dict[str, Any]],
    *,
    consistent: bool = False,
    retries: int = 8,
    hooks: Sequence[CallHook] = (),
    projection: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Read ``keys`` (plain Python key dicts) with BatchGetItem, in chunks of 100.

    Unprocessed keys are retried with jittered exponential backoff, up to ``retries`` times
    per chunk. Returns the items found (deserialized, in no particular order); raises
    :class:`BatchIncompleteError` holding the keys still unread after the last retry.
    ``projection``: ``ProjectionExpression`` and ``ExpressionAttributeNames`` of every chunk.
    """
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), BATCH_GET_LIMIT):
        chunk = [serialize(k) for k in keys[start:start + BATCH_GET_LIMIT]]
        request = {table_name: {"Keys": chunk, "ConsistentRead": consistent, **(projection or {})}}
        for attempt in range(retries + 1):
            resp = call(client, "batch_get_item", hooks=hooks, RequestItems=request)
            found += [deserialize(raw) for raw in resp.get("Responses", {}).get(table_name, [])]
            request = resp.get("UnprocessedKeys") or {}
            if request and projection:  # (DynamoDB returns them with the projection; keep it either way)
                request = {name: {**left, **projection} for name, left in request.items()}
            if not request:
                break
            if attempt == retries:
                left = [deserialize(k) for k in request[table_name]["Keys"]]
                left += keys[start + BATCH_GET_LIMIT:]
                raise BatchIncompleteError(
                    f"batch_get: {len(left)} key(s) still unread after {retries} retries of unprocessed keys "
                    "(throttling?); they are in .unprocessed", unprocessed=left, operation="BatchGetItem",
                )
            sleep(backoff(attempt))
    return found


@record
class ChunkWrite:
    """What :func:`batch_write_chunk` achieved: the requests written (in the order DynamoDB took
    them), those still unprocessed, and the error that stopped it (None if none did)."""

    written: list[dict[str, Any]]
    unprocessed: list[dict[str, Any]]
    error: DynamoDBError | None = None

    def __init__(self, written: list[dict[str, Any]], unprocessed: list[dict[str, Any]],
                 error: DynamoDBError | None = None) -> None:
        self.written, self.unprocessed, self.error = written, unprocessed, error


def batch_write_chunk(
    client: BaseClient,
    table_name: str,
    requests: list[dict[str, Any]],
    *,
    retries: int = 8,
    retry_codes: frozenset[str] = frozenset(),
    hooks: Sequence[CallHook] = (),
) -> ChunkWrite:
    """Send up to 25 write requests with BatchWriteItem, resending unprocessed items (and calls
    refused with one of ``retry_codes``) with jittered exponential backoff, up to ``retries``
    times. Stops at the first other error, or when retries run out; never raises for AWS errors.
    """
    pending, written = list(requests), []
    error: DynamoDBError | None = None
    for attempt in range(retries + 1):
        if attempt:
            sleep(backoff(attempt - 1))
        try:
            resp = call(client, "batch_write_item", hooks=hooks, RequestItems={table_name: pending})
        except DynamoDBError as exc:
            error = exc
            if exc.code not in retry_codes:
                break
            continue
        error = None
        left = (resp.get("UnprocessedItems") or {}).get(table_name) or []
        written += [r for r in pending if r not in left]
        pending = left
        if not pending:
            break
    return ChunkWrite(written, pending, error)


def backoff(attempt: int, *, base: float = 0.05, cap: float = 2.0) -> float:
    """Full-jitter exponential backoff delay for retry ``attempt`` (0-based)."""
    return random.uniform(0, min(cap, base * (2**attempt)))


def sleep(seconds: float) -> None:
    time.sleep(seconds)
