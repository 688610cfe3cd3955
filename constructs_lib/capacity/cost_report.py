"""The cost estimate as Markdown (a table per table, then the assumptions) or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .price_file import Prices
from .pricing import BYTES_PER_GB, HOURS_PER_MONTH, STORAGE_ITEM_OVERHEAD, TableCost, on_demand_monthly
from .rates import Rates

__all__ = ["assumptions", "to_json", "to_markdown"]


def assumptions(prices: Prices, rates: Rates) -> list[str]:
    """What every figure of the estimate rests on."""
    s = rates.settings
    out = [
        f"A month is {HOURS_PER_MONTH} hours; rates are steady averages over it.",
        f"Prices: {prices.path} ({prices.region}, {prices.currency}, taken {prices.taken}).",
        f"Provisioned capacity follows the load through auto-scaling at {s.target_utilization:.0%} target utilization "
        "(consumed ÷ provisioned), whole units, at least 1 per table and per GSI; an LSI's load is its table's.",
        f"Storage: each item and each index entry + {STORAGE_ITEM_OVERHEAD} bytes, a GB = {BYTES_PER_GB:,} bytes, "
        "Standard table class.",
        f"Lambda: the counter aggregator runs {s.aggregator_ms:g} ms and the audit writer {s.audit_ms:g} ms per "
        "invocation (assumed), memory and architecture as deployed.",
        "Stream reads: Lambda polls each stream shard 4 times a second per consumer; "
        + ("not billed for Lambda triggers." if prices.lambda_stream_reads_free else "billed per GetRecords call."),
    ]
    for price in prices.unconfirmed:
        out.append(f"Unconfirmed price {price.name} = {price.usd:g} USD per {price.per:,}: {price.evidence}")
    out.extend(f"Ignored: {item}." for item in prices.ignored)
    out.append("Not modelled: reserved capacity, global tables replication, backups and point-in-time recovery, "
               "data transfer, failed conditional writes, CloudWatch alarms and logs, SQS failure queues.")
    return out


def _usd(value: float) -> str:
    return f"{value:,.2f}"


def _units(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value else "0"


def to_markdown(costs: Sequence[TableCost], prices: Prices, rates: Rates) -> str:
    """A Markdown page: per table the totals both ways, throughput per table and index, the
    components, storage, other charges and notes; then the assumptions."""
    out = ["# Monthly cost estimate", ""]
    for cost in costs:
        out += [f"## {cost.name}", "",
                f"| | on-demand | provisioned, auto-scaling at {cost.target_utilization:.0%} |", "| --- | ---: | ---: |",
                f"| **total $/month** | **{_usd(cost.on_demand_usd)}** | **{_usd(cost.provisioned_usd)}** |", "",
                f"Cheaper: **{cost.cheaper}**. Provisioned costs less once its capacity is on average more than "
                f"{cost.break_even:.1%} used.", "",
                "| table / index | WCU/s | RCU/s | provisioned WCU | provisioned RCU | on-demand $/month | "
                "provisioned $/month |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        out += [f"| {r.where} | {_units(r.wcu)} | {_units(r.rcu)} | {r.provisioned_wcu:g} | {r.provisioned_rcu:g} | "
                f"{_usd(r.on_demand_usd)} | {_usd(r.provisioned_usd)} |" for r in cost.capacity]
        out += ["", "| component | table / index | WCU/s | RCU/s | on-demand $/month |", "| --- | --- | ---: | ---: | ---: |"]
        w, r = prices.unit("on_demand_write_request_unit"), prices.unit("on_demand_read_request_unit")
        out += [f"| {x.component} | {x.where} | {_units(x.wcu)} | {_units(x.rcu)} | "
                f"{_usd(on_demand_monthly(x.wcu, w) + on_demand_monthly(x.rcu, r))} |" for x in cost.lines]
        if cost.stored:
            out += ["", "| stored | table / index | items | bytes each | GB | $/month |",
                    "| --- | --- | ---: | ---: | ---: | ---: |"]
            gb_price = prices.unit("storage_gb_month")
            out += [f"| {s.component} | {s.where} | {s.items:,.0f} | {s.entry_bytes:,.0f} + {STORAGE_ITEM_OVERHEAD} | "
                    f"{s.bytes / BYTES_PER_GB:,.2f} | {_usd(s.bytes / BYTES_PER_GB * gb_price)} |" for s in cost.stored]
        if cost.charges:
            out += ["", "| also charged (both modes) | quantity | $/month |", "| --- | --- | ---: |"]
            out += [f"| {c.component} | {c.quantity} | {_usd(c.usd)} |" for c in cost.charges]
        if cost.notes:
            out += [""] + [f"- {note}" for note in cost.notes]
        out.append("")
    out += ["## Assumptions", ""] + [f"- {a}" for a in assumptions(prices, rates)] + [""]
    return "\n".join(out)


def _table(cost: TableCost) -> dict[str, Any]:
    return {
        "name": cost.name,
        "on_demand_usd": round(cost.on_demand_usd, 6),
        "provisioned_usd": round(cost.provisioned_usd, 6),
        "cheaper": cost.cheaper,
        "target_utilization": cost.target_utilization,
        "break_even_utilization": round(cost.break_even, 6),
        "capacity": [{"where": r.where, "wcu_per_second": r.wcu, "rcu_per_second": r.rcu,
                      "provisioned_wcu": r.provisioned_wcu, "provisioned_rcu": r.provisioned_rcu,
                      "on_demand_usd": round(r.on_demand_usd, 6), "provisioned_usd": round(r.provisioned_usd, 6)}
                     for r in cost.capacity],
        "components": [{"component": x.component, "where": x.where, "wcu_per_second": x.wcu, "rcu_per_second": x.rcu}
                       for x in cost.lines],
        "storage_usd": round(cost.storage_usd, 6),
        "stored": [{"component": s.component, "where": s.where, "items": s.items, "entry_bytes": s.entry_bytes,
                    "billed_bytes": s.bytes} for s in cost.stored],
        "charges": [{"component": c.component, "quantity": c.quantity, "usd": round(c.usd, 6)} for c in cost.charges],
        "notes": list(cost.notes),
    }


def to_json(costs: Sequence[TableCost], prices: Prices, rates: Rates) -> str:
    """The estimate as JSON (``tables`` and ``assumptions``)."""
    return json.dumps({"format": "constructs_lib.cost", "version": 1, "hours_per_month": HOURS_PER_MONTH,
                       "prices": {"path": prices.path, "region": prices.region, "taken": prices.taken},
                       "tables": [_table(c) for c in costs], "assumptions": assumptions(prices, rates)},
                      indent=2) + "\n"
