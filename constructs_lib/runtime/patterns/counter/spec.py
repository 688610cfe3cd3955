"""The counter's item layout and :class:`CounterSpec`, what the construct hands to the runtime.

A family aggregated from the stream (``aggregation="deltas"``, docs/adr/0070-counters-at-their-cost-floor.md)
writes shards ``…#S007 / SUM`` (count, v, b), idempotent increments ``…#S007 / KEY#{key}`` and a
total ``COUNTER#<family>#{id} / TOTAL``. A family recomputed from its shards (``"recompute"``:
tables without a stream; docs/adr/0012-write-sharded-counters.md) writes shards ``…#S007 / SHARD``,
dedup markers ``…#DEDUP#{key} / DEDUP`` and the same total. ``{id}`` is the escaped counter id;
on a replicated table shards and totals carry ``#<region>`` (docs/adr/0055-patterns-under-global-tables.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
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
#: The stream layout's shard sort key and the prefix of its increment items' sort keys.
SUM_SK, KEY_PREFIX = "SUM", "KEY#"
#: Values of the model's entity attribute on counter items (stream filters can exclude them).
SHARD_TYPE, TOTAL_TYPE, DEDUP_TYPE, INCREMENT_TYPE = "CounterShard", "CounterTotal", "CounterDedup", "CounterIncrement"
#: Every entity name counter items carry (``StreamAudit(exclude_entities=...)`` leaves them out).
ENTITIES = (SHARD_TYPE, TOTAL_TYPE, DEDUP_TYPE, INCREMENT_TYPE)
COUNT, FAMILY, COUNTER_ID, SHARD, AGGREGATED_AT, SHARDS, BY, IDEMPOTENCY_KEY = (
    "count", "counter", "counter_id", "shard", "aggregated_at", "shards", "by", "idempotency_key",
)
#: Stream layout attributes: a shard's version and the amount of the write that made its image;
#: an increment item's region of origin on a replicated table.
VERSION_ATTR, AMOUNT, ORIGIN = "v", "b", "r"
#: ``source`` of the scheduled event that makes the aggregator recompute listed counters.
SCHEDULE_SOURCE = "constructs_lib.counter.schedule"
#: ``source`` of the event that makes the aggregator re-drive its failure queue.
REDRIVE_SOURCE = "constructs_lib.counter.redrive"
#: How a family's totals are kept: from the stream's changes, or recomputed from every shard.
DELTAS, RECOMPUTE = "deltas", "recompute"
FORMAT, VERSION = "constructs_lib.counter", 2
#: Attributes of a total in the stream layout besides ``count`` and ``aggregated_at`` (which keep
#: their names: readers of either layout read the value the same way): its format, what idempotent
#: increments added, the recompute layout's shards folded in and when, the re-driven ranges.
FORMAT_ATTR, STREAM_FORMAT = "fmt", 2
APPLIED_EVENTS, FOLDED, FOLD_TIME, REDRIVEN = "e", "f", "ft", "rd"

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
#: Default length of a watermark generation: the mapping's default maximum record age (1 hour),
#: its function's default timeout (30 s) and a minute of margin.
DEFAULT_GUARD_SECONDS = 3600 + 30 + 60


@frozen_record
class CounterSpec:
    """One counter family as synthesized: its name, shard count, layout and the table's attribute names.

    Serialized into the environment of the aggregator and of every function bound to the
    counter (``CONSTRUCTS_LIB_COUNTER_<FAMILY>``), so runtime keys match the synthesized
    stream filter and IAM conditions.

    Parameters
    ----------
    family
        Lowercase name, ``[a-z][a-z0-9_]{0,47}``.
    shards
        Number of shards, 1–1,000. Growing it later is safe; shrinking it orphans the removed
        shards' counts.
    pk_attribute, sk_attribute, entity_attribute
        The table's attribute names (from the model).
    ttl_attribute
        The table's TTL attribute; required for idempotent increments. Default None.
    idempotency_ttl_seconds
        How long an idempotency key is remembered; None disables idempotent increments.
    regions
        The table's replica regions when it is replicated (two or more): shard and total items
        are then per region. Default ``()``: a single-region table.
    aggregation
        ``"deltas"`` (default): increments write ``SUM`` shards and ``KEY#`` increment items,
        and the aggregator adds what the stream delivers, guarded per shard (ADR 0064).
        ``"recompute"``: ``SHARD`` shards, transactional idempotent increments, totals
        recomputed from every shard (tables without a stream; ADR 0012).
    guard_seconds
        Length of a lane-watermark generation, at least the mapping's maximum record age plus
        its function's timeout: a watermark is kept for two generations. Default 3,690.
    legacy_shards
        Shard count of the family's ``SHARD`` items from before the stream layout, read once
        per counter when its total is folded into the stream layout. Default ``shards``.
    """

    family: str
    shards: int
    pk_attribute: str = "PK"
    sk_attribute: str = "SK"
    entity_attribute: str = "_type"
    ttl_attribute: str | None = None
    idempotency_ttl_seconds: int | None = None
    regions: tuple[str, ...] = ()
    aggregation: str = DELTAS
    guard_seconds: int = DEFAULT_GUARD_SECONDS
    legacy_shards: int | None = None

    def __init__(
        self, family: str, shards: int, pk_attribute: str = "PK", sk_attribute: str = "SK",
        entity_attribute: str = "_type", ttl_attribute: str | None = None, idempotency_ttl_seconds: int | None = None,
        regions: tuple[str, ...] = (), aggregation: str = DELTAS, guard_seconds: int = DEFAULT_GUARD_SECONDS,
        legacy_shards: int | None = None,
    ) -> None:
        self.__dict__.update(family=family, shards=shards, pk_attribute=pk_attribute, sk_attribute=sk_attribute,
                             entity_attribute=entity_attribute, ttl_attribute=ttl_attribute,
                             idempotency_ttl_seconds=idempotency_ttl_seconds, regions=regions,
                             aggregation=aggregation, guard_seconds=guard_seconds, legacy_shards=legacy_shards)
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
        if self.aggregation not in (DELTAS, RECOMPUTE):
            raise SettingsError(
                f"counter family {self.family!r}: aggregation {self.aggregation!r} must be {DELTAS!r} or {RECOMPUTE!r}"
            )
        guard = self.guard_seconds
        if isinstance(guard, bool) or not isinstance(guard, int) or not 120 <= guard <= 8 * 86_400:
            raise SettingsError(
                f"counter family {self.family!r}: guard_seconds {guard!r} must be an int from 120 to 691,200"
            )
        legacy = self.legacy_shards
        if legacy is not None and (isinstance(legacy, bool) or not isinstance(legacy, int) or not 1 <= legacy <= MAX_SHARDS):
            raise SettingsError(
                f"counter family {self.family!r}: legacy_shards {legacy!r} must be None or an int from 1 to {MAX_SHARDS}"
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

    @property
    def deltas(self) -> bool:
        """True when totals are kept from the stream's changes (the stream layout)."""
        return self.aggregation == DELTAS

    @property
    def folded_shards(self) -> int:
        """How many ``SHARD`` items of the recompute layout a counter may have."""
        return self.legacy_shards if self.legacy_shards is not None else self.shards

    def to_json(self) -> str:
        data = {k: v for k, v in self.__dict__.items() if k not in ("regions", "legacy_shards")}
        if self.regions:  # a single-region spec has no "regions"
            data["regions"] = list(self.regions)
        if self.legacy_shards is not None:
            data["legacy_shards"] = self.legacy_shards
        return json.dumps({"format": FORMAT, "version": VERSION, **data}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> CounterSpec:
        """A spec from :meth:`to_json`; a version 1 document (before the stream layout) is a
        ``"recompute"`` family."""
        try:
            data = load_json(text, f"counter spec {text[:40]!r}", SettingsError)
            if data.pop("format") != FORMAT:
                raise ValueError
            version = data.pop("version")
            if version == 1:
                data["aggregation"] = RECOMPUTE
            elif version != VERSION:
                raise ValueError
            if "regions" in data:
                data["regions"] = tuple(data["regions"])
            return cls(**data)
        except SettingsError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SettingsError(
                f"counter spec {text[:80]!r} is not a {FORMAT} version 1 or {VERSION} document"
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

    def _shard_pk(self, counter_id: str, shard: int, shards: int | None = None) -> str:
        limit = self.shards if shards is None else shards
        if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < limit:
            raise KeyValueError(f"shard {shard!r} of counter family {self.family!r} must be 0..{limit - 1}")
        return f"{self.key_prefix}{self._id(counter_id)}#S{shard:03d}"

    def shard_key(self, counter_id: str, shard: int, region: str | None = None) -> dict[str, str]:
        """A shard item's key (``SUM``, or ``SHARD`` when recomputed); ``region`` (the writing
        region) on a replicated table, else None."""
        sk = SUM_SK if self.deltas else SHARD_SK
        return self._key(self._shard_pk(counter_id, shard), self._region_sk(sk, region))

    def legacy_shard_key(self, counter_id: str, shard: int, region: str | None = None) -> dict[str, str]:
        """A ``SHARD`` item's key of the recompute layout (``shard`` below :attr:`folded_shards`)."""
        return self._key(self._shard_pk(counter_id, shard, self.folded_shards), self._region_sk(SHARD_SK, region))

    def all_shard_keys(self, counter_id: str) -> list[dict[str, str]]:
        """Every shard item's key of a counter: each shard of each region on a replicated table."""
        regions: tuple[str | None, ...] = self.regions or (None,)
        return [self.shard_key(counter_id, n, r) for r in regions for n in range(self.shards)]

    def all_legacy_shard_keys(self, counter_id: str) -> list[dict[str, str]]:
        """Every ``SHARD`` item's key a counter may have from the recompute layout."""
        regions: tuple[str | None, ...] = self.regions or (None,)
        return [self.legacy_shard_key(counter_id, n, r) for r in regions for n in range(self.folded_shards)]

    def increment_key(self, counter_id: str, shard: int, idempotency_key: str) -> dict[str, str]:
        """An idempotent increment's item: on its shard's partition key, sort key ``KEY#{key}``."""
        return self._key(self._shard_pk(counter_id, shard), KEY_PREFIX + self._idempotency_segment(idempotency_key))

    def total_key(self, counter_id: str, region: str | None = None) -> dict[str, str]:
        """The aggregated total's key; per region (the aggregating region) on a replicated table."""
        return self._key(f"{self.key_prefix}{self._id(counter_id)}", self._region_sk(TOTAL_SK, region))

    def dedup_key(self, counter_id: str, idempotency_key: str) -> dict[str, str]:
        """The recompute layout's dedup marker (its own partition key)."""
        key = self._idempotency_segment(idempotency_key)
        return self._key(f"{self.key_prefix}{self._id(counter_id)}#{DEDUP_SK}#{key}", DEDUP_SK)

    def _idempotency_segment(self, idempotency_key: Any) -> str:
        if not isinstance(idempotency_key, str) or not idempotency_key:
            raise KeyValueError(f"idempotency_key {idempotency_key!r} must be a non-empty str")
        if len(idempotency_key.encode("utf-8", "surrogatepass")) > _MAX_IDEMPOTENCY_KEY_BYTES:
            raise KeyValueError(f"idempotency_key {idempotency_key[:40]!r}... is over {_MAX_IDEMPOTENCY_KEY_BYTES} bytes")
        return key_segments.escape(idempotency_key, field="idempotency_key")

    def parse_shard_key(self, pk: str) -> tuple[str, int]:
        """``(counter_id, shard)`` of a shard item's partition key; KeyValueError if it is not one."""
        if not isinstance(pk, str) or not pk.startswith(self.key_prefix):
            raise KeyValueError(f"key {pk!r} is not a shard key of counter family {self.family!r}")
        parts = pk[len(self.key_prefix):].split("#")
        match = _SHARD_SEGMENT.fullmatch(parts[-1]) if len(parts) == 2 else None
        if match is None:
            raise KeyValueError(f"key {pk!r} is not a shard key of counter family {self.family!r} (…#{{id}}#S000)")
        return key_segments.unescape(parts[0], field="counter_id"), int(match.group(1))


# A total's time and value ---------------------------------------------------------------------------------
def format_time(dt: datetime) -> str:
    """Fixed-width ISO-8601 UTC with microseconds: sorts as text in time order."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def applied_base(item: Mapping[str, Any] | None) -> int:
    """What a stream-layout total holds besides its shards' sums: idempotent increments applied
    plus the folded recompute-layout shards."""
    if not item:
        return 0
    return int(item.get(APPLIED_EVENTS, 0)) + int(item.get(FOLDED, 0))
