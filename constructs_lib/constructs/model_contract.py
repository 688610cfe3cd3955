"""A table's model as a published contract: SSM parameters a producer writes, consumers import.

Producer: ``SingleTable(..., publish=ModelContract(parameter_prefix="/shop/data"))`` writes
``String`` parameters under the prefix (names in :data:`PARAMETERS`): table name and ARN, stream
ARN, customer-managed key ARN, the model's fingerprint, the model JSON (up to 8 KB, unless
``include_model=False``) and ``contract``: the per-entity and per-index fingerprints (with the
model). Consumer: ``SingleTable.from_parameters(...)`` reads name and ARN at deploy time; its
functions read ``<prefix>/contract`` at cold start and check the entities and indexes they use.

See docs/adr/0020-model-fingerprint-and-published-contract.md, docs/adr/0042-compatibility-by-slice.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from ..model import Model
from ..model.slices import published_json
from ..runtime.contract import fingerprint
from .bound_table import ModelBoundTable
from .exceptions import ConstructPropsError, ContractParameterSizeError
from .imported_table import ImportedSingleTable, check_fingerprint
from .operations import OperationsSettings

if TYPE_CHECKING:
    from ..model import AccessScope
    from ..model.contract_file import Contract

#: Parameter names under the prefix, by what they hold.
TABLE_NAME = "table-name"
TABLE_ARN = "table-arn"
STREAM_ARN = "stream-arn"
ENCRYPTION_KEY_ARN = "encryption-key-arn"
MODEL_FINGERPRINT = "model-fingerprint"
MODEL_JSON = "model"
CONTRACT = "contract"
PARAMETERS = (TABLE_NAME, TABLE_ARN, STREAM_ARN, ENCRYPTION_KEY_ARN, MODEL_FINGERPRINT, MODEL_JSON, CONTRACT)
#: Value size limits of SSM String parameters (bytes): standard and advanced tier.
STANDARD_LIMIT = 4096
ADVANCED_LIMIT = 8192
_PREFIX = re.compile(r"(/[A-Za-z0-9_.-]+)+")
_LOOKUP_DUMMY = "dummy-value-for-"


def check_prefix(what: str, prefix: object) -> str:
    """``prefix`` if it is a usable parameter path (``/a/b``), else a ``ConstructPropsError``."""
    if not isinstance(prefix, str) or cdk.Token.is_unresolved(prefix) or not _PREFIX.fullmatch(prefix):
        raise ConstructPropsError(
            f"{what}: parameter_prefix {prefix!r} must be a literal path like '/myapp/data' "
            "(segments of A-Z a-z 0-9 _ . -, a leading '/', no trailing '/')"
        )
    if re.match(r"/(aws|ssm)", prefix, re.IGNORECASE):
        raise ConstructPropsError(f"{what}: parameter_prefix {prefix!r} must not start with /aws or /ssm (reserved)")
    if len(prefix) > 1000:
        raise ConstructPropsError(f"{what}: parameter_prefix is {len(prefix)} characters; at most 1000")
    return prefix


@dataclass(frozen=True)
class ModelContract:
    """What a table publishes for consumers in other stacks or repositories.

    Parameters
    ----------
    parameter_prefix
        SSM path the parameters go under, e.g. ``"/myapp/data"``: ``/myapp/data/table-name`` etc.
        Literal, no trailing ``/``, not under ``/aws`` or ``/ssm``. Required.
    include_model
        Also publish the model JSON (``<prefix>/model``, and inside ``<prefix>/contract``, where
        it lets a consumer's refusal say what changed old → new): standard tier up to 4 KB,
        advanced tier up to 8 KB (advanced parameters are billed); a larger value is refused
        (:class:`ContractParameterSizeError`) — pass False to publish fingerprints alone.
        Default True.
    """

    parameter_prefix: str
    include_model: bool = True

    def __post_init__(self) -> None:
        check_prefix("ModelContract", self.parameter_prefix)
        if not isinstance(self.include_model, bool):
            raise ConstructPropsError(f"ModelContract: include_model {self.include_model!r} must be True or False")


class PublishedContract(Construct):
    """The SSM parameters of one table's contract (built by ``SingleTable.publish_contract``).

    Attributes
    ----------
    contract
        The :class:`ModelContract` it was built with.
    fingerprint
        The model's key-schema fingerprint, as published.
    parameters
        Read-only mapping parameter name (:data:`PARAMETERS`) → ``aws_ssm.StringParameter``.
    """

    def __init__(self, scope: Construct, id: str, *, table: ModelBoundTable, contract: ModelContract) -> None:
        super().__init__(scope, id)
        if not isinstance(contract, ModelContract):
            raise ConstructPropsError(f"{table.what}: publish {contract!r} must be a constructs_lib.ModelContract")
        self.contract = contract
        self.fingerprint = fingerprint(table.model)
        values = {TABLE_NAME: table.table_name, TABLE_ARN: table.table_arn, MODEL_FINGERPRINT: self.fingerprint}
        if table.table_stream_arn is not None:
            values[STREAM_ARN] = table.table_stream_arn
        if table.encryption_key is not None:
            values[ENCRYPTION_KEY_ARN] = table.encryption_key.key_arn
        tiers = dict.fromkeys(values, ssm.ParameterTier.STANDARD)
        if contract.include_model:
            text = table.model.to_json(compact=True)  # no spaces: the 4 KB standard tier holds more
            size = len(text.encode("utf-8"))
            if size > ADVANCED_LIMIT:
                raise ConstructPropsError(
                    f"{table.what}: model {table.model.name!r} is {size} bytes as JSON, more than an SSM parameter "
                    f"holds ({ADVANCED_LIMIT} bytes, advanced tier); pass ModelContract(include_model=False) to "
                    "publish its fingerprint only, and share the model itself as code"
                )
            values[MODEL_JSON] = text
            tiers[MODEL_JSON] = ssm.ParameterTier.STANDARD if size <= STANDARD_LIMIT else ssm.ParameterTier.ADVANCED
        values[CONTRACT] = published_json(table.model, include_model=contract.include_model)
        size = len(values[CONTRACT].encode("utf-8"))
        if size > ADVANCED_LIMIT:
            name = f"{contract.parameter_prefix}/{CONTRACT}"
            hint = ("pass ModelContract(include_model=False) to publish the fingerprints without the model"
                    if contract.include_model else "split the model: it has more entities and indexes than "
                    "one parameter's fingerprints can hold")
            raise ContractParameterSizeError(
                f"{table.what}: SSM parameter {name!r} (the published contract of model {table.model.name!r}) "
                f"would be {size} bytes, more than an SSM parameter holds ({ADVANCED_LIMIT} bytes, advanced tier; "
                f"{STANDARD_LIMIT} standard); {hint}"
            )
        tiers[CONTRACT] = ssm.ParameterTier.STANDARD if size <= STANDARD_LIMIT else ssm.ParameterTier.ADVANCED
        described = {
            TABLE_NAME: "name", TABLE_ARN: "ARN", STREAM_ARN: "stream ARN", ENCRYPTION_KEY_ARN: "KMS key ARN",
            MODEL_FINGERPRINT: "data model key-schema fingerprint", MODEL_JSON: "data model (JSON)",
            CONTRACT: "published contract: per-entity and per-index fingerprints",
        }
        parameters = {}
        path = table.node.path
        for name, value in values.items():
            parameters[name] = ssm.StringParameter(
                self, "".join(part.title() for part in name.split("-")),
                parameter_name=f"{contract.parameter_prefix}/{name}", string_value=value, tier=tiers[name],
                description=f"DynamoDB table {path} ({table.model.name}): {described[name]}",
            )
        self.parameters: Mapping[str, ssm.StringParameter] = MappingProxyType(parameters)


def import_from_parameters(
    scope: Construct,
    id: str,
    *,
    model: Model | None,
    parameter_prefix: str,
    contract: str | os.PathLike[str] | None = None,
    stream_view_type: dynamodb.StreamViewType | None = None,
    encryption_key: kms.IKey | None = None,
    expected_fingerprint: str | None = None,
    lookup_fingerprint: bool = False,
    operations: OperationsSettings | None = None,
) -> ImportedSingleTable:
    """The implementation of ``SingleTable.from_parameters`` (documented there)."""
    what = f"ImportedSingleTable {id!r}"
    pinned = _read_pin(what, contract) if contract is not None else None
    if model is None:
        if pinned is None:
            raise ConstructPropsError(f"{what}: give model=... or contract='<model>.contract.json' (the producer's "
                                      "contract file, whose model is used)")
        model = pinned.model
    if not isinstance(model, Model):
        raise ConstructPropsError(f"{what}: model must be a constructs_lib.model.Model, got {model!r}")
    prefix = check_prefix(what, parameter_prefix)
    if expected_fingerprint is not None:
        check_fingerprint(what, model, expected_fingerprint, "expected_fingerprint")
    if lookup_fingerprint:
        stack = cdk.Stack.of(scope)
        if cdk.Token.is_unresolved(stack.account) or cdk.Token.is_unresolved(stack.region):
            raise ConstructPropsError(
                f"{what}: lookup_fingerprint=True reads {prefix}/{MODEL_FINGERPRINT} at synth, which needs a stack "
                "with a concrete account and region (env=cdk.Environment(account=..., region=...))"
            )
        found = ssm.StringParameter.value_from_lookup(scope, f"{prefix}/{MODEL_FINGERPRINT}")
        if not found.startswith(_LOOKUP_DUMMY):  # the CLI looks it up and synthesizes again
            check_fingerprint(what, model, found, f"{prefix}/{MODEL_FINGERPRINT}, looked up")

    def read(name: str) -> str:
        return ssm.StringParameter.value_for_string_parameter(scope, f"{prefix}/{name}")

    table = ImportedSingleTable(
        scope, id, model=model, table_name=read(TABLE_NAME), table_arn=read(TABLE_ARN),
        table_stream_arn=read(STREAM_ARN) if stream_view_type is not None else None,
        stream_view_type=stream_view_type, encryption_key=encryption_key, operations=operations,
    )
    table.parameter_prefix = prefix
    table.expected_fingerprint = expected_fingerprint
    table.contract_parameter = f"{prefix}/{CONTRACT}"
    table.pinned_contract = pinned
    if pinned is not None:
        from .replicas import replication_from_contract

        table.replication = replication_from_contract(pinned.table.get("replication"))
    return table


def _read_pin(what: str, path: str | os.PathLike[str]) -> Contract:
    """The consumer's committed copy of the producer's contract file, read and checked offline; a
    relative path is read from the project directory of the calling file (``model/project_paths.py``),
    and named relative to it."""
    from dataclasses import replace

    from ..model.contract_file import read_contract
    from ..model.exceptions import ContractError
    from ..model.project_paths import resolve_project_path, shown

    if not isinstance(path, (str, os.PathLike)) or (isinstance(path, str) and path.lstrip().startswith("{")):
        raise ConstructPropsError(f"{what}: contract {path!r:.80} must be the path of a contract file")
    full, show = resolve_project_path(path)
    try:
        contract = read_contract(shown(full), Model)
    except ContractError as exc:
        raise ConstructPropsError(f"{what}: {str(exc).replace(repr(shown(full)), repr(show), 1)}") from exc
    return replace(contract, source=f"contract file {show!r}")


def check_pinned_slice(what: str, table: ModelBoundTable, scope: AccessScope | None) -> None:
    """At synth: the slice a function with ``scope`` uses of ``table.model`` must hold against the
    contract file the consumer pinned (no network). A ``ConstructPropsError`` names each break."""
    pinned = getattr(table, "pinned_contract", None)
    if pinned is None:
        return
    from ..model.slices import check_slice, slice_of

    breaks = check_slice(slice_of(table.model, scope), pinned, model=table.model)
    if breaks:
        raise ConstructPropsError(
            f"{what}: what it uses of model {table.model.name!r} does not hold against the pinned contract "
            f"{pinned.source}: " + "; ".join(b.describe() for b in breaks) + ". Build it from the pinned "
            "contract's model (SingleTable.from_parameters(contract=..., model=None)) or refresh the pin with "
            "`python -m constructs_lib contract verify`"
        )


__all__ = [
    "ADVANCED_LIMIT", "CONTRACT", "ENCRYPTION_KEY_ARN", "check_pinned_slice", "MODEL_FINGERPRINT", "MODEL_JSON",
    "PARAMETERS", "STANDARD_LIMIT",
    "STREAM_ARN", "TABLE_ARN", "TABLE_NAME", "ModelContract", "PublishedContract", "import_from_parameters",
]
