"""Test helpers for constructs_lib users and contributors.

:class:`DynamoDBLocal` runs DynamoDB Local; :func:`deploy_template` / :func:`deploy_assembly`
create the tables of synthesized templates in it (:class:`LocalDeployment`,
:class:`AssemblyDeployment`), :func:`deploy_contract` a producer's table from its contract file
(:class:`ContractDeployment`); :class:`StreamRunner` feeds a table's stream to a handler as an
event source mapping would; :func:`matches_any` implements Lambda event filters; :class:`LocalFunction`
and :func:`invoke_handler` run bundled handlers; :func:`synthesize` builds a cloud assembly;
:func:`update_template` updates a deployment; :func:`run_backfill` runs a backfill. See docs/testing.md.
Importing it is cheap: no aws_cdk, constructs, jsii or boto3; submodules load on first access.
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
    from constructs_lib.testing.contract_deploy import ContractDeployment, deploy_contract
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
    from constructs_lib.testing.local_ssm import LocalSsm
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
    "ContractDeployment",
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
    "LocalSsm",
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
    "deploy_contract",
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
    "ContractDeployment": "constructs_lib.testing.contract_deploy",
    "deploy_contract": "constructs_lib.testing.contract_deploy",
    "LocalSsm": "constructs_lib.testing.local_ssm",
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
