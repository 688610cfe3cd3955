"""Test helpers for constructs_lib users and contributors.

* :class:`DynamoDBLocal` runs Amazon DynamoDB Local on 127.0.0.1.
* :func:`deploy_template` / :func:`deploy_assembly_stack` create the DynamoDB tables of a
  synthesized CloudFormation template in it and return a :class:`LocalDeployment` that resolves
  table names, ARNs, stream ARNs and Lambda environments; :func:`deploy_assembly` deploys several
  stacks of one cloud assembly in dependency order as one :class:`AssemblyDeployment`, with
  ``Fn::ImportValue``, ``Fn::GetStackOutput`` and SSM parameters between them resolved (and,
  given an earlier deployment's :class:`CrossStackValues` as ``shared=``, those another
  assembly's stacks created);
  :func:`asset_dir` finds a Lambda's code in the cloud assembly; :func:`update_template` applies
  a newer template to a deployment as a stack update would (one GSI creation or deletion at most).
* :func:`run_backfill` runs a derived-key backfill job against a table; :class:`CapacityTrace`
  records the capacity each call of a client consumed.
* :class:`StreamRunner` feeds a table's stream to a handler as a Lambda event source mapping
  would (Lambda record shape, filters, batch size, partial batch responses, bisect, capped
  retries, record age, on-failure records); :class:`MappingSettings` reads the mapping from a
  synthesized template; :func:`to_lambda_record` converts one stream record.
* :func:`matches` / :func:`matches_any` / :func:`parse_filter_criteria` implement Lambda event
  filter patterns.
* :func:`invoke_handler` runs a bundled handler in a fresh process; :class:`LocalFunction` keeps
  a warm handler process (a reused Lambda execution environment); :class:`Fault` injects an AWS
  error into its calls.
* :func:`synthesize` builds a CDK app into a cloud assembly with asset metadata enabled and
  returns a :class:`SynthResult` (templates, function asset directories);
  :func:`start_stream_consumer` runs a synthesized stream consumer's bundled handler on the
  deployed table's stream (:class:`StreamConsumer`).
* :mod:`constructs_lib.testing.plugin` is the pytest plugin (fixtures ``dynamodb_local``,
  ``dynamodb_client``, ``dynamodb_streams_client``, ``cdk_synth``, ``local_deploy``,
  ``stream_runner``, ``local_function``, ``stream_consumer``).

Importing this package is cheap: it never imports aws_cdk, constructs, jsii or boto3, and the
submodules are loaded on first attribute access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from constructs_lib.testing.exceptions import (
    DynamoDBLocalError,
    DynamoDBLocalNotFoundError,
    DynamoDBLocalStartError,
    EventFilterError,
    HandlerError,
    LocalDeployError,
    StreamRunnerError,
    SynthError,
    TestingError,
    UnresolvableIntrinsicError,
)

if TYPE_CHECKING:
    from constructs_lib.testing._resolver import CrossStackValues
    from constructs_lib.testing.assembly import AssemblyDeployment, deploy_assembly
    from constructs_lib.testing.backfill import CapacityTrace, run_backfill
    from constructs_lib.testing.dynamodb_local import (
        DynamoDBLocal,
        find_dynamodb_local_dir,
    )
    from constructs_lib.testing.event_filters import (
        matches,
        matches_any,
        parse_filter_criteria,
    )
    from constructs_lib.testing.handlers import (
        Fault,
        Invocation,
        LocalFunction,
        invoke_handler,
    )
    from constructs_lib.testing.local_deploy import (
        LocalDeployment,
        asset_dir,
        deploy_assembly_stack,
        deploy_template,
        read_stack_template,
    )
    from constructs_lib.testing.local_update import update_template
    from constructs_lib.testing.streams import (
        MappingSettings,
        RunReport,
        StreamRunner,
        to_lambda_record,
    )
    from constructs_lib.testing.synth import (
        StreamConsumer,
        SynthResult,
        start_stream_consumer,
        synthesize,
    )

__all__ = [
    "AssemblyDeployment",
    "CapacityTrace",
    "CrossStackValues",
    "DynamoDBLocal",
    "DynamoDBLocalError",
    "DynamoDBLocalNotFoundError",
    "DynamoDBLocalStartError",
    "EventFilterError",
    "Fault",
    "HandlerError",
    "Invocation",
    "LocalDeployError",
    "LocalDeployment",
    "LocalFunction",
    "MappingSettings",
    "RunReport",
    "StreamConsumer",
    "StreamRunner",
    "StreamRunnerError",
    "SynthError",
    "SynthResult",
    "TestingError",
    "UnresolvableIntrinsicError",
    "asset_dir",
    "deploy_assembly",
    "deploy_assembly_stack",
    "deploy_template",
    "find_dynamodb_local_dir",
    "invoke_handler",
    "matches",
    "matches_any",
    "parse_filter_criteria",
    "read_stack_template",
    "run_backfill",
    "start_stream_consumer",
    "synthesize",
    "to_lambda_record",
    "update_template",
]

# Lazy re-exports (PEP 562): `python -m constructs_lib.testing.dynamodb_local` must not find
# its own module already imported by this package.
_LAZY = {
    "AssemblyDeployment": "constructs_lib.testing.assembly",
    "CrossStackValues": "constructs_lib.testing._resolver",
    "deploy_assembly": "constructs_lib.testing.assembly",
    "DynamoDBLocal": "constructs_lib.testing.dynamodb_local",
    "find_dynamodb_local_dir": "constructs_lib.testing.dynamodb_local",
    "LocalDeployment": "constructs_lib.testing.local_deploy",
    "deploy_template": "constructs_lib.testing.local_deploy",
    "deploy_assembly_stack": "constructs_lib.testing.local_deploy",
    "read_stack_template": "constructs_lib.testing.local_deploy",
    "asset_dir": "constructs_lib.testing.local_deploy",
    "StreamRunner": "constructs_lib.testing.streams",
    "MappingSettings": "constructs_lib.testing.streams",
    "RunReport": "constructs_lib.testing.streams",
    "to_lambda_record": "constructs_lib.testing.streams",
    "matches": "constructs_lib.testing.event_filters",
    "matches_any": "constructs_lib.testing.event_filters",
    "parse_filter_criteria": "constructs_lib.testing.event_filters",
    "LocalFunction": "constructs_lib.testing.handlers",
    "Fault": "constructs_lib.testing.handlers",
    "Invocation": "constructs_lib.testing.handlers",
    "invoke_handler": "constructs_lib.testing.handlers",
    "SynthResult": "constructs_lib.testing.synth",
    "StreamConsumer": "constructs_lib.testing.synth",
    "synthesize": "constructs_lib.testing.synth",
    "start_stream_consumer": "constructs_lib.testing.synth",
    "CapacityTrace": "constructs_lib.testing.backfill",
    "run_backfill": "constructs_lib.testing.backfill",
    "update_template": "constructs_lib.testing.local_update",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
