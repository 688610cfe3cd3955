"""Create a producer's table in DynamoDB Local from its contract file alone.

A consumer repository commits the producer's ``<model>.contract.json``; :func:`deploy_contract`
turns the contract's ``table`` object (key schema, indexes with their projections, TTL
attribute, stream view type) into the CloudFormation table resource ``SingleTable`` would have
synthesized and creates it through the same path as :func:`~.local_deploy.deploy_template`: a
:class:`~.local_deploy.LocalDeployment` every helper accepts. With ``parameter_prefix`` it also
holds the SSM parameters ``ModelContract`` publishes (:func:`published_parameters`), which a
consumer assembly deployed with its ``shared`` resolves (``local_producer.py``).

Import-light: no boto3, aws_cdk or jsii at module level.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from constructs_lib.model import Model
from constructs_lib.model.contract_file import Contract, read_contract
from constructs_lib.model.project_paths import resolve_project_path, shown
from constructs_lib.testing._resolver import CrossStackValues
from constructs_lib.testing.exceptions import LocalDeployError
from constructs_lib.testing.local_deploy import LocalDeployment, deploy_into

#: Logical id of the table resource built from a contract (``deployment.table_name("Table")``).
TABLE_LOGICAL_ID = "Table"
#: The parameter names under the prefix, as ``constructs.model_contract`` publishes them (a test
#: keeps the two equal; that module imports the AWS CDK, this one must not).
TABLE_NAME, TABLE_ARN, STREAM_ARN = "table-name", "table-arn", "stream-arn"
MODEL_FINGERPRINT, MODEL_JSON, CONTRACT = "model-fingerprint", "model", "contract"
_PREFIX = re.compile(r"(/[A-Za-z0-9_.-]+)+")

__all__ = ["TABLE_LOGICAL_ID", "ContractDeployment", "contract_template", "deploy_contract", "published_parameters"]


def _key_schema(partition: Mapping[str, Any], sort: Mapping[str, Any] | None) -> list[dict[str, str]]:
    keys = [{"AttributeName": partition["name"], "KeyType": "HASH"}]
    if sort is not None:
        keys.append({"AttributeName": sort["name"], "KeyType": "RANGE"})
    return keys


def _projection(projection: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"ProjectionType": projection["type"]}
    if projection.get("non_key_attributes"):
        out["NonKeyAttributes"] = list(projection["non_key_attributes"])
    return out


def published_parameters(contract: Contract) -> dict[str, Any]:
    """Parameter name (under the prefix) → value, as ``ModelContract`` publishes them for the
    contract's table (table name and ARNs as intrinsics of :data:`TABLE_LOGICAL_ID`)."""
    from constructs_lib.model.slices import published_json

    values: dict[str, Any] = {
        TABLE_NAME: {"Ref": TABLE_LOGICAL_ID}, TABLE_ARN: {"Fn::GetAtt": [TABLE_LOGICAL_ID, "Arn"]},
        MODEL_FINGERPRINT: contract.fingerprint, MODEL_JSON: contract.model.to_json(compact=True),
        CONTRACT: published_json(contract.model),
    }
    if contract.table.get("stream_view_type"):
        values[STREAM_ARN] = {"Fn::GetAtt": [TABLE_LOGICAL_ID, "StreamArn"]}
    return values


def contract_template(contract: Contract, *, parameter_prefix: str | None = None) -> dict[str, Any]:
    """A CloudFormation template holding the contract's table as one ``AWS::DynamoDB::Table``
    (logical id :data:`TABLE_LOGICAL_ID`, on-demand billing, no fixed ``TableName``); with
    ``parameter_prefix``, also the ``String`` SSM parameters the producer publishes under it."""
    table = contract.table
    definitions: dict[str, str] = {}
    for key in (table["partition_key"], table["sort_key"]):
        if key is not None:
            definitions[key["name"]] = key["type"]
    gsis: list[dict[str, Any]] = []
    lsis: list[dict[str, Any]] = []
    for index in table["indexes"]:
        for key in (index["partition_key"], index["sort_key"]):
            if key is not None:
                definitions[key["name"]] = key["type"]
        resource = {
            "IndexName": index["name"],
            "KeySchema": _key_schema(index["partition_key"], index["sort_key"]),
            "Projection": _projection(index["projection"]),
        }
        (lsis if index["kind"] == "LSI" else gsis).append(resource)
    props: dict[str, Any] = {
        "KeySchema": _key_schema(table["partition_key"], table["sort_key"]),
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in definitions.items()],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if gsis:
        props["GlobalSecondaryIndexes"] = gsis
    if lsis:
        props["LocalSecondaryIndexes"] = lsis
    if table.get("stream_view_type"):
        props["StreamSpecification"] = {"StreamViewType": table["stream_view_type"]}
    if table.get("ttl_attribute"):
        props["TimeToLiveSpecification"] = {"AttributeName": table["ttl_attribute"], "Enabled": True}
    resources: dict[str, Any] = {TABLE_LOGICAL_ID: {"Type": "AWS::DynamoDB::Table", "Properties": props}}
    if parameter_prefix is not None:
        if not isinstance(parameter_prefix, str) or not _PREFIX.fullmatch(parameter_prefix):
            raise LocalDeployError(f"parameter_prefix {parameter_prefix!r} must be a path like '/shop/data' "
                                   "(segments of A-Z a-z 0-9 _ . -, a leading '/', no trailing '/')")
        for name, value in published_parameters(contract).items():
            resources["".join(part.title() for part in name.split("-")) + "Parameter"] = {
                "Type": "AWS::SSM::Parameter",
                "Properties": {"Name": f"{parameter_prefix}/{name}", "Type": "String", "Value": value},
            }
    return {"Resources": resources}


@dataclass
class ContractDeployment(LocalDeployment):
    """A :class:`~.local_deploy.LocalDeployment` of the one table a contract describes.

    Attributes
    ----------
    contract : Contract
        The checked contract (``contract.model`` is the producer's model).
    """

    contract: Contract | None = field(default=None, repr=False)

    @property
    def model(self) -> Model:
        """The producer's model, from the contract."""
        assert self.contract is not None
        model: Model = self.contract.model
        return model

    @property
    def name(self) -> str:
        """Physical name of the table (``table_name("Table")``)."""
        return self.table_name(TABLE_LOGICAL_ID)

    @property
    def stream(self) -> str:
        """The table's ``LatestStreamArn`` (``LocalDeployError`` when the contract has no stream)."""
        return self.stream_arn(TABLE_LOGICAL_ID)


def deploy_contract(
    contract: str | os.PathLike[str] | Mapping[str, Any] | Contract,
    *,
    client: Any,
    name_prefix: str = "",
    wait: bool = True,
    timeout: float = 60.0,
    parameter_prefix: str | None = None,
) -> ContractDeployment:
    """Create the table a contract file describes in DynamoDB Local.

    Parameters
    ----------
    contract : path, JSON text, mapping or Contract
        The producer's contract (``<model>.contract.json``); read and checked with
        ``read_contract`` (``ContractError`` subclasses on a bad file). A relative path is read
        from the calling file's project directory (the nearest ``cdk.json`` above it, else the
        working directory), as ``Model.from_contract`` reads it.
    client : botocore client
        A ``dynamodb`` client pointed at DynamoDB Local.
    name_prefix : str, optional
        Prefix of the generated table name, ``<name_prefix>Table-<8 hex>``. Default ``""``. The
        contract's ``table_name``, if any, is not used (tests must not share a fixed name).
    wait, timeout
        As in :func:`~.local_deploy.deploy_template`. Defaults ``True`` and ``60.0`` s.
    parameter_prefix : str, optional
        Also create the SSM parameters the producer publishes under this prefix (``table-name``,
        ``table-arn``, ``stream-arn`` with a stream, ``model-fingerprint``, ``model``,
        ``contract``), in ``deployment.shared``: a consumer assembly deployed with
        ``shared=deployment.shared`` resolves its ``SingleTable.from_parameters`` reads to this
        table, and ``LocalSsm.publish(deployment)`` serves them. Default None (none).

    Returns
    -------
    ContractDeployment
        ``name`` is the table's name, ``model`` the producer's model, ``stream`` its stream ARN.
    """
    if isinstance(contract, (str, os.PathLike)) and not str(contract).lstrip().startswith("{"):
        contract = shown(resolve_project_path(contract)[0])  # the same file, named from the working directory
    checked = contract if isinstance(contract, Contract) else read_contract(contract, Model)
    template = contract_template(checked, parameter_prefix=parameter_prefix)
    deployment = ContractDeployment(client=client, template=template, shared=CrossStackValues(), contract=checked)
    deploy_into(deployment, name_prefix=name_prefix, wait=wait, timeout=timeout)
    return deployment
