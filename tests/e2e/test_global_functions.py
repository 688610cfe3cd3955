"""End to end on a replicated table: the functions learn it is replicated from their synthesized
environment, so their writes name their region and each region's audit records them once.

Two stacks (one per region, each the table's home there and replicated to the other) are
synthesized; the harness (``GlobalTables``) deploys the table in both regions; the documents
function and the audit function run from their **synthesized asset directories** with the
**synthesized environment** (plus ``AWS_REGION``), and the audit is fed each region's real stream
through the **synthesized event filters** (``testing/event_filters.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from constructs_lib.runtime.environment import ENV_REPLICA_REGIONS
from constructs_lib.testing import GlobalTables, MappingSettings, StreamRunner
from constructs_lib.testing.handlers import LocalFunction
from constructs_lib.testing.synth import SynthResult

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
REGIONS = ("us-east-1", "eu-west-1")
DOCS_HANDLER = "docs_api.handler"
AUDIT_HANDLER = "constructs_lib.runtime.handlers.audit.handler"


def build(app: Any) -> None:
    """One stack per region: the table (home there, replicated to the other), the documents
    function and that region's audit."""
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as dynamodb

    from constructs_lib import SingleTable, StreamAudit, TableFunction
    from constructs_lib.model import AccessPattern, Entity, Model

    model = Model("globalfns", entities=[Entity("Doc", pk="DOC#{doc_id}", sk="DOC", fields={"doc_id": "string"})],
                  access_patterns=[AccessPattern("doc by id", entity="Doc", sk="=")])
    for region in REGIONS:
        stack = cdk.Stack(app, f"Docs-{region}", env=cdk.Environment(account="000000000000", region=region))
        table = SingleTable(stack, "Data", model=model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
                            deletion_protection=False, removal_policy=cdk.RemovalPolicy.DESTROY,
                            replicas=[r for r in REGIONS if r != region])
        TableFunction(stack, "Docs", table=table, entry=HERE / "global_docs" / "docs_api.py")
        StreamAudit(stack, "Audit", source=table, deletion_protection=False, removal_policy=cdk.RemovalPolicy.DESTROY)


@pytest.fixture(scope="module")
def synthesized(cdk_synth: Any) -> SynthResult:
    result: SynthResult = cdk_synth(build, project_context=False)
    return result


def _function(template: dict[str, Any], handler: str) -> str:
    (lid,) = [lid for lid, r in template["Resources"].items()
              if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == handler]
    return lid


class Region:
    """One region's deployed functions: the documents function and the audit, each warm from its asset."""

    def __init__(self, harness: GlobalTables, synthesized: SynthResult, region: str, local: Any, streams: Any) -> None:
        stack = f"Docs-{region}"
        self.template = synthesized.template(stack)
        docs_id, audit_id = _function(self.template, DOCS_HANDLER), _function(self.template, AUDIT_HANDLER)
        self.docs_env = harness.function_environment(region, docs_id, self.template)
        audit_env = harness.function_environment(region, audit_id, self.template)
        self.docs = LocalFunction(synthesized.asset_dir(docs_id, stack), DOCS_HANDLER, environment=self.docs_env,
                                  endpoint=local.endpoint)
        self.audit = LocalFunction(synthesized.asset_dir(audit_id, stack), AUDIT_HANDLER, environment=audit_env,
                                   endpoint=local.endpoint)
        self.runner = StreamRunner(streams, harness.deployments[region].stream_arn("Data"), self.audit,
                                   settings=MappingSettings.from_template(self.template, function_logical_id=audit_id),
                                   region=region)

    def close(self) -> None:
        self.docs.close()
        self.audit.close()


@pytest.fixture
def world(synthesized: SynthResult, dynamodb_local: Any,
          dynamodb_streams_client: Any) -> Iterator[tuple[GlobalTables, dict[str, Region]]]:
    harness = GlobalTables(
        synthesized.template(f"Docs-{REGIONS[0]}"), regions=REGIONS, streams_client=dynamodb_streams_client,
        tables=["Data"], delay=1.0,
        client_factory=lambda r: boto3.client("dynamodb", **{**dynamodb_local.client_kwargs(), "region_name": r}),
    )
    regions: dict[str, Region] = {}
    try:
        for region in REGIONS:
            regions[region] = Region(harness, synthesized, region, dynamodb_local, dynamodb_streams_client)
        yield harness, regions
    finally:
        for r in regions.values():
            r.close()
        harness.delete()


def test_every_function_on_a_replicated_table_is_told_its_regions(synthesized: SynthResult) -> None:
    # GIVEN the synthesized stacks THEN the documents function and the audit both carry the table's regions
    for region in REGIONS:
        template = synthesized.template(f"Docs-{region}")
        for handler in (DOCS_HANDLER, AUDIT_HANDLER):
            variables = template["Resources"][_function(template, handler)]["Properties"]["Environment"]["Variables"]
            assert variables.get(ENV_REPLICA_REGIONS) == ",".join([region, *[r for r in REGIONS if r != region]]), (
                region, handler, variables)


def test_writes_of_the_deployed_functions_are_stamped_and_audited_once_in_their_region(
    world: tuple[GlobalTables, dict[str, Region]],
) -> None:
    harness, regions = world
    east, west = regions["us-east-1"], regions["eu-west-1"]
    # GIVEN documents written by the synthesized function in each region, each write replicated
    harness.write("us-east-1", lambda: east.docs({"op": "put", "doc_id": "d1", "title": "draft"}))
    harness.write("eu-west-1", lambda: west.docs({"op": "put", "doc_id": "d2", "title": "notes"}))
    harness.settle()
    harness.write("eu-west-1", lambda: west.docs({"op": "update", "doc_id": "d1", "title": "edited in eu"}))
    harness.write("us-east-1", lambda: east.docs({"op": "delete", "doc_id": "d2"}))
    harness.settle()
    # WHEN each region's stream is fed to its own audit through the synthesized mapping
    reports = {region: r.runner.run() for region, r in regions.items()}
    # THEN the items name the region that wrote them last, in both regions
    for region in REGIONS:
        items = {i["PK"]["S"]: i for i in harness.items(region, "Data")}
        assert set(items) == {"DOC#d1"}, (region, items)
        assert items["DOC#d1"]["_origin_region"] == {"S": "eu-west-1"}
        assert items["DOC#d1"]["title"] == {"S": "edited in eu"}
    # AND each region audited exactly the changes written there, each once (replicated copies filtered out)
    audited = {region: sorted((i["event"]["S"], _doc(i)) for i in harness.items(region, "AuditTable"))
               for region in REGIONS}
    assert audited == {
        "us-east-1": [("INSERT", "DOC#d1"), ("REMOVE", "DOC#d2")],
        "eu-west-1": [("INSERT", "DOC#d2"), ("MODIFY", "DOC#d1")],
    }, audited
    for region, report in reports.items():
        assert report.dead_lettered == 0, region
        assert report.filtered_out > 0, (region, "the replicated copies are filtered by the mapping")


def _doc(item: dict[str, Any]) -> str:
    """The audited item's partition key."""
    return str(item["key"]["M"]["PK"]["S"])
