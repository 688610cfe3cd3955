"""The e-commerce data model used by ``app.py`` and the demo.

Item collections on the table:

* ``USER#{user_id}``: the user's profile (``PROFILE``) and orders (``ORDER#{created_at}#{order_id}``,
  newest first with a descending Query, date ranges with BETWEEN).
* ``ORDER#{order_id}``: the order's line items (``ITEM#{line}``, zero-padded).
* ``PRODUCT#{sku}`` and ``SESSION#{session_id}`` (sessions expire via TTL).

``GSI1`` is overloaded: users by email (``EMAIL#{email}``) and orders by id (the inverted
index, ``ORDER#{order_id}``). ``GSI2`` is sparse: only orders whose status is ``PENDING``
carry its keys, so "pending orders by date" reads nothing else. ``GSI3`` lists every order by
status, newest first: a status alone is a hot partition, so its key is write-sharded over
``ORDER_STATUS_SHARDS`` partitions by order id, and the query merges them.
"""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime.sharding import index_shards

ORDER_STATUS = ("PENDING", "PAID", "SHIPPED", "CANCELLED")
#: Partitions of "orders by status" (GSI3): sized for 3,000 orders/s changing to one status
#: (``index_shards(3000)`` = 4: 3,000 x 1.2 / 1,000 WCU per partition).
ORDER_STATUS_SHARDS = index_shards(3000)

shop_model = Model(
    "shop",
    entities=[
        Entity(
            "User",
            pk="USER#{user_id}",
            sk="PROFILE",
            fields={"user_id": "string", "email": "string"},
            indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="USER")},
            required=("email",),
            attributes={"name": "string", "updated_by": "string"},
            version_attribute="version",
            description="A customer account, looked up by email via GSI1.",
        ),
        Entity(
            "Order",
            pk="USER#{user_id}",
            sk="ORDER#{created_at}#{order_id}",
            fields={
                "user_id": "string",
                "order_id": "string",
                "created_at": Field.timestamp(),
                "status": Field.enum(*ORDER_STATUS),
            },
            indexes={
                "GSI1": IndexKey(pk="ORDER#{order_id}", sk="ORDER"),
                "GSI2": IndexKey(
                    pk="STATUS#{status}", sk="{created_at}#{order_id}", when_equals={"status": ("PENDING",)}
                ),
                "GSI3": IndexKey(
                    pk="STATUS#{status}#{shard}", sk="{created_at}#{order_id}",
                    shards=ORDER_STATUS_SHARDS, shard_by="order_id",
                ),
            },
            required=("status",),
            attributes={"line_count": "integer"},
            description="An order, in its user's collection.",
        ),
        Entity(
            "OrderItem",
            pk="ORDER#{order_id}",
            sk="ITEM#{line}",
            fields={"order_id": "string", "line": Field.number(width=4)},
            required=("sku", "quantity"),
            attributes={"sku": "string", "quantity": "integer"},
            description="One line of an order.",
        ),
        Entity(
            "Product",
            pk="PRODUCT#{sku}",
            sk="PRODUCT",
            fields={"sku": "string"},
            required=("name", "price_cents"),
            attributes={"name": "string", "price_cents": "integer"},
        ),
        Entity(
            "Session",
            pk="SESSION#{session_id}",
            sk="SESSION",
            fields={"session_id": "string"},
            required=("user_id",),
            attributes={"user_id": "string"},
            description="A login session, expired by TTL.",
        ),
    ],
    indexes=[Index("GSI1"), Index("GSI2", projection="KEYS_ONLY"), Index("GSI3")],
    access_patterns=[
        AccessPattern("user profile", entity="User", sk="="),
        AccessPattern("user by email", entity="User", index="GSI1"),
        AccessPattern("user's orders newest first", entity="Order", sk="begins_with", descending=True),
        AccessPattern("orders in a date range", entity="Order", sk="between", sk_fields=("created_at",)),
        AccessPattern("user with orders", entity=("User", "Order")),
        AccessPattern("order by id", entity="Order", index="GSI1"),
        AccessPattern("items of an order", entity="OrderItem", sk="begins_with"),
        AccessPattern("pending orders by date", entity="Order", index="GSI2", sk="between"),
        AccessPattern("orders by status newest first", entity="Order", index="GSI3", descending=True),
        AccessPattern("product by sku", entity="Product", sk="="),
        AccessPattern("session by id", entity="Session", sk="="),
    ],
    ttl_attribute="expires_at",
)
