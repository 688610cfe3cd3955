"""The model as a published contract: the producer's SSM parameters (SingleTable(publish=...)),
the consumer's import (SingleTable.from_parameters) and its compatibility checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template

from constructs_lib import (
    ConstructPropsError,
    ModelContract,
    ShardedCounter,
    SingleTable,
    StreamAudit,
    TableFunction,
)
from constructs_lib.constructs.exceptions import ContractParameterSizeError
from constructs_lib.constructs.model_contract import ADVANCED_LIMIT, STANDARD_LIMIT
from constructs_lib.model import Entity, Model
from constructs_lib.model.fingerprints import entity_fingerprints, index_fingerprints
from constructs_lib.model.slices import published_json, read_published
from constructs_lib.runtime.contract import fingerprint
from constructs_lib.runtime.environment import ENV_CONTRACT_PARAMETER, ENV_MODEL_FINGERPRINT

HANDLER = Path(__file__).resolve().parents[2] / "examples" / "shop" / "handlers" / "orders_api.py"
NEW_AND_OLD = dynamodb.StreamViewType.NEW_AND_OLD_IMAGES
PREFIX = "/shop/data"


def parameters(template: Template) -> dict[str, dict[str, Any]]:
    """Parameter name -> properties of every AWS::SSM::Parameter."""
    return {r["Properties"]["Name"]: r["Properties"] for r in template.find_resources("AWS::SSM::Parameter").values()}


def big_model(entities: int) -> Model:
    """A model whose JSON grows with the number of entities."""
    return Model("big", entities=[
        Entity(f"Thing{n:03d}", pk=f"THING{n:03d}#{{thing_id}}", sk="THING", fields=["thing_id"],
               description="x" * 40) for n in range(entities)
    ])


# The producer -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def producer(shop_model: Model) -> Template:
    stack = cdk.Stack(cdk.App(), "Producer")
    SingleTable(stack, "Data", model=shop_model, stream=NEW_AND_OLD, publish=ModelContract(parameter_prefix=PREFIX))
    return Template.from_stack(stack)


def test_producer_publishes_name_arns_fingerprint_and_model(producer: Template, shop_model: Model) -> None:
    # GIVEN a table with a stream publishing its contract
    found = parameters(producer)
    (table_id,) = producer.find_resources("AWS::DynamoDB::GlobalTable")
    # THEN one String parameter per value, under the prefix
    assert sorted(found) == [f"{PREFIX}/{n}" for n in
                             ("contract", "model", "model-fingerprint", "stream-arn", "table-arn", "table-name")]
    assert {p["Type"] for p in found.values()} == {"String"}
    # AND the values refer to the table itself
    assert found[f"{PREFIX}/table-name"]["Value"] == {"Ref": table_id}
    assert found[f"{PREFIX}/table-arn"]["Value"] == {"Fn::GetAtt": [table_id, "Arn"]}
    assert found[f"{PREFIX}/stream-arn"]["Value"] == {"Fn::GetAtt": [table_id, "StreamArn"]}
    # AND the fingerprint and the model are literals: the key-schema fingerprint and the compact JSON
    assert found[f"{PREFIX}/model-fingerprint"]["Value"] == fingerprint(shop_model)
    assert Model.from_json(found[f"{PREFIX}/model"]["Value"]) == shop_model
    assert found[f"{PREFIX}/model"]["Value"] == shop_model.to_json(compact=True)  # no spaces after separators
    assert found[f"{PREFIX}/model"]["Tier"] == "Standard"
    # AND the contract parameter holds the per-entity and per-index fingerprints with the model
    published = read_published(found[f"{PREFIX}/contract"]["Value"], source="contract")
    assert (published.fingerprint, dict(published.entity_fingerprints), dict(published.index_fingerprints)) == (
        fingerprint(shop_model), entity_fingerprints(shop_model), index_fingerprints(shop_model))
    assert published.model == shop_model.to_dict()


def test_without_stream_no_stream_parameter_and_cmk_adds_the_key(shop_model: Model) -> None:
    # GIVEN a table without a stream, encrypted with a customer-managed key, publishing without its model
    stack = cdk.Stack(cdk.App(), "Cmk", env=cdk.Environment(region="eu-west-1"))
    key = kms.Key(stack, "Key", enable_key_rotation=True)
    table = SingleTable(stack, "Data", model=shop_model,
                        encryption=dynamodb.TableEncryptionV2.customer_managed_key(key))
    published = table.publish_contract(ModelContract(parameter_prefix=PREFIX, include_model=False))
    found = parameters(Template.from_stack(stack))
    # THEN no stream ARN and no model, but the key's ARN
    assert sorted(found) == [f"{PREFIX}/{n}" for n in ("contract", "encryption-key-arn", "model-fingerprint",
                                                       "table-arn", "table-name")]
    assert read_published(found[f"{PREFIX}/contract"]["Value"], source="contract").model is None
    assert found[f"{PREFIX}/encryption-key-arn"]["Value"] == {"Fn::GetAtt": [stack.resolve(
        key.node.default_child.logical_id), "Arn"]}
    assert table.contract is published and published.fingerprint == fingerprint(shop_model)


def test_a_model_over_4_kb_uses_the_advanced_tier(scratch_stack: cdk.Stack) -> None:
    # GIVEN a model between the standard (4 KB) and the advanced (8 KB) limit
    model = big_model(25)
    assert STANDARD_LIMIT < len(model.to_json(compact=True)) <= ADVANCED_LIMIT
    # WHEN published THEN only the model parameter is advanced
    stack = cdk.Stack(cdk.App(), "Big")
    SingleTable(stack, "Data", model=model, publish=ModelContract(parameter_prefix="/big"))
    tiers = {name: p.get("Tier") for name, p in parameters(Template.from_stack(stack)).items()}
    assert tiers == {"/big/model": "Advanced", "/big/model-fingerprint": "Standard", "/big/table-arn": "Standard",
                     "/big/table-name": "Standard", "/big/contract": "Advanced"}


def test_a_model_over_8_kb_is_refused_unless_the_fingerprint_alone_is_published(scratch_stack: cdk.Stack) -> None:
    # GIVEN a model too large for any SSM String parameter
    model = big_model(80)
    size = len(model.to_json(compact=True).encode())
    assert size > ADVANCED_LIMIT
    # WHEN published with its model THEN a props error names the size and the way out
    with pytest.raises(ConstructPropsError, match=rf"model 'big' is {size} bytes as JSON.*"
                                                  r"ModelContract\(include_model=False\)"):
        SingleTable(scratch_stack, "TooBig", model=model, publish=ModelContract(parameter_prefix="/big"))
    # AND a model whose JSON fits but whose contract parameter (model + fingerprints) does not is
    # refused with a typed error naming that parameter and the way out
    fits = big_model(34)
    assert len(fits.to_json(compact=True).encode()) <= ADVANCED_LIMIT < len(published_json(fits).encode())
    with pytest.raises(ContractParameterSizeError, match=r"SSM parameter '/big/contract'.* bytes, more than an SSM "
                                                         r"parameter holds.*ModelContract\(include_model=False\)"):
        SingleTable(scratch_stack, "ContractTooBig", model=fits, publish=ModelContract(parameter_prefix="/big"))
    # AND without the model it is published
    table = SingleTable(scratch_stack, "FingerprintOnly", model=model,
                        publish=ModelContract(parameter_prefix="/big", include_model=False))
    assert table.contract is not None and "model" not in table.contract.parameters


@pytest.mark.parametrize(("prefix", "message"), [
    ("/shop/data/", "parameter_prefix '/shop/data/' must be a literal path"),
    ("shop/data", "parameter_prefix 'shop/data' must be a literal path"),
    ("/shop data", "parameter_prefix '/shop data' must be a literal path"),
    ("/aws/shop", "parameter_prefix '/aws/shop' must not start with /aws or /ssm"),
    ("/SSM", "must not start with /aws or /ssm"),
    (42, "parameter_prefix 42 must be a literal path"),
])
def test_bad_prefixes_are_refused(prefix: Any, message: str) -> None:
    with pytest.raises(ConstructPropsError, match=message):
        ModelContract(parameter_prefix=prefix)


def test_bad_contracts_are_refused(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    with pytest.raises(ConstructPropsError, match="include_model 'yes' must be True or False"):
        ModelContract(parameter_prefix=PREFIX, include_model="yes")  # type: ignore[arg-type]
    with pytest.raises(ConstructPropsError, match="publish '/shop' must be a constructs_lib.ModelContract"):
        SingleTable(scratch_stack, "NotAContract", model=shop_model, publish="/shop")  # type: ignore[arg-type]
    table = SingleTable(scratch_stack, "Twice", model=shop_model, publish=ModelContract(parameter_prefix=PREFIX))
    with pytest.raises(ConstructPropsError, match="'Twice' already publishes its contract under '/shop/data'"):
        table.publish_contract(ModelContract(parameter_prefix="/other"))


# The consumer -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def consumer(shop_model: Model) -> tuple[cdk.Stack, Template]:
    """A consumer importing the published table with its stream: a function querying GSI2 only,
    a counter and an audit."""
    stack = cdk.Stack(cdk.App(), "Consumer")
    table = SingleTable.from_parameters(stack, "Shop", model=shop_model, parameter_prefix=PREFIX,
                                        stream_view_type=NEW_AND_OLD)
    reports = TableFunction(stack, "Reports", table=table, entry=HANDLER, access=None)
    table.grant_query(reports.function, index="GSI2")
    ShardedCounter(stack, "Views", table=table, name="views", shards=2)
    StreamAudit(stack, "Audit", source=table, exclude_entities=ShardedCounter.ENTITIES)
    assert table.parameter_prefix == PREFIX
    return stack, Template.from_stack(stack)


def ssm_parameter(template: Template, name: str) -> str:
    """Logical id of the CloudFormation parameter reading SSM parameter ``name``."""
    (found,) = [lid for lid, p in template.to_json()["Parameters"].items() if p.get("Default") == name]
    assert template.to_json()["Parameters"][found]["Type"] == "AWS::SSM::Parameter::Value<String>"
    return found


def test_consumer_reads_the_parameters_at_deploy_time(consumer: Any) -> None:
    _, template = consumer
    # THEN each published value it uses is a CloudFormation parameter of SSM type, and nothing is created
    for name in ("table-name", "table-arn", "stream-arn"):
        ssm_parameter(template, f"{PREFIX}/{name}")
    # AND not the whole-model fingerprint: compatibility is checked by slice at cold start
    assert f"{PREFIX}/model-fingerprint" not in {p.get("Default") for p in template.to_json()["Parameters"].values()}
    template.resource_count_is("AWS::SSM::Parameter", 0)
    # AND the only table it creates is the audit's own
    assert [lid[:5] for lid in template.find_resources("AWS::DynamoDB::GlobalTable")] == ["Audit"]


def test_every_function_gets_the_table_name_and_the_contract_parameter(consumer: Any) -> None:
    _, template = consumer
    name = {"Ref": ssm_parameter(template, f"{PREFIX}/table-name")}
    functions = template.find_resources("AWS::Lambda::Function")
    # THEN the handler, the aggregator and the audit writer all read the published contract at cold
    # start (its name, a literal), and none gets a deploy-time fingerprint
    assert len(functions) == 3
    for function in functions.values():
        variables = function["Properties"]["Environment"]["Variables"]
        assert variables[ENV_CONTRACT_PARAMETER] == f"{PREFIX}/contract"
        assert ENV_MODEL_FINGERPRINT not in variables
    # AND each function's role may ssm:GetParameter on exactly that parameter, nothing else of SSM
    ssm = [s for p in template.find_resources("AWS::IAM::Policy").values()
           for s in p["Properties"]["PolicyDocument"]["Statement"] if "ssm:" in str(s["Action"])]
    assert len(ssm) == 3
    for statement in ssm:
        assert statement["Action"] == "ssm:GetParameter"
        assert statement["Resource"] == {"Fn::Join": ["", [
            "arn:", {"Ref": "AWS::Partition"}, ":ssm:", {"Ref": "AWS::Region"}, ":", {"Ref": "AWS::AccountId"},
            f":parameter{PREFIX}/contract"]]}
    template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "orders_api.handler",
        "Environment": {"Variables": Match.object_like({"TABLE_NAME": name})}})


def test_query_grant_names_the_published_arn_and_one_index(consumer: Any) -> None:
    stack, template = consumer
    arn = {"Ref": ssm_parameter(template, f"{PREFIX}/table-arn")}
    (role,) = [lid for lid in template.find_resources("AWS::IAM::Role") if lid.startswith("ReportsRole")]
    statements = [s for p in template.find_resources("AWS::IAM::Policy").values()
                  if {"Ref": role} in p["Properties"]["Roles"] for s in p["Properties"]["PolicyDocument"]["Statement"]]
    dynamo = [s for s in statements if str(s["Action"]).startswith("dynamodb:")]
    # THEN the handler may Query GSI2 of the published table, and nothing else of it
    assert dynamo == [{"Action": "dynamodb:Query", "Effect": "Allow",
                       "Resource": {"Fn::Join": ["", [arn, "/index/GSI2"]]}}]


def test_stream_consumers_read_the_published_stream(consumer: Any) -> None:
    _, template = consumer
    stream = {"Ref": ssm_parameter(template, f"{PREFIX}/stream-arn")}
    mappings = template.find_resources("AWS::Lambda::EventSourceMapping").values()
    assert [m["Properties"]["EventSourceArn"] for m in mappings] == [stream, stream]


def test_without_stream_view_type_no_stream_is_imported(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    # GIVEN an import of the published table without stream_view_type
    table = SingleTable.from_parameters(scratch_stack, "NoStream", model=shop_model, parameter_prefix=PREFIX)
    # THEN it has no stream, and an audit is refused saying what to pass
    assert table.table_stream_arn is None
    with pytest.raises(ConstructPropsError, match=r"stream is off.*stream_view_type=\.\.\. "
                                                  r"\(SingleTable.from_parameters"):
        StreamAudit(scratch_stack, "Audit", source=table)


def test_expected_fingerprint_is_checked_at_synth(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    # GIVEN the producer's fingerprint known to the consumer
    ok = SingleTable.from_parameters(scratch_stack, "Expected", model=shop_model, parameter_prefix=PREFIX,
                                     expected_fingerprint=fingerprint(shop_model))
    # still checked at run time, by slice, against the contract published then (it may change)
    assert ok.contract_parameter == f"{PREFIX}/contract" and ok.model_fingerprint is None
    # WHEN it differs from the consumer's model THEN synth fails naming both
    other = "f" * 32
    with pytest.raises(ConstructPropsError, match=rf"has fingerprint {fingerprint(shop_model)}, but the deployed "
                                                  rf"table's model has {other} \(expected_fingerprint\)"):
        SingleTable.from_parameters(scratch_stack, "Mismatch", model=shop_model, parameter_prefix=PREFIX,
                                    expected_fingerprint=other)
    with pytest.raises(ConstructPropsError, match="expected_fingerprint 'v1' is not a model fingerprint"):
        SingleTable.from_parameters(scratch_stack, "Malformed", model=shop_model, parameter_prefix=PREFIX,
                                    expected_fingerprint="v1")
    with pytest.raises(ConstructPropsError, match="parameter_prefix 'shop' must be a literal path"):
        SingleTable.from_parameters(scratch_stack, "BadPrefix", model=shop_model, parameter_prefix="shop")


ENV = cdk.Environment(account="111122223333", region="eu-west-1")


def lookup_app(value: str | None) -> cdk.App:
    """An app whose context holds ``value`` as the looked-up fingerprint (None: not looked up yet)."""
    probe = cdk.Stack(cdk.App(), "Probe", env=ENV)
    key = cdk.ContextProvider.get_key(probe, provider="ssm",
                                      props={"parameterName": f"{PREFIX}/model-fingerprint"}).key
    return cdk.App(context={key: value} if value is not None else None)


def test_lookup_fingerprint_is_checked_at_synth(shop_model: Model) -> None:
    # GIVEN a consumer stack whose context holds the looked-up fingerprint of another model
    stack = cdk.Stack(lookup_app("e" * 32), "Lookup", env=ENV)
    # WHEN it imports with lookup_fingerprint=True THEN synth fails naming the parameter
    with pytest.raises(ConstructPropsError, match=r"has e{32} \(/shop/data/model-fingerprint, looked up\)"):
        SingleTable.from_parameters(stack, "Shop", model=shop_model, parameter_prefix=PREFIX, lookup_fingerprint=True)
    # AND with the matching value it imports
    stack = cdk.Stack(lookup_app(fingerprint(shop_model)), "Lookup", env=ENV)
    SingleTable.from_parameters(stack, "Shop", model=shop_model, parameter_prefix=PREFIX, lookup_fingerprint=True)


def test_lookup_not_yet_done_is_left_to_the_cli(shop_model: Model, tmp_path: Path) -> None:
    # GIVEN no cached lookup (the CDK CLI will look it up and synthesize again)
    app = lookup_app(None)
    stack = cdk.Stack(app, "Lookup", env=ENV)
    # WHEN imported THEN synth does not fail but records the lookup the CLI must make
    table = SingleTable.from_parameters(stack, "Shop", model=shop_model, parameter_prefix=PREFIX,
                                        lookup_fingerprint=True)
    TableFunction(stack, "Fn", table=table, entry=HANDLER, access="read")
    directory = Path(app.synth().directory)
    missing = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))["missing"]
    assert [m["props"]["parameterName"] for m in missing] == [f"{PREFIX}/model-fingerprint"]


def test_lookup_needs_a_concrete_environment(scratch_stack: cdk.Stack, shop_model: Model) -> None:
    with pytest.raises(ConstructPropsError, match=r"lookup_fingerprint=True reads /shop/data/model-fingerprint at "
                                                  r"synth, which needs a stack with a concrete account and region"):
        SingleTable.from_parameters(scratch_stack, "NoEnv", model=shop_model, parameter_prefix=PREFIX,
                                    lookup_fingerprint=True)
