"""``python -m constructs_lib cost TARGET (--rates FILE | --recording FILE [--table NAME]) [--prices FILE] ...``.

The command line loads TARGET's tables (``__main__``'s loader), reads what is deployed around
each (``ShardedCounter``, ``StreamAudit``, the stream) from the construct tree by their public
attributes — this package never imports the CDK — and prints the estimate. The traffic mix is a
rates file, a traffic recording (a snapshot file), or both: the file overrides and extends the recording.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..runtime.environment import ENV_COUNTER_PREFIX
from ..runtime.patterns.counter.spec import CounterSpec
from .cost import AuditSetup, CounterSetup, PerCall, TableSetup, as_recompute, estimate_table, table_keys
from .cost_report import to_json, to_markdown
from .exceptions import CapacityInputError, RatesError
from .per_call import EstimatePerCall
from .price_file import load_prices
from .pricing import TableCost
from .rates import Rates, load_rates
from .recording import load_recording, merge_rates, unattributed_note

__all__ = ["add_command", "estimate", "setups_from"]

#: ``(title, model, view, table construct or None)`` per table, as ``__main__._load`` returns them.
Loader = Callable[[str], list[tuple[Any, Any, Any, Any]]]


def add_command(commands: Any, *, load_tables: Loader) -> None:
    """Register ``cost`` on the command line's subparsers."""
    cost = commands.add_parser(
        "cost", help="monthly cost of the tables in TARGET for a traffic mix (on-demand vs provisioned)",
        description="Estimate each table's monthly cost from its model, what is deployed around it and the rates "
                    "in --rates and/or a traffic recording (--recording): on-demand and provisioned (auto-scaling), "
                    "per table and index, storage, streams and the patterns' Lambda functions. Prices: the shipped "
                    "us-east-1 file or --prices.",
    )
    cost.add_argument("target", metavar="TARGET", help="app (app.py) or model module, optionally :attribute")
    cost.add_argument("--rates", metavar="FILE", help="the traffic mix (rates JSON; docs/cost.md); with "
                      "--recording it overrides and extends the recorded rates")
    cost.add_argument("--recording", metavar="FILE", help="a traffic snapshot (runtime.stats.write_snapshot) "
                      "whose recorded reads and writes are the traffic mix")
    cost.add_argument("--table", metavar="NAME", help="the table of TARGET the recording is of (model name or "
                      "construct path; default: the recorded model's name)")
    cost.add_argument("--prices", metavar="FILE", help="a price file (default: the shipped us-east-1 prices)")
    cost.add_argument("--counter-layout", choices=["deployed", "recompute"], default="deployed",
                      help="price counter families as deployed (default), or every one in the recompute layout "
                           "(totals recomputed from every shard, transactional idempotent increments): the "
                           "baseline the stream layout is compared with")
    cost.add_argument("--format", choices=["markdown", "json"], default="markdown", help="output (default markdown)")
    cost.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")

    def run(args: argparse.Namespace) -> str:
        if args.rates is None and args.recording is None:
            raise CapacityInputError("cost needs --rates FILE, --recording FILE, or both")
        if args.table is not None and args.recording is None:
            raise CapacityInputError(f"--table {args.table!r} names the table of a recording: give --recording FILE")
        setups = setups_from(load_tables(args.target))
        if args.counter_layout == "recompute":
            setups = [as_recompute(s) for s in setups]
        notes: dict[str, list[str]] = {}
        if args.recording is not None:
            rates, unattributed = load_recording(args.recording, args.table)
            note = unattributed_note(unattributed)
            if note is not None:
                notes[next(iter(rates.tables))] = [note]
            if args.rates is not None:
                rates = merge_rates(rates, load_rates(args.rates))
        else:
            rates = load_rates(args.rates)
        prices = load_prices(args.prices)
        costs = estimate(setups, rates, prices, EstimatePerCall, notes)
        return (to_json if args.format == "json" else to_markdown)(costs, prices, rates)

    cost.set_defaults(run=run)


def estimate(setups: Sequence[TableSetup], rates: Rates, prices: Any,
             per_call: Callable[[Any], PerCall] = EstimatePerCall,
             notes: Mapping[str, Sequence[str]] | None = None) -> list[TableCost]:
    """Price every table the rates name (:class:`RatesError` for a name matching no table, or
    several). A table without rates is left out of the estimate and named in its notes;
    ``notes`` (rates table name -> notes) are added to that table's."""
    out: list[TableCost] = []
    for key, table in rates.tables.items():
        matches = [s for s in setups if key in table_keys(s)]
        if len(matches) != 1:
            known = sorted({k for s in setups for k in table_keys(s)})
            what = "no table" if not matches else f"{len(matches)} tables"
            raise rates.fail_at(table.line, f"{key!r} names {what} of the target; name one of {known}")
        costs = estimate_table(matches[0], rates, table, prices, per_call(matches[0].model))
        extra = tuple((notes or {}).get(key, ()))
        if extra and costs:
            first = costs[0]
            costs = [TableCost(first.name, first.lines, first.capacity, first.stored, first.storage_usd, first.charges,
                               first.target_utilization, first.break_even, (*first.notes, *extra)), *costs[1:]]
        out.extend(costs)
    unpriced = [s.title for s in setups if not any(k in rates.tables for k in table_keys(s))]
    if unpriced and out:
        first = out[0]
        out[0] = TableCost(first.name, first.lines, first.capacity, first.stored, first.storage_usd, first.charges,
                           first.target_utilization, first.break_even,
                           (*first.notes, f"not priced (no rates given): {', '.join(unpriced)}"))
    if not out:  # pragma: no cover - a rates file names at least one table
        raise RatesError(rates.source, 1, "the rates name no table")
    return out


def setups_from(found: Sequence[tuple[Any, Any, Any, Any]]) -> list[TableSetup]:
    """A :class:`TableSetup` per loaded table: counters and audit found in its construct tree."""
    setups = []
    for title, model, _view, table in found:
        if table is None:
            setups.append(TableSetup(title or model.name, model, keys=(model.name,)))
            continue
        everything = list(table.node.root.node.find_all())
        counters = tuple(_counter(c) for c in everything
                         if getattr(c, "table", None) is table and hasattr(c, "aggregator_function"))
        audits = [_audit(c) for c in everything if getattr(c, "source", None) is table and hasattr(c, "audit_function")]
        keys = (table.node.path, table.node.id, model.name, title or model.name)
        setups.append(TableSetup(table.node.path, model, counters, audits[0] if audits else None,
                                 getattr(table, "table_stream_arn", None) is not None, keys))
    return setups


def _consumer(c: Any) -> dict[str, Any]:
    props = c.props
    window = props.max_batching_window
    architecture = getattr(getattr(c.function, "architecture", None), "name", "arm64")
    return {"batch_size": props.batch_size, "window_seconds": float(window.to_seconds()) if window is not None else 1.0,
            "memory_mb": props.memory_size, "architecture": architecture}


def _counter(c: Any) -> CounterSetup:
    """The family as its aggregator runs it: the spec JSON in the aggregator's synthesized
    environment (``CONSTRUCTS_LIB_COUNTER_<FAMILY>``), the mapping's settings."""
    variable = ENV_COUNTER_PREFIX + str(c.family).upper()
    spec = CounterSpec.from_json(_environment(c.aggregator_function).get(variable) or c.environment[variable])
    return CounterSetup.from_spec(spec, **_consumer(c), stream=getattr(c, "event_source_mapping", None) is not None)


def _environment(function: Any) -> dict[str, Any]:
    """A Lambda function's environment variables as its stack synthesizes them ({} when the
    construct does not expose its resource)."""
    resource = getattr(function.node, "default_child", None)
    properties = getattr(resource, "_cfn_properties", None)  # CfnResource's cfnProperties (protected)
    if properties is None:
        return {}
    resolved = function.stack.resolve(properties)
    return dict(((resolved or {}).get("environment") or {}).get("variables") or {})


def _audit(c: Any) -> AuditSetup:
    retention = c.spec.retention_seconds
    return AuditSetup(**_consumer(c), retention_days=None if retention is None else retention / 86400,
                      include_entities=tuple(getattr(c, "include_entities", ())),
                      exclude_entities=tuple(getattr(c, "exclude_entities", ())))
