"""One library version's side of tests/packaging/test_cross_version.py, run by that version's
interpreter (the earlier wheel's virtualenv, or this checkout's): ``write DIR`` writes the four
documents two repositories exchange for each model below, ``read DIR`` reads another version's and
checks them against its own, ``newer DIR`` reads them with their format version raised past its
own. Each prints its findings as one JSON line. Only API both versions have is used.

The documents: the model JSON (bundled into every function), the contract file (a producer writes
it, a consumer commits it), a consumer's slice file (the consumer writes it, the producer's ``diff``
reads it) and the published contract (the producer's SSM parameter, read at a consumer function's
cold start).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from constructs_lib.model import (
    VERSION,
    AccessPattern,
    Entity,
    Field,
    Index,
    IndexKey,
    Model,
    contract_file,
    fingerprints,
    slices,
)

#: Declared in sorted order: 0.2.0 resolves set-valued declarations to sorted sets, so a model
#: declaring one out of order has new fingerprints once (CHANGELOG 0.2.0, "Changed"; the one
#: non-additive change of the release, named in docs/releases.md).
STATUS = ("PAID", "PENDING", "SHIPPED")


def models() -> dict[str, Model]:
    """Models using every declaration both versions know: typed, enum, bounded and time-bucketed
    fields, versions, TTL, sparse, overloaded, write-sharded and local indexes, an INCLUDE
    projection, typed attributes, declared sizes, tenancy, and a consumer view."""
    shop = Model(
        "shop",
        entities=[
            Entity("User", pk="USER#{user_id}", sk="PROFILE", fields={"user_id": Field.string(max_length=64),
                                                                      "email": "string"},
                   indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="USER")}, required=("email", "name"),
                   attributes={"name": "string", "age": "integer"}, version_attribute="version",
                   description="A customer."),
            Entity("Order", pk="USER#{user_id}", sk="ORDER#{created_at}#{order_id}",
                   fields={"user_id": "string", "order_id": "string", "created_at": Field.timestamp(),
                           "status": Field.enum(*STATUS), "total": Field.number(width=8)},
                   indexes={"GSI1": IndexKey(pk="ORDER#{order_id}", sk="ORDER"),
                            "GSI2": IndexKey(pk="STATUS#{status}", sk="{created_at}#{order_id}",
                                             when_equals={"status": ("PENDING",)}),
                            "GSI3": IndexKey(pk="STATUS#{status}#{shard}", sk="{created_at}#{order_id}", shards=4,
                                             shard_by="order_id"),
                            "LSI1": IndexKey(sk="TOTAL#{total}")},
                   required=("status",), attributes={"lines": "integer", "note": "string"},
                   typical_item_bytes=900),
            Entity("Line", pk="ORDER#{order_id}", sk="LINE#{line}", fields={"order_id": "string",
                                                                           "line": Field.number(width=4)}),
            Entity("Reading", pk="SENSOR#{sensor_id}#{ts:month}", sk="{ts}",
                   fields={"sensor_id": "string", "ts": Field.timestamp()}),
        ],
        indexes=[Index("GSI1"), Index("GSI2", projection="KEYS_ONLY"), Index("GSI3", projection=("status", "total")),
                 Index("LSI1", kind="LSI")],
        access_patterns=[
            AccessPattern("user profile", entity="User", sk="="),
            AccessPattern("user by email", entity="User", index="GSI1"),
            AccessPattern("orders newest first", entity="Order", sk="begins_with", descending=True),
            AccessPattern("orders in a date range", entity="Order", sk="between", sk_fields=("created_at",)),
            AccessPattern("order by id", entity="Order", index="GSI1"),
            AccessPattern("pending orders", entity="Order", index="GSI2", sk="between"),
            AccessPattern("orders by status", entity="Order", index="GSI3", descending=True),
            AccessPattern("lines of an order", entity="Line", sk="begins_with"),
            AccessPattern("readings in a month", entity="Reading"),
        ],
        ttl_attribute="expires_at",
    )
    saas = Model(
        "saas",
        entities=[Entity("Document", pk="TENANT#{tenant_id}#DOC#{doc_id}", sk="DOC",
                         fields={"tenant_id": "string", "doc_id": "string"}, required=("title",),
                         attributes={"title": "string"})],
        access_patterns=[AccessPattern("document by id", entity="Document", sk="=")],
        tenant_field="tenant_id",
    )
    view = shop.view(extra_patterns=[AccessPattern("users of an order", entity="Order", index="GSI1",
                                                   sk="begins_with")])
    return {"shop": shop, "saas": saas, "view": view}


def contract(model: Model, name: str) -> dict[str, Any]:
    """The producer's contract of ``model``: a stream, a physical name, and for one a global table."""
    replication = ({"consistency": "EVENTUAL", "region": "eu-west-1", "replica_regions": ["us-east-1"],
                    "witness_region": None, "acknowledged": {}} if name == "saas" else None)
    return contract_file.build_contract(model, stream_view_type="NEW_AND_OLD_IMAGES", table_name=f"{name}-data",
                                        replication=replication)


def write(directory: Path) -> dict[str, Any]:
    facts = {}
    for name, model in models().items():
        (directory / f"{name}.model.json").write_text(model.to_json(), encoding="utf-8")
        (directory / f"{name}.slice.json").write_text(slices.slice_of(model, consumer=name).to_json(), encoding="utf-8")
        if name != "view":  # a view is a consumer's: it publishes nothing
            document = contract(model, name)
            (directory / f"{name}.contract.json").write_text(contract_file.contract_json(document), encoding="utf-8")
            (directory / f"{name}.published.json").write_text(slices.published_json(model), encoding="utf-8")
            facts[name] = {"fingerprints": document["fingerprints"]}
        facts.setdefault(name, {})["model_json"] = model.to_json()
    return facts


def _breaks(piece: Any, against: Any) -> list[str]:
    return [b.describe() for b in slices.check_slice(piece, against)]


def read(directory: Path) -> dict[str, Any]:
    """Each document of the other version read, and checked against this version's own."""
    own = models()
    facts: dict[str, Any] = {}
    for name, mine in own.items():
        found: dict[str, Any] = {}
        theirs = Model.from_json((directory / f"{name}.model.json").read_text(encoding="utf-8"))
        found["model_equal"] = theirs == mine and theirs.to_json() == mine.to_json()
        found["model_fingerprint_equal"] = fingerprints.fingerprint(theirs) == fingerprints.fingerprint(mine)
        their_slice = slices.read_slice(directory / f"{name}.slice.json")
        producer = "shop" if name == "view" else name
        my_contract = contract_file.read_contract(contract_file.contract_json(contract(own[producer], producer)), Model)
        # Their consumer's slice against my producer's contract (the producer's diff)
        found["their_slice_vs_my_contract"] = _breaks(their_slice, my_contract)
        if name != "view":
            their_contract = contract_file.read_contract(directory / f"{name}.contract.json", Model)
            found["contract_fingerprints_equal"] = (
                their_contract.fingerprint, dict(their_contract.entity_fingerprints),
                dict(their_contract.index_fingerprints)) == (my_contract.fingerprint,
                                                             dict(my_contract.entity_fingerprints),
                                                             dict(my_contract.index_fingerprints))
            found["contract_model_equal"] = their_contract.model == mine
        their_producer = contract_file.read_contract(directory / f"{producer}.contract.json", Model)
        published = slices.read_published((directory / f"{producer}.published.json").read_text(encoding="utf-8"),
                                          source=f"{producer}.published.json")
        my_slice = slices.slice_of(mine, consumer=name)
        # My consumer's slice against their producer's contract file and published parameter
        # (contract verify, and a consumer function's cold-start check)
        found["my_slice_vs_their_contract"] = _breaks(my_slice, their_producer)
        found["my_slice_vs_their_published"] = _breaks(my_slice, published)
        facts[name] = found
    return facts


def newer(directory: Path) -> dict[str, Any]:
    """Each document with its format version one past what this version reads: the error raised."""
    readers = {
        "model": ("shop.model.json", "version", VERSION, lambda d: Model.from_dict(d)),
        "contract": ("shop.contract.json", "format_version", contract_file.FORMAT_VERSION,
                     lambda d: contract_file.read_contract(d, Model)),
        "slice": ("shop.slice.json", "format_version", slices.SLICE_VERSION, lambda d: slices.read_slice(d)),
        "published": ("shop.published.json", "format_version", slices.PUBLISHED_VERSION,
                      lambda d: slices.read_published(d, source="published")),
    }
    facts = {}
    for kind, (file, key, supported, reader) in readers.items():
        document = json.loads((directory / file).read_text(encoding="utf-8"))
        document[key] = supported + 1
        try:
            reader(document)
            facts[kind] = {"refused": False, "supported": supported}
        except Exception as exc:  # noqa: BLE001 - the point is which error, reported back
            facts[kind] = {"refused": True, "error": type(exc).__name__, "message": str(exc), "supported": supported,
                           "given": supported + 1}
    return facts


def main() -> None:
    import constructs_lib

    command, directory = sys.argv[1], Path(sys.argv[2])
    result = {"write": write, "read": read, "newer": newer}[command](directory)
    print(json.dumps({"version": constructs_lib.__version__, "package": constructs_lib.__file__, command: result}))


if __name__ == "__main__":
    main()
