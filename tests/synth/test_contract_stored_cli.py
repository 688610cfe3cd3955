"""A TTL rename reaches the consumers that store the entity or read whole items of it (ADR 0042):
``contract verify`` exits 1 and the producer's ``diff`` exits 3 naming the old and the new
attribute, for a consumer app whose function puts sessions; its function reading order keys
from a KEYS_ONLY index stays compatible."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

import pytest

from constructs_lib.__main__ import main
from constructs_lib.evolution.lock import ModelLock, TableLock
from constructs_lib.model import Model
from constructs_lib.model.contract_file import build_contract, contract_json
from constructs_lib.model.slices import read_slice
from examples.shop.model import shop_model

ROOT = Path(__file__).resolve().parents[2]
HANDLER = ROOT / "examples" / "shop" / "handlers" / "orders_api.py"
RENAMED = "how items of entity 'Session' are stored changed: Session TTL attribute: 'expires_at' -> 'ttl_epoch'"


def renamed_shop() -> Model:
    """The shop with its TTL attribute renamed (keys untouched)."""
    data = copy.deepcopy(shop_model.to_dict())
    data["ttl_attribute"] = "ttl_epoch"
    return Model.from_dict(data)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A consumer app with a function putting sessions and one reading pending orders' keys (pinned
    to the shop's contract), the renamed contract, a producer app with the renamed model and a lock
    of the shop."""
    root = tmp_path_factory.mktemp("writes")
    (root / "contracts").mkdir()
    for name, model in (("shop", shop_model), ("renamed", renamed_shop())):
        (root / "contracts" / f"{name}.contract.json").write_text(contract_json(build_contract(model)), encoding="utf-8")
    (root / "consumer_app.py").write_text(textwrap.dedent(f"""
        import aws_cdk as cdk
        from constructs_lib import SingleTable, TableFunction

        def build_app():
            app = cdk.App(outdir={str(root / "cdk.out")!r})
            stack = cdk.Stack(app, "Sessions")
            shop = SingleTable.from_parameters(stack, "Shop", parameter_prefix="/shop/data",
                                               contract={str(root / "contracts" / "shop.contract.json")!r})
            TableFunction(stack, "Login", table=shop, entry={str(HANDLER)!r}, writes={{"Session": ["put"]}})
            TableFunction(stack, "Pending", table=shop, entry={str(HANDLER)!r}, patterns=["pending orders by date"])
            return app
    """), encoding="utf-8")
    (root / "producer_app.py").write_text(textwrap.dedent(f"""
        import aws_cdk as cdk
        from constructs_lib import SingleTable
        from constructs_lib.model import Model

        def build_app():
            app = cdk.App(outdir={str(root / "producer.out")!r})
            stack = cdk.Stack(app, "Shop")
            SingleTable(stack, "Data", model=Model.from_contract({str(root / "contracts" / "renamed.contract.json")!r}))
            return app
    """), encoding="utf-8")
    ModelLock({"Shop/Data": TableLock.of(shop_model)}).save(root / "constructs_lib.lock.json")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_verify_refuses_the_writer_naming_both_attributes_and_passes_the_keys_reader(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the producer renamed its TTL attribute WHEN the consumer app is verified against the new contract
    status, out, _ = run(capsys, "contract", "verify", str(project / "consumer_app.py"), "--against",
                         str(project / "contracts" / "renamed.contract.json"))
    # THEN 1: the function putting sessions is incompatible, naming old and new; the keys reader is not
    assert status == 1, out
    assert "Sessions/Login: INCOMPATIBLE" in out and f"  {RENAMED}" in out
    assert "Sessions/Pending: compatible (1 entities, 1 indexes)" in out


def test_the_producers_diff_fails_naming_the_registered_writer_and_both_attributes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    consumers = project / "contracts" / "consumers"
    consumers.mkdir(exist_ok=True)
    # GIVEN the consumer registered its slice with the producer (it holds how Session items are stored)
    status, _, err = run(capsys, "contract", "slice", str(project / "consumer_app.py"), "-o",
                         str(consumers / "sessions.json"))
    assert status == 0, err
    assert list(read_slice(consumers / "sessions.json").stored) == ["Session"]
    # WHEN the producer, whose model renames the TTL attribute, runs diff against its lock
    status, out, _ = run(capsys, "diff", str(project / "producer_app.py"), "--consumers", str(consumers),
                         "--lock", str(project / "constructs_lib.lock.json"))
    # THEN 3, naming the consumer and the attributes, old -> new
    assert status == 3, out
    assert "[breaking] consumer:sessions: this change breaks registered consumer 'sessions'" in out
    assert f"    {RENAMED}" in out
