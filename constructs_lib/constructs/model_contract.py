"""A table's model as a published contract: SSM parameters a producer writes, consumers import.

Producer: ``SingleTable(..., publish=ModelContract(parameter_prefix="/shop/data"))`` writes
``String`` parameters under the prefix (names in :data:`PARAMETERS`): table name and ARN, stream
ARN, customer-managed key ARN, the model's key-schema fingerprint and the model JSON (up to 8 KB,
unless ``include_model=False``). Consumer: ``SingleTable.from_parameters(...)`` reads them at
deploy time; every function built on it gets the deployed fingerprint, and the bundled runtime
refuses a model of another key schema (``expected_fingerprint=`` checks at synth instead).

See docs/adr/0020-model-fingerprint-and-published-contract.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from ..model import Model
from ..runtime.contract import fingerprint
from .bound_table import ModelBoundTable
from .exceptions import ConstructPropsError
from .imported_table import ImportedSingleTable, check_fingerprint
from .operations import Operations

#: Parameter names under the prefix, by what they hold.
TABLE_NAME = "table-name"
TABLE_ARN = "table-arn"
STREAM_ARN = "stream-arn"
ENCRYPTION_KEY_ARN = "encryption-key-arn"
MODEL_FINGERPRINT = "model-fingerprint"
MODEL_JSON = "model"
PARAMETERS = (TABLE_NAME, TABLE_ARN, STREAM_ARN, ENCRYPTION_KEY_ARN, MODEL_FINGERPRINT, MODEL_JSON)
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
        Also publish the model JSON (``<prefix>/model``): standard tier up to 4 KB, advanced tier
        up to 8 KB (advanced parameters are billed); a larger model is refused — pass False to
        publish the fingerprint alone. Default True.
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
        described = {
            TABLE_NAME: "name", TABLE_ARN: "ARN", STREAM_ARN: "stream ARN", ENCRYPTION_KEY_ARN: "KMS key ARN",
            MODEL_FINGERPRINT: "data model key-schema fingerprint", MODEL_JSON: "data model (JSON)",
        }
        parameters = {}
        for name, value in values.items():
            parameters[name] = ssm.StringParameter(
                self, "".join(part.title() for part in name.split("-")),
                parameter_name=f"{contract.parameter_prefix}/{name}", string_value=value, tier=tiers[name],
                description=f"DynamoDB table {table.node.path} ({table.model.name}): {described[name]}",
            )
        self.parameters: Mapping[str, ssm.StringParameter] = MappingProxyType(parameters)


def import_from_parameters(
    scope: Construct,
    id: str,
    *,
    model: Model,
    parameter_prefix: str,
    stream_view_type: dynamodb.StreamViewType | None = None,
    encryption_key: kms.IKey | None = None,
    expected_fingerprint: str | None = None,
    lookup_fingerprint: bool = False,
    operations: Operations | None = None,
) -> ImportedSingleTable:
    """The implementation of ``SingleTable.from_parameters`` (documented there)."""
    what = f"ImportedSingleTable {id!r}"
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
        stream_view_type=stream_view_type, encryption_key=encryption_key,
        model_fingerprint=read(MODEL_FINGERPRINT), operations=operations,
    )
    table.parameter_prefix = prefix
    table.expected_fingerprint = expected_fingerprint
    return table


__all__ = [
    "ADVANCED_LIMIT", "ENCRYPTION_KEY_ARN", "MODEL_FINGERPRINT", "MODEL_JSON", "PARAMETERS", "STANDARD_LIMIT",
    "STREAM_ARN", "TABLE_ARN", "TABLE_NAME", "ModelContract", "PublishedContract", "import_from_parameters",
]
