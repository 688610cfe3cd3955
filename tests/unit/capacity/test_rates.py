"""The rates file: every rule it breaks is a RatesError naming the file, the line and the rule,
checked against the model (unknown pattern, entity, counter, index) where the reader cannot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixed_per_call import FixedPerCall

from constructs_lib.capacity.cli import estimate
from constructs_lib.capacity.cost import CounterSetup, TableSetup
from constructs_lib.capacity.exceptions import CapacityError, RatesError
from constructs_lib.capacity.price_file import load_prices
from constructs_lib.capacity.rates import Settings, load_rates, parse_rates
from examples.shop.model import shop_model

SHOP = Path(__file__).resolve().parents[3] / "examples" / "shop" / "rates.json"
SETUP = TableSetup("ShopStack/Data", shop_model, (CounterSetup("product_views", 120, idempotent=True),),
                   keys=("ShopStack/Data", "shop"))


def _text(table: str) -> str:
    return '{\n  "format": "constructs_lib.rates",\n  "version": 1,\n  "tables": {\n    "shop": ' + table + "\n  }\n}\n"


def test_the_shop_mix_reads() -> None:
    # GIVEN the committed shop mix / WHEN read / THEN rates, defaults and lines are kept
    rates = load_rates(SHOP)
    table = rates.tables["ShopStack/Data"]
    assert rates.settings == Settings(0.7, 40, 80, 12)
    session = next(r for r in table.reads if r.pattern == "session by id")
    assert (session.per_second, session.consistent, session.items) == (120, True, 1)
    assert {(w.entity, w.kind): w.per_second for w in table.writes}[("Order", "transaction_put")] == 2
    assert table.counters[0].counters == 50000
    assert next(s for s in table.storage if s.entity == "Order").in_index == {"GSI2": 0.01}
    assert session.line == next(n for n, line in enumerate(SHOP.read_text().splitlines(), 1) if '"session by id"' in line)


@pytest.mark.parametrize(
    ("table", "line", "message"),
    [
        ('{\n "reads": {\n  "user profile": -3\n }\n}', 7, r"reads/s of pattern 'user profile' -3 must be 0 or more"),
        ('{\n "reads": {\n  "user profile": "lots"\n }\n}', 7, r"'lots' must be a number"),
        ('{\n "reads": {\n  "user profile": {"per_second": 1,\n   "pages": 2}\n }\n}', 8, "unknown key 'pages'"),
        ('{\n "writes": {"Order": {\n  "upsert": 1}}\n}', 7, "unknown key 'upsert' in writes of 'Order'"),
        ('{\n "writes": {"Order": {"put": {"per_second": 1, "item_bytes": 0}}}\n}', 6, "item_bytes 0 must be"),
        ('{\n "counters": {"product_views": {\n  "increments": 5}}\n}', 7, "unknown key 'increments'"),
        ('{\n "storage": {"Order": {"items": 10,\n  "in_index": {"GSI2": 1.5}}}\n}', 7, "must be at most 1"),
        ('{\n "reeds": {}\n}', 6, "unknown key 'reeds' in table 'shop'"),
    ],
)
def test_reader_errors_name_the_line(table: str, line: int, message: str) -> None:
    # GIVEN a rates file breaking one rule / WHEN read / THEN the error names the line and the rule
    with pytest.raises(RatesError, match=message) as caught:
        parse_rates(_text(table), "rates.json")
    assert caught.value.line == line
    assert str(caught.value).startswith(f"rates.json, line {line}: ")


def test_format_version_and_syntax_errors_name_the_line() -> None:
    with pytest.raises(RatesError, match="version 3 is not supported") as caught:
        parse_rates('{\n "format": "constructs_lib.rates",\n "version": 3,\n "tables": {}\n}')
    assert caught.value.line == 3
    with pytest.raises(RatesError, match="not a rates file's") as caught:
        parse_rates('{\n "format": "constructs_lib.prices",\n "version": 1\n}')
    assert caught.value.line == 2
    with pytest.raises(RatesError, match="not JSON") as caught:
        parse_rates('{\n "format": "constructs_lib.rates",\n "version": 1,\n "tables": {"shop": {,}}\n}')
    assert caught.value.line == 4
    with pytest.raises(RatesError, match="target_utilization 1.2 must be at most 1") as caught:
        parse_rates('{"format": "constructs_lib.rates", "version": 1,\n "settings": {\n  "target_utilization": 1.2},'
                    '\n "tables": {"shop": {}}}')
    assert caught.value.line == 3


@pytest.mark.parametrize(
    ("table", "line", "message"),
    [
        ('{\n "reads": {\n  "user profil": 1\n }\n}', 7, "unknown access pattern 'user profil'"),
        ('{\n "writes": {\n  "Orders": {"put": 1}\n }\n}', 7, "unknown entity 'Orders'"),
        ('{\n "storage": {\n  "Basket": 10\n }\n}', 7, "unknown entity 'Basket'"),
        ('{\n "counters": {\n  "page_views": {"increments_per_second": 1}\n }\n}', 7,
         "unknown counter family 'page_views'"),
        ('{\n "storage": {"Order": {"items": 10,\n  "in_index": {\n   "GSI9": 0.5}}}\n}', 8,
         "entity 'Order' has no key in index 'GSI9'"),
        ('{\n "audit": {"changes_per_second": 4}\n}', 6, "has no StreamAudit"),
    ],
)
def test_model_errors_name_the_line(table: str, line: int, message: str) -> None:
    # GIVEN rates naming something the shop table does not have
    rates = parse_rates(_text(table), "rates.json")
    # WHEN priced / THEN the error names the rates file's line
    with pytest.raises(RatesError, match=message) as caught:
        estimate([SETUP], rates, load_prices(), FixedPerCall)
    assert caught.value.line == line


def test_unknown_table_names_the_line_and_the_known_names() -> None:
    rates = parse_rates('{"format": "constructs_lib.rates", "version": 1,\n "tables": {\n  "Shop/Data": {}}}')
    with pytest.raises(RatesError, match=r"'Shop/Data' names no table of the target; name one of \['ShopStack/Data'") \
            as caught:
        estimate([SETUP], rates, load_prices(), FixedPerCall)
    assert caught.value.line == 3 and isinstance(caught.value, CapacityError)


def test_missing_rates_file(tmp_path: Path) -> None:
    with pytest.raises(RatesError, match="cannot read the rates file"):
        load_rates(tmp_path / "none.json")
    path = tmp_path / "rates.json"
    path.write_text(json.dumps({"format": "constructs_lib.rates", "version": 1, "tables": {}}), encoding="utf-8")
    with pytest.raises(RatesError, match="at least one table"):
        load_rates(path)
