"""Resolve CloudFormation intrinsics of a locally deployed template to local values.

Within one template: ``Ref`` (tables, SSM parameters, pseudo parameters, and an SQS queue's URL:
the queue is not deployed, but a function is told where it would be), ``Fn::GetAtt``,
``Fn::Join``, ``Fn::Sub``. Across the stacks of a local assembly deployment (through the
:class:`CrossStackValues` they share): ``Fn::ImportValue``, ``Fn::GetStackOutput`` (CDK's weak
references), and ``String`` SSM parameters a deployed stack created, read through an
``AWS::SSM::Parameter::Value<String>`` parameter or ``{{resolve:ssm:NAME}}``. Anything else
raises :class:`UnresolvableIntrinsicError` naming the intrinsic.

Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from constructs_lib.testing._cfn_tables import LOCAL_ACCOUNT_ID
from constructs_lib.testing.exceptions import UnresolvableIntrinsicError


class LocalDeployment(Protocol):
    """What the resolver reads of a :class:`~constructs_lib.testing.local_deploy.LocalDeployment`
    (read-only: the resolver changes none of it)."""

    @property
    def template(self) -> Mapping[str, Any]: ...
    @property
    def stack_name(self) -> str | None: ...
    @property
    def region(self) -> str: ...
    @property
    def parameters(self) -> Mapping[str, str]: ...
    @property
    def tables(self) -> Mapping[str, str]: ...
    @property
    def skipped(self) -> Mapping[str, str]: ...
    @property
    def shared(self) -> CrossStackValues: ...

    def resolve(self, value: Any) -> Any: ...
    def describe(self, logical_id_or_prefix: str) -> dict[str, Any]: ...
    def table_arn(self, logical_id_or_prefix: str) -> str: ...

__all__ = ["SSM_PARAMETER", "SSM_PARAMETER_VALUE_STRING", "CrossStackValues", "Resolver"]

SSM_PARAMETER = "AWS::SSM::Parameter"
SSM_PARAMETER_VALUE_STRING = "AWS::SSM::Parameter::Value<String>"
SQS_QUEUE = "AWS::SQS::Queue"
_SUB_RE = re.compile(r"\$\{([^}]*)\}")
_DYNAMIC_RE = re.compile(r"\{\{resolve:([a-z-]+):([^}]*)\}\}")


@dataclass
class CrossStackValues:
    """What locally deployed stacks share, like stacks of one AWS account and region: outputs,
    exports and SSM parameters.

    The stacks of one :func:`~constructs_lib.testing.assembly.deploy_assembly` call share one;
    pass it on (``deploy_assembly(..., shared=earlier.shared)``) to let the stacks of another
    assembly — another app, another repository — read what the earlier ones created. Deleting
    a deployment removes its entries again.

    Attributes
    ----------
    outputs : dict[str, tuple[LocalDeployment, dict]]
        Stack name -> the deployment and its template's ``Outputs``.
    exports : dict[str, tuple[str, str]]
        Export name -> (stack name, output logical id).
    parameters : dict[str, tuple[LocalDeployment, str]]
        SSM parameter name -> the deployment that created it and the parameter's logical id.
    """

    outputs: dict[str, tuple[LocalDeployment, dict[str, Any]]] = field(default_factory=dict)
    exports: dict[str, tuple[str, str]] = field(default_factory=dict)
    parameters: dict[str, tuple[LocalDeployment, str]] = field(default_factory=dict)

    def register(self, deployment: LocalDeployment) -> None:
        """Record a deployed stack's outputs, exports and created SSM parameters.

        An export whose name cannot be resolved locally is left out (importing it then fails
        naming it).

        Raises
        ------
        LocalDeployError
            Another deployed stack already exports that name, created that parameter, or has
            the same stack name.
        """
        from constructs_lib.testing.exceptions import LocalDeployError

        outputs = dict(deployment.template.get("Outputs") or {})
        if deployment.stack_name is not None:
            earlier = self.outputs.get(deployment.stack_name)
            if earlier is not None and earlier[0] is not deployment:
                raise LocalDeployError(
                    f"Stack {deployment.stack_name!r} is already deployed with these shared values; stack names are "
                    "unique per account and region (delete the earlier deployment first)."
                )
            self.outputs[deployment.stack_name] = (deployment, outputs)
        for output_id, output in outputs.items():
            export = (output or {}).get("Export") if isinstance(output, Mapping) else None
            if isinstance(export, Mapping) and "Name" in export:
                try:
                    name = deployment.resolve(export["Name"])
                except UnresolvableIntrinsicError:
                    continue  # no local stack can import it; Fn::ImportValue of it names the export
                if name in self.exports:
                    raise LocalDeployError(
                        f"Export {name!r} of stack {deployment.stack_name!r} is already exported by stack "
                        f"{self.exports[name][0]!r}; CloudFormation export names are unique per region."
                    )
                self.exports[str(name)] = (str(deployment.stack_name), output_id)
        for logical_id, name in deployment.parameters.items():
            if name in self.parameters:
                raise LocalDeployError(
                    f"SSM parameter {name!r} ({logical_id}) already exists: created by "
                    f"{self.parameters[name][0].stack_name or 'another deployment'!r}."
                )
            self.parameters[name] = (deployment, logical_id)

    def unregister(self, deployment: LocalDeployment) -> None:
        """Forget the outputs, exports and SSM parameters *deployment* registered (idempotent):
        what a deleted stack created is no longer there to read."""
        stacks = {name for name, (owner, _) in self.outputs.items() if owner is deployment}
        for name in stacks:
            del self.outputs[name]
        for export in [e for e, (stack, _) in self.exports.items() if stack in stacks]:
            del self.exports[export]
        for parameter in [p for p, (owner, _) in self.parameters.items() if owner is deployment]:
            del self.parameters[parameter]


class Resolver:
    """The intrinsic resolver of one :class:`LocalDeployment` (see the module docstring)."""

    def __init__(self, deployment: LocalDeployment) -> None:
        self.deployment = deployment

    # -- entry point -----------------------------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, str):
            return self._dynamic_references(value) if "{{resolve:" in value else value
        if isinstance(value, Mapping):
            if len(value) == 1:
                ((key, arg),) = value.items()
                handler = {
                    "Ref": self._ref, "Fn::GetAtt": self._get_att, "Fn::Join": self._join, "Fn::Sub": self._sub,
                    "Fn::ImportValue": self._import_value, "Fn::GetStackOutput": self._get_stack_output,
                }.get(key)
                if handler is not None:
                    return handler(arg, value)
                if key.startswith("Fn::"):
                    raise self.unresolvable(value, f"{key} is not supported locally")
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def unresolvable(self, intrinsic: Any, why: str) -> UnresolvableIntrinsicError:
        shown = json.dumps(intrinsic, default=str)
        where = f" (stack {self.deployment.stack_name!r})" if self.deployment.stack_name else ""
        return UnresolvableIntrinsicError(f"Cannot resolve {shown} locally{where}: {why}.", intrinsic=intrinsic)

    # -- one template ----------------------------------------------------------------------------
    def _ref(self, target: Any, intrinsic: Any) -> str:
        d = self.deployment
        pseudo = {
            "AWS::Region": d.region, "AWS::AccountId": LOCAL_ACCOUNT_ID, "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }
        if d.stack_name is not None:
            pseudo["AWS::StackName"] = d.stack_name
        if not isinstance(target, str):
            raise self.unresolvable(intrinsic, "Ref needs a logical id string")
        if target in pseudo:
            return pseudo[target]
        if target in d.tables:
            return d.tables[target]
        if target in d.parameters:
            return d.parameters[target]
        parameter = (d.template.get("Parameters") or {}).get(target)
        if isinstance(parameter, Mapping) and parameter.get("Type") == SSM_PARAMETER_VALUE_STRING:
            return self._ssm_value(str(parameter.get("Default", "")), intrinsic, via=f"template parameter {target!r}")
        if d.skipped.get(target) == SQS_QUEUE:
            return self._queue(target, intrinsic)["QueueUrl"]
        raise self.unresolvable(intrinsic, self._why_unknown(target))

    def _queue(self, target: str, intrinsic: Any) -> dict[str, str]:
        """An SQS queue's name, URL and ARN as AWS would form them (``QueueName``, else one made of
        the stack name and the logical id, as CloudFormation names it; ``.fifo`` for a FIFO queue).
        The queue itself is not deployed locally: a call to it fails."""
        d = self.deployment
        props = (d.template["Resources"][target].get("Properties") or {})
        name = self.resolve(props["QueueName"]) if "QueueName" in props else f"{d.stack_name or 'local'}-{target}"
        if not isinstance(name, str):
            raise self.unresolvable(intrinsic, f"QueueName of {target!r} resolves to {name!r}, not a string")
        if props.get("FifoQueue") in (True, "true") and not name.endswith(".fifo"):
            name += ".fifo"
        return {"QueueName": name, "QueueUrl": f"https://sqs.{d.region}.amazonaws.com/{LOCAL_ACCOUNT_ID}/{name}",
                "Arn": f"arn:aws:sqs:{d.region}:{LOCAL_ACCOUNT_ID}:{name}"}

    def _why_unknown(self, target: str) -> str:
        d = self.deployment
        if target in d.skipped:
            return f"{target!r} is a {d.skipped[target]}, which is not deployed locally"
        parameter = (d.template.get("Parameters") or {}).get(target)
        if parameter is not None:
            kind = parameter.get("Type") if isinstance(parameter, Mapping) else None
            return (f"{target!r} is a template parameter of type {kind}; only {SSM_PARAMETER_VALUE_STRING} parameters "
                    "naming an SSM parameter a deployed stack created are resolved locally")
        return f"{target!r} is not a resource of the template"

    def _get_att(self, arg: Any, intrinsic: Any) -> str:
        d = self.deployment
        if isinstance(arg, str) and "." in arg:
            arg = arg.split(".", 1)
        if not (isinstance(arg, list) and len(arg) == 2 and all(isinstance(a, str) for a in arg)):
            raise self.unresolvable(intrinsic, "Fn::GetAtt needs [logical id, attribute]")
        target, attribute = arg
        if target in d.parameters:
            if attribute == "Value":
                return self._ssm_value(d.parameters[target], intrinsic, via=f"resource {target!r}")
            if attribute == "Type":
                return "String"
            raise self.unresolvable(intrinsic, f"attribute {attribute!r} of an SSM parameter is not supported (Value, Type are)")
        if d.skipped.get(target) == SQS_QUEUE:
            queue = self._queue(target, intrinsic)
            if attribute not in queue:
                raise self.unresolvable(intrinsic, f"attribute {attribute!r} of an SQS queue is not supported "
                                                   "(Arn, QueueName, QueueUrl are)")
            return queue[attribute]
        if target not in d.tables:
            raise self.unresolvable(intrinsic, self._why_unknown(target))
        if attribute == "Arn":
            return d.table_arn(target)
        if attribute == "StreamArn":
            desc = d.describe(target)
            if not desc.get("LatestStreamArn"):
                raise self.unresolvable(intrinsic, f"table {desc['TableName']!r} has no stream")
            return str(desc["LatestStreamArn"])
        if attribute == "TableId":
            return str(d.describe(target)["TableId"])
        raise self.unresolvable(intrinsic, f"attribute {attribute!r} is not supported (Arn, StreamArn, TableId are)")

    def _join(self, arg: Any, intrinsic: Any) -> str:
        if not (isinstance(arg, list) and len(arg) == 2 and isinstance(arg[0], str)):
            raise self.unresolvable(intrinsic, "Fn::Join needs [delimiter, [values...]]")
        parts = self.resolve(arg[1])
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            raise self.unresolvable(intrinsic, f"Fn::Join values must resolve to strings, got {parts!r}")
        return arg[0].join(parts)

    def _sub(self, arg: Any, intrinsic: Any) -> str:
        if isinstance(arg, str):
            text, variables = arg, {}
        elif isinstance(arg, list) and len(arg) == 2 and isinstance(arg[0], str) and isinstance(arg[1], Mapping):
            text, variables = arg[0], {k: self.resolve(v) for k, v in arg[1].items()}
        else:
            raise self.unresolvable(intrinsic, "Fn::Sub needs a string or [string, {variables}]")

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                return self._get_att(name, intrinsic)
            return self._ref(name, intrinsic)

        return _SUB_RE.sub(replace, text)

    # -- across stacks ---------------------------------------------------------------------------
    def _output_value(self, stack_name: str, output_id: str, intrinsic: Any) -> Any:
        outputs = self.deployment.shared.outputs.get(stack_name)
        if outputs is None:
            deployed = ", ".join(self.deployment.shared.outputs) or "none"
            raise self.unresolvable(intrinsic, f"stack {stack_name!r} is not deployed locally (deployed: {deployed})")
        producer, declared = outputs
        if output_id not in declared:
            raise self.unresolvable(intrinsic, f"stack {stack_name!r} has no output {output_id!r}")
        try:
            return producer.resolve((declared[output_id] or {}).get("Value"))
        except UnresolvableIntrinsicError as exc:
            raise self.unresolvable(intrinsic, f"output {output_id!r} of stack {stack_name!r}: {exc}") from exc

    def _import_value(self, arg: Any, intrinsic: Any) -> Any:
        name = self.resolve(arg)
        if not isinstance(name, str):
            raise self.unresolvable(intrinsic, "Fn::ImportValue needs an export name")
        found = self.deployment.shared.exports.get(name)
        if found is None:
            known = ", ".join(sorted(self.deployment.shared.exports)) or "none"
            raise self.unresolvable(intrinsic, f"no locally deployed stack exports {name!r} (exports: {known})")
        return self._output_value(found[0], found[1], intrinsic)

    def _get_stack_output(self, arg: Any, intrinsic: Any) -> Any:
        if not isinstance(arg, Mapping) or "StackName" not in arg or "OutputName" not in arg:
            raise self.unresolvable(intrinsic, "Fn::GetStackOutput needs {StackName, OutputName}")
        if arg.get("RoleArn") is not None:
            raise self.unresolvable(intrinsic, "a cross-account reference (RoleArn) cannot be resolved locally")
        if arg.get("Region") is not None and self.resolve(arg["Region"]) != self.deployment.region:
            raise self.unresolvable(intrinsic, f"a cross-region reference (Region {arg['Region']!r}) cannot be resolved locally")
        stack, output = self.resolve(arg["StackName"]), self.resolve(arg["OutputName"])
        if not isinstance(stack, str) or not isinstance(output, str):
            raise self.unresolvable(intrinsic, "StackName and OutputName must resolve to strings")
        return self._output_value(stack, output, intrinsic)

    def _ssm_value(self, name: str, intrinsic: Any, *, via: str) -> str:
        found = self.deployment.shared.parameters.get(name)
        if found is None and name in self.deployment.parameters.values():  # created by this very template
            found = (self.deployment, next(k for k, v in self.deployment.parameters.items() if v == name))
        if found is None:
            raise self.unresolvable(
                intrinsic, f"{via} reads SSM parameter {name!r}, which no locally deployed stack created "
                           "(an AWS::SSM::Parameter of type String)")
        creator, logical_id = found
        resource = creator.template["Resources"][logical_id]
        try:
            value = creator.resolve((resource.get("Properties") or {}).get("Value"))
        except UnresolvableIntrinsicError as exc:
            raise self.unresolvable(intrinsic, f"the value of SSM parameter {name!r} ({logical_id}): {exc}") from exc
        if not isinstance(value, str):
            raise self.unresolvable(intrinsic, f"SSM parameter {name!r} ({logical_id}) has a non-string value {value!r}")
        return value

    def _dynamic_references(self, text: str) -> str:
        def replace(match: re.Match[str]) -> str:
            service, reference = match.groups()
            if service != "ssm":
                raise self.unresolvable(text, f"dynamic reference {{{{resolve:{service}:...}}}} is not supported locally "
                                              "(only resolve:ssm)")
            name = reference.rsplit(":", 1)[0] if re.search(r":\d+$", reference) else reference
            return self._ssm_value(name, text, via="dynamic reference")

        return _DYNAMIC_RE.sub(replace, text)
