"""Deeply nested JSON in the cost estimate's inputs: the rates file, the price file and a traffic
recording each refuse more than ``MAX_JSON_DEPTH`` nested arrays and objects with their typed
error naming the file, the line and the limit (a ``RecursionError`` before), and take a file
nested exactly to the limit on to their usual checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.capacity.exceptions import PriceFileError, RatesError, RecordingError
from constructs_lib.capacity.price_file import DEFAULT_PRICES, load_prices
from constructs_lib.capacity.rates import load_rates, parse_rates
from constructs_lib.capacity.recording import load_recording
from constructs_lib.model.jsontext import MAX_JSON_DEPTH
from constructs_lib.runtime.stats import TrafficRecorder, snapshot_to_dict
from examples.shop.model import shop_model

LIMIT = MAX_JSON_DEPTH
SHOP_RATES = Path(__file__).resolve().parents[3] / "examples" / "shop" / "rates.json"


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def with_extra(document: dict[str, Any], total: int) -> str:
    """``document`` as indented JSON with an extra key that makes it nest ``total`` levels (on line 2)."""
    return json.dumps({"extra": "@", **document}, indent=1).replace('"@"', nested(total - 1))


def _snapshot() -> dict[str, Any]:
    return snapshot_to_dict(TrafficRecorder(1.0, model=shop_model, table_name="shop",
                                            clock=iter([0.0, 10.0]).__next__).snapshot())


def _file(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


#: name -> (read a file nesting ``total`` levels, its typed error, how the message starts)
READERS: dict[str, tuple[Callable[[int, Path], Any], type[Exception], str]] = {
    "rates file": (lambda total, tmp: load_rates(_file(tmp, "rates.json", with_extra(
        json.loads(SHOP_RATES.read_text(encoding="utf-8")), total))), RatesError, r".*rates\.json, line 2: "),
    "rates text": (lambda total, _: parse_rates(with_extra(json.loads(SHOP_RATES.read_text(encoding="utf-8")), total),
                                                "mix"), RatesError, r"mix, line 2: "),
    "price file": (lambda total, tmp: load_prices(_file(tmp, "prices.json", with_extra(
        json.loads(DEFAULT_PRICES.read_text(encoding="utf-8")), total))), PriceFileError, r".*prices\.json, line 2: "),
    "recording": (lambda total, tmp: load_recording(_file(tmp, "traffic.json", with_extra(_snapshot(), total))),
                  RecordingError, r"recording .*traffic\.json: its JSON "),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_input_nested_to_the_limit_goes_on_to_its_usual_checks(reader: str, tmp_path: Path) -> None:
    # GIVEN a valid file with an extra key nesting it exactly MAX_JSON_DEPTH levels WHEN read
    read, error, _ = READERS[reader]
    try:
        read(LIMIT, tmp_path)
    except error as exc:  # THEN it is read, or refused for the unknown key, never for how deep it is
        assert "levels deep" not in str(exc) and "extra" in str(exc)


def test_a_recording_nested_to_the_limit_is_priced(tmp_path: Path) -> None:
    # GIVEN a recording whose extra key nests exactly to the limit WHEN read THEN its rates (a snapshot ignores the key)
    rates, unattributed = load_recording(_file(tmp_path, "traffic.json", with_extra(_snapshot(), LIMIT)))
    assert list(rates.tables) == ["shop"] and unattributed == []


@pytest.mark.parametrize("levels", [LIMIT + 1, 4096])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_input_refuses_deeper_nesting_naming_the_file_line_and_limit(reader: str, levels: int,
                                                                         tmp_path: Path) -> None:
    # GIVEN one level past the limit, or 4 KB of nested arrays
    read, error, starts = READERS[reader]
    # WHEN read THEN the input's typed error names the file, the line (or place) and the limit
    with pytest.raises(error, match=rf"^{starts}.*more than {LIMIT} levels deep.*at most {LIMIT} levels are read"):
        read(levels, tmp_path)
