"""The counter's calls and load in both layouts: items sized by hand, per-call units, the stream
layout's aggregation model (hot counter, spread counters, batch size), and the two example mixes
priced both ways (the viral peak at most 30 % of the recompute layout, the shop's aggregation at
most its increments). The figures against DynamoDB Local: tests/integration/test_counter_capacity.py."""

from __future__ import annotations

import math

import pytest
from fixed_per_call import FixedPerCall

from constructs_lib.capacity import Capacity
from constructs_lib.capacity.cli import estimate
from constructs_lib.capacity.cost import CounterSetup, TableSetup, as_recompute
from constructs_lib.capacity.counter_cost import hot_stream_shards, stream_aggregation, watermarks_held
from constructs_lib.capacity.counters import CounterCalls, total_item, typical_watermarks
from constructs_lib.capacity.price_file import load_prices
from constructs_lib.capacity.rates import parse_rates
from constructs_lib.runtime.patterns.counter import CounterSpec
from constructs_lib.runtime.values import item_size
from examples.shop.model import shop_model
from examples.viral.model import viral_model

PRICES = load_prices()


def _spec(shards: int = 60, *, idempotent: bool = True, aggregation: str = "deltas",
          regions: tuple[str, ...] = ()) -> CounterSpec:
    return CounterSpec("views", shards, ttl_attribute="expires_at", idempotency_ttl_seconds=86_400 if idempotent else None,
                       aggregation=aggregation, regions=regions)


def _rates(table: str, counters: str) -> object:
    return parse_rates('{"format": "constructs_lib.rates", "version": 1, "tables": {"' + table + '": {"counters": '
                       + counters + "}}}")


# Items and calls -------------------------------------------------------------------------------
def test_a_total_with_two_watermarks_sized_by_hand() -> None:
    # GIVEN a stream-layout total of counter "c" holding shard 7's and shard 12's watermarks
    item = total_item(_spec(), "c", watermarks=[{7: 5}, {12: 300}], count=9, applied_events=9)
    # THEN its bytes are its names and values: the maps 3 + per entry 1 + name + the binary
    # (a length byte and the big-endian number: 5 -> 1 byte, 300 -> 2)
    by_hand = (2 + len("COUNTER#views#c") + 2 + 5 + 5 + 2 + 13 + 27 + 5 + 12 + 3 + 2 + 1 + 2
               + 2 + 3 + 1 + 1 + 2 + 2 + 3 + 1 + 2 + 3)
    assert item_size(item) == by_hand


def test_calls_of_the_stream_layout() -> None:
    calls = CounterCalls(viral_model, _spec())
    # THEN an increment and an idempotent increment are one small write each, a duplicate too
    assert calls.increment() == Capacity("write", 1.0)
    assert calls.idempotent_increment() == Capacity("write", 1.0)
    assert calls.duplicate() == Capacity("write", 1.0)
    # AND an aggregation write is priced by the total, which grows with its watermarks: 2 x 60
    # watermarks of 40-digit sequence numbers (18 bytes each) take it past 2 KB
    assert calls.aggregation_write(0).table == 1.0
    assert calls.aggregation_write(120).table == 3.0
    assert calls.sizes(120)["total"] == pytest.approx(2_600, abs=100)
    # AND a read is half a unit, an exact read one unit per shard and one for the total
    assert calls.read(120) == Capacity("read", 0.5)
    assert calls.exact_read(120) == Capacity("read", 61.0)


def test_calls_of_the_recompute_layout() -> None:
    calls = CounterCalls(viral_model, _spec(120, aggregation="recompute"))
    # THEN an idempotent increment is a transaction of two writes, each charged twice
    assert calls.idempotent_increment() == Capacity("write", 4.0)
    assert calls.duplicate() is None  # a cancelled transaction's charge is not documented
    # AND a recompute reads every shard strongly consistently (1 unit each) and writes the total
    assert calls.recompute_reads() == Capacity("read", 120.0)
    assert calls.aggregation_write(0) == Capacity("write", 1.0)
    assert calls.exact_read() == Capacity("read", 120.0)


def test_a_replicated_stream_family_reads_one_total_per_region() -> None:
    calls = CounterCalls(viral_model, _spec(10, regions=("us-east-1", "eu-west-1")))
    # THEN get() reads both regions' totals, get(exact=True) every region's shards and totals
    assert calls.read() == Capacity("read", 1.0)
    assert calls.exact_read() == Capacity("read", 22.0)


def test_typical_watermarks_split_over_two_generations() -> None:
    marks = typical_watermarks(_spec(60), 75)
    assert [len(m) for m in marks] == [38, 37]
    assert typical_watermarks(_spec(60), 500) == typical_watermarks(_spec(60), 120)  # at most every shard twice


# The aggregation model ---------------------------------------------------------------------------
def test_a_hot_counter_gets_a_stream_shard_per_counter_shard() -> None:
    # GIVEN 50,000 increments/s of one counter on 60 shards (833 WCU/s each: one per partition)
    assert hot_stream_shards(50_000, 60, 1, 1.0) == 60
    # AND 40/s on 60 shards: all fit in one partition, so the table's own partitions carry them
    assert hot_stream_shards(40, 60, 2, 1.0) == 2
    # AND 6,000/s on 60 shards (100 WCU/s each): 10 shards a partition, 6 partitions
    assert hot_stream_shards(6_000, 60, 1, 1.0) == 6


def test_a_hot_counter_is_written_once_per_batch_of_each_stream_shard() -> None:
    # GIVEN the viral peak: 50,000 idempotent increments/s of one counter, 60 shards, batches of
    # 1,000 within 1 s, the increment items' expiries reaching the aggregator too
    load = stream_aggregation(increments=50_000, hottest=50_000, counters=1, shards=60, batch_size=1000,
                              window_seconds=1.0, stream_shards=1, guard_seconds=3690, expiries=True)
    # THEN each of the 60 stream shards sends 1,666.7 records/s: 1.67 full batches a second, each
    # holding 500 increments of one shard: one total write per batch, 100/s in all
    assert load.stream_shards == load.hot_stream_shards == 60
    assert load.invocations == pytest.approx(100)
    assert load.hot_writes == pytest.approx(100) and load.cold_writes == 0
    assert load.hot_per_batch == pytest.approx(500)
    # AND the total keeps every shard's watermark in both generations
    assert load.hot_lanes == pytest.approx(120)


def test_batches_touching_many_shards_write_once_per_25() -> None:
    # GIVEN one counter on 100 shards all on one stream shard, batches of 1,000, 100 increments/s
    load = stream_aggregation(increments=100, hottest=100, counters=1, shards=100, batch_size=1000,
                              window_seconds=10.0, stream_shards=1, guard_seconds=3690, expiries=False)
    # THEN a batch holds 1,000 increments touching every shard: 4 writes of 25 shards, 0.1 batch/s
    assert load.invocations == pytest.approx(0.1)
    assert load.hot_writes == pytest.approx(0.4)


def test_spread_counters_write_at_most_once_per_counter_in_a_batch() -> None:
    # GIVEN 300 increments/s over 50,000 counters, the hottest at 40/s, 2 stream shards
    load = stream_aggregation(increments=300, hottest=40, counters=50_000, shards=60, batch_size=1000,
                              window_seconds=1.0, stream_shards=2, guard_seconds=3690, expiries=True)
    # THEN the other counters' totals are written at most once per increment (once per counter
    # present in a batch), the hottest counter's once per batch
    assert load.cold_writes <= 260 and load.cold_writes == pytest.approx(260, rel=0.01)
    assert load.hot_writes == pytest.approx(load.invocations, rel=1e-6)
    # AND a quiet counter's total holds the watermarks of the shards touched in two generations
    assert load.cold_lanes == pytest.approx(watermarks_held(260 / 49_999, 60, 3690))
    assert load.cold_lanes == pytest.approx(2 * 60 * (1 - math.exp(-260 / 49_999 * 3690 / 60)))


def test_no_increments_no_aggregation() -> None:
    load = stream_aggregation(increments=0, hottest=0, counters=5, shards=8, batch_size=100, window_seconds=1,
                              stream_shards=1, guard_seconds=3690, expiries=False)
    assert (load.invocations, load.hot_writes, load.cold_writes) == (0, 0, 0)


# The two example mixes, both ways ------------------------------------------------------------------
VIRAL = TableSetup("ViralVideoStack/Data", viral_model, (
    CounterSetup("video_views", 60, idempotent=True, batch_size=1000, legacy_shards=120),), stream=True)
VIRAL_RECOMPUTE = TableSetup("ViralVideoStack/Data", viral_model, (
    CounterSetup("video_views", 120, idempotent=True, aggregation="recompute"),), stream=True)
SHOP = TableSetup("ShopStack/Data", shop_model, (
    CounterSetup("product_views", 60, idempotent=True, batch_size=1000, legacy_shards=120),), stream=True)


def _lines(cost: object) -> dict[str, float]:
    from constructs_lib.capacity.price_file import Prices  # noqa: F401 - the type only

    w, r = PRICES.unit("on_demand_write_request_unit"), PRICES.unit("on_demand_read_request_unit")
    return {x.component: (x.wcu * w + x.rcu * r) for x in cost.lines}  # type: ignore[attr-defined]


def test_the_viral_peak_costs_at_most_30_percent_of_the_recompute_layout() -> None:
    # GIVEN the committed viral rates (50,000 idempotent views/s of one video, 1,000 reads/s)
    rates = _rates("ViralVideoStack/Data", '{"video_views": {"increments_per_second": 50000, '
                   '"hottest_per_second": 50000, "counters": 1, "reads_per_second": 1000}}')
    # WHEN priced in the stream layout, in the recompute layout with the same mapping (120
    # shards, transactions), and as the recompute layout was deployed (batches of 100)
    (after,) = estimate([VIRAL], rates, PRICES, FixedPerCall)  # type: ignore[arg-type]
    (same_mapping,) = estimate([as_recompute(VIRAL)], rates, PRICES, FixedPerCall)  # type: ignore[arg-type]
    (before,) = estimate([VIRAL_RECOMPUTE], rates, PRICES, FixedPerCall)  # type: ignore[arg-type]
    # THEN the stream layout costs at most 30 % of either
    assert before.on_demand_usd == pytest.approx(349_939, rel=0.001)
    assert after.on_demand_usd <= 0.30 * min(before.on_demand_usd, same_mapping.on_demand_usd)
    # AND its aggregation costs at most 5 % of its increments, and reads nothing
    lines = _lines(after)
    assert lines["counter video_views: aggregator writes totals"] <= 0.05 * lines["counter video_views: increments"]
    assert not any("reads shards" in name for name in lines)


def test_the_shop_aggregation_costs_at_most_its_increments() -> None:
    rates = _rates("ShopStack/Data", '{"product_views": {"increments_per_second": 300, "hottest_per_second": 40, '
                   '"counters": 50000, "reads_per_second": 300}}')
    (after,) = estimate([SHOP], rates, PRICES, FixedPerCall)  # type: ignore[arg-type]
    (before,) = estimate([as_recompute(SHOP)], rates, PRICES, FixedPerCall)  # type: ignore[arg-type]
    lines, old = _lines(after), _lines(before)
    assert lines["counter product_views: aggregator writes totals"] <= lines["counter product_views: increments"]
    # AND it was 6.2 times them in the recompute layout
    ratio = (old["counter product_views: aggregator reads shards"] + old["counter product_views: aggregator writes totals"]) \
        / old["counter product_views: shard increments"]
    assert ratio == pytest.approx(6.25)


def test_as_recompute_uses_the_shards_that_layout_sized() -> None:
    (counter,) = as_recompute(VIRAL).counters
    assert (counter.aggregation, counter.shards, counter.idempotent) == ("recompute", 120, True)
    assert as_recompute(as_recompute(VIRAL)) == as_recompute(VIRAL)


def test_a_synthesized_spec_gives_its_layout_and_a_family_without_a_stream_is_recomputed() -> None:
    # GIVEN a stream-layout spec as an aggregator's environment holds it
    spec = CounterSpec.from_json(_spec(60).to_json())
    # WHEN read with and without a stream mapping
    streamed = CounterSetup.from_spec(spec, batch_size=1000, stream=True)
    scheduled = CounterSetup.from_spec(spec, stream=False)
    # THEN the first is priced as the stream layout, the second as the recompute layout its schedule runs
    assert (streamed.aggregation, streamed.batch_size, streamed.guard_seconds) == ("deltas", 1000, 3690)
    assert scheduled.aggregation == "recompute"
