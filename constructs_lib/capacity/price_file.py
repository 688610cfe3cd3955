"""Prices as data: the price file format, the shipped ``prices/us-east-1.json`` and its reader.

A price file is JSON: ``format`` ``"constructs_lib.prices"``, ``version`` 1, ``region``,
``currency``, ``taken`` (the date the figures were taken), ``prices`` (each entry: ``usd`` for
``per`` units, ``status`` ``confirmed``/``unconfirmed``, ``source`` URL, ``evidence``), ``rules``
and ``ignored``. Nothing is fetched at run time. See docs/adr/0053-monthly-cost.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .exceptions import PriceFileError
from .jsondoc import Document, JsonSyntaxError, parse

__all__ = ["DEFAULT_PRICES", "FORMAT", "SHIPPED", "PRICE_NAMES", "VERSION", "Price", "Prices", "load_prices"]

FORMAT, VERSION = "constructs_lib.prices", 1
#: The price file shipped with the library.
DEFAULT_PRICES = Path(__file__).resolve().parent / "prices" / "us-east-1.json"
#: How estimates name the shipped file.
SHIPPED = "constructs_lib/capacity/prices/us-east-1.json (shipped)"
#: Every price a file must give, each for one unit (a request unit, a unit-hour, a GB-month ...).
PRICE_NAMES = (
    "on_demand_write_request_unit", "on_demand_read_request_unit", "provisioned_wcu_hour", "provisioned_rcu_hour",
    "storage_gb_month", "storage_gb_month_standard_ia", "streams_read_request_unit", "lambda_request",
    "lambda_gb_second_arm64", "lambda_gb_second_x86_64",
)
_TOP = {"format", "version", "region", "currency", "taken", "note", "prices", "rules", "ignored"}
_ENTRY = {"usd", "per", "status", "source", "evidence"}
_RULES = {"lambda_stream_reads_free"}
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclass(frozen=True)
class Price:
    """One figure: ``usd`` for ``per`` units, whether it was confirmed, and where it is from."""

    name: str
    usd: float
    per: int
    confirmed: bool
    source: str
    evidence: str

    @property
    def unit(self) -> float:
        """US dollars for one unit."""
        return self.usd / self.per


@dataclass(frozen=True)
class Prices:
    """A read price file: every figure of :data:`PRICE_NAMES` and where they came from."""

    path: str
    region: str
    currency: str
    taken: str
    prices: dict[str, Price]
    lambda_stream_reads_free: bool
    ignored: tuple[str, ...]

    def unit(self, name: str) -> float:
        """US dollars for one unit of price ``name``."""
        return self.prices[name].unit

    @property
    def unconfirmed(self) -> list[Price]:
        return [p for p in self.prices.values() if not p.confirmed]


def load_prices(path: str | Path | None = None) -> Prices:
    """Read a price file (default: the shipped us-east-1 one).

    Raises
    ------
    PriceFileError
        Not JSON, another format or version, an unknown or missing key, a bad figure; the
        message names the file and the line.
    """
    file = Path(path) if path is not None else DEFAULT_PRICES
    where = str(file) if path is not None else SHIPPED
    try:
        doc = parse(file.read_text(encoding="utf-8"), where)
    except OSError as exc:
        raise PriceFileError(where, 1, f"cannot read the price file: {exc.strerror or exc}") from None
    except JsonSyntaxError as exc:
        raise PriceFileError(where, exc.line, str(exc).split(": ", 1)[1]) from None
    return _prices(doc)


def _fail(doc: Document, path: tuple[str | int, ...], message: str) -> PriceFileError:
    return PriceFileError(doc.source, doc.line(path), message)


def _object(doc: Document, value: Any, path: tuple[str | int, ...], allowed: set[str], what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(doc, path, f"{what} must be a JSON object, found {value!r}")
    for key in value:
        if key not in allowed:
            raise _fail(doc, (*path, key), f"unknown key {key!r} in {what}; known keys: {sorted(allowed)}")
    return value


def _text(doc: Document, value: Any, path: tuple[str | int, ...], what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(doc, path, f"{what} {value!r} must be a non-empty string")
    return value


def _prices(doc: Document) -> Prices:
    top = _object(doc, doc.value, (), _TOP, "the price file")
    if top.get("format") != FORMAT:
        raise _fail(doc, ("format",), f"format {top.get('format')!r} is not a price file's: expected {FORMAT!r}")
    if top.get("version") != VERSION:
        raise _fail(doc, ("version",), f"price file version {top.get('version')!r} is not supported: this library "
                                       f"reads version {VERSION}")
    for key in ("region", "currency", "taken", "prices"):
        if key not in top:
            raise _fail(doc, (), f"the price file has no {key!r}")
    taken = _text(doc, top["taken"], ("taken",), "taken")
    if not _DATE.fullmatch(taken):
        raise _fail(doc, ("taken",), f"taken {taken!r} must be a date, YYYY-MM-DD")
    entries = _object(doc, top["prices"], ("prices",), set(PRICE_NAMES), "prices")
    prices: dict[str, Price] = {}
    for name in PRICE_NAMES:
        if name not in entries:
            raise _fail(doc, ("prices",), f"price {name!r} is missing; a price file gives all of {list(PRICE_NAMES)}")
        prices[name] = _price(doc, name, entries[name])
    rules = _object(doc, top.get("rules", {}), ("rules",), _RULES, "rules")
    free = True
    if "lambda_stream_reads_free" in rules:
        rule = rules["lambda_stream_reads_free"]
        path: tuple[str | int, ...] = ("rules", "lambda_stream_reads_free")
        rule = _object(doc, rule, path, {"value", "source", "evidence"}, "rule 'lambda_stream_reads_free'")
        if not isinstance(rule.get("value"), bool):
            raise _fail(doc, (*path, "value"), f"value {rule.get('value')!r} must be true or false")
        free = rule["value"]
    ignored = top.get("ignored", [])
    if not isinstance(ignored, list) or not all(isinstance(i, str) for i in ignored):
        raise _fail(doc, ("ignored",), "ignored must be a list of strings (what the figures leave out)")
    return Prices(doc.source, _text(doc, top["region"], ("region",), "region"),
                  _text(doc, top["currency"], ("currency",), "currency"), taken, prices, free, tuple(ignored))


def _price(doc: Document, name: str, value: Any) -> Price:
    path: tuple[str | int, ...] = ("prices", name)
    entry = _object(doc, value, path, _ENTRY, f"price {name!r}")
    for key in ("usd", "per", "status", "source"):
        if key not in entry:
            raise _fail(doc, path, f"price {name!r} has no {key!r}")
    usd, per, status = entry["usd"], entry["per"], entry["status"]
    if isinstance(usd, bool) or not isinstance(usd, (int, float)) or not math.isfinite(usd) or usd < 0:
        raise _fail(doc, (*path, "usd"), f"price {name!r}: usd {usd!r} must be a number, 0 or more")
    if isinstance(per, bool) or not isinstance(per, int) or per < 1:
        raise _fail(doc, (*path, "per"), f"price {name!r}: per {per!r} must be a whole number of units, 1 or more")
    if status not in ("confirmed", "unconfirmed"):
        raise _fail(doc, (*path, "status"), f"price {name!r}: status {status!r} must be 'confirmed' or 'unconfirmed'")
    source = _text(doc, entry["source"], (*path, "source"), f"price {name!r}: source")
    evidence = entry.get("evidence", "")
    if not isinstance(evidence, str):
        raise _fail(doc, (*path, "evidence"), f"price {name!r}: evidence {evidence!r} must be a string")
    return Price(name, float(usd), per, status == "confirmed", source, evidence)
