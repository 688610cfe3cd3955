"""The audit writer's prepared BatchWriteItem bodies on a real botocore client (its transport
answered in-process): retries of unprocessed items and throttled calls, the item-by-item
fallback, and the properties the fast paths rest on (JSON length bounds the item size; the
wire-form diff is :func:`diff`); ``CONSTRUCTS_LIB_SOAK=1`` runs 10x their examples."""

from __future__ import annotations

import base64
import json
import os
import string
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.runtime import _aws
from constructs_lib.runtime.handlers import audit as audit_handler
from constructs_lib.runtime.patterns.audit import AuditSpec, wire
from constructs_lib.runtime.patterns.audit.values import is_wire, number_text, to_wire
from constructs_lib.runtime.values import wire_item_size

SALT, SOURCE, AUDIT = "wire-salt", "Source", "Audit"
SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 1000 if SOAK else 100
SPEC = AuditSpec(redact=("email",))


def record(seq: int, **new: Any) -> dict[str, Any]:
    keys = {"PK": {"S": f"USER#{seq}"}, "SK": {"S": "PROFILE"}}
    image = {**keys, "_type": {"S": "User"}, "email": {"S": f"u{seq}@example.com"}, "avatar": {"B": "AAE="}, **new}
    return {"eventID": f"e{seq}", "eventName": "INSERT", "dynamodb": {
        "ApproximateCreationDateTime": 1717243200, "Keys": keys, "NewImage": image, "SequenceNumber": str(seq)}}


class Server:
    """Answers the client's requests in-process: ``answers`` is a list of (status, JSON body) used in
    order, then 200 ``{}``; every request (target, body) is kept."""

    def __init__(self, *answers: tuple[int, dict[str, Any]]) -> None:
        self.answers, self.requests = list(answers), []  # type: ignore[var-annotated]

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        self.requests.append((request.headers["X-Amz-Target"].decode().split(".")[-1], bytes(request.body)))
        status, body = self.answers.pop(0) if self.answers else (200, {})
        data = json.dumps(body).encode()

        class Raw:
            def stream(self, **_: Any) -> Iterator[bytes]:
                yield data

        return AWSResponse(request.url, status, {"x-amzn-requestid": "r"}, Raw())


def client_for(server: Server, *, hook: Callable[..., Any] | None = None) -> Any:
    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", endpoint_url="http://127.0.0.1:9", aws_access_key_id="k",
        aws_secret_access_key="s", config=Config(retries={"mode": "standard", "max_attempts": 1}))
    client.meta.events.register_first("before-send.dynamodb.*", server)
    if hook is not None:
        client.meta.events.register_first("before-call.dynamodb.BatchWriteItem", hook)
    return client


def botocore_body(items: list[dict[str, Any]]) -> bytes:
    """What botocore itself sends for these (boto-form) items."""
    server = Server()
    client_for(server).batch_write_item(RequestItems={AUDIT: [{"PutRequest": {"Item": i}} for i in items]})
    return server.requests[0][1]


def unprocessed(*items: dict[str, Any]) -> dict[str, Any]:
    """A BatchWriteItem answer leaving ``items`` (boto form) unprocessed, in DynamoDB's JSON."""
    def typed(v: Any) -> Any:
        ((tag, inner),) = v.items()
        if tag == "B":
            return {"B": base64.b64encode(inner).decode()}
        if tag == "M":
            return {"M": {k: typed(x) for k, x in inner.items()}}
        if tag == "L":
            return {"L": [typed(x) for x in inner]}
        return v
    return {"UnprocessedItems": {AUDIT: [{"PutRequest": {"Item": {k: typed(v) for k, v in i.items()}}} for i in items]}}


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(_aws, "sleep", slept.append)
    return slept


RECORDS = [record(100 + n) for n in range(30)]
ITEMS = [audit_handler.build_item(r, SPEC, SOURCE, SALT) for r in RECORDS]


def write(client: Any, records: list[dict[str, Any]] = RECORDS, retries: int = 8) -> list[str]:
    return audit_handler.write_records(client, AUDIT, SPEC, SOURCE, records, SALT, retries=retries)


# The prepared body on the wire ------------------------------------------------------------------------------------
def test_batches_go_out_as_the_bodies_botocore_would_send() -> None:
    # GIVEN 30 records / WHEN written through a botocore client
    server = Server()
    assert write(client_for(server)) == []
    # THEN two BatchWriteItem calls (25 + 5), each body byte for byte botocore's serialization of the items
    assert [op for op, _ in server.requests] == ["BatchWriteItem", "BatchWriteItem"]
    assert [body for _, body in server.requests] == [botocore_body(ITEMS[:25]), botocore_body(ITEMS[25:])]


def test_unprocessed_items_are_resent_alone_in_dynamodbs_order(no_sleep: list[float]) -> None:
    # GIVEN a server that leaves items 3 and 1 unprocessed once
    server = Server((200, unprocessed(ITEMS[3], ITEMS[1])))
    # WHEN 5 records are written
    assert write(client_for(server), RECORDS[:5]) == []
    # THEN the second call carries exactly those two, in that order, after one backoff
    assert [body for _, body in server.requests] == [botocore_body(ITEMS[:5]), botocore_body([ITEMS[3], ITEMS[1]])]
    assert len(no_sleep) == 1


def test_items_unprocessed_after_every_retry_fail_with_every_later_record(no_sleep: list[float]) -> None:
    # GIVEN a server that never processes item 2 (of 5)
    server = Server(*[(200, unprocessed(ITEMS[2]))] * 4)
    # WHEN written with 3 retries
    failed = write(client_for(server), RECORDS[:5], retries=3)
    # THEN records 2.. are reported (nothing after a lost record counts as stored), after 3 backoffs
    assert failed == [r["dynamodb"]["SequenceNumber"] for r in RECORDS[2:5]]
    assert len(server.requests) == 4 and len(no_sleep) == 3


def test_a_throttled_call_is_sent_again_unchanged() -> None:
    # GIVEN a server that throttles the first call
    error = {"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "message": "slow down"}
    server = Server((400, error))
    # WHEN 5 records are written / THEN the same body goes out twice and nothing failed
    assert write(client_for(server), RECORDS[:5]) == []
    assert [body for _, body in server.requests] == [botocore_body(ITEMS[:5])] * 2


def test_a_refused_batch_is_written_item_by_item_with_put_item() -> None:
    # GIVEN a server that refuses the batch (ValidationException)
    server = Server((400, {"__type": "com.amazonaws.dynamodb.v20120810#ValidationException", "message": "no"}))
    # WHEN 3 records are written
    assert write(client_for(server), RECORDS[:3]) == []
    # THEN one PutItem per item follows, each botocore's own request for the built item
    assert [op for op, _ in server.requests] == ["BatchWriteItem", "PutItem", "PutItem", "PutItem"]
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    for (_, body), item in zip(server.requests[1:], ITEMS[:3], strict=True):
        assert json.loads(body) == json.loads(json.dumps({"TableName": AUDIT, "Item": item}, default=b64))


def test_a_client_that_answers_before_the_swap_gets_request_items_instead() -> None:
    # GIVEN a client on which another before-call handler answers BatchWriteItem itself (as a stub would),
    # so the prepared body is never swapped in: the first (placeholder) call is refused
    server, answered = Server(), []

    def short_circuit(params: dict[str, Any], **_: Any) -> Any:
        answered.append(json.loads(params["body"]))
        if len(answered) == 1:
            return AWSResponse("u", 400, {}, None), {"Error": {"Code": "ValidationException", "Message": "no key"}}
        return AWSResponse("u", 200, {}, None), {}

    client = client_for(server, hook=short_circuit)
    # WHEN records are written twice
    assert write(client, RECORDS[:2]) == [] and write(client, RECORDS[2:4]) == []
    # THEN the placeholder was refused once; every later call carries the real request items
    assert answered[0]["RequestItems"][AUDIT] == [{"PutRequest": {"Item": {}}}]
    assert [len(a["RequestItems"][AUDIT]) for a in answered[1:]] == [2, 2]
    assert answered[1] == json.loads(botocore_body(ITEMS[:2])) and not wire.usable(client)


# The properties the fast paths rest on --------------------------------------------------------------------------
#: Text of every kind, and runs of wide characters (2, 3 and 4 UTF-8 bytes; a lone surrogate counts 3).
TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from("\"\\\n\x00"), max_size=12) | st.text(
    st.sampled_from("é€😀\ud800"), min_size=8, max_size=40)
NUMBER = st.decimals(allow_nan=False, allow_infinity=False, places=None).map(str) | st.sampled_from(
    ["0", "-0", "1E+125", "1e-130", "15E+2", "1.50", "-0.00100", ".5", "5."])
BINARY = st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode())
SCALAR = st.one_of(
    TEXT.map(lambda s: {"S": s}), NUMBER.map(lambda n: {"N": n}), BINARY.map(lambda b: {"B": b}),
    st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True}),
    st.lists(TEXT, min_size=1, max_size=4, unique=True).map(lambda v: {"SS": v}),
    st.lists(NUMBER, min_size=1, max_size=4, unique=True).map(lambda v: {"NS": v}),
    st.lists(BINARY, min_size=1, max_size=4, unique=True).map(lambda v: {"BS": v}),
)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(
    st.dictionaries(TEXT, inner, max_size=4).map(lambda m: {"M": m}), st.lists(inner, max_size=4).map(lambda v: {"L": v})),
    max_leaves=8)
IMAGE = st.dictionaries(st.sampled_from(string.ascii_lowercase[:6]) | TEXT, VALUE, max_size=5)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item=IMAGE)
def test_the_json_text_is_never_shorter_than_the_item_size(item: dict[str, Any]) -> None:
    # GIVEN any item in wire form / THEN its JSON text (as sent) is at least its DynamoDB size, so an item
    # whose text fits the limit fits it (the exact size is computed only past that)
    assert wire_item_size(item) <= len(audit_handler._json(item))


def reshaped(value: dict[str, Any], draw: Any) -> dict[str, Any]:
    """The same value written differently: numbers in another notation, sets and maps reordered."""
    ((tag, inner),) = value.items()
    if tag == "N":
        return {"N": draw(st.sampled_from([inner, number_text(inner, "n"), f"{Decimal(inner):E}"]))}
    if tag in ("SS", "NS", "BS"):
        return {tag: draw(st.permutations(inner))}
    if tag == "M":
        names = draw(st.permutations(list(inner)))
        return {"M": {k: reshaped(inner[k], draw) for k in names}}
    if tag == "L":
        return {"L": [reshaped(v, draw) for v in inner]}
    return value


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=IMAGE, new=IMAGE, data=st.data())
def test_the_wire_diff_is_the_canonical_diff(old: dict[str, Any], new: dict[str, Any], data: Any) -> None:
    # GIVEN two images sharing some attributes, some written differently but equal, some changed
    shared = {k: reshaped(v, data.draw) for k, v in old.items() if data.draw(st.booleans())}
    new = {**new, **shared}
    # THEN the wire-form diff (raw equality first) finds exactly what the canonical diff finds
    assert all(map(is_wire, old.values())) and all(map(is_wire, new.values()))
    assert audit_handler._wire_diff(old, new) == audit_handler.diff(old, new)


@settings(max_examples=EXAMPLES, deadline=None)
@given(value=VALUE | st.text("-0123456789.eE+ _", max_size=8).map(lambda t: {"N": t})
       | st.text("AQgw=+/ \n", max_size=8).map(lambda t: {"B": t}))
def test_a_value_taken_as_it_is_is_valid_and_already_in_wire_form(value: dict[str, Any]) -> None:
    # GIVEN any typed value, numbers and binaries included that DynamoDB would refuse
    # THEN one is_wire accepts passes the canonical check and is what to_wire makes of it
    if is_wire(value):
        audit_handler.canonical_json(value)
        assert to_wire(value) == value
