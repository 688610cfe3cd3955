"""Tenant-scoped access: a :class:`TableClient` that can only touch one tenant's items.

``TableClient.for_tenant("acme")`` returns a :class:`TenantTableClient`. Defense in depth next
to the IAM ``dynamodb:LeadingKeys`` condition of ``SingleTable.grant_tenant_access``: every key
it builds — puts, gets, updates, deletes, batches, transactions, queries — must carry the
client's tenant, and queries on GSIs whose keys are not tenant-prefixed are refused, all before
any call reaches AWS. A missing tenant field is filled in for single-item calls and queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .exceptions import TenantAccessError
from .items import ItemMapper
from .keys import _tenant_field_of, check_tenant_id
from .pages import QUERY_OPTIONS, Page, follow_cursors

if TYPE_CHECKING:
    from ..model import Model, ResolvedPattern
    from ..model import ResolvedEntity as Entity

__all__ = ["TenantScopable", "TenantTableClient", "check_tenant_id"]


class TenantScopable(Protocol):
    """What a tenant client needs of the :class:`~constructs_lib.runtime.client.TableClient` it
    confines (declared here because ``client.py`` imports this module for ``for_tenant``)."""

    model: Model
    table_name: str

    def with_mapper(self, mapper: ItemMapper) -> TenantScopable: ...
    def pattern(self, name: str) -> ResolvedPattern: ...
    def query(self, *args: Any, **kw: Any) -> Page[dict[str, Any]]: ...
    def range_partitions(self, *args: Any, **kw: Any) -> list[Any] | None: ...
    def put(self, *args: Any, **kw: Any) -> dict[str, Any]: ...
    def get(self, *args: Any, **kw: Any) -> dict[str, Any] | None: ...
    def update(self, *args: Any, **kw: Any) -> dict[str, Any]: ...
    def delete(self, *args: Any, **kw: Any) -> dict[str, Any] | None: ...
    def keys(self, *args: Any, **kw: Any) -> dict[str, str]: ...
    def batch_get(self, *args: Any, **kw: Any) -> list[dict[str, Any] | None]: ...
    def batch_write(self, *args: Any, **kw: Any) -> int: ...
    def transaction(self, *args: Any, **kw: Any) -> Any: ...


class _TenantItemMapper(ItemMapper):
    """An ItemMapper that refuses to build a table key of any other tenant."""

    def __init__(self, model: Model, tenant: str) -> None:
        super().__init__(model)
        self.tenant = tenant

    def table_key(
        self, entity: Entity, values: Mapping[str, Any], *, memo: dict[Any, str] | None = None
    ) -> dict[str, str]:
        field = self.model.tenant_field
        assert field is not None
        given = values.get(field)
        if given != self.tenant:
            raise TenantAccessError(
                f"{entity.name} key with {field}={given!r} is outside tenant {self.tenant!r}; a client for "
                f"tenant {self.tenant!r} only builds keys of that tenant"
            )
        return super().table_key(entity, values, memo=memo)


class TenantTableClient:
    """A :class:`TableClient` confined to one tenant (see the module docstring)."""

    def __init__(self, table: TenantScopable, tenant: str) -> None:
        model = table.model
        self.field = _tenant_field_of(model)
        self.tenant = check_tenant_id(tenant, field=self.field)
        # The same table, boto3 client, retries, cursor key and recorder, with a mapper that only
        # builds keys of this tenant.
        self._table = table.with_mapper(_TenantItemMapper(model, self.tenant))
        self.model, self.table_name = model, table.table_name

    def _scope(self, values: Mapping[str, Any] | None) -> dict[str, Any]:
        out = dict(values or {})
        out.setdefault(self.field, self.tenant)
        return out

    # Single items ------------------------------------------------------------------------------
    def put(self, entity: str, item: Mapping[str, Any], **kw: Any) -> dict[str, Any]:
        return self._table.put(entity, self._scope(item), **kw)

    def get(self, entity: str, **key_values: Any) -> dict[str, Any] | None:
        options = {k: key_values.pop(k) for k in ("consistent", "raw", "attributes") if k in key_values}
        return self._table.get(entity, **options, **self._scope(key_values))

    def update(self, entity: str, key: Mapping[str, Any], **kw: Any) -> dict[str, Any]:
        return self._table.update(entity, self._scope(key), **kw)

    def delete(self, entity: str, key: Mapping[str, Any], **kw: Any) -> dict[str, Any] | None:
        return self._table.delete(entity, self._scope(key), **kw)

    def keys(self, entity: str, **values: Any) -> dict[str, str]:
        return self._table.keys(entity, **self._scope(values))

    # Queries -----------------------------------------------------------------------------------
    def query(self, pattern: str, values: Mapping[str, Any] | None = None, /, **kw: Any) -> Page[dict[str, Any]]:
        resolved = self._table.pattern(pattern)
        index = resolved.index
        if index is not None and index.kind == "GSI" and index.name not in self.model.tenant_safe_gsis:
            raise TenantAccessError(
                f"pattern {pattern!r} reads GSI {index.name!r}, whose partition keys do not start with the tenant; "
                f"a tenant-scoped client may only query the table and tenant-safe GSIs "
                f"({', '.join(self.model.tenant_safe_gsis) or 'none'})"
            )
        options = {k: kw.pop(k) for k in QUERY_OPTIONS if k in kw}
        scoped = self._scope({**(values or {}), **kw})
        if scoped[self.field] != self.tenant:
            raise TenantAccessError(
                f"pattern {pattern!r} with {self.field}={scoped[self.field]!r} is outside tenant {self.tenant!r}"
            )
        return self._table.query(pattern, scoped, **options)

    def query_all(self, pattern: str, values: Mapping[str, Any] | None = None, /, **kw: Any) -> Any:
        return follow_cursors(self.query, pattern, values, partitions=self._table.range_partitions(pattern, values, **kw),
                              **kw)

    # Batches and transactions: every key goes through the tenant mapper -------------------------
    def batch_get(self, requests: Any, **kw: Any) -> list[dict[str, Any] | None]:
        return self._table.batch_get(requests, **kw)

    def batch_write(self, puts: Any = (), deletes: Any = ()) -> int:
        return self._table.batch_write(puts, deletes)

    def transaction(self, **kw: Any) -> Any:
        return self._table.transaction(**kw)
