"""Shard sizing: how many shards a counter family needs for an expected write rate.

One partition accepts at most 1,000 write capacity units per second and a 1 KB write costs one
WCU, so a single item tops out near 1,000 increments/s; N shards on N distinct partition keys
give N x 1,000 WCU, and reading the exact value then costs reading N shards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...exceptions import SettingsError
from ...limits import MAX_COUNTER_SHARDS, PARTITION_WCU, WCU_BYTES

#: Largest shard count a family may use (exact reads then take 10 BatchGetItem calls).
MAX_SHARDS = MAX_COUNTER_SHARDS
DEFAULT_HEADROOM = 1.2


@dataclass(frozen=True)
class ShardSizing:
    """How a shard count was derived from an expected write rate (1 WCU per KB, 1,000 WCU per partition).

    ``wcu_per_write`` is for a plain write; ``transactional`` doubles it.
    """

    shards: int
    expected_writes_per_second: float
    item_size_bytes: int
    headroom: float
    transactional: bool
    wcu_per_write: int
    required_wcu: float

    def explain(self) -> str:
        tx = " x2 (transactional)" if self.transactional else ""
        return (
            f"{self.expected_writes_per_second:g} writes/s x {self.wcu_per_write} WCU "
            f"(ceil({self.item_size_bytes} B / {WCU_BYTES} B)){tx} x headroom {self.headroom:g} = "
            f"{self.required_wcu:g} WCU; / {PARTITION_WCU} WCU per partition = {self.shards} shard(s)"
        )


def derive_shards(
    expected_writes_per_second: float,
    *,
    item_size_bytes: int = WCU_BYTES,
    headroom: float = DEFAULT_HEADROOM,
    transactional: bool = False,
) -> ShardSizing:
    """Shard count for a write rate: ``ceil(rate × ceil(size / 1 KB) × (2 if transactional) ×
    headroom / 1000)``.

    Parameters
    ----------
    expected_writes_per_second
        Peak increments per second of one counter (the hottest one). Must be > 0.
    item_size_bytes
        Size of a shard item write. Default 1,024 (1 WCU); shard items are far smaller, so
        the default is conservative. 1–409,600.
    headroom
        Multiplier ≥ 1 for burstiness and the uneven spread of random shard choice.
        Default 1.2.
    transactional
        True when increments are idempotent: transactional writes cost 2 WCU per KB.

    Raises
    ------
    SettingsError
        If a value is out of range or the result exceeds :data:`MAX_SHARDS`.
    """
    rate = expected_writes_per_second
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
        raise SettingsError(f"expected_writes_per_second {rate!r} must be a positive number")
    if isinstance(item_size_bytes, bool) or not isinstance(item_size_bytes, int) or not 1 <= item_size_bytes <= 409_600:
        raise SettingsError(f"item_size_bytes {item_size_bytes!r} must be an int from 1 to 409,600 (400 KB)")
    if isinstance(headroom, bool) or not isinstance(headroom, (int, float)) or not 1 <= headroom <= 10:
        raise SettingsError(f"headroom {headroom!r} must be a number from 1 to 10")
    wcu = math.ceil(item_size_bytes / WCU_BYTES)
    required = rate * wcu * (2 if transactional else 1) * headroom
    shards = max(1, math.ceil(round(required / PARTITION_WCU, 9)))
    if shards > MAX_SHARDS:
        raise SettingsError(
            f"expected_writes_per_second {rate:g} needs {shards} shards ({required:g} WCU / {PARTITION_WCU}); "
            f"the limit is {MAX_SHARDS} per counter family — reduce the rate per counter or the item size"
        )
    return ShardSizing(shards, rate, item_size_bytes, headroom, transactional, wcu, required)
