"""The counter's item layout and :class:`CounterSpec`, what the construct hands to the runtime.

Item layout on the single table (``{id}`` is the escaped counter id, ``NNN`` the shard)::

    shard   PK = COUNTER#<family>#{id}#S007          SK = SHARD   count (ADD), _type
    total   PK = COUNTER#<family>#{id}               SK = TOTAL   count, aggregated_at
    dedup   PK = COUNTER#<family>#{id}#DEDUP#{key}   SK = DEDUP   (TTL) one per idempotency key

Replicated table: shard ``SK = SHARD#<region>``, total ``SK = TOTAL#<region>`` (ADR 0055).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ... import key_segments
from ..._records import frozen_record
from ...environment import ENV_COUNTER_PREFIX
from ...exceptions import KeyValueError, SettingsError
from ...jsontext import load_json
from ...limits import MAX_COUNTER_SHARDS as MAX_SHARDS

# Layout -----------------------------------------------------------------------------------------------
PREFIX = "COUNTER"
SHARD_SK, TOTAL_SK, DEDUP_SK = "SHARD", "TOTAL", "DEDUP"
#: Values of the model's entity attribute on counter items (stream filters can exclude them).
SHARD_TYPE, TOTAL_TYPE, DEDUP_TYPE = "CounterShard", "CounterTotal", "CounterDedup"
#: Every entity name counter items carry (``StreamAudit(exclude_entities=...)`` leaves them out).
ENTITIES = (SHARD_TYPE, TOTAL_TYPE, DEDUP_TYPE)
COUNT, FAMILY, COUNTER_ID, SHARD, AGGREGATED_AT, SHARDS, BY, IDEMPOTENCY_KEY = (
    "count", "counter", "counter_id", "shard", "aggregated_at", "shards", "by", "idempotency_key",
)
#: ``source`` of the scheduled event that makes the aggregator recompute listed counters.
SCHEDULE_SOURCE = "constructs_lib.counter.schedule"
FORMAT, VERSION = "constructs_lib.counter", 1

_FAMILY_RE = re.compile(r"[a-z][a-z0-9_]{0,47}")
_MAX_ID_BYTES = 1024
_MAX_IDEMPOTENCY_KEY_BYTES = 512
#: Largest amount one increment may add.
MAX_BY = 10**18
_SHARD_SEGMENT = re.compile(r"S([0-9]{3})")
#: A region name (the rule of ``runtime.replication.check_region``; not imported: the aggregator's
#: asset stays without the table client's modules).
_REGION_RE = re.compile(r"[a-z][a-z0-9-]{1,30}[a-z0-9]")


# The spec: what the construct tells the runtime ------------------------------------------------------------
@frozen_record
class CounterSpec:
    """One counter family as synthesized: its name, shard count and the table's attribute names.

    Serialized into the environment of the aggregator and of every function bound to the
    counter (``CONSTRUCTS_LIB_COUNTER_<FAMILY>``), so runtime keys match the synthesized
    stream filter and IAM conditions.

    Parameters
    ----------
    family
        Lowercase name, ``[a-z][a-z0-9_]{0,47}``.
    shards
        Number of shards, 1–1,000. Growing it later is safe; shrinking it orphans the
        removed shards' counts.
    pk_attribute, sk_attribute, entity_attribute
        The table's attribute names (from the model).
    ttl_attribute
        The table's TTL attribute; required for idempotent increments. Default None.
    idempotency_ttl_seconds
        How long an idempotency key is remembered; None disables idempotent increments.
    regions
        The table's replica regions when it is replicated (two or more): shard and total items
        are then per region. Default ``()``: a single-region table, today's layout.
    """

    family: str
    shards: int
    pk_attribute: str = "PK"
    sk_attribute: str = "SK"
    entity_attribute: str = "_type"
    ttl_attribute: str | None = None
    idempotency_ttl_seconds: int | None = None
    regions: tuple[str, ...] = ()

    def __init__(
        self, family: str, shards: int, pk_attribute: str = "PK", sk_attribute: str = "SK",
        entity_attribute: str = "_type", ttl_attribute: str | None = None, idempotency_ttl_seconds: int | None = None,
        regions: tuple[str, ...] = (),
    ) -> None:
        self.__dict__.update(family=family, shards=shards, pk_attribute=pk_attribute, sk_attribute=sk_attribute,
                             entity_attribute=entity_attribute, ttl_attribute=ttl_attribute,
                             idempotency_ttl_seconds=idempotency_ttl_seconds, regions=regions)
        self._check()

    def _check(self) -> None:
        regions = tuple(self.regions)
        for region in regions:
            if not isinstance(region, str) or not _REGION_RE.fullmatch(region):
                raise SettingsError(
                    f"counter family {self.family!r}: replica region {region!r} is not a region name "
                    "(lowercase letters, digits and '-', e.g. 'us-east-1')"
                )
        if regions and (len(regions) < 2 or len(set(regions)) != len(regions)):
            raise SettingsError(
                f"counter family {self.family!r}: regions {list(regions)!r} must be two or more distinct replica "
                "regions, or empty for a single-region table"
            )
        self.__dict__["regions"] = regions
        if not isinstance(self.family, str) or not _FAMILY_RE.fullmatch(self.family):
            raise SettingsError(
                f"counter family {self.family!r} must match [a-z][a-z0-9_]{{0,47}} (lowercase, starts with a letter)"
            )
        if isinstance(self.shards, bool) or not isinstance(self.shards, int) or not 1 <= self.shards <= MAX_SHARDS:
            raise SettingsError(f"counter family {self.family!r}: shards {self.shards!r} must be an int from 1 to {MAX_SHARDS}")
        if self.idempotency_ttl_seconds is not None:
            ttl = self.idempotency_ttl_seconds
            if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 60:
                raise SettingsError(f"counter family {self.family!r}: idempotency_ttl_seconds {ttl!r} must be an int >= 60")
            if not self.ttl_attribute:
                raise SettingsError(
                    f"counter family {self.family!r}: idempotent increments need the table's TTL attribute "
                    "(dedup markers must expire); the model declares none"
                )

    @property
    def env_var(self) -> str:
        return ENV_COUNTER_PREFIX + self.family.upper()

    @property
    def key_prefix(self) -> str:
        """Every partition key of this family starts with this (stream filter, IAM LeadingKeys)."""
        return f"{PREFIX}#{self.family}#"

    @property
    def idempotent(self) -> bool:
        return self.idempotency_ttl_seconds is not None

    @property
    def replicated(self) -> bool:
        return bool(self.regions)

    def to_json(self) -> str:
        data = {k: v for k, v in self.__dict__.items() if k != "regions"}
        if self.regions:  # a single-region spec reads exactly as before
            data["regions"] = list(self.regions)
        return json.dumps({"format": FORMAT, "version": VERSION, **data}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> CounterSpec:
        try:
            data = load_json(text, f"counter spec {text[:40]!r}", SettingsError)
            if data.pop("format") != FORMAT or data.pop("version") != VERSION:
                raise ValueError
            if "regions" in data:
                data["regions"] = tuple(data["regions"])
            return cls(**data)
        except SettingsError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SettingsError(
                f"counter spec {text[:80]!r} is not a {FORMAT} version {VERSION} document"
            ) from exc

    # Keys ---------------------------------------------------------------------------------------------
    def _id(self, counter_id: Any) -> str:
        if not isinstance(counter_id, str) or not counter_id:
            raise KeyValueError(f"counter id {counter_id!r} must be a non-empty str")
        escaped = key_segments.escape(counter_id, field="counter_id")
        if len(escaped.encode()) > _MAX_ID_BYTES:
            raise KeyValueError(f"counter id {counter_id[:40]!r}... is over {_MAX_ID_BYTES} bytes once escaped")
        return escaped

    def _key(self, pk: str, sk: str) -> dict[str, str]:
        return {self.pk_attribute: pk, self.sk_attribute: sk}

    def _region_sk(self, sk: str, region: str | None) -> str:
        if not self.regions:
            if region is not None:
                raise KeyValueError(
                    f"counter family {self.family!r} is on a single-region table; region {region!r} has no items of its own"
                )
            return sk
        if region not in self.regions:
            raise KeyValueError(
                f"counter family {self.family!r} is replicated to {', '.join(self.regions)}; region {region!r} is not "
                "one of them (its items are per region)"
            )
        return f"{sk}#{region}"

    def shard_key(self, counter_id: str, shard: int, region: str | None = None) -> dict[str, str]:
        """A shard item's key; ``region`` (the writing region) on a replicated table, else None."""
        if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < self.shards:
            raise KeyValueError(f"shard {shard!r} of counter family {self.family!r} must be 0..{self.shards - 1}")
        return self._key(f"{self.key_prefix}{self._id(counter_id)}#S{shard:03d}", self._region_sk(SHARD_SK, region))

    def all_shard_keys(self, counter_id: str) -> list[dict[str, str]]:
        """Every shard item's key of a counter: each shard of each region on a replicated table."""
        regions: tuple[str | None, ...] = self.regions or (None,)
        return [self.shard_key(counter_id, n, r) for r in regions for n in range(self.shards)]

    def total_key(self, counter_id: str, region: str | None = None) -> dict[str, str]:
        """The aggregated total's key; per region (the aggregating region) on a replicated table."""
        return self._key(f"{self.key_prefix}{self._id(counter_id)}", self._region_sk(TOTAL_SK, region))

    def dedup_key(self, counter_id: str, idempotency_key: str) -> dict[str, str]:
        if not isinstance(idempotency_key, str) or not idempotency_key:
            raise KeyValueError(f"idempotency_key {idempotency_key!r} must be a non-empty str")
        if len(idempotency_key.encode("utf-8", "surrogatepass")) > _MAX_IDEMPOTENCY_KEY_BYTES:
            raise KeyValueError(f"idempotency_key {idempotency_key[:40]!r}... is over {_MAX_IDEMPOTENCY_KEY_BYTES} bytes")
        key = key_segments.escape(idempotency_key, field="idempotency_key")
        return self._key(f"{self.key_prefix}{self._id(counter_id)}#{DEDUP_SK}#{key}", DEDUP_SK)

    def parse_shard_key(self, pk: str) -> tuple[str, int]:
        """``(counter_id, shard)`` of a shard item's partition key; KeyValueError if it is not one."""
        if not isinstance(pk, str) or not pk.startswith(self.key_prefix):
            raise KeyValueError(f"key {pk!r} is not a shard key of counter family {self.family!r}")
        parts = pk[len(self.key_prefix):].split("#")
        match = _SHARD_SEGMENT.fullmatch(parts[-1]) if len(parts) == 2 else None
        if match is None:
            raise KeyValueError(f"key {pk!r} is not a shard key of counter family {self.family!r} (…#{{id}}#S000)")
        return key_segments.unescape(parts[0], field="counter_id"), int(match.group(1))
