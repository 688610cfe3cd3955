"""Write-sharded index keys: which shard an item's key lands in, and how many shards to use.

The shard is ``int(sha256(v1#v2...)[:8]) % N`` over the key encodings of the ``shard_by``
fields — a stable hash (never Python's per-process ``hash()``), so a put, an update, a backfill
and another language all compute the same shard for the same item. Rationale:
docs/adr/0030-write-sharded-index-keys.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import key_segments
from .exceptions import KeyValueError, SettingsError

if TYPE_CHECKING:
    from ..model import ResolvedEntity as Entity
    from ..model import ResolvedIndexKey as IndexKey

#: The placeholder holding the shard (``constructs_lib.model.SHARD``; the model package is not
#: imported here: functions load it only when they read their model).
SHARD = "shard"
#: Bounds of a sharded index key's shard count (as the model checks them).
MIN_INDEX_SHARDS, MAX_INDEX_SHARDS = 2, 100


def shard_of(
    entity: Entity, key: IndexKey, values: Mapping[str, Any], *, memo: Mapping[Any, str] | None = None
) -> int:
    """The shard (0 .. ``key.shards - 1``) of the item holding ``values`` (normalized).
    ``memo``: the key encodings of ``values``' fields already made (see ``keys.build``)."""
    parts = []
    for name in key.shard_by:
        value = values.get(name)
        if value is None:
            raise KeyValueError(f"{entity.name}: the shard of its index key needs field {name!r}, which is missing")
        text = memo.get((name, None)) if memo is not None else None
        if text is None:
            spec = entity.field(name)
            text = key_segments.encode(value, spec.kind, width=spec.width, field=f"{entity.name}.{name}")
        parts.append(text)
    if key.shards is None:
        raise KeyValueError(f"{entity.name}: index key {key.index!r} is not write-sharded; it has no shard")
    return stable_shard("#".join(parts), key.shards)


def stable_shard(text: str, shards: int) -> int:
    """``int.from_bytes(sha256(text)[:8], "big") % shards``: the same on every process and platform."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def index_shards(expected_writes_per_second: float, *, item_size_bytes: int = 1024) -> int:
    """Shards for an index key whose hottest value takes ``expected_writes_per_second`` writes of
    ``item_size_bytes``: the counter's arithmetic (:func:`derive_shards`: 1 WCU per KB, 1,000
    WCU per partition, headroom 1.2), at least 2.

    Raises
    ------
    SettingsError
        If a value is out of range or the rate needs more than 100 shards.
    """
    from .patterns.counter.sizing import derive_shards  # synth-time sizing: off the functions' import path

    sizing = derive_shards(expected_writes_per_second, item_size_bytes=item_size_bytes)
    if sizing.shards > MAX_INDEX_SHARDS:
        raise SettingsError(
            f"{sizing.explain()}; an index key may use at most {MAX_INDEX_SHARDS} (a query reads every shard) — "
            "spread the writes over more key values instead"
        )
    return max(MIN_INDEX_SHARDS, sizing.shards)
