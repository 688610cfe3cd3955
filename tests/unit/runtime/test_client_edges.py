"""TableClient behaviour DynamoDB Local cannot provoke on demand: a chunk of a batch refused
mid-way, and a plain put racing concurrent writers. A scripted stand-in for the boto3 client
answers each call; everything else about these paths runs on DynamoDB Local in
``tests/integration/test_write_semantics.py``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from constructs_lib.model import Entity, Model
from constructs_lib.runtime import (
    AuditClient,
    BatchIncompleteError,
    CounterClient,
    TableClient,
    VersionConflictError,
    _aws,
)
from constructs_lib.runtime.patterns.audit import AuditSpec
from constructs_lib.runtime.patterns.counter import CounterSpec

MODEL = Model(
    "edges",
    entities=[
        Entity("Note", pk="NOTE#{note_id}", fields=["note_id"]),
        Entity("Doc", pk="DOC#{doc_id}", fields=["doc_id"], version_attribute="version"),
    ],
)


class Scripted:
    """Answers ``operation`` calls from a script: a dict response, or a callable raising."""

    def __init__(self, script: list[Callable[[dict[str, Any]], dict[str, Any]]]) -> None:
        self.script = script
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, operation: str) -> Callable[..., dict[str, Any]]:
        def call(**params: Any) -> dict[str, Any]:
            self.calls.append((operation, params))
            return self.script.pop(0)(params)
        return call


def ok(_: dict[str, Any]) -> dict[str, Any]:
    return {}


def fail(code: str, **extra: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def raise_(_: dict[str, Any]) -> dict[str, Any]:
        raise ClientError({"Error": {"Code": code, "Message": f"{code} here"}, **extra}, "Op")
    return raise_


def test_a_chunk_refused_by_dynamodb_reports_exactly_what_was_written() -> None:
    # GIVEN 60 notes (three chunks) and DynamoDB accepting the first chunk, refusing the second
    client = Scripted([ok, fail("ValidationException")])
    table = TableClient(MODEL, "notes", client=client)  # type: ignore[arg-type]
    puts = [("Note", {"note_id": f"n{i:02d}"}) for i in range(60)]
    # WHEN the batch is written
    with pytest.raises(BatchIncompleteError, match=r"DynamoDB refused a chunk \(ValidationException.*25 of 60") as info:
        table.batch_write(puts=puts)
    # THEN the error carries the 25 written and the 35 not written, in order, with the cause
    err = info.value
    written = [w["PutRequest"]["Item"]["note_id"]["S"] for w in err.written]
    left = [w["PutRequest"]["Item"]["note_id"]["S"] for w in err.unprocessed]
    assert written == [f"n{i:02d}" for i in range(25)]
    assert left == [f"n{i:02d}" for i in range(25, 60)]
    assert isinstance(err.__cause__, Exception) and err.code == "ValidationException"
    # AND the third chunk was never sent
    assert len(client.calls) == 2


def test_unprocessed_items_retried_then_counted_as_written() -> None:
    # GIVEN a chunk of 3 where DynamoDB leaves one unprocessed once
    def partly(params: dict[str, Any]) -> dict[str, Any]:
        return {"UnprocessedItems": {"notes": params["RequestItems"]["notes"][2:]}}

    client = Scripted([partly, ok])
    table = TableClient(MODEL, "notes", client=client, batch_retries=1)  # type: ignore[arg-type]
    # WHEN written  THEN all 3 were done in two calls, the second holding only the leftover
    assert table.batch_write(puts=[("Note", {"note_id": f"n{i}"}) for i in range(3)]) == 3
    assert len(client.calls[1][1]["RequestItems"]["notes"]) == 1


def stored(version: int | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A failed condition that returns the stored item (ReturnValuesOnConditionCheckFailure)."""
    item = {"PK": {"S": "DOC#d"}, "_type": {"S": "Doc"}, "doc_id": {"S": "d"}}
    if version is not None:
        item["version"] = {"N": str(version)}
    return fail("ConditionalCheckFailedException", Item=item)


def test_a_plain_put_follows_concurrent_writers_and_never_goes_back() -> None:
    # GIVEN a stored doc at version 3 that another writer moves to 4 during the put
    client = Scripted([stored(3), stored(4), ok])
    table = TableClient(MODEL, "docs", client=client)  # type: ignore[arg-type]
    # WHEN it is put without a version
    out = table.put("Doc", {"doc_id": "d", "body": "x"})
    # THEN it tried create, then "3 -> 4", then "4 -> 5", each conditioned on what it saw
    conditions = [(p["ConditionExpression"], p.get("ExpressionAttributeValues")) for _, p in client.calls]
    assert conditions[0][0] == "attribute_not_exists(#n0)"
    assert conditions[1] == ("#n0 = :v0", {":v0": {"N": "3"}})
    assert conditions[2] == ("#n0 = :v0", {":v0": {"N": "4"}})
    assert [p["Item"]["version"] for _, p in client.calls] == [{"N": "1"}, {"N": "4"}, {"N": "5"}]
    assert out["version"] == 5


def test_a_plain_put_over_an_unversioned_item_starts_at_one_only_if_it_stays_unversioned() -> None:
    # GIVEN an item written before the entity declared its version attribute
    client = Scripted([stored(None), ok])
    table = TableClient(MODEL, "docs", client=client)  # type: ignore[arg-type]
    # WHEN put  THEN the overwrite requires the version to be still absent
    assert table.put("Doc", {"doc_id": "d"})["version"] == 1
    assert client.calls[1][1]["ConditionExpression"] == "attribute_exists(#n0) AND attribute_not_exists(#n1)"


def test_a_plain_put_gives_up_under_endless_contention() -> None:
    # GIVEN a version that moves on every attempt
    client = Scripted([stored(v) for v in range(1, 11)])
    table = TableClient(MODEL, "docs", client=client)  # type: ignore[arg-type]
    # WHEN put  THEN it stops after a bounded number of attempts with a typed error
    with pytest.raises(VersionConflictError, match=r"stored version changed on each of 10 attempts"):
        table.put("Doc", {"doc_id": "d"})
    assert len(client.calls) == 10


# The boto3 client binding -------------------------------------------------------------------------
def test_the_connection_keywords_are_declared_once_and_checked() -> None:
    declared = set(_aws.ConnectionOptions.__annotations__)
    assert declared == {"retry_mode", "max_attempts", "region_name", "endpoint_url"}
    # GIVEN the three runtime clients THEN none repeats the keywords: each takes them as **connection
    for client in (TableClient, CounterClient, AuditClient):
        parameters = inspect.signature(client.__init__).parameters
        assert not declared & set(parameters) and parameters["connection"].kind is inspect.Parameter.VAR_KEYWORD
    # WHEN a keyword is misspelt THEN Python's error for it names the client, the keyword and the options
    with pytest.raises(TypeError, match=r"TableClient: unexpected keyword argument\(s\) 'retrymode'.*retry_mode"):
        TableClient(MODEL, "t", retrymode="standard")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"CounterClient: unexpected keyword argument\(s\) 'regionname'"):
        CounterClient(CounterSpec(family="views", shards=2), "t", regionname="eu-west-1")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"AuditClient: unexpected keyword argument\(s\) 'endpoint'"):
        AuditClient(AuditSpec(), "audit", "source", endpoint="http://x")  # type: ignore[call-arg]
    # AND the documented keywords still build a client with those settings
    built = TableClient(MODEL, "t", retry_mode="standard", max_attempts=3, region_name="eu-west-1",
                        endpoint_url="http://127.0.0.1:1")
    config = built.client.meta.config
    # (botocore keeps max_attempts as total_max_attempts: the first attempt plus 3 retries)
    assert (config.retries["mode"], config.retries["total_max_attempts"], built.client.meta.region_name) == (
        "standard", 4, "eu-west-1")
    assert built.client.meta.endpoint_url == "http://127.0.0.1:1"


def test_the_default_retry_mode_is_standard_for_tables_and_adaptive_for_counters_and_audit() -> None:
    # GIVEN each runtime client built without a boto3 client
    table = TableClient(MODEL, "t", region_name="eu-west-1")
    counter = CounterClient(CounterSpec(family="views", shards=2), "t", region_name="eu-west-1")
    audit = AuditClient(AuditSpec(), "audit", "source", region_name="eu-west-1")
    # THEN the table client retries in standard mode (no client-side rate limiter costing CPU on every
    # call, none throttling a client shared by threads), the hot-key writers keep adaptive mode
    modes = [c.client.meta.config.retries["mode"] for c in (table, counter, audit)]
    assert modes == ["standard", "adaptive", "adaptive"]
    # AND the documented keyword still selects adaptive mode for a table client
    assert TableClient(MODEL, "t", region_name="eu-west-1", retry_mode="adaptive").client.meta.config.retries[
        "mode"] == "adaptive"
