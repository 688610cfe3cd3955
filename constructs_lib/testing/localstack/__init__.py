"""LocalStack, installed and run for a CDK app's functions: host mode, no Docker, offline.

:func:`install` puts ``localstack-core`` in its own virtualenv in the per-user cache (patched
where it fails our stacks: :mod:`.patches`) with a Lambda executor that runs each handler in a
local process of its runtime's Python; :func:`start` runs it on ``127.0.0.1``;
:func:`client_environment` is what ``cdk`` and boto3 need to use it. From a shell:
``python -m constructs_lib.testing.localstack start`` (then ``env``, ``stop``); see
docs/deploy-to-localstack.md. Importing it loads no LocalStack and no boto3.
"""

from __future__ import annotations

from constructs_lib.testing.localstack.install import LOCALSTACK_VERSION, Installation, install
from constructs_lib.testing.localstack.server import LocalStack, client_environment, running, start

__all__ = ["LOCALSTACK_VERSION", "Installation", "LocalStack", "client_environment", "install", "running", "start"]
