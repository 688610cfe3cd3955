"""The producer of a consumer's tests, from its contract file alone: the table in DynamoDB Local
and the SSM parameters its ``ModelContract`` publishes, served on a local SSM endpoint.

A consumer's function gets its table name from the producer's SSM parameters at deploy time, its
scope from its environment, and reads the published contract at cold start. :class:`LocalProducer`
gives a consumer's tests all three without the producer's assembly:
:meth:`~LocalProducer.function_environment` resolves a function of the consumer's assembly
against it, :meth:`~LocalProducer.publish` publishes another contract file, as the producer's next
deploy would. The ``local_producer`` fixture makes one. Import-light: no boto3, aws_cdk or jsii at
module level. See docs/testing-your-stacks.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from constructs_lib.model import Model
from constructs_lib.model.contract_file import Contract, read_contract
from constructs_lib.model.project_paths import resolve_project_path, shown
from constructs_lib.testing.contract_deploy import CONTRACT, MODEL_FINGERPRINT, MODEL_JSON, published_parameters
from constructs_lib.testing.exceptions import LocalDeployError

if TYPE_CHECKING:
    from constructs_lib.testing.assembly import AssemblyDeployment
    from constructs_lib.testing.contract_deploy import ContractDeployment
    from constructs_lib.testing.local_ssm import LocalSsm
    from constructs_lib.testing.synth import SynthResult

__all__ = ["LocalProducer"]


class LocalProducer:
    """A producer's table made from its contract file, its SSM parameters served locally.

    Parameters
    ----------
    table
        The table (``deploy_contract(..., parameter_prefix=...)``), with its SSM parameters.
    ssm
        The local SSM endpoint serving them (published on construction).
    deploy_assembly
        ``local_deploy.assembly``: deploys a consumer's cloud assembly (deleted at teardown).

    Attributes
    ----------
    table : ContractDeployment
        ``.name``, ``.model`` (the producer's), ``.contract``, ``.stream``.
    ssm : LocalSsm
        ``.parameters`` (what is published), ``.requests`` (what the functions read).
    parameter_prefix : str
        Where the parameters are: ``<prefix>/table-name``, ..., ``<prefix>/contract``.
    """

    def __init__(self, table: ContractDeployment, ssm: LocalSsm,
                 deploy_assembly: Callable[..., AssemblyDeployment]) -> None:
        prefixes = {name.rpartition("/")[0] for name in table.parameters.values()}
        if len(prefixes) != 1:
            raise LocalDeployError("LocalProducer needs a table deployed with deploy_contract(..., parameter_prefix=...)")
        self.table = table
        self.ssm = ssm
        self.parameter_prefix: str = prefixes.pop()
        self._deploy_assembly = deploy_assembly
        self._consumers: dict[tuple[str, str | None], AssemblyDeployment] = {}
        ssm.publish(table)

    @property
    def name(self) -> str:
        """The table's physical name."""
        return self.table.name

    @property
    def model(self) -> Model:
        """The model of the contract the table was made from."""
        return self.table.model

    def publish(self, contract: str | os.PathLike[str] | Mapping[str, Any] | Contract | None = None) -> Contract:
        """Publish a contract's model, fingerprint and per-entity and per-index fingerprints under
        the prefix, as the producer's next deploy would (the table stays: a changed key template
        changes no key attribute). Default: the contract the table was made from, again.

        Functions started afterwards read it at their cold start; a warm one keeps what it read
        (start a new ``local_function``). A relative path is read from the calling file's project
        directory. Returns the checked contract.
        """
        if contract is None:
            assert self.table.contract is not None
            checked = self.table.contract
        elif isinstance(contract, Contract):
            checked = contract
        else:
            if isinstance(contract, (str, os.PathLike)) and not str(contract).lstrip().startswith("{"):
                contract = shown(resolve_project_path(contract)[0])
            checked = read_contract(contract, Model)
        values = published_parameters(checked)
        for name in (MODEL_FINGERPRINT, MODEL_JSON, CONTRACT):
            self.ssm.parameters[f"{self.parameter_prefix}/{name}"] = str(values[name])
        return checked

    def function_environment(
        self, cdk_out: SynthResult | str | os.PathLike[str], function: str, *, stack: str | None = None,
        overrides: Mapping[str, str | None] | None = None,
    ) -> dict[str, str]:
        """The environment a function of the consumer's cloud assembly gets once deployed against
        this producer, plus the variables pointing its SSM client at :attr:`ssm`.

        ``TABLE_NAME`` is this table's, ``CONSTRUCTS_LIB_ACCESS_SCOPE`` the function's declared
        scope and ``CONSTRUCTS_LIB_CONTRACT_PARAMETER`` the contract it checks its slice against at
        cold start. The consumer's assembly is deployed once (its own tables, if any, too; with
        *stack*, that stack alone) and deleted at teardown. *function* (logical id or its unique
        prefix) and *overrides*: as in ``AssemblyDeployment.function_environment``.
        """
        directory = Path(cdk_out if isinstance(cdk_out, (str, os.PathLike)) else cdk_out.outdir).resolve()
        key = (str(directory), stack)
        if key not in self._consumers:
            self._consumers[key] = self._deploy_assembly(cdk_out, stacks=None if stack is None else [stack],
                                                         shared=self.table.shared)
        env = self._consumers[key].function_environment(function, stack=stack, overrides=overrides)
        return {**env, **self.ssm.environment}
