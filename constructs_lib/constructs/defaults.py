"""Defaults shared by the constructs. Safe by default: data is retained and recoverable."""

from __future__ import annotations

#: Lambda settings of generated functions.
LAMBDA_MEMORY_MB = 256
LAMBDA_TIMEOUT_SECONDS = 10
LAMBDA_LOG_RETENTION_DAYS = 30
#: Python runtime of generated functions (a name of ``aws_lambda.Runtime``).
LAMBDA_RUNTIME = "PYTHON_3_13"
#: The same runtime's Python version, for installing a function's dependencies (pip
#: ``--python-version``); tests/unit checks it agrees with ``LAMBDA_RUNTIME``.
LAMBDA_PYTHON_VERSION = "3.13"
#: glibc minor version of the runtime's OS (python3.12+ run on Amazon Linux 2023, glibc 2.34):
#: the newest ``manylinux_2_<minor>`` wheel tag a function's dependencies may use.
LAMBDA_GLIBC_MINOR = 34
#: Prefix of construct annotation ids.
ANNOTATION_PREFIX = "constructs_lib"
#: Operations view (``constructs_lib.constructs.operations.Operations``): p99 latency alarm threshold (ms),
#: consecutive 5-minute periods it must hold, and the provisioned-capacity utilization alarm.
OPS_LATENCY_P99_MS = 50.0
OPS_LATENCY_PERIODS = 3
OPS_CAPACITY_UTILIZATION = 0.8
