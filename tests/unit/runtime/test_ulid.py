"""Unit tests for constructs_lib.runtime.ulid."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta, timezone

import pytest
from assertions import assert_rejected
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.runtime import ulid as ulid_module
from constructs_lib.runtime.ulid import (
    CROCKFORD_ALPHABET,
    is_ulid,
    new_ulid,
    ulid_timestamp,
)

UTC = UTC
PROPS = settings(max_examples=500, deadline=None)




def test_known_vector() -> None:
    # GIVEN the epoch and all-zero / all-one randomness WHEN encoded THEN the spec's extremes
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    assert new_ulid(epoch, randomness=bytes(10)) == "0" * 26
    assert new_ulid(epoch, randomness=b"\xff" * 10) == "0" * 10 + "Z" * 16
    # GIVEN 1 ms after the epoch THEN the timestamp part ends in '1'
    assert new_ulid(epoch + timedelta(milliseconds=1), randomness=bytes(10)) == "0" * 9 + "1" + "0" * 16


def test_new_ulid_shape_and_timestamp() -> None:
    # GIVEN no arguments WHEN a ULID is generated THEN it is canonical and carries "now"
    before = datetime.now(UTC) - timedelta(milliseconds=1)
    value = new_ulid()
    after = datetime.now(UTC) + timedelta(milliseconds=1)
    assert len(value) == 26 and is_ulid(value)
    assert set(value) <= set(CROCKFORD_ALPHABET)
    assert before <= ulid_timestamp(value) <= after


def test_explicit_timestamp_roundtrips_to_millisecond() -> None:
    # GIVEN an aware datetime in +02:00 with microseconds WHEN encoded and read back
    ts = datetime(2024, 6, 1, 14, 0, 0, 123987, tzinfo=timezone(timedelta(hours=2)))
    back = ulid_timestamp(new_ulid(ts))
    # THEN the same instant truncated to the millisecond comes back, in UTC
    assert back == datetime(2024, 6, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert back.utcoffset() == timedelta(0)


def test_monotonic_within_same_millisecond() -> None:
    # GIVEN many ids in the same millisecond WHEN generated THEN strictly increasing
    ts = datetime(2024, 6, 1, tzinfo=UTC)
    ids = [new_ulid(ts) for _ in range(1000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == 1000
    # AND they all carry the same millisecond
    assert {ulid_timestamp(i) for i in ids} == {ts}


def test_monotonic_increment_is_plus_one() -> None:
    # GIVEN two ids in the same millisecond WHEN decoded as 128-bit ints THEN they differ by 1
    ts = datetime(2030, 1, 1, tzinfo=UTC)

    def as_int(text: str) -> int:
        n = 0
        for ch in text:
            n = n * 32 + CROCKFORD_ALPHABET.index(ch)
        return n

    a, c = new_ulid(ts), new_ulid(ts)
    assert as_int(c) - as_int(a) == 1


def test_monotonic_across_threads() -> None:
    # GIVEN 8 threads generating ids concurrently WHEN all are collected
    results: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        local = [new_ulid() for _ in range(500)]
        # THEN each thread sees its own ids strictly increasing
        assert local == sorted(local) and len(set(local)) == 500
        with lock:
            results.extend(local)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # AND no id is ever produced twice across threads
    assert len(results) == 4000
    assert len(set(results)) == 4000


def test_overflow_in_same_millisecond_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the random part of the last id is at its maximum for this millisecond
    ts = datetime(2031, 1, 1, tzinfo=UTC)
    ms = (ts - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    monkeypatch.setattr(ulid_module._EXPLICIT, "last_ms", ms)
    monkeypatch.setattr(ulid_module._EXPLICIT, "last_random", (1 << 80) - 1)
    # WHEN another id for that millisecond is requested THEN it is refused, not wrapped
    assert_rejected(lambda: new_ulid(ts), str(ms), "overflowed")


def test_clock_stepping_back_keeps_ids_increasing(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a clock that reads 1000 ms, then steps back to 400 ms, then moves on to 2000 ms
    readings = iter([1000, 400, 2000])
    monkeypatch.setattr(ulid_module, "_now_ms", lambda: next(readings))
    monkeypatch.setattr(ulid_module, "_CLOCK", ulid_module._MonotonicState())
    # WHEN three ids are generated from the clock
    ids = [new_ulid() for _ in range(3)]
    # THEN they are strictly increasing; the step back reuses the previous millisecond
    assert ids[0] < ids[1] < ids[2]
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    assert [ulid_timestamp(i) - epoch for i in ids] == [
        timedelta(milliseconds=1000),
        timedelta(milliseconds=1000),
        timedelta(milliseconds=2000),
    ]


def test_future_explicit_timestamp_does_not_affect_clock_ids() -> None:
    # GIVEN an id generated for a far-future explicit timestamp
    new_ulid(datetime(2999, 1, 1, tzinfo=UTC))
    # WHEN an id is then generated from the clock THEN it carries the real time
    assert ulid_timestamp(new_ulid()).year < 2999


def test_explicit_randomness_is_deterministic_and_bypasses_state() -> None:
    # GIVEN the same timestamp and randomness WHEN generated twice THEN the same id
    ts = datetime(2024, 6, 1, tzinfo=UTC)
    r = bytes(range(10))
    assert new_ulid(ts, randomness=r) == new_ulid(ts, randomness=r)


@pytest.mark.parametrize(
    ("kwargs", "offending", "rule_word"),
    [
        ({"timestamp": datetime(2024, 6, 1)}, "datetime.datetime(2024, 6, 1", "naive"),
        ({"timestamp": "2024-06-01"}, "'2024-06-01'", "timezone-aware"),
        ({"timestamp": datetime(1969, 12, 31, tzinfo=UTC)}, "datetime.datetime(1969, 12, 31", "1970"),
        ({"randomness": b"short"}, "b'short'", "10 bytes"),
        ({"randomness": "0123456789"}, "'0123456789'", "10 bytes"),
    ],
)
def test_new_ulid_rejects(kwargs: dict, offending: str, rule_word: str) -> None:
    # GIVEN a bad timestamp or randomness WHEN generating THEN KeyValueError names it
    assert_rejected(lambda: new_ulid(**kwargs), offending, rule_word)


@pytest.mark.parametrize(
    "bad",
    [
        "01HZX3JQ5S7ZC1VJ5T9W2Y6KPM"[:-1],  # 25 chars
        "01HZX3JQ5S7ZC1VJ5T9W2Y6KPMA",  # 27 chars
        "01hzx3jq5s7zc1vj5t9w2y6kpm",  # lowercase
        "01HZX3JQ5S7ZC1VJ5T9W2Y6KPI",  # I is not Crockford
        "01HZX3JQ5S7ZC1VJ5T9W2Y6KPU",  # U is not Crockford
        "81HZX3JQ5S7ZC1VJ5T9W2Y6KPM",  # > 128 bits
        "01HZX3JQ5S7ZC1VJ5T9W2Y6KP#",
    ],
)
def test_is_ulid_false_and_timestamp_rejects(bad: str) -> None:
    # GIVEN a non-canonical ULID WHEN checked THEN is_ulid is False and parsing is refused
    assert is_ulid(bad) is False
    assert_rejected(lambda: ulid_timestamp(bad), repr(bad), "Crockford")


def test_is_ulid_non_string() -> None:
    # GIVEN non-strings WHEN checked THEN False rather than an error
    assert is_ulid(None) is False
    assert is_ulid(b"0" * 26) is False
    assert is_ulid("7ZZZZZZZZZZZZZZZZZZZZZZZZZ") is True


def test_ulid_timestamp_beyond_year_9999() -> None:
    # GIVEN the maximal ULID (year 10889) WHEN its time is read THEN refused with the reason
    assert_rejected(lambda: ulid_timestamp("7ZZZZZZZZZZZZZZZZZZZZZZZZZ"), "'7ZZZ", "9999")


@PROPS
@given(
    st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)),
    st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)),
    st.binary(min_size=10, max_size=10),
    st.binary(min_size=10, max_size=10),
)
def test_property_ulids_sort_by_time(t1: datetime, t2: datetime, r1: bytes, r2: bytes) -> None:
    # GIVEN two timestamps and two random parts WHEN ULIDs are made
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    ms1, ms2 = (t1 - epoch) // timedelta(milliseconds=1), (t2 - epoch) // timedelta(milliseconds=1)
    u1, u2 = new_ulid(t1, randomness=r1), new_ulid(t2, randomness=r2)
    # THEN they are canonical, their byte order follows time order, and time round-trips
    assert is_ulid(u1) and is_ulid(u2)
    if ms1 != ms2:
        assert (u1.encode() < u2.encode()) == (ms1 < ms2)
    else:
        assert (u1 < u2) == (r1 < r2)
    assert ulid_timestamp(u1) == t1.replace(microsecond=t1.microsecond // 1000 * 1000)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_does_not_repeat_parent_sequence() -> None:
    # GIVEN a parent that generated an id for a millisecond
    ts = datetime(2032, 1, 1, tzinfo=UTC)
    new_ulid(ts)
    read_fd, write_fd = os.pipe()
    # WHEN a forked child and the parent each generate the next id for that millisecond
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.write(write_fd, new_ulid(ts).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    parent_id = new_ulid(ts)
    os.waitpid(pid, 0)
    child_id = os.read(read_fd, 64).decode()
    os.close(read_fd)
    # THEN the ids differ (the child re-seeded instead of incrementing the parent's state)
    assert is_ulid(child_id)
    assert child_id != parent_id
