"""Pure helpers of the report handler (a sibling module of index.py, bundled with it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

COLUMNS = ("priority", "ticket", "customer", "opened", "subject")


def row(ticket: Mapping[str, Any]) -> list[str]:
    """One table row of a ticket."""
    opened = ticket["opened_at"]  # stored (and read back) as ISO-8601 UTC text
    if not isinstance(opened, datetime):
        opened = datetime.fromisoformat(str(opened).replace("Z", "+00:00"))
    opened_text = opened.strftime("%Y-%m-%d %H:%M")
    return [ticket["priority"], ticket["ticket_id"], ticket["customer_id"], opened_text, ticket["subject"]]


def by_priority(tickets: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Ticket count per priority, P1 first."""
    return dict(sorted(Counter(t["priority"] for t in tickets).items()))
