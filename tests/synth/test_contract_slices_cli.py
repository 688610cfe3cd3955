"""The consumer-contract commands: ``contract verify`` (exit 0 / 1 / 2), ``contract slice`` and the
producer's ``diff`` failing with exit 3 on a change that breaks a registered consumer; what their
messages say; the consumer's pinned contract checked at synth; and the typed modules a consumer's
functions ship checked by ``verify``. The apps live in a project directory with a ``cdk.json`` and
name their files relative to it, while the commands run from this repository's root."""

from __future__ import annotations

import copy
import json
import shlex
import shutil
from pathlib import Path

import aws_cdk as cdk
import pytest

from constructs_lib import SingleTable, TableFunction
from constructs_lib.__main__ import main
from constructs_lib.constructs.exceptions import ConstructPropsError
from constructs_lib.model import Model
from constructs_lib.model.contract_file import build_contract, contract_json
from constructs_lib.model.slices import published_json, read_slice
from constructs_lib.testing.local_ssm import LocalSsm
from examples.shop.model import shop_model

ROOT = Path(__file__).resolve().parents[2]
HANDLER = ROOT / "examples" / "shop" / "handlers" / "orders_api.py"
PENDING = "pending orders by date"  # Order on GSI2


def changed_shop() -> Model:
    """The shop with Order's GSI2 sort-key template changed (a key change the pending report uses)."""
    data = copy.deepcopy(shop_model.to_dict())
    order = next(e for e in data["entities"] if e["name"] == "Order")
    order["indexes"]["GSI2"]["sk"] = "{order_id}#{created_at}"
    return Model.from_dict(data)


def grown_shop() -> Model:
    """The shop with a new entity, index and pattern (additive)."""
    from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey

    data = copy.deepcopy(shop_model.to_dict())
    data["entities"].append(Entity("Coupon", pk="COUPON#{code}", sk="COUPON", fields={"code": Field(), "kind": Field()},
                                   indexes={"GSI9": IndexKey(pk="KIND#{kind}", sk="COUPON#{code}")}).to_dict())
    data["indexes"].append(Index("GSI9").to_dict())
    data["access_patterns"].append(AccessPattern("coupons by kind", "Coupon", index="GSI9").to_dict())
    return Model.from_dict(data)


def billing_contract() -> str:
    """The shop's contract file under another model name (same shapes, same fingerprints)."""
    data = shop_model.to_dict()
    data["name"] = "billing"
    return contract_json(build_contract(Model.from_dict(data)))


def refunds_shop() -> Model:
    """The shop with a new entity, Refund, writing GSI2 (the index the pending report reads)."""
    from constructs_lib.model import Entity, Field, IndexKey

    data = copy.deepcopy(shop_model.to_dict())
    data["entities"].append(Entity("Refund", pk="REFUND#{refund_id}", sk="REFUND",
                                   fields={"refund_id": Field(), "status": Field.enum("PENDING", "DONE")},
                                   indexes={"GSI2": IndexKey(pk="STATUS#{status}", sk="{refund_id}")}).to_dict())
    return Model.from_dict(data)


CONSUMER_APP = f"""
import aws_cdk as cdk
from constructs_lib import SingleTable, TableFunction
from constructs_lib.model import AccessPattern, Model

# paths relative to the project directory (cdk.json), whatever the working directory
shop_view = Model.from_contract("contracts/shop.contract.json").view(extra_patterns=[
    AccessPattern("pending orders since", entity="Order", index="GSI2", sk=">="),
])


def build_app():
    app = cdk.App()
    stack = cdk.Stack(app, "Reports")
    shop = SingleTable.from_parameters(stack, "Shop", model=shop_view, parameter_prefix="/shop/data",
                                       contract="contracts/shop.contract.json")
    TableFunction(stack, "Pending", table=shop, entry={{entry!r}}, patterns=[{PENDING!r}, "pending orders since"])
    return app
"""
PRODUCER_APP = """
import aws_cdk as cdk
from constructs_lib import SingleTable
from constructs_lib.model import Model


def build_app():
    app = cdk.App()
    SingleTable(cdk.Stack(app, "Shop"), "Data", model=Model.from_contract({contract!r}))
    return app
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CDK project (``cdk.json``): a consumer app (``consumer_app.py``: a pending-orders report on
    the imported shop table, with a view adding a pattern of its own, pinned to the shop's contract
    file), the contract files, and producer apps with the changed and the grown models."""
    root = tmp_path_factory.mktemp("contracts")
    (root / "cdk.json").write_text(json.dumps({"app": "python consumer_app.py"}), encoding="utf-8")
    (root / "contracts").mkdir()
    (root / "handlers").mkdir()
    shutil.copy(HANDLER, root / "handlers" / "orders_api.py")
    for name, model in (("shop", shop_model), ("grown", grown_shop()), ("changed", changed_shop()),
                        ("refunds", refunds_shop())):
        (root / "contracts" / f"{name}.contract.json").write_text(contract_json(build_contract(model)), encoding="utf-8")
    (root / "contracts" / "billing.contract.json").write_text(billing_contract(), encoding="utf-8")
    (root / "consumer_app.py").write_text(CONSUMER_APP.format(entry="handlers/orders_api.py"), encoding="utf-8")
    for name in ("changed", "grown"):
        (root / f"{name}_producer_app.py").write_text(
            PRODUCER_APP.format(contract=f"contracts/{name}.contract.json"), encoding="utf-8")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_verify_exits_0_when_compatible_and_advises_refreshing_a_stale_pin(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = str(project / "consumer_app.py")
    # GIVEN the consumer pinned to the shop's contract WHEN verified against the same contract THEN 0
    status, out, _ = run(capsys, "contract", "verify", app, "--against", str(project / "contracts/shop.contract.json"))
    assert status == 0 and "Reports/Pending: compatible (1 entities, 1 indexes)" in out, out
    assert "older" not in out
    # WHEN verified against the producer's grown contract THEN still 0, and the stale pin gets the
    # advice to refresh it — not to switch models —, named relative to the project
    status, out, _ = run(capsys, "contract", "verify", app, "--against", str(project / "contracts/grown.contract.json"))
    assert status == 0, out
    assert "is older than" in out and "what this function uses is unchanged" in out and "refresh the pin" in out
    assert "  the pinned contract file 'contracts/shop.contract.json' (" in out and "contract contract" not in out
    assert "current model" not in out


def test_verify_exits_1_naming_the_break_with_the_diff_classification(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the producer changed Order's GSI2 template WHEN the consumer verifies THEN 1, naming
    # entity and index, old -> new, and the model diff's classified changes for them
    status, out, _ = run(capsys, "contract", "verify", str(project / "consumer_app.py"), "--against",
                         str(project / "contracts/changed.contract.json"))
    assert status == 1, out
    assert "Reports/Pending: INCOMPATIBLE" in out
    assert "entity 'Order' changed: Order GSI2 sk template: '{created_at}#{order_id}' -> '{order_id}#{created_at}'" in out
    assert "index 'GSI2' changed:" in out
    # (for the producer a backfill; for this consumer a break: its bundled keys are the old ones)
    assert "    [backfill] index-template-changed:Order/GSI2: " in out
    # AND the pattern the consumer's own view declares is not reported as a removal by the producer
    assert "pending orders since" not in out and "pattern-removed" not in out


def test_verify_names_a_new_writer_into_an_index_the_consumer_reads_in_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the producer added an entity Refund writing GSI2, the index the pending report reads
    # WHEN the consumer verifies against that contract
    status, out, _ = run(capsys, "contract", "verify", str(project / "consumer_app.py"), "--against",
                         str(project / "contracts/refunds.contract.json"))
    # THEN 1, naming the new writer with its keys in one line, not leaf by leaf from 'absent'
    assert status == 1, out
    assert "  index 'GSI2' changed: GSI2: entity 'Refund' writes it now (pk 'STATUS#{status}', sk '{refund_id}')\n" in out
    assert "absent" not in out


def test_verify_refuses_another_models_contract_with_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    billing = str(project / "contracts/billing.contract.json")
    # GIVEN the consumer's slice file (model 'shop') and a contract of model 'billing' with the same shapes
    piece = project / "reports-slice.json"
    assert run(capsys, "contract", "slice", str(project / "consumer_app.py"), "-o", str(piece))[0] == 0
    # WHEN the slice file is verified against it THEN 2, naming both models
    status, out, err = run(capsys, "contract", "verify", str(piece), "--against", billing)
    assert (status, out) == (2, ""), out
    assert "is of model 'shop', but contract file" in err and "is of model 'billing'" in err, err
    # AND the app route refuses it the same way, naming the model the app imports
    status, _, err = run(capsys, "contract", "verify", str(project / "consumer_app.py"), "--against", billing)
    assert status == 2 and "imports no table of model 'billing' (it imports model 'shop')" in err, err


def test_verify_exits_2_when_it_cannot_read(project: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    app = str(project / "consumer_app.py")
    # GIVEN no such contract file THEN 2 naming it
    status, _, err = run(capsys, "contract", "verify", app, "--against", str(project / "missing.contract.json"))
    assert status == 2 and "missing.contract.json" in err, err
    # AND a malformed slice file as TARGET
    bad = project / "bad-slice.json"
    bad.write_text("{", encoding="utf-8")
    status, _, err = run(capsys, "contract", "verify", str(bad), "--against", str(project / "contracts/shop.contract.json"))
    assert status == 2 and "bad-slice.json' is not valid JSON" in err, err
    # AND the published parameter: missing -> 2 naming it; present -> read and checked (0)
    with LocalSsm() as ssm:
        monkeypatch.setenv("AWS_ENDPOINT_URL_SSM", ssm.url)
        for name, value in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local"),
                            ("AWS_DEFAULT_REGION", "us-east-1")):
            monkeypatch.setenv(name, value)
        status, _, err = run(capsys, "contract", "verify", app, "--against", "ssm:/shop/data")
        assert status == 2 and "SSM parameter '/shop/data/contract', cannot be read" in err, err
        ssm.parameters["/shop/data/contract"] = published_json(grown_shop())
        status, out, _ = run(capsys, "contract", "verify", app, "--against", "ssm:/shop/data")
        assert status == 0 and "compatible" in out, out


def test_slice_registered_with_the_producer_makes_its_diff_fail_with_3_naming_the_consumer(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    consumers = project / "contracts" / "consumers"
    consumers.mkdir(exist_ok=True)
    # GIVEN the consumer writes its slice
    status, _, err = run(capsys, "contract", "slice", str(project / "consumer_app.py"), "-o",
                         str(consumers / "reports.json"))
    assert status == 0, err
    piece = read_slice(consumers / "reports.json")
    assert (piece.consumer, sorted(piece.entities), sorted(piece.indexes)) == ("reports", ["Order"], ["GSI2"])
    # WHEN the producer, whose model changed Order's GSI2 template, runs diff with the slices registered
    status, out, _ = run(capsys, "diff", str(project / "changed_producer_app.py"), "--lock", str(project / "no.lock.json"))
    # THEN it fails with 3 — though the diff itself classes the change a backfill — naming the
    # consumer (its file relative to the project), what changed old -> new as verify says it, and
    # how to go ahead
    assert status == 3, out
    assert ("[breaking] consumer:reports: this change breaks registered consumer 'reports' "
            "(contracts/consumers/reports.json):") in out
    assert "entity 'Order' changed: Order GSI2 sk template: '{created_at}#{order_id}' -> '{order_id}#{created_at}'" in out
    assert "index 'GSI2' changed: GSI2 Order sk template: '{created_at}#{order_id}' -> '{order_id}#{created_at}'" in out
    assert "go ahead with --acknowledge consumer:reports" in out
    # AND acknowledging it lets the diff pass
    status, out, _ = run(capsys, "diff", str(project / "changed_producer_app.py"), "--lock",
                         str(project / "no.lock.json"), "--acknowledge", "consumer:reports")
    assert status == 0 and "[acknowledged] consumer:reports" in out and "--acknowledge" not in out, out
    # AND a producer change that breaks no one names the registered consumers it checked
    status, out, _ = run(capsys, "diff", str(project / "grown_producer_app.py"), "--lock", str(project / "no.lock.json"))
    assert status == 0, out
    assert "  registered consumers checked, unaffected: 'reports' (contracts/consumers/reports.json)" in out
    # AND with two tables, each is told about the lock, not about the consumer slice named before it
    billing = 'SingleTable(cdk.Stack(app, "Billing"), "Data", model=Model.from_contract("contracts/billing.contract.json"))'
    (project / "two_tables_app.py").write_text(PRODUCER_APP.format(contract="contracts/changed.contract.json").replace(
        "return app", f"{billing}\n    return app"), encoding="utf-8")
    status, out, _ = run(capsys, "diff", str(project / "two_tables_app.py"), "--lock", str(project / "no.lock.json"))
    assert status == 3 and out.count("  no model lock at no.lock.json: run ") == 2, out
    # AND a malformed registered slice is a typed error naming the file
    (consumers / "broken.json").write_text(json.dumps({"format": "constructs_lib.slice"}), encoding="utf-8")
    status, _, err = run(capsys, "diff", str(project / "changed_producer_app.py"), "--lock",
                         str(project / "no.lock.json"))
    (consumers / "broken.json").unlink()
    assert status == 1 and "broken.json" in err and "format_version None" in err, err


def test_diff_names_what_changed_for_a_slice_file_without_schemas_from_the_model_lock(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from constructs_lib.evolution.lock import ModelLock, TableLock

    # GIVEN a registered slice written before slice files held schemas (fingerprints only)
    consumers = tmp_path / "consumers"
    consumers.mkdir()
    assert run(capsys, "contract", "slice", str(project / "consumer_app.py"), "-o", str(consumers / "reports.json"))[0] == 0
    data = json.loads((consumers / "reports.json").read_text(encoding="utf-8"))
    del data["schemas"]
    (consumers / "reports.json").write_text(json.dumps(data), encoding="utf-8")
    app = str(project / "changed_producer_app.py")
    # WHEN the producer's diff has no model lock THEN the break is named by its fingerprints
    status, out, _ = run(capsys, "diff", app, "--consumers", str(consumers), "--lock", str(tmp_path / "no.lock.json"))
    assert status == 3 and "entity 'Order' changed: fingerprint " in out, out
    # WHEN the lock holds the deployed model the slice was built with THEN what changed, old -> new
    ModelLock({"Shop/Data": TableLock.of(shop_model)}).save(tmp_path / "lock.json")
    status, out, _ = run(capsys, "diff", app, "--consumers", str(consumers), "--lock", str(tmp_path / "lock.json"))
    assert status == 3, out
    assert "entity 'Order' changed: Order GSI2 sk template: '{created_at}#{order_id}' -> '{order_id}#{created_at}'" in out
    # AND registered slices of another model only are named as such
    data["model_name"] = "billing"
    (consumers / "reports.json").write_text(json.dumps(data), encoding="utf-8")
    status, out, _ = run(capsys, "diff", app, "--consumers", str(consumers), "--lock", str(tmp_path / "lock.json"))
    assert status == 0 and "no registered consumer of model 'shop' in " in out and "(1 slice file(s) of other models)" in out


TYPED_HANDLER = """
from shop_typed import ShopTable

table = ShopTable.from_environment()


def handler(event, context):
    return {"orders": [o["order_id"] for o in table.pending_orders_since_all(status="PENDING", created_at=event["since"])]}
"""


def test_verify_exits_1_on_a_stale_typed_module_a_function_ships_and_prints_the_command(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a consumer whose function (a handler package) uses the typed module generated from its
    # view of the pinned contract
    root = tmp_path / "reports"
    (root / "pending").mkdir(parents=True)
    shutil.copytree(project / "contracts", root / "contracts", ignore=shutil.ignore_patterns("consumers"))
    shutil.copy(project / "cdk.json", root / "cdk.json")
    (root / "app.py").write_text(CONSUMER_APP.format(entry="pending"), encoding="utf-8")
    (root / "pending" / "index.py").write_text(TYPED_HANDLER, encoding="utf-8")
    app, pin = str(root / "app.py"), str(root / "contracts" / "shop.contract.json")
    assert run(capsys, "codegen", app, "-o", str(root / "pending" / "shop_typed.py"))[0] == 0
    status, out, _ = run(capsys, "contract", "verify", app, "--against", pin)
    assert status == 0 and "pending/shop_typed.py: typed module of model 'shop' is up to date" in out, out
    # WHEN the pin is refreshed with the producer's grown contract (additive: the slice holds), as the
    # docs' refresh step says — copy the new file, verify
    shutil.copy(root / "contracts" / "grown.contract.json", pin)
    status, out, _ = run(capsys, "contract", "verify", app, "--against", pin)
    # THEN verify exits 1, naming the module (relative to the project) and the command regenerating it
    assert status == 1, out
    assert "Reports/Pending: compatible (1 entities, 1 indexes)" in out
    assert "pending/shop_typed.py: STALE typed module of model 'shop': generated from digest " in out
    assert "refuses their client at cold start (ModelMismatchError)" in out
    (command,) = [line.strip() for line in out.splitlines() if line.startswith("    python -m constructs_lib codegen")]
    assert command == f"python -m constructs_lib codegen {app} -o {root / 'pending' / 'shop_typed.py'}"
    # AND running that command makes verify pass again
    assert run(capsys, *shlex.split(command)[3:])[0] == 0
    status, out, _ = run(capsys, "contract", "verify", app, "--against", pin)
    assert status == 0 and "pending/shop_typed.py: typed module of model 'shop' is up to date" in out, out


def test_a_pinned_contract_checks_each_functions_slice_at_synth(tmp_path: Path) -> None:
    # GIVEN a consumer pinned to the changed contract but building with the shop's own model
    pin = tmp_path / "shop.contract.json"
    pin.write_text(contract_json(build_contract(changed_shop())), encoding="utf-8")
    stack = cdk.Stack(cdk.App(), "Pinned")
    table = SingleTable.from_parameters(stack, "Shop", model=shop_model, parameter_prefix="/shop/data", contract=str(pin))
    # WHEN a function reading GSI2 is built THEN synth fails naming the break (no network involved)
    with pytest.raises(ConstructPropsError, match=r"TableFunction 'Pending': what it uses of model 'shop' does not "
                                                  r"hold against the pinned contract .*entity 'Order' changed"):
        TableFunction(stack, "Pending", table=table, entry=HANDLER, patterns=[PENDING])
    # AND a function using none of what changed is built
    TableFunction(stack, "Users", table=table, entry=HANDLER, patterns=["user by email"])
    # AND with no model the pinned contract's model is used; a bad pin is a props error naming the file
    assert SingleTable.from_parameters(stack, "FromPin", parameter_prefix="/shop/data", contract=str(pin)).model == changed_shop()
    with pytest.raises(ConstructPropsError, match=r"contract file '.*nothing.json' does not exist"):
        SingleTable.from_parameters(stack, "Missing", parameter_prefix="/shop/data", contract=str(tmp_path / "nothing.json"))
    with pytest.raises(ConstructPropsError, match=r"give model=... or contract="):
        SingleTable.from_parameters(stack, "Neither", parameter_prefix="/shop/data")


STACK_MODULE = '''
from constructs_lib import SingleTable, TableFunction


def reports(stack, handler):
    shop = SingleTable.from_parameters(stack, "Shop", parameter_prefix="/shop/data",
                                       contract="contracts/changed.contract.json")
    TableFunction(stack, "Pending", table=shop, entry=handler, patterns=["pending orders by date"])
    return shop
'''


def test_a_relative_pin_is_read_from_the_project_of_the_stack_module(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    # GIVEN a stack module in a subdirectory of the project naming its pin relative to the project
    (project / "stacks").mkdir(exist_ok=True)
    (project / "stacks" / "reports_stack.py").write_text(STACK_MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("reports_stack_under_test", project / "stacks" / "reports_stack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # WHEN it builds the import from another working directory
    monkeypatch.chdir(tmp_path)
    shop = module.reports(cdk.Stack(cdk.App(), "Reports"), HANDLER)
    # THEN the pin is the project's file, named relative to the project
    assert shop.model == changed_shop()
    assert shop.pinned_contract.source == "contract file 'contracts/changed.contract.json'"
