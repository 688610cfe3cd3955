"""What every generated stream consumer shares: :class:`StreamConsumerProps` (its validated
settings), the :class:`StreamConsumer` base (bundled function, grants, failure queue, event source
mapping, alarms, registration with the operations view), and the pieces it is built from.
``ShardedCounter`` and ``StreamAudit`` are its subclasses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypedDict

import aws_cdk as cdk
import jsii
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from . import defaults, nag
from .bound_table import ModelBoundTable
from .exceptions import ConstructPropsError
from .function import bundled_function
from .grants import combined_grant
from .hardening import Hardening
from .operations import MonitoredConsumer


@dataclass(frozen=True)
class StreamSettings:
    """Event source mapping settings, checked against Lambda's limits.

    ``retry_attempts`` is never infinite: a poison record must not block its stream shard
    until the record expires (24 hours on a DynamoDB stream).
    """

    batch_size: int
    max_batching_window: cdk.Duration
    retry_attempts: int
    max_record_age: cdk.Duration
    parallelization_factor: int

    def check(self, what: str) -> None:
        _check_range(what, "batch_size", self.batch_size, 1, 10_000)
        _check_range(what, "retry_attempts", self.retry_attempts, 0, 10_000)
        _check_range(what, "parallelization_factor", self.parallelization_factor, 1, 10)
        if not 0 <= self.max_batching_window.to_seconds() <= 300:
            raise ConstructPropsError(
                f"{what}: max_batching_window {self.max_batching_window.to_human_string()} must be 0-300 seconds"
            )
        if not 60 <= self.max_record_age.to_seconds() <= 604_800:
            raise ConstructPropsError(
                f"{what}: max_record_age {self.max_record_age.to_human_string()} must be 60 seconds to 7 days"
            )


@dataclass(frozen=True)
class StreamConsumerProps:
    """Settings every stream-consumer pattern (``ShardedCounter``, ``StreamAudit``) takes, checked
    against Lambda's limits when the construct is built.

    Parameters
    ----------
    batch_size
        Stream records per invocation, 1–10,000. Default: the pattern's (``DEFAULT_BATCH_SIZE``:
        1,000 for a counter, 100 for an audit; 100 for props built directly).
    max_batching_window
        How long Lambda gathers records before invoking, 0–300 seconds. Default 1 second.
    retry_attempts
        Retries of a failing batch before it goes to the failure queue, 0–10,000. Default 5
        (never infinite: a poison record must not block its stream shard for a day).
    max_record_age
        Records older than this go to the failure queue unprocessed, 60 s–7 days. Default: the
        pattern's (1 hour for a counter, 1 day for an audit).
    parallelization_factor
        Concurrent batches per stream shard, 1–10. Default 1.
    iterator_age_alarm_threshold
        Alarm when the function lags its stream by more than this. Default: the pattern's.
    memory_size
        Function memory in MB. Default 256.
    timeout
        Function timeout. Default: the pattern's.
    log_retention
        Function log retention. Default one month.
    """

    batch_size: int = 100
    max_batching_window: cdk.Duration | None = None
    retry_attempts: int = 5
    max_record_age: cdk.Duration | None = None
    parallelization_factor: int = 1
    iterator_age_alarm_threshold: cdk.Duration | None = None
    memory_size: int = defaults.LAMBDA_MEMORY_MB
    timeout: cdk.Duration | None = None
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH

    def settings(self, what: str, *, default_max_record_age: cdk.Duration) -> StreamSettings:
        """The event source mapping settings, checked (:class:`ConstructPropsError` naming the
        prop, the value and the rule)."""
        settings = StreamSettings(
            batch_size=self.batch_size,
            max_batching_window=self.max_batching_window or cdk.Duration.seconds(1),
            retry_attempts=self.retry_attempts,
            max_record_age=self.max_record_age or default_max_record_age,
            parallelization_factor=self.parallelization_factor,
        )
        settings.check(what)
        return settings


class StreamConsumerOptions(TypedDict, total=False):
    """The stream-consumer keyword arguments every pattern takes (``ShardedCounter(...,
    **options)``, ``StreamAudit(..., **options)``): the fields of :class:`StreamConsumerProps`,
    documented there (a field's None stands for the pattern's default; a missing
    ``batch_size`` is the pattern's ``DEFAULT_BATCH_SIZE``)."""

    batch_size: int
    max_batching_window: cdk.Duration | None
    retry_attempts: int
    max_record_age: cdk.Duration | None
    parallelization_factor: int
    iterator_age_alarm_threshold: cdk.Duration | None
    memory_size: int
    timeout: cdk.Duration | None
    log_retention: logs.RetentionDays


def consumer_props(what: str, options: Mapping[str, Any]) -> StreamConsumerProps:
    """The :class:`StreamConsumerProps` of a pattern's stream-consumer keywords; ``TypeError``
    naming a keyword that is none of them (as Python says of an unexpected keyword argument)."""
    known = [f.name for f in fields(StreamConsumerProps)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(
            f"{what}: unexpected keyword argument(s) {', '.join(map(repr, unknown))}; besides its own, the "
            f"construct takes the stream-consumer settings {', '.join(known)}"
        )
    return StreamConsumerProps(**options)


def _check_range(what: str, name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConstructPropsError(f"{what}: {name} {value!r} must be an int from {low} to {high}")


def failure_queue(scope: Construct) -> sqs.Queue:
    """An SQS queue for failed batches: KMS-encrypted (``alias/aws/sqs``, or the stack's
    customer-managed key with ``constructs_lib:cmk-everywhere``), TLS-only, 14 days.

    It is the dead-letter destination itself, so it has no dead-letter queue of its own
    (cdk-nag AwsSolutions-SQS3 acknowledged with that reason)."""
    key = Hardening.of(scope).key(scope.node.path)  # the stack's own key with cmk-everywhere
    queue = sqs.Queue(
        scope,
        "FailedBatches",
        encryption=sqs.QueueEncryption.KMS if key is not None else sqs.QueueEncryption.KMS_MANAGED,
        encryption_master_key=key,
        enforce_ssl=True,
        retention_period=cdk.Duration.days(14),
    )
    nag.acknowledge_resource(queue, "AwsSolutions-SQS3", nag.QUEUE_IS_THE_DLQ)
    return queue


def stream_mapping(
    scope: Construct,
    *,
    function: lambda_.Function,
    table: ModelBoundTable,
    filters: Sequence[dict[str, Any]],
    settings: StreamSettings,
    dlq: sqs.IQueue,
) -> lambda_.EventSourceMapping:
    """Subscribe ``function`` to ``table``'s stream from the oldest record, behind ``filters``,
    with partial batch responses, bisect on error, capped retries, a maximum record age and
    ``dlq`` as on-failure destination. Grants the stream read (and the queue send)."""
    assert table.table_stream_arn is not None
    table.grant_stream_read(function)
    return lambda_.EventSourceMapping(
        scope,
        "StreamMapping",
        target=function,
        event_source_arn=table.table_stream_arn,
        starting_position=lambda_.StartingPosition.TRIM_HORIZON,
        batch_size=settings.batch_size,
        max_batching_window=settings.max_batching_window,
        bisect_batch_on_error=True,
        retry_attempts=settings.retry_attempts,
        max_record_age=settings.max_record_age,
        parallelization_factor=settings.parallelization_factor,
        report_batch_item_failures=True,
        on_failure=FailureQueue(dlq),
        filters=[lambda_.FilterCriteria.filter(f) for f in filters] or None,
    )


#: What sending a failure record needs (CDK's ``grant_send_messages`` queue actions); with a
#: customer-managed queue key, the two KMS actions SQS server-side encryption needs of a producer.
_SEND_FAILURES = ("sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage")
_SEND_FAILURES_KMS = ("kms:Decrypt", "kms:GenerateDataKey")


def grant_send_failures(grantee: iam.IGrantable, queue: sqs.IQueue) -> None:
    """Let ``grantee`` send to the failure queue: the queue actions on its ARN and, for a queue
    encrypted with a customer-managed key, exactly ``kms:GenerateDataKey``/``kms:Decrypt`` on that
    key — CDK's own grant adds ``kms:ReEncrypt*``/``kms:GenerateDataKey*`` wildcards."""
    combined_grant(grantee, _SEND_FAILURES, [queue.queue_arn], key=queue.encryption_master_key,
                   key_actions=_SEND_FAILURES_KMS)

@jsii.implements(lambda_.IEventSourceDlq)
class FailureQueue:
    """An event source mapping's on-failure destination: the failure queue (see
    :func:`grant_send_failures` for the permissions it grants the function)."""

    def __init__(self, queue: sqs.IQueue) -> None:
        self._queue = queue

    def bind(self, target: lambda_.IEventSourceMapping, target_handler: lambda_.IFunction) -> lambda_.DlqDestinationConfig:
        grant_send_failures(target_handler, self._queue)
        return lambda_.DlqDestinationConfig(destination=self._queue.queue_arn)


@jsii.implements(lambda_.IDestination)
class FailureQueueDestination:
    """An asynchronous invocation's on-failure destination: the failure queue."""

    def __init__(self, queue: sqs.IQueue) -> None:
        self._queue = queue

    def bind(
        self, scope: Construct, fn: lambda_.IFunction, *, type: lambda_.DestinationType | None = None
    ) -> lambda_.DestinationConfig:
        grant_send_failures(fn, self._queue)
        return lambda_.DestinationConfig(destination=self._queue.queue_arn)


def consumer_alarms(
    scope: Construct,
    *,
    function: lambda_.Function,
    dlq: sqs.Queue,
    what: str,
    iterator_age: cdk.Duration | None,
) -> tuple[cloudwatch.Alarm, cloudwatch.Alarm | None, cloudwatch.Alarm]:
    """Errors ≥ 1 in 5 minutes; iterator age above ``iterator_age`` (when consuming a stream);
    failure queue not empty. Missing data (no invocations) is not breaching."""
    five_minutes = cdk.Duration.minutes(5)

    def alarm(id: str, metric: cloudwatch.Metric, threshold: float, op: cloudwatch.ComparisonOperator,
              description: str) -> cloudwatch.Alarm:
        return metric.create_alarm(
            scope, id, threshold=threshold, evaluation_periods=1, comparison_operator=op,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING, alarm_description=f"{what}: {description}",
        )

    at_least = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
    errors = alarm("ErrorsAlarm", function.metric_errors(period=five_minutes, statistic="Sum"), 1, at_least,
                   "the function failed at least once in 5 minutes")
    age = None
    if iterator_age is not None:
        age = alarm(
            "IteratorAgeAlarm", function.metric("IteratorAge", period=five_minutes, statistic="Maximum"),
            iterator_age.to_milliseconds(), cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            f"the function lags its stream by more than {iterator_age.to_human_string()}",
        )
    depth = alarm(
        "FailedBatchesAlarm",
        dlq.metric_approximate_number_of_messages_visible(period=five_minutes, statistic="Maximum"), 1, at_least,
        "failed batches reached the failure queue",
    )
    return errors, age, depth


class StreamConsumer(Construct):
    """Base of the patterns that consume a table's stream with a generated function
    (``ShardedCounter``, ``StreamAudit``).

    :meth:`_consume` builds the shared shape, in order: the bundled function, the subclass's
    grants (:meth:`_grant_function`), the failure queue, the event source mapping, the
    subclass's other triggers (:meth:`_add_triggers`), the alarms, and the registration with
    the table's operations view. A new pattern sets the four defaults below, takes
    ``**options: Unpack[StreamConsumerOptions]`` after its own keywords, implements
    :meth:`_grant_function`, and calls :meth:`_configure_consumer` and then :meth:`_consume`
    from its constructor.
    """

    #: The function's timeout when ``StreamConsumerProps.timeout`` is None.
    DEFAULT_TIMEOUT = cdk.Duration.seconds(30)
    #: Records per invocation when the construct is given no ``batch_size``.
    DEFAULT_BATCH_SIZE = 100
    #: Records older than this go to the failure queue when ``max_record_age`` is None.
    DEFAULT_MAX_RECORD_AGE = cdk.Duration.hours(1)
    #: Iterator-age alarm threshold when ``iterator_age_alarm_threshold`` is None.
    DEFAULT_ITERATOR_AGE = cdk.Duration.minutes(1)

    #: The stream-consumer settings the construct was given (None where the pattern's default
    #: applies; ``batch_size`` is the one applied).
    props: StreamConsumerProps
    function: lambda_.Function
    log_group: logs.LogGroup
    dlq: sqs.Queue
    event_source_mapping: lambda_.EventSourceMapping | None
    errors_alarm: cloudwatch.Alarm
    iterator_age_alarm: cloudwatch.Alarm | None
    dlq_alarm: cloudwatch.Alarm

    def _configure_consumer(self, what: str, options: Mapping[str, Any]) -> StreamSettings:
        """Keep the stream-consumer keywords as ``self.props`` and return the event source mapping
        settings, checked (``TypeError`` for an unknown keyword, :class:`ConstructPropsError`
        naming the prop, the value and the rule)."""
        self.props = consumer_props(what, {"batch_size": self.DEFAULT_BATCH_SIZE, **options})
        return self.props.settings(what, default_max_record_age=self.DEFAULT_MAX_RECORD_AGE)

    def _consume(
        self,
        *,
        table: ModelBoundTable,
        settings: StreamSettings,
        handler: str,
        environment: dict[str, str],
        description: str,
        filters: Sequence[dict[str, Any]],
        title: str,
        alarm_subject: str,
        stream: bool = True,
    ) -> None:
        props = self.props
        self.function, self.log_group = bundled_function(
            self, model=table.model, handler=handler, environment=environment, memory_size=props.memory_size,
            timeout=props.timeout or self.DEFAULT_TIMEOUT, log_retention=props.log_retention, description=description,
        )
        self._grant_function(self.function)
        self.dlq = failure_queue(self)
        self.event_source_mapping = None
        if stream:
            self.event_source_mapping = stream_mapping(
                self, function=self.function, table=table, filters=filters, settings=settings, dlq=self.dlq
            )
        self._add_triggers()
        self.errors_alarm, self.iterator_age_alarm, self.dlq_alarm = consumer_alarms(
            self, function=self.function, dlq=self.dlq, what=alarm_subject,
            iterator_age=(props.iterator_age_alarm_threshold or self.DEFAULT_ITERATOR_AGE)
            if self.event_source_mapping is not None else None,
        )
        table.register_consumer(MonitoredConsumer(
            construct=self, title=title, function=self.function, dlq=self.dlq, errors_alarm=self.errors_alarm,
            iterator_age_alarm=self.iterator_age_alarm, dlq_alarm=self.dlq_alarm,
        ))

    def _grant_function(self, function: lambda_.Function) -> None:
        """Grant the generated function what it needs of the tables (subclasses implement it)."""
        raise NotImplementedError

    def _add_triggers(self) -> None:
        """Anything besides the stream that invokes the function (default: nothing)."""
