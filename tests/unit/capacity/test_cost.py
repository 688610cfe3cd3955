"""The cost engine on the shop model with fixed per-call figures (hand-computed), and its
properties: on-demand throughput is linear in the rates; the break-even utilization decides
"provisioned is cheaper" exactly as pricing both ways does (brute force).
``CONSTRUCTS_LIB_SOAK=1`` runs the property tests with 10x the examples."""

from __future__ import annotations

import os

import pytest
from fixed_per_call import FixedPerCall
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from constructs_lib.capacity.cli import estimate
from constructs_lib.capacity.cost import AuditSetup, CounterSetup, TableSetup
from constructs_lib.capacity.price_file import load_prices
from constructs_lib.capacity.pricing import (
    SECONDS_PER_MONTH,
    break_even_utilization,
    on_demand_monthly,
    provisioned_monthly,
    provisioned_units,
)
from constructs_lib.capacity.rates import PatternRate, Rates, Settings, TableRates, WriteRate, parse_rates
from examples.shop.model import shop_model

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 1000 if SOAK else 100
PRICES = load_prices()
W, R = 2_628_000 * 0.625e-6, 2_628_000 * 0.125e-6  # on-demand $/month of 1 WCU/s, 1 RCU/s
COUNTER = CounterSetup("product_views", 120, idempotent=True, aggregation="recompute")
SETUP = TableSetup("ShopStack/Data", shop_model, (COUNTER,), AuditSetup(retention_days=30), stream=True,
                   keys=("shop",))


def _rates(table: str) -> Rates:
    return parse_rates('{"format": "constructs_lib.rates", "version": 1, "tables": {"shop": ' + table + "}}")


def test_reads_and_writes_hand_computed() -> None:
    # GIVEN 100 GetItems/s of a product (½ RCU each) and 2 order transactions/s (2 WCU on the
    # table and on each of GSI1, GSI2, GSI3), no counter traffic, audit derived from the writes
    rates = _rates('{"reads": {"product by sku": 100}, "writes": {"Order": {"transaction_put": 2}}}')
    # WHEN priced
    table, audit = estimate([SETUP], rates, PRICES, FixedPerCall)
    rows = {r.where: r for r in table.capacity}
    # THEN 50 RCU/s + 4 WCU/s on the table, 4 WCU/s on each GSI
    assert (rows["table"].rcu, rows["table"].wcu) == (50, 4)
    assert all(rows[g].wcu == 4 and rows[g].rcu == 0 for g in ("GSI1", "GSI2", "GSI3"))
    assert rows["table"].on_demand_usd == pytest.approx(50 * R + 4 * W)
    # provisioned: ceil(50/0.7) = 72 RCU, ceil(4/0.7) = 6 WCU; each GSI 6 WCU and the minimum 1 RCU
    assert (rows["table"].provisioned_rcu, rows["table"].provisioned_wcu) == (72, 6)
    assert rows["GSI1"].provisioned_usd == pytest.approx(730 * (6 * 0.00065 + 0.00013))
    # AND the audit records 2 changes/s: items of 2 x 400 + 300 = 1,100 B = 2 WCU, to its table and ByDay
    audit_rows = {r.where: r for r in audit.capacity}
    assert audit_rows["table"].wcu == 4 and audit_rows["ByDay"].wcu == 4
    assert audit.stored[0].items == pytest.approx(2 * 30 * 86400) and audit.stored[0].entry_bytes == 1100
    # AND the audit writer runs 2 invocations/s (one stream shard, 1 s window, 2 records each: 1/s)
    writer = next(c for c in table.charges if c.component == "audit writer Lambda")
    assert writer.usd == pytest.approx(1 * SECONDS_PER_MONTH * (0.2e-6 + 0.08 * 0.25 * 0.0000133334))


def test_recompute_counter_hand_computed() -> None:
    # GIVEN 10 idempotent increments/s of one counter with 120 shards in the recompute layout,
    # 4 reads/s of its total
    rates = _rates('{"counters": {"product_views": {"increments_per_second": 10, "reads_per_second": 4}}}')
    table, _ = estimate([SETUP], rates, PRICES, FixedPerCall)
    lines = {x.component: x for x in table.lines}
    # THEN each increment is a transaction of a marker put and a shard update, each twice: 4 WCU
    assert lines["counter product_views: shard increments"].wcu == 40
    # AND one batch a second (1 stream shard, 1 s window) recomputes the one counter: 120
    # consistent shard reads (1 RCU each) and one total update (1 WCU)
    assert lines["counter product_views: aggregator reads shards"].rcu == 120
    assert lines["counter product_views: aggregator writes totals"].wcu == 1
    assert lines["counter product_views: reads of totals"].rcu == 2  # eventually consistent GetItem: ½ RCU
    assert any("hottest counter 10 increments/s needs 1 shard" in n and "deployed 120: enough" in n for n in table.notes)
    # AND the stream is polled by 2 Lambda consumers, 4 times a second each, not billed
    polls = next(c for c in table.charges if c.component.startswith("stream reads"))
    assert polls.usd == 0 and polls.quantity.startswith("8/s")


def test_too_few_shards_is_reported() -> None:
    few = TableSetup("t", shop_model, (CounterSetup("product_views", 2, idempotent=True, aggregation="recompute"),),
                     keys=("shop",))
    rates = _rates('{"counters": {"product_views": {"increments_per_second": 5000, "hottest_per_second": 5000}}}')
    (table,) = estimate([few], rates, PRICES, FixedPerCall)
    assert any("needs 12 shard partition(s)" in n and "TOO FEW" in n for n in table.notes)


# Properties ----------------------------------------------------------------------------------------
PATTERNS = sorted(shop_model.access_patterns)
WRITES = [(e, k) for e in sorted(shop_model.entities) for k in ("put", "update", "transaction_put", "batch_delete")]
rate = st.floats(min_value=0, max_value=5000, allow_nan=False)


@st.composite
def mixes(draw: st.DrawFn) -> TableRates:
    reads = tuple(PatternRate(p, draw(rate), draw(st.integers(1, 50)), consistent=False)
                  for p in draw(st.lists(st.sampled_from(PATTERNS), unique=True, max_size=5)))
    writes = tuple(WriteRate(e, k, draw(rate), draw(st.none() | st.integers(1, 400_000)))
                   for e, k in draw(st.lists(st.sampled_from(WRITES), unique=True, max_size=5)))
    return TableRates("shop", reads, writes)


def _on_demand_throughput(table: TableRates) -> float:
    rates = Rates("<mix>", Settings(), {"shop": table})
    setup = TableSetup("t", shop_model, keys=("shop",))
    (cost,) = estimate([setup], rates, PRICES, FixedPerCall)
    return sum(r.on_demand_usd for r in cost.capacity)


@settings(max_examples=EXAMPLES, deadline=None)
@given(mixes(), st.floats(min_value=0, max_value=100, allow_nan=False))
def test_on_demand_is_linear_in_the_rates(table: TableRates, factor: float) -> None:
    # GIVEN a random read/write mix and a factor / WHEN every rate is scaled
    scaled = Rates("<mix>", Settings(), {"shop": table}).scaled(factor).tables["shop"]
    # THEN the on-demand throughput cost scales by exactly that factor
    assert _on_demand_throughput(scaled) == pytest.approx(factor * _on_demand_throughput(table), rel=1e-9, abs=1e-9)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.floats(min_value=1e-3, max_value=1e6, allow_nan=False),
       # anywhere in (0, 1], and often close to the break-even (about 0.29 with the shipped prices)
       st.one_of(st.floats(min_value=0.01, max_value=1.0), st.floats(min_value=0.25, max_value=0.33)),
       st.sampled_from(["write", "read"]))
def test_break_even_utilization_agrees_with_pricing_both_ways(units: float, target: float, kind: str) -> None:
    # GIVEN a steady load of `units`/s and a target utilization
    hour, request = (("provisioned_wcu_hour", "on_demand_write_request_unit") if kind == "write"
                     else ("provisioned_rcu_hour", "on_demand_read_request_unit"))
    even = break_even_utilization(PRICES.unit(hour), PRICES.unit(request))
    assume(abs(target - even) > 1e-9)
    # WHEN priced both ways by brute force (capacity = load / target, unrounded)
    provisioned = provisioned_monthly(provisioned_units(units, target, rounded=False), PRICES.unit(hour))
    on_demand = on_demand_monthly(units, PRICES.unit(request))
    # THEN the analysis' claim "provisioned is cheaper above the break-even" holds exactly
    assert (provisioned < on_demand) == (target > even), (units, target, even, provisioned, on_demand)


@pytest.mark.parametrize("kind", ["write", "read"])
def test_break_even_utilization_on_a_fine_grid(kind: str) -> None:
    # GIVEN every target utilization from 0.001 to 1 in steps of 0.001, 1,000 units/s
    hour, request = (("provisioned_wcu_hour", "on_demand_write_request_unit") if kind == "write"
                     else ("provisioned_rcu_hour", "on_demand_read_request_unit"))
    even = break_even_utilization(PRICES.unit(hour), PRICES.unit(request))
    wrong = []
    for step in range(1, 1001):
        target = step / 1000
        provisioned = provisioned_monthly(provisioned_units(1000, target, rounded=False), PRICES.unit(hour))
        if abs(target - even) > 1e-9 and (provisioned < on_demand_monthly(1000, PRICES.unit(request))) != (target > even):
            wrong.append(target)
    # THEN the claim and the brute force agree at every one
    assert not wrong, f"break-even {even:.4f} disagrees with pricing both ways at targets {wrong[:5]}..."


def test_storage_of_index_projections_from_the_estimates() -> None:
    # GIVEN 1,000 orders, 10 % of them pending (in the sparse KEYS_ONLY GSI2), priced from capacity.estimate
    from constructs_lib.capacity.per_call import EstimatePerCall

    rates = _rates('{"storage": {"Order": {"items": 1000, "in_index": {"GSI2": 0.1}}}}')
    table, _ = estimate([SETUP], rates, PRICES, EstimatePerCall)
    stored = {s.where: s for s in table.stored if s.component.startswith("Order")}
    per_call = EstimatePerCall(shop_model)
    # THEN the table and the ALL indexes store the typical item, GSI2 only its keys, 100 of them
    assert stored["table"].entry_bytes == stored["GSI1"].entry_bytes == per_call.item_bytes("Order")
    assert stored["GSI2"].items == 100 and 0 < stored["GSI2"].entry_bytes < stored["table"].entry_bytes
    assert stored["GSI2"].bytes == 100 * (stored["GSI2"].entry_bytes + 100)
