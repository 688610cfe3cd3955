"""Synthesize a CDK app for a test, and run a synthesized stream consumer locally.

:func:`synthesize` builds an app into a cloud assembly with asset metadata enabled and the
project's ``cdk.json`` context, as the CDK CLI does, and returns a :class:`SynthResult`
(templates, function asset directories). :func:`start_stream_consumer` runs a synthesized stream
consumer's bundled handler warm, fed the deployed table's real stream with the synthesized
mapping's settings. For an app built without the asset-metadata flag,
:meth:`SynthResult.asset_dir` reads the assembly's asset manifest instead.

Import-light: importing this module imports neither aws_cdk/constructs/jsii nor boto3; only
:func:`synthesize` imports aws_cdk, when called.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from constructs_lib.testing._cfn_tables import LAMBDA_FUNCTION, match_logical_id
from constructs_lib.testing.exceptions import LocalDeployError, SynthError

if TYPE_CHECKING:
    from types import TracebackType

    from constructs_lib.testing.handlers import Fault, LocalFunction
    from constructs_lib.testing.local_deploy import LocalDeployment
    from constructs_lib.testing.streams import RunReport, StreamRunner

__all__ = [
    "ASSET_METADATA_CONTEXT",
    "StreamConsumer",
    "SynthResult",
    "read_project_context",
    "start_stream_consumer",
    "synthesize",
]

#: Context key that makes CDK write ``Metadata["aws:asset:path"]`` on asset-backed resources.
ASSET_METADATA_CONTEXT = "aws:cdk:enable-asset-metadata"
#: The CDK CLI's project files: ``cdk.json`` (its ``context`` block) and the cached context.
CDK_JSON = "cdk.json"
CDK_CONTEXT_JSON = "cdk.context.json"
_STACK_ARTIFACT = "aws:cloudformation:stack"
_NESTED_ASSEMBLY_ARTIFACT = "cdk:cloud-assembly"
# Only quiets jsii's notice about the Node version; set (if unset) while jsii starts.
_QUIET_JSII = ("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


# --------------------------------------------------------------------------------------------
# The synthesized assembly
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Stack:
    artifact_id: str
    stack_name: str
    display_name: str
    assembly_dir: Path
    template_file: str
    dependencies: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.artifact_id, self.stack_name, self.display_name)


def _read_stacks(assembly_dir: Path, depth: int = 0) -> list[_Stack]:
    manifest_path = assembly_dir / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SynthError(f"{str(assembly_dir)!r} is not a cloud assembly: it has no manifest.json") from exc
    stacks: list[_Stack] = []
    for art_id, art in (manifest.get("artifacts") or {}).items():
        props = art.get("properties") or {}
        if art.get("type") == _STACK_ARTIFACT and isinstance(props.get("templateFile"), str):
            name = str(props.get("stackName") or art_id)
            stacks.append(_Stack(art_id, name, str(art.get("displayName") or art_id), assembly_dir, props["templateFile"],
                                 tuple(str(d) for d in art.get("dependencies") or ())))
        elif art.get("type") == _NESTED_ASSEMBLY_ARTIFACT and depth < 8 and isinstance(props.get("directoryName"), str):
            stacks.extend(_read_stacks(assembly_dir / props["directoryName"], depth + 1))  # a cdk.Stage
    return stacks


@dataclass(frozen=True)
class SynthResult:
    """A synthesized cloud assembly: templates and Lambda asset directories by stack.

    Attributes
    ----------
    outdir : pathlib.Path
        The cloud assembly directory (what ``cdk synth`` writes to ``cdk.out``).
    context_files : tuple of pathlib.Path
        The ``cdk.json`` / ``cdk.context.json`` whose context the App was given (empty when none
        was read, or the App was not made by :func:`synthesize`).

    Notes
    -----
    Stacks are named by stack name, construct path (``"Stage/Stack"`` for a stack inside a
    ``cdk.Stage``) or artifact id. Methods taking ``stack_name=None`` use the only stack of the
    assembly (or, for functions, search every stack).
    """

    outdir: Path
    _stacks: tuple[_Stack, ...] = field(repr=False)
    _templates: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False, compare=False)
    context_files: tuple[Path, ...] = ()

    @classmethod
    def from_directory(cls, outdir: str | os.PathLike[str]) -> SynthResult:
        """Read an existing cloud assembly, e.g. ``cdk.out`` written by ``cdk synth``.

        Raises
        ------
        SynthError
            The directory has no ``manifest.json``.
        """
        out = Path(outdir).resolve()
        return cls(out, tuple(_read_stacks(out)))

    @property
    def stack_names(self) -> tuple[str, ...]:
        """Stack names, in manifest order."""
        return tuple(s.stack_name for s in self._stacks)

    def _stack(self, stack_name: str | None) -> _Stack:
        if stack_name is None:
            if len(self._stacks) == 1:
                return self._stacks[0]
            raise SynthError(
                f"The cloud assembly {str(self.outdir)!r} has {len(self._stacks)} stacks "
                f"({', '.join(self.stack_names) or 'none'}); name one."
            )
        for stack in self._stacks:
            if stack_name in stack.names:
                return stack
        raise SynthError(
            f"No stack {stack_name!r} in the cloud assembly {str(self.outdir)!r} "
            f"(stacks: {', '.join(self.stack_names) or 'none'})."
        )

    def template_path(self, stack_name: str | None = None) -> Path:
        """Path of a stack's ``*.template.json``. *stack_name*: see the class notes."""
        stack = self._stack(stack_name)
        return stack.assembly_dir / stack.template_file

    def template(self, stack_name: str | None = None) -> dict[str, Any]:
        """A stack's CloudFormation template (a fresh copy on every call; read once).

        Parameters
        ----------
        stack_name : str, optional
            Stack name, construct path or artifact id. Default None: the only stack.

        Raises
        ------
        SynthError
            No such stack, or several stacks and no name.
        """
        stack = self._stack(stack_name)
        if stack.artifact_id not in self._templates:
            path = stack.assembly_dir / stack.template_file
            self._templates[stack.artifact_id] = json.loads(path.read_text(encoding="utf-8"))
        return copy.deepcopy(self._templates[stack.artifact_id])

    def functions(self, stack_name: str | None = None) -> dict[str, str]:
        """Logical id -> ``Handler`` of every ``AWS::Lambda::Function`` of a stack (default: the
        only stack)."""
        resources = self.template(stack_name)["Resources"]
        return {
            lid: str((r.get("Properties") or {}).get("Handler", ""))
            for lid, r in resources.items()
            if isinstance(r, Mapping) and r.get("Type") == LAMBDA_FUNCTION
        }

    def _find_function(self, function: str, stack_name: str | None) -> tuple[_Stack, str]:
        stacks = [self._stack(stack_name)] if stack_name is not None else list(self._stacks)
        found: list[tuple[_Stack, str]] = []
        for stack in stacks:
            candidates = self.functions(stack.artifact_id)
            try:
                found.append((stack, match_logical_id(candidates, function, LAMBDA_FUNCTION)))
            except LocalDeployError:
                continue
        if len(found) == 1:
            return found[0]
        where = f"stack {stack_name!r}" if stack_name is not None else f"the stacks {', '.join(self.stack_names)}"
        if not found:
            known = sorted(lid for stack in stacks for lid in self.functions(stack.artifact_id))
            raise SynthError(
                f"No {LAMBDA_FUNCTION} with logical id or unique prefix {function!r} in {where} "
                f"(functions: {', '.join(known) or 'none'})."
            )
        raise SynthError(
            f"Function {function!r} matches in several stacks ({', '.join(s.stack_name for s, _ in found)}); "
            "pass stack_name."
        )

    def function_logical_id(self, function: str, stack_name: str | None = None) -> str:
        """Exact logical id of a function from its id or unique prefix (e.g. ``"AuditFunction"``).

        Raises
        ------
        SynthError
            No such function (the message lists the functions), or it matches in several stacks.
        """
        return self._find_function(function, stack_name)[1]

    def asset_dir(self, function: str, stack_name: str | None = None) -> Path:
        """Directory of a function's code asset: what would be zipped and deployed.

        Parameters
        ----------
        function : str
            Logical id or unique prefix of the ``AWS::Lambda::Function``.
        stack_name : str, optional
            Default None: search every stack (the function must match in exactly one).

        Raises
        ------
        SynthError
            No such function, inline code, or the asset is not in the assembly.
        """
        from constructs_lib.testing.local_deploy import asset_dir

        stack, lid = self._find_function(function, stack_name)
        try:
            return asset_dir(stack.assembly_dir, self.template(stack.artifact_id), lid)
        except LocalDeployError as exc:
            raise SynthError(str(exc)) from exc


# --------------------------------------------------------------------------------------------
# Synthesis
# --------------------------------------------------------------------------------------------
def _import_cdk() -> Any:
    if "aws_cdk" in sys.modules:
        return sys.modules["aws_cdk"]
    name, value = _QUIET_JSII
    previous = os.environ.get(name)
    os.environ.setdefault(name, value)
    try:
        import aws_cdk
    finally:
        if previous is None:
            os.environ.pop(name, None)
    return aws_cdk


def _read_json_object(path: Path, key: str | None = None) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SynthError(f"Cannot read the CDK project file {str(path)!r}: {exc}") from exc
    value = data.get(key, {}) if key is not None and isinstance(data, dict) else data
    if not isinstance(value, dict):
        where = f"its {key!r} entry" if key else "it"
        raise SynthError(f"{str(path)!r}: {where} must be a JSON object, got {type(value).__name__}")
    return value


def _find_cdk_json(build: Any) -> Path | None:
    """``cdk.json`` in the working directory (where the CLI reads it), else in the directory of
    the module defining *build* or one of its parents."""
    if (Path.cwd() / CDK_JSON).is_file():
        return Path.cwd() / CDK_JSON
    try:
        source = inspect.getsourcefile(build if inspect.isclass(build) or inspect.isfunction(build) else type(build))
    except TypeError:  # a builtin or an object without a source file
        source = None
    if source is None:
        return None
    for directory in Path(source).resolve().parents:
        if (directory / CDK_JSON).is_file():
            return directory / CDK_JSON
    return None


def read_project_context(
    build: Any, project_context: bool | str | os.PathLike[str] = True
) -> tuple[dict[str, Any], tuple[Path, ...]]:
    """The context the CDK CLI would give an app: ``cdk.context.json`` overridden by the
    ``context`` block of ``cdk.json`` (the CLI's ``-c`` values, here :func:`synthesize`'s
    *context*, override both; ``~/.cdk.json`` is not read).

    Parameters
    ----------
    build : Any
        The app builder, whose module's directory is searched when the working directory has
        no ``cdk.json``.
    project_context : bool or path, optional
        True (default): find ``cdk.json`` in the working directory, else upward from *build*'s
        module. A path: that ``cdk.json``, or the directory holding it. False: read nothing.

    Returns
    -------
    (dict, tuple of Path)
        The context values and the files they came from.

    Raises
    ------
    SynthError
        An explicit path has no ``cdk.json``, or a file is not valid JSON or its context is not
        an object.
    """
    if project_context is False:
        return {}, ()
    if project_context is True:
        cdk_json = _find_cdk_json(build)
        if cdk_json is None:
            return {}, ()
    else:
        cdk_json = Path(project_context)
        cdk_json = cdk_json / CDK_JSON if cdk_json.is_dir() else cdk_json
        if not cdk_json.is_file():
            raise SynthError(f"project_context {str(project_context)!r} names no {CDK_JSON} file")
    cdk_json = cdk_json.resolve()
    files = [cdk_json]
    context: dict[str, Any] = {}
    cached = cdk_json.parent / CDK_CONTEXT_JSON
    if cached.is_file():
        context.update(_read_json_object(cached))
        files.append(cached)
    context.update(_read_json_object(cdk_json, "context"))
    return context, tuple(files)


def _takes_app(build: Callable[..., Any]) -> bool:
    """True when *build* has a required positional parameter (it is given the App)."""
    try:
        params = inspect.signature(build).parameters.values()
    except (TypeError, ValueError):  # no signature (some builtins/extension callables)
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return any(p.kind in positional and p.default is inspect.Parameter.empty for p in params)


def synthesize(
    build: Callable[..., Any] | Any,
    *,
    outdir: str | os.PathLike[str],
    context: Mapping[str, Any] | None = None,
    project_context: bool | str | os.PathLike[str] = True,
) -> SynthResult:
    """Build a CDK app and synthesize it into a cloud assembly, as ``cdk synth`` would.

    Parameters
    ----------
    build : callable, Stack subclass, App or Stack
        What to synthesize:

        * a callable with one required positional parameter, e.g.
          ``lambda app: MyStack(app, "MyStack")``: called with a new ``cdk.App`` whose outdir
          is *outdir* and whose context is the project's (see *project_context*), then
          ``aws:cdk:enable-asset-metadata``, then *context*;
        * a ``cdk.Stack`` subclass: instantiated as ``MyStack(app, "MyStack")`` (its class name)
          in such an App;
        * a callable without required parameters that builds its own App (``lambda:
          build_app(outdir)``) and returns it, or returns a stack of it: that App is
          synthesized where its own ``outdir`` says (*outdir*, *context* and *project_context*
          do not apply);
        * an already built ``cdk.App`` or ``cdk.Stack``: its App is synthesized likewise.
    outdir : str or PathLike
        Directory of the cloud assembly (created if missing) for Apps made here.
    context : Mapping, optional
        Context values of the App made here, overriding the project's (as ``cdk synth -c``).
        Default none.
    project_context : bool or path, optional
        Default True: the ``context`` block of the ``cdk.json`` in the working directory (else
        in the directory of *build*'s module or a parent) and the ``cdk.context.json`` beside
        it, as the CLI reads them (see :func:`read_project_context`). A path names the
        ``cdk.json`` (or its directory); False reads neither. ``result.context_files`` lists
        what was read.

    Returns
    -------
    SynthResult

    Raises
    ------
    SynthError
        *build* is none of the above, or the app has no stack. Errors raised while the
        constructs are built or validated (a bad model, a cdk-nag finding) propagate unchanged.
    """
    context_files: tuple[Path, ...] = ()
    if not callable(build) and not hasattr(build, "node"):
        raise SynthError(
            f"build {build!r} must be a callable (taking the App, or returning one), a cdk.Stack "
            "subclass, or a cdk.App/cdk.Stack"
        )
    cdk = _import_cdk()
    from constructs import Construct

    if isinstance(build, cdk.App | cdk.Stack):
        target = build.node.root
    elif isinstance(build, type) and issubclass(build, cdk.Stack) or _takes_app(build):
        out = Path(outdir)
        out.mkdir(parents=True, exist_ok=True)
        project, context_files = read_project_context(build, project_context)
        app = cdk.App(outdir=str(out), context={**project, ASSET_METADATA_CONTEXT: True, **dict(context or {})})
        returned = build(app, build.__name__) if isinstance(build, type) and issubclass(build, cdk.Stack) else build(app)
        target = returned.node.root if isinstance(returned, Construct) else app
    else:
        returned = build()
        if not isinstance(returned, Construct):
            raise SynthError(
                f"build {build!r} takes no App, so it must return the cdk.App it builds (or a stack of "
                f"it); it returned {returned!r}"
            )
        target = returned.node.root
    if not isinstance(target, cdk.Stage):
        raise SynthError(f"build {build!r} made a construct tree whose root {target!r} is not a cdk.App")
    assembly = target.synth()
    result = replace(SynthResult.from_directory(assembly.directory), context_files=context_files)
    if not result.stack_names:
        raise SynthError(
            f"build {build!r} created no stack in its App (cloud assembly {str(result.outdir)!r}); "
            "add a cdk.Stack to the App it is given, or return the App it builds"
        )
    return result


# --------------------------------------------------------------------------------------------
# A synthesized stream consumer, run locally
# --------------------------------------------------------------------------------------------
@dataclass
class StreamConsumer:
    """A bundled stream-consuming handler in a warm local process, and the runner feeding it.

    Attributes
    ----------
    function_logical_id : str
        The function's logical id in the deployed template.
    function : LocalFunction
        The warm handler process (``function.last_invocation``, ``function.starts``...).
    runner : StreamRunner
        Reads the table's stream with the synthesized mapping's settings
        (``runner.dead_letters``, ``runner.checkpoints``...).
    """

    function_logical_id: str
    function: LocalFunction
    runner: StreamRunner

    def run(self, *, max_batches: int | None = None) -> RunReport:
        """Deliver every stream record written so far (see ``StreamRunner.run``)."""
        return self.runner.run(max_batches=max_batches)

    @property
    def dead_letters(self) -> list[dict[str, Any]]:
        """On-failure records of every run so far."""
        return self.runner.dead_letters

    def close(self) -> None:
        """Stop the handler process (idempotent)."""
        self.function.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def start_stream_consumer(
    cdk_out: SynthResult | str | os.PathLike[str],
    deployment: LocalDeployment,
    function: str,
    *,
    streams_client: Any,
    endpoint: str | None,
    mapping_logical_id: str | None = None,
    overrides: Mapping[str, str | None] | None = None,
    faults: Sequence[Fault] = (),
    timeout: float = 60.0,
) -> StreamConsumer:
    """Start a deployed template's stream consumer from its bundled asset.

    Parameters
    ----------
    cdk_out : SynthResult or path
        The cloud assembly the deployed template comes from (its asset directories).
    deployment : LocalDeployment
        The local deployment of the template holding the function, its event source mapping
        and the source table.
    function : str
        Logical id or unique prefix of the consuming ``AWS::Lambda::Function`` (e.g.
        ``"AuditFunction"`` for ``StreamAudit(self, "Audit", ...)``).
    streams_client : botocore client
        ``dynamodbstreams`` client of the DynamoDB Local server holding the tables.
    endpoint : str or None
        DynamoDB endpoint of the handler's boto3 clients (the server's endpoint).
    mapping_logical_id : str, optional
        The event source mapping (id or unique prefix). Default None: the function's only one.
    overrides : Mapping, optional
        Environment values instead of the template's (None removes a variable), for what
        DynamoDB Local cannot provide, e.g. ``{ENV_AUDIT_SALT_SECRET: None, ENV_AUDIT_SALT: "test-salt"}``
        for a ``StreamAudit`` that redacts by hash. Default none.
    faults : sequence of Fault, optional
        AWS errors to inject into the handler's calls. Default none.
    timeout : float, optional
        Seconds one invocation may take. Default 60.

    Returns
    -------
    StreamConsumer
        Close it (or use it as a context manager) to stop the handler process.

    Raises
    ------
    SynthError
        No such function in the deployed template, or its asset is not in *cdk_out*.
    LocalDeployError, StreamRunnerError, HandlerError
        The environment cannot be resolved locally, the mapping cannot be used, or the handler
        cannot be imported from its asset.
    """
    from constructs_lib.testing.handlers import LocalFunction
    from constructs_lib.testing.local_deploy import asset_dir
    from constructs_lib.testing.streams import StreamRunner

    out = cdk_out.outdir if isinstance(cdk_out, SynthResult) else Path(cdk_out)
    template = deployment.template
    resources = template["Resources"]
    functions = [lid for lid, r in resources.items() if isinstance(r, Mapping) and r.get("Type") == LAMBDA_FUNCTION]
    try:
        lid = match_logical_id(functions, function, LAMBDA_FUNCTION)
        asset = asset_dir(out, template, lid)
    except LocalDeployError as exc:
        raise SynthError(f"Stream consumer {function!r}: {exc}") from exc
    handler = str((resources[lid].get("Properties") or {}).get("Handler", ""))
    environment = deployment.function_environment(lid, overrides=overrides)
    local = LocalFunction(asset, handler, environment=environment, endpoint=endpoint, timeout=timeout, faults=faults)
    try:
        runner = StreamRunner.from_deployment(
            deployment, None, mapping_logical_id, handler=local, streams_client=streams_client, function_logical_id=lid
        )
    except BaseException:
        local.close()
        raise
    return StreamConsumer(lid, local, runner)
