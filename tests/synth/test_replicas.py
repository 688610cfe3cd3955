"""Global tables: ``SingleTable(replicas=..., multi_region_consistency=...)``.

The replica spec is checked against the limits AWS documents (docs/adr/0054-global-tables.md);
under MREC what the model or a construct declares that needs cross-Region agreement is refused
unless acknowledged, under MRSC what DynamoDB does not support is refused; each replica Region
gets a ``ReplicationLatency`` alarm; the contract file names the replication; grants for a
function in a replica Region are proven with the IAM policy evaluator the scope tests use.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Template

from constructs_lib import ConstructPropsError, OperationsSettings, Replica, ShardedCounter, SingleTable, TableFunction
from constructs_lib.model import AccessPattern, Entity, Index, IndexKey, Model
from constructs_lib.model.contract_file import read_contract

REPO = Path(__file__).resolve().parents[2]
EVALUATOR = Path(__file__).with_name("iam_evaluate.mjs")
HANDLER = REPO / "examples" / "shop" / "handlers" / "orders_api.py"
ACCOUNT, HOME, WEST, SYDNEY = "111111111111", "eu-west-1", "us-east-1", "ap-southeast-2"
ACK = {"version:User": "users are edited only through the API of their home Region (routing by user id)"}


def stack(name: str, region: str | None = HOME) -> cdk.Stack:
    env = cdk.Environment(account=ACCOUNT, region=region) if region else None
    return cdk.Stack(cdk.App(), name, env=env)


def plain_model(*, ttl: str | None = None, lsi: bool = False) -> Model:
    """One entity, no version attribute; optionally TTL and an LSI."""
    indexes = {"ByDate": IndexKey(sk="{created_at}")} if lsi else {}
    return Model(
        "notes",
        entities=[Entity("Note", pk="NOTE#{note_id}", sk="NOTE", fields=["note_id", "created_at"], indexes=indexes)],
        indexes=[Index("ByDate", kind="LSI")] if lsi else [],
        access_patterns=[AccessPattern("note by id", entity="Note", sk="=")]
        + ([AccessPattern("notes by date", entity="Note", index="ByDate")] if lsi else []),
        ttl_attribute=ttl,
    )


# The global table, synthesized once -----------------------------------------------------------------
@pytest.fixture(scope="module")
def global_table(shop_model: Model) -> tuple[SingleTable, Mapping[str, Any]]:
    s = stack("GlobalStack")
    table = SingleTable(
        s, "Data", model=shop_model,
        replicas=[Replica(WEST, point_in_time_recovery=False, deletion_protection=False, tags={"team": "orders"}),
                  SYDNEY],
        acknowledge_mrec=ACK, operations=OperationsSettings(),
    )
    return table, Template.from_stack(s).to_json()


def global_table_resource(template: Mapping[str, Any]) -> Mapping[str, Any]:
    (props,) = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::DynamoDB::GlobalTable"]
    return cast(Mapping[str, Any], props)


def test_replicas_synthesize_with_their_own_settings(global_table: tuple[SingleTable, Mapping[str, Any]]) -> None:
    # GIVEN a table in eu-west-1 replicated to us-east-1 (own settings) and ap-southeast-2 (the table's)
    table, template = global_table
    props = global_table_resource(template)
    replicas = {r["Region"]: r for r in props["Replicas"]}
    # THEN the GlobalTable has the three Regions, each replica with its settings
    assert set(replicas) == {HOME, WEST, SYDNEY}
    assert replicas[WEST]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": False}
    assert replicas[WEST]["DeletionProtectionEnabled"] is False
    assert replicas[WEST]["Tags"] == [{"Key": "team", "Value": "orders"}]
    assert replicas[SYDNEY]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert replicas[SYDNEY]["DeletionProtectionEnabled"] is True
    # AND the stream global tables need (MREC replicates through it), recorded on the construct
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert table.stream_view_type == dynamodb.StreamViewType.NEW_AND_OLD_IMAGES
    # AND the bound table tells pattern constructs where it is replicated
    assert table.replica_regions == (WEST, SYDNEY)
    assert table.multi_region_consistency == "EVENTUAL"
    assert table.home_region == HOME
    assert "MultiRegionConsistency" not in props


def test_each_replica_region_has_a_replication_latency_alarm(global_table: tuple[SingleTable, Mapping[str, Any]]) -> None:
    # GIVEN the operations view of the global table
    table, template = global_table
    assert table.operations is not None
    alarms = [r["Properties"] for r in template["Resources"].values()
              if r["Type"] == "AWS::CloudWatch::Alarm" and r["Properties"].get("MetricName") == "ReplicationLatency"]
    # THEN one alarm per replica Region, on TableName + ReceivingRegion, average above 5 s for 3 × 5 minutes
    regions = sorted(d["Value"] for a in alarms for d in a["Dimensions"] if d["Name"] == "ReceivingRegion")
    assert regions == sorted([WEST, SYDNEY])
    for alarm in alarms:
        assert {d["Name"] for d in alarm["Dimensions"]} == {"TableName", "ReceivingRegion"}
        assert (alarm["Statistic"], alarm["Threshold"], alarm["EvaluationPeriods"], alarm["Period"]) == (
            "Average", 5000, 3, 300)
    assert {f"{WEST}/ReplicationLatency", f"{SYDNEY}/ReplicationLatency"} <= set(table.operations.alarms)
    # AND the dashboard graphs it
    dashboards = [json.dumps(r["Properties"]) for r in template["Resources"].values()
                  if r["Type"] == "AWS::CloudWatch::Dashboard"]
    assert any("ReplicationLatency" in d and SYDNEY in d for d in dashboards)
    # AND docs/operations.md documents the alarm key kind
    assert "`<region>/ReplicationLatency`" in (REPO / "docs" / "operations.md").read_text(encoding="utf-8")


def test_the_contract_names_the_replication(global_table: tuple[SingleTable, Mapping[str, Any]], tmp_path: Path) -> None:
    # GIVEN the global table's contract file
    table, _ = global_table
    text = table.contract_json()
    replication = json.loads(text)["table"]["replication"]
    # THEN it names the consistency, the Regions and each acknowledgement with its reason
    assert replication == {"consistency": "EVENTUAL", "region": HOME, "replica_regions": [WEST, SYDNEY],
                           "witness_region": None, "acknowledged": ACK}
    # AND it reads back, and a consumer importing through it sees the same Regions
    path = tmp_path / "shop.contract.json"
    path.write_text(text, encoding="utf-8")
    assert read_contract(path, Model).table["replication"] == replication
    imported = SingleTable.from_parameters(stack("Consumer"), "Shop", parameter_prefix="/shop/data", contract=path)
    assert (imported.replica_regions, imported.multi_region_consistency, imported.home_region) == (
        (WEST, SYDNEY), "EVENTUAL", HOME)


def test_a_single_region_contract_has_no_replication(shop_model: Model) -> None:
    # GIVEN a table without replicas THEN its contract has no replication field (the file is unchanged)
    table = SingleTable(stack("Single"), "Data", model=shop_model)
    assert "replication" not in json.loads(table.contract_json())["table"]
    assert (table.replica_regions, table.multi_region_consistency) == ((), None)


# Validation --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"replicas": [WEST, WEST]}, r"replica Region 'us-east-1' is listed twice"),
    ({"replicas": [HOME]}, r"replica Region 'eu-west-1' is the stack's own Region"),
    ({"replicas": ["mars-1"]}, r"Replica region 'mars-1' must be a literal AWS Region"),
    ({"replicas": [WEST], "multi_region_consistency": "SOMETIMES"}, r"multi_region_consistency 'SOMETIMES' must be"),
    ({"replicas": [WEST], "witness_region": "us-east-2"}, r"witness_region='us-east-2' applies to .*'STRONG' only"),
    ({"multi_region_consistency": "STRONG"}, r"multi_region_consistency='STRONG' applies to a global table only"),
    ({"replicas": [WEST], "acknowledge_mrec": {"lock:Note": "because it is fine here"}},
     r"acknowledge_mrec key 'lock:Note' must be '<kind>:<subject>'"),
    ({"replicas": [WEST], "acknowledge_mrec": {"version:Note": "because it is fine here"}},
     r"entity 'Note' has no version_attribute"),
    ({"replicas": [WEST], "acknowledge_mrec": {"transaction:Nope": "because it is fine here"}},
     r"'transaction:Nope' names no entity"),
    ({"replicas": [WEST], "acknowledge_mrec": {"transaction:Note": " "}}, r"needs a reason"),
    ({"replicas": [WEST], "billing": dynamodb.Billing.provisioned(read_capacity=dynamodb.Capacity.fixed(5),
                                                                  write_capacity=dynamodb.Capacity.fixed(5))},
     r"TableV2 refuses these global-table settings .*FIXED"),
])
def test_replica_specs_are_checked(kwargs: dict[str, Any], message: str) -> None:
    # GIVEN a replica setting that breaks a documented rule WHEN the table is built THEN a typed error names it
    with pytest.raises(ConstructPropsError, match=message):
        SingleTable(stack("Check"), "Data", model=plain_model(), **kwargs)


def test_a_region_agnostic_stack_cannot_have_replicas() -> None:
    # GIVEN a stack without a concrete Region THEN replicas are refused, naming what to give
    with pytest.raises(ConstructPropsError, match=r"need the stack's own Region to be concrete.*env=cdk.Environment"):
        SingleTable(stack("Agnostic", region=None), "Data", model=plain_model(), replicas=[WEST])


def test_a_customer_managed_key_needs_a_key_per_replica_region() -> None:
    s = stack("Cmk")
    key = kms.Key(s, "Key", enable_key_rotation=True)
    # GIVEN a CMK without a key for the replica Region THEN it is refused, naming the Region
    with pytest.raises(ConstructPropsError, match=r"replica Region\(s\) \['us-east-1'\] have no key"):
        SingleTable(s, "Data", model=plain_model(), replicas=[WEST],
                    encryption=dynamodb.TableEncryptionV2.customer_managed_key(key))


@pytest.mark.parametrize(("region", "kwargs", "message"), [
    ("eu-west-1", {"replicas": [WEST, "us-east-2"]}, r"\['us-east-1', 'us-east-2'\] are not in the EU Region set"),
    ("sa-east-1", {"replicas": [WEST, "us-east-2"]}, r"'sa-east-1' is in no MRSC Region set"),
    ("us-east-1", {"replicas": ["us-west-2"]}, r"exactly 3 Regions .* in 2"),
    ("us-east-1", {"replicas": ["us-west-2", "us-east-2"], "witness_region": "us-east-2"},
     r"witness_region 'us-east-2' must be another Region"),
])
def test_mrsc_region_rules(region: str, kwargs: dict[str, Any], message: str) -> None:
    # GIVEN an MRSC table breaking a Region rule AWS documents THEN a typed error names the Regions
    with pytest.raises(ConstructPropsError, match=message):
        SingleTable(stack("Mrsc", region), "Data", model=plain_model(), multi_region_consistency="STRONG", **kwargs)


@pytest.mark.parametrize(("model_kwargs", "message"), [
    ({"ttl": "expires_at"}, r"ttl_attribute 'expires_at', but Time to Live \(TTL\) is not supported for MRSC"),
    ({"lsi": True}, r"LSI\(s\) \['ByDate'\], but local secondary indexes \(LSIs\) are not supported for MRSC"),
])
def test_mrsc_refuses_ttl_and_lsis(model_kwargs: dict[str, Any], message: str) -> None:
    # GIVEN a model with TTL or an LSI WHEN it becomes an MRSC table THEN the AWS limit is named
    with pytest.raises(ConstructPropsError, match=message):
        SingleTable(stack("MrscModel", "us-east-1"), "Data", model=plain_model(**model_kwargs),
                    replicas=["us-west-2", "us-east-2"], multi_region_consistency="STRONG")


def test_mrsc_with_a_witness_synthesizes_without_a_replication_alarm() -> None:
    # GIVEN an MRSC table in us-east-1 with one replica and a witness
    s = stack("Strong", "us-east-1")
    table = SingleTable(s, "Data", model=plain_model(), replicas=["us-west-2"], witness_region="us-east-2",
                        multi_region_consistency="STRONG", operations=OperationsSettings())
    props = global_table_resource(Template.from_stack(s).to_json())
    # THEN the template says STRONG with the witness, and no ReplicationLatency alarm (MRSC publishes none)
    assert props["MultiRegionConsistency"] == "STRONG"
    assert props["GlobalTableWitnesses"] == [{"Region": "us-east-2"}]
    assert table.operations is not None
    assert not [k for k in table.operations.alarms if k.endswith("ReplicationLatency")]
    assert json.loads(table.contract_json())["table"]["replication"]["witness_region"] == "us-east-2"


# Refusing what cannot be promised ---------------------------------------------------------------------
def test_mrec_refuses_a_versioned_entity_unless_acknowledged(shop_model: Model) -> None:
    # GIVEN the shop model (User has a version attribute) replicated with MREC
    with pytest.raises(ConstructPropsError, match=r"entity 'User' \(version_attribute 'version'\) relies on "
                                                   r"optimistic locking.*acknowledge_mrec=\{'version:User'"):
        SingleTable(stack("Versioned"), "Data", model=shop_model, replicas=[WEST])
    # WHEN the per-Region versioning is acknowledged THEN the table is built
    assert SingleTable(stack("Acked"), "Data", model=shop_model, replicas=[WEST], acknowledge_mrec=ACK).replication


def test_transaction_writes_are_refused_unless_acknowledged(shop_model: Model) -> None:
    patterns, writes = ["order by id"], {"Order": ["transaction_put", "update"]}
    # GIVEN a function declaring transaction writes of Order on an MREC table
    s = stack("Tx")
    table = SingleTable(s, "Data", model=shop_model, replicas=[WEST], acknowledge_mrec=ACK)
    with pytest.raises(ConstructPropsError, match=r"TableFunction 'Api': the transaction writes "
                                                   r"\['transaction_put'\] of entity 'Order' relies on transactions"):
        TableFunction(s, "Api", table=table, entry=HANDLER, patterns=patterns, writes=writes)
    # AND a role granted the same scope directly is refused too
    role = iam.Role(s, "Role", assumed_by=iam.AccountRootPrincipal())
    from constructs_lib.model import AccessScope

    with pytest.raises(ConstructPropsError, match=r"'transaction:Order'"):
        table.grant_scope(role, AccessScope(patterns=patterns, writes=writes))
    # WHEN acknowledged THEN the function is built
    s2 = stack("TxAcked")
    acked = SingleTable(s2, "Data", model=shop_model, replicas=[WEST],
                        acknowledge_mrec={**ACK, "transaction:Order": "orders are placed in the user's home Region only"})
    assert TableFunction(s2, "Api", table=acked, entry=HANDLER, patterns=patterns, writes=writes).scope is not None


def test_mrsc_refuses_transactions_and_idempotent_counters() -> None:
    # GIVEN an MRSC table
    s = stack("StrongTx", "us-east-1")
    table = SingleTable(s, "Data", model=plain_model(), replicas=["us-west-2", "us-east-2"],
                        multi_region_consistency="STRONG")
    # THEN transaction writes are refused, naming the AWS limit
    with pytest.raises(ConstructPropsError, match=r"cannot run on a table with multi-Region strong consistency.*"
                                                   r"do not support transaction operations"):
        TableFunction(s, "Api", table=table, entry=HANDLER, patterns=["note by id"], writes={"Note": ["transaction_put"]})
    # AND so are idempotent increments (TransactWriteItems)
    with pytest.raises(ConstructPropsError, match=r"ShardedCounter 'Views': idempotent increments"):
        ShardedCounter(s, "Views", table=table, name="views", shards=2, idempotency_window=cdk.Duration.hours(1),
                       schedule=cdk.Duration.minutes(5), scheduled_counters=["home"])


def test_mrec_refuses_idempotent_counters_unless_acknowledged() -> None:
    # GIVEN an MREC table and a counter deduplicating increments
    s = stack("Counter")
    table = SingleTable(s, "Data", model=plain_model(ttl="expires_at"), replicas=[WEST])
    with pytest.raises(ConstructPropsError, match=r"counter 'views' with idempotency_window relies on idempotent "
                                                   r"increments.*'counter:views'"):
        ShardedCounter(s, "Views", table=table, name="views", shards=2, idempotency_window=cdk.Duration.hours(1))
    # WHEN acknowledged THEN the counter is built
    s2 = stack("CounterAcked")
    acked = SingleTable(s2, "Data", model=plain_model(ttl="expires_at"), replicas=[WEST],
                        acknowledge_mrec={"counter:views": "clients retry in the Region they first called"})
    assert ShardedCounter(s2, "Views", table=acked, name="views", shards=2,
                          idempotency_window=cdk.Duration.hours(1)).spec.idempotent


def test_replica_arn_of_a_region_the_table_is_not_in_is_refused(global_table: tuple[SingleTable, Any]) -> None:
    table, _ = global_table
    with pytest.raises(ConstructPropsError, match=r"has no replica in Region 'us-west-2'"):
        table.replica_arn("us-west-2")


# Grants per Region, proven with the IAM evaluator ---------------------------------------------------------
def resolve(value: Any, template: Mapping[str, Any]) -> Any:
    """Concrete ARNs for the intrinsics of these policies (the table's name is its logical id)."""
    if isinstance(value, list):
        return [resolve(v, template) for v in value]
    if not isinstance(value, dict):
        return value
    if "Fn::GetAtt" in value:
        return f"arn:aws:dynamodb:{HOME}:{ACCOUNT}:table/{value['Fn::GetAtt'][0]}"
    if "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(str(resolve(p, template)) for p in parts)
    if "Ref" in value:
        return {"AWS::Partition": "aws", "AWS::Region": HOME, "AWS::AccountId": ACCOUNT}.get(value["Ref"], value["Ref"])
    return {k: resolve(v, template) for k, v in value.items()}


@pytest.fixture(scope="module")
def region_grants(shop_model: Model) -> tuple[dict[str, dict[str, Any]], str]:
    """Roles granted read/write on the home table and on each replica; their resolved policies."""
    if shutil.which("node") is None or not (REPO / "node_modules" / "@cloud-copilot" / "iam-simulate").is_dir():
        pytest.fail("@cloud-copilot/iam-simulate is not installed: run `npm ci`")
    s = stack("Grants")
    table = SingleTable(s, "Data", model=shop_model, replicas=[WEST, SYDNEY], acknowledge_mrec=ACK)
    roles = {}
    for region in (HOME, WEST, SYDNEY):
        role = iam.Role(s, f"Role-{region}", assumed_by=iam.AccountRootPrincipal())
        table.grant_read_write_data(role, region=None if region == HOME else region)
        roles[region] = role
    template = Template.from_stack(s).to_json()
    policies = {}
    for region, role in roles.items():
        role_id = s.get_logical_id(cast(cdk.CfnElement, role.node.default_child))
        statements = [st for r in template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
                      and {"Ref": role_id} in r["Properties"]["Roles"] for st in r["Properties"]["PolicyDocument"]["Statement"]]
        policies[region] = {"Version": "2012-10-17", "Statement": resolve(statements, template)}
    table_id = s.get_logical_id(cast(cdk.CfnElement, table.table.node.default_child))
    return policies, table_id


def test_grants_per_region_allow_only_that_replica(region_grants: tuple[dict[str, dict[str, Any]], str]) -> None:
    policies, table_id = region_grants
    cases, expected = [], []
    for granted, policy in policies.items():
        for region in (HOME, WEST, SYDNEY):
            for name, suffix in ((table_id, ""), (table_id, "/index/GSI1"), ("OtherTable", "")):
                for action in ("dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem"):
                    if action != "dynamodb:Query" and suffix:
                        continue
                    cases.append({"policies": [policy], "principal": f"arn:aws:iam::{ACCOUNT}:role/r", "account": ACCOUNT,
                                  "action": action, "resource": f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{name}{suffix}",
                                  "context": {}})
                    expected.append("Allowed" if region == granted and name == table_id else "ImplicitlyDenied")
    # GIVEN a role per Region, granted read/write on that Region's replica
    # WHEN the evaluator decides GetItem/Query/PutItem on every Region's replica and on another table
    out = subprocess.run(["node", str(EVALUATOR)], input=json.dumps({"cases": cases}), capture_output=True,
                         text=True, cwd=REPO, check=True, timeout=300)
    decisions = [d["result"] for d in json.loads(out.stdout)["decisions"]]
    # THEN exactly its own Region's table and indexes are allowed; other Regions and tables are denied
    wrong = [(c["action"], c["resource"], e, d) for c, e, d in zip(cases, expected, decisions, strict=True) if e != d]
    assert wrong == []
    assert expected.count("Allowed") == 3 * 4 and expected.count("ImplicitlyDenied") > 3 * 4
