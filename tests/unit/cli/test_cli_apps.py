"""``python -m constructs_lib`` on CDK apps whose tables are imported (a consumer repository) or
partly owned and partly imported, run as the command line in subprocesses.

Each app-building command runs once per module, all but one in a single interpreter (jsii costs
~3 s a process); the tests read the recorded runs. The unit test process itself never imports the AWS CDK.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_runs import Run, run_in_one_process

from constructs_lib.codegen import generate
from constructs_lib.runtime.contract import fingerprint
from examples.reporting.consumer_model import shop_view
from examples.shop.model import shop_model
from examples.shop.stack import CONTRACT_PREFIX

REPO = Path(__file__).resolve().parents[3]
#: The reporting example's consumer app: ShopReportingStack alone, owning no table.
CONSUMER = "examples/reporting/app.py:build_consumer_app"
#: The showcase app: ShopStack owns the shop table, ShopReportingStack imports it.
MIXED = "app.py"
SHOP = fingerprint(shop_model)


def _cli(*args: str) -> Run:
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    done = subprocess.run([sys.executable, "-m", "constructs_lib", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    return Run(done.returncode, done.stdout, done.stderr)


EMPTY_APP = """
import aws_cdk as cdk

app = cdk.App(outdir={outdir!r})
cdk.Stack(app, "Lonely")
cdk.Stack(app, "Empty")
"""

#: An owned table with two functions that declare no scope: one granted read_write (the
#: default), one granted nothing by the construct (access=None).
COARSE_APP = """
import aws_cdk as cdk
from constructs_lib import SingleTable, TableFunction
from examples.reporting.consumer_model import shop_view
from examples.shop.model import shop_model

app = cdk.App(outdir={outdir!r})
stack = cdk.Stack(app, "Coarse")
data = SingleTable(stack, "Data", model=shop_model)
TableFunction(stack, "Everything", table=data, entry={handler!r})
TableFunction(stack, "Nothing", table=data, entry={handler!r}, access=None)
"""

@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    scratch = tmp_path_factory.mktemp("cli-apps")
    empty, coarse, handler = scratch / "empty_app.py", scratch / "coarse_app.py", scratch / "handler.py"
    empty.write_text(textwrap.dedent(EMPTY_APP.format(outdir=str(scratch / "out"))), encoding="utf-8")
    handler.write_text("def handler(event, context):\n    return None\n", encoding="utf-8")
    coarse.write_text(textwrap.dedent(COARSE_APP.format(outdir=str(scratch / "out"), handler=str(handler))),
                      encoding="utf-8")
    # One command through `python -m constructs_lib` itself; the others share one interpreter
    # (one jsii start instead of one each): main() as the command line runs it, once per case.
    out = {"consumer describe": _cli("describe", CONSUMER)}
    cases = {"consumer fingerprint": ["fingerprint", CONSUMER], "consumer codegen": ["codegen", CONSUMER],
             "mixed describe": ["describe", MIXED], "mixed fingerprint": ["fingerprint", MIXED],
             "mixed codegen": ["codegen", MIXED],
             "no table": ["describe", str(empty)], "coarse": ["describe", str(coarse)],
             "lock consumer": ["lock", "--lock", str(scratch / "lock.json"), CONSUMER]}
    return {**out, **run_in_one_process(cases, cwd=REPO)}


# --------------------------------------------------------------------------- a consumer owning no table


def test_describe_a_consumer_app_names_the_imported_table_and_its_contract(runs: dict[str, Run]) -> None:
    # WHEN the consumer app (its only table imported with from_parameters) is described
    run = runs["consumer describe"]
    # THEN it succeeds and documents the imported table, saying it is imported and from where
    assert run.code == 0, run.err
    assert run.out.startswith("# ShopReportingStack/Shop — data model `shop` (imported)\n")
    assert "imported" in run.out.split("## Entities")[0]
    assert f"SSM parameters under `{CONTRACT_PREFIX}`" in run.out
    # (the reporting example pins the shop's committed contract file; its functions check it at cold start)
    assert "pinned (`contract=`): the contract file 'examples/reporting/contracts/shop.contract.json', " \
           f"fingerprint {SHOP}" in run.out
    assert f"`{CONTRACT_PREFIX}/contract`) at cold start" in run.out
    assert f"model fingerprint `{SHOP}`" in run.out
    # AND the model itself is described as for an owned table
    assert "## Access patterns" in run.out and "| pending orders by date | Order | GSI GSI2 |" in run.out
    # AND the reporting team's own pattern, from its view of the shop's contract file, is marked
    assert "| pending orders since *(consumer)* | Order | GSI GSI2 |" in run.out


def test_describe_a_consumer_app_lists_each_function_with_its_slice(runs: dict[str, Run]) -> None:
    # WHEN the consumer app is described
    text = runs["consumer describe"].out
    # THEN its one function is listed with the patterns it may run, what it writes, the indexes it
    # queries, the entities of its slice and the IAM statement derived from its scope
    row = next(line for line in text.splitlines() if line.startswith("| `ShopReportingStack/PendingOrdersReport` |"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells == ["`ShopReportingStack/PendingOrdersReport`", "`pending orders by date`, `pending orders since`",
                     "none", "GSI2", "reads `Order`; writes nothing", "Query on GSI2 for STATUS#*"]
    assert text.count("## Functions and their slices") == 1


def test_fingerprint_of_a_consumer_app_marks_the_table_imported(runs: dict[str, Run]) -> None:
    run = runs["consumer fingerprint"]
    assert run.code == 0, run.err
    assert run.out == f"{SHOP}  ShopReportingStack/Shop — data model `shop` (imported)\n"


def test_codegen_of_a_consumer_app_generates_the_imported_model(runs: dict[str, Run]) -> None:
    run = runs["consumer codegen"]
    assert run.code == 0, run.err
    # (the reporting team's view of the shop's contract file: the shop's model and its own pattern)
    assert run.out == generate(shop_view, target=CONSUMER)


# --------------------------------------------------------------------------- owned and imported in one app


def test_describe_a_mixed_app_documents_owned_and_imported_tables(runs: dict[str, Run]) -> None:
    # WHEN the showcase app (ShopStack owns the shop table, ShopReportingStack imports it) is described
    run = runs["mixed describe"]
    assert run.code == 0, run.err
    docs = {doc.split("\n", 1)[0]: doc for doc in run.out.split("\n---\n\n")}
    # THEN every table is documented once, the imported one marked so
    assert list(docs) == [
        "# ShopStack/Data — data model `shop`", "# SaasStack/Docs — data model `saas`",
        "# IotTelemetryStack/Data — data model `iot`", "# ViralVideoStack/Data — data model `viral`",
        "# ShopReportingStack/Shop — data model `shop` (imported)", "# StoreStack/Data — data model `store`",
        "# GlobalDocsStack/Data — data model `globaldocs`",
    ]
    owned, imported = docs["# ShopStack/Data — data model `shop`"], docs[
        "# ShopReportingStack/Shop — data model `shop` (imported)"]
    assert "**owned** by this app" in owned and f"publishes its contract under SSM prefix `{CONTRACT_PREFIX}`" in owned
    assert "imported" in imported.split("## Entities")[0] and CONTRACT_PREFIX in imported
    # AND each table lists the functions built on it: the shop's API on the owned table, the report
    # on the imported one (not the other way round)
    assert "`ShopStack/OrdersApi`" in owned and "PendingOrdersReport" not in owned
    assert "`ShopReportingStack/PendingOrdersReport`" in imported and "OrdersApi" not in imported
    api = next(line for line in owned.splitlines() if line.startswith("| `ShopStack/OrdersApi` |"))
    cells = [c.strip() for c in api.strip("|").split(" | ")]
    assert cells[1] == ("`user's orders newest first`, `order by id`, `items of an order`, "
                        "`orders by status newest first`")
    assert cells[2] == "`Order`: update, transaction_put<br>`OrderItem`: transaction_put"
    assert cells[3] == "table, GSI1, GSI3"
    assert cells[4] == "reads `Order`, `OrderItem`; writes `Order`, `OrderItem`"
    assert "Query on GSI3 for STATUS#*#*" in cells[5]


def test_describe_says_when_a_function_declares_no_scope(runs: dict[str, Run]) -> None:
    # WHEN an app whose functions declare no scope is described
    run = runs["coarse"]
    assert run.code == 0, run.err
    rows = {line.split(" | ")[0]: line for line in run.out.splitlines() if line.startswith("| `Coarse/")}
    # THEN each is said to use every entity and every index of the model, with the grant it got
    assert set(rows) == {"| `Coarse/Everything`", "| `Coarse/Nothing`"}
    entities = ", ".join(f"`{name}`" for name in shop_model.entities)
    for row in rows.values():
        assert "no declared scope" in row and f"every entity of the model: {entities}" in row
        assert "table, " + ", ".join(shop_model.indexes) in row
    assert "read_write: " in rows["| `Coarse/Everything`"] and "PutItem" in rows["| `Coarse/Everything`"]
    assert "none by the function (access=None)" in rows["| `Coarse/Nothing`"]


def test_fingerprint_of_a_mixed_app_prints_owned_and_imported(runs: dict[str, Run]) -> None:
    run = runs["mixed fingerprint"]
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert f"{SHOP}  ShopStack/Data — data model `shop`" in lines
    assert f"{SHOP}  ShopReportingStack/Shop — data model `shop` (imported)" in lines
    assert len(lines) == 7


def test_codegen_of_an_app_with_several_models_exits_2_naming_them(runs: dict[str, Run]) -> None:
    run = runs["mixed codegen"]
    assert run.code == 2 and run.out == ""
    # the shop's own model and the reporting team's view of it (one more access pattern, so other
    # generated methods) are two: seven models
    assert "holds 7 data models" in run.err and "ShopStack/Data" in run.err and "saas" in run.err
    assert "ShopReportingStack/Shop — data model `shop` (imported)" in run.err


# --------------------------------------------------------------------------- errors


def test_an_app_with_no_table_exits_2_with_a_clear_message(runs: dict[str, Run]) -> None:
    run = runs["no table"]
    assert run.code == 2
    assert "holds no table" in run.err and "Lonely, Empty" in run.err
    assert "from_parameters" in run.err  # says an imported table would count


def test_lock_on_a_consumer_app_says_imported_tables_are_locked_by_their_owner(runs: dict[str, Run]) -> None:
    run = runs["lock consumer"]
    assert run.code == 2
    assert "ShopReportingStack/Shop" in run.err and "owner" in run.err


def test_a_model_module_is_still_searched_without_the_aws_cdk() -> None:
    # WHEN a model module is described, fingerprinted and generated in a fresh interpreter
    script = ("import sys, contextlib, io\nfrom constructs_lib.__main__ import main\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    codes = [main([c, 'examples.shop.model']) for c in ('describe', 'fingerprint', 'codegen')]\n"
              "print(codes, sorted(m for m in ('aws_cdk', 'jsii', 'constructs') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    # THEN every command succeeds and none of them loaded the AWS CDK
    assert done.stdout.strip() == "[0, 0, 0] []"
