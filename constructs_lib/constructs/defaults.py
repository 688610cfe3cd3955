"""Defaults shared by the constructs. Safe by default: data is retained and recoverable."""

from __future__ import annotations

from ..assets.lambda_platform import LAMBDA_PYTHON_VERSION as _PYTHON_VERSION

#: Lambda settings of generated functions.
LAMBDA_MEMORY_MB = 256
LAMBDA_TIMEOUT_SECONDS = 10
LAMBDA_LOG_RETENTION_DAYS = 30
#: Python runtime of generated functions (a name of ``aws_lambda.Runtime``): the one the assets
#: are built for (``assets.lambda_platform.LAMBDA_PYTHON_VERSION``).
LAMBDA_RUNTIME = "PYTHON_" + _PYTHON_VERSION.replace(".", "_")
#: Prefix of construct annotation ids.
ANNOTATION_PREFIX = "constructs_lib"
#: Operations view (``constructs_lib.constructs.operations.OperationsSettings``): p99 latency alarm threshold (ms),
#: consecutive 5-minute periods it must hold, and the provisioned-capacity utilization alarm.
OPS_LATENCY_P99_MS = 50.0
OPS_LATENCY_PERIODS = 3
OPS_CAPACITY_UTILIZATION = 0.8
#: Global tables (MREC): ``ReplicationLatency`` alarm threshold (ms, the Average per 5 minutes)
#: and the consecutive periods it must hold (docs/adr/0054-global-tables.md).
OPS_REPLICATION_LATENCY_MS = 5000.0
OPS_REPLICATION_PERIODS = 3
