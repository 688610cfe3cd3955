"""The audit writer's output, byte for byte, against a reference recorded from an earlier version.

``audit_golden/records.json`` holds real stream records of DynamoDB Local in Lambda's shape
(``capture_records.py``); ``audit_golden/expected.json`` what the writer built and sent for them
(``python tests/unit/runtime/test_audit_golden.py --write-expected`` rewrites it from the current
code: only on purpose). Checked: every ``build_item`` item (types and attribute order), the request
items ``write_records`` hands the client, and the exact BatchWriteItem HTTP bodies it sends.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config

from constructs_lib.runtime.handlers import audit as audit_handler
from constructs_lib.runtime.patterns.audit import AuditSpec

HERE = Path(__file__).parent / "audit_golden"
RECORDS: list[dict[str, Any]] = json.loads((HERE / "records.json").read_text(encoding="utf-8"))
EXPECTED_FILE = HERE / "expected.json"
SALT = "golden-salt"
SOURCE, AUDIT = "AuditGoldenSource", "AuditGoldenAudit"
SPECS = {
    "hash": AuditSpec(redact=("email", "updated_by"), retention_seconds=365 * 86_400),
    "drop": AuditSpec(redact=("email", "profile"), redaction="drop", day_shards=3, actor_attribute="nickname"),
    "plain": AuditSpec(actor_attribute=None, audit_ttl_attribute="ttl"),
}
BYTES = "\x00bytes:"


# The cases: the real records, and records derived from them for what a small capture cannot hold ------------------
def _with(record: dict[str, Any], seq: str, **images: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(record)
    out["eventID"] = f"derived-{seq}"
    out["dynamodb"]["SequenceNumber"] = seq
    for name, extra in images.items():
        out["dynamodb"][name] = {**out["dynamodb"][name], **extra}
    return out


def cases() -> list[dict[str, Any]]:
    """The real records, then derived ones: items too large for the audit table (image omitted; values
    replaced by digests; changes omitted), binary values as bytes (boto3's stream records) and as
    base64 text with non-zero padding bits, and a fractional creation time."""
    insert, modify = RECORDS[0], RECORDS[2]
    big = "x" * 300_000
    many = {f"{n:04d}" + "n" * 246: {"S": "v"} for n in range(1_400)}
    return [
        *RECORDS,
        _with(insert, "9000001", NewImage={"bio": {"S": big}}),
        _with(modify, "9000002", OldImage={"bio": {"S": "a" * 180_000}}, NewImage={"bio": {"S": "b" * 180_000}}),
        _with(insert, "9000003", NewImage=many),
        _with(insert, "9000004", NewImage={"raw": {"B": b"\x00\xff raw"}, "raws": {"BS": [b"\x01", b"\x02\x03"]},
                                           "nested": {"M": {"b": {"B": b"\x10"}, "l": {"L": [{"B": b"\x11"}]}}}}),
        _with(modify, "9000005", OldImage={"pad": {"B": "QR=="}, "pads": {"BS": ["QR==", "AAE="]}},
              NewImage={"pad": {"B": "QQ=="}, "pads": {"BS": ["AAE=", "QQ=="]}, "odd": {"B": "QR=="}}),
        {**_with(modify, "9000006"), "dynamodb": {**_with(modify, "9000006")["dynamodb"],
                                                   "ApproximateCreationDateTime": 1795733280.0255}},
    ]


def many_cases() -> list[dict[str, Any]]:
    """60 records (three BatchWriteItem chunks): the real ones again and again, each with its own sequence number."""
    return [_with(RECORDS[n % len(RECORDS)], str(5_000_000 + n)) for n in range(60)]


# What is compared -----------------------------------------------------------------------------------------------
def tagged(value: Any) -> Any:
    """JSON-able, keeping what JSON would lose: bytes vs text (and dict order stays as it is)."""
    if isinstance(value, dict):
        return {k: tagged(v) for k, v in value.items()}
    if isinstance(value, list):
        return [tagged(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return BYTES + base64.b64encode(bytes(value)).decode()
    return value


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(tagged(value), ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


class Recorder:
    """A client-shaped recorder of BatchWriteItem request items (everything succeeds)."""

    def __init__(self) -> None:
        self.requests: list[list[dict[str, Any]]] = []

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        ((table, requests),) = RequestItems.items()
        assert table == AUDIT
        self.requests.append(copy.deepcopy(requests))
        return {"UnprocessedItems": {}}


def stub_client(bodies: list[bytes]) -> Any:
    """A real botocore client whose requests never leave the process: each body is appended to
    ``bodies`` and answered with an empty 200 (botocore still validates, serializes and signs what
    it is given). One client for the module, so ``bodies`` is the latest caller's list."""
    SINK[:] = [bodies]
    return _stub()


SINK: list[list[bytes]] = []


@functools.cache
def _stub() -> Any:
    class EmptyBody:
        def stream(self, **_: Any) -> Iterator[bytes]:
            yield b"{}"

    def answer(request: Any, **_: Any) -> AWSResponse:
        SINK[0].append(bytes(request.body))
        return AWSResponse(request.url, 200, {}, EmptyBody())

    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", endpoint_url="http://127.0.0.1:9", aws_access_key_id="golden",
        aws_secret_access_key="golden", config=Config(retries={"mode": "standard", "max_attempts": 1}))
    client.meta.events.register_first("before-send.dynamodb.*", answer)
    return client


def observe(spec: AuditSpec, full: bool) -> dict[str, Any]:
    """What the writer builds and sends for :func:`cases` (one batch) and :func:`many_cases` (60 records).
    Items as they are (``full``, the small ones of ``cases``) or as digests."""
    out: dict[str, Any] = {}
    for name, records in (("cases", cases()), ("many", many_cases())):
        items = [audit_handler.build_item(r, spec, SOURCE, SALT) for r in records]
        recorder, bodies = Recorder(), []
        failed = audit_handler.write_records(recorder, AUDIT, spec, SOURCE, records, SALT)  # type: ignore[arg-type]
        failed += audit_handler.write_records(stub_client(bodies), AUDIT, spec, SOURCE, records, SALT)
        out[name] = {
            "failed": failed,
            "items": [tagged(i) if full and name == "cases" and len(json.dumps(tagged(i))) < 5_000 else digest(i) for i in items],
            "request_items": digest(recorder.requests),
            "bodies": [hashlib.sha256(b).hexdigest() for b in bodies],
        }
    return out


def flat(spec_name: str, observed: dict[str, Any]) -> dict[str, Any]:
    """``observe``'s result as ``"spec/batch/field"`` (items: ``"spec/batch/item/N"``) → value."""
    out: dict[str, Any] = {}
    for name, fields in observed.items():
        for field, value in fields.items():
            if field == "items":
                out.update({f"{spec_name}/{name}/item/{n}": item for n, item in enumerate(value)})
            else:
                out[f"{spec_name}/{name}/{field}"] = value
    return out


def write_expected() -> None:
    """One entry per line, so a changed item is a changed line."""
    entries = {k: v for n, s in SPECS.items() for k, v in flat(n, observe(s, n == "hash")).items()}
    lines = [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in entries.items()]
    EXPECTED_FILE.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


# The tests ------------------------------------------------------------------------------------------------------
def test_the_cases_cover_what_the_writer_distinguishes() -> None:
    # GIVEN the cases / THEN every event kind, every attribute type and every size step is among them
    kinds = {audit_handler.event_kind(r) for r in cases()}
    assert kinds == {"INSERT", "MODIFY", "REMOVE", "EXPIRE"}
    assert {r["eventName"] for r in RECORDS} >= {"INSERT", "MODIFY", "REMOVE", "UNKNOWN_TO_SDK_VERSION"}
    text = json.dumps(RECORDS)
    assert all(f'{{"{tag}": ' in text for tag in ("S", "N", "B", "SS", "NS", "BS", "BOOL", "NULL", "M", "L"))
    assert "E+2" in text  # a number with an exponent, as an update expression wrote it
    flags = [build for build in (audit_handler.build_item(r, SPECS["hash"], SOURCE, SALT) for r in cases())]
    for flag in ("image_omitted", "values_omitted", "changes_omitted"):
        assert any(flag in item for item in flags), flag


@pytest.mark.parametrize("spec_name", sorted(SPECS))
def test_items_requests_and_bodies_are_byte_identical_to_the_reference(spec_name: str) -> None:
    # GIVEN the reference recorded for this spec
    expected = {k: v for k, v in json.loads(EXPECTED_FILE.read_text(encoding="utf-8")).items()
                if k.startswith(f"{spec_name}/")}
    # WHEN the current code builds and writes the same records
    seen = flat(spec_name, observe(SPECS[spec_name], spec_name == "hash"))
    # THEN nothing failed; every item is the same (types, values, attribute order); the client gets the
    # same request items, and the same bytes go over the wire
    assert seen[f"{spec_name}/cases/failed"] == seen[f"{spec_name}/many/failed"] == []
    assert list(seen) == list(expected)
    for key, want in expected.items():
        assert seen[key] == want, key


@pytest.mark.parametrize("spec_name", sorted(SPECS))
def test_each_body_is_what_botocore_makes_of_the_built_items(spec_name: str) -> None:
    # GIVEN the items build_item makes for 60 records (three chunks)
    spec, records = SPECS[spec_name], many_cases()
    items = [audit_handler.build_item(r, spec, SOURCE, SALT) for r in records]
    # WHEN write_records sends them, and botocore serializes the same items itself
    sent: list[bytes] = []
    assert audit_handler.write_records(stub_client(sent), AUDIT, spec, SOURCE, records, SALT) == []
    reference: list[bytes] = []
    plain = stub_client(reference)
    for start in range(0, len(items), 25):
        plain.batch_write_item(RequestItems={AUDIT: [{"PutRequest": {"Item": i}} for i in items[start:start + 25]]})
    # THEN the bodies are byte for byte the same
    assert sent == reference and len(sent) == 3


if __name__ == "__main__" and sys.argv[1:] == ["--write-expected"]:
    write_expected()
    print(f"wrote {EXPECTED_FILE}")
