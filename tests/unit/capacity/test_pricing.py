"""The pricing core and the price file: hand-computed monthly figures, and the price file's
errors naming the line (730 hours a month; the shipped us-east-1 prices)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from constructs_lib.capacity import CapacityInputError
from constructs_lib.capacity.exceptions import CapacityError, PriceFileError
from constructs_lib.capacity.price_file import DEFAULT_PRICES, load_prices
from constructs_lib.capacity.pricing import (
    Charge,
    Line,
    Stored,
    break_even_utilization,
    lambda_monthly,
    on_demand_monthly,
    price_table,
    provisioned_monthly,
    provisioned_units,
    storage_monthly,
)

PRICES = load_prices()


def test_shipped_prices_are_the_us_east_1_figures() -> None:
    # GIVEN the shipped file / WHEN read / THEN each figure is per one unit, with provenance
    assert PRICES.region == "us-east-1" and PRICES.taken == "2026-11-26"
    assert PRICES.unit("on_demand_write_request_unit") == pytest.approx(0.625e-6)
    assert PRICES.unit("on_demand_read_request_unit") == pytest.approx(0.125e-6)
    assert PRICES.unit("provisioned_wcu_hour") == 0.00065
    assert PRICES.unit("streams_read_request_unit") == pytest.approx(0.02 / 100_000)
    assert {p.name for p in PRICES.unconfirmed} == {"storage_gb_month_standard_ia", "streams_read_request_unit"}
    assert PRICES.lambda_stream_reads_free is True
    assert all(p.source.startswith("https://") for p in PRICES.prices.values())


def test_on_demand_hand_computed() -> None:
    # GIVEN 100 WCU/s and 1,000 RCU/s all month (730 h = 2,628,000 s)
    # THEN 100 x 2,628,000 x $0.625/M = $164.25 and 1,000 x 2,628,000 x $0.125/M = $328.50
    assert on_demand_monthly(100, PRICES.unit("on_demand_write_request_unit")) == pytest.approx(164.25)
    assert on_demand_monthly(1000, PRICES.unit("on_demand_read_request_unit")) == pytest.approx(328.5)


def test_provisioned_hand_computed() -> None:
    # GIVEN 100 WCU/s consumed at 70 % target utilization: ceil(142.86) = 143 WCU provisioned
    assert provisioned_units(100, 0.7) == 143
    assert provisioned_units(100, 0.7, rounded=False) == pytest.approx(142.857142857)
    assert provisioned_units(0, 0.7) == 1  # a table or GSI always holds at least one unit
    assert provisioned_units(70, 0.7) == 100  # exact: no spurious extra unit from 70 / 0.7 = 100.00000000000001
    # THEN 143 x 730 h x $0.00065 = $67.8535
    assert provisioned_monthly(143, PRICES.unit("provisioned_wcu_hour")) == pytest.approx(67.8535)


def test_storage_hand_computed() -> None:
    # GIVEN 1,000,000 items of 924 bytes: + 100 bytes overhead each = 1,024,000,000 bytes = 0.9537 GB
    stored = Stored("User", "table", 1_000_000, 924)
    assert stored.bytes == 1_024_000_000
    # THEN x $0.25 per GB-month
    assert storage_monthly(stored.bytes, PRICES.unit("storage_gb_month")) == pytest.approx(0.2384185791015625)


def test_lambda_hand_computed() -> None:
    # GIVEN 10 invocations/s of 50 ms at 256 MB on Arm: 26,280,000 calls, 328,500 GB-s
    requests, compute = lambda_monthly(10, 50, 256, PRICES)
    assert requests == pytest.approx(26_280_000 * 0.20 / 1e6)  # $5.256
    assert compute == pytest.approx(328_500 * 0.0000133334)  # $4.38
    _, x86 = lambda_monthly(10, 50, 256, PRICES, architecture="x86_64")
    assert x86 == pytest.approx(328_500 * 0.0000166667)


def test_break_even_utilization_hand_computed() -> None:
    # $0.00065 per WCU-hour vs 3,600 x $0.625/M per hour of one WCU/s on demand = 0.2889
    assert break_even_utilization(0.00065, 0.625e-6) == pytest.approx(0.00065 / 0.00225)
    assert break_even_utilization(0.00013, 0.125e-6) == pytest.approx(0.00013 / 0.00045)


def test_price_table_puts_lsi_load_on_the_table_and_provisions_each_gsi() -> None:
    # GIVEN 10 WCU/s on the table, 5 on GSI1, 2 RCU/s on an LSI, nothing on GSI2, a Lambda charge
    cost = price_table(
        "shop", [Line("a", "table", wcu=10), Line("b", "GSI1", wcu=5), Line("c", "LSI1", rcu=2)], PRICES,
        indexes=["GSI1", "GSI2"], local_indexes=["LSI1"], stored=[Stored("User", "table", 1000, 924)],
        charges=[Charge("aggregator", "1/s", 1.5)],
    )
    # THEN the LSI's reads are the table's, GSI2 still holds 1 WCU + 1 RCU provisioned
    rows = {r.where: r for r in cost.capacity}
    assert (rows["table"].wcu, rows["table"].rcu) == (10, 2)
    assert (rows["table"].provisioned_wcu, rows["table"].provisioned_rcu) == (15, 3)
    assert (rows["GSI2"].provisioned_wcu, rows["GSI2"].provisioned_rcu, rows["GSI2"].on_demand_usd) == (1, 1, 0)
    w, r = 2_628_000 * 0.625e-6, 2_628_000 * 0.125e-6
    assert rows["table"].on_demand_usd == pytest.approx(10 * w + 2 * r)
    assert rows["GSI1"].provisioned_usd == pytest.approx(730 * (8 * 0.00065 + 1 * 0.00013))
    storage = 1000 * 1024 / 1024**3 * 0.25
    assert cost.on_demand_usd == pytest.approx(15 * w + 2 * r + storage + 1.5)
    assert cost.provisioned_usd == pytest.approx(730 * (0.00065 * (15 + 8 + 1) + 0.00013 * (3 + 1 + 1)) + storage + 1.5)
    # $25.29 + storage on demand vs $11.86 + storage provisioned (a steady load, 70 % utilized)
    assert cost.cheaper == "provisioned"


def test_price_table_refuses_a_line_on_an_unknown_index() -> None:
    with pytest.raises(CapacityInputError, match="'GSI9'"):
        price_table("shop", [Line("a", "GSI9", wcu=1)], PRICES, indexes=["GSI1"])


@pytest.mark.parametrize(("value", "rule"), [(-1, "0 or more"), (float("nan"), "finite"), (True, "finite")])
def test_negative_or_non_numeric_rates_are_refused(value: float, rule: str) -> None:
    with pytest.raises(CapacityInputError, match=rule):
        on_demand_monthly(value, 1e-6)


@pytest.mark.parametrize("target", [0, 1.5, -0.1])
def test_target_utilization_must_be_in_0_1(target: float) -> None:
    with pytest.raises(CapacityInputError, match=r"\(0, 1\]"):
        provisioned_units(10, target)


# The price file's errors name the file and the line ------------------------------------------
def _variant(tmp_path: Path, edit: str, replacement: str) -> Path:
    text = DEFAULT_PRICES.read_text(encoding="utf-8")
    assert edit in text
    path = tmp_path / "prices.json"
    path.write_text(text.replace(edit, replacement, 1), encoding="utf-8")
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("edit", "replacement", "needle", "message"),
    [
        ('"format": "constructs_lib.prices"', '"format": "aws.pricing"', '"format"', "is not a price file's"),
        ('"version": 1', '"version": 2', '"version"', "version 2 is not supported"),
        ('"usd": 0.625', '"usd": -0.625', '"usd": -0.625', "must be a number, 0 or more"),
        ('"usd": 0.125', '"usd": "0.125"', '"usd": "0.125"', "must be a number, 0 or more"),
        ('"per": 1000000,\n      "status": "confirmed",\n      "source": "https://aws.amazon.com/lambda',
         '"per": 1000000,\n      "status": "maybe",\n      "source": "https://aws.amazon.com/lambda',
         '"maybe"', "'confirmed' or 'unconfirmed'"),
        ('"region": "us-east-1"', '"regoin": "us-east-1"', '"regoin"', "unknown key 'regoin'"),
        ('"taken": "2026-11-26"', '"taken": "last week"', '"taken"', "YYYY-MM-DD"),
        ('"lambda_request": {', '"lambda_requests": {', '"lambda_requests"', "unknown key 'lambda_requests'"),
        ('"version": 1,', '"version": 1,,', '"version"', "not JSON"),
    ],
)
def test_price_file_errors_name_the_line(tmp_path: Path, edit: str, replacement: str, needle: str,
                                         message: str) -> None:
    # GIVEN the shipped file with one thing broken
    path = _variant(tmp_path, edit, replacement)
    # WHEN it is read / THEN a PriceFileError names the file, the line and the rule
    with pytest.raises(PriceFileError, match=message) as caught:
        load_prices(path)
    assert caught.value.line == _line_of(path, needle)
    assert str(caught.value).startswith(f"{path}, line {caught.value.line}: ")
    assert isinstance(caught.value, CapacityError)


def test_price_file_missing_price_names_the_prices_line(tmp_path: Path) -> None:
    data = json.loads(DEFAULT_PRICES.read_text(encoding="utf-8"))
    del data["prices"]["lambda_gb_second_arm64"]
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(PriceFileError, match="'lambda_gb_second_arm64' is missing") as caught:
        load_prices(path)
    assert caught.value.line == _line_of(path, '"prices"')


def test_missing_price_file_is_a_price_file_error(tmp_path: Path) -> None:
    with pytest.raises(PriceFileError, match="cannot read the price file"):
        load_prices(tmp_path / "nowhere.json")
