"""The global documents stack: a table replicated to several regions (MREC), a documents API,
a region-affine view counter and this region's audit trail.

The stack is deployed in the table's home region (a concrete ``env`` region: a global table needs
one). Its functions run there; the same functions deployed in a replica region would write that
region's shards and stamps (their ``AWS_REGION``), and each region needs its own ``StreamAudit``
(it audits the changes written in its region only). See README.md for what this app does not
deploy in the replica regions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from constructs_lib import ShardedCounter, SingleTable, StreamAudit, TableFunction

from .model import VIEWS_FAMILY, global_model

HERE = Path(__file__).resolve().parent
#: The home region and the replica regions of the example's table.
HOME_REGION = "us-east-1"
REPLICA_REGIONS = ("eu-west-1",)


class GlobalDocsStack(cdk.Stack):
    """Documents edited in several regions, view counters that stay exact under last-writer-wins,
    and an audit trail recording each change once, in the region that made it.

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    replicas
        The table's replica regions (besides the stack's own). Default :data:`REPLICA_REGIONS`.
    env
        Stack environment; its region is the table's home region. Default :data:`HOME_REGION`.
    description
        Stack description. Default none.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        replicas: Sequence[str] = REPLICA_REGIONS,
        env: cdk.Environment | None = None,
        description: str | None = None,
    ) -> None:
        super().__init__(scope, id, env=env or cdk.Environment(region=HOME_REGION), description=description)
        # A global table always has a stream (MREC replicates through it); the audit needs both images.
        self.data = SingleTable(self, "Data", model=global_model, replicas=list(replicas),
                                stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        # On a replicated table the shards and totals are per region (SUM#<region>, TOTAL#<region>):
        # each region's aggregator adds its own region's writes from its stream to its own total.
        self.views = ShardedCounter(self, "Views", table=self.data, name=VIEWS_FAMILY, shards=4)
        # Audits the changes written in this stack's region through TableClient (which stamps them);
        # counter items carry no stamp, so the event filter already keeps them out.
        self.audit = StreamAudit(self, "Audit", source=self.data)
        self.api = TableFunction(
            self,
            "DocumentsApi",
            table=self.data,
            entry=HERE / "handlers" / "documents_api.py",
            patterns=["doc by id"],
            writes={"Doc": ["put", "update", "delete"]},
            counters=[self.views],
            description="Saves, renames, deletes and counts views of documents in its region",
        )
        cdk.CfnOutput(self, "TableName", value=self.data.table_name)
        cdk.CfnOutput(self, "Regions", value=",".join(self.data.all_regions))
        cdk.CfnOutput(self, "DocumentsApiFunction", value=self.api.function.function_name)
