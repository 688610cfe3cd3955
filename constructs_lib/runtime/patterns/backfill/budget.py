"""A write budget in WCU per sliding second, shared by the threads of one process.

Each write reserves its (over-)estimated capacity before it is sent; the reservation only
succeeds while the reservations of the last ``window + guard`` seconds leave room, so no
sliding second ever carries more than the budget (the guard absorbs the gap between a
reservation and the request reaching DynamoDB). Throttling halves the rate used; each
unthrottled write wins a little of it back (additive increase, multiplicative decrease).
A new budget starts full (its first write waits one window), so a resumed job's first second
never adds to the last second of the run it resumes.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class WriteBudget:
    def __init__(
        self,
        per_second: float,
        *,
        window: float = 1.0,
        guard: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.limit = float(per_second)
        self.rate = float(per_second)
        self.window = window + guard
        self._clock, self._sleep = clock, sleep
        self._events: deque[list[float]] = deque([[clock(), self.limit, 1.0]])
        self._used = self.limit
        self._lock = threading.Lock()
        self.reserved = 0.0
        self.throttles = 0

    def _expire(self, now: float) -> None:
        while self._events and self._events[0][0] <= now - self.window:
            expired = self._events.popleft()
            expired[2] = 0.0
            self._used -= expired[1]

    def acquire(self, units: float) -> list[float]:
        """Block until ``units`` WCU fit in the budget, then reserve them; returns the
        reservation for :meth:`settle`."""
        while True:
            with self._lock:
                now = self._clock()
                self._expire(now)
                # A single write larger than the whole budget still goes out, alone in its window.
                if self._used + units <= self.rate + 1e-9 or not self._events:
                    event = [now, units, 1.0]
                    self._events.append(event)
                    self._used += units
                    self.reserved += units
                    return event
                wait = self._events[0][0] + self.window - now
            self._sleep(max(wait, 0.001))

    def settle(self, event: list[float], used: float) -> None:
        """Replace a reservation by the capacity actually consumed (never blocks). Set at the
        reservation's time, so an overrun counts where the write happened."""
        with self._lock:
            delta = used - event[1]
            event[1] = used
            self.reserved += delta
            if event[2]:  # still inside the window
                self._used += delta

    def throttled(self) -> None:
        with self._lock:
            self.throttles += 1
            self.rate = max(self.limit * 0.05, self.rate / 2)

    def succeeded(self) -> None:
        if self.rate < self.limit:
            with self._lock:
                self.rate = min(self.limit, self.rate + self.limit * 0.01)
