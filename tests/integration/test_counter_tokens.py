"""Idempotent counter increments of a recomputed family (a table without a stream: a dedup
marker and the shard's ADD in one transaction) on several tables of one DynamoDB Local: a
transaction's ClientRequestToken is remembered per server (per account and region on AWS), not
per table, so the token must never make one table's increment look like another's (ADR 0035).
The family is the showcase's, read as a recomputed one.

Idempotency keys here start with ``tok-``: no other test uses them (tokens outlive tables).
"""

from __future__ import annotations

import itertools
import json
import os
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.runtime import CounterClient, IdempotencyKeyReusedError
from constructs_lib.runtime.exceptions import IdempotencyTokenConflictError
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture
def two_tables(local_deploy: Callable[..., LocalDeployment], shop_template: dict[str, Any]) -> list[dict[str, str]]:
    """Two deployments of the same synthesized shop template (staging and prod in one account and
    region): the product_views family's resolved environment of each."""
    return [
        local_deploy(shop_template, name_prefix=prefix).function_environment("ProductViewsFunction")
        for prefix in ("staging-", "prod-")
    ]


def views(env: dict[str, str], client: Any, **kw: Any) -> CounterClient:
    var = "CONSTRUCTS_LIB_COUNTER_PRODUCT_VIEWS"
    spec = {**json.loads(env[var]), "aggregation": "recompute"}
    return CounterClient.from_environment("product_views", environ={**env, var: json.dumps(spec)}, client=client, **kw)


def test_the_same_key_on_two_tables_counts_on_both(two_tables: list[dict[str, str]], dynamodb_client: Any) -> None:
    # GIVEN two tables built from one template, the same family and counter on each
    staging, prod = (views(env, dynamodb_client, clock=lambda: T0) for env in two_tables)
    assert staging.table_name != prod.table_name
    # WHEN the same increment with the same idempotency key is made on both, within seconds
    first = staging.increment("v1", idempotency_key="tok-regression-1")
    second = prod.increment("v1", idempotency_key="tok-regression-1")
    # THEN both are counted: neither table has seen the key
    assert (first.duplicate, second.duplicate) == (False, False)
    assert (staging.get("v1", exact=True).total, prod.get("v1", exact=True).total) == (1, 1)
    # AND the same key repeated on one table is a duplicate, counted once
    again = prod.increment("v1", idempotency_key="tok-regression-1")
    assert again.duplicate is True
    assert (staging.get("v1", exact=True).total, prod.get("v1", exact=True).total) == (1, 1)


# Injected answers at the AWS-call seam -------------------------------------------------------------------------
def _mismatch(operation: str) -> Exception:
    return ClientError(
        {"Error": {"Code": "IdempotentParameterMismatchException", "Message": "injected by the test"}}, operation
    )


def mismatch_first(times: int, sent: list[dict[str, Any]]) -> Any:
    """A seam hook answering the first ``times`` TransactWriteItems with IdempotentParameterMismatch
    (as DynamoDB does when it holds the token for another request), without sending them."""

    def hook(send: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation == "transact_write_items":
            sent.append(params)
            if len(sent) <= times:
                raise _mismatch("TransactWriteItems")
        return send(**params)

    return hook


def test_a_token_mismatch_with_no_marker_is_retried_with_a_fresh_token(
    two_tables: list[dict[str, str]], dynamodb_client: Any
) -> None:
    counter = views(two_tables[0], dynamodb_client)
    sent: list[dict[str, Any]] = []
    counter.hooks = (mismatch_first(1, sent),)
    # GIVEN DynamoDB answers the first attempt IdempotentParameterMismatch and the key is not counted here
    done = counter.increment("v2", 2, idempotency_key="tok-inject-1")
    # THEN the increment is not reported as a duplicate: it is counted, once, by a retry with another token
    assert done.duplicate is False
    assert counter.get("v2", exact=True).total == 2
    assert len(sent) == 2 and sent[0]["ClientRequestToken"] != sent[1]["ClientRequestToken"]
    assert sent[0]["TransactItems"] == sent[1]["TransactItems"]


def test_a_second_token_mismatch_raises_and_adds_nothing(two_tables: list[dict[str, str]], dynamodb_client: Any) -> None:
    counter = views(two_tables[0], dynamodb_client)
    sent: list[dict[str, Any]] = []
    counter.hooks = (mismatch_first(2, sent),)
    # GIVEN every token the call tries is answered as another request's
    # WHEN incremented THEN a typed error names the counter, the table and the key; nothing is added
    with pytest.raises(IdempotencyTokenConflictError, match=r"counter 'v3' on table '.*' with idempotency_key "
                                                            r"'tok-inject-2'.*nothing was added") as caught:
        counter.increment("v3", idempotency_key="tok-inject-2")
    assert caught.value.code == "IdempotentParameterMismatchException"
    assert len(sent) == 2
    assert counter.get("v3", exact=True).total == 0


def test_a_token_mismatch_with_the_marker_present_is_a_duplicate(
    two_tables: list[dict[str, str]], dynamodb_client: Any
) -> None:
    counter = views(two_tables[0], dynamodb_client)
    counter.increment("v4", 3, idempotency_key="tok-inject-3")
    sent: list[dict[str, Any]] = []
    counter.hooks = (mismatch_first(1, sent),)
    # GIVEN the key was counted on this table, and the next attempt's token is answered as another request's
    again = counter.increment("v4", 3, idempotency_key="tok-inject-3")
    # THEN the marker decides: a duplicate, not sent again, counted once
    assert (again.duplicate, len(sent)) == (True, 1)
    assert counter.get("v4", exact=True).total == 3
    # AND with another amount the same answer is the key-reuse error
    counter.hooks = (mismatch_first(2, sent),)
    with pytest.raises(IdempotencyKeyReusedError, match="idempotency_key 'tok-inject-3' was already used to add 3"):
        counter.increment("v4", 5, idempotency_key="tok-inject-3")
    assert counter.get("v4", exact=True).total == 3


# Property: two tables, shared counter ids and keys, against a reference ---------------------------------------
SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")

step = st.tuples(
    st.sampled_from([0, 1]),                               # table
    st.sampled_from(["c0", "c1"]),                         # counter id (shared by both tables)
    st.sampled_from([None, "k0", "k1", "k2"]),             # idempotency key (shared by both tables)
    st.integers(-2, 3),                                    # amount
)


@settings(max_examples=200 if SOAK else 20, deadline=None, database=None, derandomize=not SOAK,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=st.lists(step, min_size=1, max_size=12), tick=st.booleans())
def test_increments_on_two_tables_match_a_reference(
    two_tables: list[dict[str, str]], dynamodb_client: Any, program: list[tuple[int, str, str | None, int]], tick: bool
) -> None:
    # GIVEN two tables from one template, clients with a fixed clock (a repeat sends the identical request)
    # or one a second later per call (a repeat's marker expires later), fresh counter ids for this
    # example, and a seam hook recording every IdempotentParameterMismatch answer
    run = uuid.uuid4().hex[:8]
    mismatches: list[str] = []

    def watch(send: Any, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return send(**params)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "IdempotentParameterMismatchException":
                mismatches.append(params.get("ClientRequestToken", ""))
            raise

    calls = itertools.count()
    counters = [views(env, dynamodb_client, clock=lambda: T0 + timedelta(seconds=next(calls) if tick else 0))
                for env in two_tables]
    for counter in counters:
        counter.hooks = (watch,)
    seen: list[dict[tuple[str, str], int]] = [{}, {}]     # reference: per table, (counter, key) -> amount counted
    totals: list[Counter[str]] = [Counter(), Counter()]  # reference: per table, counter -> total
    # WHEN the program's increments run in order
    for table, counter_id, key, by in program:
        cid, idem = f"{run}-{counter_id}", (None if key is None else f"tok-prop-{key}")
        before = seen[table].get((counter_id, key)) if key is not None else None
        if before is not None and before != by:
            # THEN a key reused on its table for another amount is refused, naming the key
            with pytest.raises(IdempotencyKeyReusedError, match=f"idempotency_key {idem!r}"):
                counters[table].increment(cid, by, idempotency_key=idem)
            continue
        done = counters[table].increment(cid, by, idempotency_key=idem)
        # THEN a key new on its table is counted, a repeat on its table is a duplicate
        assert done.duplicate is (before is not None), (table, counter_id, key, by)
        if before is None:
            totals[table][counter_id] += by
            if key is not None:
                seen[table][(counter_id, key)] = by
    # AND every total equals the reference's, and no token was ever taken for another request
    for table, counter in enumerate(counters):
        for counter_id in ("c0", "c1"):
            assert counter.get(f"{run}-{counter_id}", exact=True).total == totals[table][counter_id], (table, counter_id)
    assert mismatches == []
