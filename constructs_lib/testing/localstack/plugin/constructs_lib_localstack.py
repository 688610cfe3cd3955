"""A LocalStack Lambda runtime executor without Docker: an execution environment is a local
process of the function's Python version.

Installed into LocalStack's virtualenv (entry point ``local-process`` of the namespace
``localstack.lambda.runtime_executor``) by ``constructs_lib.testing.localstack``, which maps each
runtime to an interpreter of its version with boto3 in ``CONSTRUCTS_LIB_LAMBDA_PYTHONS``. The
process, ``constructs_lib_lambda_worker.py`` beside this file, imports the handler at start (an
import error is the init error every invocation returns, as on AWS) and answers invocations on
its stdin and stdout; its stderr is the log. An invocation past the timeout ends the process.
Runs inside LocalStack (Python >= 3.12) and imports it; no part of ``constructs_lib``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

from localstack import config
from localstack.services.lambda_.invocation.executor_endpoint import StatusErrorException
from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin
from localstack.services.lambda_.invocation.runtime_executor import RuntimeExecutor

NAME = "local-process"
ENV_PYTHONS = "CONSTRUCTS_LIB_LAMBDA_PYTHONS"
WORKER = Path(__file__).resolve().with_name("constructs_lib_lambda_worker.py")
#: Time allowed for the handler's module to import (Lambda's init phase allows 10 s).
INIT_TIMEOUT_S = 30.0


def _error(message: str, error_type: str) -> bytes:
    return json.dumps({"errorMessage": message, "errorType": error_type, "stackTrace": []}).encode()


class LocalProcessRuntimeExecutor(RuntimeExecutor):
    """One execution environment: a worker process of the function's Python."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id=id, function_version=function_version)
        self.process: subprocess.Popen[str] | None = None
        self.replies: queue.Queue[str | None] = queue.Queue()
        self.logs: list[str] = []
        self.lock = threading.Lock()

    # What LocalStack asks of an executor ---------------------------------------------------------
    def start(self, env_vars: dict[str, str]) -> None:
        runtime = self.function_version.config.runtime or ""
        pythons = json.loads(os.environ.get(ENV_PYTHONS) or "{}")
        python = pythons.get(runtime)
        if python is None:
            message = (f"runtime {runtime!r} has no local interpreter: this executor runs {sorted(pythons)} "
                       f"(set by {ENV_PYTHONS}; install the runtime with `python -m constructs_lib.testing.localstack "
                       f"install --runtime {runtime}`)")
            raise StatusErrorException(message, payload=_error(message, "Runtime.InvalidRuntime"))
        code = self.function_version.config.code
        code_dir = str(code.get_unzipped_code_location())
        env = {key: str(value) for key, value in env_vars.items()}
        env.update({
            "PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "LAMBDA_TASK_ROOT": code_dir,
            "HOME": os.environ.get("HOME", "/tmp"),
        })
        self.process = subprocess.Popen(
            [python, "-I", "-B", str(WORKER), code_dir, self.function_version.config.handler or ""],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            cwd=code_dir,
        )
        threading.Thread(target=self._read_replies, daemon=True).start()
        threading.Thread(target=self._read_logs, daemon=True).start()
        first = self._next_reply(INIT_TIMEOUT_S)
        if first is None or not first.get("ready"):
            failure = (first or {}).get("init_error") or (first or {}).get("error")
            payload = (json.dumps(failure).encode() if failure else
                       _error(f"the handler did not load within {INIT_TIMEOUT_S:.0f} s", "Runtime.InitTimeout"))
            self.stop()
            raise StatusErrorException("Environment startup failed", payload=payload)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        return config.GATEWAY_LISTEN[0].host if config.GATEWAY_LISTEN else "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        return f"http://{self.get_endpoint_from_executor()}:{config.GATEWAY_LISTEN[0].port}/_localstack_lambda/{self.id}"

    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        request_id = payload.get("invoke-id", "")
        with self.lock:
            self.logs.clear()
        process = self.process
        if process is None or process.stdin is None or process.poll() is not None:
            return InvocationResult(request_id, _error("the execution environment exited", "Runtime.ExitError"),
                                    is_error=True, logs=self.get_logs())
        process.stdin.write(json.dumps(payload) + "\n")
        process.stdin.flush()
        timeout = float(self.function_version.config.timeout or 3)
        reply = self._next_reply(timeout)
        if reply is None:
            self.stop()
            message = f"Task timed out after {timeout:.2f} seconds"
            return InvocationResult(request_id, _error(message, "Sandbox.Timedout"), is_error=True, logs=self.get_logs())
        if "error" in reply:
            return InvocationResult(request_id, json.dumps(reply["error"]).encode(), is_error=True, logs=self.get_logs())
        return InvocationResult(request_id, reply["payload"].encode(), is_error=False, logs=self.get_logs())

    def get_logs(self) -> str:
        with self.lock:
            return "".join(self.logs)

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        if function_version.config.code:
            function_version.config.code.prepare_for_execution()

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        pass

    # The worker's two streams ----------------------------------------------------------------------
    def _read_replies(self) -> None:
        process = self.process
        assert process is not None and process.stdout is not None
        for line in process.stdout:
            self.replies.put(line)
        self.replies.put(None)

    def _read_logs(self) -> None:
        process = self.process
        assert process is not None and process.stderr is not None
        for line in process.stderr:
            with self.lock:
                self.logs.append(line)

    def _next_reply(self, timeout: float) -> dict[str, Any] | None:
        try:
            line = self.replies.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:  # the process exited
            return {"error": json.loads(_error(f"the execution environment exited: {self.get_logs()[-2000:]}",
                                               "Runtime.ExitError"))}
        reply: dict[str, Any] = json.loads(line)
        return reply


class LocalProcessRuntimeExecutorPlugin(RuntimeExecutorPlugin):
    """The entry point LocalStack loads when ``LAMBDA_RUNTIME_EXECUTOR=local-process``."""

    name = NAME

    def load(self, *args: Any, **kwargs: Any) -> type[RuntimeExecutor]:
        return LocalProcessRuntimeExecutor
