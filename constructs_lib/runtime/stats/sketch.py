"""Space-saving heavy hitters: the busiest partition keys in bounded memory.

Metwally, Agrawal and El Abbadi, "Efficient computation of frequent and top-k elements in data
streams" (2005). With ``m`` counters over a stream of total weight ``N``:

* a tracked key's ``count`` is never below its true count, and ``count - error`` never above it;
* ``error ≤ min counter ≤ N / m``;
* every key whose true count exceeds ``N / m`` is tracked.

So a key holding 10 % of an index's traffic is always found with ``m ≥ 10``; the default of
1,000 counters bounds every overestimate to 0.1 % of the index's sampled hits.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from ..exceptions import TrafficInsightError


@dataclass(frozen=True)
class KeyCount:
    """One tracked partition key.

    ``count`` is in sampled hits and is an upper bound of the true sampled count, which is at
    least ``count - error``. ``estimated`` is ``count`` scaled to all requests (``count /
    sample_rate``); ``capacity_units`` the units DynamoDB reported for its sampled hits (since
    it was last admitted to the sketch); ``throttled`` how many of them were throttled.
    """

    key: str
    count: int
    error: int
    capacity_units: float
    throttled: int
    estimated: float

    @property
    def guaranteed(self) -> int:
        """Sampled hits the key certainly had: ``count - error``."""
        return self.count - self.error


class SpaceSaving:
    """Top-k heavy hitters in bounded memory (not thread-safe: the recorder holds a lock).

    Parameters
    ----------
    capacity
        Counters kept, an int ≥ 1. When all are in use, a new key replaces the smallest
        counter ``min`` and starts at ``min + weight`` with ``error = min``.

    Raises
    ------
    TrafficInsightError
        If ``capacity`` is not an int ≥ 1.
    """

    def __init__(self, capacity: int) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise TrafficInsightError(f"sketch capacity {capacity!r} must be an int ≥ 1")
        self.capacity = capacity
        self.total = 0
        self.evictions = 0
        self._entries: dict[str, list[Any]] = {}  # key -> [count, error, capacity units, throttled]
        self._heap: list[tuple[int, str]] = []  # lazy min-heap of (count when pushed, key)

    def add(self, key: str, weight: int = 1, capacity_units: float = 0.0, throttled: int = 0) -> None:
        """Count ``weight`` hits of ``key`` (amortized O(log m))."""
        self.total += weight
        entry = self._entries.get(key)
        if entry is not None:
            entry[0] += weight
            entry[2] += capacity_units
            entry[3] += throttled
            return
        if len(self._entries) < self.capacity:
            self._entries[key] = [weight, 0, capacity_units, throttled]
            heapq.heappush(self._heap, (weight, key))
            return
        while True:  # the heap is lazy: refresh entries whose count grew since they were pushed
            smallest, victim = self._heap[0]
            current = self._entries[victim][0]
            if current == smallest:
                break
            heapq.heapreplace(self._heap, (current, victim))
        del self._entries[victim]
        self._entries[key] = [smallest + weight, smallest, capacity_units, throttled]
        heapq.heapreplace(self._heap, (smallest + weight, key))
        self.evictions += 1

    @property
    def exact(self) -> bool:
        """True while no key was ever evicted: every count is then exact."""
        return self.evictions == 0

    @property
    def error_bound(self) -> float:
        """Largest possible overestimate of any count: ``total / capacity`` (0 while exact)."""
        return 0.0 if self.exact else self.total / self.capacity

    def __len__(self) -> int:
        return len(self._entries)

    def top(self, n: int | None = None, *, scale: float = 1.0) -> list[KeyCount]:
        """Tracked keys, largest count first (ties by key); ``scale`` is ``1 / sample_rate``."""
        rows = sorted(self._entries.items(), key=lambda kv: (-kv[1][0], kv[0]))[:n]
        return [KeyCount(k, c, e, cu, t, c * scale) for k, (c, e, cu, t) in rows]
