"""Deploy the DynamoDB tables of a synthesized CloudFormation template to DynamoDB Local.

Only ``AWS::DynamoDB::GlobalTable`` (what CDK's ``TableV2`` synthesizes) and
``AWS::DynamoDB::Table`` resources are created, and ``AWS::SSM::Parameter`` resources of type
``String`` are recorded (their values resolve for the stacks deployed with them, see
:mod:`._resolver` and :mod:`.assembly`); every other resource is listed in
:attr:`LocalDeployment.skipped`. Properties that DynamoDB Local cannot reproduce (encryption,
PITR, deletion protection, extra replicas, tags, autoscaling...) are never silently dropped: their
paths are listed per logical id in :attr:`LocalDeployment.ignored`.

Import-light: standard library only at module level (``botocore`` is imported when needed).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from constructs_lib.testing._cfn_tables import (
    LAMBDA_FUNCTION,
    SUPPORTED_RESOURCE_TYPES,
    TABLE_NAME_RE,
    TablePlan,
    TablePlanner,
    load_template,
    match_logical_id,
)
from constructs_lib.testing._resolver import SSM_PARAMETER, CrossStackValues, Resolver
from constructs_lib.testing.exceptions import LocalDeployError, UnresolvableIntrinsicError

if TYPE_CHECKING:
    from types import TracebackType

__all__ = [
    "SUPPORTED_RESOURCE_TYPES",
    "LocalDeployment",
    "asset_dir",
    "deploy_assembly_stack",
    "deploy_template",
    "read_stack_template",
]


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


# --------------------------------------------------------------------------------------------
# The deployment
# --------------------------------------------------------------------------------------------
@dataclass
class LocalDeployment:
    """Tables created in DynamoDB Local from one template.

    Attributes
    ----------
    client : botocore client
        The ``dynamodb`` client the tables were created with.
    template : Mapping
        The deployed template (used by :meth:`function_environment` by default).
    tables : dict[str, str]
        Logical id -> physical table name, for every table created.
    ignored : dict[str, list[str]]
        Logical id -> property paths that could not be reproduced locally (e.g.
        ``SSESpecification``, ``Replicas[0].PointInTimeRecoverySpecification``). Tables with
        nothing ignored have no entry.
    skipped : dict[str, str]
        Logical id -> resource type of every resource that was not deployed.
    parameters : dict[str, str]
        Logical id -> name of every ``AWS::SSM::Parameter`` of type ``String`` (recorded, not
        sent anywhere: its value is resolved from the template when read).
    stack_name : str or None
        The stack's name when deployed from a cloud assembly (the value of ``AWS::StackName``).
    shared : CrossStackValues
        Outputs, exports and SSM parameters of the stacks deployed together with this one.
    """

    client: Any = field(repr=False)
    template: Mapping[str, Any] = field(repr=False)
    tables: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)
    stack_name: str | None = None
    shared: CrossStackValues = field(default_factory=CrossStackValues, repr=False)
    _deleted: set[str] = field(default_factory=set, repr=False)

    @property
    def region(self) -> str:
        """Region of :attr:`client`; the value of ``{"Ref": "AWS::Region"}``."""
        return str(self.client.meta.region_name)

    # -- lookups ----------------------------------------------------------------------------
    def logical_id(self, logical_id_or_prefix: str) -> str:
        """Exact logical id of a deployed table from its id or unique prefix.

        Raises
        ------
        LocalDeployError
            No deployed table matches, or the prefix matches several.
        """
        return match_logical_id(self.tables, logical_id_or_prefix, "deployed table")

    def table_name(self, logical_id_or_prefix: str) -> str:
        """Physical name of a deployed table (exact logical id, or a unique prefix such as
        ``"DataTable"`` for ``DataTable447BC44E``)."""
        return self.tables[self.logical_id(logical_id_or_prefix)]

    def describe(self, logical_id_or_prefix: str) -> dict[str, Any]:
        """``DescribeTable`` of a deployed table (fresh, not cached)."""
        from botocore.exceptions import ClientError

        name = self.table_name(logical_id_or_prefix)
        try:
            return dict(self.client.describe_table(TableName=name)["Table"])
        except ClientError as exc:
            raise LocalDeployError(f"DescribeTable {name!r} failed: {exc}") from exc

    def table_arn(self, logical_id_or_prefix: str) -> str:
        """Table ARN as DynamoDB Local reports it (``arn:aws:dynamodb:ddblocal:000000000000:table/...``)."""
        return str(self.describe(logical_id_or_prefix)["TableArn"])

    def stream_arn(self, logical_id_or_prefix: str) -> str:
        """``LatestStreamArn`` of a deployed table.

        Raises
        ------
        LocalDeployError
            The table has no stream (no ``StreamSpecification`` in the template).
        """
        desc = self.describe(logical_id_or_prefix)
        arn = desc.get("LatestStreamArn")
        if not arn:
            raise LocalDeployError(
                f"Table {desc['TableName']!r} ({self.logical_id(logical_id_or_prefix)}) has no stream; "
                "its template resource has no StreamSpecification."
            )
        return str(arn)

    # -- intrinsics -------------------------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        """Resolve CloudFormation intrinsics to local values.

        Supported: ``Ref`` (a deployed table -> its name; an SSM parameter resource -> its name;
        an ``AWS::SSM::Parameter::Value<String>`` template parameter -> the value of the SSM
        parameter it names; pseudo parameters ``AWS::Region``, ``AWS::AccountId``,
        ``AWS::Partition``, ``AWS::URLSuffix`` and, from an assembly, ``AWS::StackName``),
        ``Fn::GetAtt`` (``Arn``, ``StreamArn``, ``TableId`` of a table; ``Value`` of an SSM
        parameter), ``Fn::Join``, ``Fn::Sub``, ``Fn::ImportValue`` and ``Fn::GetStackOutput``
        (outputs of the stacks deployed with this one) and ``{{resolve:ssm:NAME}}`` dynamic
        references in strings. Lists and plain mappings are resolved element-wise; other scalars
        are returned unchanged.

        Raises
        ------
        UnresolvableIntrinsicError
            Anything else (a skipped resource, another parameter, an export or SSM parameter no
            deployed stack provides, another function); the message shows the intrinsic.
        """
        return Resolver(self).resolve(value)

    def function_environment(
        self,
        function_logical_id_or_prefix: str,
        template: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        *,
        overrides: Mapping[str, str | None] | None = None,
    ) -> dict[str, str]:
        """Resolved ``Environment.Variables`` of an ``AWS::Lambda::Function`` resource.

        Parameters
        ----------
        function_logical_id_or_prefix : str
            Exact logical id or unique prefix of the function.
        template : Mapping or path, optional
            Template holding the function. Default ``None``: the deployed template.
        overrides : Mapping, optional
            Variable name -> value used instead of resolving the template's value (None leaves
            the variable out; names not in the template are added). For values that name
            resources DynamoDB Local does not have (a secret's ARN, a queue URL). Default none.

        Returns
        -------
        dict[str, str]
            Variable name -> value, with table references resolved to local names/ARNs
            (an empty dict when the function has no environment).

        Raises
        ------
        LocalDeployError
            No such function, ambiguous prefix, or a value that cannot be resolved.
        """
        tpl = self.template if template is None else load_template(template)
        resources = tpl["Resources"]
        functions = [lid for lid, r in resources.items() if isinstance(r, Mapping) and r.get("Type") == LAMBDA_FUNCTION]
        lid = match_logical_id(functions, function_logical_id_or_prefix, LAMBDA_FUNCTION)
        props = resources[lid].get("Properties") or {}
        variables = (props.get("Environment") or {}).get("Variables") or {}
        env: dict[str, str] = {}
        overrides = dict(overrides or {})
        for name, raw in variables.items():
            if name in overrides:
                continue
            value = self.resolve(raw)
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, (int, float)):
                value = str(value)
            if not isinstance(value, str):
                raise LocalDeployError(f"Environment variable {name!r} of {lid} resolves to non-string {value!r}.")
            env[name] = value
        env.update({name: value for name, value in overrides.items() if value is not None})
        return env

    # -- teardown ---------------------------------------------------------------------------
    def delete(self) -> None:
        """Delete every table this deployment created (idempotent; tables already gone are
        fine), then remove its outputs, exports and SSM parameters from :attr:`shared`.

        Raises
        ------
        LocalDeployError
            Some tables could not be deleted (all are attempted first; the message names them).
        """
        from botocore.exceptions import ClientError

        failures: list[str] = []
        first: ClientError | None = None
        for lid, name in self.tables.items():
            if lid in self._deleted:
                continue
            try:
                self.client.delete_table(TableName=name)
            except ClientError as exc:
                if _code(exc) != "ResourceNotFoundException":
                    failures.append(f"{name} ({lid}): {exc}")
                    first = first or exc
                    continue
            self._deleted.add(lid)
        if failures:
            raise LocalDeployError("Could not delete local tables: " + "; ".join(failures)) from first
        self.shared.unregister(self)

    def __enter__(self) -> LocalDeployment:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.delete()


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------
def _wait_active(client: Any, name: str, logical_id: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        table = client.describe_table(TableName=name)["Table"]
        statuses = [table.get("TableStatus")] + [g.get("IndexStatus") for g in table.get("GlobalSecondaryIndexes", [])]
        if all(s == "ACTIVE" for s in statuses):
            return
        if time.monotonic() >= deadline:
            raise LocalDeployError(
                f"Table {name!r} ({logical_id}) not ACTIVE after {timeout:g} s (statuses: {statuses})."
            )
        time.sleep(0.1)


def deploy_template(
    template: Mapping[str, Any] | str | os.PathLike[str],
    *,
    client: Any,
    name_prefix: str = "",
    wait: bool = True,
    timeout: float = 60.0,
    stack_name: str | None = None,
    shared: CrossStackValues | None = None,
) -> LocalDeployment:
    """Create the DynamoDB tables of a synthesized template in DynamoDB Local.

    Parameters
    ----------
    template : Mapping or path
        The template dict (as in ``cdk.out/<Stack>.template.json`` or
        ``Template.from_stack(stack).to_json()``), or the path of such a JSON file.
    client : botocore client
        A ``dynamodb`` client pointed at DynamoDB Local (e.g. ``DynamoDBLocal.client()``).
    name_prefix : str, optional
        Prefix of generated table names, ``<name_prefix><LogicalId>-<8 hex>``. Default ``""``.
        Tables whose template ``TableName`` is a plain string keep that exact name.
    wait : bool, optional
        Wait until every table and index is ACTIVE. Default ``True``. Tables with TTL are
        always waited for, since ``UpdateTimeToLive`` needs an ACTIVE table.
    timeout : float, optional
        Seconds to wait for each table to become ACTIVE. Default ``60.0``.
    stack_name : str, optional
        The stack's name (``AWS::StackName``; how other stacks' ``Fn::GetStackOutput`` name it).
        Default None.
    shared : CrossStackValues, optional
        Outputs, exports and SSM parameters of stacks deployed before this one, which its
        intrinsics may read; this deployment's are added to it. Default: a new, empty one.
        :func:`~constructs_lib.testing.assembly.deploy_assembly` passes one through all stacks.

    Returns
    -------
    LocalDeployment

    Raises
    ------
    LocalDeployError
        A table resource cannot be translated (the message names its logical id and property),
        or DynamoDB Local rejected it (e.g. a fixed ``TableName`` that already exists), or an
        export/SSM parameter name is already taken by another deployed stack. Tables created
        before the failure are deleted again.
    """
    tpl = load_template(template)
    deployment = LocalDeployment(client=client, template=tpl, stack_name=stack_name,
                                 shared=shared if shared is not None else CrossStackValues())
    return deploy_into(deployment, name_prefix=name_prefix, wait=wait, timeout=timeout)


def deploy_into(deployment: LocalDeployment, *, name_prefix: str, wait: bool, timeout: float) -> LocalDeployment:
    """Create the tables of ``deployment.template`` and record them in ``deployment`` (the body of
    :func:`deploy_template`, for callers that build a :class:`LocalDeployment` subclass)."""
    from botocore.exceptions import ClientError, ParamValidationError

    if not TABLE_NAME_RE.match(name_prefix):
        raise LocalDeployError(f"name_prefix {name_prefix!r} may only contain A-Z a-z 0-9 _ . -")
    client, tpl = deployment.client, deployment.template
    region = str(client.meta.region_name)
    plans: list[TablePlan] = []
    for lid, resource in tpl["Resources"].items():
        rtype = resource.get("Type") if isinstance(resource, Mapping) else None
        if rtype in SUPPORTED_RESOURCE_TYPES:
            plans.append(TablePlanner(lid, resource, region=region).plan(name_prefix))
        else:
            deployment.skipped[lid] = str(rtype)

    try:
        for plan in plans:
            name = plan.request["TableName"]
            try:
                client.create_table(**plan.request)
            except (ClientError, ParamValidationError) as exc:
                hint = (
                    " (a fixed TableName from the template already exists?)"
                    if _code(exc) == "ResourceInUseException"
                    else ""
                )
                raise LocalDeployError(
                    f"CreateTable {name!r} for {plan.resource_type} {plan.logical_id!r} failed{hint}: {exc}"
                ) from exc
            deployment.tables[plan.logical_id] = name
            if plan.ignored:
                deployment.ignored[plan.logical_id] = list(plan.ignored)
        for plan in plans:
            name = plan.request["TableName"]
            if wait or plan.ttl_attribute:
                _wait_active(client, name, plan.logical_id, timeout)
            if plan.ttl_attribute:
                try:
                    client.update_time_to_live(
                        TableName=name,
                        TimeToLiveSpecification={"Enabled": True, "AttributeName": plan.ttl_attribute},
                    )
                except ClientError as exc:
                    raise LocalDeployError(
                        f"UpdateTimeToLive {name!r} ({plan.logical_id}, attribute {plan.ttl_attribute!r}) failed: {exc}"
                    ) from exc
        _record_parameters(deployment)
        deployment.shared.register(deployment)
    except BaseException as exc:
        try:
            deployment.delete()
        except LocalDeployError as cleanup:
            exc.add_note(f"Also failed to delete the tables created so far: {cleanup}")
        raise
    return deployment


def _record_parameters(deployment: LocalDeployment) -> None:
    """Move ``AWS::SSM::Parameter`` resources of type ``String`` whose name resolves from
    ``skipped`` to ``parameters`` (a parameter without ``Name`` gets CloudFormation's kind of
    generated name). Their values are resolved when read."""
    for lid, resource in deployment.template["Resources"].items():
        props = (resource.get("Properties") or {}) if isinstance(resource, Mapping) else {}
        if deployment.skipped.get(lid) != SSM_PARAMETER or props.get("Type") != "String":
            continue
        if "Name" in props:
            try:
                name = deployment.resolve(props["Name"])
            except UnresolvableIntrinsicError:
                continue  # stays in `skipped`: its name cannot be known locally
        else:
            name = f"CFN-{lid}-{os.urandom(6).hex().upper()}"
        if isinstance(name, str):
            deployment.parameters[lid] = name
            del deployment.skipped[lid]


def read_stack_template(cdk_out_dir: str | os.PathLike[str], stack_name: str) -> dict[str, Any]:
    """Read a stack's template from a cloud assembly directory.

    Looks for ``<cdk_out_dir>/<stack_name>.template.json``, else for a stack artifact in
    ``manifest.json`` whose artifact id or ``stackName`` is *stack_name*.

    Raises
    ------
    LocalDeployError
        No such stack (the message lists the templates present).
    """
    out = Path(cdk_out_dir)
    direct = out / f"{stack_name}.template.json"
    if direct.is_file():
        return dict(load_template(direct))
    manifest_path = out / "manifest.json"
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        for art_id, art in (manifest.get("artifacts") or {}).items():
            props = art.get("properties") or {}
            if art.get("type") == "aws:cloudformation:stack" and stack_name in (art_id, props.get("stackName")):
                return dict(load_template(out / props["templateFile"]))
    present = ", ".join(sorted(p.name for p in out.glob("*.template.json"))) or "none"
    raise LocalDeployError(f"No stack {stack_name!r} in cloud assembly {str(out)!r} (templates: {present}).")


def deploy_assembly_stack(
    cdk_out_dir: str | os.PathLike[str],
    stack_name: str,
    *,
    client: Any,
    name_prefix: str = "",
    wait: bool = True,
    timeout: float = 60.0,
) -> LocalDeployment:
    """:func:`deploy_template` of ``<cdk_out_dir>/<stack_name>.template.json`` (see
    :func:`read_stack_template`). Parameters and defaults as in :func:`deploy_template`."""
    template = read_stack_template(cdk_out_dir, stack_name)
    return deploy_template(template, client=client, name_prefix=name_prefix, wait=wait, timeout=timeout,
                           stack_name=stack_name)


def asset_dir(
    cdk_out_dir: str | os.PathLike[str],
    template: Mapping[str, Any] | str | os.PathLike[str],
    function_logical_id_or_prefix: str,
) -> Path:
    """Directory of a Lambda function's code asset inside a cloud assembly.

    Uses the function's ``Metadata["aws:asset:path"]`` (written when asset metadata is enabled,
    as the CDK CLI does) relative to *cdk_out_dir*; without it, the asset hash from
    ``Code.S3Key`` (``<hash>.zip``) is looked up in the ``*.assets.json`` manifests, then as
    ``asset.<hash>``.

    Raises
    ------
    LocalDeployError
        No such function, inline code (``Code.ZipFile``), or the asset is not in *cdk_out_dir*.
    """
    out = Path(cdk_out_dir)
    tpl = load_template(template)
    resources = tpl["Resources"]
    functions = [lid for lid, r in resources.items() if isinstance(r, Mapping) and r.get("Type") == LAMBDA_FUNCTION]
    lid = match_logical_id(functions, function_logical_id_or_prefix, LAMBDA_FUNCTION)
    resource = resources[lid]
    code = (resource.get("Properties") or {}).get("Code") or {}
    candidates: list[Path] = []
    meta_path = (resource.get("Metadata") or {}).get("aws:asset:path")
    if isinstance(meta_path, str):
        candidates.append(out / meta_path)
    elif "ZipFile" in code:
        raise LocalDeployError(f"Function {lid} has inline code (Code.ZipFile); it has no asset directory.")
    s3_key = code.get("S3Key")
    if isinstance(s3_key, str) and s3_key.endswith(".zip"):
        digest = s3_key[: -len(".zip")]
        for manifest in sorted(out.glob("*.assets.json")):
            files = json.loads(manifest.read_text(encoding="utf-8")).get("files") or {}
            source = (files.get(digest) or {}).get("source") or {}
            if isinstance(source.get("path"), str):
                candidates.append(out / source["path"])
        candidates.append(out / f"asset.{digest}")
    for candidate in candidates:
        if candidate.exists():
            return candidate.resolve()
    tried = ", ".join(repr(str(c)) for c in candidates) or "no asset path or S3Key in the template"
    raise LocalDeployError(f"Asset of function {lid} not found in {str(out)!r} (tried: {tried}).")
