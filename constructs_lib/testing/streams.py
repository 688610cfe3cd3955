"""A local stand-in for a Lambda event source mapping on a DynamoDB stream.

:class:`StreamRunner` reads a DynamoDB Local stream through the real Streams API, turns each
record into the one AWS Lambda delivers (:func:`to_lambda_record`), applies the mapping's
:class:`MappingSettings` (e.g. :meth:`MappingSettings.from_template`) — order per shard,
filters, batch size, bisect on error, partial batch responses, capped retries, record age — and
calls a handler with ``{"Records": [...]}``. Failed ranges land in
:attr:`StreamRunner.dead_letters`: nothing is dropped silently. The semantics point by point:
docs/testing.md ("What the local stand-ins reproduce").

Import-light: standard library only at module level (``botocore`` is imported when needed).
"""

from __future__ import annotations

import base64
import copy
import json
import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

from ._cfn_tables import LOCAL_ACCOUNT_ID, load_template, match_logical_id
from .event_filters import matches_any, parse_filter_criteria, validate_pattern
from .exceptions import EventFilterError, LocalDeployError, StreamRunnerError

if TYPE_CHECKING:
    from .local_deploy import LocalDeployment

__all__ = ["MappingSettings", "RunReport", "StreamRunner", "to_lambda_record"]

EVENT_SOURCE_MAPPING = "AWS::Lambda::EventSourceMapping"
_STARTING_POSITIONS = ("TRIM_HORIZON", "LATEST")
_TTL_EVENT_NAME = "UNKNOWN_TO_SDK_VERSION"  # how DynamoDB Local reports a TTL deletion
_TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}


def _ref_target(value: Any, attribute: str | None) -> str | None:
    """Logical id in ``{"Ref": id}`` (when *attribute* is None) or ``{"Fn::GetAtt": [id, attribute]}``."""
    if not isinstance(value, Mapping) or len(value) != 1:
        return None
    if attribute is None and isinstance(value.get("Ref"), str):
        return str(value["Ref"])
    arg = value.get("Fn::GetAtt")
    if isinstance(arg, str) and "." in arg:
        arg = arg.split(".", 1)
    if isinstance(arg, list) and len(arg) == 2 and arg[1] == (attribute or "Arn") and isinstance(arg[0], str):
        return arg[0]
    return None


@dataclass(frozen=True)
class MappingSettings:
    """The event source mapping settings the runner applies (AWS property in brackets).

    Parameters
    ----------
    batch_size : int, optional
        Most records per invocation, 1..10000 (``BatchSize``). Default 100.
    filters : tuple[dict, ...], optional
        Decoded patterns; a record is delivered if it matches any (``FilterCriteria``). Default ().
    report_batch_item_failures : bool, optional
        Honour ``batchItemFailures`` (``FunctionResponseTypes``). Default False.
    bisect_on_error : bool, optional
        Split a failed batch before retrying (``BisectBatchOnFunctionError``). Default False.
    max_retry_attempts : int, optional
        -1..10000 (``MaximumRetryAttempts``); -1 (infinite on AWS) is capped locally at
        ``retry_limit_when_infinite``. Default -1.
    max_record_age_s : int or None, optional
        ``MaximumRecordAgeInSeconds``, None = infinite. AWS wants 60..604800; any integer >= 0 is
        accepted locally so tests need not wait. Default None.
    starting_position : str, optional
        ``"TRIM_HORIZON"`` or ``"LATEST"`` (``StartingPosition``). Default ``"TRIM_HORIZON"``.
    on_failure : str or None, optional
        ``DestinationConfig.OnFailure.Destination``: an ARN, or the JSON text of a template
        intrinsic. Informational: failures always land in ``StreamRunner.dead_letters``.
        Default None.
    function_logical_id, event_source : optional
        The mapped function's logical id and the raw ``EventSourceArn``. Default None.
    retry_limit_when_infinite : int, optional
        Retries allowed when ``max_retry_attempts`` is -1; >= 0. Default 10.

    Raises
    ------
    StreamRunnerError
        A value is out of range (the message names it and the rule); EventFilterError for a
        malformed filter pattern.
    """

    batch_size: int = 100
    filters: tuple[dict[str, Any], ...] = ()
    report_batch_item_failures: bool = False
    bisect_on_error: bool = False
    max_retry_attempts: int = -1
    max_record_age_s: int | None = None
    starting_position: str = "TRIM_HORIZON"
    on_failure: str | None = None
    function_logical_id: str | None = None
    event_source: Any = None
    retry_limit_when_infinite: int = 10

    def __post_init__(self) -> None:
        def check(name: str, ok: bool, rule: str) -> None:
            if not ok:
                raise StreamRunnerError(f"MappingSettings.{name}={getattr(self, name)!r} is invalid: {rule}")

        def integer(value: Any) -> bool:
            return isinstance(value, int) and not isinstance(value, bool)

        check("batch_size", integer(self.batch_size) and 1 <= self.batch_size <= 10000, "must be in 1..10000")
        retries = self.max_retry_attempts
        check("max_retry_attempts", integer(retries) and -1 <= retries <= 10000, "must be -1 (infinite) or 0..10000")
        limit = self.retry_limit_when_infinite
        check("retry_limit_when_infinite", integer(limit) and limit >= 0, "must be an integer >= 0")
        age = self.max_record_age_s
        check("max_record_age_s", age is None or (integer(age) and age >= 0), "must be None or an integer >= 0")
        check("starting_position", self.starting_position in _STARTING_POSITIONS, f"must be one of {_STARTING_POSITIONS}")
        check("filters", not isinstance(self.filters, (str, Mapping)), "must be a sequence of pattern dicts")
        filters = tuple(self.filters)
        for pattern in filters:
            validate_pattern(pattern)
        object.__setattr__(self, "filters", filters)

    @property
    def retry_limit(self) -> int:
        """Retries allowed per record range (``retry_limit_when_infinite`` when infinite)."""
        return self.retry_limit_when_infinite if self.max_retry_attempts < 0 else self.max_retry_attempts

    @property
    def table_logical_id(self) -> str | None:
        """Logical id of the table when ``event_source`` is ``{"Fn::GetAtt": [id, "StreamArn"]}``."""
        return _ref_target(self.event_source, "StreamArn")

    @classmethod
    def from_template(
        cls, template: Mapping[str, Any] | str | os.PathLike[str], logical_id: str | None = None, *,
        function_logical_id: str | None = None,
    ) -> MappingSettings:
        """Read an ``AWS::Lambda::EventSourceMapping`` of a synthesized template.

        Parameters
        ----------
        template : Mapping or path
            The template dict or the path of a ``*.template.json`` file.
        logical_id : str, optional
            Logical id (or unique prefix) of the mapping. Default None: the only mapping whose
            ``FunctionName`` is ``{"Ref": id}``/``{"Fn::GetAtt": [id, "Arn"]}`` of
            *function_logical_id* when given, else the only mapping of the template.
        function_logical_id : str, optional
            See *logical_id*. Default None.

        Raises
        ------
        StreamRunnerError
            No or several candidate mappings (listed); ``TumblingWindowInSeconds``,
            ``StartingPosition: AT_TIMESTAMP`` or ``Enabled: false``; an out-of-range value.
        EventFilterError
            A filter pattern cannot be decoded or is malformed.
        """
        try:
            resources = load_template(template)["Resources"]
            mappings = {k: r for k, r in resources.items() if isinstance(r, Mapping) and r.get("Type") == EVENT_SOURCE_MAPPING}
            if logical_id is not None:
                chosen = match_logical_id(mappings, logical_id, EVENT_SOURCE_MAPPING)
                return cls._from_properties(chosen, mappings[chosen].get("Properties") or {}, function_logical_id)
        except LocalDeployError as exc:
            raise StreamRunnerError(str(exc)) from exc
        candidates = [
            lid for lid in sorted(mappings)
            if function_logical_id is None or _mapped_function(mappings[lid].get("Properties") or {}) == function_logical_id
        ]
        if len(candidates) != 1:
            scope = f" for function {function_logical_id!r}" if function_logical_id else ""
            raise StreamRunnerError(
                f"Expected exactly one {EVENT_SOURCE_MAPPING}{scope}, found {len(candidates)} "
                f"({', '.join(candidates) or 'none'}); pass logical_id. Mappings: {', '.join(sorted(mappings)) or 'none'}."
            )
        return cls._from_properties(candidates[0], mappings[candidates[0]].get("Properties") or {}, function_logical_id)

    @classmethod
    def _from_properties(cls, lid: str, props: Mapping[str, Any], function_logical_id: str | None) -> MappingSettings:
        if "TumblingWindowInSeconds" in props:
            raise StreamRunnerError(
                f"{lid}: TumblingWindowInSeconds={props['TumblingWindowInSeconds']!r} is not supported locally "
                "(tumbling windows change the event shape)"
            )
        if props.get("Enabled") in (False, "false", "False"):
            raise StreamRunnerError(f"{lid}: Enabled=false; a disabled mapping delivers nothing")
        position = props.get("StartingPosition", "TRIM_HORIZON")
        if position not in _STARTING_POSITIONS:
            raise StreamRunnerError(f"{lid}: StartingPosition {position!r} is not supported; use one of {_STARTING_POSITIONS}")
        destination = ((props.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        if destination is not None and not isinstance(destination, str):
            destination = json.dumps(destination, sort_keys=True)
        age = props.get("MaximumRecordAgeInSeconds")
        age = None if age is None or int(age) == -1 else int(age)
        try:
            filters = parse_filter_criteria(props.get("FilterCriteria"))
        except EventFilterError as exc:
            raise EventFilterError(f"{lid}: {exc}") from exc
        return cls(
            batch_size=int(props.get("BatchSize", 100)), filters=filters,
            report_batch_item_failures="ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or []),
            bisect_on_error=props.get("BisectBatchOnFunctionError") in (True, "true", "True"),
            max_retry_attempts=int(props.get("MaximumRetryAttempts", -1)), max_record_age_s=age,
            starting_position=position, on_failure=destination, event_source=props.get("EventSourceArn"),
            function_logical_id=function_logical_id or _mapped_function(props),
        )


def _mapped_function(props: Mapping[str, Any]) -> str | None:
    name = props.get("FunctionName")
    return _ref_target(name, None) or _ref_target(name, "Arn")


def _b64(value: Any) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


def _typed_json(value: Any) -> Any:
    """A typed attribute value with binary parts base64-encoded (recursively in M and L)."""
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for kind, inner in value.items():
        if kind == "B" and isinstance(inner, (bytes, bytearray, memoryview)):
            out[kind] = _b64(inner)
        elif kind == "BS":
            out[kind] = [_b64(v) if isinstance(v, (bytes, bytearray, memoryview)) else v for v in inner]
        elif kind == "M":
            out[kind] = {k: _typed_json(v) for k, v in inner.items()}
        elif kind == "L":
            out[kind] = [_typed_json(v) for v in inner]
        else:
            out[kind] = inner
    return out


def _epoch(value: Any) -> int | float:
    seconds = value.timestamp() if isinstance(value, datetime) else float(value)
    return int(seconds) if float(seconds).is_integer() else seconds


def to_lambda_record(
    stream_record: Mapping[str, Any],
    *,
    stream_arn: str,
    region: str = "us-east-1",
    normalize_ttl: bool = True,
) -> dict[str, Any]:
    """The record AWS Lambda delivers for one ``dynamodbstreams.get_records`` record.

    Parameters
    ----------
    stream_record : Mapping
        One entry of ``GetRecords``' ``Records`` as boto3 returns it (datetimes, bytes).
    stream_arn : str
        The stream ARN (``eventSourceARN``).
    region : str, optional
        ``awsRegion`` (DynamoDB Local reports ``ddblocal``). Default ``"us-east-1"``.
    normalize_ttl : bool, optional
        DynamoDB Local reports a TTL deletion as eventName ``UNKNOWN_TO_SDK_VERSION`` without
        ``userIdentity``; AWS sends ``REMOVE`` with ``userIdentity`` ``{"type": "Service",
        "principalId": "dynamodb.amazonaws.com"}``. True rewrites it to the AWS shape. Default True.

    Returns
    -------
    dict
        ``eventID``, ``eventName``, ``eventVersion``, ``eventSource``, ``awsRegion``, ``dynamodb``
        (``ApproximateCreationDateTime`` in epoch seconds, ``Keys``/``NewImage``/``OldImage`` with
        binary values base64-encoded, ``SequenceNumber``, ``SizeBytes``, ``StreamViewType``),
        ``eventSourceARN``, and ``userIdentity`` when present. ``json.dumps``-able.
    """
    raw = stream_record.get("dynamodb") or {}
    ddb: dict[str, Any] = {}
    if "ApproximateCreationDateTime" in raw:
        ddb["ApproximateCreationDateTime"] = _epoch(raw["ApproximateCreationDateTime"])
    for key in ("Keys", "NewImage", "OldImage"):
        if key in raw:
            ddb[key] = {name: _typed_json(v) for name, v in raw[key].items()}
    for key in ("SequenceNumber", "SizeBytes", "StreamViewType"):
        if key in raw:
            ddb[key] = raw[key]
    event_name = stream_record.get("eventName")
    identity = stream_record.get("userIdentity")
    if normalize_ttl and event_name == _TTL_EVENT_NAME and "NewImage" not in ddb:
        event_name, identity = "REMOVE", identity or dict(_TTL_IDENTITY)
    record: dict[str, Any] = {
        "eventID": stream_record.get("eventID"), "eventName": event_name,
        "eventVersion": stream_record.get("eventVersion", "1.1"), "eventSource": "aws:dynamodb",
        "awsRegion": region, "dynamodb": ddb, "eventSourceARN": stream_arn,
    }
    if identity:
        record["userIdentity"] = {"type": identity.get("Type", identity.get("type")),
                                  "principalId": identity.get("PrincipalId", identity.get("principalId"))}
    return record


@dataclass
class RunReport:
    """What one :meth:`StreamRunner.run` did."""

    invocations: int = 0  #: handler calls
    delivered: int = 0  #: records passed to the handler, counting redeliveries
    filtered_out: int = 0  #: records dropped by the filters (never delivered)
    retries: int = 0  #: retried invocations (bisecting is not a retry)
    dead_lettered: int = 0  #: records sent to the on-failure path
    batches: list[list[str]] = field(default_factory=list)  #: sequence numbers per invocation, in order
    errors: list[str] = field(default_factory=list)  #: ``"<ExceptionType>: <message>"`` per handler exception


class _Outcome(NamedTuple):
    handled: int  # leading records of the batch that succeeded; the rest failed if `failed`
    failed: bool
    function_error: bool = False
    whole_batch: bool = False  # a complete failure (raise or invalid response): may be bisected


def _iso(seconds: float, *, millis: bool = True) -> str:
    stamp = datetime.fromtimestamp(seconds, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + (f".{stamp.microsecond // 1000:03d}Z" if millis else "Z")


def _seq(record: Mapping[str, Any]) -> str:
    return str(record["dynamodb"]["SequenceNumber"])


class StreamRunner:
    """Feed a DynamoDB (Local) stream to a handler as a Lambda event source mapping would.

    Parameters
    ----------
    streams_client : botocore client
        A ``dynamodbstreams`` client (e.g. the ``dynamodb_streams_client`` fixture).
    stream_arn : str
        The table's ``LatestStreamArn``.
    handler : Callable[[dict], Any]
        Called with ``{"Records": [...]}`` (a ``LocalFunction`` works); raising fails the batch.
    settings : MappingSettings, optional
        Default ``MappingSettings()``: batches of 100, no filters, retries capped at 10.
    region : str, optional
        ``awsRegion`` of the records and region of the function ARN. Default ``"us-east-1"``.
    normalize_ttl : bool, optional
        Rewrite DynamoDB Local TTL deletions to the AWS shape (:func:`to_lambda_record`).
        Default True.

    Attributes
    ----------
    dead_letters : list[dict]
        On-failure records of every run so far.
    checkpoints : dict[str, str]
        Shard id -> sequence number of the last handled record.
    """

    def __init__(
        self, streams_client: Any, stream_arn: str, handler: Callable[[dict[str, Any]], Any], *,
        settings: MappingSettings = MappingSettings(), region: str = "us-east-1", normalize_ttl: bool = True,
    ) -> None:
        if not isinstance(settings, MappingSettings):
            raise StreamRunnerError(f"settings must be a MappingSettings, got {type(settings).__name__}")
        if not callable(handler):
            raise StreamRunnerError(f"handler {handler!r} is not callable")
        self.client, self.stream_arn, self.handler = streams_client, stream_arn, handler
        self.settings, self.region, self.normalize_ttl = settings, region, normalize_ttl
        self.dead_letters: list[dict[str, Any]] = []
        self.checkpoints: dict[str, str] = {}
        self._finished: set[str] = set()
        self._runs = 0
        self._budget: int | None = None
        self._last_request_id = ""
        self.function_arn = (
            f"arn:aws:lambda:{region}:{LOCAL_ACCOUNT_ID}:function:{settings.function_logical_id or 'local-function'}"
        )

    @classmethod
    def from_deployment(
        cls, deployment: LocalDeployment, template: Mapping[str, Any] | str | os.PathLike[str] | None,
        mapping_logical_id: str | None = None, *, handler: Callable[[dict[str, Any]], Any], streams_client: Any,
        function_logical_id: str | None = None,
    ) -> StreamRunner:
        """A runner for a mapping of a locally deployed template (*template* None: the deployed one).

        Settings come from :meth:`MappingSettings.from_template`; the stream ARN is
        ``deployment.stream_arn(settings.table_logical_id)``, or, for a table of another stack
        deployed with this one (``local_deploy.assembly``), the resolved ``EventSourceArn``.
        Raises StreamRunnerError when the mapping cannot be chosen or its ``EventSourceArn``
        resolves to no stream, LocalDeployError when that table is not deployed or has no stream.
        """
        tpl = deployment.template if template is None else template
        settings = MappingSettings.from_template(tpl, mapping_logical_id, function_logical_id=function_logical_id)
        table = settings.table_logical_id
        if table is not None:
            stream_arn = deployment.stream_arn(table)
        else:  # another stack's table: Fn::ImportValue / Fn::GetStackOutput of its stream ARN
            try:
                stream_arn = deployment.resolve(settings.event_source)
            except LocalDeployError as exc:
                raise StreamRunnerError(
                    f"EventSourceArn {settings.event_source!r} is neither {{'Fn::GetAtt': [<table>, 'StreamArn']}} nor "
                    f"a reference to a stream of a locally deployed stack ({exc}); build the runner with "
                    "StreamRunner(...) and an explicit stream ARN"
                ) from exc
            if not isinstance(stream_arn, str):
                raise StreamRunnerError(f"EventSourceArn {settings.event_source!r} resolves to {stream_arn!r}, not an ARN")
        return cls(streams_client, stream_arn, handler, settings=settings, region=deployment.region)

    # -- AWS seam -----------------------------------------------------------------------------
    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return dict(getattr(self.client, operation)(**kwargs))
        except (ClientError, BotoCoreError) as exc:
            raise StreamRunnerError(f"{operation} on stream {self.stream_arn!r} failed: {exc}") from exc

    def _shards(self) -> list[dict[str, Any]]:
        shards: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"StreamArn": self.stream_arn}
        while True:
            desc = self._call("describe_stream", **kwargs)["StreamDescription"]
            shards.extend(desc.get("Shards") or [])
            last = desc.get("LastEvaluatedShardId")
            if not last:
                break
            kwargs["ExclusiveStartShardId"] = last
        parents = {s["ShardId"]: s.get("ParentShardId") for s in shards}

        def depth(shard_id: str) -> int:  # ancestors still listed in the stream
            count = 0
            while parents.get(shard_id) in parents:
                shard_id, count = str(parents[shard_id]), count + 1
            return count

        return sorted(shards, key=lambda s: depth(s["ShardId"]))  # stable: parents first, else stream order

    def _read(self, shard_id: str) -> tuple[list[dict[str, Any]], bool]:
        """Records after the checkpoint until caught up, and whether the shard is closed."""
        kwargs: dict[str, Any] = {"StreamArn": self.stream_arn, "ShardId": shard_id}
        if shard_id in self.checkpoints:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=self.checkpoints[shard_id])
        else:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        iterator = self._call("get_shard_iterator", **kwargs).get("ShardIterator")
        records: list[dict[str, Any]] = []
        while iterator:
            page = self._call("get_records", ShardIterator=iterator, Limit=1000)
            got = page.get("Records") or []
            records.extend(got)
            iterator = page.get("NextShardIterator")
            if not got:
                break  # an open shard with nothing new: idle (caught up)
        return records, iterator is None

    # -- running ------------------------------------------------------------------------------
    def run(self, *, max_batches: int | None = None) -> RunReport:
        """Deliver every new record of every shard; return this run's :class:`RunReport`.

        Parameters
        ----------
        max_batches : int or None, optional
            Stop after this many handler invocations (>= 1). Default None (until caught up).

        Raises
        ------
        StreamRunnerError
            A Streams API call failed (the cause is kept), or *max_batches* < 1.
        """
        if max_batches is not None and (isinstance(max_batches, bool) or max_batches < 1):
            raise StreamRunnerError(f"max_batches={max_batches!r} is invalid: must be None or an integer >= 1")
        report = RunReport()
        self._budget = max_batches
        first_run = self._runs == 0
        self._runs += 1
        for shard in self._shards():
            shard_id = shard["ShardId"]
            if shard_id in self._finished:
                continue
            raw, closed = self._read(shard_id)
            if first_run and self.settings.starting_position == "LATEST":
                if raw:
                    self.checkpoints[shard_id] = raw[-1]["dynamodb"]["SequenceNumber"]
                continue
            records = [
                to_lambda_record(r, stream_arn=self.stream_arn, region=self.region, normalize_ttl=self.normalize_ttl)
                for r in raw
            ]
            if self._process_shard(shard_id, records, report) and closed:
                self._finished.add(shard_id)
            if self._budget == 0:
                break
        return report

    def _process_shard(self, shard_id: str, records: list[dict[str, Any]], report: RunReport) -> bool:
        """Batch, deliver and checkpoint *records*; False when the budget ran out first."""
        keep = [matches_any(self.settings.filters, r) for r in records]
        pos = 0
        while pos < len(records):
            batch = list(islice((i for i in range(pos, len(records)) if keep[i]), self.settings.batch_size))
            handled = self._process_batch(shard_id, [records[i] for i in batch], report) if batch else 0
            # Done: up to the last handled record (filtered ones before it included).
            done = batch[handled - 1] + 1 if handled else (batch[0] if batch else len(records))
            report.filtered_out += done - pos - handled
            if done > pos:
                self.checkpoints[shard_id] = _seq(records[done - 1])
            if handled < len(batch):
                return False  # budget exhausted
            pos = done
        return True

    def _process_batch(self, shard_id: str, batch: list[dict[str, Any]], report: RunReport) -> int:
        """Deliver one batch with retries/bisect; return how many leading records are handled."""
        work: deque[tuple[list[dict[str, Any]], int]] = deque([(batch, 0)])
        handled = 0
        while work:
            records, retries = work.popleft()
            expired = self._expired_prefix(records)
            if expired:
                self._dead_letter(shard_id, records[:expired], "RecordAgeExceeded", retries, None, report)
                handled += expired
                records = records[expired:]
                if not records:
                    continue
            if self._budget == 0:
                return handled
            outcome = self._invoke(records, report)
            if self._budget is not None:
                self._budget -= 1
            handled += outcome.handled
            if not outcome.failed:
                continue
            rest = records[outcome.handled :]
            if outcome.whole_batch and self.settings.bisect_on_error and len(rest) > 1:
                middle = (len(rest) + 1) // 2
                work.appendleft((rest[middle:], retries))
                work.appendleft((rest[:middle], retries))
            elif retries >= self.settings.retry_limit:
                error = "Unhandled" if outcome.function_error else None
                self._dead_letter(shard_id, rest, "RetryAttemptsExhausted", retries + 1, error, report)
                handled += len(rest)
            else:
                report.retries += 1
                work.appendleft((rest, retries + 1))
        return handled

    def _expired_prefix(self, records: list[dict[str, Any]]) -> int:
        limit, now, count = self.settings.max_record_age_s, time.time(), 0
        while limit is not None and count < len(records):
            created = records[count]["dynamodb"].get("ApproximateCreationDateTime")
            if created is None or now - float(created) <= limit:
                break
            count += 1
        return count

    def _invoke(self, records: list[dict[str, Any]], report: RunReport) -> _Outcome:
        self._last_request_id = str(uuid.uuid4())
        report.invocations += 1
        report.delivered += len(records)
        report.batches.append([_seq(r) for r in records])
        event = {"Records": [copy.deepcopy(r) for r in records]}  # the handler may mutate its event
        try:
            result = self.handler(event)
        except Exception as exc:  # noqa: BLE001 - handler boundary: any error fails the batch, recorded
            report.errors.append(f"{type(exc).__name__}: {exc}")
            return _Outcome(0, True, function_error=True, whole_batch=True)
        if not self.settings.report_batch_item_failures or result is None:
            return _Outcome(len(records), False)
        return self._partial(records, result)

    def _partial(self, records: list[dict[str, Any]], result: Any) -> _Outcome:
        whole_failure = _Outcome(0, True, whole_batch=True)
        if not isinstance(result, Mapping):
            return whole_failure
        failures = result.get("batchItemFailures")
        if not failures:
            return _Outcome(len(records), False)
        if not isinstance(failures, list):
            return whole_failure
        positions = {_seq(r): i for i, r in enumerate(records)}
        lowest: int | None = None
        for failure in failures:
            ident = failure.get("itemIdentifier") if isinstance(failure, Mapping) else None
            if not isinstance(ident, str) or ident not in positions:
                return whole_failure
            lowest = positions[ident] if lowest is None else min(lowest, positions[ident])
        return _Outcome(lowest or 0, True)

    def _dead_letter(
        self, shard_id: str, records: list[dict[str, Any]], condition: str, invoke_count: int,
        function_error: str | None, report: RunReport,
    ) -> None:
        first, last = records[0]["dynamodb"], records[-1]["dynamodb"]
        invoked = invoke_count > 0
        request = {"requestId": self._last_request_id if invoked else str(uuid.uuid4()),
                   "functionArn": self.function_arn, "condition": condition, "approximateInvokeCount": invoke_count}
        response = {"statusCode": 200 if invoked else None, "executedVersion": "$LATEST", "functionError": function_error}
        info = {
            "shardId": shard_id, "startSequenceNumber": first["SequenceNumber"], "endSequenceNumber": last["SequenceNumber"],
            "approximateArrivalOfFirstRecord": _iso(float(first.get("ApproximateCreationDateTime", 0)), millis=False),
            "approximateArrivalOfLastRecord": _iso(float(last.get("ApproximateCreationDateTime", 0)), millis=False),
            "batchSize": len(records), "streamArn": self.stream_arn,
        }
        self.dead_letters.append({
            "requestContext": request, "responseContext": response, "version": "1.0", "timestamp": _iso(time.time()),
            "DDBStreamBatchInfo": info, "records": copy.deepcopy(records),
        })
        report.dead_lettered += len(records)
