"""What a sharded counter must count, written without the runtime: the model-based test's reference.

A plain increment adds its amount. An increment with an idempotency key adds its amount the
first time the key is used on that counter; the same key with the same amount again is a
duplicate (nothing added); the same key with another amount is refused (nothing added).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CounterReference:
    totals: dict[str, int] = field(default_factory=dict)
    keys: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, counter: str, by: int) -> None:
        self.totals[counter] = self.totals.get(counter, 0) + by

    def add_keyed(self, counter: str, key: str, by: int) -> str:
        """``"counted"``, ``"duplicate"`` or ``"reused"`` (another amount: refused)."""
        earlier = self.keys.get((counter, key))
        if earlier is None:
            self.keys[(counter, key)] = by
            self.add(counter, by)
            return "counted"
        return "duplicate" if earlier == by else "reused"

    def total(self, counter: str) -> int:
        return self.totals.get(counter, 0)
