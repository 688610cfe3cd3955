"""Merged reads of a write-sharded index: one Query per shard, merged in sort-key order.

Shards are read in parallel on a small shared thread pool (at most :data:`MAX_PARALLEL` calls
at once), each call through the ``_aws.call`` seam in a copy of the caller's context (so hooks
see the access pattern). Results are merged k-way by the index sort key (ties: lower shard
first); ``limit`` counts merged items (:func:`first_read_limit` bounds the over-read). The
cursor holds, per shard, the key of the last item returned from it (or "exhausted"), signed
and bound like every cursor (plus the shard count): the next page resumes each shard exactly there. Rationale:
docs/adr/0030-write-sharded-index-keys.md.
"""

from __future__ import annotations

import contextvars
import functools
import heapq
import math
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from . import _aws, request_params
from .cursors import query_parts
from .exceptions import CursorError
from .pages import Page
from .sharding import SHARD

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from ..model import Model, ResolvedPattern
    from .conditions import Condition, Name
    from .cursors import CursorSigner
    from .items import ItemMapper


class TableClient(Protocol):
    """What a merged read needs of the table client (``TableClient`` is one)."""

    client: Any
    hooks: tuple[_aws.CallHook, ...]
    model: Model
    mapper: ItemMapper
    table_name: str

    @property
    def cursors(self) -> CursorSigner: ...

#: Most shard queries in flight at once, across the process (boto3 clients are thread-safe).
MAX_PARALLEL = 8

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor  # loaded on the first merged read only

            _pool = ThreadPoolExecutor(max_workers=MAX_PARALLEL, thread_name_prefix="constructs_lib-shard")
        return _pool


def run_parallel(tasks: list[Callable[[], None]]) -> None:
    """Run ``tasks`` on the shared pool, each in a copy of the caller's context; wait for all and
    re-raise the first failure (in task order). One task runs inline."""
    if len(tasks) == 1:
        tasks[0]()
        return
    futures = [_executor().submit(contextvars.copy_context().run, task) for task in tasks]
    errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error


class _Desc:
    """A sort value compared in reverse (descending merge)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value


class _Shard:
    """One shard's stream: buffered wire items, where to read next, where a cursor resumes."""

    def __init__(
        self, number: int, params: dict[str, Any], start: dict[str, Any] | None, done: bool, resolved: ResolvedPattern,
    ) -> None:
        self.number = number
        self.resolved = resolved
        self.params = params
        self.buffer: deque[dict[str, Any]] = deque()
        self.next_start = start  # ExclusiveStartKey of the next read
        self.resume = start  # ExclusiveStartKey a cursor resumes from (after the last item returned)
        self.more = not done
        self.calls = 0

    def fetch(self, table: TableClient, limit: int | None) -> None:
        """Read until the buffer holds an item or the shard is exhausted."""
        while not self.buffer and self.more:
            params = dict(self.params)
            if limit is not None:
                params["Limit"] = limit
            if self.next_start is not None:
                params["ExclusiveStartKey"] = self.next_start
            resp = _aws.call(table.client, "query", hooks=table.hooks, **params)
            self.calls += 1
            self.buffer.extend(request_params.own_items(table.model, self.resolved, resp.get("Items", [])))
            self.next_start = resp.get("LastEvaluatedKey")
            self.more = self.next_start is not None
            if not self.buffer and self.more:
                self.resume = self.next_start  # everything up to it was read and filtered out

    def take(self, key_attributes: tuple[str, ...]) -> dict[str, Any]:
        item = self.buffer.popleft()
        self.resume = {a: item[a] for a in key_attributes if a in item}
        if not self.buffer and self.more:
            self.resume = self.next_start
        return item

    @property
    def exhausted(self) -> bool:
        return not self.buffer and not self.more


def query(
    table: TableClient, pattern: str, resolved: ResolvedPattern, vals: Mapping[str, Any], partition_value: Any, *,
    limit: int | None, cursor: str | None, forward: bool, raw: bool,
    filter: Condition | None = None, attributes: Sequence[str | Name] | None = None,  # noqa: A002 - the query option
) -> Page[dict[str, Any]]:
    """One page of a pattern on a sharded index: at most ``limit`` items of all shards, merged.
    ``filter``/``attributes`` apply to every shard's Query (a projection keeps the index key
    the merge and the cursor need)."""
    shards_n = resolved.shards
    index = resolved.index
    assert shards_n is not None and index is not None and index.pk_attribute is not None
    model = table.model
    params = []
    for n in range(shards_n):
        p = request_params.query_params(table.mapper, table.table_name, resolved, {**vals, SHARD: n}, partition_value,
                                  filter=filter, attributes=attributes)
        p["ScanIndexForward"] = forward
        p["ConsistentRead"] = False
        params.append(p)
    query_id = query_parts(pattern, params[0], shards=shards_n)
    starts = _decode_cursor(table, cursor, query_id, params, index.pk_attribute) if cursor is not None else {}
    shards = [
        _Shard(n, params[n], starts.get(n), starts.get(n, 0) is None, resolved) for n in range(shards_n)
    ]
    key_attributes = tuple(dict.fromkeys(
        a for a in (model.pk_attribute, model.sk_attribute if model.has_sort_key else None, index.pk_attribute,
                    index.sk_attribute) if a
    ))
    sk_attr = index.sk_attribute
    pending = [s for s in shards if s.more]
    if pending:
        first = None if limit is None else first_read_limit(limit, len(pending))
        run_parallel([partial(s.fetch, table, first) for s in pending])

    def entry(shard: _Shard) -> tuple[Any, int]:
        """The heap entry of a shard's head: its sort key, then the shard (one entry per shard)."""
        head = shard.buffer[0]
        value = head[sk_attr].get("S", "") if sk_attr and sk_attr in head else ""
        return (value if forward else _Desc(value), shard.number)

    heap = [entry(s) for s in shards if s.buffer]
    heapq.heapify(heap)
    out: list[dict[str, Any]] = []
    decode = table.mapper.decode_wire
    while heap and (limit is None or len(out) < limit):
        _, number = heapq.heappop(heap)
        shard = shards[number]
        out.append(decode(shard.take(key_attributes), raw=raw))
        if not shard.buffer and shard.more and (limit is None or len(out) < limit):
            shard.fetch(table, None if limit is None else limit - len(out))
        if shard.buffer:
            heapq.heappush(heap, entry(shard))
    if all(s.exhausted for s in shards):
        return Page(out, None)
    state = {
        str(s.number): ({"NULL": True} if s.exhausted else {"M": s.resume})
        for s in shards if s.exhausted or s.resume is not None
    }
    return Page(out, table.cursors.encode(state, query_id))


#: The share of pages allowed to read some shard a second time (see :func:`first_read_limit`).
SECOND_READ_SHARE = 0.05


@functools.lru_cache(maxsize=256)
def first_read_limit(limit: int, shards: int) -> int:
    """``Limit`` of each shard's first read for a page of ``limit``, at most ``limit``: the
    shard's expected share with margin, ``ceil(1.5 × limit / shards) + 2``, or less where that
    margin is more than the hashing needs — the smallest ``L`` such that, with items hashed
    evenly over the shards, at most :data:`SECOND_READ_SHARE` of pages hold more than ``L`` items
    of any one shard (a shard's count is Binomial(limit, 1/shards); each of the shards may
    overflow with probability ``share / shards``). A shard that does run dry before
    the page is full is read again, with the rest of the page as ``Limit``; a page reads far
    fewer than ``shards × limit`` items (for 100 items: 35 per shard of 4, 12 per shard of 16)."""
    margin = min(limit, -(-3 * limit // (2 * shards)) + 2)
    if shards <= 1:
        return margin
    p = 1 / shards
    tail = SECOND_READ_SHARE / shards  # (a union bound: shards' counts are not independent)
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(limit + 1)
    covered = 0.0
    for k in range(margin):
        covered += math.exp(log_n - math.lgamma(k + 1) - math.lgamma(limit - k + 1) + k * log_p + (limit - k) * log_q)
        if covered >= 1 - tail:
            return max(k, 1)  # (a Limit is at least 1)
    return margin


def _decode_cursor(
    table: TableClient, cursor: str, query_id: Mapping[str, str], params: list[dict[str, Any]], pk_attr: str
) -> dict[int, dict[str, Any] | None]:
    """Per shard: the key to resume after, or None (exhausted); shards not named start afresh."""
    state = table.cursors.decode(cursor, query_id)
    out: dict[int, dict[str, Any] | None] = {}
    for name, value in state.items():
        number = int(name) if name.isascii() and name.isdigit() else -1
        if not 0 <= number < len(params):
            raise CursorError(f"cursor {cursor[:40]!r} names shard {name!r}, which this index does not have")
        if value == {"NULL": True}:
            out[number] = None
        elif isinstance(value.get("M"), dict):
            key = value["M"]
            if key.get(pk_attr) != params[number]["ExpressionAttributeValues"][":v0"]:
                raise CursorError(f"cursor {cursor[:40]!r} points outside the partition of shard {number}")
            out[number] = key
        else:
            raise CursorError(f"cursor {cursor[:40]!r} is malformed; pass back a cursor returned by query()")
    return out
