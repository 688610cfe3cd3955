"""ClientRequestToken derivation (runtime/tokens.py, ADR 0035): pure, no AWS call."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from constructs_lib.runtime.exceptions import SettingsError
from constructs_lib.runtime.tokens import request_token, table_identity, transaction_token


def fake_client(endpoint: str = "http://127.0.0.1:8000", region: str = "us-east-1") -> Any:
    return SimpleNamespace(meta=SimpleNamespace(endpoint_url=endpoint, region_name=region))


def test_the_identity_is_the_endpoint_the_region_and_the_table() -> None:
    # GIVEN a client bound to an endpoint and region WHEN asked THEN the identity names all three
    assert table_identity(fake_client(), "prod-Data") == ("http://127.0.0.1:8000", "us-east-1", "prod-Data")
    # AND a client without meta (a stand-in) still gets the table name
    assert table_identity(object(), "t1") == ("", "", "t1")  # type: ignore[arg-type]


def test_a_token_changes_with_every_part_and_not_with_key_order() -> None:
    base = request_token("p", ("e", "r", "t"), {"a": 1, "b": [1, 2]})
    # GIVEN the same request with its keys in another order THEN the token is the same (canonical JSON)
    assert request_token("p", ("e", "r", "t"), {"b": [1, 2], "a": 1}) == base
    # AND any other purpose, endpoint, region, table or request gives another token
    others = [
        request_token("q", ("e", "r", "t"), {"a": 1, "b": [1, 2]}),
        request_token("p", ("E", "r", "t"), {"a": 1, "b": [1, 2]}),
        request_token("p", ("e", "R", "t"), {"a": 1, "b": [1, 2]}),
        request_token("p", ("e", "r", "T"), {"a": 1, "b": [1, 2]}),
        request_token("p", ("e", "r", "t"), {"a": 2, "b": [1, 2]}),
    ]
    assert len({base, *others}) == 6
    # AND every token is 36 hex digits (DynamoDB's maximum length)
    assert all(len(t) == 36 and int(t, 16) >= 0 for t in (base, *others))


def test_a_transaction_token_names_the_table_and_the_callers_token() -> None:
    client = fake_client()
    # GIVEN one caller token on two tables THEN two tokens; the same table twice THEN the same token
    assert transaction_token(client, "staging-Data", "req-1") != transaction_token(client, "prod-Data", "req-1")
    assert transaction_token(client, "prod-Data", "req-1") == transaction_token(client, "prod-Data", "req-1")
    # AND a token longer than DynamoDB's 36 characters is fine: it is hashed
    assert len(transaction_token(client, "prod-Data", "r" * 200)) == 36


@pytest.mark.parametrize("bad", ["", 42, b"req-1"])
def test_a_transaction_token_must_be_a_non_empty_string(bad: Any) -> None:
    # WHEN the caller's token is not a non-empty string THEN it is refused naming the value and the rule
    with pytest.raises(SettingsError, match=rf"client_request_token {bad!r} must be a non-empty string"):
        transaction_token(fake_client(), "prod-Data", bad)
