"""Deeply nested JSON given to the runtime: the pattern specs from the environment, a traffic
snapshot file, a signed cursor and the published contract read at cold start each refuse more
than ``MAX_JSON_DEPTH`` nested arrays and objects with their own typed error naming the source
and the limit (a ``RecursionError`` before), and pass a text nested exactly to the limit on to
their usual checks."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model.slices import published_json
from constructs_lib.runtime import contract
from constructs_lib.runtime.cursors import CursorSigner
from constructs_lib.runtime.exceptions import (
    BackfillError,
    ContractUnavailableError,
    CursorError,
    SettingsError,
    SnapshotFileError,
)
from constructs_lib.runtime.jsontext import MAX_JSON_DEPTH
from constructs_lib.runtime.patterns.audit.spec import AuditSpec
from constructs_lib.runtime.patterns.backfill.spec import BackfillSpec
from constructs_lib.runtime.patterns.counter.spec import CounterSpec
from constructs_lib.runtime.stats import TrafficRecorder, snapshot_to_dict
from constructs_lib.runtime.stats.snapshot_file import read_snapshot
from constructs_lib.testing.local_ssm import LocalSsm
from examples.shop.model import shop_model

LIMIT = MAX_JSON_DEPTH
REFUSED = rf"nests arrays and objects more than {LIMIT} levels deep \(line \d+, column \d+\); at most {LIMIT} levels"
PARAMETER = "/shop/data/contract"


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def outcome(read: Callable[[], Any]) -> Exception | None:
    """What ``read`` raised, or None."""
    try:
        read()
    except Exception as exc:  # any refusal: the caller checks which
        return exc
    return None


def _snapshot_text(total: int) -> str:
    """A recorder's snapshot file whose extra key makes it nest ``total`` levels."""
    data = snapshot_to_dict(TrafficRecorder(1.0, model=shop_model, table_name="shop",
                                            clock=iter([0.0, 10.0]).__next__).snapshot())
    return json.dumps({**data, "extra": "@"}).replace('"@"', nested(total - 1))


def _cursor(blob: bytes) -> tuple[CursorSigner, str]:
    """A signer and a cursor it signed over ``blob`` (what only the key's holder can make)."""
    signer = CursorSigner(b"k" * 32)
    return signer, f"{base64.urlsafe_b64encode(blob).decode().rstrip('=')}.{signer._mac(blob)}"


def _decode(total: int) -> None:
    signer, cursor = _cursor(json.dumps({"k": "@", "q": {}}).replace('"@"', nested(total - 1)).encode())
    signer.decode(cursor, {})


#: name -> (read a document nesting ``total`` levels, its typed error, what the message starts with)
READERS: dict[str, tuple[Callable[[int, Path], Any], type[Exception], str]] = {
    "CounterSpec": (lambda total, _: CounterSpec.from_json(
        CounterSpec(family="views", shards=4).to_json().replace('"ttl_attribute":null', f'"ttl_attribute":{nested(total - 1)}')),
        SettingsError, r"counter spec '\{.*' "),
    "AuditSpec": (lambda total, _: AuditSpec.from_json(
        AuditSpec().to_json().replace('"redact":[]', f'"redact":{nested(total - 1)}')),
        SettingsError, r"audit spec '\{.*' "),
    "BackfillSpec": (lambda total, _: BackfillSpec.from_json(
        BackfillSpec().to_json().replace('"indexes": null', f'"indexes": {nested(total - 1)}')),
        BackfillError, r"backfill spec '\{.*' "),
    "read_snapshot": (lambda total, tmp: read_snapshot(_write(tmp / "traffic.json", _snapshot_text(total))),
                      SnapshotFileError, r"traffic snapshot .*traffic.json: its JSON "),
    "cursor": (lambda total, _: _decode(total), CursorError, r"cursor '.*' "),
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_takes_a_text_nested_to_the_limit_to_its_usual_checks(reader: str, tmp_path: Path) -> None:
    # GIVEN a document nesting exactly MAX_JSON_DEPTH levels WHEN read
    read, _, _ = READERS[reader]
    refused = outcome(lambda: read(LIMIT, tmp_path))
    # THEN it is read, or refused for what it holds, never for how deep it is
    assert refused is None or "levels deep" not in str(refused)
    assert not isinstance(refused, RecursionError)


@pytest.mark.parametrize("levels", [LIMIT + 1, 4096])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_refuses_deeper_nesting_with_its_typed_error(reader: str, levels: int, tmp_path: Path) -> None:
    # GIVEN one level more than the limit, or 4 KB of nested arrays
    read, error, names = READERS[reader]
    # WHEN it is read THEN the reader's typed error names the source, the limit and the place
    with pytest.raises(error, match=rf"^{names}{REFUSED}"):
        read(levels, tmp_path)


def test_a_snapshot_nested_to_the_limit_reads_back(tmp_path: Path) -> None:
    # GIVEN a recorder's snapshot file with an extra key nesting to exactly the limit
    # WHEN it is read THEN it is the snapshot (the extra key is ignored, as before)
    assert read_snapshot(_write(tmp_path / "traffic.json", _snapshot_text(LIMIT))).model == shop_model


# The published contract at cold start ----------------------------------------------------------------
@pytest.fixture
def ssm() -> Iterator[LocalSsm]:
    with LocalSsm() as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contract, "_PUBLISHED", {})


def ssm_client(server: LocalSsm):  # type: ignore[no-untyped-def]
    import boto3

    return boto3.client("ssm", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id="local",
                        aws_secret_access_key="local")


def test_cold_start_refuses_a_deeply_nested_parameter_as_unavailable(ssm: LocalSsm) -> None:
    env = {contract.ENV_CONTRACT_PARAMETER: PARAMETER}
    published = json.loads(published_json(shop_model))
    # GIVEN the contract parameter holds 4 KB of nested arrays (RecursionError at cold start before)
    ssm.parameters[PARAMETER] = nested(2048)
    # WHEN a function of the model starts THEN ContractUnavailableError names the parameter and the limit
    with pytest.raises(ContractUnavailableError, match=rf"^SSM parameter '{PARAMETER}' {REFUSED}") as refused:
        contract.verify(shop_model, environ=env, client=ssm_client(ssm))
    assert refused.value.parameter == PARAMETER
    # AND the published document with an extra key one level past the limit is refused the same way
    ssm.parameters[PARAMETER] = json.dumps({**published, "extra": "@"}).replace('"@"', nested(LIMIT))
    with pytest.raises(ContractUnavailableError, match=REFUSED):
        contract.verify(shop_model, environ=env, client=ssm_client(ssm))
    # AND nested exactly to the limit, it is the contract the function starts against
    contract._PUBLISHED.clear()
    ssm.parameters[PARAMETER] = json.dumps({**published, "extra": "@"}).replace('"@"', nested(LIMIT - 1))
    contract.verify(shop_model, environ=env, client=ssm_client(ssm))
