"""``ShardedCounter``: a write-sharded counter family on a model-bound table, with an aggregator.

A family spreads each counter over N shard items on N partition keys (N × 1,000 WCU); a generated
aggregator keeps one total per counter. With a table stream (new images) it adds what each record
changed, once (``aggregation="deltas"``): an event source mapping whose filters let only the
family's shard writes and new increment items through, capped retries, a failure queue it can
re-drive. Without one, ``schedule=`` recomputes listed totals from all shards (``"recompute"``).
Alarms join the table's operations view. Application code uses ``CounterClient``.

See docs/adr/0012-write-sharded-counters.md and
docs/adr/0014-stream-consumers-never-drop-records.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from ..runtime import environment
from ..runtime.exceptions import KeyValueError, SettingsError
from ..runtime.limits import WCU_BYTES
from ..runtime.patterns.counter import CounterSpec, ShardSizing, derive_shards
from ..runtime.patterns.counter.sizing import DEFAULT_HEADROOM, MAX_SHARDS
from ..runtime.patterns.counter.spec import (
    DEDUP_SK,
    DEFAULT_GUARD_SECONDS,
    DELTAS,
    ENTITIES,
    KEY_PREFIX,
    PREFIX,
    RECOMPUTE,
    REDRIVE_SOURCE,
    SCHEDULE_SOURCE,
    SHARD_SK,
    SUM_SK,
    TOTAL_SK,
)
from . import perms
from .bound_table import ModelBoundTable, require_bound_table
from .exceptions import ConstructPropsError
from .grants import combined_grant
from .stream_consumer import (
    FailureQueueDestination,
    StreamConsumer,
    StreamConsumerOptions,
)

if TYPE_CHECKING:
    from ..model import Model


class ShardedCounter(StreamConsumer):
    """A family of write-sharded counters with a generated aggregator.

    Give either ``shards`` or ``expected_writes_per_second``. With the rate, the shard count
    is derived from the write rate::

        WCU per write  = ceil(item_size_bytes / 1024)   (× 2 for idempotent increments on a
                                                         table without a stream: transactions)
        required WCU   = expected_writes_per_second × WCU per write × headroom
        shards         = ceil(required WCU / 1000)      (1,000 WCU per partition)

    e.g. 50,000 views/s × 1 WCU × 1.2 = 60,000 WCU → 60 shards, idempotent or not: on a table
    with a stream an idempotent increment is one conditional PutItem (1 WCU below 1 KB). The
    derivation is stored in the aggregator's environment (``COUNTER_SHARDS_DERIVATION``) and
    description, so it is visible in the synthesized template.

    **Aggregation.** On a table with a stream the family is aggregated from it
    (``spec.aggregation == "deltas"``): each record's amount is added to its counter's total
    once, so the stream must carry new images (``NEW_IMAGE`` or ``NEW_AND_OLD_IMAGES``). Totals
    written by an earlier version (which recomputed them from ``SHARD`` items) are folded in
    once. On a table without one (``"recompute"``), ``schedule=`` recomputes the listed totals
    from all shards.

    **Re-drive.** A stream batch that ends in the failure queue (retries exhausted, records
    older than ``max_record_age``, a record of unknown shape) was not applied. Once the cause is
    fixed, and within the stream's 24-hour retention, invoke the aggregator with
    ``{"source": "constructs_lib.counter.redrive"}``: it reads its failure queue
    (``CONSTRUCTS_LIB_AGGREGATOR_FAILURE_QUEUE``), applies each range once and deletes its
    message (a range holding a record of unknown shape stays in the queue); or pass the ranges
    yourself, ``{"source": ..., "ranges": [<failure message body>, ...]}`` (each body, the
    on-failure record Lambda sent, holds the range as ``DDBStreamBatchInfo``).

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    table
        The :class:`SingleTable` holding the counters. Its model must have a sort key and no
        entity whose keys could equal the family's (``COUNTER#<name>#...``); its stream, if
        any, must carry new images.
    name
        Family name, ``[a-z][a-z0-9_]{0,47}``, unique per table. Counter ids inside it are
        dynamic (any non-empty string, escaped into keys).
    shards
        Fixed shard count, 1–1,000. Growing it later is safe; shrinking it loses the removed
        shards' counts. Default: derived from ``expected_writes_per_second``.
    expected_writes_per_second
        Peak increments/s of the hottest single counter. Default None.
    item_size_bytes
        Size assumed per shard write in the derivation. Default 1,024 (1 WCU).
    headroom
        Safety factor of the derivation, 1–10. Default 1.2.
    idempotency_window
        Enables ``increment(..., idempotency_key=...)``: each key's increment item (dedup
        marker on a table without a stream) expires after this long through the model's TTL
        attribute, which must exist; at least one minute. Default None (off: no PutItem
        permission for incrementers).
    schedule
        Recompute ``scheduled_counters`` at this rate (EventBridge). Required when the table has
        no stream; refused when it has one (its totals are kept from the stream). Default None.
    scheduled_counters
        Counter ids the schedule recomputes. Default none.
    **options
        The stream-consumer settings (:class:`StreamConsumerOptions`, documented on
        :class:`StreamConsumerProps`): ``batch_size`` (default 1,000: the aggregator writes each
        touched total once per batch and 25 shards, so a bigger batch spreads that write over
        more increments), ``max_batching_window`` (1 second), ``retry_attempts`` (5),
        ``max_record_age`` (1 hour; older records go to the failure queue, from where they can
        be re-driven), ``parallelization_factor`` (1), ``iterator_age_alarm_threshold``
        (1 minute), ``memory_size`` (256 MB), ``timeout`` (30 seconds), ``log_retention`` (one
        month). The aggregator keeps its exactly-once guards for ``max_record_age`` +
        ``timeout`` + 60 seconds (the spec's ``guard_seconds``).
    """

    #: Entity names of the counter's items (``StreamAudit(exclude_entities=ShardedCounter.ENTITIES)``).
    ENTITIES = ENTITIES
    DEFAULT_TIMEOUT = cdk.Duration.seconds(30)
    DEFAULT_MAX_RECORD_AGE = cdk.Duration.hours(1)
    DEFAULT_ITERATOR_AGE = cdk.Duration.minutes(1)
    DEFAULT_BATCH_SIZE = 1000
    #: Margin of ``guard_seconds`` over the mapping's maximum record age and the function's timeout.
    GUARD_MARGIN_SECONDS = 60

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        table: ModelBoundTable,
        name: str,
        shards: int | None = None,
        expected_writes_per_second: float | None = None,
        item_size_bytes: int = WCU_BYTES,
        headroom: float = DEFAULT_HEADROOM,
        idempotency_window: cdk.Duration | None = None,
        schedule: cdk.Duration | None = None,
        scheduled_counters: Sequence[str] = (),
        **options: Unpack[StreamConsumerOptions],
    ) -> None:
        super().__init__(scope, id)
        what = f"ShardedCounter {id!r}"
        model = self._validate_table(what, table)
        deltas = table.table_stream_arn is not None
        if deltas:
            self._validate_stream_view(what, table)
        if idempotency_window is not None and table.replication is not None:  # (docs/adr/0054-global-tables.md)
            from .replicas import MRSC_NO_TRANSACTIONS, MRSC_NO_TTL

            if deltas:
                table.replication.refuse_strong(what, "idempotent increments (increment items expire through TTL)",
                                                MRSC_NO_TTL)
            else:
                table.replication.refuse_strong(what, "idempotent increments (TransactWriteItems)", MRSC_NO_TRANSACTIONS)
            table.replication.require(what, f"counter:{name}", f"counter {name!r} with idempotency_window")
        #: Every Region of the table when it is replicated (per-region shards and totals, ADR 0055), else ().
        self.regions = _all_regions(table)
        settings = self._configure_consumer(what, options)
        self.sizing, legacy_shards = self._sizing(
            what, shards, expected_writes_per_second, item_size_bytes, headroom, idempotency_window, deltas=deltas
        )
        guard = (int(settings.max_record_age.to_seconds()) + int((self.props.timeout or self.DEFAULT_TIMEOUT).to_seconds())
                 + self.GUARD_MARGIN_SECONDS)
        self.spec = self._spec(what, name, shards, model, idempotency_window, aggregation=DELTAS if deltas else RECOMPUTE,
                               guard_seconds=guard, legacy_shards=legacy_shards)
        self._check_table(what, table)
        self._schedule, self._scheduled = self._validate_schedule(what, table, schedule, scheduled_counters)
        self.table = table
        self.family = name
        self.derivation = self.sizing.explain() if self.sizing else f"fixed: {self.spec.shards} shard(s)"
        if self.regions and self.spec.idempotent:
            cdk.Annotations.of(self).add_warning_v2(
                "constructs-lib:counter-idempotency-per-region",
                f"{what}: the table is replicated to {', '.join(self.regions)}; an idempotency key is deduplicated "
                "within one region only (the condition of its increment item, or dedup marker, is evaluated against "
                "the local replica): a retry sent to another region before that item has replicated there is "
                "counted again",
            )
        self.schedule_rule: events.Rule | None = None
        does = "Aggregates from the stream" if deltas else "Recomputes"
        self._consume(
            table=table, settings=settings, handler="constructs_lib.runtime.handlers.counter.handler",
            environment={
                **self.environment, **table.runtime_environment,
                environment.ENV_COUNTER_FAMILY: name, "COUNTER_SHARDS_DERIVATION": self.derivation,
            },
            description=f"{does} totals of counter family {name} ({self.spec.shards} shards: {self.derivation})"[:256],
            filters=self.stream_filters(), title=f"ShardedCounter {id} ({name})", alarm_subject=f"Counter family {name}",
            stream=deltas,
        )
        if deltas:
            self._enable_redrive()
        #: The generated aggregator (also ``function``).
        self.aggregator_function = self.function

    # The stream mapping's filters ---------------------------------------------------------------------
    def stream_filters(self) -> list[dict[str, Any]]:
        """The event filters (OR-ed, on leaves) of a family aggregated from the stream: writes of its
        shards (``SUM``, and ``SHARD`` of the recompute layout while earlier writers still run;
        ``SUM#``/``SHARD#<region>`` on a replicated table), and increment items (``KEY#...``) when
        created only — their TTL expiries and overwrites never invoke the aggregator. Its totals'
        writes never match. ``[]`` for a recomputed family (no stream)."""
        s = self.spec
        if not s.deltas:
            return []
        family = {s.pk_attribute: {"S": [{"prefix": s.key_prefix}]}}
        shards: list[Any] = [{"prefix": f"{SUM_SK}#"}, {"prefix": f"{SHARD_SK}#"}] if self.regions else [SUM_SK, SHARD_SK]
        return [
            {"dynamodb": {"Keys": {**family, s.sk_attribute: {"S": shards}}}},
            {"eventName": ["INSERT"], "dynamodb": {"Keys": {**family, s.sk_attribute: {"S": [{"prefix": KEY_PREFIX}]}}}},
        ]

    # The shared consumer shape's hooks ----------------------------------------------------------------
    def _grant_function(self, function: lambda_.Function) -> None:
        actions = perms.COUNTER_AGGREGATE_DELTAS if self.spec.deltas else perms.COUNTER_AGGREGATE
        self.table.grant_items(function, actions, leading_key_prefix=self.spec.key_prefix, write=True)

    def _enable_redrive(self) -> None:
        """What a re-drive event needs: the failure queue's URL in the environment, receiving and
        deleting its messages (and decrypting them with a customer-managed queue key). Reading the
        failed ranges back from the stream (GetShardIterator, GetRecords on the stream ARN) is the
        stream read the event source mapping already grants."""
        self.function.add_environment(environment.ENV_COUNTER_FAILURE_QUEUE, self.dlq.queue_url)
        combined_grant(self.function, perms.COUNTER_REDRIVE_QUEUE, [self.dlq.queue_arn],
                       key=self.dlq.encryption_master_key, key_actions=perms.COUNTER_REDRIVE_KMS)

    def _add_triggers(self) -> None:
        if self._schedule is None:
            return
        self.schedule_rule = events.Rule(self, "Schedule", schedule=events.Schedule.rate(self._schedule))
        self.schedule_rule.add_target(targets.LambdaFunction(
            self.function,
            event=events.RuleTargetInput.from_object({"source": SCHEDULE_SOURCE, "counters": self._scheduled}),
        ))
        # A failed scheduled run is retried twice by Lambda, then recorded in the failure queue
        # (sent by the function's role; EventBridge itself cannot use the aws/sqs key). A missed
        # run loses nothing: the next one recomputes from the shards.
        self.function.configure_async_invoke(retry_attempts=2, on_failure=FailureQueueDestination(self.dlq))

    # Validation -------------------------------------------------------------------------------------------
    @staticmethod
    def _validate_table(what: str, table: ModelBoundTable) -> Model:
        require_bound_table(what, "table", table)
        if not table.model.has_sort_key:
            raise ConstructPropsError(
                f"{what}: table model {table.model.name!r} has no sort key; counter items are told apart by their "
                "sort key (SUM/KEY#.../TOTAL)"
            )
        return table.model

    @staticmethod
    def _validate_stream_view(what: str, table: ModelBoundTable) -> None:
        """A family aggregated from the stream reads each write's amount from the new image."""
        view = table.stream_view_type
        if view in (dynamodb.StreamViewType.NEW_IMAGE, dynamodb.StreamViewType.NEW_AND_OLD_IMAGES):
            return
        if view is None:
            raise ConstructPropsError(
                f"{what}: the view type of {table.what}'s stream is not declared (an import cannot read it); the "
                "aggregator adds the amount each stream record's new image carries, so the stream must be NEW_IMAGE "
                "or NEW_AND_OLD_IMAGES: if the deployed stream is, pass stream_view_type=StreamViewType.NEW_IMAGE "
                "(or NEW_AND_OLD_IMAGES) to the importer"
            )
        name = str(view).rsplit(".", 1)[-1]
        raise ConstructPropsError(
            f"{what}: the stream of {table.what} is {name}; a counter family on a table with a stream is aggregated "
            "from it and adds the amount each record's new image carries, so the stream must be NEW_IMAGE or "
            "NEW_AND_OLD_IMAGES: pass stream=StreamViewType.NEW_IMAGE (NEW_AND_OLD_IMAGES if a StreamAudit reads "
            "it too) to SingleTable"
        )

    def _spec(
        self, what: str, name: str, shards: int | None, model: Model, idempotency_window: cdk.Duration | None, *,
        aggregation: str, guard_seconds: int, legacy_shards: int | None,
    ) -> CounterSpec:
        count = self.sizing.shards if self.sizing else shards
        assert count is not None  # _sizing: no sizing means shards was given
        deltas = aggregation == DELTAS
        try:
            return CounterSpec(
                family=name,
                shards=count,
                pk_attribute=model.pk_attribute,
                sk_attribute=model.sk_attribute,
                entity_attribute=model.entity_attribute,
                ttl_attribute=model.ttl_attribute,
                idempotency_ttl_seconds=int(idempotency_window.to_seconds()) if idempotency_window else None,
                regions=self.regions,
                aggregation=aggregation,
                # Guards and folds exist only when the family is aggregated from the stream.
                guard_seconds=guard_seconds if deltas else DEFAULT_GUARD_SECONDS,
                legacy_shards=legacy_shards if deltas else None,
            )
        except SettingsError as exc:
            raise ConstructPropsError(f"{what}: {exc}") from exc

    def _validate_schedule(
        self, what: str, table: ModelBoundTable, schedule: cdk.Duration | None, scheduled_counters: Sequence[str]
    ) -> tuple[cdk.Duration | None, list[str]]:
        if isinstance(scheduled_counters, (str, bytes)):
            raise ConstructPropsError(
                f"{what}: scheduled_counters={scheduled_counters!r} must be a list of counter ids, not a string "
                "(a string would be read as one id per character)"
            )
        scheduled = list(scheduled_counters)
        if table.table_stream_arn is None and schedule is None:
            raise ConstructPropsError(
                f"{what}: table {table.node.id!r} has no stream, so totals can only be recomputed on a schedule; "
                f"pass schedule=Duration.minutes(...) and scheduled_counters=[...], or {table.stream_hint}"
            )
        if (schedule is None) != (not scheduled):
            raise ConstructPropsError(f"{what}: schedule and scheduled_counters go together (got {schedule}, {scheduled!r})")
        if schedule is not None and self.spec.deltas:
            raise ConstructPropsError(
                f"{what}: table {table.node.id!r} has a stream, so the family is aggregated from it "
                "(aggregation='deltas'): its totals are kept from the stream's changes and cannot be recomputed on "
                f"a schedule; drop schedule={schedule.to_human_string()!r} and scheduled_counters (a failed batch is "
                f"re-driven from the failure queue: invoke the aggregator with {{'source': {REDRIVE_SOURCE!r}}})"
            )
        for counter_id in scheduled:
            try:
                self.spec.total_key(counter_id)
            except KeyValueError as exc:
                raise ConstructPropsError(f"{what}: scheduled counter {counter_id!r}: {exc}") from exc
        return schedule, scheduled

    @staticmethod
    def _sizing(
        what: str, shards: int | None, rate: float | None, size: int, headroom: float, idempotency: cdk.Duration | None,
        *, deltas: bool,
    ) -> tuple[ShardSizing | None, int | None]:
        """The sizing (None for a fixed count) and, for a family aggregated from the stream, the
        shard count the recompute layout had (its ``SHARD`` items are folded in once: ``legacy_shards``)."""
        if (shards is None) == (rate is None):
            raise ConstructPropsError(f"{what}: give exactly one of shards={shards!r} and expected_writes_per_second={rate!r}")
        if rate is None:
            return None, shards if deltas else None
        # An idempotent increment is a two-item transaction (2 WCU per KB) in the recompute layout
        # only; aggregated from the stream it is one conditional PutItem.
        try:
            sizing = derive_shards(rate, item_size_bytes=size, headroom=headroom,
                                   transactional=idempotency is not None and not deltas)
        except SettingsError as exc:
            raise ConstructPropsError(f"{what}: {exc}") from exc
        if not deltas or idempotency is None:
            return sizing, sizing.shards if deltas else None
        try:
            legacy = derive_shards(rate, item_size_bytes=size, headroom=headroom, transactional=True).shards
        except SettingsError:  # the recompute layout refused this rate: no SHARD item can exist beyond the limit
            legacy = MAX_SHARDS
        return sizing, legacy

    def _check_table(self, what: str, table: ModelBoundTable) -> None:
        model = table.model
        clash = [t for t in ENTITIES if t in model.entities]
        if clash:
            raise ConstructPropsError(f"{what}: model entity names {clash} are reserved for counter items")
        prefix = f"{PREFIX}#{self.spec.family}"
        per_region = "#{region}" if self.regions else ""
        shard_pk = prefix + "#{counter_id}#{shard}"
        # Both layouts: the recompute layout's items are read once when a total is folded in.
        layouts = {
            "shard": (shard_pk, SUM_SK + per_region),
            "increment": (shard_pk, KEY_PREFIX + "{key}"),
            "total": (prefix + "#{counter_id}", TOTAL_SK + per_region),
            "recompute-layout shard": (shard_pk, SHARD_SK + per_region),
            "dedup": (prefix + "#{counter_id}#" + DEDUP_SK + "#{key}", DEDUP_SK),
        }
        for kind, (pk, sk) in layouts.items():
            hits = model.entities_overlapping(pk, sk)
            if hits:
                raise ConstructPropsError(
                    f"{what}: entity {hits[0]!r} could build the same key as a counter {kind} item ({pk} / {sk}); "
                    f"give the entity a partition key literal other than {PREFIX!r}"
                )
        table.claim_key_prefix(self.spec.key_prefix, owner=f"counter family {self.spec.family!r} ({self.node.path})")

    # Using the counter from other functions -------------------------------------------------------------------------
    @property
    def environment(self) -> dict[str, str]:
        """Environment variables that let ``CounterClient.from_environment(name)`` find the family."""
        return {self.spec.env_var: self.spec.to_json(), f"{self.spec.env_var}_TABLE": self.table.table_name}

    def grant_increment(self, grantee: iam.IGrantable) -> iam.Grant:
        """UpdateItem on this family's keys only (IAM ``dynamodb:LeadingKeys`` = ``COUNTER#<name>#*``),
        plus — when idempotent increments are enabled — PutItem (the key's increment item, or
        the dedup marker in the recompute layout's transaction) and GetItem (explaining a reused
        key)."""
        actions = perms.COUNTER_INCREMENT + (perms.COUNTER_IDEMPOTENT if self.spec.idempotent else ())
        return self.table.grant_items(grantee, actions, leading_key_prefix=self.spec.key_prefix, write=True)

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """GetItem (aggregated total) and BatchGetItem (exact read: every shard and the total; every
        region's total on a replicated table) on this family's keys only."""
        return self.table.grant_items(grantee, perms.COUNTER_READ, leading_key_prefix=self.spec.key_prefix, write=False)

    def bind(self, function: lambda_.Function, *, increment: bool = True, read: bool = True) -> None:
        """Give ``function`` the environment and grants to use the family through ``CounterClient``."""
        if not (increment or read):
            raise ConstructPropsError(f"ShardedCounter {self.node.id!r}: bind() with neither increment nor read grants nothing")
        owner = function.node.scope
        bundle = getattr(owner, "bundle", None)
        shipped = set(getattr(bundle, "runtime_files", ())) if getattr(owner, "function", None) is function else set()
        # A TableFunction whose code can use the counter client but was bundled without the
        # recompute layout's code would fail at its first idempotent increment (an import).
        if not self.spec.deltas and _CLIENT_MODULE in shipped and _RECOMPUTE_MODULE not in shipped:
            raise ConstructPropsError(
                f"ShardedCounter {self.node.id!r}: family {self.family!r} is recomputed from its shards (its table has "
                f"no stream) and function {function.node.path!r} was bundled without that layout's code: bind it with "
                "TableFunction(counters=[...]), which ships it"
            )
        for key, value in self.environment.items():
            function.add_environment(key, value)
        if increment:
            self.grant_increment(function)
        if read:
            self.grant_read(function)


#: Asset paths of the counter client and of the recompute layout's code (``bundling.RECOMPUTE_ONLY``).
_CLIENT_MODULE = "constructs_lib/runtime/patterns/counter/client.py"
_RECOMPUTE_MODULE = "constructs_lib/runtime/patterns/counter/recompute.py"


def _all_regions(table: ModelBoundTable) -> tuple[str, ...]:
    """The table's own Region and its replicas' on a replicated table, else ``()``."""
    replicas = tuple(getattr(table, "replica_regions", ()) or ())
    if not replicas:
        return ()
    return (str(table.home_region), *replicas)


__all__ = ["ShardedCounter"]
