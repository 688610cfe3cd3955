"""The program a bundled handler runs in: ``python -I -B handler_process.py once|warm ...``.

:mod:`.handlers` starts it with the asset directory first on the import path. ``once ASSET HANDLER
MARK`` calls the handler on the JSON event on stdin and writes ``MARK`` and the result as JSON;
``warm ASSET HANDLER END_MARK FUNCTION_NAME TIMEOUT_S FAULTS_JSON`` imports the handler, then
answers one JSON line per request line (:func:`serve`). Standard library only (botocore when
faults are injected): the process imports the asset's ``constructs_lib``, never this one.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from typing import IO, Any

__all__ = ["LambdaContext", "inject_faults", "load_handler", "loaded_modules", "main", "run_once", "serve"]

Handler = Callable[[Any, Any], Any]
#: Top-level modules of the AWS CDK, reported when the handler's process loaded any.
CDK_MODULES = ("aws_cdk", "jsii", "constructs")
#: The botocore method every API call goes through: faults are injected by replacing it (and the one
#: that sends the serialized request).
_API_CALL, _SEND = "_make_api_call", "_make_request"


def load_handler(asset: str, handler: str) -> Handler:
    """Import ``handler`` (``"module.function"``) with ``asset`` first on the import path."""
    sys.path.insert(0, asset)
    module_name, _, func_name = handler.rpartition(".")
    func: Handler = getattr(importlib.import_module(module_name), func_name)
    return func


def loaded_modules() -> dict[str, Any]:
    """The CDK modules this process loaded and the file of the ``constructs_lib`` it imported."""
    cdk = sorted(m for m in sys.modules if m.split(".")[0] in CDK_MODULES)
    package = sys.modules.get("constructs_lib")
    return {"cdk_modules": cdk, "package_file": getattr(package, "__file__", None)}


def run_once(asset: str, handler: str, mark: str) -> None:
    """One cold invocation: the event from stdin, ``mark`` and the JSON answer on stdout."""
    func = load_handler(asset, handler)
    event = json.loads(sys.stdin.read())
    body = json.dumps(func(event, None))  # what the Lambda runtime does with the return value
    sys.stdout.write(mark + json.dumps({"result": json.loads(body), **loaded_modules()}))


class LambdaContext:
    """The context object a handler gets: the attributes handlers read, and the remaining time."""

    def __init__(self, function_name: str, request_id: str, deadline: float) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:" + function_name
        self.memory_limit_in_mb = "128"
        self.aws_request_id = request_id
        self.log_group_name = "/aws/lambda/" + function_name
        self.log_stream_name = "local"
        self._deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def inject_faults(faults: list[dict[str, str]]) -> None:
    """Make every botocore call whose operation and parameters match a fault fail with its error
    code, as a persistent server-side error would (``handlers.Fault``). Parameters are matched as
    given (JSON) and as sent (the request body): a client may prepare the body itself, as the audit
    writer does (ADR 0059)."""
    import botocore.client
    import botocore.exceptions

    original, original_request = getattr(botocore.client.BaseClient, _API_CALL), getattr(botocore.client.BaseClient, _SEND)

    def check(operation_name: str, text: str) -> None:
        for fault in faults:
            if fault["operation"] == operation_name and fault["contains"] in text:
                raise botocore.exceptions.ClientError(
                    {"Error": {"Code": fault["code"], "Message": fault["message"]}}, operation_name)

    def faulty(self: botocore.client.BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
        check(operation_name, json.dumps(api_params, default=str))
        return original(self, operation_name, api_params)

    def faulty_request(self: botocore.client.BaseClient, operation_model: Any, request_dict: dict[str, Any],
                       request_context: Any) -> Any:
        body = request_dict.get("body")
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        try:
            text = json.dumps(json.loads(text), ensure_ascii=False)  # JSON protocols escape non-ASCII text
        except ValueError:
            pass
        check(operation_model.name, text)
        return original_request(self, operation_model, request_dict, request_context)

    setattr(botocore.client.BaseClient, _API_CALL, faulty)
    setattr(botocore.client.BaseClient, _SEND, faulty_request)


class _Replies:
    """Replies on a private duplicate of the original stdout, each followed by an end marker on
    stderr, which lets the parent cut each invocation's logs out of the stderr stream."""

    def __init__(self, proto: IO[str], end_mark: str) -> None:
        self.proto, self.end_mark, self.count = proto, end_mark, 0

    def send(self, payload: dict[str, Any]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stderr.write(self.end_mark + str(self.count) + "\x1e\n")
        sys.stderr.flush()
        self.proto.write(json.dumps(payload) + "\n")
        self.proto.flush()
        self.count += 1


def serve(asset: str, handler: str, end_mark: str, function_name: str, timeout_s: float,
          faults: list[dict[str, str]]) -> int:
    """A warm process: import the handler once, then answer one JSON line per request line."""
    # fd 1 goes to stderr so the handler's prints (Python or C level) cannot corrupt the protocol.
    replies = _Replies(os.fdopen(os.dup(1), "w", encoding="utf-8"), end_mark)
    if faults:
        inject_faults(faults)
    os.dup2(2, 1)
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    try:
        func = load_handler(asset, handler)
    except Exception:  # the parent shows the traceback: an import error fails the start
        replies.send({"ok": False, "error": traceback.format_exc()})
        return 1
    replies.send({"ok": True})
    for line in sys.stdin:
        request = json.loads(line)
        context = LambdaContext(function_name, str(uuid.uuid4()), time.monotonic() + timeout_s)
        try:
            result = func(request["event"], context)
        except Exception:  # the handler's error is the invocation's answer; the process stays warm
            replies.send({"ok": False, "error": traceback.format_exc()})
            continue
        try:
            body = json.loads(json.dumps(result))
        except (TypeError, ValueError) as exc:
            replies.send({"ok": False, "error": f"Runtime.MarshalError: Unable to marshal response: {exc}"})
            continue
        replies.send({"ok": True, "result": body, **loaded_modules()})
    return 0


def main(argv: list[str]) -> int:
    """``once ASSET HANDLER MARK`` or ``warm ASSET HANDLER END_MARK FUNCTION_NAME TIMEOUT_S FAULTS_JSON``."""
    if len(argv) == 4 and argv[0] == "once":
        run_once(*argv[1:])
        return 0
    if len(argv) == 7 and argv[0] == "warm":
        asset, handler, end_mark, function_name, timeout_s, faults = argv[1:]
        return serve(asset, handler, end_mark, function_name, float(timeout_s), json.loads(faults))
    sys.stderr.write(f"usage: handler_process.py once ASSET HANDLER MARK | warm ASSET HANDLER END_MARK "
                     f"FUNCTION_NAME TIMEOUT_S FAULTS_JSON (got {argv!r})\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
