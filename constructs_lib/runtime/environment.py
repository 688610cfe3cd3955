# from client.py
#: Environment variables a generated Lambda function receives.
ENV_TABLE_NAME = "TABLE_NAME"
#: Optional secret that signs pagination cursors (see ``TableClient(cursor_key=...)``).
ENV_CURSOR_KEY = "CONSTRUCTS_LIB_CURSOR_KEY"
#: Comma-separated names of the model's indexes the table does not have yet (a GSI rollout).
ENV_UNAVAILABLE_INDEXES = "CONSTRUCTS_LIB_UNAVAILABLE_INDEXES"

# from contract.py
#: Environment variable overriding where the bundled model JSON is read from.
ENV_MODEL_PATH = "CONSTRUCTS_LIB_MODEL_PATH"
#: File name of the model JSON at the root of a bundled asset.
MODEL_FILE = "model.json"
#: Environment variable holding the fingerprint of the deployed table's model.
ENV_MODEL_FINGERPRINT = "CONSTRUCTS_LIB_MODEL_FINGERPRINT"
#: Environment variable naming the SSM parameter holding the table's published contract.
ENV_CONTRACT_PARAMETER = "CONSTRUCTS_LIB_CONTRACT_PARAMETER"
# from scope.py
#: Environment variable holding the function's declared scope (JSON), set by ``TableFunction``.
ENV_ACCESS_SCOPE = "CONSTRUCTS_LIB_ACCESS_SCOPE"
# from patterns/audit/spec.py
ENV_SPEC, ENV_AUDIT_TABLE, ENV_SOURCE_TABLE = "CONSTRUCTS_LIB_AUDIT", "AUDIT_TABLE_NAME", "SOURCE_TABLE_NAME"
#: The redaction salt: as text (local runs, tests), or the ARN of the Secrets Manager secret holding it.
ENV_SALT, ENV_SALT_SECRET = "CONSTRUCTS_LIB_AUDIT_SALT", "CONSTRUCTS_LIB_AUDIT_SALT_SECRET_ARN"
# from patterns/backfill/spec.py
#: Environment variable holding the spec JSON of a generated backfill function.
ENV_SPEC = "CONSTRUCTS_LIB_BACKFILL_SPEC"
# from patterns/counter/spec.py
#: Environment variable prefix holding a family's spec (``CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS``).
ENV_PREFIX = "CONSTRUCTS_LIB_COUNTER_"
#: Environment variable naming the family an aggregator serves.
ENV_FAMILY = "CONSTRUCTS_LIB_COUNTER_FAMILY"
