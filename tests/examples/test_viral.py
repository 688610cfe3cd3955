"""The viral-video example (examples/viral): the counter's derived sizing in the template, the
views API and the aggregator on DynamoDB Local (table from the synthesized template, bundled
handlers from cdk.out, the real stream through the synthesized mapping), the scenario end to end,
cdk-nag and cfn-lint."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.model import Model
from constructs_lib.runtime import CounterClient, TableClient
from constructs_lib.runtime.patterns.counter import CounterSpec
from constructs_lib.testing import LocalDeployment, asset_dir
from constructs_lib.testing.handlers import LocalFunction
from constructs_lib.testing.streams import StreamRunner
from examples.viral import scenario

STACK = "ViralVideoStack"
API, AGGREGATOR = "views_api.handler", "constructs_lib.runtime.handlers.counter.handler"
DERIVATION = ("50000 writes/s x 1 WCU (ceil(1024 B / 1024 B)) x headroom 1.2 = 60000 WCU; "
              "/ 1000 WCU per partition = 60 shard(s)")


@pytest.fixture(scope="module")
def viral(synth_example: Callable[[str], Any]) -> Any:
    return synth_example("examples.viral.app")


@pytest.fixture(scope="module")
def template(viral: Any) -> dict[str, Any]:
    return viral.template(STACK)


@pytest.fixture
def deployment(local_deploy: Callable[..., LocalDeployment], template: dict[str, Any]) -> LocalDeployment:
    return local_deploy(template, name_prefix="viral-test-")


@pytest.fixture
def catalog(viral: Any, template: dict[str, Any], deployment: LocalDeployment, dynamodb_client: Any) -> TableClient:
    """Writes videos as the catalog would: a TableClient with the model bundled in the API's asset."""
    asset = asset_dir(viral.outdir, template, viral.function_id(STACK, API))
    model = Model.from_json((asset / "model.json").read_text(encoding="utf-8"))
    return TableClient(model, deployment.table_name("DataTable"), client=dynamodb_client)


@pytest.fixture
def api(
    viral: Any, template: dict[str, Any], deployment: LocalDeployment, dynamodb_local: Any
) -> Iterator[LocalFunction]:
    lid = viral.function_id(STACK, API)
    with LocalFunction(asset_dir(viral.outdir, template, lid), API, environment=deployment.function_environment(lid),
                       endpoint=dynamodb_local.endpoint) as fn:
        yield fn


# Template ----------------------------------------------------------------------------------------------------
def test_shard_count_is_derived_from_50000_views_per_second(viral: Any, template: dict[str, Any]) -> None:
    # GIVEN the synthesized aggregator and views API
    aggregator = template["Resources"][viral.function_id(STACK, AGGREGATOR)]["Properties"]
    api = template["Resources"][viral.function_id(STACK, API)]["Properties"]
    # THEN the derivation (an idempotent view is one conditional PutItem: 1 WCU) is in the aggregator's environment
    assert aggregator["Environment"]["Variables"]["COUNTER_SHARDS_DERIVATION"] == DERIVATION
    assert template["Outputs"]["ViewShards"]["Value"] == "60"
    # AND the views API received the same family spec (60 shards aggregated from the stream, idempotency
    # for 24 h, the 120 shards an earlier version derived for transactional views folded in once)
    spec = api["Environment"]["Variables"]["CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS"]
    assert spec == aggregator["Environment"]["Variables"]["CONSTRUCTS_LIB_COUNTER_VIDEO_VIEWS"]
    parsed = CounterSpec.from_json(spec)
    assert (parsed.family, parsed.shards, parsed.idempotency_ttl_seconds) == ("video_views", 60, 86_400)
    assert (parsed.aggregation, parsed.legacy_shards) == ("deltas", 120)


def test_stream_carries_new_images_and_the_mapping_only_lets_counter_writes_through(viral: Any) -> None:
    # GIVEN the table and the aggregator's event source mapping
    (table,) = viral.resources(STACK, "AWS::DynamoDB::GlobalTable").values()
    (mapping,) = viral.resources(STACK, "AWS::Lambda::EventSourceMapping").values()
    # THEN the stream carries new images (the amount each write adds), and the filters select this
    # family's shard writes and its increment items when created
    assert table["Properties"]["StreamSpecification"] == {"StreamViewType": "NEW_IMAGE"}
    assert table["Properties"]["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    shards, increments = mapping["Properties"]["FilterCriteria"]["Filters"]
    assert '"prefix":"COUNTER#video_views#"' in shards["Pattern"] and '["SUM","SHARD"]' in shards["Pattern"]
    assert '"eventName":["INSERT"]' in increments["Pattern"] and '{"prefix":"KEY#"}' in increments["Pattern"]
    assert mapping["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


# On DynamoDB Local ---------------------------------------------------------------------------------------------
def test_views_are_counted_once_per_request_and_aggregated_from_the_stream(
    viral: Any, template: dict[str, Any], deployment: LocalDeployment, api: LocalFunction, dynamodb_local: Any,
    dynamodb_streams_client: Any, catalog: TableClient,
) -> None:
    # GIVEN a published video, 30 views with distinct request ids, and one request retried 4 times
    catalog.put("Video", {"video_id": "v-1", "title": "t", "channel_id": "c"})
    replies = [api({"op": "view", "video_id": "v-1", "request_id": f"r-{i}"}) for i in range(30)]
    retried = [api({"op": "view", "video_id": "v-1", "request_id": "r-again"}) for _ in range(5)]
    # THEN the retries all hit one shard; views spread over several shards
    assert all(r["ok"] for r in replies + retried) and len({r["shard"] for r in retried}) == 1
    assert len({r["shard"] for r in replies}) > 10
    # AND before aggregation the total is 0, and so is the exact read: an idempotent view is an
    # increment item until the aggregator applies it from the stream
    assert api({"op": "views", "video_id": "v-1"})["views"] == 0
    assert api({"op": "views", "video_id": "v-1", "exact": True})["views"] == 0
    # WHEN the real stream goes through the synthesized mapping to the bundled aggregator
    agg_id = viral.function_id(STACK, AGGREGATOR)
    env = deployment.function_environment(agg_id)
    with LocalFunction(asset_dir(viral.outdir, template, agg_id), AGGREGATOR, environment=env,
                       endpoint=dynamodb_local.endpoint) as aggregator:
        report = StreamRunner.from_deployment(deployment, template, handler=aggregator,
                                              streams_client=dynamodb_streams_client, function_logical_id=agg_id).run()
    # THEN the 31 increment items were delivered (the 4 retries wrote nothing), the video filtered out
    assert (report.delivered, report.filtered_out, report.dead_lettered) == (31, 1, 0)
    # AND the aggregated total is 31, read by the API and by a CounterClient alike, and so is the exact read
    video = api({"op": "video", "video_id": "v-1"})
    assert video["views"] == 31 and video["video"]["title"] == "t"
    assert api({"op": "views", "video_id": "v-1", "exact": True})["views"] == 31
    reader = CounterClient.from_environment("video_views", environ=env, client=dynamodb_local.client())
    assert reader.get("v-1", consistent=True).aggregated_at is not None


def test_api_refuses_views_without_a_request_id_and_unknown_input(api: LocalFunction) -> None:
    # GIVEN the views API WHEN a view has no request id THEN it is refused, naming the value and the rule
    reply = api({"op": "view", "video_id": "v-1"})
    assert reply["ok"] is False and "request_id None must be a non-empty string" in reply["error"]
    # AND missing fields, unknown ops (publishing is not this API's job) and an unknown video are reported
    assert api({"op": "views"}) == {"ok": False, "error": "op 'views' needs field 'video_id'"}
    assert api({"op": "publish", "video_id": "v-1"}) == {"ok": False, "error": "unknown op 'publish'"}
    assert api({"op": "video", "video_id": "v-404"}) == {"ok": False, "error": "video 'v-404' not found"}


def test_views_api_writes_only_counter_items(viral: Any, template: dict[str, Any]) -> None:
    # GIVEN the views API's IAM statements
    role = template["Resources"][viral.function_id(STACK, API)]["Properties"]["Role"]["Fn::GetAtt"][0]
    statements = [s for p in viral.resources(STACK, "AWS::IAM::Policy").values()
                  if {"Ref": role} in p["Properties"]["Roles"]
                  for s in p["Properties"]["PolicyDocument"]["Statement"]]
    writes = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    # THEN every statement allowing a write is confined to the counter family's partition keys
    writing = [s for s in statements if writes & set(s["Action"] if isinstance(s["Action"], list) else [s["Action"]])]
    assert writing
    for statement in writing:
        condition = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["COUNTER#video_views#*"]},
                     "Null": {"dynamodb:LeadingKeys": "false"}}
        assert statement["Condition"] == condition


# The scenario ---------------------------------------------------------------------------------------------------
def test_scenario_end_to_end(viral: Any, dynamodb_local: Any) -> None:
    # GIVEN the synthesized app and DynamoDB Local
    lines: list[str] = []
    # WHEN the scenario runs (2,000 concurrent idempotent views, a retried request, the stream aggregated)
    outcome = scenario.run(viral.outdir, dynamodb_local, out=lines.append)
    made = dict(outcome.views_made)
    # THEN the sizing came from the synthesized environment
    assert (outcome.shards, outcome.derivation) == (60, DERIVATION)
    assert sum(made.values()) == scenario.WORKERS * scenario.VIEWS_PER_WORKER + 1
    # AND the viral video's views reached every shard (1,600 views over 60 shards)
    assert outcome.viral_shards_touched == 60 and outcome.viral_per_shard[0] > 0
    # AND before aggregation: totals and exact reads 0 (idempotent views wait in their increment items)
    assert outcome.before == dict.fromkeys(scenario.VIDEOS, (0, 0))
    # AND the thrice-sent request hit one shard and counted once: one increment item, the retries
    # reported as duplicates
    assert len({r["shard"] for r in outcome.retry_replies}) == 1
    assert [r["duplicate"] for r in outcome.retry_replies] == [False, True, True]
    assert outcome.retry_item["SK"] == "KEY#req-retry-1" and outcome.retry_item["by"] == "1"
    # AND after the stream: aggregated == exact == views made, nothing dead-lettered, replay changed nothing
    assert outcome.after == {v: (n, n) for v, n in made.items()}
    assert outcome.delivered == sum(made.values()) and outcome.dead_lettered == 0 and outcome.filtered_out > 0
    assert outcome.replayed == made
    assert outcome.api_views["views"] == made[scenario.VIRAL]
    assert any("COUNTER_SHARDS_DERIVATION" in line for line in lines)


# Security checks -----------------------------------------------------------------------------------------------
def test_passes_aws_solutions_checks(viral: Any) -> None:
    # GIVEN the app synthesized with cdk-nag's AwsSolutionsChecks THEN nothing is left unacknowledged,
    # and only the library's own acknowledgments suppress anything
    viral.assert_nag_clean()


def test_template_is_cfn_lint_clean(viral: Any, cfn_lint: Callable[[Path], list[str]]) -> None:
    # GIVEN the synthesized template WHEN cfn-lint checks it THEN no error and no warning
    assert cfn_lint(viral.template_file(STACK)) == []
