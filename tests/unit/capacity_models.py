"""Small models the capacity tests share (not a test module)."""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model


def projected_model(item_bytes: int, *, read_by_name: bool = True) -> Model:
    """Users in two ALL-projected GSIs, declared ``item_bytes`` large."""
    patterns = [AccessPattern("user by email", entity="User", index="ByEmail")]
    if read_by_name:
        patterns.append(AccessPattern("users by name", entity="User", index="ByName"))
    return Model("people", entities=[Entity(
        "User", pk="USER#{user_id}", sk="PROFILE", fields=["user_id", "email", "name"],
        indexes={"ByEmail": IndexKey(pk="EMAIL#{email}", sk="USER"), "ByName": IndexKey(pk="NAME#{name}", sk="{user_id}")},
        typical_item_bytes=item_bytes)], indexes=[Index("ByEmail"), Index("ByName")], access_patterns=patterns)


def collection_model(*, bounded: bool = False) -> Model:
    """Users (500 bytes) and their events (2,000 bytes) in one partition; "user alone" reads it."""
    return Model("activity", entities=[
        Entity("User", pk="USER#{user_id}", sk="PROFILE", fields=["user_id"], typical_item_bytes=500),
        Entity("Event", pk="USER#{user_id}", sk="EVENT#{event_id}", fields=["user_id", "event_id"],
               typical_item_bytes=2000),
    ], access_patterns=[
        AccessPattern("user alone", entity="User", sk="=" if bounded else None),
        AccessPattern("events", entity="Event", sk="begins_with"),
    ])
