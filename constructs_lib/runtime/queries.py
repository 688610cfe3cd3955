"""Queries by access-pattern name: the query loop of :class:`TableClient` and the pages it returns.

A page's cursor is the ``LastEvaluatedKey`` of the page and a digest of everything that shaped
the query it belongs to, signed (:mod:`.cursors`), so a cursor passed to a different query
(another table, model, pattern, key values, index, filter, projection or direction) or edited by
hand is refused instead of silently skipping or repeating items.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _aws, keys, request_params
from .cursors import query_parts
from .exceptions import (
    IndexNotReadyError,
    InvalidConditionError,
    KeyValueError,
    SettingsError,
    UnknownAccessPatternError,
    UnknownFieldError,
)
from .items import require_fields
from .pages import QUERY_OPTIONS, Page, follow_cursors

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from ..model import Model, ResolvedPattern
    from ..model import ResolvedEntity as Entity
    from ._aws import CallHook
    from .conditions import Condition, Name
    from .cursors import CursorSigner
    from .items import ItemMapper
    from .scope import ScopeGuard

#: A filtered query reads ``limit`` items at first, then twice as many per request (DynamoDB
#: applies ``Limit`` before the filter), up to this many — or ``limit``, if larger.
FILTERED_READ_MAX = 1000



class QueryMethods:
    """The query methods of :class:`~.client.TableClient` (its base class): access patterns by
    name, one page at a time or all of them."""

    model: Model
    table_name: str
    client: BaseClient
    hooks: tuple[CallHook, ...]
    mapper: ItemMapper
    guard: ScopeGuard | None
    unavailable_indexes: frozenset[str]

    if TYPE_CHECKING:
        @property
        def cursors(self) -> CursorSigner: ...

        def entity(self, name: str) -> Entity: ...

        def _get(
            self, ent: Entity, key_values: Mapping[str, Any], consistent: bool, raw: bool,
            attributes: Sequence[str | Name] | None = None,
        ) -> dict[str, Any] | None: ...

    def pattern(self, name: str) -> ResolvedPattern:
        try:
            resolved = self.model.resolved_patterns[name]
        except KeyError:
            raise UnknownAccessPatternError(
                f"access pattern {name!r} is not declared in model {self.model.name!r}; declared: "
                f"{', '.join(repr(p) for p in self.model.resolved_patterns) or 'none'}"
            ) from None
        if resolved.index is not None and resolved.index.name in self.unavailable_indexes:
            raise IndexNotReadyError(
                f"access pattern {name!r} reads index {resolved.index.name!r}, which table {self.table_name!r} does "
                "not have yet (a later rollout step creates it; see `python -m constructs_lib diff`)"
            )
        return resolved

    def query(
        self,
        pattern: str,
        values: Mapping[str, Any] | None = None,
        /,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        descending: bool | None = None,
        consistent: bool = False,
        raw: bool = False,
        partition_at: Any = None,
        filter: Condition | None = None,  # noqa: A002 - reads as the option it is
        attributes: Sequence[str | Name] | None = None,
        **kw: Any,
    ) -> Page[dict[str, Any]]:
        """Run a declared access pattern; returns one :class:`Page` of at most ``limit`` items.

        Field values come as a mapping and/or keyword arguments: every partition-key field
        of the pattern, then its sort-key fields; the last sort-key field carries the
        condition (a ``(low, high)`` pair for ``between``). Pass the returned ``cursor`` back
        to get the next page.

        When the partition key buckets the range field (``SENSOR#{id}#{ts:month}`` with
        ``ts=(low, high)``), a range inside one bucket reads that partition; a range over
        several buckets needs ``partition_at`` (an instant: read the bucket holding it) —
        :meth:`query_all` reads them all in order. Otherwise ``KeyValueError`` names the buckets.

        ``filter`` (a condition, see :mod:`.conditions`) drops items after they are read: it
        does not reduce the read cost. A page still holds ``limit`` matching items (or the rest)
        and its cursor resumes right after the last one returned. ``attributes`` reads only
        those attributes (plus the entity attribute and the keys).
        """
        # Names the access pattern on the calls made for it, for observers of the AWS-call seam.
        token = _aws.ACCESS_PATTERN.set(pattern)
        try:
            return self._query(pattern, values, kw, limit, cursor, descending, consistent, raw, partition_at,
                               filter, attributes)
        finally:
            _aws.ACCESS_PATTERN.reset(token)

    def _query(
        self, pattern: str, values: Mapping[str, Any] | None, kw: Mapping[str, Any], limit: int | None,
        cursor: str | None, descending: bool | None, consistent: bool, raw: bool, partition_at: Any,
        filter: Condition | None = None, attributes: Sequence[str | Name] | None = None,  # noqa: A002
    ) -> Page[dict[str, Any]]:
        resolved = self.pattern(pattern)
        vals = {**(values or {}), **kw}
        if self.guard is not None:
            self.guard.pattern(resolved.name, vals)
        accepted = resolved.pk_fields + resolved.sk_fields
        unknown = [name for name in vals if name not in accepted]
        if unknown:
            raise UnknownFieldError(
                f"pattern {pattern!r} takes field(s) {list(accepted)!r} and options {sorted(QUERY_OPTIONS)!r}; "
                f"{sorted(map(str, unknown))!r} {'is' if len(unknown) == 1 else 'are'} neither"
            )
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise SettingsError(f"limit {limit!r} must be a positive int")
        partition_value = self._partition_of(resolved, vals, partition_at)
        if resolved.operation == "GetItem":
            entity = self.entity(resolved.entities[0])
            require_fields(entity, vals, resolved.pk_fields + resolved.sk_fields, what=f"pattern {pattern!r}")
            if cursor is not None:
                raise KeyValueError(f"pattern {pattern!r} reads one item (GetItem); it has no pages, so no cursor")
            if filter is not None:
                raise InvalidConditionError(f"pattern {pattern!r} reads one item (GetItem), which takes no filter")
            item = self._get(entity, vals, consistent, raw, attributes)
            return Page([item] if item else [], None)
        if consistent and resolved.index is not None and resolved.index.kind == "GSI":
            raise SettingsError(f"pattern {pattern!r} reads GSI {resolved.index.name!r}; GSIs do not support consistent reads")
        forward = not (resolved.descending if descending is None else descending)
        if resolved.shards:  # a write-sharded index: every shard read, merged in sort-key order
            from . import merged_reads  # loaded by functions that read a sharded index only

            return merged_reads.query(self, pattern, resolved, vals, partition_value, limit=limit, cursor=cursor,
                                      forward=forward, raw=raw, filter=filter, attributes=attributes)
        params = request_params.query_params(
            self.mapper, self.table_name, resolved, vals, partition_value, filter=filter, attributes=attributes,
        )
        params["ScanIndexForward"] = forward
        params["ConsistentRead"] = consistent
        query_id = None
        if cursor is not None:
            query_id = query_parts(pattern, params)
            pk_attr = self._pk_attribute(resolved)
            params["ExclusiveStartKey"] = self.cursors.decode(
                cursor, query_id, partition=(pk_attr, params["ExpressionAttributeValues"][":v0"]),
            )
        items, last = self._read_pages(params, limit, raw, resolved)
        if not last:
            return Page(items, None)
        # (read after the pages: they set only Limit and ExclusiveStartKey, which a cursor does not bind)
        return Page(items, self.cursors.encode(last, query_id if query_id is not None else query_parts(pattern, params)))

    def _read_pages(
        self, params: dict[str, Any], limit: int | None, raw: bool, resolved: ResolvedPattern,
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """Query until ``limit`` items (or the end); returns them and the key to continue after
        the last one (None at the end).

        With a filter DynamoDB applies ``Limit`` before filtering, so each request reads more
        (see :data:`FILTERED_READ_MAX`); when a response holds more matches than still wanted,
        the page ends at the last item taken and the cursor is built from that item's key
        (:func:`request_params.cursor_attributes`), so no unreturned match is skipped."""
        filtered = "FilterExpression" in params
        items: list[dict[str, Any]] = []
        decode = self.mapper.decode_wire
        rounds = 0
        while True:
            if limit is not None:
                wanted = limit - len(items)
                params["Limit"] = min(wanted << min(rounds, 10), max(wanted, FILTERED_READ_MAX)) if filtered else wanted
            resp = _aws.call(self.client, "query", hooks=self.hooks, **params)
            found = request_params.own_items(self.model, resolved, resp.get("Items", []))
            last = resp.get("LastEvaluatedKey")
            if limit is not None and len(found) > limit - len(items):
                found = found[: limit - len(items)]
                last = {a: found[-1][a] for a in request_params.cursor_attributes(self.model, resolved)}
            items += [decode(i, raw=raw) for i in found]
            rounds += 1
            if not last or (limit is not None and len(items) >= limit):
                return items, last
            params["ExclusiveStartKey"] = last

    def query_all(self, pattern: str, values: Mapping[str, Any] | None = None, /, **kw: Any) -> Iterator[dict[str, Any]]:
        """Iterate over every item of a pattern, following cursors — and, for a range over
        several time-bucketed partitions, over every partition in key order."""
        return follow_cursors(self.query, pattern, values, partitions=self.range_partitions(pattern, values, **kw), **kw)

    def range_partitions(self, pattern: str, values: Mapping[str, Any] | None = None, /, **kw: Any) -> list[Any] | None:
        """For a ``between`` pattern whose partition key buckets the range field: one instant per
        partition the range touches, in key order (reversed when the pattern reads descending);
        None for every other pattern."""
        resolved = self.pattern(pattern)
        vals = {**(values or {}), **{k: v for k, v in kw.items() if k not in QUERY_OPTIONS}}
        if resolved.sk != "between" or not resolved.sk_fields:
            return None
        from . import buckets  # loaded by between patterns only

        starts = buckets.range_partitions(self._pk_template(resolved), resolved.sk_fields[-1], vals.get(resolved.sk_fields[-1]))
        descending = resolved.descending if kw.get("descending") is None else kw["descending"]
        return starts[::-1] if starts and descending else starts

    def _partition_of(self, resolved: ResolvedPattern, vals: Mapping[str, Any], partition_at: Any) -> Any:
        """The value of the range field to build the partition key from (None: the field's own)."""
        if resolved.sk != "between" or not resolved.sk_fields:
            if partition_at is not None:
                raise KeyValueError(f"partition_at only applies to a between range on a time-bucketed partition key; "
                                    f"pattern {resolved.name!r} has none")
            return None
        field = resolved.sk_fields[-1]
        from . import buckets  # loaded by between patterns only

        starts = buckets.range_partitions(self._pk_template(resolved), field, vals.get(field))
        if starts is None:
            if partition_at is not None:
                raise KeyValueError(f"partition_at: the partition key of pattern {resolved.name!r} does not "
                                    f"bucket {field!r}")
            return None
        if partition_at is not None:
            return partition_at
        if len(starts) > 1:
            template = self._pk_template(resolved)
            first, last = (keys.build(self.entity(resolved.entities[0]), template, {**vals, field: v})
                           for v in (starts[0], starts[-1]))
            raise KeyValueError(
                f"pattern {resolved.name!r}: {field} range {vals[field][0]!s} .. {vals[field][1]!s} spans "
                f"{len(starts)} partitions ({first} .. {last}) and a Query reads one partition; use query_all(), "
                "which reads each in order, or pass partition_at="
            )
        return starts[0]

    def _pk_attribute(self, resolved: ResolvedPattern) -> str:
        return resolved.pk_attribute

    def _pk_template(self, resolved: ResolvedPattern) -> Any:
        return resolved.pk_template
