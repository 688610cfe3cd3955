"""SingleTable against a model lock: one GSI change per template, breaking changes refused."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match, Template

from constructs_lib import SingleTable
from constructs_lib.evolution.lock import ModelLock, TableLock
from constructs_lib.model import Index
from constructs_lib.runtime.environment import ENV_UNAVAILABLE_INDEXES
from examples.evolution.model import model_v1, model_v2


def _stack(model, context=None, **kw):
    app = cdk.App(context=context or {})
    stack = cdk.Stack(app, "Store")
    table = SingleTable(stack, "Data", model=model, **kw)
    return stack, table


def _gsis(stack):
    [resource] = Template.from_stack(stack).find_resources("AWS::DynamoDB::GlobalTable").values()
    return [g["IndexName"] for g in resource["Properties"].get("GlobalSecondaryIndexes", [])]


@pytest.fixture
def v1_lock(tmp_path):
    path = tmp_path / "constructs_lib.lock.json"
    ModelLock({"Store/Data": TableLock.of(model_v1())}).save(path)
    return path


def test_without_a_lock_the_template_is_the_model_and_a_hint_is_given():
    stack, table = _stack(model_v2())
    assert _gsis(stack) == ["GSI1", "GSI2", "GSI3"]
    Annotations.from_stack(stack).has_info("/Store/Data", Match.string_like_regexp("no model lock"))
    assert ENV_UNAVAILABLE_INDEXES not in table.runtime_environment


def test_each_step_adds_one_gsi_and_the_last_equals_the_model(v1_lock):
    context = {"constructs_lib:lock": str(v1_lock)}
    # GIVEN v1 locked WHEN v2 is synthesized THEN the template adds GSI2 only
    stack, table = _stack(model_v2(), context)
    assert _gsis(stack) == ["GSI1", "GSI2"]
    assert table.runtime_environment[ENV_UNAVAILABLE_INDEXES] == "GSI3"
    Annotations.from_stack(stack).has_warning("/Store/Data", Match.string_like_regexp("step 1 of 2"))
    Annotations.from_stack(stack).has_warning("/Store/Data", Match.string_like_regexp("Order/GSI1"))
    # WHEN the lock is advanced after the deploy THEN the next template adds GSI3
    lock = ModelLock.load(v1_lock)
    advanced, _ = lock.tables["Store/Data"].advance(model_v2())
    ModelLock({"Store/Data": advanced}).save(v1_lock)
    stack, table = _stack(model_v2(), context)
    assert _gsis(stack) == ["GSI1", "GSI2", "GSI3"]
    assert ENV_UNAVAILABLE_INDEXES not in table.runtime_environment
    # AND once recorded, the template equals the model with no rollout warning
    final, _ = ModelLock.load(v1_lock).tables["Store/Data"].advance(model_v2())
    ModelLock({"Store/Data": final}).save(v1_lock)
    stack, _ = _stack(model_v2(), context)
    assert _gsis(stack) == ["GSI1", "GSI2", "GSI3"]
    Annotations.from_stack(stack).has_no_warning("/Store/Data", Match.string_like_regexp("rollout"))


def test_breaking_change_fails_synth_unless_acknowledged(v1_lock):
    v1 = model_v1()
    changed = v1.to_dict()
    changed["indexes"] = [Index("GSI1", projection="KEYS_ONLY").to_dict()]
    from constructs_lib.model import Model

    reshaped = Model.from_dict(changed)
    context = {"constructs_lib:lock": str(v1_lock)}
    stack, _ = _stack(reshaped, context)
    with pytest.raises(Exception, match="gsi-changed:GSI1"):
        Template.from_stack(stack)
    # Acknowledged: GSI1 is deleted by this step (recreated by the next one).
    stack, table = _stack(reshaped, {**context, "constructs_lib:acknowledge": "gsi-changed:GSI1"})
    assert _gsis(stack) == []
    assert table.runtime_environment[ENV_UNAVAILABLE_INDEXES] == "GSI1"
    stack, _ = _stack(reshaped, context, acknowledge=["gsi-changed:GSI1"])
    assert _gsis(stack) == []



@pytest.mark.parametrize(("value", "refused"), [
    ('["gsi-changed:GSI1", ' + "[" * 64 + "]" * 64 + "]", "nests arrays and objects more than 64 levels deep"),
    ("[gsi-changed:GSI1]", r"is not a JSON array \(Expecting value\)"),
    ('["gsi-changed:GSI1", 7]', "must be a JSON array of change ids"),
])
def test_acknowledgements_given_as_json_text_are_an_array_of_ids(value, refused):
    from constructs_lib.constructs.evolution_plan import CONTEXT_ACKNOWLEDGE, acknowledgements
    from constructs_lib.constructs.exceptions import ConstructPropsError

    # GIVEN the acknowledgements as a JSON array in the CDK context WHEN read THEN their ids
    ok = cdk.App(context={CONTEXT_ACKNOWLEDGE: '["gsi-changed:GSI1", "gsi-changed:GSI2"]'})
    assert acknowledgements(ok, None) == ("gsi-changed:GSI1", "gsi-changed:GSI2")
    # AND text nested too deep, not JSON, or not of strings is refused naming the context key
    with pytest.raises(ConstructPropsError, match=rf"^context '{CONTEXT_ACKNOWLEDGE}'.*{refused}"):
        acknowledgements(cdk.App(context={CONTEXT_ACKNOWLEDGE: value}), None)

def test_key_that_can_never_fit_fails_synth():
    from constructs_lib.model import Entity, Model

    model = Model("m", entities=[Entity("Doc", pk="DOC#{id}", sk="X" * 1030, fields={"id": "string"})])
    stack, _ = _stack(model)
    with pytest.raises(Exception, match="limited to 1024 bytes"):
        Template.from_stack(stack)


# The command line ------------------------------------------------------------------------------
def test_cli_lock_diff_and_advance(tmp_path, capsys):
    from constructs_lib.__main__ import main

    app = "examples/evolution/app.py"
    lock = str(tmp_path / "lock.json")
    # GIVEN v1 locked from the app
    assert main(["lock", app, "--lock", lock, "-c", "store:model=v1"]) == 0
    assert "locked model 'store'" in capsys.readouterr().out
    # WHEN the app moves to v2 THEN diff classifies it and prints the rollout plan
    assert main(["diff", app, "--lock", lock]) == 0
    out = capsys.readouterr().out
    assert "[backfill] index-template-changed:Order/GSI1" in out
    assert "step 1: create GSI 'GSI2'" in out and "step 2: create GSI 'GSI3'" in out
    # AND a plain `lock` refuses to record a model that is not deployed yet
    assert main(["lock", app, "--lock", lock]) == 1
    assert "lock --advance" in capsys.readouterr().err
    # AND `lock --advance` records one step at a time
    assert main(["lock", app, "--lock", lock, "--advance"]) == 0
    assert "recorded step 1 of 2" in capsys.readouterr().out
    assert main(["lock", app, "--lock", lock, "--advance"]) == 0
    assert "recorded the last step" in capsys.readouterr().out
    assert main(["diff", app, "--lock", lock]) == 0
    assert "no model changes against the lock" in capsys.readouterr().out


def test_cli_diff_exits_3_on_an_unacknowledged_breaking_change(tmp_path, capsys):
    from constructs_lib.__main__ import main

    lock = tmp_path / "lock.json"
    changed = model_v2().to_dict()
    changed["ttl_attribute"] = "expires_at"
    from constructs_lib.model import Model

    ModelLock({"StoreStack/Data": TableLock.of(Model.from_dict(changed))}).save(lock)
    assert main(["diff", "examples/evolution/app.py", "--lock", str(lock)]) == 3
    assert "[breaking] ttl-attribute:ttl_attribute" in capsys.readouterr().out
    assert main(["diff", "examples/evolution/app.py", "--lock", str(lock),
                 "--acknowledge", "ttl-attribute:ttl_attribute"]) == 0
    assert "(acknowledged)" in capsys.readouterr().out


def test_backfill_construct_grants_only_what_the_job_does():
    from examples.evolution.app import StoreStack

    app = cdk.App()
    stack = StoreStack(app, "StoreStack")
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::Lambda::Function", {
        "Handler": "constructs_lib.runtime.handlers.backfill.handler",
        "Environment": {"Variables": Match.object_like({
            "CONSTRUCTS_LIB_BACKFILL_SPEC": Match.string_like_regexp('"segments": 4'),
        })},
    })
    policies = template.find_resources("AWS::IAM::Policy")
    actions = sorted({a for p in policies.values() for s in p["Properties"]["PolicyDocument"]["Statement"]
                      for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])})
    assert actions == ["dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Scan",
                       "dynamodb:UpdateItem", "lambda:InvokeFunction", "logs:CreateLogStream", "logs:PutLogEvents"]


LEAGUE_APP = '''
import aws_cdk as cdk

from constructs_lib import SingleTable
from constructs_lib.model import Entity, Field, Model


def build_app(outdir=None, *, context=None):
    app = cdk.App(outdir=outdir, context=context)
    kinds = str(app.node.try_get_context("league:kinds") or "RED,BLUE").split(",")
    model = Model("league", entities=[Entity("Team", pk="TEAM#{kind}#{team_id}", sk="TEAM",
                                             fields={"kind": Field.enum(*kinds), "team_id": "string"})])
    SingleTable(cdk.Stack(app, "League"), "Data", model=model)
    return app
'''


def test_cli_flags_a_narrowed_enum_in_a_table_key(tmp_path, capsys):
    from constructs_lib.__main__ import main

    app = tmp_path / "league_app.py"
    app.write_text(LEAGUE_APP, encoding="utf-8")
    lock = str(tmp_path / "lock.json")
    # GIVEN teams keyed TEAM#{kind}#{team_id} locked with kind RED/BLUE/GREEN
    assert main(["lock", str(app), "--lock", lock, "-c", "league:kinds=RED,BLUE,GREEN"]) == 0
    capsys.readouterr()
    # WHEN the app narrows kind to RED/BLUE THEN diff names the field and the removed choice, breaking
    assert main(["diff", str(app), "--lock", lock]) == 3
    out = capsys.readouterr().out
    assert "no model changes" not in out
    assert "[breaking] field-choices:Team.kind: field Team.kind drops choice(s) ['GREEN']" in out
    # AND a plain `lock` refuses to record it, and `lock --advance` refuses the breaking change by id
    assert main(["lock", str(app), "--lock", lock]) == 1
    assert "differs from the lock" in capsys.readouterr().err
    assert main(["lock", str(app), "--lock", lock, "--advance"]) == 1
    assert "field-choices:Team.kind" in capsys.readouterr().err
    # AND once acknowledged, diff passes and the lock advances
    assert main(["diff", str(app), "--lock", lock, "--acknowledge", "field-choices:Team.kind"]) == 0
    assert "(acknowledged) field-choices:Team.kind" in capsys.readouterr().out
