"""The consumer repository's own tests (copied next to app.py as ``test_report.py``): they need
the committed contract file and nothing of the producer's — the desk's table is created in
DynamoDB Local from ``contracts/desk.contract.json`` alone (``local_deploy_contract``), and the
report handler runs as synthesized, from its asset directory.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app import CONTRACT, DeskReportsStack
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.environment import ENV_MODEL_FINGERPRINT

DAY = datetime(2024, 6, 3, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def report_asset(cdk_synth: Any) -> Any:
    return cdk_synth(DeskReportsStack).asset_dir("TicketReport")


@pytest.fixture
def report(report_asset: Any, local_deploy_contract: Any, local_function: Any, dynamodb_client: Any) -> Any:
    """The report handler on a desk table created from the contract, holding five tickets."""
    desk = local_deploy_contract(CONTRACT, name_prefix="desk-")
    table = TableClient(desk.model, desk.name, client=dynamodb_client)
    for ticket_id, agent, hours, status, priority in [("t-01", "a-1", 0, "OPEN", "P2"), ("t-02", "a-1", 26, "WAITING", "P1"),
                                                      ("t-03", "a-1", 30, "CLOSED", "P1"), ("t-04", "a-1", 192, "OPEN", "P3"),
                                                      ("t-05", "a-2", 2, "OPEN", "P1")]:
        table.put("Ticket", {"ticket_id": ticket_id, "customer_id": "c-1", "agent_id": agent, "status": status,
                             "opened_at": DAY + timedelta(hours=hours), "priority": priority, "subject": "s"})
    return local_function(report_asset, "index.handler",
                          environment={"TABLE_NAME": desk.name, ENV_MODEL_FINGERPRINT: desk.contract.fingerprint})


def test_the_report_reads_an_agents_queue_in_a_window(report: Any) -> None:
    # WHEN the report runs on a window (the producer's pattern "queue of an agent")
    answer = report({"agent_id": "a-1", "since": "2024-06-03T00:00:00Z", "until": "2024-06-05T23:59:59Z"})
    # THEN it lists a-1's unresolved tickets of the window, most urgent first
    assert answer["tickets"] == ["t-02", "t-01"]


def test_the_report_reads_an_agents_queue_since_a_date(report: Any) -> None:
    # WHEN the report runs with no end (this repository's own pattern "queue of an agent since")
    answer = report({"agent_id": "a-1", "since": "2024-06-04T00:00:00Z"})
    # THEN it lists every unresolved ticket of a-1 from that date on
    assert answer["tickets"] == ["t-02", "t-04"]
