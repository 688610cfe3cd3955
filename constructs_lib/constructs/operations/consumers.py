"""``MonitoredConsumer``: a pattern construct's function, queue and alarms as a table's
operations view shows them (the contract between the patterns and the view)."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct


@dataclass(frozen=True)
class MonitoredConsumer:
    """A stream (or schedule) consumer built on a table, as its operations view shows it.

    Pattern constructs pass one to :meth:`SingleTable.register_consumer`; its alarms are keyed
    ``<construct id>/Errors``, ``/IteratorAge`` and ``/FailedBatches`` in ``TableOperations.alarms``.
    """

    construct: Construct
    title: str
    function: lambda_.IFunction
    dlq: sqs.IQueue
    errors_alarm: cloudwatch.Alarm
    iterator_age_alarm: cloudwatch.Alarm | None
    dlq_alarm: cloudwatch.Alarm

    @property
    def key(self) -> str:
        return self.construct.node.id

    def alarms(self) -> dict[str, cloudwatch.Alarm]:
        found = {"Errors": self.errors_alarm, "IteratorAge": self.iterator_age_alarm, "FailedBatches": self.dlq_alarm}
        return {f"{self.key}/{name}": alarm for name, alarm in found.items() if alarm is not None}
