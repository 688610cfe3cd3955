"""Deeply nested JSON given to the command line: each command exits with the status its other bad
files get and one line naming the file and the limit, never a ``RecursionError`` traceback.

All command lines run by ``main()`` in one fresh interpreter (``cli_runs``), which fails the test
if any exception escapes; model targets only, so the AWS CDK is never loaded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runs import Run, run_in_one_process

from constructs_lib.model.jsontext import MAX_JSON_DEPTH
from constructs_lib.model.slices import slice_of
from examples.shop.model import shop_model

REPO = Path(__file__).resolve().parents[3]
CONTRACT = "examples/reporting/contracts/shop.contract.json"
LIMIT = MAX_JSON_DEPTH
NESTING = rf"nests? arrays and objects more than {LIMIT} levels deep"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    scratch = tmp_path_factory.mktemp("deep-json")
    deep = scratch / "deep.json"  # 4 KB of nested arrays inside an object
    deep.write_text('{"format": ' + "[" * 2048 + "]" * 2048 + "}", encoding="utf-8")
    orders = scratch / "orders.json"
    orders.write_text(slice_of(shop_model, consumer="orders").to_json(), encoding="utf-8")
    limit = scratch / "limit.contract.json"  # the producer's contract with an extra key nested to the limit
    document = json.loads((REPO / CONTRACT).read_text(encoding="utf-8"))
    limit.write_text(json.dumps({**document, "x": "@"}).replace('"@"', "[" * (LIMIT - 1) + "]" * (LIMIT - 1)),
                     encoding="utf-8")
    cases = {
        "verify against": ["contract", "verify", str(orders), "--against", str(deep)],
        "verify a slice": ["contract", "verify", str(deep), "--against", CONTRACT],
        "verify at the limit": ["contract", "verify", str(orders), "--against", str(limit)],
        "describe": ["describe", str(deep)],
        "cost rates": ["cost", "examples/shop/model.py", "--rates", str(deep)],
        "cost recording": ["cost", "examples/shop/model.py", "--recording", str(deep)],
    }
    return run_in_one_process(cases, cwd=REPO)


@pytest.mark.parametrize(("case", "names"), [("verify against", "contract file '.*deep.json'"),
                                             ("verify a slice", "slice file '.*deep.json'")])
def test_contract_verify_exits_2_naming_the_file_and_the_limit(runs: dict[str, Run], case: str, names: str) -> None:
    # GIVEN a contract or slice file of 4 KB of nested arrays WHEN verified THEN exit 2, one line naming it
    run = runs[case]
    assert run.code == 2, run.err
    assert run.err.count("\n") == 1 and "Traceback" not in run.err
    assert re.search(rf"contract: {names} {NESTING}", run.err), run.err


def test_contract_verify_reads_a_contract_nested_to_the_limit(runs: dict[str, Run]) -> None:
    # GIVEN the producer's contract with an extra key nested exactly to the limit
    # WHEN the orders slice is verified against it THEN it is compatible, as against the contract itself
    run = runs["verify at the limit"]
    assert run.code == 0, run.err


def test_describe_a_deep_contract_file_exits_1_as_for_any_bad_contract(runs: dict[str, Run]) -> None:
    # GIVEN the deep file as a describe target WHEN described THEN exit 1 (a contract error), naming it
    run = runs["describe"]
    assert run.code == 1 and "Traceback" not in run.err
    assert "model error in target" in run.err and "deep.json' nests arrays and objects" in run.err


@pytest.mark.parametrize(("case", "names"), [("cost rates", "deep.json, line 1: "),
                                             ("cost recording", "recording .*deep.json: its JSON ")])
def test_cost_exits_1_naming_the_file_and_the_limit(runs: dict[str, Run], case: str, names: str) -> None:
    # GIVEN the deep file as rates or as a recording WHEN priced THEN exit 1 like any bad rates file, one line
    run = runs[case]
    assert run.code == 1 and run.err.count("\n") == 1 and "Traceback" not in run.err
    assert re.search(rf"cost: .*{names}.*more than {LIMIT} levels deep", run.err), run.err
