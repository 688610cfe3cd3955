"""The environment contract: every variable the constructs set on a generated function and the
runtime reads, in one place (docs/adr/0047-runtime-modules-by-concern.md).

The constructs import these names to set the variables; the runtime imports them to read them;
tests and the local deploy import them to override them. Nothing else spells a variable's name.
"""

from __future__ import annotations

# The table and its client (TableClient.from_environment) -------------------------------------------
#: The table's name. Set by ``TableFunction`` and every pattern's function.
ENV_TABLE_NAME = "TABLE_NAME"
#: Optional secret that signs pagination cursors (see ``TableClient(cursor_key=...)``). Never set
#: by the constructs: the deployer sets it when cursors must not be forgeable by their readers.
ENV_CURSOR_KEY = "CONSTRUCTS_LIB_CURSOR_KEY"
#: Comma-separated names of the model's indexes the table does not have yet (a GSI rollout);
#: queries on them raise ``IndexNotReadyError``. Set by ``SingleTable`` during a rollout.
ENV_UNAVAILABLE_INDEXES = "CONSTRUCTS_LIB_UNAVAILABLE_INDEXES"

# The bundled model and the published contract (runtime/contract.py) --------------------------------
#: Overrides where the bundled model JSON is read from (default: :data:`MODEL_FILE` at the asset root).
ENV_MODEL_PATH = "CONSTRUCTS_LIB_MODEL_PATH"
#: File name of the model JSON the bundler writes at the root of a function's asset.
MODEL_FILE = "model.json"
#: The fingerprint of the deployed table's model, when an imported table pins one.
ENV_MODEL_FINGERPRINT = "CONSTRUCTS_LIB_MODEL_FINGERPRINT"
#: The SSM parameter holding the table's published contract, on a table imported from parameters.
ENV_CONTRACT_PARAMETER = "CONSTRUCTS_LIB_CONTRACT_PARAMETER"

# Least privilege (runtime/scope.py) -----------------------------------------------------------------
#: The function's declared access scope as JSON. Set by ``TableFunction(patterns=, writes=, ...)``.
ENV_ACCESS_SCOPE = "CONSTRUCTS_LIB_ACCESS_SCOPE"

# Stream audit (runtime/patterns/audit, runtime/handlers/audit.py) -----------------------------------
#: The ``AuditSpec`` as JSON. Set by ``StreamAudit``.
ENV_AUDIT_SPEC = "CONSTRUCTS_LIB_AUDIT"
#: The audit table's name. Set by ``StreamAudit``.
ENV_AUDIT_TABLE = "AUDIT_TABLE_NAME"
#: The audited (source) table's name. Set by ``StreamAudit``.
ENV_SOURCE_TABLE = "SOURCE_TABLE_NAME"
#: The redaction salt as text (local runs and tests; the constructs never set it).
ENV_AUDIT_SALT = "CONSTRUCTS_LIB_AUDIT_SALT"
#: The ARN of the Secrets Manager secret holding the redaction salt. Set by ``StreamAudit``.
ENV_AUDIT_SALT_SECRET = "CONSTRUCTS_LIB_AUDIT_SALT_SECRET_ARN"

# Sharded counter (runtime/patterns/counter, runtime/handlers/counter.py) ----------------------------
#: Prefix of the variable holding a family's ``CounterSpec`` as JSON (``CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS``).
#: Set by ``ShardedCounter`` on its aggregator and on functions granted the counter.
ENV_COUNTER_PREFIX = "CONSTRUCTS_LIB_COUNTER_"
#: The family an aggregator serves. Set by ``ShardedCounter`` on its aggregator.
ENV_COUNTER_FAMILY = "CONSTRUCTS_LIB_COUNTER_FAMILY"
#: URL of the aggregator's failure queue, which a re-drive event reads. Set by ``ShardedCounter``
#: (not under ``ENV_COUNTER_PREFIX``: no family name can collide with it).
ENV_COUNTER_FAILURE_QUEUE = "CONSTRUCTS_LIB_AGGREGATOR_FAILURE_QUEUE"

# Global tables (runtime/replication.py; docs/adr/0055-patterns-under-global-tables.md) ------------
#: The region the function runs in. Set by AWS Lambda itself on every function (never by us).
ENV_REGION = "AWS_REGION"
#: Comma-separated regions of a replicated table (a global table with more than one replica).
#: Set by the constructs when the table has replicas; absent or empty on a single-region table.
ENV_REPLICA_REGIONS = "CONSTRUCTS_LIB_REPLICA_REGIONS"

# Backfill (runtime/patterns/backfill, runtime/handlers/backfill.py) ---------------------------------
#: The ``BackfillSpec`` as JSON. Set by ``Backfill``.
ENV_BACKFILL_SPEC = "CONSTRUCTS_LIB_BACKFILL_SPEC"

__all__ = [
    "ENV_ACCESS_SCOPE",
    "ENV_AUDIT_SALT",
    "ENV_AUDIT_SALT_SECRET",
    "ENV_AUDIT_SPEC",
    "ENV_AUDIT_TABLE",
    "ENV_BACKFILL_SPEC",
    "ENV_CONTRACT_PARAMETER",
    "ENV_COUNTER_FAILURE_QUEUE",
    "ENV_COUNTER_FAMILY",
    "ENV_COUNTER_PREFIX",
    "ENV_CURSOR_KEY",
    "ENV_MODEL_FINGERPRINT",
    "ENV_MODEL_PATH",
    "ENV_REGION",
    "ENV_REPLICA_REGIONS",
    "ENV_SOURCE_TABLE",
    "ENV_TABLE_NAME",
    "ENV_UNAVAILABLE_INDEXES",
    "MODEL_FILE",
]
