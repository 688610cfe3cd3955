"""The partition throttling model used by the benchmarks (benchmarks/partition_sim.py): its arithmetic."""

from __future__ import annotations

import math

import pytest

from benchmarks.partition_sim import (
    PARTITION_RCU,
    KeyDesign,
    SimulationError,
    constant_key,
    date_key,
    default_partitions,
    log_loads,
    partition_of,
    simulate,
    status_key,
    sweep,
    uniform_keys,
    write_sharded,
    zipf_users,
)
from constructs_lib.runtime.limits import PARTITION_WCU
from constructs_lib.runtime.patterns.counter import derive_shards


@pytest.mark.parametrize("model", ["adaptive", "fixed"])
@pytest.mark.parametrize("load", [1_001.0, 2_000.0, 5_000.0, 50_000.0, 100_000.0])
def test_constant_key_throttles_all_but_one_partition(model: str, load: float) -> None:
    # GIVEN every write on one partition key, offered above one partition's 1,000 WCU/s
    design = constant_key()
    # WHEN the load is simulated
    outcome = simulate(design, load, model=model)  # type: ignore[arg-type]
    # THEN exactly 1,000 writes/s are served and the rest throttled: 1 - 1000/L
    assert outcome.served == pytest.approx(PARTITION_WCU)
    assert outcome.throttled_fraction == pytest.approx(1 - PARTITION_WCU / load)


@pytest.mark.parametrize("load", [0.0, 1.0, 500.0, 1_000.0])
def test_constant_key_at_or_below_one_partition_is_not_throttled(load: float) -> None:
    # GIVEN a constant key offered at most one partition's capacity
    # WHEN simulated under both models
    outcomes = [simulate(constant_key(), load, model=m) for m in ("adaptive", "fixed")]
    # THEN nothing is throttled
    assert [o.throttled for o in outcomes] == [0.0, 0.0]


@pytest.mark.parametrize("load", [100.0, 10_000.0, 99_999.0])
def test_uniform_design_below_capacity_throttles_nothing(load: float) -> None:
    # GIVEN 100 keys with equal shares, each below one partition's capacity (load/100 < 1,000)
    design = uniform_keys(100)
    # WHEN simulated under adaptive capacity with the default table size
    outcome = simulate(design, load)
    # THEN nothing is throttled
    assert outcome.throttled == 0.0
    assert outcome.served == pytest.approx(load)


def test_uniform_design_throttles_the_excess_of_each_key() -> None:
    # GIVEN 10 uniform keys offered 20,000 writes/s (2,000 per key, twice a partition's capacity)
    # WHEN simulated under adaptive capacity
    outcome = simulate(uniform_keys(10), 20_000.0)
    # THEN each key is served 1,000/s: half of the writes are throttled
    assert outcome.served == pytest.approx(10_000.0)
    assert outcome.throttled_fraction == pytest.approx(0.5)


def test_status_design_throttles_above_its_hot_value_onset() -> None:
    # GIVEN 80 % of writes on PENDING
    design = status_key()
    # WHEN offered below and above 1,000 / 0.8 = 1,250 writes/s
    below, above = simulate(design, 1_200.0), simulate(design, 10_000.0)
    # THEN below the onset nothing is throttled; above it, PENDING's excess (8,000 - 1,000) is,
    # and PAID (1,000/s) sits exactly at one partition's capacity
    assert design.throttle_onset() == pytest.approx(1_250.0)
    assert below.throttled == 0.0
    assert above.throttled == pytest.approx(7_000.0)
    assert above.throttled_fraction == pytest.approx(0.7)


def test_date_design_serves_today_on_one_partition() -> None:
    # GIVEN 99 % of writes on today's key, 1 % over six earlier days
    design = date_key(0.99, 7)
    # WHEN offered 100,000 writes/s
    outcome = simulate(design, 100_000.0)
    # THEN today's key gets 1,000 of its 99,000; earlier days (~167/s each) are served in full
    assert outcome.served == pytest.approx(1_000 + 1_000)
    assert outcome.throttled_fraction == pytest.approx(0.98)


def test_write_sharded_design_uses_derive_shards_and_throttles_above_its_ceiling() -> None:
    # GIVEN a hot item write-sharded for 50,000 writes/s
    design = write_sharded(50_000)
    shards = derive_shards(50_000).shards
    # WHEN offered its target, its ceiling, and twice its ceiling
    at_target = simulate(design, 50_000.0)
    at_ceiling = simulate(design, shards * 1_000.0)
    over = simulate(design, 2 * shards * 1_000.0)
    # THEN derive_shards' 60 keys carry the target and their ceiling without throttling, and
    # throttle half of twice the ceiling
    assert len(design.keys) == shards == 60
    assert at_target.throttled == 0.0
    assert at_ceiling.throttled == pytest.approx(0.0, abs=1e-6)
    assert over.throttled_fraction == pytest.approx(0.5)


def test_zipf_users_shares_follow_the_exponent() -> None:
    # GIVEN 1,000 users with Zipf exponent 1
    design = zipf_users(1_000, 1.0)
    # WHEN the shares are read
    harmonic = math.fsum(1 / r for r in range(1, 1_001))
    # THEN rank r gets (1/r) / H(1000) and the shares sum to 1
    assert design.shares[0] == pytest.approx(1 / harmonic)
    assert design.shares[9] == pytest.approx(0.1 / harmonic)
    assert math.fsum(design.shares) == pytest.approx(1.0)
    assert design.throttle_onset() == pytest.approx(1_000 * harmonic)


def test_fixed_model_sums_keys_sharing_a_partition() -> None:
    # GIVEN two equal keys and a table of one partition
    design = uniform_keys(2)
    # WHEN 1,500 writes/s are offered (750 per key)
    fixed = simulate(design, 1_500.0, model="fixed", partitions=1)
    adaptive = simulate(design, 1_500.0, model="adaptive", partitions=1)
    # THEN without adaptive capacity both keys share the partition's 1,000/s; adaptive capacity
    # is still capped by the table's single partition
    assert fixed.throttled == pytest.approx(500.0)
    assert adaptive.throttled == pytest.approx(500.0)
    # AND with enough partitions adaptive capacity serves both keys in full
    assert simulate(design, 1_500.0, model="adaptive", partitions=2).throttled == 0.0


def test_fixed_model_matches_hash_placement() -> None:
    # GIVEN 50 uniform keys on 4 partitions and 8,000 writes/s (160 per key)
    design, load, n = uniform_keys(50), 8_000.0, 4
    # WHEN simulated without adaptive capacity
    outcome = simulate(design, load, model="fixed", partitions=n)
    # THEN throttling equals the sum of every partition's excess over 1,000 under partition_of
    per_partition = [0.0] * n
    for key in design.keys:
        per_partition[partition_of(key, n)] += load / 50
    assert outcome.throttled == pytest.approx(math.fsum(max(0.0, p - 1_000) for p in per_partition))
    assert outcome.throttled > 0  # 8,000/s on 4 partitions cannot all be served


def test_reads_use_the_read_capacity() -> None:
    # GIVEN a constant key read at 6,000 units/s
    # WHEN simulated with the per-partition read capacity
    outcome = simulate(constant_key(), 6_000.0, capacity=PARTITION_RCU)
    # THEN 3,000 are served
    assert outcome.throttled_fraction == pytest.approx(0.5)


def test_default_partitions_is_twice_the_load() -> None:
    # GIVEN loads around partition boundaries
    # WHEN the default table size is derived
    # THEN it is ceil(2 x load / 1000), at least 1
    assert [default_partitions(x) for x in (0, 1, 500, 501, 1_000, 50_000)] == [1, 1, 1, 2, 2, 100]


def test_partition_of_is_deterministic_and_in_range() -> None:
    # GIVEN the same key hashed twice, and with another seed
    # WHEN placed on 7 partitions
    first, again = partition_of("USER#1", 7), partition_of("USER#1", 7)
    placements = {partition_of(f"K#{i}", 7) for i in range(200)}
    # THEN the placement repeats and every partition index is in range
    assert first == again
    assert placements == set(range(7))


def test_sweep_and_log_loads() -> None:
    # GIVEN loads from 500 to 100,000 on a log scale
    loads = log_loads(500, 100_000, per_decade=4)
    # WHEN two designs are swept
    result = sweep([constant_key(), uniform_keys(1_000)], loads)
    # THEN the endpoints are included, loads increase, and every design has one outcome per load
    assert loads[0] == 500 and loads[-1] == 100_000
    assert loads == sorted(loads)
    assert [len(v) for v in result.values()] == [len(loads), len(loads)]
    assert result["1,000 uniform keys"][-1].throttled == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: simulate(constant_key(), -1.0), "load -1.0 must be"),
        (lambda: simulate(constant_key(), 1.0, capacity=0), "capacity 0 must be"),
        (lambda: simulate(constant_key(), 1.0, model="other"), "model 'other' must be one of"),  # type: ignore[arg-type]
        (lambda: simulate(constant_key(), 1.0, partitions=0), "partitions 0 must be"),
        (lambda: KeyDesign("d", ("a", "b"), (0.5, 0.6)), "shares sum to"),
        (lambda: KeyDesign("d", ("a", "a"), (0.5, 0.5)), "keys must be distinct"),
        (lambda: KeyDesign("d", (), ()), "needs at least one key"),
        (lambda: zipf_users(0), "users 0 must be"),
        (lambda: date_key(1.5), "today_share 1.5 must be"),
        (lambda: log_loads(10, 5), "need 0 < low"),
    ],
)
def test_bad_input_raises_simulation_error(call: object, message: str) -> None:
    # GIVEN an out-of-range input
    # WHEN the simulator is called
    # THEN a SimulationError names the value and the rule
    with pytest.raises(SimulationError, match=message):
        call()  # type: ignore[operator]
