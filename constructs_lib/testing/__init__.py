"""Test helpers for constructs_lib users and contributors.

:class:`DynamoDBLocal` runs DynamoDB Local; :func:`deploy_template` / :func:`deploy_assembly`
create the tables of synthesized templates in it (:class:`LocalDeployment`, :class:`AssemblyDeployment`),
:func:`deploy_contract` a producer's table from its contract file (:class:`ContractDeployment`; with
its SSM parameters, :class:`LocalProducer`); :class:`StreamRunner` feeds a table's stream to a handler
as an event source mapping would; :func:`matches_any` implements Lambda event filters; :class:`LocalFunction`
and :func:`invoke_handler` run bundled handlers; :func:`synthesize` builds a cloud assembly;
:func:`update_template` updates a deployment; :func:`run_backfill` runs a backfill; :class:`GlobalTables`
replicates tables across regions as MREC global tables do. See docs/testing.md. Importing it is
cheap: no aws_cdk, constructs, jsii or boto3; submodules load on first access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: The public names, each with the module defining it (loaded on first access, PEP 562: `python -m
#: constructs_lib.testing.dynamodb_local` must not find its own module already imported by this
#: package). ``__all__``, ``__getattr__`` and the ``TYPE_CHECKING`` imports below follow it
#: (tests/unit/project/test_public_surface.py checks the last).
_LAZY = {
    "CrossStackValues": "constructs_lib.testing._resolver",
    "AssemblyDeployment": "constructs_lib.testing.assembly",
    "deploy_assembly": "constructs_lib.testing.assembly",
    "CapacityTrace": "constructs_lib.testing.backfill",
    "run_backfill": "constructs_lib.testing.backfill",
    "ContractDeployment": "constructs_lib.testing.contract_deploy",
    "deploy_contract": "constructs_lib.testing.contract_deploy",
    "DynamoDBLocal": "constructs_lib.testing.dynamodb_local",
    "find_dynamodb_local_dir": "constructs_lib.testing.dynamodb_local",
    "GlobalTables": "constructs_lib.testing.global_tables",
    "Replicated": "constructs_lib.testing.global_tables",
    "matches": "constructs_lib.testing.event_filters",
    "matches_any": "constructs_lib.testing.event_filters",
    "parse_filter_criteria": "constructs_lib.testing.event_filters",
    "DynamoDBLocalError": "constructs_lib.testing.exceptions",
    "DynamoDBLocalNotFoundError": "constructs_lib.testing.exceptions",
    "DynamoDBLocalStartError": "constructs_lib.testing.exceptions",
    "EventFilterError": "constructs_lib.testing.exceptions",
    "HandlerError": "constructs_lib.testing.exceptions",
    "LocalDeployError": "constructs_lib.testing.exceptions",
    "LocalStackError": "constructs_lib.testing.exceptions",
    "LocalStackSetupError": "constructs_lib.testing.exceptions",
    "LocalStackStartError": "constructs_lib.testing.exceptions",
    "StreamRunnerError": "constructs_lib.testing.exceptions",
    "SynthError": "constructs_lib.testing.exceptions",
    "TestingError": "constructs_lib.testing.exceptions",
    "UnresolvableIntrinsicError": "constructs_lib.testing.exceptions",
    "Fault": "constructs_lib.testing.handlers",
    "Invocation": "constructs_lib.testing.handlers",
    "invoke_handler": "constructs_lib.testing.handlers",
    "LocalFunction": "constructs_lib.testing.handlers",
    "asset_dir": "constructs_lib.testing.local_deploy",
    "deploy_assembly_stack": "constructs_lib.testing.local_deploy",
    "deploy_template": "constructs_lib.testing.local_deploy",
    "LocalDeployment": "constructs_lib.testing.local_deploy",
    "read_stack_template": "constructs_lib.testing.local_deploy",
    "LocalProducer": "constructs_lib.testing.local_producer",
    "LocalSsm": "constructs_lib.testing.local_ssm",
    "update_template": "constructs_lib.testing.local_update",
    "MappingSettings": "constructs_lib.testing.streams",
    "RunReport": "constructs_lib.testing.streams",
    "StreamRunner": "constructs_lib.testing.streams",
    "to_lambda_record": "constructs_lib.testing.streams",
    "start_stream_consumer": "constructs_lib.testing.synth",
    "StreamConsumer": "constructs_lib.testing.synth",
    "synthesize": "constructs_lib.testing.synth",
    "SynthResult": "constructs_lib.testing.synth",
}

__all__ = list(_LAZY)

if TYPE_CHECKING:
    from ._resolver import CrossStackValues as CrossStackValues
    from .assembly import AssemblyDeployment as AssemblyDeployment
    from .assembly import deploy_assembly as deploy_assembly
    from .backfill import CapacityTrace as CapacityTrace
    from .backfill import run_backfill as run_backfill
    from .contract_deploy import ContractDeployment as ContractDeployment
    from .contract_deploy import deploy_contract as deploy_contract
    from .dynamodb_local import DynamoDBLocal as DynamoDBLocal
    from .dynamodb_local import find_dynamodb_local_dir as find_dynamodb_local_dir
    from .event_filters import matches as matches
    from .event_filters import matches_any as matches_any
    from .event_filters import parse_filter_criteria as parse_filter_criteria
    from .exceptions import DynamoDBLocalError as DynamoDBLocalError
    from .exceptions import DynamoDBLocalNotFoundError as DynamoDBLocalNotFoundError
    from .exceptions import DynamoDBLocalStartError as DynamoDBLocalStartError
    from .exceptions import EventFilterError as EventFilterError
    from .exceptions import HandlerError as HandlerError
    from .exceptions import LocalDeployError as LocalDeployError
    from .exceptions import LocalStackError as LocalStackError
    from .exceptions import LocalStackSetupError as LocalStackSetupError
    from .exceptions import LocalStackStartError as LocalStackStartError
    from .exceptions import StreamRunnerError as StreamRunnerError
    from .exceptions import SynthError as SynthError
    from .exceptions import TestingError as TestingError
    from .exceptions import UnresolvableIntrinsicError as UnresolvableIntrinsicError
    from .global_tables import GlobalTables as GlobalTables
    from .global_tables import Replicated as Replicated
    from .handlers import Fault as Fault
    from .handlers import Invocation as Invocation
    from .handlers import LocalFunction as LocalFunction
    from .handlers import invoke_handler as invoke_handler
    from .local_deploy import LocalDeployment as LocalDeployment
    from .local_deploy import asset_dir as asset_dir
    from .local_deploy import deploy_assembly_stack as deploy_assembly_stack
    from .local_deploy import deploy_template as deploy_template
    from .local_deploy import read_stack_template as read_stack_template
    from .local_producer import LocalProducer as LocalProducer
    from .local_ssm import LocalSsm as LocalSsm
    from .local_update import update_template as update_template
    from .streams import MappingSettings as MappingSettings
    from .streams import RunReport as RunReport
    from .streams import StreamRunner as StreamRunner
    from .streams import to_lambda_record as to_lambda_record
    from .synth import StreamConsumer as StreamConsumer
    from .synth import SynthResult as SynthResult
    from .synth import start_stream_consumer as start_stream_consumer
    from .synth import synthesize as synthesize


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
