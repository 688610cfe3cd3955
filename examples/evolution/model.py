"""A live model evolving: ``store`` v1 (deployed, holding data) and v2 (its next release).

v1: customers and their orders; ``GSI1`` is overloaded (customers by email, orders by id).

v2, against v1:

* ``GSI1``'s order template changes (``ORDER#{order_id}`` / ``ORDER`` becomes
  ``ORDER#{order_id}`` / ``CUSTOMER#{customer_id}``) — existing orders need a backfill;
* new sparse ``GSI2``: open orders (``PENDING`` or ``SHIPPED``) by SKU, newest first;
* new ``GSI3``: customers by name;
* new access patterns on them, and a new ``Invoice`` entity (safe: no existing items).

Two GSIs are created, so the rollout takes two deployments (one GSI each).
"""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model

STATUS = ("PENDING", "PAID", "SHIPPED", "CANCELLED")

_CUSTOMER_FIELDS = {"customer_id": Field.string(max_length=64), "email": Field.string(max_length=254)}
_ORDER_FIELDS = {
    "customer_id": Field.string(max_length=64),
    "order_id": Field.string(max_length=64),
    "created_at": Field.timestamp(),
    "status": Field.enum(*STATUS),
}


def model_v1() -> Model:
    return Model(
        "store",
        entities=[
            Entity("Customer", pk="CUSTOMER#{customer_id}", sk="PROFILE", fields=_CUSTOMER_FIELDS,
                   indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="CUSTOMER")}, required=("email",)),
            Entity("Order", pk="CUSTOMER#{customer_id}", sk="ORDER#{created_at}#{order_id}", fields=_ORDER_FIELDS,
                   indexes={"GSI1": IndexKey(pk="ORDER#{order_id}", sk="ORDER")}, required=("status",),
                   version_attribute="version"),
        ],
        indexes=[Index("GSI1")],
        access_patterns=[
            AccessPattern("customer by id", entity="Customer", sk="="),
            AccessPattern("orders of a customer", entity="Order", sk="begins_with", descending=True),
            AccessPattern("customer by email", entity="Customer", index="GSI1"),
            AccessPattern("order by id", entity="Order", index="GSI1"),
        ],
    )


def model_v2() -> Model:
    return Model(
        "store",
        entities=[
            Entity("Customer", pk="CUSTOMER#{customer_id}", sk="PROFILE",
                   fields={**_CUSTOMER_FIELDS, "name": Field.string(max_length=200)},
                   indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="CUSTOMER"),
                            "GSI3": IndexKey(pk="NAME#{name}", sk="{customer_id}")},
                   required=("email",)),
            Entity("Order", pk="CUSTOMER#{customer_id}", sk="ORDER#{created_at}#{order_id}",
                   fields={**_ORDER_FIELDS, "sku": Field.string(max_length=40)},
                   indexes={
                       "GSI1": IndexKey(pk="ORDER#{order_id}", sk="CUSTOMER#{customer_id}"),
                       "GSI2": IndexKey(pk="SKU#{sku}", sk="{created_at}#{order_id}",
                                        when_equals={"status": ("PENDING", "SHIPPED")}),
                   },
                   required=("status",), version_attribute="version"),
            Entity("Invoice", pk="INVOICE#{invoice_id}", sk="INVOICE", fields={"invoice_id": Field.string(max_length=64)}),
        ],
        indexes=[Index("GSI1"), Index("GSI2"), Index("GSI3")],
        access_patterns=[
            AccessPattern("customer by id", entity="Customer", sk="="),
            AccessPattern("orders of a customer", entity="Order", sk="begins_with", descending=True),
            AccessPattern("customer by email", entity="Customer", index="GSI1"),
            AccessPattern("order by id", entity="Order", index="GSI1"),
            AccessPattern("open orders by sku", entity="Order", index="GSI2", sk="<=", descending=True),
            AccessPattern("customers by name", entity="Customer", index="GSI3"),
            AccessPattern("invoice by id", entity="Invoice", sk="="),
        ],
    )
