"""Idempotent counter increments on several tables of one DynamoDB Local: a transaction's
ClientRequestToken is remembered per server (per account and region on AWS), not per table, so
the token must never make one table's increment look like another's (ADR 0035).

Idempotency keys here start with ``tok-``: no other test uses them (tokens outlive tables).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

from constructs_lib.runtime import CounterClient
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


@pytest.fixture
def two_tables(local_deploy: Callable[..., LocalDeployment], shop_template: dict[str, Any]) -> list[dict[str, str]]:
    """Two deployments of the same synthesized shop template (staging and prod in one account and
    region): the product_views family's resolved environment of each."""
    return [
        local_deploy(shop_template, name_prefix=prefix).function_environment("ProductViewsFunction")
        for prefix in ("staging-", "prod-")
    ]


def views(env: dict[str, str], client: Any, **kw: Any) -> CounterClient:
    return CounterClient.from_environment("product_views", environ=env, client=client, **kw)


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
