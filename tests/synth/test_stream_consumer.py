"""The stream-consumer settings ``ShardedCounter`` and ``StreamAudit`` share: declared once, and
every keyword applied to the synthesized function, mapping and alarm."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_logs as logs
from aws_cdk.assertions import Template

from constructs_lib import ShardedCounter, SingleTable, StreamAudit
from constructs_lib.constructs.stream_consumer import (
    StreamConsumerOptions,
    StreamConsumerProps,
)
from constructs_lib.model import Model

#: Every stream-consumer keyword, none at its default.
OPTIONS: dict[str, Any] = {
    "batch_size": 50,
    "max_batching_window": cdk.Duration.seconds(7),
    "retry_attempts": 3,
    "max_record_age": cdk.Duration.hours(2),
    "parallelization_factor": 2,
    "iterator_age_alarm_threshold": cdk.Duration.minutes(3),
    "memory_size": 512,
    "timeout": cdk.Duration.seconds(45),
    "log_retention": logs.RetentionDays.ONE_WEEK,
}

PATTERNS: dict[str, Callable[[cdk.Stack, SingleTable], Any]] = {
    "ShardedCounter": lambda stack, table: ShardedCounter(
        stack, "Views", table=table, name="views", shards=2, **OPTIONS
    ),
    "StreamAudit": lambda stack, table: StreamAudit(stack, "Audit", source=table, **OPTIONS),
}


def test_the_keywords_are_declared_once() -> None:
    # GIVEN the typed keywords and the settings object
    declared = set(StreamConsumerOptions.__annotations__)
    # THEN they name the same settings, those the tests below pass
    assert declared == {f.name for f in fields(StreamConsumerProps)} == set(OPTIONS)
    # AND neither pattern repeats them in its signature: both take them as **options
    for pattern in (ShardedCounter, StreamAudit):
        parameters = inspect.signature(pattern.__init__).parameters
        assert not declared & set(parameters), pattern
        assert parameters["options"].kind is inspect.Parameter.VAR_KEYWORD


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_every_keyword_reaches_the_template(
    pattern: str, shop_model: Model, new_stack: Callable[[str], cdk.Stack]
) -> None:
    # GIVEN a pattern built with every stream-consumer keyword set
    stack = new_stack(f"Options{pattern}")
    table = SingleTable(stack, "Data", model=shop_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    construct = PATTERNS[pattern](stack, table)
    # WHEN synthesized
    template = Template.from_stack(stack).to_json()["Resources"]
    # THEN the settings are kept as given
    assert construct.props == StreamConsumerProps(**OPTIONS)
    # AND the event source mapping uses them
    (mapping,) = [r["Properties"] for r in template.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert (mapping["BatchSize"], mapping["MaximumBatchingWindowInSeconds"], mapping["MaximumRetryAttempts"],
            mapping["MaximumRecordAgeInSeconds"], mapping["ParallelizationFactor"]) == (50, 7, 3, 7200, 2)
    # AND the function and its log group
    function_id = stack.get_logical_id(construct.function.node.default_child)
    function = template[function_id]["Properties"]
    assert (function["MemorySize"], function["Timeout"]) == (512, 45)
    (log_group,) = [r["Properties"] for r in template.values() if r["Type"] == "AWS::Logs::LogGroup"]
    assert log_group["RetentionInDays"] == 7
    # AND the iterator-age alarm
    alarm_id = stack.get_logical_id(construct.iterator_age_alarm.node.default_child)
    assert template[alarm_id]["Properties"]["Threshold"] == 180_000


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_an_unknown_keyword_is_a_type_error_naming_it(
    pattern: str, shop_model: Model, new_stack: Callable[[str], cdk.Stack]
) -> None:
    # GIVEN a misspelt stream-consumer keyword
    stack = new_stack(f"Typo{pattern}")
    table = SingleTable(stack, "Data", model=shop_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    build = {
        "ShardedCounter": lambda: ShardedCounter(stack, "Views", table=table, name="views", shards=2, batchsize=5),
        "StreamAudit": lambda: StreamAudit(stack, "Audit", source=table, batchsize=5),
    }[pattern]
    # WHEN the pattern is built THEN Python's error for it names the keyword and the settings there are
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) 'batchsize'.*batch_size, max_batching_window"):
        build()


def test_each_pattern_has_its_own_default_batch_size(shop_model: Model, new_stack: Callable[[str], cdk.Stack]) -> None:
    # GIVEN both patterns built without stream-consumer keywords
    stack = new_stack("DefaultBatches")
    table = SingleTable(stack, "Data", model=shop_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
    counter = ShardedCounter(stack, "Views", table=table, name="views", shards=2)
    audit = StreamAudit(stack, "Audit", source=table)
    # THEN the counter reads 1,000 records per invocation (its aggregator writes each touched total once
    # per batch) and the audit 100; the applied size is kept on the construct
    assert (counter.props.batch_size, audit.props.batch_size) == (1000, 100)
    template = Template.from_stack(stack).to_json()["Resources"]
    sizes = {r["Properties"]["FunctionName"]["Ref"]: r["Properties"]["BatchSize"] for r in template.values()
             if r["Type"] == "AWS::Lambda::EventSourceMapping"}
    assert sizes == {stack.get_logical_id(counter.function.node.default_child): 1000,
                     stack.get_logical_id(audit.function.node.default_child): 100}
