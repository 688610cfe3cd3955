"""Run a backfill job against DynamoDB Local from a test, and measure what it wrote.

:func:`run_backfill` runs a job in this process (threads, one per segment);
:class:`CapacityTrace` wraps a client and records the capacity every call consumed, with the
time the call started, so a test can check the write budget over any sliding second
(:func:`max_window_wcu`). ``python -m constructs_lib.testing.backfill`` runs a job in a process
a test can kill, writing such a trace line by line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from constructs_lib.runtime.patterns.backfill import BackfillSpec, run_job

if TYPE_CHECKING:
    from botocore.client import BaseClient

WRITES = frozenset({"update_item", "put_item", "delete_item", "batch_write_item"})


class CapacityTrace:
    """A client proxy recording ``(start time, operation, consumed capacity units)`` of each call.

    ``path``: also append each record to this file as a JSON line (flushed at once, so a killed
    process leaves a complete trace). Times are ``time.monotonic()``, comparable across processes.
    """

    def __init__(self, client: Any, path: str | Path | None = None) -> None:
        self._client = client
        self.records: list[tuple[float, str, float]] = []
        self._file = open(path, "a", encoding="utf-8") if path is not None else None  # noqa: SIM115
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method) or name.startswith("_"):
            return method

        def call(**params: Any) -> Any:
            started = time.monotonic()
            try:
                resp = method(**params)
            except Exception as exc:  # a failed condition consumes capacity too: record it
                consumed = _consumed(getattr(exc, "response", {}) or {}) if name in WRITES else 0.0
                self._record(started, name, consumed, failed=True)
                raise
            self._record(started, name, _consumed(resp), failed=False)
            return resp

        return call

    def _record(self, started: float, name: str, consumed: float, *, failed: bool) -> None:
        if name in WRITES and failed and consumed == 0.0:
            consumed = -1.0  # unknown: DynamoDB reports no capacity on a failed condition
        with self._lock:
            self.records.append((started, name, consumed))
            if self._file is not None:
                self._file.write(json.dumps([started, name, consumed]) + "\n")
                self._file.flush()

    def writes(self) -> list[tuple[float, float]]:
        return [(t, c) for t, n, c in self.records if n in WRITES]


def _consumed(resp: Any) -> float:
    cap = resp.get("ConsumedCapacity") if isinstance(resp, dict) else None
    if isinstance(cap, list):
        return float(sum(c.get("CapacityUnits", 0) for c in cap))
    return float(cap.get("CapacityUnits", 0)) if cap else 0.0


def read_trace(path: str | Path) -> list[tuple[float, str, float]]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            t, n, c = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        out.append((float(t), str(n), float(c)))
    return out


def max_window_wcu(writes: Iterable[tuple[float, float]], *, window: float = 1.0, unknown: float = 0.0) -> float:
    """The most write capacity any sliding ``window`` of seconds holds (``unknown`` counts for
    a write whose consumption was not reported)."""
    events = sorted((t, unknown if c < 0 else c) for t, c in writes)
    best = total = 0.0
    start = 0
    for t, c in events:
        total += c
        while events[start][0] <= t - window:
            total -= events[start][1]
            start += 1
        best = max(best, total)
    return best


def run_backfill(
    client: Any, table_name: str, model: Any, *, spec: BackfillSpec | None = None, trace: CapacityTrace | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any]:
    """Run (or resume) a backfill job in this process; returns its report (see
    :func:`constructs_lib.runtime.patterns.backfill.progress`)."""
    spec = spec or BackfillSpec()
    # A CapacityTrace forwards every operation to the client it wraps: it is a client to run_job.
    sender: BaseClient = client if trace is None else cast("BaseClient", trace)
    return run_job(sender, table_name, model, spec, stop=stop)


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    obj = getattr(importlib.import_module(module), attr or "model")
    return obj() if callable(obj) else obj


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m constructs_lib.testing.backfill")
    parser.add_argument("--endpoint-url", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--model", required=True, help="module:attribute of a Model (or a function returning one)")
    parser.add_argument("--spec", required=True, help="BackfillSpec JSON")
    parser.add_argument("--trace", help="append (time, operation, consumed WCU) JSON lines to this file")
    args = parser.parse_args(argv)
    client = _client(args)
    trace = CapacityTrace(client, args.trace) if args.trace else None
    report = run_backfill(client, args.table, _load(args.model), spec=BackfillSpec.from_json(args.spec), trace=trace)
    print(json.dumps(report, default=str))
    return 0


def _client(args: argparse.Namespace) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client("dynamodb", endpoint_url=args.endpoint_url, region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"mode": "standard", "max_attempts": 3}))


if __name__ == "__main__":
    raise SystemExit(main())
