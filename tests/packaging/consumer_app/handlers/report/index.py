"""Report handler: an agent's unresolved tickets opened in a window, most urgent first, as a
text table. Its only permission on the desk's table is Query on ``GSI1`` (the agents' queues).

Event (direct invocation)::

    {"agent_id": "a-1", "since": "2024-06-01T00:00:00Z", "until": "2024-06-30T23:59:59Z"}

``TableClient.from_environment()`` refuses to run (``ModelMismatchError``, before any request) if
the desk's published model is not the model bundled here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from summary import COLUMNS, by_priority, row
from tabulate import tabulate

from constructs_lib.runtime import TableClient

_table: TableClient | None = None


def _client() -> TableClient:
    global _table
    if _table is None:  # built (and the model checked) once per execution environment
        _table = TableClient.from_environment()
    return _table


def _instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    window = (_instant(event["since"]), _instant(event["until"]))
    tickets = list(_client().query_all("queue of an agent", agent_id=event["agent_id"], opened_at=window))
    tickets.sort(key=lambda t: (t["priority"], t["opened_at"]))
    return {
        "count": len(tickets),
        "tickets": [t["ticket_id"] for t in tickets],
        "by_priority": by_priority(tickets),
        "table": tabulate([row(t) for t in tickets], headers=COLUMNS, tablefmt="github"),
    }
