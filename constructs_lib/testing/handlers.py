"""Run a bundled Lambda handler from a synthesized asset directory, as Lambda would.

The handler runs in a separate ``python -I -B`` process whose import path is the asset directory
plus the interpreter's site-packages (for boto3), never this repository, so a missing import
fails here as it would on AWS; no ``__pycache__`` is written into the asset. AWS calls go to the
given local endpoint only, with dummy credentials. :func:`invoke_handler` starts one cold process
per invocation; :class:`LocalFunction` keeps a warm one (module state persists, as in a reused
execution environment; a crash or timeout starts a fresh process). Return values are serialized
with plain ``json.dumps``, as the Lambda runtime does.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from .exceptions import HandlerError

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Fault", "HandlerError", "Invocation", "LocalFunction", "invoke_handler"]

_MARK = "\x1eCONSTRUCTS_LIB_RESULT\x1e"
#: The program the handler's process runs (``once`` or ``warm``).
PROCESS = Path(__file__).with_name("handler_process.py")

# The warm process talks JSON lines over a private duplicate of its original stdout; after every
# reply it writes an end marker to stderr, which lets the parent cut the logs of each invocation
# out of the stderr stream (see handler_process.serve).
_END = "\x1eCONSTRUCTS_LIB_END "


@dataclass(frozen=True)
class Fault:
    """An AWS error injected into a :class:`LocalFunction`'s process.

    Every call of ``operation`` (botocore's name, e.g. ``"BatchWriteItem"``) whose parameters,
    as JSON (as given, or in the request body sent), contain ``contains`` fails with ``code`` —
    after botocore's own retries, as a persistent server-side error would. Use it to make one
    record a poison record.
    """

    operation: str
    contains: str
    code: str = "ValidationException"
    message: str = "injected by constructs_lib.testing.handlers.Fault"


@dataclass
class Invocation:
    """What one handler run produced."""

    result: Any
    logs: str
    duration_s: float
    cdk_modules: list[str] = field(default_factory=list)
    package_file: str | None = None


# --------------------------------------------------------------------------------------------
# Shared process set-up
# --------------------------------------------------------------------------------------------
def _asset_for(asset_dir: str | os.PathLike[str], handler: str) -> Path:
    asset = Path(asset_dir).resolve()
    module = handler.rpartition(".")[0].replace(".", "/")  # "pkg.mod.fn" lives in pkg/mod.py
    if not (asset / f"{module}.py").is_file():
        raise HandlerError(f"handler {handler!r} has no module file {module}.py in asset {str(asset)!r}")
    return asset


def _handler_env(
    asset: Path, handler: str, environment: Mapping[str, str] | None, endpoint: str | None
) -> dict[str, str]:
    """Environment of a handler process: the caller's minus ``AWS_*``/``PYTHON*``, plus dummy
    credentials, the local endpoint and the function's own variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))}
    env.update(
        AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local", AWS_DEFAULT_REGION="us-east-1",
        AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true", AWS_LAMBDA_FUNCTION_NAME=handler,
        LAMBDA_TASK_ROOT=str(asset),
    )
    if endpoint:
        env["AWS_ENDPOINT_URL_DYNAMODB"] = endpoint
        env["AWS_ENDPOINT_URL_DYNAMODB_STREAMS"] = endpoint
    env.update(environment or {})
    return env


def _command(mode: str, asset: Path, handler: str, *extra: str) -> list[str]:
    """Isolated interpreter running :data:`PROCESS` (``-I``: no user site, no PYTHON* variables,
    neither the cwd nor the script's directory on sys.path; ``-B``: no ``__pycache__`` written)."""
    return [sys.executable, "-I", "-B", str(PROCESS), mode, str(asset), handler, *extra]


def invoke_handler(
    asset_dir: str | os.PathLike[str],
    handler: str,
    event: Mapping[str, Any],
    *,
    environment: Mapping[str, str] | None = None,
    endpoint: str | None = None,
    timeout: float = 60.0,
) -> Invocation:
    """Invoke ``handler`` (``"module.function"``) from ``asset_dir`` with ``event``.

    Parameters
    ----------
    asset_dir
        The Lambda asset directory in ``cdk.out`` (see ``local_deploy.asset_dir``).
    handler
        The function's ``Handler`` property, e.g. ``"orders_api.handler"``.
    event
        The JSON event.
    environment
        The function's environment variables (e.g. from
        ``LocalDeployment.function_environment``). Default none.
    endpoint
        DynamoDB endpoint the handler's boto3 clients use (``AWS_ENDPOINT_URL_DYNAMODB`` and
        ``AWS_ENDPOINT_URL_DYNAMODB_STREAMS``); dummy credentials are set. Default None.
    timeout
        Seconds before the run is killed. Default 60.

    Raises
    ------
    HandlerError
        With the handler's output if it raised, timed out or returned a non-JSON value.
    """
    asset = _asset_for(asset_dir, handler)
    env = _handler_env(asset, handler, environment, endpoint)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            _command("once", asset, handler, _MARK),
            check=False, input=json.dumps(event), capture_output=True, text=True, env=env, cwd=str(asset), timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise HandlerError(f"handler {handler!r} did not finish within {timeout} s") from exc
    duration = time.perf_counter() - started
    out, _, payload = proc.stdout.partition(_MARK)
    logs = out + proc.stderr
    if proc.returncode != 0 or not payload:
        raise HandlerError(f"handler {handler!r} failed (exit {proc.returncode}):\n{logs[-4000:]}")
    data = json.loads(payload)
    return Invocation(
        result=data["result"], logs=logs, duration_s=duration, cdk_modules=data["cdk_modules"],
        package_file=data["package_file"],
    )


# --------------------------------------------------------------------------------------------
# Warm process
# --------------------------------------------------------------------------------------------
class _Worker:
    """One running handler process with reader threads for its protocol and log pipes."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd=cwd, text=True, encoding="utf-8", errors="replace",
        )
        self.replies: queue.Queue[str | None] = queue.Queue()
        self.logs = ""
        self.logs_closed = False
        self.cond = threading.Condition()
        self.count = 0
        self._threads = [
            threading.Thread(target=self._read_replies, daemon=True),
            threading.Thread(target=self._read_logs, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_replies(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(line)
        self.replies.put(None)

    def _read_logs(self) -> None:
        stderr = self.proc.stderr
        assert stderr is not None  # started with stderr=PIPE
        for chunk in iter(stderr.readline, ""):
            with self.cond:
                self.logs += chunk
                self.cond.notify_all()
        with self.cond:
            self.logs_closed = True
            self.cond.notify_all()

    def take_logs(self, *, wait_s: float = 5.0) -> str:
        """Logs up to the end marker of the current exchange (all logs if the process died)."""
        marker = f"{_END}{self.count}\x1e\n"
        deadline = time.monotonic() + wait_s
        with self.cond:
            while marker not in self.logs and not self.logs_closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.cond.wait(remaining)
            before, found, after = self.logs.partition(marker)
            self.logs = after if found else ""
        self.count += 1
        return before

    def exchange(self, request: str | None, timeout: float) -> tuple[dict[str, Any] | None, str, str]:
        """Send one request line (None: just wait for the start-up reply).

        Returns ``(reply, logs, status)``: *reply* is None unless *status* is ``"ok"``;
        *status* is ``"timeout"`` (the process was killed) or ``"died"`` otherwise.
        """
        if request is not None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(request + "\n")
                self.proc.stdin.flush()
            except OSError:  # BrokenPipeError: the process is gone
                return None, self.take_logs(wait_s=1.0), "died"
        try:
            line = self.replies.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            return None, self.take_logs(wait_s=1.0), "timeout"
        if line is None:
            self.proc.wait(timeout=5)
            return None, self.take_logs(wait_s=1.0), "died"
        return json.loads(line), self.take_logs(), "ok"

    def close(self, timeout: float = 5.0) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._join()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._join()

    def _join(self) -> None:
        for thread in self._threads:
            thread.join(timeout=2)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


class LocalFunction:
    """A warm handler process: import once, invoke many times (a reused Lambda environment).

    Parameters
    ----------
    asset_dir : str or PathLike
        The Lambda asset directory (see ``local_deploy.asset_dir``), or any directory holding
        the handler module.
    handler : str
        The function's ``Handler`` property, e.g. ``"aggregator.handler"``.
    environment : Mapping[str, str], optional
        The function's environment variables. Default None (none).
    endpoint : str, optional
        DynamoDB endpoint for the handler's boto3 clients (``AWS_ENDPOINT_URL_DYNAMODB`` and
        ``AWS_ENDPOINT_URL_DYNAMODB_STREAMS``). Default None (not set).
    timeout : float, optional
        Seconds an invocation (and the start-up import) may take before the process is killed.
        Default 60.
    faults : sequence of Fault, optional
        AWS errors to inject into the handler's calls (see :class:`Fault`). Default none.

    Notes
    -----
    The process is started (and the handler module imported) by the constructor; an import
    error raises :class:`HandlerError` right away. The handler gets a minimal context object
    (``aws_request_id``, ``function_name``, ``get_remaining_time_in_millis()``...). Output the
    handler prints is captured per invocation in :attr:`Invocation.logs`; start-up output is in
    :attr:`init_logs`. Concurrent calls are serialized by a lock.
    """

    def __init__(
        self,
        asset_dir: str | os.PathLike[str],
        handler: str,
        *,
        environment: Mapping[str, str] | None = None,
        endpoint: str | None = None,
        timeout: float = 60.0,
        faults: Sequence[Fault] = (),
    ) -> None:
        if timeout <= 0:
            raise HandlerError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.faults = tuple(faults)
        self.asset = _asset_for(asset_dir, handler)
        self.handler = handler
        self.timeout = float(timeout)
        self._env = _handler_env(self.asset, handler, environment, endpoint)
        self._worker: _Worker | None = None
        self._lock = threading.Lock()
        self._closed = False
        #: How many processes were started (1 + restarts after crashes/timeouts).
        self.starts = 0
        #: Output printed while the handler module was imported (last start).
        self.init_logs = ""
        #: The last successful invocation, or None.
        self.last_invocation: Invocation | None = None
        self._start()

    # -- lifecycle ----------------------------------------------------------------------------
    def _start(self) -> _Worker:
        faults = json.dumps([vars(f) for f in self.faults])
        command = _command("warm", self.asset, self.handler, _END, self.handler, str(self.timeout), faults)
        worker = _Worker(command, self._env, str(self.asset))
        self.starts += 1
        reply, logs, status = worker.exchange(None, self.timeout)
        self.init_logs = logs
        if reply is None or not reply.get("ok"):
            worker.kill()
            if reply is not None:
                detail = reply.get("error", "")
            elif status == "timeout":
                detail = f"import did not finish within {self.timeout:g} s"
            else:
                detail = f"exit {worker.proc.returncode}"
            raise HandlerError(f"handler {self.handler!r} could not start:\n{detail}\n{logs[-4000:]}".rstrip())
        self._worker = worker
        return worker

    @property
    def running(self) -> bool:
        """Whether a warm process is alive right now."""
        return self._worker is not None and self._worker.proc.poll() is None

    @property
    def pid(self) -> int | None:
        """Process id of the warm process, or None when none is running."""
        return self._worker.proc.pid if self.running and self._worker else None

    def close(self) -> None:
        """Stop the process (idempotent). Later invocations raise :class:`HandlerError`."""
        with self._lock:
            self._closed = True
            if self._worker is not None:
                self._worker.close()
                self._worker = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"<LocalFunction {self.handler} ({state})>"

    # -- invocations --------------------------------------------------------------------------
    def invoke(self, event: Mapping[str, Any]) -> Invocation:
        """Run the handler on *event* in the warm process.

        Parameters
        ----------
        event : Mapping
            The JSON event.

        Returns
        -------
        Invocation
            Result, this invocation's logs, duration, CDK modules loaded in the process and the
            ``constructs_lib`` package file the handler imported (if any).

        Raises
        ------
        HandlerError
            The handler raised (message holds the traceback; the process stays warm), returned
            a non-JSON value, crashed or exceeded ``timeout`` (the process is discarded and the
            next call starts a new one), or the function was closed.
        """
        try:
            request = json.dumps({"event": event})
        except (TypeError, ValueError) as exc:
            raise HandlerError(f"event for handler {self.handler!r} is not JSON-serializable: {exc}") from exc
        with self._lock:
            if self._closed:
                raise HandlerError(f"LocalFunction {self.handler!r} is closed")
            worker = self._worker if self.running else None
            if worker is None:
                if self._worker is not None:
                    self._worker.kill()
                worker = self._start()
            started = time.perf_counter()
            reply, logs, status = worker.exchange(request, self.timeout)
            duration = time.perf_counter() - started
            if reply is None:
                worker.kill()
                self._worker = None
                why = (
                    f"did not finish within {self.timeout:g} s"
                    if status == "timeout"
                    else f"crashed (exit {worker.proc.returncode})"
                )
                raise HandlerError(f"handler {self.handler!r} {why}; the process will be restarted:\n{logs[-4000:]}")
            if not reply.get("ok"):
                error = str(reply.get("error", "")).rstrip()
                shown = f"\n--- output ---\n{logs[-4000:]}" if logs.strip() else ""
                raise HandlerError(f"handler {self.handler!r} raised:\n{error}{shown}")
            invocation = Invocation(
                result=reply["result"], logs=logs, duration_s=duration,
                cdk_modules=list(reply["cdk_modules"]), package_file=reply["package_file"],
            )
            self.last_invocation = invocation
            return invocation

    def __call__(self, event: Mapping[str, Any]) -> Any:
        """Invoke and return only the result, so a LocalFunction can be a stream runner handler."""
        return self.invoke(event).result
