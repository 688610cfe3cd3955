"""``TrafficRecorder``: sample the requests made to one table, in bounded memory, thread-safely."""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._aws import ACCESS_PATTERN, WRITE_ENTITIES
from ..exceptions import TrafficInsightError
from ..limits import THROTTLING_CODES
from ._parse import (
    OPERATION_LABELS,
    READ,
    READS,
    TABLE,
    WRITE,
    WRITE_LABELS,
    Layout,
    breakdown,
    is_for,
    written,
)
from .sketch import KeyCount, SpaceSaving
from .snapshot import QueryShape, Snapshot, TrafficRecord, check, is_int, is_number

if TYPE_CHECKING:
    from ...model import Model
    from .report import TrafficReport

#: Query/Scan shapes kept; later new shapes are pooled under one "(other shapes)" row.
MAX_SHAPES = 256

#: The access pattern the current request serves (set by ``TableClient.query`` at the AWS-call seam).
PATTERN = ACCESS_PATTERN


class TrafficRecorder:
    """Samples the requests made to one table; :meth:`report` finds hot partitions, scans,
    filter-heavy queries, unused GSIs and low-cardinality partition keys.

    Parameters
    ----------
    sample_rate
        Probability that a request is recorded, a number in (0, 1]. Default 0.01 (1 %).
        Counts in reports are scaled by ``1 / sample_rate``.
    seed
        Seed (int) of the sampling generator, for reproducible sampling. Default None.
    max_keys
        Partition keys tracked per (index, read/write) sketch, an int ≥ 10. Default 1,000
        (every count then overestimates by at most 0.1 % of that sketch's hits; see
        :mod:`constructs_lib.runtime.stats.sketch`).
    keep_records
        Recent :class:`TrafficRecord` objects kept for :meth:`records`, an int ≥ 0. Default 1,000.
    model, table_name
        The table's model and physical name, given together. Default: taken from the first
        ``TableClient`` the recorder is attached to. Requests to other tables pass unrecorded.
    clock
        Monotonic clock in seconds, for the recording's duration. Default ``time.monotonic``.

    Raises
    ------
    TrafficInsightError
        If a parameter breaks its rule (the message names the value and the rule).
    """

    def __init__(
        self,
        sample_rate: float = 0.01,
        *,
        seed: int | None = None,
        max_keys: int = 1000,
        keep_records: int = 1000,
        model: Model | None = None,
        table_name: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check("sample_rate", sample_rate, "a number in (0, 1]", is_number(sample_rate) and 0 < sample_rate <= 1)
        check("seed", seed, "an int or None", seed is None or is_int(seed, -(2**63)))
        check("max_keys", max_keys, "an int ≥ 10", is_int(max_keys, 10))
        check("keep_records", keep_records, "an int ≥ 0", is_int(keep_records, 0))
        check("clock", clock, "callable", callable(clock))
        self.sample_rate = float(sample_rate)
        self.max_keys = max_keys
        self.keep_records = keep_records
        self._always = self.sample_rate >= 1.0
        self._rng = random.Random(seed)
        self._clock = clock
        self._lock = threading.Lock()
        self.model: Model | None = None
        self.table_name: str | None = None
        self._layout: Layout | None = None
        if model is not None or table_name is not None:
            check("table_name", table_name, "a non-empty str given with model", isinstance(table_name, str) and bool(table_name))
            check("model", model, "given with table_name", model is not None)
            assert model is not None and table_name is not None  # checked just above
            self.bind(model, table_name)
        self.reset()

    # Binding ---------------------------------------------------------------------------------------------
    def bind(self, model: Model, table_name: str) -> TrafficRecorder:
        """Attach to one table (``TableClient`` does this); another table raises :class:`TrafficInsightError`."""
        if self.table_name is None:
            self.model, self.table_name, self._layout = model, table_name, Layout(model)
        elif self.table_name != table_name or (
            self.model is not model and (self.model is None or self.model.to_json() != model.to_json())
        ):
            raise TrafficInsightError(
                f"this recorder records table {self.table_name!r}; it cannot also record table {table_name!r} "
                "(or the same table under another model) — use one TrafficRecorder per table"
            )
        return self

    def wrap(self, client: Any) -> RecordingClient:
        """A :class:`RecordingClient` around a boto3 DynamoDB client: calls made through it (raw
        scans, queries with filters…) are sampled like the ``TableClient``'s own."""
        if self._layout is None:
            raise TrafficInsightError("this recorder is not bound to a table: pass model= and table_name=, "
                                      "or attach it to a TableClient first")
        if isinstance(client, RecordingClient):
            client = client.unwrapped
        return RecordingClient(client, self)

    @staticmethod
    def current_pattern() -> str | None:
        """The access pattern named for the requests being made now (in this thread/task), or None."""
        return PATTERN.get()

    @contextmanager
    def pattern(self, name: str) -> Iterator[None]:
        """Label the requests made inside the ``with`` block with access pattern ``name``."""
        token = PATTERN.set(name)
        try:
            yield
        finally:
            PATTERN.reset(token)

    # Recording ---------------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget everything recorded and restart the duration clock."""
        with self._lock:
            self._started = self._clock()
            self._sampled = 0
            self._sketches: dict[tuple[str, str], SpaceSaving] = {}
            self._operations: dict[str, list[Any]] = {}
            self._errors: dict[str, int] = {}
            self._index_reads: dict[str, int] = {}
            self._index_writes: dict[str, list[Any]] = {}
            self._entity_writes: dict[tuple[str, str], list[Any]] = {}
            self._unattributed: dict[str, list[Any]] = {}
            self._patterns: dict[str, int] = {}
            self._shapes: dict[tuple[str, str, str], QueryShape] = {}
            self._records: deque[TrafficRecord] = deque(maxlen=self.keep_records)

    def _draw(self) -> bool:
        return self._always or self._rng.random() < self.sample_rate

    def observe(
        self, operation: str, params: Mapping[str, Any], response: Mapping[str, Any] | None = None, *,
        pattern: str | None = None, error_code: str | None = None,
        entities: Sequence[tuple[str, Mapping[str, str]]] | None = None,
    ) -> bool:
        """Sample and record a request made without a :class:`RecordingClient` (e.g. another SDK).

        Parameters
        ----------
        operation
            A boto3 method name (``"query"``) or its label (``"Query"``); see ``OPERATION_LABELS``.
        params, response
            Request and response in DynamoDB's typed JSON. ``response`` None for a failed call.
        pattern
            The access pattern served. Default None.
        error_code
            AWS error code of a failed call (throttles are counted per key). Default None.
        entities
            For a write: ``(entity, table key)`` of the items it writes, e.g.
            ``[("Order", {"PK": "USER#u1", "SK": "ORDER#o1"})]``; its items are counted per entity
            and write kind (others as unattributed). Default None.

        Returns
        -------
        bool
            True if the request was sampled (False also for requests to other tables).
        """
        label = OPERATION_LABELS.get(operation, operation)
        check("operation", operation, f"one of {', '.join(OPERATION_LABELS)} or a label of them",
              label in OPERATION_LABELS.values())
        if self._layout is None:
            raise TrafficInsightError("this recorder is not bound to a table: pass model= and table_name=")
        if not is_for(self.table_name, params) or not self._draw():
            return False
        self._record(label, params, response, pattern, error_code, entities)
        return True

    def hook(self, send: Callable[..., dict[str, Any]], operation: str, params: dict[str, Any]) -> dict[str, Any]:
        """The recorder at the AWS-call seam (``_aws.CallHook``; ``TableClient.record_traffic`` adds
        it): data-plane calls to the table are sampled as :meth:`call` does, others made as they are."""
        label = OPERATION_LABELS.get(operation)
        if label is None:
            return send(**params)
        return self.call(send, label, params)

    def call(self, method: Callable[..., dict[str, Any]], label: str, params: dict[str, Any]) -> dict[str, Any]:
        """Make one call, sampling it: a sampled call asks for ``ReturnConsumedCapacity="INDEXES"``
        unless the caller chose a value, and then gets the response it would have had without."""
        if not is_for(self.table_name, params) or not self._draw():
            return method(**params)
        added = "ReturnConsumedCapacity" not in params
        if added:
            params = {**params, "ReturnConsumedCapacity": "INDEXES"}
        try:
            response = method(**params)
        except Exception as exc:  # only recorded: re-raised unchanged below
            error = getattr(exc, "response", None)
            if isinstance(error, dict):  # a ClientError (AWS answered)
                self._record(label, params, None, PATTERN.get(), error.get("Error", {}).get("Code", "Unknown"),
                             WRITE_ENTITIES.get())
            raise
        self._record(label, params, response, PATTERN.get(), None, WRITE_ENTITIES.get())
        if added:
            response.pop("ConsumedCapacity", None)
        return response

    def _record(self, label: str, params: Mapping[str, Any], response: Mapping[str, Any] | None,
                pattern: str | None, error: str | None,
                entities: Sequence[tuple[str, Mapping[str, str]]] | None = None) -> None:
        layout, table_name = self._layout, self.table_name
        assert layout is not None and table_name is not None  # bound: set together by bind()
        b = breakdown(layout, table_name, label, params, response)
        units = b.capacity.total if b.capacity else None
        writes = self._attribute(layout, table_name, label, params, entities) if label in WRITE_LABELS else []
        per_write = (units or 0.0) / len(writes) if writes else 0.0
        throttled = 1 if error in THROTTLING_CODES else 0
        own = tuple(key for sketch, _, key, _ in b.hits if sketch == b.sketch)
        record = TrafficRecord(label, b.index, own, pattern, units, b.count, b.scanned, error)
        with self._lock:
            self._sampled += 1
            op = self._operations.setdefault(label, [0, 0, 0.0])
            op[0] += 1
            op[1] += len(own)
            op[2] += units or 0.0
            if error is not None:
                self._errors[error] = self._errors.get(error, 0) + 1
            if pattern is not None and (pattern in self._patterns or len(self._patterns) < MAX_SHAPES):
                self._patterns[pattern] = self._patterns.get(pattern, 0) + 1
            if label in READS:
                self._index_reads[b.index] = self._index_reads.get(b.index, 0) + 1
            if error is None:  # a refused write wrote nothing
                for entity, kind in writes:
                    count = (self._entity_writes.setdefault((entity, kind), [0, 0.0]) if entity is not None
                             else self._unattributed.setdefault(kind, [0, 0.0]))
                    count[0] += 1
                    count[1] += per_write
            for sketch_index, kind, key, cu in b.hits:
                if kind == WRITE and sketch_index != TABLE:
                    written = self._index_writes.setdefault(sketch_index, [0, 0.0])
                    written[0] += 1
                    written[1] += cu
                sketch = self._sketches.get((sketch_index, kind))
                if sketch is None:
                    sketch = self._sketches[(sketch_index, kind)] = SpaceSaving(self.max_keys)
                sketch.add(key, 1, cu, throttled)
            if b.shape is not None:
                name = pattern or b.shape  # a caller's filter= (its #f placeholders) sets the read apart
                if pattern and "#f0" in (params.get("FilterExpression") or ""):
                    name = f"{pattern} + filter {b.shape.split(' FILTER ', 1)[1]}"
                ident = (label, b.index, name)
                if ident not in self._shapes and len(self._shapes) >= MAX_SHAPES:
                    ident = (label, b.index, "(other shapes)")
                shape = self._shapes.get(ident)
                if shape is None:
                    shape = self._shapes[ident] = QueryShape(label, b.index, ident[2], pattern)
                shape.requests += 1
                shape.scanned += b.scanned or 0
                shape.returned += b.count or 0
                shape.capacity_units += units or 0.0
            if self.keep_records:
                self._records.append(record)

    @staticmethod
    def _attribute(layout: Layout, table: str, label: str, params: Mapping[str, Any],
                   entities: Sequence[tuple[str, Mapping[str, str]]] | None) -> list[tuple[str | None, str]]:
        """``(entity or None, write kind)`` of each item a write request writes: the entity named
        for its table key at the AWS-call seam, None for an item no entity was named for."""
        items = written(layout, table, label, params)
        if not entities:
            return [(None, kind) for kind, _ in items]
        if len(entities) == 1 and len(items) == 1:
            return [(entities[0][0], items[0][0])]
        named = {tuple(key.get(a) for a in (layout.pk, layout.sk) if a is not None): entity for entity, key in entities}
        return [(named.get(key), kind) for kind, key in items]

    # Reading back --------------------------------------------------------------------------------------------
    @property
    def sampled_requests(self) -> int:
        """Requests recorded so far."""
        return self._sampled

    @property
    def estimated_requests(self) -> float:
        """Requests recorded, scaled by ``1 / sample_rate``."""
        return self._sampled / self.sample_rate

    def records(self) -> list[TrafficRecord]:
        """The most recent sampled requests (at most ``keep_records``), oldest first."""
        with self._lock:
            return list(self._records)

    def top_keys(self, index: str = TABLE, kind: str = WRITE, n: int = 10) -> list[KeyCount]:
        """The ``n`` busiest partition keys of ``index`` (``"table"`` or a GSI name) for ``kind``
        (``"read"`` or ``"write"``); ``estimated`` counts are scaled by ``1 / sample_rate``."""
        check("kind", kind, "'read' or 'write'", kind in (READ, WRITE))
        check("n", n, "an int ≥ 1", is_int(n, 1))
        with self._lock:
            sketch = self._sketches.get((index, kind))
            return sketch.top(n, scale=1 / self.sample_rate) if sketch else []

    def snapshot(self) -> Snapshot:
        """A consistent copy of everything recorded (sampled units; the detector's input)."""
        scale = 1 / self.sample_rate
        with self._lock:
            return Snapshot(
                self.table_name, self.model, self.sample_rate, self._sampled, self._clock() - self._started,
                {k: (s.top(scale=scale), s.total, s.exact, s.error_bound) for k, s in self._sketches.items()},
                {k: (v[0], v[1], v[2]) for k, v in self._operations.items()},
                dict(self._errors), dict(self._index_reads),
                {k: (v[0], v[1]) for k, v in self._index_writes.items()},
                dict(self._patterns), [replace(s) for s in self._shapes.values()],
                {k: (v[0], v[1]) for k, v in self._entity_writes.items()},
                {k: (v[0], v[1]) for k, v in self._unattributed.items()},
            )

    def report(self, model: Model | None = None, **thresholds: Any) -> TrafficReport:
        """Detect anti-patterns in what was recorded so far.

        ``model`` defaults to the bound one; ``thresholds`` are those of
        :func:`constructs_lib.runtime.stats.detect` (``hot_share=0.10``, ``min_requests=50``,
        ``filter_ratio=5.0``, ``min_scanned=50``, ``min_total_requests=100``,
        ``low_cardinality_keys=5``, ``duration_seconds=None``, ``headroom=1.2``).
        """
        from .report import detect

        return detect(self.snapshot(), model=model, **thresholds)


class RecordingClient:
    """A boto3 DynamoDB client whose data-plane calls (``OPERATION_LABELS``) are sampled into
    ``recorder``; every other attribute (``meta``, ``describe_table``…) is the wrapped client's.
    ``unwrapped`` is the original client."""

    __slots__ = ("recorder", "unwrapped")

    def __init__(self, client: Any, recorder: TrafficRecorder) -> None:
        self.unwrapped = client
        self.recorder = recorder

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unwrapped, name)

    def __repr__(self) -> str:
        return f"RecordingClient({self.unwrapped!r}, table={self.recorder.table_name!r})"


def _recording(method: str, label: str) -> Callable[..., dict[str, Any]]:
    def call(self: RecordingClient, **params: Any) -> dict[str, Any]:
        return self.recorder.call(getattr(self.unwrapped, method), label, params)

    call.__name__ = call.__qualname__ = method
    call.__doc__ = f"``{method}`` of the wrapped client, sampled as {label}."
    return call


for _method, _label in OPERATION_LABELS.items():
    setattr(RecordingClient, _method, _recording(_method, _label))

