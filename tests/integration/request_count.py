"""Counting the requests a boto3 client sends, for tests asserting that a refusal sent none."""

from __future__ import annotations

from typing import Any


class Calls:
    """Counts the requests a boto3 client sends (a botocore ``before-send`` hook)."""

    def __init__(self, client: Any) -> None:
        self.count = 0
        self._client = client
        client.meta.events.register("before-send.dynamodb.*", self._seen)

    def _seen(self, **_: Any) -> None:
        self.count += 1

    def close(self) -> None:
        self._client.meta.events.unregister("before-send.dynamodb.*", self._seen)
