"""A small model of DynamoDB write throttling by partition key design (pure Python, deterministic).

DynamoDB stores items on partitions chosen by a hash of the partition key. One partition serves
at most :data:`PARTITION_WCU` = 1,000 write units and :data:`PARTITION_RCU` = 3,000 read units
per second, and every item with the same partition key value lives on one partition. So the
throughput a table can give a workload depends on how the workload spreads over partition keys —
the *key design* — not only on the table's total capacity.

The model is a fluid one (expected rates, no per-request randomness):

* A :class:`KeyDesign` is a fixed set of partition key values, each with its share of the
  writes (shares sum to 1). Offered load ``L`` writes/s (each 1 WCU, i.e. ≤ 1 KB) puts
  ``share × L`` on each key.
* ``model="adaptive"`` (the default) is DynamoDB with adaptive capacity: hot keys are isolated
  on partitions of their own, so the only per-key limit is that **one partition key value can
  never exceed one partition's capacity**. Throttled writes are ``Σ max(0, key load − cap)``,
  plus whatever the served writes exceed the table's ``partitions × cap``.
* ``model="fixed"`` is the pessimistic view without adaptive capacity: keys are hashed onto
  ``partitions`` partitions (MD5 of a seed and the key: deterministic) and each partition
  serves at most ``cap``; throttled writes are ``Σ max(0, partition load − cap)``.
* The number of partitions defaults to :func:`default_partitions` — ``ceil(2 × L / cap)``,
  enough for the whole load twice over (an on-demand table accommodates up to double its
  previous peak), so any throttling comes from the key design, not from the table's size.

The result of :func:`simulate` is the **throttled fraction** of the offered writes (0 … 1).
Reads work the same way with :data:`PARTITION_RCU` as ``capacity``.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from constructs_lib.runtime.limits import PARTITION_WCU
from constructs_lib.runtime.patterns.counter import derive_shards

#: Read units one partition serves per second (DynamoDB's documented per-partition limit).
PARTITION_RCU = 3000
#: Throttling models :func:`simulate` accepts.
ThrottleModel = Literal["adaptive", "fixed"]
MODELS: tuple[str, ...] = ("adaptive", "fixed")
#: Default seed of the key → partition hash.
DEFAULT_SEED = 7


class SimulationError(ValueError):
    """A simulator input is out of range; the message names the value and the rule."""


# -----------------------------------------------------------------------------------------------
# Key designs
# -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyDesign:
    """A partition key design: its key values and each key's share of the writes.

    Parameters
    ----------
    name
        Label for tables and plots.
    keys
        Distinct partition key values (at least one).
    shares
        Share of the writes each key receives, index-aligned with ``keys``; each ≥ 0, summing
        to 1 (within 1e-9). Use :meth:`from_weights` to normalize raw weights.
    good
        Whether DynamoDB's guidance calls this design a good one (for the reader only).
    description
        One line on what the design is.
    """

    name: str
    keys: tuple[str, ...]
    shares: tuple[float, ...]
    good: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not self.keys:
            raise SimulationError(f"key design {self.name!r} needs at least one key")
        if len(self.keys) != len(self.shares):
            raise SimulationError(
                f"key design {self.name!r}: {len(self.keys)} keys but {len(self.shares)} shares; they must match"
            )
        if len(set(self.keys)) != len(self.keys):
            raise SimulationError(f"key design {self.name!r}: keys must be distinct")
        if any(not math.isfinite(s) or s < 0 for s in self.shares):
            raise SimulationError(f"key design {self.name!r}: every share must be a finite number >= 0")
        total = math.fsum(self.shares)
        if abs(total - 1) > 1e-9:
            raise SimulationError(f"key design {self.name!r}: shares sum to {total!r}; they must sum to 1")

    @classmethod
    def from_weights(
        cls, name: str, weighted: Iterable[tuple[str, float]], *, good: bool = False, description: str = ""
    ) -> KeyDesign:
        """A design from ``(key, weight)`` pairs; weights (≥ 0, not all 0) are normalized to shares."""
        pairs = list(weighted)
        total = math.fsum(w for _, w in pairs)
        if not pairs or not math.isfinite(total) or total <= 0 or any(w < 0 for _, w in pairs):
            raise SimulationError(f"key design {name!r}: weights must be >= 0 with a positive finite sum")
        return cls(name, tuple(k for k, _ in pairs), tuple(w / total for _, w in pairs), good, description)

    @property
    def hottest_share(self) -> float:
        """The largest share of any one key."""
        return max(self.shares)

    def throttle_onset(self, capacity: float = PARTITION_WCU) -> float:
        """Offered load (writes/s) above which the hottest key exceeds one partition, under adaptive capacity."""
        return capacity / self.hottest_share


def constant_key(name: str = "constant key") -> KeyDesign:
    """Every write on one partition key (e.g. ``PK = "COUNTER"``)."""
    return KeyDesign(name, ("CONSTANT",), (1.0,), description="one key for every write")


def status_key(
    statuses: Sequence[tuple[str, float]] = (("PENDING", 0.8), ("PAID", 0.1), ("SHIPPED", 0.07), ("CANCELLED", 0.03)),
    *,
    name: str = "status",
) -> KeyDesign:
    """A low-cardinality attribute as partition key: a few values, skewed (default 80 % ``PENDING``)."""
    return KeyDesign.from_weights(
        name, ((f"STATUS#{s}", w) for s, w in statuses),
        description=f"{len(statuses)} values, hottest {max(w for _, w in statuses) / sum(w for _, w in statuses):.0%}",
    )


def date_key(today_share: float = 0.99, days: int = 7, *, name: str = "date (today)") -> KeyDesign:
    """The day as partition key: ``today_share`` of writes on today's key, the rest over the last *days* − 1 days."""
    if not 0 < today_share <= 1:
        raise SimulationError(f"today_share {today_share!r} must be in (0, 1]")
    if days < 1 or (days == 1 and today_share != 1):
        raise SimulationError(f"days {days!r} must be >= 1, and > 1 unless today_share is 1")
    rest = [(f"DAY#d-{d}", (1 - today_share) / (days - 1)) for d in range(1, days)] if days > 1 else []
    return KeyDesign.from_weights(
        name, [("DAY#today", today_share), *rest], description=f"{today_share:.0%} of writes on today's key",
    )


def zipf_users(users: int = 100_000, exponent: float = 0.6, *, name: str | None = None) -> KeyDesign:
    """A high-cardinality id (``USER#<id>``) whose activity follows Zipf's law: rank *r* writes ∝ 1/r^exponent.

    Parameters
    ----------
    users
        Number of distinct ids, ≥ 1. Default 100,000.
    exponent
        Zipf exponent ≥ 0 (0 = uniform). Default 0.6: a mild skew (the most active of 100,000
        users does ~0.4 % of the writes).
    """
    if users < 1:
        raise SimulationError(f"users {users!r} must be >= 1")
    if not math.isfinite(exponent) or exponent < 0:
        raise SimulationError(f"exponent {exponent!r} must be a finite number >= 0")
    return KeyDesign.from_weights(
        name or f"user id ({users:,} users, Zipf {exponent:g})",
        ((f"USER#{r:06d}", 1 / r**exponent) for r in range(1, users + 1)),
        good=True,
        description=f"{users:,} ids, Zipf exponent {exponent:g}",
    )


def uniform_keys(count: int, *, name: str | None = None, good: bool = True) -> KeyDesign:
    """*count* keys with equal shares."""
    if count < 1:
        raise SimulationError(f"count {count!r} must be >= 1")
    return KeyDesign(name or f"{count:,} uniform keys", tuple(f"K#{i}" for i in range(count)),
                     tuple(1 / count for _ in range(count)), good, f"{count:,} keys, equal shares")


def write_sharded(target_writes_per_second: float, *, name: str | None = None) -> KeyDesign:
    """One hot item write-sharded over ``derive_shards(target).shards`` keys (``…#S000`` …), uniform shares.

    The shard count comes from :func:`constructs_lib.runtime.patterns.counter.derive_shards` (default
    headroom 1.2), as a :class:`~constructs_lib.ShardedCounter` sized for *target* would get.
    """
    shards = derive_shards(target_writes_per_second).shards
    return KeyDesign(
        name or f"write-sharded ({shards} shards: derive_shards({target_writes_per_second:,.0f}))",
        tuple(f"COUNTER#hot#S{n:03d}" for n in range(shards)), tuple(1 / shards for _ in range(shards)),
        good=True, description=f"{shards} shards sized for {target_writes_per_second:,.0f} writes/s",
    )


# -----------------------------------------------------------------------------------------------
# Simulation
# -----------------------------------------------------------------------------------------------
def default_partitions(load: float, capacity: float = PARTITION_WCU) -> int:
    """Partitions of a table sized for *load*: ``max(1, ceil(2 × load / capacity))`` (twice the load)."""
    return max(1, math.ceil(round(2 * load / capacity, 9)))


def partition_of(key: str, partitions: int, seed: int = DEFAULT_SEED) -> int:
    """The partition (0 … partitions − 1) *key* hashes onto: MD5 of ``"<seed>:<key>"`` modulo *partitions*."""
    if partitions < 1:
        raise SimulationError(f"partitions {partitions!r} must be >= 1")
    return _key_hash(key, seed) % partitions


@functools.lru_cache(maxsize=1 << 18)
def _key_hash(key: str, seed: int) -> int:
    digest = hashlib.md5(f"{seed}:{key}".encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class Outcome:
    """What one simulation found: offered, served and throttled writes per second."""

    design: str
    model: str
    load: float
    partitions: int
    served: float
    throttled: float

    @property
    def throttled_fraction(self) -> float:
        """Throttled ÷ offered (0 when nothing is offered)."""
        return self.throttled / self.load if self.load else 0.0


def simulate(
    design: KeyDesign,
    load: float,
    *,
    model: ThrottleModel = "adaptive",
    partitions: int | None = None,
    capacity: float = PARTITION_WCU,
    seed: int = DEFAULT_SEED,
) -> Outcome:
    """Offer *load* units/s spread by *design* to a table; return what is served and throttled.

    Parameters
    ----------
    design
        The key design.
    load
        Offered units per second (writes of ≤ 1 KB with the default capacity), ≥ 0.
    model
        ``"adaptive"`` (default): each key is capped at one partition's *capacity*, and the
        table at ``partitions × capacity``. ``"fixed"``: keys hash onto *partitions*
        partitions, each capped at *capacity*.
    partitions
        Partitions of the table, ≥ 1. Default :func:`default_partitions` (*load*).
    capacity
        Units per second one partition serves, > 0. Default :data:`PARTITION_WCU` (1,000);
        :data:`PARTITION_RCU` (3,000) for reads.
    seed
        Seed of the key → partition hash (``"fixed"`` only). Default :data:`DEFAULT_SEED`.

    Raises
    ------
    SimulationError
        For a negative or non-finite load, capacity ≤ 0, partitions < 1 or an unknown model.
    """
    if not math.isfinite(load) or load < 0:
        raise SimulationError(f"load {load!r} must be a finite number >= 0")
    if not math.isfinite(capacity) or capacity <= 0:
        raise SimulationError(f"capacity {capacity!r} must be a finite number > 0")
    if model not in MODELS:
        raise SimulationError(f"model {model!r} must be one of {', '.join(MODELS)}")
    n = default_partitions(load, capacity) if partitions is None else partitions
    if n < 1:
        raise SimulationError(f"partitions {n!r} must be >= 1")
    if model == "adaptive":
        served = math.fsum(min(share * load, capacity) for share in design.shares)
        served = min(served, n * capacity)
    else:
        per_partition = [0.0] * n
        for key, share in zip(design.keys, design.shares, strict=True):
            per_partition[partition_of(key, n, seed)] += share * load
        served = math.fsum(min(p, capacity) for p in per_partition)
    return Outcome(design.name, model, load, n, served, max(0.0, load - served))


def sweep(
    designs: Sequence[KeyDesign],
    loads: Sequence[float],
    *,
    model: ThrottleModel = "adaptive",
    capacity: float = PARTITION_WCU,
    partitions: Callable[[float], int] | None = None,
    seed: int = DEFAULT_SEED,
) -> dict[str, list[Outcome]]:
    """:func:`simulate` every design at every load: design name → outcomes in *loads* order.

    ``partitions`` maps a load to the table's partition count (default :func:`default_partitions`).
    """
    return {
        d.name: [
            simulate(d, load, model=model, capacity=capacity, seed=seed,
                     partitions=partitions(load) if partitions else None)
            for load in loads
        ]
        for d in designs
    }


def log_loads(low: float, high: float, per_decade: int = 8) -> list[float]:
    """Loads from *low* to *high* (both included), evenly spaced on a log scale, rounded to 3 significant digits."""
    if not 0 < low < high or per_decade < 1:
        raise SimulationError(f"need 0 < low ({low!r}) < high ({high!r}) and per_decade ({per_decade!r}) >= 1")
    steps = max(1, round(math.log10(high / low) * per_decade))
    out = []
    for i in range(steps + 1):
        x = low * (high / low) ** (i / steps)
        digits = 2 - math.floor(math.log10(x))
        out.append(float(round(x, digits)))
    return sorted(set(out))
