"""Handlers written against constructs_lib 0.1.0 run on this version and answer as today's do.

``earlier_handlers/`` holds the IoT example's two handlers as commit cdfa037 wrote them, unchanged:
they import ``expiry`` and ``bucket`` from ``constructs_lib.runtime``, names that left its root
for their modules (``runtime.ttl``, ``runtime.buckets``) and are deprecated there until 1.0.0
(docs/releases.md). Each is bundled as ``TableFunction`` bundles a handler (the bundler follows a
deprecated name to the module it went to) beside today's handler of the same example, both are run
from their assets on tables created from the example's contract, and every reply is compared.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from constructs_lib.assets.bundling import bundle
from constructs_lib.assets.handler_code import resolve_handler_code
from constructs_lib.model.contract_file import build_contract
from constructs_lib.testing import ContractDeployment, LocalFunction
from examples.iot.model import RETENTION, iot_model

pytestmark = pytest.mark.integration

EARLIER = Path(__file__).resolve().parent / "earlier_handlers"
TODAY = Path(__file__).resolve().parents[2] / "examples" / "iot" / "handlers"
HANDLERS = ("iot_ingest", "iot_queries")
NOW = datetime.now(UTC).replace(microsecond=0)


def asset(directory: Path, module: str) -> Path:
    code = resolve_handler_code(entry=directory / f"{module}.py", index=None, function="handler", requirements=None,
                                what=module)
    return bundle(iot_model, code=code, what=module).directory


@pytest.fixture(scope="module")
def assets() -> dict[tuple[str, str], Path]:
    return {(era, module): asset(directory, module) for era, directory in (("earlier", EARLIER), ("today", TODAY))
            for module in HANDLERS}


@pytest.fixture
def functions(assets: dict[tuple[str, str], Path], local_deploy_contract: Callable[..., ContractDeployment],
              dynamodb_local: Any) -> Iterator[dict[str, dict[str, LocalFunction]]]:
    """Each era's two handlers, warm, on a table of its own created from the example's contract."""
    contract = build_contract(iot_model)
    running: dict[str, dict[str, LocalFunction]] = {}
    try:
        for era in ("earlier", "today"):
            table = local_deploy_contract(contract, name_prefix=f"{era}-").name
            env = {"TABLE_NAME": table, "RETENTION_DAYS": str(RETENTION.days)}
            running[era] = {module: LocalFunction(assets[era, module], f"{module}.handler", environment=env,
                                                  endpoint=dynamodb_local.endpoint) for module in HANDLERS}
        yield running
    finally:
        for handlers in running.values():
            for function in handlers.values():
                function.close()


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


EVENTS: list[tuple[str, Any]] = [
    ("iot_ingest", {"readings": [
        *({"sensor_id": "s-1", "ts": iso(NOW - timedelta(minutes=m)), "value": 20 + m / 10} for m in range(0, 90, 7)),
        {"sensor_id": "s-2", "ts": iso(NOW - timedelta(days=3)), "value": 5},
        {"sensor_id": "s-1", "ts": "yesterday", "value": 1},
        {"sensor_id": "s-1", "ts": iso(NOW - RETENTION - timedelta(days=1)), "value": 1},
        {"sensor_id": "", "ts": iso(NOW), "value": 1},
    ]}),
    ("iot_ingest", {"readings": []}),
    ("iot_queries", {"op": "last_hour", "sensor_id": "s-1", "now": iso(NOW)}),
    ("iot_queries", {"op": "readings_between", "sensor_id": "s-1", "start": iso(NOW - timedelta(days=40)),
                     "end": iso(NOW)}),
    ("iot_queries", {"op": "readings_between", "sensor_id": "s-1", "start": iso(NOW), "end": "not a time"}),
    ("iot_queries", {"op": "month", "sensor_id": "s-2", "month": (NOW - timedelta(days=3)).strftime("%Y-%m")}),
    ("iot_queries", {"op": "sensor", "sensor_id": "s-9"}),
    ("iot_queries", {"op": "month", "sensor_id": "s-1"}),
    ("iot_queries", {"op": "nothing"}),
]


def test_handlers_of_0_1_0_answer_as_todays_do(functions: dict[str, dict[str, LocalFunction]]) -> None:
    # GIVEN the handlers of 0.1.0 and today's, each pair on a table of its own
    # WHEN both get the same events: a batch of readings (some refused), then queries
    replies = {era: [functions[era][module].invoke(event).result for module, event in EVENTS] for era in functions}
    # THEN every reply of the earlier handlers is today's: the same readings written and refused,
    # the same TTLs (expiry) and month buckets (bucket), the same errors
    assert replies["earlier"] == replies["today"]
    assert replies["earlier"][0]["written"] == 14 and len(replies["earlier"][0]["rejected"]) == 3
    assert replies["earlier"][3]["buckets"] and replies["earlier"][3]["readings"]


def test_the_earlier_handlers_import_from_their_asset_and_warn_once_per_old_name(
        assets: dict[tuple[str, str], Path]) -> None:
    # GIVEN the earlier handlers' assets, as Lambda would unpack them
    for module, old in (("iot_ingest", "expiry"), ("iot_queries", "bucket")):
        # WHEN the handler module is imported there, twice, with deprecation warnings shown
        done = subprocess.run([sys.executable, "-I", "-W", "always::DeprecationWarning", "-c",
                               f"import sys; sys.path.insert(0, '.'); import {module}; import importlib; "
                               f"importlib.reload({module})"],
                              cwd=assets["earlier", module], capture_output=True, text=True, timeout=60)
        # THEN it imports from the asset alone, and the old name warns once, naming its new import
        assert done.returncode == 0, done.stderr
        warnings = [line for line in done.stderr.splitlines() if "DeprecationWarning" in line]
        assert len(warnings) == 1, done.stderr
        assert f"constructs_lib.runtime.{old} is deprecated since constructs_lib 0.2.0" in warnings[0]
        assert "will be removed in 1.0.0" in warnings[0]
        assert f"{module}.py" in warnings[0]  # attributed to the handler's own import line
