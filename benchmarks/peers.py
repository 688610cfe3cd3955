"""The peers of ``TableClient`` in the client benchmark, and a transport that answers without a server.

* **raw boto3** — the low-level client replaying the exact request ``TableClient`` sends, pre-built.
* **boto3 resource API** — ``boto3.resource("dynamodb").Table(...)``: items as Python dicts, keys
  built with f-strings, ``Key``/``Attr`` conditions (the code a user writes without a library).
* **PynamoDB** — a ``Model`` class of the shop's ``Order`` with its key and index attributes, keys
  built with f-strings: ``save()``, ``get()``, ``query()``, ``update(actions=...)``.

Every peer does the same work per order as ``TableClient``: the same item (keys, derived GSI keys,
sparse ``GSI2`` only while ``PENDING``, the write-sharded ``GSI3`` key with its shard hashed from
``order_id``), the same key condition, the same update (set two attributes, leave ``GSI2``, move
``GSI3`` to the new status, ``attribute_exists`` condition, the new item returned).

:class:`StubTransport` is a botocore ``before-send`` hook: after a peer's request is validated,
serialized and signed it answers with that peer's own response, recorded once from DynamoDB Local
(:class:`ResponseRecorder`), so no socket is opened and the figure is client-side CPU alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botocore.client import BaseClient

#: What the stub answers with: the Content-Type DynamoDB sends.
_HEADERS = {"Content-Type": "application/x-amz-json-1.0"}


def created_text(value: datetime) -> str:
    """The stored form of ``created_at`` (ISO-8601 UTC, microseconds), as the model stores it."""
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def status_shard(order_id: str) -> str:
    """GSI3's shard of an order, as a user computes it by hand: sha256 of the ``order_id``, its
    first 8 bytes mod the shop's shard count, two digits (what ``TableClient`` writes)."""
    from examples.shop.model import ORDER_STATUS_SHARDS

    return f"{int.from_bytes(hashlib.sha256(order_id.encode()).digest()[:8], 'big') % ORDER_STATUS_SHARDS:02d}"


class ResponseRecorder:
    """Keeps the raw body of the last response of each operation a client received."""

    def __init__(self, client: BaseClient) -> None:
        self.bodies: dict[str, bytes] = {}
        client.meta.events.register("response-received.dynamodb", self._received)

    def _received(self, response_dict: dict[str, Any] | None = None, context: Any = None, **kwargs: Any) -> None:
        if response_dict is not None and response_dict.get("status_code") == 200:
            operation = kwargs.get("event_name", "").rsplit(".", 1)[-1]
            self.bodies[operation] = response_dict["body"]


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


class StubTransport:
    """A ``before-send`` hook answering every request of *client* with a recorded body (by operation)."""

    def __init__(self, client: BaseClient, bodies: dict[str, bytes]) -> None:
        self.bodies = dict(bodies)
        self.sent = 0
        client.meta.events.register_first("before-send.dynamodb", self._send)

    def _send(self, request: Any, **kwargs: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else target).rsplit(".", 1)[-1]
        self.sent += 1
        return AWSResponse(request.url, 200, dict(_HEADERS), _Raw(self.bodies[operation]))


def resource_ops(table: Any, query_user: Callable[[dict[str, Any]], str]) -> dict[str, Callable[[dict[str, Any]], object]]:
    """The four operations with the boto3 resource API (``table`` is a ``dynamodb.Table``)."""
    from boto3.dynamodb.conditions import Attr, Key

    def put(o: dict[str, Any]) -> object:
        created = created_text(o["created_at"])
        item = {
            "user_id": o["user_id"], "order_id": o["order_id"], "created_at": created, "status": o["status"],
            "total_cents": o["total_cents"], "note": o["note"], "_type": "Order",
            "PK": f"USER#{o['user_id']}", "SK": f"ORDER#{created}#{o['order_id']}",
            "GSI1PK": f"ORDER#{o['order_id']}", "GSI1SK": "ORDER",
            "GSI3PK": f"STATUS#{o['status']}#{status_shard(o['order_id'])}", "GSI3SK": f"{created}#{o['order_id']}",
        }
        if o["status"] == "PENDING":
            item["GSI2PK"], item["GSI2SK"] = f"STATUS#{o['status']}", f"{created}#{o['order_id']}"
        return table.put_item(Item=item)

    def key(o: dict[str, Any]) -> dict[str, str]:
        return {"PK": f"USER#{o['user_id']}", "SK": f"ORDER#{created_text(o['created_at'])}#{o['order_id']}"}

    def get(o: dict[str, Any]) -> object:
        return table.get_item(Key=key(o)).get("Item")

    def query(o: dict[str, Any]) -> object:
        return table.query(
            KeyConditionExpression=Key("PK").eq(f"USER#{query_user(o)}") & Key("SK").begins_with("ORDER#"),
            ScanIndexForward=False, Limit=10,
        )["Items"]

    def update(o: dict[str, Any]) -> object:
        return table.update_item(
            Key=key(o), UpdateExpression="SET #s = :s, #n = :n, GSI3PK = :g REMOVE GSI2PK, GSI2SK",
            ExpressionAttributeNames={"#s": "status", "#n": "note"},
            ExpressionAttributeValues={":s": "SHIPPED", ":n": "updated", ":g": f"STATUS#SHIPPED#{status_shard(o['order_id'])}"},
            ConditionExpression=Attr("PK").exists(), ReturnValues="ALL_NEW",
        )["Attributes"]

    return {"put": put, "get": get, "query": query, "update": update}


def pynamodb_model(table_name: str, host: str, region: str) -> Any:
    """A PynamoDB ``Model`` of the shop's ``Order`` on *table_name* (keys and index attributes as stored)."""
    from pynamodb.attributes import NumberAttribute, UnicodeAttribute
    from pynamodb.models import Model

    class Order(Model):
        class Meta:
            pass

        PK = UnicodeAttribute(hash_key=True)
        SK = UnicodeAttribute(range_key=True)
        GSI1PK = UnicodeAttribute(null=True)
        GSI1SK = UnicodeAttribute(null=True)
        GSI2PK = UnicodeAttribute(null=True)
        GSI2SK = UnicodeAttribute(null=True)
        GSI3PK = UnicodeAttribute(null=True)
        GSI3SK = UnicodeAttribute(null=True)
        type = UnicodeAttribute(attr_name="_type")
        user_id = UnicodeAttribute()
        order_id = UnicodeAttribute()
        created_at = UnicodeAttribute()
        status = UnicodeAttribute()
        total_cents = NumberAttribute()
        note = UnicodeAttribute(null=True)

    Order.Meta.table_name = table_name
    Order.Meta.host = host
    Order.Meta.region = region
    Order.Meta.aws_access_key_id = "local"
    Order.Meta.aws_secret_access_key = "local"
    return Order


def pynamodb_client(order_model: Any) -> BaseClient:
    """The botocore client a PynamoDB model sends with (to hook the recorder and the stub on)."""
    return order_model._get_connection().connection.client  # the only way to its client


def pynamodb_ops(order: Any, query_user: Callable[[dict[str, Any]], str]) -> dict[str, Callable[[dict[str, Any]], object]]:
    """The four operations with PynamoDB's idiomatic calls on the ``Order`` model."""

    def put(o: dict[str, Any]) -> object:
        created = created_text(o["created_at"])
        item = order(
            f"USER#{o['user_id']}", f"ORDER#{created}#{o['order_id']}",
            GSI1PK=f"ORDER#{o['order_id']}", GSI1SK="ORDER", GSI3PK=f"STATUS#{o['status']}#{status_shard(o['order_id'])}",
            GSI3SK=f"{created}#{o['order_id']}", type="Order", user_id=o["user_id"],
            order_id=o["order_id"], created_at=created, status=o["status"], total_cents=o["total_cents"], note=o["note"],
        )
        if o["status"] == "PENDING":
            item.GSI2PK, item.GSI2SK = f"STATUS#{o['status']}", f"{created}#{o['order_id']}"
        return item.save()

    def get(o: dict[str, Any]) -> object:
        return order.get(f"USER#{o['user_id']}", f"ORDER#{created_text(o['created_at'])}#{o['order_id']}")

    def query(o: dict[str, Any]) -> object:
        return list(order.query(f"USER#{query_user(o)}", order.SK.startswith("ORDER#"), scan_index_forward=False,
                                limit=10))

    def update(o: dict[str, Any]) -> object:
        item = order(f"USER#{o['user_id']}", f"ORDER#{created_text(o['created_at'])}#{o['order_id']}")
        item.update(
            actions=[order.status.set("SHIPPED"), order.note.set("updated"),
                     order.GSI3PK.set(f"STATUS#SHIPPED#{status_shard(o['order_id'])}"), order.GSI2PK.remove(),
                     order.GSI2SK.remove()],
            condition=order.PK.exists(),
        )
        return item

    return {"put": put, "get": get, "query": query, "update": update}
