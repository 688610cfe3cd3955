"""Key building and parsing, pure CPU: the runtime's codec vs f-strings and ``str.split``.

One figure per direction (see ``benchmarks/README.md``), on the shop model's ``Order`` key
(``PK = USER#{user_id}``, ``SK = ORDER#{created_at}#{order_id}``):

* **build** — ``TableClient.keys("Order", ...)`` (and the lower-level ``keys.build`` of both
  templates) vs ``f"USER#{u}"`` / ``f"ORDER#{created_at:%Y-%m-%dT%H:%M:%S.%fZ}#{o}"``, which
  build the very same strings for these values;
* **parse** — ``TableClient.parse_keys(item)`` (and ``keys.parse``) vs ``str.split("#")``.

No goal: the ratio says what the codec's guarantees (escaping, typed values, validation)
cost per key against the cheapest possible code, which has none of them.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks._harness import Context, Row, Section, Stats, interleave, log
from constructs_lib.runtime import TableClient, keys

NAME = "keys"
TITLE = "Key building and parsing (pure CPU)"
NEEDS_DYNAMODB = False

ENTITY = "Order"
POOL = 1000


@dataclass(frozen=True)
class Plan:
    """Rounds and key operations per timed block."""

    rounds: int
    ops: int

    @classmethod
    def for_context(cls, ctx: Context) -> Plan:
        return cls(3, 1000) if ctx.quick else cls(15, 5000)


def _values(n: int) -> list[dict[str, Any]]:
    """*n* Order key values: user ids, millisecond timestamps, ULID-shaped order ids (seeded)."""
    rng = random.Random(11)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    return [
        {
            "user_id": f"u{rng.randrange(100_000):06d}",
            "created_at": start + timedelta(milliseconds=rng.randrange(300 * 86_400_000)),
            "order_id": "".join(rng.choice(alphabet) for _ in range(26)),
        }
        for _ in range(n)
    ]


def _ratio_rows(figure: str, t: Any, base: str, names: list[str]) -> list[Row]:
    rows = [Row.measured(figure, base, "keys/s", t.rate(base), baseline=True)]
    rows += [Row.measured(figure, n, "keys/s", t.rate(n), ratios=t.rate_ratio(n),
                          goal="none (the cost of escaping, typing and validation)") for n in names]
    return rows


def run(ctx: Context) -> Section:
    """Time key building and parsing, interleaved against f-strings and str.split."""
    from examples.shop.model import shop_model

    plan = Plan.for_context(ctx)
    table = TableClient(shop_model, "bench-keys", client=object())  # type: ignore[arg-type]  # no call is made
    entity = table.entity(ENTITY)
    pool = _values(POOL)
    built = [table.keys(ENTITY, **v) for v in pool]
    items = [{**k, shop_model.entity_attribute: ENTITY} for k in built]

    # Sanity: the f-strings build exactly the library's keys for these values (no escaping needed).
    def fstring(v: dict[str, Any]) -> tuple[str, str]:
        return f"USER#{v['user_id']}", f"ORDER#{v['created_at']:%Y-%m-%dT%H:%M:%S.%fZ}#{v['order_id']}"

    same_keys = all(fstring(v) == (k["PK"], k["SK"]) for v, k in zip(pool, built, strict=True))
    parsed_ok = all(table.parse_keys(i) == (ENTITY, v) for i, v in zip(items, pool, strict=True))

    nxt = itertools.cycle(range(POOL)).__next__
    build_variants: dict[str, Callable[[], object]] = {
        "f-strings": lambda: fstring(pool[nxt()]),
        "TableClient.keys": lambda: table.keys(ENTITY, **pool[nxt()]),
        "keys.build (both templates)": lambda: (
            keys.build(entity, entity.pk_template, v := pool[nxt()]), keys.build(entity, entity.sk_template, v)),  # type: ignore[arg-type]
    }

    def split(item: dict[str, str]) -> tuple[str, str, str]:
        _, user = item["PK"].split("#")
        _, created, order = item["SK"].split("#")
        return user, created, order

    parse_variants: dict[str, Callable[[], object]] = {
        "str.split": lambda: split(items[nxt()]),
        "TableClient.parse_keys": lambda: table.parse_keys(items[nxt()]),
        "keys.parse (both templates)": lambda: (
            keys.parse(entity, entity.pk_template, (i := items[nxt()])["PK"]),
            keys.parse(entity, entity.sk_template, i["SK"])),  # type: ignore[arg-type]
    }
    log(f"keys: build and parse, {plan.rounds} rounds x {plan.ops} keys x 3 variants each")
    tb = interleave(build_variants, baseline="f-strings", rounds=plan.rounds, ops=plan.ops)
    tp = interleave(parse_variants, baseline="str.split", rounds=plan.rounds, ops=plan.ops)
    rows = _ratio_rows("Order key (PK + SK) built from values", tb, "f-strings", list(build_variants)[1:])
    rows += _ratio_rows("Order key (PK + SK) parsed back into values", tp, "str.split", list(parse_variants)[1:])
    lib_build = Stats.of([1e6 / r for r in tb.rate("TableClient.keys")]).median
    lib_parse = Stats.of([1e6 / r for r in tp.rate("TableClient.parse_keys")]).median
    notes = [
        (f"Inputs: {POOL:,} seeded Order key values (user id, a timezone-aware datetime with milliseconds, a "
         f"26-character order id), cycled; {plan.rounds} interleaved rounds × {plan.ops:,} keys per variant after "
         f"one untimed block each; one process, no I/O (the TableClient's boto3 client is never called). "
         f"Per key pair: TableClient.keys {lib_build:.1f} µs, TableClient.parse_keys {lib_parse:.1f} µs (medians)."),
        ("What the baseline skips: the f-strings neither escape values (a `#` in a user id would forge a separator) "
         "nor check types, zero-pad numbers or normalize timestamps to UTC; `str.split` returns text, where "
         "`parse_keys` checks every literal, unescapes and decodes the timestamp into a datetime. The runtime "
         "builds a request's keys once, so its per-key cost (microseconds) stays far below a DynamoDB round trip "
         "(milliseconds)."),
        (f"Sanity checks: the f-strings build exactly the library's keys for all {POOL:,} values: "
         f"{'yes' if same_keys else '**no**'}; parse_keys returns the original values for all of them: "
         f"{'yes' if parsed_ok else '**no**'}."),
    ]
    return Section(
        name=NAME,
        title=TITLE,
        summary=(
            "Pure-CPU cost of the runtime's key codec on the shop model's Order key (`USER#{user_id}` / "
            "`ORDER#{created_at}#{order_id}`) against hand-written f-strings and `str.split`, keys per second on one "
            "thread, interleaved."
        ),
        rows=rows,
        notes=notes,
        meta={"plan": plan.__dict__, "us_per_key": {"build": round(lib_build, 2), "parse": round(lib_parse, 2)}},
    )
