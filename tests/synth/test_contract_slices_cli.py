"""The consumer-contract commands: ``contract verify`` (exit 0 / 1 / 2), ``contract slice`` and the
producer's ``diff`` failing with exit 3 on a change that breaks a registered consumer; and the
consumer's pinned contract checked at synth."""

from __future__ import annotations

import copy
import json
import textwrap
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


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A consumer app (``consumer_app.py``: a pending-orders report on the imported shop table,
    pinned to the shop's contract file), the three contract files and a producer app with the changed model."""
    root = tmp_path_factory.mktemp("contracts")
    (root / "contracts").mkdir()
    for name, model in (("shop", shop_model), ("grown", grown_shop()), ("changed", changed_shop())):
        (root / "contracts" / f"{name}.contract.json").write_text(contract_json(build_contract(model)), encoding="utf-8")
    (root / "consumer_app.py").write_text(textwrap.dedent(f"""
        import aws_cdk as cdk
        from constructs_lib import SingleTable, TableFunction

        def build_app():
            app = cdk.App(outdir={str(root / "cdk.out")!r})
            stack = cdk.Stack(app, "Reports")
            shop = SingleTable.from_parameters(stack, "Shop", parameter_prefix="/shop/data",
                                               contract={str(root / "contracts" / "shop.contract.json")!r})
            TableFunction(stack, "Pending", table=shop, entry={str(HANDLER)!r}, patterns=[{PENDING!r}])
            return app
    """), encoding="utf-8")
    (root / "producer_app.py").write_text(textwrap.dedent(f"""
        import aws_cdk as cdk
        from constructs_lib import SingleTable
        from constructs_lib.model import Model

        def build_app():
            app = cdk.App(outdir={str(root / "producer.out")!r})
            stack = cdk.Stack(app, "Shop")
            SingleTable(stack, "Data", model=Model.from_contract({str(root / "contracts" / "changed.contract.json")!r}))
            return app
    """), encoding="utf-8")
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
    # advice to refresh it — not to switch models
    status, out, _ = run(capsys, "contract", "verify", app, "--against", str(project / "contracts/grown.contract.json"))
    assert status == 0, out
    assert "is older than" in out and "what this function uses is unchanged" in out and "refresh the pin" in out
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
    status, out, _ = run(capsys, "diff", str(project / "producer_app.py"), "--consumers", str(consumers),
                         "--lock", str(project / "no.lock.json"))
    # THEN it fails with 3 — though the diff itself classes the change a backfill — naming the
    # consumer and what it breaks
    assert status == 3, out
    assert "[breaking] consumer:reports: this change breaks registered consumer 'reports'" in out
    assert "entity 'Order' changed" in out and "index 'GSI2' changed" in out
    # AND acknowledging it lets the diff pass
    status, out, _ = run(capsys, "diff", str(project / "producer_app.py"), "--consumers", str(consumers),
                         "--lock", str(project / "no.lock.json"), "--acknowledge", "consumer:reports")
    assert status == 0 and "[acknowledged] consumer:reports" in out, out
    # AND a malformed registered slice is a typed error naming the file
    (consumers / "broken.json").write_text(json.dumps({"format": "constructs_lib.slice"}), encoding="utf-8")
    status, _, err = run(capsys, "diff", str(project / "producer_app.py"), "--consumers", str(consumers),
                         "--lock", str(project / "no.lock.json"))
    assert status == 1 and "broken.json" in err and "format_version None" in err, err


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
