"""The support desk's data model: the contract between the desk team, which owns the table (the
producer repository), and the teams that read it (the consumer repository).

It lives only in this repository. The consumer repository never imports it: it commits the
contract file this app's synth writes (``cdk.out/desk.contract.json``) and builds its model from
that file (``Model.from_contract``).

* ``CUSTOMER#{customer_id}`` holds the customer's profile (``PROFILE``) and tickets
  (``TICKET#{ticket_id}``).
* ``GSI1`` is each agent's queue: the agent's unresolved tickets, oldest first
  (``AGENT#{agent_id}`` / ``{opened_at}#{ticket_id}``). It is sparse: a closed ticket leaves it.
"""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model

TICKET_STATUS = ("OPEN", "WAITING", "CLOSED")
UNRESOLVED = ("OPEN", "WAITING")
PRIORITY = ("P1", "P2", "P3")

desk_model = Model(
    "desk",
    entities=[
        Entity(
            "Customer",
            pk="CUSTOMER#{customer_id}",
            sk="PROFILE",
            fields={"customer_id": "string", "name": "string"},
            required=("name",),
        ),
        Entity(
            "Ticket",
            pk="CUSTOMER#{customer_id}",
            sk="TICKET#{ticket_id}",
            fields={
                "customer_id": "string",
                "ticket_id": "string",
                "agent_id": "string",
                "opened_at": Field.timestamp(),
                "status": Field.enum(*TICKET_STATUS),
                "priority": Field.enum(*PRIORITY),
            },
            indexes={
                "GSI1": IndexKey(pk="AGENT#{agent_id}", sk="{opened_at}#{ticket_id}", when_equals={"status": UNRESOLVED}),
            },
            required=("status", "priority", "subject"),
        ),
    ],
    indexes=[Index("GSI1")],
    access_patterns=[
        AccessPattern("customer profile", entity="Customer", sk="="),
        AccessPattern("tickets of a customer", entity="Ticket", sk="begins_with"),
        AccessPattern("queue of an agent", entity="Ticket", index="GSI1", sk="between"),
    ],
)
