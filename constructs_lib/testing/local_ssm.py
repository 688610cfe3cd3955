"""A local SSM endpoint serving ``GetParameter`` from a dict, on 127.0.0.1.

DynamoDB Local has no SSM, and a function on a table imported from published parameters reads
the table's contract parameter at cold start (``runtime/contract.py``). :class:`LocalSsm` answers
boto3's ``GetParameter`` (JSON 1.1 protocol) with the ``String`` parameters it holds — those a
local deployment created (:meth:`LocalSsm.publish`) or any set by hand — and ``ParameterNotFound``
otherwise. Handler processes reach it through ``AWS_ENDPOINT_URL_SSM`` (:attr:`LocalSsm.environment`).
Every other operation is refused. See docs/adr/0042-compatibility-by-slice.md.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ENV_SSM_ENDPOINT", "LocalSsm"]

#: The botocore variable pointing SSM clients at an endpoint.
ENV_SSM_ENDPOINT = "AWS_ENDPOINT_URL_SSM"


class LocalSsm:
    """An SSM ``GetParameter`` endpoint on ``127.0.0.1`` (a free port), started on construction.

    Attributes
    ----------
    parameters
        Name → value of the parameters it serves (change it freely).
    requests
        ``(operation, parameter name)`` of every request served, in order.
    url
        Its endpoint URL.
    """

    def __init__(self, parameters: Mapping[str, str] | None = None) -> None:
        self.parameters: dict[str, str] = dict(parameters or {})
        self.requests: list[tuple[str, str | None]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                operation = str(self.headers.get("X-Amz-Target", "")).rpartition(".")[2]
                status, answer = owner._answer(operation, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def environment(self) -> dict[str, str]:
        """The variables pointing a handler process's SSM client here."""
        return {ENV_SSM_ENDPOINT: self.url}

    def publish(self, deployment: Any) -> list[str]:
        """Serve every ``String`` SSM parameter ``deployment`` (a local deployment of an assembly
        or a stack) created, with its resolved value — as a deploy of the stack would, replacing
        the values of an earlier deploy. Returns the names."""
        stacks = list(getattr(deployment, "stacks", {}).values()) or [deployment]
        names = []
        for name, (owner, _) in sorted(deployment.shared.parameters.items()):
            if any(owner is stack for stack in stacks):
                self.parameters[name] = str(owner.resolve("{{resolve:ssm:" + name + "}}"))
                names.append(name)
        return names

    def _answer(self, operation: str, body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = {}
        name = request.get("Name") if isinstance(request, dict) else None
        self.requests.append((operation, name))
        if operation != "GetParameter":
            return 400, {"__type": "InvalidAction",
                         "message": f"the local SSM endpoint serves GetParameter only, not {operation}"}
        if name not in self.parameters:
            return 400, {"__type": "ParameterNotFound", "message": f"parameter {name!r} not found"}
        return 200, {"Parameter": {"Name": name, "Type": "String", "Value": self.parameters[name], "Version": 1,
                                   "ARN": f"arn:aws:ssm:us-east-1:000000000000:parameter{name}", "DataType": "text"}}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LocalSsm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

