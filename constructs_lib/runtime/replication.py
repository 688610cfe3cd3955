"""Writes on a replicated (global) table say which region made them.

Under multi-Region eventual consistency every replica's stream carries local *and* replicated
changes, and nothing in a stream record tells them apart (docs/adr/0055-patterns-under-global-tables.md).
So on a replicated table :class:`TableClient` stamps each write: a put or update sets
:data:`ORIGIN_ATTRIBUTE` to the writing region (and clears a leftover delete stamp); a delete first
sets :data:`DELETE_ATTRIBUTE` to ``<region>#<token>`` and then deletes the item only while that
stamp is still there, so the REMOVE record's old image names the deleting region. Stream
consumers (``StreamAudit``) filter on these attributes in their event source mapping. A put
overwrites the stamps of the item it is given (one read back and written again); an update that
sets, removes or adds a stamp attribute itself is refused.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from ._records import frozen_record
from .environment import ENV_REGION, ENV_REPLICA_REGIONS
from .exceptions import ConditionFailedError, ReplicatedDeleteError, SettingsError, UpdateRejectedError

#: The region whose write produced the item's current state (set on every put and update).
ORIGIN_ATTRIBUTE = "_origin_region"
#: ``<region>#<token>`` set just before a delete, so the REMOVE record's old image names the region.
DELETE_ATTRIBUTE = "_deleted_in"
#: Every attribute the stamping adds (readers may ignore them).
ATTRIBUTES = (ORIGIN_ATTRIBUTE, DELETE_ATTRIBUTE)
#: Stamp-then-delete rounds before giving up when other writes keep replacing the stamp.
DELETE_ATTEMPTS = 5

_REGION_RE = re.compile(r"[a-z][a-z0-9-]{1,30}[a-z0-9]")
_CLAUSE_RE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b")
_NAME_RE = re.compile(r"#[A-Za-z0-9_]+")


def check_region(region: Any, what: str) -> str:
    """``region`` if it looks like a region name (lowercase letters, digits, ``-``), else SettingsError."""
    if not isinstance(region, str) or not _REGION_RE.fullmatch(region):
        raise SettingsError(f"{what} {region!r} is not a region name (lowercase letters, digits and '-', e.g. 'us-east-1')")
    return region


@frozen_record
class Replication:
    """The writing region of a function on a replicated table, and the table's regions.

    Parameters
    ----------
    region
        Where this code runs and writes (``AWS_REGION`` in a Lambda function).
    regions
        Every replica region of the table, two or more, ``region`` among them.
    """

    region: str
    regions: tuple[str, ...]

    def __init__(self, region: str, regions: tuple[str, ...]) -> None:
        self.__dict__.update(region=region, regions=regions)
        check_region(self.region, "region")
        regions = tuple(self.regions)
        for name in regions:
            check_region(name, "replica region")
        if len(set(regions)) != len(regions) or len(regions) < 2:
            raise SettingsError(f"replica regions {list(regions)!r} must be two or more distinct regions")
        if self.region not in regions:
            raise SettingsError(
                f"region {self.region!r} is not a replica region of the table ({', '.join(regions)}); "
                "a function writes to the replica of its own region"
            )
        self.__dict__["regions"] = regions

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Replication | None:
        """None on a single-region table (``CONSTRUCTS_LIB_REPLICA_REGIONS`` unset or empty), else
        the replication of this function (region from ``AWS_REGION``)."""
        env = os.environ if environ is None else environ
        regions = tuple(r for r in env.get(ENV_REPLICA_REGIONS, "").split(",") if r)
        if not regions:
            return None
        region = env.get(ENV_REGION)
        if not region:
            raise SettingsError(
                f"the table is replicated to {', '.join(regions)} but {ENV_REGION} is not set; "
                "it names the region this function writes in (Lambda sets it)"
            )
        return cls(region, regions)

    # Stamping ------------------------------------------------------------------------------------
    def stamp_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """A wire-format item for PutItem with this region as its origin.

        The item's own stamps are replaced: an item read back (stamped by the write that made it)
        and put again is a new write, made here; a leftover delete stamp is not carried over."""
        stamped = {k: v for k, v in item.items() if k != DELETE_ATTRIBUTE}
        stamped[ORIGIN_ATTRIBUTE] = {"S": self.region}
        return stamped

    def stamp_update(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """UpdateItem parameters that also set the origin and remove a delete stamp.

        Raises :class:`UpdateRejectedError` when the update itself sets, removes or adds a stamp
        attribute (its conditions may read them)."""
        out = dict(params)
        names = dict(out.get("ExpressionAttributeNames") or {})
        own = sorted({names.get(p, p) for p in _NAME_RE.findall(out.get("UpdateExpression", ""))} & set(ATTRIBUTES))
        if own:
            raise UpdateRejectedError(
                f"update of {out.get('Key')!r} writes {own!r} on a table replicated to {', '.join(self.regions)}: "
                "these attributes name the region of each write and only the client sets them (ADR 0055)"
            )
        values = dict(out.get("ExpressionAttributeValues") or {})
        names.update({"#rorigin": ORIGIN_ATTRIBUTE, "#rdel": DELETE_ATTRIBUTE})
        values[":rorigin"] = {"S": self.region}
        out["UpdateExpression"] = add_to_clauses(
            out.get("UpdateExpression", ""), {"SET": "#rorigin = :rorigin", "REMOVE": "#rdel"}
        )
        out["ExpressionAttributeNames"], out["ExpressionAttributeValues"] = names, values
        return out

    def delete(self, call: Callable[..., dict[str, Any]], params: Mapping[str, Any], pk_attribute: str) -> dict[str, Any]:
        """Delete with the region stamp: UpdateItem ``SET _deleted_in = <region>#<token>`` under the
        delete's own conditions (and ``attribute_exists``), then DeleteItem while the token is there.

        ``call(operation, **params)`` makes one AWS call (the client's seam). A failed condition of
        the delete itself raises from the stamp (the stored item is the same); an absent item is
        deleted plainly (nothing is removed, so no stream record names anyone). Another write
        landing between the two calls removes the stamp: the round is repeated, up to
        :data:`DELETE_ATTEMPTS` times, then :class:`ReplicatedDeleteError` (nothing deleted).
        """
        for _ in range(DELETE_ATTEMPTS):
            token = f"{self.region}#{secrets.token_hex(8)}"
            names = dict(params.get("ExpressionAttributeNames") or {}, **{"#rdel": DELETE_ATTRIBUTE, "#rpk": pk_attribute})
            values = dict(params.get("ExpressionAttributeValues") or {}, **{":rdel": {"S": token}})
            own = params.get("ConditionExpression")
            exists = "attribute_exists(#rpk)"
            stamp = {
                "TableName": params["TableName"], "Key": params["Key"], "UpdateExpression": "SET #rdel = :rdel",
                "ConditionExpression": f"({own}) AND {exists}" if own else exists,
                "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
            try:
                call("update_item", **stamp)
            except ConditionFailedError as exc:
                if getattr(exc, "old_item", None) is None:  # no item: the delete as asked (its conditions decide)
                    return call("delete_item", **params)
                raise
            delete = {
                "TableName": params["TableName"], "Key": params["Key"], "ConditionExpression": "#rdel = :rdel",
                "ExpressionAttributeNames": {"#rdel": DELETE_ATTRIBUTE},
                "ExpressionAttributeValues": {":rdel": {"S": token}},
                **{k: v for k, v in params.items() if k == "ReturnValues"},
            }
            try:
                return call("delete_item", **delete)
            except ConditionFailedError:
                continue  # another write replaced the stamp: stamp again
        raise ReplicatedDeleteError(
            f"delete of {params.get('Key')!r} in region {self.region!r}: other writes replaced the delete stamp "
            f"{DELETE_ATTEMPTS} times in a row (a delete on a replicated table is stamped with its region first); "
            "nothing was deleted, retry the delete later",
            operation="DeleteItem",
        )


def add_to_clauses(expression: str, additions: Mapping[str, str]) -> str:
    """An UpdateExpression with ``additions`` (clause keyword -> ``action``) appended to its clauses.

    Attribute names and values of our requests are always placeholders (``#n0``, ``:v0``), so the
    clause keywords are the only bare ``SET``/``REMOVE``/``ADD``/``DELETE`` words in it.
    """
    parts = _CLAUSE_RE.split(expression)
    clauses: dict[str, list[str]] = {}
    order: list[str] = []
    for keyword, body in zip(parts[1::2], parts[2::2], strict=True):
        if keyword not in clauses:
            order.append(keyword)
            clauses[keyword] = []
        clauses[keyword].append(body.strip().rstrip(","))
    for keyword, action in additions.items():
        if keyword not in clauses:
            order.append(keyword)
            clauses[keyword] = []
        clauses[keyword].append(action)
    return " ".join(f"{k} {', '.join(b for b in clauses[k] if b)}" for k in order)


__all__ = ["ATTRIBUTES", "DELETE_ATTRIBUTE", "ORIGIN_ATTRIBUTE", "Replication", "add_to_clauses", "check_region"]
