"""The pricing core: monthly dollars from per-second capacity units, bytes stored and Lambda
invocations, for one table at a time. Pure functions of their arguments (no model, no file).

A month is :data:`HOURS_PER_MONTH` = 730 hours (AWS's pricing examples use the same). On-demand
bills each request unit; provisioned bills capacity per hour, sized by auto-scaling to
``consumed / target utilization`` (whole units, at least 1 per table and per GSI). Formulas and
sources: docs/adr/0053-monthly-cost.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .exceptions import CapacityInputError
from .price_file import Prices

__all__ = [
    "BYTES_PER_GB",
    "HOURS_PER_MONTH",
    "SECONDS_PER_MONTH",
    "STORAGE_ITEM_OVERHEAD",
    "CapacityRow",
    "Charge",
    "Line",
    "Stored",
    "TableCost",
    "break_even_utilization",
    "lambda_monthly",
    "on_demand_monthly",
    "price_table",
    "provisioned_monthly",
    "provisioned_units",
    "storage_monthly",
    "stream_invocations",
]

HOURS_PER_MONTH = 730
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
#: Storage is billed per GB-month; a GB here is 2**30 bytes.
BYTES_PER_GB = 1024**3
#: Bytes DynamoDB adds to every stored item, and to every index entry, for storage billing.
STORAGE_ITEM_OVERHEAD = 100
TABLE = "table"


def _rate(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise CapacityInputError(f"{name} {value!r} must be a finite number, 0 or more")
    return float(value)


def on_demand_monthly(units_per_second: float, unit_price: float) -> float:
    """Dollars a month for ``units_per_second`` request units billed at ``unit_price`` each."""
    return _rate("units per second", units_per_second) * SECONDS_PER_MONTH * _rate("unit price", unit_price)


def provisioned_units(units_per_second: float, target_utilization: float, *, rounded: bool = True) -> float:
    """Capacity auto-scaling keeps provisioned for ``units_per_second`` consumed at
    ``target_utilization`` (0 < u ≤ 1): ``consumed / u``, rounded up to whole units and at
    least 1 (a table or GSI always has some) unless ``rounded`` is False."""
    consumed = _rate("units per second", units_per_second)
    if isinstance(target_utilization, bool) or not isinstance(target_utilization, (int, float)) \
            or not 0 < target_utilization <= 1:
        raise CapacityInputError(f"target utilization {target_utilization!r} must be a number in (0, 1]")
    exact = consumed / target_utilization
    return float(max(1, math.ceil(round(exact, 9)))) if rounded else exact


def provisioned_monthly(capacity_units: float, unit_hour_price: float) -> float:
    """Dollars a month for ``capacity_units`` provisioned all month at ``unit_hour_price``."""
    return _rate("capacity units", capacity_units) * HOURS_PER_MONTH * _rate("unit-hour price", unit_hour_price)


def storage_monthly(stored_bytes: float, gb_month_price: float) -> float:
    """Dollars a month for ``stored_bytes`` (item bytes plus the per-item overhead) stored."""
    return _rate("stored bytes", stored_bytes) / BYTES_PER_GB * _rate("GB-month price", gb_month_price)


def lambda_monthly(invocations_per_second: float, duration_ms: float, memory_mb: int, prices: Prices,
                   *, architecture: str = "arm64") -> tuple[float, float]:
    """(request dollars, compute dollars) a month for a function invoked
    ``invocations_per_second`` times, each running ``duration_ms`` with ``memory_mb``."""
    if architecture not in ("arm64", "x86_64"):
        raise CapacityInputError(f"architecture {architecture!r} must be 'arm64' or 'x86_64'")
    calls = _rate("invocations per second", invocations_per_second) * SECONDS_PER_MONTH
    gb_seconds = calls * _rate("duration ms", duration_ms) / 1000 * _rate("memory MB", memory_mb) / 1024
    return calls * prices.unit("lambda_request"), gb_seconds * prices.unit(f"lambda_gb_second_{architecture}")


def stream_invocations(records_per_second: float, *, batch_size: int, window_seconds: float, stream_shards: int) -> float:
    """Invocations/s of a Lambda function consuming a stream: each stream shard's records are
    spread evenly; a shard's poller sends a batch when ``batch_size`` records are waiting or its
    batching window ends with at least one, so a batch holds ``min(batch_size, max(1, records
    per shard per window))`` records."""
    records = _rate("records per second", records_per_second)
    if records == 0:
        return 0.0
    per_shard = records / max(1, stream_shards)
    batch = min(float(batch_size), max(1.0, per_shard * max(window_seconds, 0.0)))
    return records / batch


def break_even_utilization(unit_hour_price: float, request_unit_price: float) -> float:
    """The average utilization of provisioned capacity (consumed ÷ provisioned) at which
    provisioned and on-demand cost the same: above it provisioned is cheaper.

    ``r`` units/s on demand cost ``r × 3600 × request price`` an hour; provisioned at
    utilization ``u`` holds ``r / u`` units at ``unit-hour price`` each: equal when
    ``u = unit-hour price / (3600 × request price)``."""
    return _rate("unit-hour price", unit_hour_price) / (3600 * _rate("request unit price", request_unit_price))


@dataclass(frozen=True)
class Line:
    """The steady load one component puts on the table or one index: units per second."""

    component: str
    where: str
    wcu: float = 0.0
    rcu: float = 0.0


@dataclass(frozen=True)
class Stored:
    """What one entity (or component) stores in the table or one index."""

    component: str
    where: str
    items: float
    entry_bytes: float

    @property
    def bytes(self) -> float:
        """Billed bytes: each item's or entry's size plus :data:`STORAGE_ITEM_OVERHEAD`."""
        return self.items * (self.entry_bytes + STORAGE_ITEM_OVERHEAD)


@dataclass(frozen=True)
class Charge:
    """A cost outside the table's throughput and storage (Lambda, stream reads): the same in
    both capacity modes."""

    component: str
    quantity: str
    usd: float


@dataclass(frozen=True)
class CapacityRow:
    """The table or one GSI: consumed units/s, provisioned units, and dollars a month each way."""

    where: str
    wcu: float
    rcu: float
    provisioned_wcu: float
    provisioned_rcu: float
    on_demand_usd: float
    provisioned_usd: float


@dataclass(frozen=True)
class TableCost:
    """The monthly cost of one table, both ways, with its parts and the assumptions made."""

    name: str
    lines: tuple[Line, ...]
    capacity: tuple[CapacityRow, ...]
    stored: tuple[Stored, ...]
    storage_usd: float
    charges: tuple[Charge, ...]
    target_utilization: float
    break_even: float
    notes: tuple[str, ...] = field(default=())

    @property
    def extras_usd(self) -> float:
        return sum(c.usd for c in self.charges)

    @property
    def on_demand_usd(self) -> float:
        """Dollars a month with on-demand capacity: throughput + storage + the rest."""
        return sum(r.on_demand_usd for r in self.capacity) + self.storage_usd + self.extras_usd

    @property
    def provisioned_usd(self) -> float:
        """Dollars a month with provisioned capacity and auto-scaling at the target utilization."""
        return sum(r.provisioned_usd for r in self.capacity) + self.storage_usd + self.extras_usd

    @property
    def cheaper(self) -> str:
        return "provisioned" if self.provisioned_usd < self.on_demand_usd else "on-demand"


def price_table(
    name: str, lines: Iterable[Line], prices: Prices, *, target_utilization: float = 0.7,
    stored: Iterable[Stored] = (), charges: Iterable[Charge] = (), indexes: Sequence[str] = (),
    local_indexes: Sequence[str] = (), notes: Sequence[str] = (),
) -> TableCost:
    """Price one table from the load its components put on it.

    ``indexes``: the table's GSIs (each provisioned on its own, listed even without load);
    ``local_indexes``: its LSIs, whose units are the table's (an LSI shares the table's
    capacity). A line on an index not listed raises :class:`CapacityInputError`."""
    lines_, stored_, charges_ = tuple(lines), tuple(stored), tuple(charges)
    places = [TABLE, *indexes]
    known = {*places, *local_indexes}
    charged: list[Line | Stored] = [*lines_, *stored_]
    for item in charged:
        if item.where not in known:
            raise CapacityInputError(f"{item.component!r} is charged to {item.where!r}, not the table or one of its "
                                     f"indexes {sorted(known - {TABLE})}")
    rows = []
    for where in places:
        mine = [x for x in lines_ if x.where == where or (where == TABLE and x.where in local_indexes)]
        wcu, rcu = sum(x.wcu for x in mine), sum(x.rcu for x in mine)
        p_wcu = provisioned_units(wcu, target_utilization)
        p_rcu = provisioned_units(rcu, target_utilization)
        rows.append(CapacityRow(
            where, wcu, rcu, p_wcu, p_rcu,
            on_demand_monthly(wcu, prices.unit("on_demand_write_request_unit"))
            + on_demand_monthly(rcu, prices.unit("on_demand_read_request_unit")),
            provisioned_monthly(p_wcu, prices.unit("provisioned_wcu_hour"))
            + provisioned_monthly(p_rcu, prices.unit("provisioned_rcu_hour")),
        ))
    storage = storage_monthly(sum(s.bytes for s in stored_), prices.unit("storage_gb_month"))
    even = max(
        break_even_utilization(prices.unit("provisioned_wcu_hour"), prices.unit("on_demand_write_request_unit")),
        break_even_utilization(prices.unit("provisioned_rcu_hour"), prices.unit("on_demand_read_request_unit")),
    )
    return TableCost(name, lines_, tuple(rows), stored_, storage, charges_, target_utilization, even, tuple(notes))
