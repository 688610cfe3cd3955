"""Deploy several stacks of one cloud assembly to DynamoDB Local, references between them resolved.

:func:`deploy_assembly` reads ``manifest.json`` (a ``cdk.out`` or a ``SynthResult``), deploys the
chosen stacks in dependency order and returns one :class:`AssemblyDeployment`. The stacks share
one ``CrossStackValues``, so ``Fn::ImportValue``, ``Fn::GetStackOutput`` and reads of SSM
parameters a producer stack created resolve to local values. Stacks of another assembly see them
when deployed with ``shared=``, as stacks of one account and region would::

    consumer = deploy_assembly(consumer_cdk_out, client=client, shared=producer.shared)

Import-light: standard library only at module level.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from constructs_lib.testing._cfn_tables import LAMBDA_FUNCTION, match_logical_id
from constructs_lib.testing._resolver import CrossStackValues
from constructs_lib.testing.exceptions import LocalDeployError

if TYPE_CHECKING:
    from types import TracebackType

    from constructs_lib.testing.local_deploy import LocalDeployment
    from constructs_lib.testing.synth import SynthResult, _Stack

__all__ = ["AssemblyDeployment", "deploy_assembly"]


@dataclass
class AssemblyDeployment:
    """The stacks of one cloud assembly deployed together to DynamoDB Local.

    Attributes
    ----------
    cdk_out : Path
        The cloud assembly directory.
    stacks : dict[str, LocalDeployment]
        Stack name -> its deployment, in deployment (dependency) order.
    shared : CrossStackValues
        The outputs, exports and SSM parameters the stacks share — with the stacks of earlier
        deployments when ``deploy_assembly(shared=...)`` was given theirs. Pass it to a later
        ``deploy_assembly`` to let its stacks read these stacks' SSM parameters and exports.
    """

    cdk_out: Path
    stacks: dict[str, LocalDeployment] = field(default_factory=dict)
    shared: CrossStackValues = field(default_factory=CrossStackValues, repr=False)

    def stack(self, name: str) -> LocalDeployment:
        """The deployment of one stack (by stack name).

        Raises
        ------
        LocalDeployError
            No such stack was deployed (the message lists those that were).
        """
        if name not in self.stacks:
            raise LocalDeployError(f"Stack {name!r} is not part of this deployment (stacks: {', '.join(self.stacks)}).")
        return self.stacks[name]

    def _find(self, what: str, logical_id_or_prefix: str, stack: str | None, lookup: str) -> LocalDeployment:
        if stack is not None:
            return self.stack(stack)
        found = []
        for deployment in self.stacks.values():
            try:
                getattr(deployment, lookup)(logical_id_or_prefix)
            except LocalDeployError:
                continue
            found.append(deployment)
        if len(found) == 1:
            return found[0]
        if not found:
            raise LocalDeployError(f"No {what} {logical_id_or_prefix!r} in the stacks {', '.join(self.stacks)}.")
        raise LocalDeployError(
            f"{what.capitalize()} {logical_id_or_prefix!r} matches in several stacks "
            f"({', '.join(str(d.stack_name) for d in found)}); pass stack=."
        )

    def table_name(self, logical_id_or_prefix: str, *, stack: str | None = None) -> str:
        """Physical name of a deployed table, searched in every stack unless *stack* is given.

        Raises
        ------
        LocalDeployError
            No stack or several stacks have such a table.
        """
        return self._find("table", logical_id_or_prefix, stack, "logical_id").table_name(logical_id_or_prefix)

    def function_environment(
        self,
        function_logical_id_or_prefix: str,
        *,
        stack: str | None = None,
        overrides: Mapping[str, str | None] | None = None,
    ) -> dict[str, str]:
        """A function's resolved environment (see ``LocalDeployment.function_environment``),
        the function searched in every stack unless *stack* is given; cross-stack references in it
        resolve to the other stacks' local values.

        Raises
        ------
        LocalDeployError
            No stack or several stacks have such a function, or a value cannot be resolved.
        """
        if stack is None:
            found = []
            for deployment in self.stacks.values():
                functions = [lid for lid, r in deployment.template["Resources"].items()
                             if isinstance(r, Mapping) and r.get("Type") == LAMBDA_FUNCTION]
                try:
                    match_logical_id(functions, function_logical_id_or_prefix, LAMBDA_FUNCTION)
                except LocalDeployError:
                    continue
                found.append(deployment)
            if len(found) != 1:
                where = ", ".join(str(d.stack_name) for d in found) or f"none of {', '.join(self.stacks)}"
                raise LocalDeployError(
                    f"Function {function_logical_id_or_prefix!r} must match in exactly one stack (matches in: {where}); "
                    "pass stack=."
                )
            target = found[0]
        else:
            target = self.stack(stack)
        return target.function_environment(function_logical_id_or_prefix, overrides=overrides)

    def export_value(self, name: str) -> Any:
        """The local value of an export (``Fn::ImportValue`` of *name*).

        Raises
        ------
        UnresolvableIntrinsicError
            No deployed stack exports *name*, or its value cannot be resolved.
        """
        first = next(iter(self.stacks.values()))
        return first.resolve({"Fn::ImportValue": name})

    def parameter_value(self, name: str) -> str:
        """The value of an SSM parameter (type ``String``) a deployed stack created.

        Raises
        ------
        UnresolvableIntrinsicError
            No deployed stack created *name*, or its value cannot be resolved.
        """
        first = next(iter(self.stacks.values()))
        return str(first.resolve("{{resolve:ssm:" + name + "}}"))

    def delete(self) -> None:
        """Delete every table of every stack, in reverse deployment order (idempotent).

        Raises
        ------
        LocalDeployError
            Some tables could not be deleted (every stack is attempted first).
        """
        failures: list[LocalDeployError] = []
        for deployment in reversed(list(self.stacks.values())):
            try:
                deployment.delete()
            except LocalDeployError as exc:
                failures.append(exc)
        if failures:
            raise LocalDeployError("; ".join(str(f) for f in failures)) from failures[0]

    def __enter__(self) -> AssemblyDeployment:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.delete()


def _dependency_order(stacks: Sequence[_Stack], chosen: Sequence[_Stack]) -> list[_Stack]:
    """*chosen* in an order where every stack comes after the chosen stacks it depends on
    (manifest order otherwise). Raises LocalDeployError on a dependency cycle."""
    by_id = {s.artifact_id: s for s in stacks}
    wanted = {s.artifact_id for s in chosen}
    ordered: list[_Stack] = []
    state: dict[str, str] = {}

    def visit(stack: _Stack, path: tuple[str, ...]) -> None:
        if state.get(stack.artifact_id) == "done":
            return
        if state.get(stack.artifact_id) == "visiting":
            raise LocalDeployError(f"Stack dependency cycle in the cloud assembly: {' -> '.join((*path, stack.stack_name))}")
        state[stack.artifact_id] = "visiting"
        for dep in stack.dependencies:
            if dep in wanted and dep in by_id:
                visit(by_id[dep], (*path, stack.stack_name))
        state[stack.artifact_id] = "done"
        ordered.append(stack)

    for stack in chosen:
        visit(stack, ())
    return ordered


def deploy_assembly(
    cdk_out: SynthResult | str | os.PathLike[str],
    *,
    client: Any,
    stacks: Sequence[str] | None = None,
    name_prefix: str = "",
    wait: bool = True,
    timeout: float = 60.0,
    shared: CrossStackValues | None = None,
) -> AssemblyDeployment:
    """Deploy stacks of a cloud assembly to DynamoDB Local in dependency order.

    Parameters
    ----------
    cdk_out : SynthResult or path
        The cloud assembly (``cdk.out`` written by ``cdk synth``, or a ``cdk_synth`` result).
    client : botocore client
        A ``dynamodb`` client pointed at DynamoDB Local.
    stacks : sequence of str, optional
        Stack names (or construct paths / artifact ids) to deploy. Default None: every stack.
        Their order does not matter: the manifest's dependencies decide it. A stack whose
        producer is not deployed fails when its references are resolved, naming them.
    name_prefix, wait, timeout
        As in :func:`~constructs_lib.testing.local_deploy.deploy_template`. Defaults ``""``,
        ``True``, ``60.0``.
    shared : CrossStackValues, optional
        What earlier deployments created that these stacks may read — the ``shared`` of an
        earlier :class:`AssemblyDeployment` (or ``LocalDeployment``), e.g. the producer app's
        when deploying a consumer app of another repository: its SSM parameters
        (``AWS::SSM::Parameter::Value<String>`` template parameters, ``{{resolve:ssm:...}}``)
        and exports (``Fn::ImportValue``) resolve in these stacks. These stacks' own are added
        to it (and removed again when they are deleted). Default None: a new, empty one.

    Returns
    -------
    AssemblyDeployment

    Raises
    ------
    SynthError
        *cdk_out* is not a cloud assembly, or a named stack is not in it.
    LocalDeployError
        A stack cannot be deployed, or two stacks export the same name, create the same SSM
        parameter or have the same name; stacks deployed before the failure are deleted again.
    """
    from constructs_lib.testing.local_deploy import deploy_template
    from constructs_lib.testing.synth import SynthResult

    result = cdk_out if isinstance(cdk_out, SynthResult) else SynthResult.from_directory(cdk_out)
    every = list(result._stacks)
    chosen = every if stacks is None else [result._stack(name) for name in dict.fromkeys(stacks)]
    if not chosen:
        raise LocalDeployError(f"The cloud assembly {str(result.outdir)!r} has no stack to deploy.")
    deployment = AssemblyDeployment(result.outdir, shared=shared if shared is not None else CrossStackValues())
    try:
        for stack in _dependency_order(every, chosen):
            deployment.stacks[stack.stack_name] = deploy_template(
                result.template(stack.artifact_id), client=client, name_prefix=name_prefix, wait=wait,
                timeout=timeout, stack_name=stack.stack_name, shared=deployment.shared,
            )
    except BaseException as exc:
        try:
            deployment.delete()
        except LocalDeployError as cleanup:
            exc.add_note(f"Also failed to delete the tables created so far: {cleanup}")
        raise
    return deployment
