"""GSI rollout on DynamoDB Local: every step's template deploys as a stack update would."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from constructs_lib import SingleTable
from constructs_lib.evolution.lock import ModelLock, TableLock
from constructs_lib.runtime import TableClient
from constructs_lib.runtime.exceptions import IndexNotReadyError
from constructs_lib.testing import LocalDeployError
from constructs_lib.testing.local_update import update_template
from examples.evolution.model import model_v1, model_v2

pytestmark = pytest.mark.integration


def _template(model, lock_path=None):
    app = cdk.App(context={"constructs_lib:lock": str(lock_path)} if lock_path else {})
    stack = cdk.Stack(app, "Store")
    table = SingleTable(stack, "Data", model=model)
    return Template.from_stack(stack).to_json(), table


def _gsis(deployment):
    return sorted(i["IndexName"] for i in deployment.describe("DataTable").get("GlobalSecondaryIndexes", []))


def test_each_rollout_step_deploys_and_the_all_at_once_template_is_refused(local_deploy, dynamodb_client, tmp_path):
    # GIVEN v1 deployed and locked
    v1_template, _ = _template(model_v1())
    deployment = local_deploy(v1_template)
    lock = tmp_path / "constructs_lib.lock.json"
    ModelLock({"Store/Data": TableLock.of(model_v1())}).save(lock)
    # THEN the unlocked v2 template (two GSI creations) is refused like CloudFormation would
    all_at_once, _ = _template(model_v2())
    with pytest.raises(LocalDeployError, match="more than one GSI creation"):
        update_template(deployment, all_at_once)
    assert _gsis(deployment) == ["GSI1"]
    # WHEN each step is synthesized against the lock, deployed, and the lock advanced
    seen = []
    for _ in range(3):
        template, table = _template(model_v2(), lock)
        changes = update_template(deployment, template)
        seen.append((changes[deployment.logical_id("DataTable")], _gsis(deployment),
                     table.evolution.unavailable_indexes))
        locked = ModelLock.load(lock).tables["Store/Data"]
        ModelLock({"Store/Data": locked.advance(model_v2())[0]}).save(lock)
    # THEN each deployment made exactly one GSI change, and the last template equals the model
    assert seen == [
        (["create GSI2"], ["GSI1", "GSI2"], ("GSI3",)),
        (["create GSI3"], ["GSI1", "GSI2", "GSI3"], ()),
        ([], ["GSI1", "GSI2", "GSI3"], ()),
    ]
    assert ModelLock.load(lock).tables["Store/Data"].model == model_v2()


def test_a_pattern_on_an_index_not_created_yet_is_refused(local_deploy, dynamodb_client, monkeypatch, tmp_path):
    lock = tmp_path / "constructs_lib.lock.json"
    ModelLock({"Store/Data": TableLock.of(model_v1())}).save(lock)
    template, table = _template(model_v2(), lock)
    deployment = local_deploy(template)
    for name, value in table.runtime_environment.items():
        monkeypatch.setenv(name, value)
    client = TableClient(model_v2(), deployment.table_name("DataTable"), client=dynamodb_client)
    # GSI2 exists (step 1): its pattern works; GSI3 does not: refused, not an empty result
    assert client.query("open orders by sku", sku="S1", created_at="2030-01-01T00:00:00Z").items == []
    with pytest.raises(IndexNotReadyError, match="GSI3"):
        client.query("customers by name", name="Ada")
