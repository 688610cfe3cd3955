"""Synth-time model docs: every SingleTable writes ``<stack>.<id>.model.md`` and
``.workbench.json`` into the cloud assembly; the CLI describes apps without synthesizing them."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import aws_cdk as cdk
from constructs import Construct

from constructs_lib import SingleTable
from constructs_lib.__main__ import load_models
from constructs_lib.docgen.cloud_assembly import doc_basename
from constructs_lib.docgen.describe import describe
from constructs_lib.model import Model
from examples.saas.model import saas_model
from examples.shop.model import shop_model


def _docs(outdir: Path) -> list[str]:
    return sorted(p.name for p in outdir.iterdir() if p.name.endswith((".model.md", ".workbench.json")))


def test_synth_writes_markdown_and_workbench_next_to_the_template(tmp_path: Path) -> None:
    # GIVEN an app with one SingleTable
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Orders")
    SingleTable(stack, "Data", model=shop_model)
    # WHEN the app synthesizes (nobody calls anything else)
    app.synth()
    # THEN the describe output and a Workbench model sit beside the stack's template
    assert (tmp_path / "Orders.template.json").is_file()
    assert _docs(tmp_path) == ["Orders.Data.model.md", "Orders.Data.workbench.json"]
    markdown = (tmp_path / "Orders.Data.model.md").read_text(encoding="utf-8")
    assert markdown == describe(shop_model, title="Orders/Data — data model `shop`")
    workbench = json.loads((tmp_path / "Orders.Data.workbench.json").read_text(encoding="utf-8"))
    assert workbench["ModelName"] == "shop"
    assert [t["TableName"] for t in workbench["DataModel"]] == ["Orders.Data"]


def test_stack_name_is_used_and_every_table_has_its_own_files(tmp_path: Path) -> None:
    # GIVEN two stacks, one with an explicit stack name, and two tables in one stack
    app = cdk.App(outdir=str(tmp_path))
    named = cdk.Stack(app, "Internal", stack_name="shop-prod")
    SingleTable(named, "Data", model=shop_model)
    other = cdk.Stack(app, "Saas")
    SingleTable(other, "Docs", model=saas_model)
    SingleTable(other, "Shop", model=shop_model)
    # WHEN synthesized
    app.synth()
    # THEN files are named after the stack name and each construct id
    assert _docs(tmp_path) == [
        "Saas.Docs.model.md", "Saas.Docs.workbench.json", "Saas.Shop.model.md", "Saas.Shop.workbench.json",
        "shop-prod.Data.model.md", "shop-prod.Data.workbench.json",
    ]
    assert "data model `saas`" in (tmp_path / "Saas.Docs.model.md").read_text(encoding="utf-8")


def test_same_file_twice_in_one_synth_is_written_once_by_the_first_table(tmp_path: Path) -> None:
    # GIVEN two tables with the same construct id in one stack, at different paths
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Dup")
    SingleTable(stack, "Data", model=shop_model)  # Dup/Data
    SingleTable(cdk.Stack(app, "Other"), "Data", model=saas_model)  # another stack: its own files
    second = SingleTable(Construct(stack, "Nested"), "Data", model=saas_model)  # Dup/Nested/Data
    assert doc_basename(second) == "Dup.Data"
    # WHEN synthesized
    app.synth()
    # THEN no error; Dup.Data.* is the first table's (shop), written once
    assert _docs(tmp_path) == ["Dup.Data.model.md", "Dup.Data.workbench.json",
                               "Other.Data.model.md", "Other.Data.workbench.json"]
    assert (tmp_path / "Dup.Data.model.md").read_text(encoding="utf-8").startswith("# Dup/Data — data model `shop`")
    # and one contract file per model name, whichever table of that model comes first
    assert sorted(p.name for p in tmp_path.glob("*.contract.json")) == ["saas.contract.json", "shop.contract.json"]


def test_nested_stage_writes_into_its_own_assembly(tmp_path: Path) -> None:
    # GIVEN a table in a stack of a nested stage
    app = cdk.App(outdir=str(tmp_path))
    stage = cdk.Stage(app, "Prod")
    SingleTable(cdk.Stack(stage, "Shop"), "Data", model=shop_model)
    # WHEN the app synthesizes
    app.synth()
    # THEN the docs are in the stage's assembly directory, not the app's
    stage_dir = Path(stage.outdir)
    assert stage_dir != tmp_path and stage_dir.parent == tmp_path
    assert _docs(stage_dir) == ["Prod-Shop.Data.model.md", "Prod-Shop.Data.workbench.json"]
    assert _docs(tmp_path) == []


def test_showcase_app_synth_has_docs_for_both_tables(shop) -> None:  # type: ignore[no-untyped-def]
    # GIVEN app.py synthesized once for the session
    outdir: Path = shop.outdir
    # THEN both SingleTables wrote their docs
    assert {"ShopStack.Data.model.md", "ShopStack.Data.workbench.json",
            "SaasStack.Docs.model.md", "SaasStack.Docs.workbench.json"} <= set(_docs(outdir))
    shop_doc = (outdir / "ShopStack.Data.model.md").read_text(encoding="utf-8")
    assert shop_doc.startswith("# ShopStack/Data — data model `shop`")
    assert "```mermaid" in shop_doc


# --------------------------------------------------------------------------- CLI on apps


def test_cli_describes_every_table_of_an_app_built_by_build_app() -> None:
    # WHEN app.py (which defines build_app()) is loaded as a describe target
    pairs = load_models("app.py")
    # THEN each SingleTable of its construct tree is found under its construct path
    titles = [title for title, _ in pairs]
    assert titles[:2] == ["ShopStack/Data — data model `shop`", "SaasStack/Docs — data model `saas`"]
    assert all(re.fullmatch(r"\w+/\w+ — data model `\w+`", t) for t in titles)
    assert len(set(titles)) == len(titles)
    assert all(isinstance(m, Model) for _, m in pairs)
    assert pairs[0][1] == shop_model


def test_cli_never_synthesizes_an_app_that_synthesizes_on_import(tmp_path: Path) -> None:
    # GIVEN an app file that builds a cdk.App and calls synth() at module level
    outdir = tmp_path / "out"
    app_file = tmp_path / "eager_app.py"
    app_file.write_text(textwrap.dedent(f"""
        import aws_cdk as cdk
        from constructs_lib import SingleTable
        from examples.shop.model import shop_model

        app = cdk.App(outdir={str(outdir)!r})
        SingleTable(cdk.Stack(app, "Eager"), "Data", model=shop_model)
        app.synth()
    """), encoding="utf-8")
    # WHEN it is loaded as a describe target
    pairs = load_models(str(app_file))
    # THEN its table is described and nothing was synthesized
    assert [t for t, _ in pairs] == ["Eager/Data — data model `shop`"]
    assert not (outdir / "manifest.json").exists()
    assert not (outdir / "Eager.Data.model.md").exists()
    # AND synth works again afterwards
    app = cdk.App(outdir=str(tmp_path / "after"))
    SingleTable(cdk.Stack(app, "After"), "Data", model=shop_model)
    app.synth()
    assert (tmp_path / "after" / "After.Data.model.md").is_file()


def test_cli_attribute_target_on_an_app() -> None:
    # WHEN one attribute of an app module is the target (a function returning the app)
    pairs = load_models("app.py:build_app")
    # THEN the app's tables are described
    assert [m.name for _, m in pairs][:2] == ["shop", "saas"]
