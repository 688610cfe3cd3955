"""Pending-orders report: a Lambda handler of the reporting stack, on the shop's table.

The table belongs to ``ShopStack``; this function's stack imported it from the contract the shop
publishes (``SingleTable.from_parameters``). Its only permission on the table is Query on the
sparse index ``GSI2`` (pending orders by date). ``TableClient.from_environment()`` refuses to run
if the shop's published contract changed what it uses (the entity ``Order``, the index ``GSI2``).

Event (direct invocation)::

    {"since": "2024-06-01T00:00:00Z", "until": "2024-06-30T23:59:59Z"}

Returns the pending orders of the window, oldest first, and their count per day. Without
``until`` it reads every pending order from ``since`` on through "pending orders since", the
pattern the reporting team declares on its view of the shop's contract (the shop does not).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from constructs_lib.runtime import TableClient

_table: TableClient | None = None


def _client() -> TableClient:
    global _table
    if _table is None:  # built (and the model checked) once per container
        _table = TableClient.from_environment()
    return _table


def _instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _text(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    if "until" in event:
        window = (_instant(event["since"]), _instant(event["until"]))
        found = _client().query_all("pending orders by date", status="PENDING", created_at=window)
    else:  # the reporting team's own pattern (its view of the shop's contract)
        found = _client().query_all("pending orders since", status="PENDING", created_at=_instant(event["since"]))
    orders = [{"order_id": o["order_id"], "user_id": o["user_id"], "created_at": _text(o["created_at"])} for o in found]
    by_day = Counter(o["created_at"][:10] for o in orders)
    return {"count": len(orders), "orders": orders, "by_day": dict(sorted(by_day.items()))}
