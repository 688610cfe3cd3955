"""``Backfill``: a generated Lambda function that rewrites derived keys of existing items.

It runs :mod:`constructs_lib.runtime.handlers.backfill` with the table's model: invoked with
``{"action": "start"}`` it fans out one asynchronous invocation per Scan segment; each segment
works within its share of the write budget, checkpoints in the table and re-invokes itself
before its timeout until done; ``{"action": "status"}`` returns the report. Start it from the
console, ``aws lambda invoke`` or ``python -m constructs_lib backfill --function NAME``.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct

from ..runtime.environment import ENV_BACKFILL_SPEC, ENV_TABLE_NAME
from ..runtime.exceptions import BackfillError
from ..runtime.patterns.backfill import BackfillSpec
from . import perms
from .bound_table import ModelBoundTable
from .exceptions import ConstructPropsError
from .function import bundled_function

#: What a backfill does to the table: scan it, read one item back, write keys and checkpoints.
BACKFILL_ACTIONS = ("dynamodb:Scan", "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem",
                    "dynamodb:DescribeTable")


class Backfill(Construct):
    """A resumable, rate-limited backfill job of ``table``'s derived keys.

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    table
        The table (a ``SingleTable`` or an imported one); its model builds the keys.
    wcu_per_second
        Write budget of the whole job in WCU per second, checkpoints included; each segment
        gets an equal share. Default 100.
    segments
        Parallel Scan segments (one function invocation each). Default 4.
    indexes
        Index names to recompute. Default None: every index of the model.
    job_id
        Names the job's checkpoints; change it to run the job again from the start. Default
        ``"default"``.
    timeout
        Per invocation (a segment re-invokes itself before it ends). Default 15 minutes.
    memory_size
        MB. Default 256.
    log_retention
        Default one month.

    Attributes
    ----------
    function
        The Lambda function. ``spec`` is the job's :class:`BackfillSpec`.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        table: ModelBoundTable,
        wcu_per_second: float = 100.0,
        segments: int = 4,
        indexes: Sequence[str] | None = None,
        job_id: str = "default",
        timeout: cdk.Duration | None = None,
        memory_size: int = 256,
        log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH,
    ) -> None:
        super().__init__(scope, id)
        if not isinstance(table, ModelBoundTable):
            raise ConstructPropsError(f"Backfill {id!r}: table must be a SingleTable (or an imported one), got {table!r}")
        try:
            self.spec = BackfillSpec(job_id=job_id, segments=segments, wcu_per_second=wcu_per_second,
                                     indexes=tuple(indexes) if indexes is not None else None)
        except BackfillError as exc:
            raise ConstructPropsError(f"Backfill {id!r}: {exc}") from None
        unknown = [i for i in indexes or () if i not in table.model.indexes]
        if unknown:
            raise ConstructPropsError(
                f"Backfill {id!r}: indexes {unknown!r} are not indexes of model {table.model.name!r} "
                f"({', '.join(table.model.indexes) or 'none'})"
            )
        self.table = table
        self.function, self.log_group = bundled_function(
            self,
            model=table.model,
            handler="constructs_lib.runtime.handlers.backfill.handler",
            environment={ENV_TABLE_NAME: table.table_name, ENV_BACKFILL_SPEC: self.spec.to_json(), **table.runtime_environment},
            memory_size=memory_size,
            timeout=timeout or cdk.Duration.minutes(15),
            log_retention=log_retention,
            description=f"Backfill of derived keys ({table.model.name}, job {job_id})",
        )
        table._grant(self.function, BACKFILL_ACTIONS, kms=perms.KMS_ENCRYPT_DECRYPT)
        # Fan-out and resumption invoke the function itself. A separate policy, so the function
        # (which depends on its role's default policy) does not depend on its own ARN.
        role = self.function.role
        assert role is not None  # a Function made without a role creates one
        iam.Policy(self, "InvokeSelf", roles=[role], statements=[iam.PolicyStatement(
            actions=["lambda:InvokeFunction"], resources=[self.function.function_arn],
        )])
