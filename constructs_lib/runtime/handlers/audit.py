"""The audit Lambda: stream records in, audit items out (:func:`handler`).

Reading top to bottom: typed values (Lambda's stream JSON), building one audit item from one
record in wire form (:func:`build_item`: diff, redaction, size limit), writing a batch with
prepared request bodies (:func:`write_records`, ADR 0059), and the handler. Every attribute of
an item is a function of the record, never of the clock, so a redelivered record rewrites the
identical item. The first record that cannot be built or written is reported in
``batchItemFailures`` with every later one: nothing is dropped and per-item order holds. The key
layout belongs to the audit pattern (``runtime/patterns/audit``).

See docs/adr/0013-audit-key-layout-and-idempotency.md.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from typing import TYPE_CHECKING, Any

from .. import _aws, key_segments
from ..exceptions import DynamoDBError, KeyValueError, RuntimeClientError
from ..limits import BATCH_WRITE_LIMIT, THROTTLING_CODES
from ..patterns.audit import wire
from ..patterns.audit.client import AuditClient
from ..patterns.audit.keys import audit_pk, day_shard, format_ms, sha256_hex
from ..patterns.audit.spec import (
    AUDIT_TYPE,
    EPOCH,
    GSI1PK,
    GSI1SK,
    HASHED_PREFIX,
    MAX_EPOCH_MS,
    MAX_GSI_SK_BYTES,
    MAX_ITEM_BYTES,
    PK,
    REDACTED_ACTOR,
    SEQUENCE_DIGITS,
    SK,
    TTL_ACTOR,
    TTL_EVENT_NAME,
    TTL_IDENTITY,
    UNKNOWN,
    AuditSpec,
    check_salt,
)
from ..patterns.audit.values import b64, binary, is_wire, number_text, to_wire, typed_tag, utf8_len
from ..replication import DELETE_ATTRIBUTE, Replication
from ..values import wire_item_size

if TYPE_CHECKING:
    from botocore.client import BaseClient

logger = logging.getLogger("constructs_lib.audit")
logger.setLevel(logging.INFO)

_SEQUENCE = re.compile(r"[0-9]{1,40}")
#: What each type's inner value must be (binary values: base64 text, or bytes).
_INNER: dict[str, Any] = {
    "S": str, "N": str, "B": (str, bytes), "BOOL": bool, "NULL": bool, "SS": list, "NS": list, "BS": list,
    "M": Mapping, "L": list,
}


# Typed values --------------------------------------------------------------------------------------
def _canonical(value: Any, where: str) -> Any:
    """A JSON-able form equal for equal values: sets sorted, numbers normalized, base64 normalized."""
    tag, inner = typed_tag(value, where)
    if not isinstance(inner, _INNER[tag]) or (tag == "SS" and not all(isinstance(v, str) for v in inner)):
        raise KeyValueError(f"{where}: the inner value of a {tag} is of the wrong type")
    if tag == "N":
        return {"N": number_text(inner, where)}
    if tag == "B":
        return {"B": b64(binary(inner, where))}
    if tag == "NS":
        return {"NS": sorted({number_text(n, where) for n in inner})}
    if tag == "BS":
        return {"BS": sorted({b64(binary(b, where)) for b in inner})}
    if tag == "SS":
        return {"SS": sorted(set(inner))}
    if tag == "M":
        return {"M": {k: _canonical(v, f"{where}.{k}") for k, v in inner.items()}}
    if tag == "L":
        return {"L": [_canonical(v, f"{where}[{i}]") for i, v in enumerate(inner)]}
    return {tag: inner}


def canonical_json(value: Mapping[str, Any], where: str = "value") -> str:
    """Canonical JSON text of one typed value — what redaction and size hashing digest."""
    return json.dumps(_canonical(value, where), sort_keys=True, separators=(",", ":"))


def _to_boto(value: Any) -> Any:
    """A typed value as the low-level boto3 client writes it (B and BS as bytes, recursively)."""
    tag, inner = next(iter(value.items()))
    if tag == "B":
        return {"B": binary(inner, "B")}
    if tag == "BS":
        return {"BS": [binary(b, "BS") for b in inner]}
    if tag == "M":
        return {"M": {k: _to_boto(v) for k, v in inner.items()}}
    if tag == "L":
        return {"L": [_to_boto(v) for v in inner]}
    return value


def _epoch_ms(value: Any, seq: str) -> int:
    if isinstance(value, datetime):
        ms = (key_segments.require_aware(value, "ApproximateCreationDateTime") - EPOCH) // timedelta(milliseconds=1)
    elif isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        seconds = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
        ms = int((seconds * 1000).to_integral_value(ROUND_FLOOR)) if seconds.is_finite() else -1
    else:
        ms = -1
    if not 0 <= ms <= MAX_EPOCH_MS:
        raise KeyValueError(f"record {seq}: ApproximateCreationDateTime {value!r} must be epoch seconds (a number, 1970..9999)")
    return ms


# Building the audit item --------------------------------------------------------------------------
def event_kind(record: Mapping[str, Any]) -> str:
    """INSERT, MODIFY, REMOVE or EXPIRE (a TTL deletion, in its AWS or DynamoDB Local form)."""
    name = record.get("eventName")
    if name in ("INSERT", "MODIFY"):
        return str(name)
    if name == "REMOVE":
        identity = record.get("userIdentity")
        if isinstance(identity, Mapping):
            lowered = {str(k).lower(): v for k, v in identity.items()}
            if lowered.get("type") == TTL_IDENTITY["type"] and lowered.get("principalid") == TTL_IDENTITY["principalId"]:
                return "EXPIRE"
        return "REMOVE"
    if name == TTL_EVENT_NAME:
        return "EXPIRE"
    raise KeyValueError(f"stream record eventName {name!r} is not INSERT, MODIFY, REMOVE or {TTL_EVENT_NAME} (TTL deletion)")


def diff(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Changed attributes: name → ``{"before": v, "after": v}`` (a side absent when the attribute
    was); values compared by their canonical form (map order, set order, ``1.50 == 1.5``).
    Every value is checked, so a malformed one raises KeyValueError (naming it, not its value)."""
    old, new = old or {}, new or {}
    before = {name: _canonical(v, name) for name, v in old.items()}
    after = {name: _canonical(v, name) for name, v in new.items()}
    changes: dict[str, dict[str, Any]] = {}
    for name in sorted(set(old) | set(new)):
        if name in old and name in new and before[name] == after[name]:
            continue
        changes[name] = {side: image[name] for side, image in (("before", old), ("after", new)) if name in image}
    return changes


def _wire_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """:func:`diff` of images whose values all passed :func:`is_wire` (so they are valid): values
    equal as they are need no canonical form, which a changed value alone pays for."""
    changes: dict[str, dict[str, Any]] = {}
    for name in sorted(old.keys() | new.keys()):
        if name in old and name in new:
            before, after = old[name], new[name]
            if before == after or _canonical(before, name) == _canonical(after, name):
                continue
            changes[name] = {"before": before, "after": after}
        elif name in old:
            changes[name] = {"before": old[name]}
        else:
            changes[name] = {"after": new[name]}
    return changes


@functools.lru_cache(maxsize=4)
def _keyed(salt: str) -> hmac.HMAC:
    """The HMAC-SHA256 state after the salt (copied for each value)."""
    return hmac.new(salt.encode("utf-8", "surrogatepass"), digestmod=hashlib.sha256)


class _Hasher:
    """Salted hashes of one record's redacted values; the same value object (a change's ``after``
    and the image's entry) is hashed once."""

    def __init__(self, salt: str | None) -> None:
        self.salt = salt or ""
        self.done: dict[int, tuple[Mapping[str, Any], str]] = {}

    def __call__(self, value: Mapping[str, Any], where: str) -> dict[str, str]:
        seen = self.done.get(id(value))
        if seen is None or seen[0] is not value:
            digest = _keyed(self.salt).copy()
            digest.update(canonical_json(value, where).encode())
            seen = self.done[id(value)] = (value, "sha256:" + digest.hexdigest())
        return {"S": seen[1]}


def _entity(spec: AuditSpec, *images: Mapping[str, Any] | None) -> str:
    for image in images:
        value = (image or {}).get(spec.entity_attribute)
        if isinstance(value, Mapping) and isinstance(value.get("S"), str) and value["S"]:
            return str(value["S"])
    return UNKNOWN


def _actor(spec: AuditSpec, event: str, new: Mapping[str, Any] | None, hashed: _Hasher) -> str:
    if event == "EXPIRE":
        return TTL_ACTOR
    if event == "REMOVE" or spec.actor_attribute is None:
        return UNKNOWN
    value = (new or {}).get(spec.actor_attribute)
    if not isinstance(value, Mapping) or not isinstance(value.get("S"), str) or not value["S"]:
        return UNKNOWN
    if spec.actor_attribute not in spec.redact:
        return str(value["S"])
    return REDACTED_ACTOR if spec.redaction == "drop" else hashed(value, "actor")["S"]


def _redact(spec: AuditSpec, changes: dict[str, Any], image: dict[str, Any] | None, hashed: _Hasher) -> None:
    for name in spec.redact:
        if spec.redaction == "drop":
            if name in changes:
                changes[name] = {"redacted": {"S": "dropped"}}
            if image is not None:
                image.pop(name, None)
            continue
        if name in changes:
            changes[name] = {side: hashed(v, name) for side, v in changes[name].items()}
        if image is not None and name in image:
            image[name] = hashed(image[name], name)


def _table_key(spec: AuditSpec, keys: Any, seq: str) -> dict[str, Any]:
    """The source table's key from a record's ``Keys``. DynamoDB Local's TTL deletions also list
    the item's index key attributes there; only the table key identifies the item."""
    if not isinstance(keys, Mapping) or any(a not in keys for a in spec.key_attributes):
        names = sorted(keys) if isinstance(keys, Mapping) else keys
        raise KeyValueError(
            f"record {seq}: Keys {names!r} lack the source key attributes {list(spec.key_attributes)!r}"
        )
    return {a: keys[a] for a in spec.key_attributes}


def build_item(record: Mapping[str, Any], spec: AuditSpec, source_table: str, salt: str | None = None) -> dict[str, Any]:
    """The audit item for one Lambda DynamoDB stream record, typed and ready for PutItem.

    Deterministic: the same record, spec and salt always give the identical item. Values the
    record holds unchanged may be shared with it, not copied.

    Raises
    ------
    KeyValueError
        Unknown eventName, a missing image (the stream must be NEW_AND_OLD_IMAGES), bad keys,
        sequence number or creation time.
    RedactionError
        ``spec`` hashes redacted attributes and ``salt`` is empty.
    """
    return _for_boto(*_build(record, spec, source_table, salt))


def _for_boto(item: dict[str, Any], text: str) -> dict[str, Any]:
    """The wire item as the low-level boto3 client takes it: binary values as bytes. ``text`` (its
    JSON) holds ``{"B": "`` or ``{"BS": [`` wherever a binary value is (JSON escapes every quote
    inside a string); without them there is nothing to convert."""
    if '{"B": "' in text or '{"BS": [' in text:
        return {name: _to_boto(value) for name, value in item.items()}
    return item


def _build(record: Mapping[str, Any], spec: AuditSpec, source_table: str, salt: str | None) -> tuple[dict[str, Any], str]:
    """:func:`build_item` in wire form (binary values as canonical base64 text), and its JSON text
    as botocore would serialize it (``json.dumps`` with its defaults)."""
    check_salt(spec, salt)
    if not isinstance(source_table, str) or not source_table:
        raise KeyValueError(f"source_table {source_table!r} must be a non-empty table name")
    ddb = record.get("dynamodb") if isinstance(record, Mapping) else None
    if not isinstance(ddb, Mapping):
        raise KeyValueError("stream record has no 'dynamodb' map; expected a Lambda DynamoDB stream record")
    seq = ddb.get("SequenceNumber")
    if not isinstance(seq, str) or not _SEQUENCE.fullmatch(seq):
        raise KeyValueError(f"stream record SequenceNumber {seq!r} must be 1 to {SEQUENCE_DIGITS} decimal digits")
    event = event_kind(record)
    new, old = ddb.get("NewImage"), ddb.get("OldImage")
    for needed, given, name in ((event in ("INSERT", "MODIFY"), new, "NewImage"), (event != "INSERT", old, "OldImage")):
        if needed and not isinstance(given, Mapping):
            raise KeyValueError(f"{event} record {seq} has no {name}; the audited stream must be NEW_AND_OLD_IMAGES")
    if event not in ("INSERT", "MODIFY"):
        new = None
    ms = _epoch_ms(ddb.get("ApproximateCreationDateTime"), seq)
    changed_at = format_ms(ms)
    keys = _table_key(spec, ddb.get("Keys"), seq)
    pk = audit_pk(spec, keys)
    sk = f"{changed_at}#{seq:0>{SEQUENCE_DIGITS}}"
    gsi_sk = f"{sk}#{pk}"
    if utf8_len(gsi_sk) > MAX_GSI_SK_BYTES:
        gsi_sk = f"{sk}#{HASHED_PREFIX}{sha256_hex(pk)}"
    before = old if event != "INSERT" else None
    image: dict[str, Any] | None
    if all(map(is_wire, keys.values())) and all(map(is_wire, (before or {}).values())) \
            and all(map(is_wire, (new or {}).values())):  # as Lambda delivers them: used as they are
        changes = _wire_diff(dict(before or {}), dict(new or {}))
        image = dict(new) if new is not None else None
    else:  # diff() checks every value (raising for a malformed one); then the wire form of each
        changes = {n: {side: to_wire(v) for side, v in c.items()} for n, c in diff(before, new).items()}
        image = {n: to_wire(v) for n, v in new.items()} if new is not None else None
        keys = {a: to_wire(v) for a, v in keys.items()}
    hashed = _Hasher(salt)
    _redact(spec, changes, image, hashed)
    item: dict[str, Any] = {
        PK: {"S": pk}, SK: {"S": sk},
        GSI1PK: {"S": f"DAY#{changed_at[:10]}#{day_shard(spec, pk):03d}"}, GSI1SK: {"S": gsi_sk},
        "_type": {"S": AUDIT_TYPE}, "source_table": {"S": source_table}, "entity": {"S": _entity(spec, new, old)},
        "key": {"M": keys}, "event": {"S": event}, "changed": {"L": [{"S": n} for n in changes]},
        "changes": {"M": {n: {"M": c} for n, c in changes.items()}}, "actor": {"S": _actor(spec, event, new, hashed)},
        "changed_at": {"S": changed_at}, "sequence_number": {"S": seq},
    }
    if image is not None:
        item["image"] = {"M": image}
    if isinstance(record.get("eventID"), str) and record["eventID"]:
        item["event_id"] = {"S": record["eventID"]}
    if spec.retention_seconds is not None:
        item[spec.audit_ttl_attribute] = {"N": str(ms // 1000 + spec.retention_seconds)}
    text = _json(item)
    if len(text) > MAX_ITEM_BYTES:  # the JSON text is never shorter than the item's size (ADR 0059)
        _fit(item, spec)
        text = _json(item)
    return item, text


def _json(item: Mapping[str, Any]) -> str:
    """A wire item's JSON text as botocore's JSON serializer writes it (``json.dumps`` defaults: ASCII
    with escapes, ``", "`` and ``": "``), so it can go into the request body as it is."""
    return json.dumps(item)


def _fit(item: dict[str, Any], spec: AuditSpec) -> None:
    """Shrink ``item`` in place until it fits :data:`MAX_ITEM_BYTES` (see the module docstring)."""
    def omit_image() -> None:
        if item.pop("image", None) is not None:
            item["image_omitted"] = {"BOOL": True}

    def hash_values() -> None:
        for name, change in item["changes"]["M"].items():
            if name not in spec.redact:
                change["M"] = {s: {"S": "sha256:" + sha256_hex(canonical_json(v, name))} for s, v in change["M"].items()}
        item["values_omitted"] = {"BOOL": True}

    def omit_changes() -> None:
        item["changes"] = {"M": {}}
        item["changes_omitted"] = {"BOOL": True}

    def omit_changed() -> None:
        item["changed"] = {"L": []}

    for step in (omit_image, hash_values, omit_changes, omit_changed):
        if wire_item_size(item) <= MAX_ITEM_BYTES:
            return
        step()
    if wire_item_size(item) > MAX_ITEM_BYTES:  # only keys and metadata remain: cannot happen for valid keys
        raise KeyValueError(f"audit record {item[SK]['S']} is over {MAX_ITEM_BYTES} bytes even without its changes")



# Writing a batch --------------------------------------------------------------------------------------
def write_records(
    client: BaseClient,
    audit_table: str,
    spec: AuditSpec,
    source_table: str,
    records: Sequence[Mapping[str, Any]],
    salt: str | None = None,
    *,
    retries: int = 8,
) -> list[str]:
    """Audit ``records`` (one stream batch, in order); return the sequence numbers NOT stored.

    The result is empty, or the first record that could not be built or written followed by
    every later record (see the module docstring); records before it are stored.

    Raises
    ------
    KeyValueError
        A record has no ``dynamodb.SequenceNumber`` (it could not be reported as a failure).
    """
    seqs = [_sequence_of(record, n) for n, record in enumerate(records)]
    items: list[tuple[dict[str, Any], str]] = []
    error: str | None = None
    for record in records:
        try:
            items.append(_build(record, spec, source_table, salt))
        except RuntimeClientError as exc:  # KeyValueError, RedactionError: this record cannot be audited
            error = f"cannot build the audit record: {exc}"
            break
    written = 0
    for start in range(0, len(items), BATCH_WRITE_LIMIT):
        done, chunk_error = _write_chunk(client, audit_table, items[start:start + BATCH_WRITE_LIMIT], retries)
        written += done
        if chunk_error is not None:
            error = chunk_error
            break
    failed = seqs[written:]
    if failed:
        logger.error(json.dumps({"msg": "audit stopped", "sequence_number": failed[0], "error": error}))
    logger.info(json.dumps({
        "msg": "audited", "source_table": source_table, "records": len(records), "written": written,
        "failed": len(failed), "first_failed": failed[0] if failed else None,
    }))
    return failed


def _sequence_of(record: Any, position: int) -> str:
    ddb = record.get("dynamodb") if isinstance(record, Mapping) else None
    seq = ddb.get("SequenceNumber") if isinstance(ddb, Mapping) else None
    if not isinstance(seq, str) or not seq:
        raise KeyValueError(
            f"record #{position} of the batch has no dynamodb.SequenceNumber, so it cannot be reported as a "
            "batch item failure; failing the whole batch"
        )
    return seq


def _write_chunk(client: BaseClient, table: str, chunk: list[tuple[dict[str, Any], str]],
                 retries: int) -> tuple[int, str | None]:
    """Write ≤ 25 items; return (how many leading items are stored, error or None).

    One BatchWriteItem, then the items DynamoDB left unprocessed (and a throttled call) again with
    jittered exponential backoff, up to ``retries`` times; another error: item by item."""
    position = {(item[PK]["S"], item[SK]["S"]): n for n, (item, _) in enumerate(chunk)}
    pending, cause = list(range(len(chunk))), None
    for attempt in range(retries + 1):
        if attempt:
            _aws.sleep(_aws.backoff(attempt - 1))
        try:
            left = _batch_write(client, table, [chunk[n] for n in pending])
        except DynamoDBError as exc:
            cause = exc
            if exc.code not in THROTTLING_CODES:  # e.g. ValidationException: find the bad item
                return _put_each(client, table, chunk, retries, exc)
            continue
        cause, pending = None, [position[key] for key in left]
        if not pending:
            return len(chunk), None
    problem = str(cause) if cause is not None else f"{len(pending)} item(s) unprocessed (throttling)"
    return min(pending), f"BatchWriteItem still incomplete after {retries} retries: {problem}"


def _batch_write(client: BaseClient, table: str, items: list[tuple[dict[str, Any], str]]) -> list[tuple[str, str]]:
    """One BatchWriteItem of ``items``; the keys (PK, SK) of those DynamoDB left unprocessed.

    A botocore client gets the body built from the items' JSON text (:mod:`..patterns.audit.wire`:
    what botocore would serialize, without its per-value validation and serialization); any other
    client, the request items."""
    if wire.usable(client):
        try:
            response = wire.send_body(client, table, wire.body(table, [text for _, text in items]))
        except wire.NotSwapped as exc:
            logger.warning(json.dumps({"msg": "the client did not take the prepared body; sending request items",
                                       "error": str(exc)}))
            return _batch_write(client, table, items)
    else:
        response = _aws.call(client, "batch_write_item",
                             RequestItems={table: [{"PutRequest": {"Item": _for_boto(*built)}} for built in items]})
    left = (response.get("UnprocessedItems") or {}).get(table) or []
    return [(r["PutRequest"]["Item"][PK]["S"], r["PutRequest"]["Item"][SK]["S"]) for r in left]


def _put_each(client: BaseClient, table: str, chunk: list[tuple[dict[str, Any], str]], retries: int,
              cause: DynamoDBError) -> tuple[int, str | None]:
    logger.warning(json.dumps({"msg": "BatchWriteItem refused; writing item by item to isolate the bad record",
                               "error": str(cause)}))
    for n, built in enumerate(chunk):
        for attempt in range(retries + 1):
            try:
                _aws.call(client, "put_item", TableName=table, Item=_for_boto(*built))
                break
            except DynamoDBError as exc:
                if exc.code not in THROTTLING_CODES or attempt == retries:
                    return n, f"PutItem failed: {exc}"
                _aws.sleep(_aws.backoff(attempt))
    return len(chunk), None


# The handler -------------------------------------------------------------------------------------------
_client: AuditClient | None = None


def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
    """Lambda entry point for stream batches ``{"Records": [...]}``; returns the partial batch
    response ``{"batchItemFailures": [{"itemIdentifier": <SequenceNumber>}, ...]}``.

    The client (and the salt, from the environment or its Secrets Manager secret) is built
    once per execution environment (see :meth:`AuditClient.from_environment`). With
    ``redaction="hash"`` and no salt, every invocation raises RedactionError: nothing is
    written, the batch is retried and finally reaches the on-failure queue.
    """
    global _client
    if _client is None:
        _client = AuditClient.from_environment(writer=True)
    records = event.get("Records") if isinstance(event, Mapping) else None
    if not isinstance(records, list):
        raise KeyValueError(f"event {str(event)[:80]!r} is not a DynamoDB stream batch ({{'Records': [...]}})")
    c = _client
    if Replication.from_environment() is not None:
        records = _written_here(records)
    failed = write_records(c.client, c.audit_table_name, c.spec, c.source_table_name, records, c.salt, retries=c.batch_retries)
    return {"batchItemFailures": [{"itemIdentifier": seq} for seq in failed]}


def _written_here(records: list[Any]) -> list[Any]:
    """On a replicated source: drop REMOVE records that carry neither a delete stamp nor the TTL
    identity — a TTL deletion replicated from another region (AWS marks a TTL deletion only where it
    happened), or a delete that bypassed ``TableClient``. The event filter lets them through because
    Lambda cannot filter DynamoDB records on ``userIdentity`` (ADR 0055); they are logged, not stored."""
    kept, skipped = [], []
    for record in records:
        ddb = record.get("dynamodb") if isinstance(record, Mapping) else None
        old = (ddb or {}).get("OldImage") or {}
        if record.get("eventName") == "REMOVE" and DELETE_ATTRIBUTE not in old and event_kind(record) != "EXPIRE":
            skipped.append((ddb or {}).get("SequenceNumber"))
        else:
            kept.append(record)
    if skipped:
        logger.info(json.dumps({"msg": "skipped deletes not made in this region", "count": len(skipped),
                                "sequence_numbers": skipped[:10]}))
    return kept


__all__ = ["BATCH_WRITE_LIMIT", "build_item", "canonical_json", "diff", "event_kind", "handler", "write_records"]
