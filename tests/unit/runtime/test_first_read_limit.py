"""The first read of each shard of a merged page (``merged_reads.first_read_limit``) against an
exact brute force: the chance that a page needs a second read of some shard, computed from the
multinomial distribution of a page's items over evenly hashed shards."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import factorial

import pytest

from constructs_lib.runtime.merged_reads import SECOND_READ_SHARE, first_read_limit


def overflow_chance(limit: int, shards: int, first: int) -> Fraction:
    """Exact P(some shard holds more than ``first`` of a page's ``limit`` items), each item in a
    shard chosen uniformly: 1 − (assignments with every count ≤ first) / shards^limit."""
    per_shard = [Fraction(1, factorial(j)) for j in range(min(first, limit) + 1)]
    poly = [Fraction(1)]
    for _ in range(shards):  # (sum_{j<=first} x^j / j!)^shards, up to x^limit
        out = [Fraction(0)] * min(len(poly) + len(per_shard) - 1, limit + 1)
        for i, a in enumerate(poly):
            for j, b in enumerate(per_shard):
                if i + j <= limit:
                    out[i + j] += a * b
        poly = out
    fitting = poly[limit] * factorial(limit) if limit < len(poly) else Fraction(0)
    return 1 - fitting / Fraction(shards) ** limit


def old_margin(limit: int, shards: int) -> int:
    return min(limit, -(-3 * limit // (2 * shards)) + 2)


def test_a_page_rarely_needs_a_second_read_and_never_reads_more_than_before() -> None:
    for limit, shards in itertools.product(range(1, 41), range(2, 7)):  # every page of 1..40 over 2..6 shards
        # GIVEN a page size and a shard count
        # WHEN the first read's Limit is chosen
        first = first_read_limit(limit, shards)
        # THEN it is at least 1 and never exceeds the former margin (1.5 x share + 2, at most the page)
        assert 1 <= first <= old_margin(limit, shards), (limit, shards)
        # AND below that margin, at most SECOND_READ_SHARE of pages need a second read of some shard (exactly)
        if first < old_margin(limit, shards):
            assert overflow_chance(limit, shards, first) <= SECOND_READ_SHARE, (limit, shards)
            # AND one item less would not do: one shard alone would then overflow more often than its part
            assert first == 1 or overflow_chance(limit, shards, first - 1) > SECOND_READ_SHARE / shards, (limit, shards)


@pytest.mark.parametrize(("limit", "shards", "first"), [(100, 4, 35), (100, 16, 12), (100, 2, 60), (1, 4, 1), (10, 1, 10)])
def test_the_figures_the_docs_quote(limit: int, shards: int, first: int) -> None:
    # GIVEN the page sizes the docs and the benchmark use WHEN sized THEN the first reads are as quoted
    assert first_read_limit(limit, shards) == first
