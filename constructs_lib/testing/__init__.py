"""Test helpers for constructs_lib users and contributors.

* :class:`DynamoDBLocal` runs Amazon DynamoDB Local on 127.0.0.1.
* :func:`deploy_template` / :func:`deploy_assembly_stack` create the DynamoDB tables of a
  synthesized CloudFormation template in it and return a :class:`LocalDeployment` that resolves
  table names, ARNs, stream ARNs and Lambda environments; :func:`asset_dir` finds a Lambda's
  code in the cloud assembly.
* :mod:`constructs_lib.testing.plugin` is the pytest plugin (fixtures ``dynamodb_local``,
  ``dynamodb_client``, ``dynamodb_streams_client``, ``local_deploy``).

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
    LocalDeployError,
    TestingError,
    UnresolvableIntrinsicError,
)

if TYPE_CHECKING:
    from constructs_lib.testing.dynamodb_local import DynamoDBLocal, find_dynamodb_local_dir
    from constructs_lib.testing.local_deploy import (
        LocalDeployment,
        asset_dir,
        deploy_assembly_stack,
        deploy_template,
        read_stack_template,
    )

__all__ = [
    "DynamoDBLocal",
    "find_dynamodb_local_dir",
    "LocalDeployment",
    "deploy_template",
    "deploy_assembly_stack",
    "read_stack_template",
    "asset_dir",
    "TestingError",
    "DynamoDBLocalError",
    "DynamoDBLocalNotFoundError",
    "DynamoDBLocalStartError",
    "LocalDeployError",
    "UnresolvableIntrinsicError",
]

# Lazy re-exports (PEP 562): `python -m constructs_lib.testing.dynamodb_local` must not find
# its own module already imported by this package.
_LAZY = {
    "DynamoDBLocal": "constructs_lib.testing.dynamodb_local",
    "find_dynamodb_local_dir": "constructs_lib.testing.dynamodb_local",
    "LocalDeployment": "constructs_lib.testing.local_deploy",
    "deploy_template": "constructs_lib.testing.local_deploy",
    "deploy_assembly_stack": "constructs_lib.testing.local_deploy",
    "read_stack_template": "constructs_lib.testing.local_deploy",
    "asset_dir": "constructs_lib.testing.local_deploy",
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
