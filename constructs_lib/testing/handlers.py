"""Run a bundled Lambda handler from a synthesized asset directory, as Lambda would.

The handler runs in a fresh Python process whose import path is the asset directory plus the
interpreter's own site-packages (for boto3, which the Lambda runtime provides) — never this
repository — so a handler that imports something the asset does not contain fails here as it
would on AWS. It writes no ``__pycache__`` into the asset, which stays exactly what would deploy. The return value is serialized with plain ``json.dumps``, like the Lambda
runtime does. AWS calls go to the given local endpoint only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .exceptions import TestingError

_MARK = "\x1eCONSTRUCTS_LIB_RESULT\x1e"
_BOOTSTRAP = r"""
import importlib, json, sys
asset, handler, mark = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, asset)
module_name, _, func_name = handler.rpartition(".")
module = importlib.import_module(module_name)
event = json.loads(sys.stdin.read())
result = getattr(module, func_name)(event, None)
body = json.dumps(result)
cdk = sorted(m for m in sys.modules if m.split(".")[0] in ("aws_cdk", "jsii", "constructs"))
pkg = sys.modules.get("constructs_lib")
sys.stdout.write(mark + json.dumps({"result": json.loads(body), "cdk_modules": cdk,
    "package_file": getattr(pkg, "__file__", None)}))
"""


class HandlerError(TestingError):
    """The handler raised, timed out, or returned something Lambda could not serialize."""


@dataclass
class Invocation:
    """What one handler run produced."""

    result: Any
    logs: str
    duration_s: float
    cdk_modules: list[str] = field(default_factory=list)
    package_file: str | None = None


def invoke_handler(
    asset_dir: str | os.PathLike[str],
    handler: str,
    event: Mapping[str, Any],
    *,
    environment: Mapping[str, str] | None = None,
    endpoint: str | None = None,
    timeout: float = 60.0,
) -> Invocation:
    """Invoke ``handler`` (``"module.function"``) from ``asset_dir`` with ``event``.

    Parameters
    ----------
    asset_dir
        The Lambda asset directory in ``cdk.out`` (see ``local_deploy.asset_dir``).
    handler
        The function's ``Handler`` property, e.g. ``"orders_api.handler"``.
    event
        The JSON event.
    environment
        The function's environment variables (e.g. from
        ``LocalDeployment.function_environment``). Default none.
    endpoint
        DynamoDB endpoint the handler's boto3 clients use (``AWS_ENDPOINT_URL_DYNAMODB`` and
        ``AWS_ENDPOINT_URL_DYNAMODB_STREAMS``); dummy credentials are set. Default None.
    timeout
        Seconds before the run is killed. Default 60.

    Raises
    ------
    HandlerError
        With the handler's output if it raised, timed out or returned a non-JSON value.
    """
    asset = Path(asset_dir).resolve()
    if not (asset / f"{handler.rpartition('.')[0]}.py").is_file():
        raise HandlerError(f"handler {handler!r} has no module file in asset {str(asset)!r}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))}
    env.update(
        AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local", AWS_DEFAULT_REGION="us-east-1",
        AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true", AWS_LAMBDA_FUNCTION_NAME=handler,
        LAMBDA_TASK_ROOT=str(asset),
    )
    if endpoint:
        env["AWS_ENDPOINT_URL_DYNAMODB"] = endpoint
        env["AWS_ENDPOINT_URL_DYNAMODB_STREAMS"] = endpoint
    env.update(environment or {})
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-B", "-c", _BOOTSTRAP, str(asset), handler, _MARK],
            input=json.dumps(event), capture_output=True, text=True, env=env, cwd=str(asset), timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise HandlerError(f"handler {handler!r} did not finish within {timeout} s") from exc
    duration = time.perf_counter() - started
    out, _, payload = proc.stdout.partition(_MARK)
    logs = out + proc.stderr
    if proc.returncode != 0 or not payload:
        raise HandlerError(f"handler {handler!r} failed (exit {proc.returncode}):\n{logs[-4000:]}")
    data = json.loads(payload)
    return Invocation(
        result=data["result"], logs=logs, duration_s=duration, cdk_modules=data["cdk_modules"],
        package_file=data["package_file"],
    )
