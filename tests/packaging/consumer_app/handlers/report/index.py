"""Report handler: an agent's unresolved tickets opened in a window, most urgent first, as a
text table. Its only permission on the desk's table is Query on ``GSI1`` (the agents' queues).

Event (direct invocation)::

    {"agent_id": "a-1", "since": "2024-06-01T00:00:00Z", "until": "2024-06-30T23:59:59Z"}

Without ``until`` it reads every ticket from ``since`` on, through "queue of an agent since" — an
access pattern only this repository declares (a view of the producer's contract).

``TableClient.from_environment()`` refuses to run (``ModelMismatchError``, before any request) if
the desk's published model fingerprint is not the bundled model's.
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
    if "until" in event:
        window = (_instant(event["since"]), _instant(event["until"]))
        found = _client().query_all("queue of an agent", agent_id=event["agent_id"], opened_at=window)
    else:  # the consumer-only pattern: open-ended
        found = _client().query_all("queue of an agent since", agent_id=event["agent_id"],
                                    opened_at=_instant(event["since"]))
    tickets = list(found)
    tickets.sort(key=lambda t: (t["priority"], t["opened_at"]))
    return {
        "count": len(tickets),
        "tickets": [t["ticket_id"] for t in tickets],
        "by_priority": by_priority(tickets),
        "table": tabulate([row(t) for t in tickets], headers=COLUMNS, tablefmt="github"),
    }
