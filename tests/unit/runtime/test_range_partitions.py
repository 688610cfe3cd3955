"""Which time-bucketed partitions a ``between`` range touches (runtime.buckets.range_partitions)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from constructs_lib.model.templates import KeyTemplate
from constructs_lib.runtime import KeyValueError
from constructs_lib.runtime.buckets import bucket, range_partitions

UTC = UTC
MONTHLY = KeyTemplate.parse("SENSOR#{sensor_id}#{ts:month}")


def test_one_instant_per_partition_starting_at_low() -> None:
    # GIVEN a range from mid-November to early January, on a month-bucketed key
    low, high = datetime(2026, 11, 20, 8, tzinfo=UTC), datetime(2027, 1, 2, tzinfo=UTC)
    # WHEN its partitions are listed
    starts = range_partitions(MONTHLY, "ts", (low, high))
    # THEN there is one per month, the first being low itself, and each lies in its bucket
    assert starts is not None and starts[0] == low
    assert [bucket(s, "month") for s in starts] == ["2026-11", "2026-12", "2027-01"]
    assert starts[1:] == [date(2026, 12, 1), date(2027, 1, 1)]


def test_a_range_inside_one_bucket_is_one_partition() -> None:
    # GIVEN a range inside one hour bucket
    hourly = KeyTemplate.parse("METER#{id}#{at:hour}")
    low, high = datetime(2026, 5, 1, 10, 5, tzinfo=UTC), datetime(2026, 5, 1, 10, 55, tzinfo=UTC)
    # THEN it is read from one partition, the one of low
    assert range_partitions(hourly, "at", (low, high)) == [low]


def test_not_applicable_without_a_bucketed_field_or_a_pair() -> None:
    # GIVEN templates that do not bucket the range field, and a value that is not a pair
    # THEN there is nothing to fan out (the query reports a bad value itself)
    assert range_partitions(KeyTemplate.parse("USER#{user_id}"), "ts", (1, 2)) is None
    assert range_partitions(KeyTemplate.parse("SENSOR#{ts}"), "ts", ("a", "b")) is None
    assert range_partitions(MONTHLY, "ts", datetime(2026, 1, 1, tzinfo=UTC)) is None


def test_reversed_ranges_are_refused_naming_the_values() -> None:
    # GIVEN a range whose low is after its high THEN the typed error names both
    low, high = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)
    with pytest.raises(KeyValueError,
                       match=r"field .ts.: start datetime.datetime\(2026, 3, 1.* is after end datetime.datetime\(2026, 2, 1"):
        range_partitions(MONTHLY, "ts", (low, high))
