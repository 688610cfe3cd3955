"""The loans API of the separate app: records a loan and counts it (runs in its Lambda asset)."""

from __future__ import annotations

from typing import Any

from constructs_lib.runtime import CounterClient, TableClient

table = TableClient.from_environment()
loans = CounterClient.from_environment("book_loans")


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    table.put("Loan", {"isbn": event["isbn"], "member_id": event["member_id"], "loaned_at": event["loaned_at"]})
    loans.increment(event["isbn"])
    return {"loaned": event["isbn"]}
