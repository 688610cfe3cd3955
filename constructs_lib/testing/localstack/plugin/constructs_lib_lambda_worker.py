"""One Lambda execution environment: ``python -I -B constructs_lib_lambda_worker.py CODE HANDLER``.

Started by the LocalStack runtime executor in ``constructs_lib_localstack.py`` with the Python of
the function's runtime (its own virtualenv: the interpreter and boto3, as the Lambda runtime
ships them) and the function's environment. It imports the handler from the unzipped code
directory (the cold start), then answers one JSON line on stdin per invocation with one JSON
line on a private copy of stdout; the handler's own stdout and stderr go to stderr (the logs).

Standard library only.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from typing import Any


class LambdaContext:
    """The context object handlers get (the attributes they read, and the remaining time)."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.invoked_function_arn = request.get("invoked-function-arn", "")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
        self.aws_request_id = request.get("invoke-id", "")
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self._deadline = time.monotonic() + float(os.environ.get("AWS_LAMBDA_FUNCTION_TIMEOUT", "3"))

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def error_payload(exc: BaseException, error_type: str | None = None) -> dict[str, Any]:
    """The error document the Lambda Python runtime returns for an unhandled exception."""
    return {
        "errorMessage": str(exc),
        "errorType": error_type or type(exc).__name__,
        "requestId": "",
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }


def main(code_dir: str, handler: str) -> int:
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the handler's prints are logs, never protocol
    sys.stdout = sys.stderr
    sys.path.insert(0, code_dir)
    os.chdir(code_dir)
    try:
        module_name, _, function_name = handler.rpartition(".")
        function = getattr(importlib.import_module(module_name), function_name)
    except Exception as exc:  # an init error is the invocation's answer, as on AWS
        traceback.print_exc()
        replies.write(json.dumps({"init_error": error_payload(exc, f"Runtime.{type(exc).__name__}")}) + "\n")
        replies.flush()
        return 1
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin:
        request = json.loads(line)
        os.environ["_X_AMZN_TRACE_ID"] = request.get("trace-id", "")
        print(f"START RequestId: {request.get('invoke-id')}", file=sys.stderr, flush=True)
        try:
            event = json.loads(request["payload"]) if request.get("payload") else {}
            result = function(event, LambdaContext(request))
            reply: dict[str, Any] = {"payload": json.dumps(result)}
        except Exception as exc:  # an unhandled error is the invocation's answer
            traceback.print_exc()
            reply = {"error": error_payload(exc)}
        print(f"END RequestId: {request.get('invoke-id')}", file=sys.stderr, flush=True)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
