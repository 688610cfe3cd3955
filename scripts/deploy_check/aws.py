"""boto3 on the emulator: clients, stack outputs and resources, Lambda Invoke, waiting."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import boto3

T = TypeVar("T")


class CheckFailed(AssertionError):
    """A check found the deployed resources other than expected."""


def expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


class Aws:
    """Clients of one endpoint (``environment``: what ``client_environment`` returned)."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self.endpoint = environment["AWS_ENDPOINT_URL"]
        self.region = environment["AWS_DEFAULT_REGION"]
        self._credentials = {"aws_access_key_id": environment["AWS_ACCESS_KEY_ID"],
                             "aws_secret_access_key": environment["AWS_SECRET_ACCESS_KEY"]}
        self._clients: dict[tuple[str, str], Any] = {}

    def client(self, service: str, region: str | None = None) -> Any:
        key = (service, region or self.region)
        if key not in self._clients:
            self._clients[key] = boto3.client(service, region_name=key[1], endpoint_url=self.endpoint,
                                              **self._credentials)
        return self._clients[key]

    def outputs(self, stack: str) -> dict[str, str]:
        described = self.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0]
        return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}

    def resources(self, stack: str) -> list[dict[str, Any]]:
        paginator = self.client("cloudformation").get_paginator("list_stack_resources")
        return [r for page in paginator.paginate(StackName=stack) for r in page["StackResourceSummaries"]]

    def invoke(self, function: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """Invoke ``function`` and return its result; a function error raises :class:`CheckFailed`."""
        reply = self.invoke_raw(function, event)
        expect(reply["error"] is None, f"{function} {dict(event)} failed: {reply['payload']}")
        result: dict[str, Any] = reply["payload"]
        return result

    def invoke_raw(self, function: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """``{"error": FunctionError or None, "payload": the decoded payload}``."""
        reply = self.client("lambda").invoke(FunctionName=function, Payload=json.dumps(event).encode())
        return {"error": reply.get("FunctionError"), "payload": json.loads(reply["Payload"].read() or b"null")}

    def query_all(self, **params: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        client = self.client("dynamodb", params.pop("region", None))
        while True:
            page = client.query(**params)
            items += page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return items
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def scan_all(self, table: str) -> list[dict[str, Any]]:
        paginator = self.client("dynamodb").get_paginator("scan")
        return [i for page in paginator.paginate(TableName=table, ConsistentRead=True) for i in page["Items"]]


def wait_for(what: str, probe: Callable[[], T | None], *, timeout: float = 60.0, interval: float = 0.5) -> T:
    """Call ``probe`` until it returns something other than None; :class:`CheckFailed` naming
    ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last is not None:
            return last
        time.sleep(interval)
    raise CheckFailed(f"{what}: not within {timeout:.0f} s")
