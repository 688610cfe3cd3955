"""Sizes as DynamoDB Local counts them, measured at its 1 KB write-unit boundary and at its 400 KB
item limit, and the grid of numbers the runtime's number rule (``runtime/values.number_size``) was
derived from.

The measurement: an item ``{"PK": key, "v": value, "p": padding}`` is put (into an empty slot:
the key is deleted first, so the write is priced on the new item alone) with
``ReturnConsumedCapacity``; the longest padding that still costs 1 write unit gives the value's
size exactly (a binary search, no size rule assumed). The 400 KB limit gives the same figure from
what DynamoDB stores or refuses. Both are used by ``test_number_sizes.py``; run this file as a
script to re-derive the rule over the whole grid (every sign, digit count 1-38 and exponent
-130..125, two digit patterns: 39,385 numbers with the representative ones, 277,106 puts; about
20 minutes on a quiet machine, 45 on a busy one)::

    .venv/bin/python tests/integration/number_sizes.py [--out sizes.csv] [--check]

It prints each size class (sign, pairs the digits span aligned on the decimal point) with the
sizes measured in it, and the numbers whose measured size differs from ``number_size``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import random
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

#: DynamoDB's number range: magnitude 1E-130 to 9.99...E+125, at most 38 significant digits.
MIN_EXPONENT, MAX_EXPONENT, MAX_DIGITS = -130, 125, 38
KEY = {"PK": {"S": "size-probe"}}
#: Bytes of the probe item besides the value and the padding: "PK" + its key, "v", "p".
OVERHEAD = len("PK") + len("size-probe") + len("v") + len("p")
UNIT = 1024
LIMIT = 400 * 1024


class SizeProbe:
    """Measures the bytes DynamoDB Local counts for attribute values in wire form (``{"N": "1.5"}``,
    ``{"NS": [...]}``, ``{"L": [...]}``), in a table keyed by ``PK`` (string).

    Parameters
    ----------
    client
        A boto3 DynamoDB client of DynamoDB Local.
    table_name
        A table with the string partition key ``PK`` only (:meth:`create` makes one).
    """

    def __init__(self, client: Any, table_name: str) -> None:
        self.client, self.table_name = client, table_name
        self.puts = 0

    @classmethod
    def create(cls, client: Any, table_name: str) -> SizeProbe:
        """A probe on a new on-demand table ``table_name``."""
        client.create_table(
            TableName=table_name, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        )
        return cls(client, table_name)

    def drop(self) -> None:
        self.client.delete_table(TableName=self.table_name)

    def _put(self, attributes: dict[str, Any], pad: int, *, empty: bool = True, **extra: Any) -> dict[str, Any]:
        """Put ``attributes`` with ``pad`` bytes of padding; ``empty``: into an empty slot (the key
        deleted first: a put over an item is priced on the larger of the two)."""
        if empty:
            self.client.delete_item(TableName=self.table_name, Key=KEY)
        self.puts += 1
        item = {**KEY, **attributes, "p": {"S": "x" * pad}}
        response: dict[str, Any] = self.client.put_item(TableName=self.table_name, Item=item, **extra)
        return response

    def write_units(self, attributes: dict[str, Any], pad: int, *, empty: bool = True) -> float:
        """Write units of putting ``attributes`` with ``pad`` bytes of padding (``empty``: as a
        new item; else over the probe's last item, priced on the larger of the two)."""
        response = self._put(attributes, pad, empty=empty, ReturnConsumedCapacity="TOTAL")
        return float(response["ConsumedCapacity"]["CapacityUnits"])

    def stores(self, attributes: dict[str, Any], pad: int = 1) -> bool:
        """Whether DynamoDB stores ``attributes`` with ``pad`` bytes of padding (False: refused
        for its size); any other refusal is raised."""
        try:
            self._put(attributes, pad)
        except self.client.exceptions.ClientError as exc:
            message = exc.response["Error"]["Message"]
            if exc.response["Error"]["Code"] == "ValidationException" and "size" in message.lower():
                return False
            raise
        return True

    def refusal(self, value: dict[str, Any]) -> str | None:
        """DynamoDB's message when it refuses to store ``value`` at all (None: stored)."""
        try:
            self._put({"v": value}, 1)
        except self.client.exceptions.ClientError as exc:
            return str(exc.response["Error"]["Message"])
        return None

    def size(self, value: dict[str, Any], *, most: int = 64) -> int:
        """The bytes DynamoDB counts for ``value`` (at most ``most``), from the longest padding
        that keeps the item at 1 write unit (a binary search: no size rule assumed)."""
        return self._search(value, most, lambda pad: self.write_units({"v": value}, pad) == 1.0, UNIT)

    def size_by_limit(self, value: dict[str, Any], *, most: int = 64) -> int:
        """The same size, from the longest padding DynamoDB stores within its 400 KB limit."""
        return self._search(value, most, lambda pad: self.stores({"v": value}, pad), LIMIT)

    @staticmethod
    def _search(value: dict[str, Any], most: int, fits: Callable[[int], bool], bound: int) -> int:
        room = bound - OVERHEAD  # value + padding
        lo, hi = room - most, room  # the longest padding that fits lies in [lo, hi]
        if not fits(lo):
            raise AssertionError(f"{value}: larger than {most} bytes")
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid - 1
        return room - lo

    def is_size(self, attributes: dict[str, Any], size: int) -> bool:
        """Whether DynamoDB counts exactly ``size`` bytes for ``attributes`` (names and values):
        padded to 1 KB by that size the item costs 1 write unit, one byte more costs 2 (two puts,
        the second over the first: the larger of the two is the second)."""
        pad = UNIT - len("PK") - len(KEY["PK"]["S"]) - len("p") - size
        return self.write_units(attributes, pad) == 1.0 and self.write_units(attributes, pad + 1, empty=False) == 2.0

    def is_size_by_limit(self, attributes: dict[str, Any], size: int) -> bool:
        """The same at the 400 KB limit: stored at exactly 400 KB by that size, refused one byte over."""
        pad = LIMIT - len("PK") - len(KEY["PK"]["S"]) - len("p") - size
        return self.stores(attributes, pad) and not self.stores(attributes, pad + 1)


# The grid -------------------------------------------------------------------------------------------
def number(digits: str, adjusted: int, negative: bool) -> str:
    """Decimal text of the number with significant ``digits`` (first non-zero), its first digit at
    10**``adjusted``, in scientific notation."""
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{'-' if negative else ''}{mantissa}E{adjusted:+d}"


def patterns(count: int, rng: random.Random) -> list[str]:
    """Digit strings of ``count`` significant digits: all nines, ones around zeros (inner zero
    pairs), random (first and last digit non-zero)."""
    if count == 1:
        return ["9", "1", str(rng.randint(2, 8))]
    inner = "".join(str(rng.randint(0, 9)) for _ in range(count - 2))
    return ["9" * count, "1" + "0" * (count - 2) + "1",
            str(rng.randint(1, 9)) + inner + str(rng.randint(1, 9))]


def grid(*, exponents: Sequence[int] | None = None, kinds: int = 2, seed: int | None = 35) -> Iterator[str]:
    """Every sign x digit count 1-38 x exponent (default: the whole range): the first ``kinds``
    digit patterns of :func:`patterns` each, or (``kinds=1``) one of the three drawn at random."""
    rng = random.Random(seed)
    span = range(MIN_EXPONENT, MAX_EXPONENT + 1) if exponents is None else exponents
    for count in range(1, MAX_DIGITS + 1):
        for adjusted in span:
            for negative in (False, True):
                pats = patterns(count, rng)
                for digits in [rng.choice(pats)] if kinds == 1 else pats[:kinds]:
                    yield number(digits, adjusted, negative)


def representative(seed: int = 35) -> list[str]:
    """About 500 numbers covering every class: each sign x digit count x exponent parity,
    exponents at both ends of the range and around the decimal point (leading and trailing zeros),
    37 and 38 digits at 13 exponents, zero, and the same numbers written in other notations."""
    rng = random.Random(seed)
    out = ["0", "-0", "0.000", "0E+10"]
    for count in range(1, MAX_DIGITS + 1):
        pats = patterns(count, rng)
        ends = (MIN_EXPONENT, MIN_EXPONENT + 1, MAX_EXPONENT - 1, MAX_EXPONENT)
        around = rng.sample(range(-6, 6), 2)
        for adjusted, negative in itertools.product((*ends, *around), (False, True)):
            out.append(number(pats[rng.randrange(3)], adjusted, negative))
    # the longest numbers, where the sign byte goes: 37 and 38 digits at every exponent parity
    for count, adjusted, negative in itertools.product((37, 38), range(-6, 7), (False, True)):
        out.append(number(patterns(count, rng)[rng.randrange(3)], adjusted, negative))
    # one number, many notations: leading zeros, trailing zeros, exponent forms
    out += ["123.4500", "00123.45", "1.2345E+2", "12345E-2", "-0.0001200", "-1.2E-4", "-12E-5", "120000",
            "1.2E+5", "-120000.000", "7E+0", "0.7E1", "70E-1"]
    return out


# The script -----------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, help="write every measurement as CSV")
    parser.add_argument("--check", action="store_true", help="also size a sample by the 400 KB limit")
    parser.add_argument("--exponents", help="a range LO:HI instead of the whole one, e.g. -4:4")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from constructs_lib.runtime.values import number_size
    from constructs_lib.testing.dynamodb_local import TEST_JVM_ARGS, DynamoDBLocal

    exponents = None
    if args.exponents:
        lo, hi = map(int, args.exponents.split(":"))
        exponents = range(lo, hi + 1)
    rows = []
    with DynamoDBLocal(jvm_args=TEST_JVM_ARGS) as server:
        probe = SizeProbe.create(server.client(), "number-sizes")
        for text in itertools.chain(grid(exponents=exponents), representative()):
            measured = probe.size({"N": text})
            rows.append((text, measured, number_size(Decimal(text))))
        if args.check:
            for text, measured, _ in rows[:: max(1, len(rows) // 200)]:
                by_limit = probe.size_by_limit({"N": text})
                assert by_limit == measured, f"{text}: {measured} at 1 KB, {by_limit} at 400 KB"
            print("the 400 KB limit agrees on a sample of", len(rows[:: max(1, len(rows) // 200)]))
    classes: dict[tuple[str, int], set[int]] = defaultdict(set)
    for text, measured, _ in rows:
        dec = Decimal(text)
        if dec:
            sign, digits, exp = dec.normalize(_context()).as_tuple()
            low, high = int(exp), int(exp) + len(digits) - 1
            classes[("-" if sign else "+", high // 2 - low // 2 + 1)].add(measured)
    print("sign  pairs  measured sizes")
    for (sign, pairs), sizes in sorted(classes.items()):
        print(f"{sign:>4}  {pairs:>5}  {sorted(sizes)}")
    wrong = [(t, m, p) for t, m, p in rows if m != p]
    print(f"{len(rows)} numbers, {probe.puts} puts; number_size differs on {len(wrong)}")
    for text, measured, predicted in wrong[:40]:
        print(f"  {text}: DynamoDB Local {measured}, number_size {predicted}")
    if args.out:
        with args.out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["number", "measured", "number_size"])
            writer.writerows(rows)
    return 1 if wrong else 0


def _context() -> Any:
    from decimal import Context

    return Context(prec=MAX_DIGITS + 2)


if __name__ == "__main__":
    raise SystemExit(main())
