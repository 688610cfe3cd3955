"""Fixtures of the synth-level tests: small models, stack factories and the showcase app
(synthesized once per session by tests/conftest.py's ``shop_cdk_out``).

jsii starts one Node process per Python process (~3 s); every extra stack costs 0.1-0.2 s.
So stacks are shared through module- or session-scoped fixtures, and every stack lives in
its own ``cdk.App`` (``Template.from_stack`` re-synthesizes the whole app each time).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# jsii was started by tests/conftest.py with the asset-metadata flag in its environment.
import aws_cdk as cdk  # noqa: E402
import pytest

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model

SHOP_STACK = "ShopStack"


# Models ------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def pk_only_model() -> Model:
    """No entity declares a sort key, so the table has a partition key only; no indexes."""
    return Model(
        "pkonly",
        entities=[Entity("Account", pk="ACCOUNT#{account_id}", fields=["account_id"])],
        access_patterns=[AccessPattern("account by id", entity="Account")],
    )


@pytest.fixture(scope="session")
def mixed_index_model() -> Model:
    """One of each index shape: ALL GSI, KEYS_ONLY GSI without sort key, INCLUDE GSI, LSI."""
    return Model(
        "mixed",
        entities=[
            Entity(
                "Doc",
                pk="DOC#{doc_id}",
                sk="V#{version}",
                fields={"doc_id": "string", "version": Field.number(width=6), "owner": "string",
                        "title": "string", "updated_at": Field.timestamp(), "folder_id": "string"},
                indexes={
                    "ByOwner": IndexKey(pk="OWNER#{owner}", sk="{updated_at}"),
                    "ByTitle": IndexKey(pk="TITLE#{title}"),
                    "ByFolder": IndexKey(pk="FOLDER#{folder_id}", sk="{title}"),
                    "ByUpdated": IndexKey(sk="{updated_at}"),
                },
            )
        ],
        indexes=[
            Index("ByOwner"),
            Index("ByTitle", sort_key=False, projection="KEYS_ONLY"),
            Index("ByFolder", projection=("title", "size")),
            Index("ByUpdated", kind="LSI"),
        ],
        access_patterns=[
            AccessPattern("doc versions", entity="Doc", sk="begins_with"),
            AccessPattern("docs of owner", entity="Doc", index="ByOwner"),
            AccessPattern("doc by title", entity="Doc", index="ByTitle"),
            AccessPattern("docs in folder", entity="Doc", index="ByFolder"),
            AccessPattern("doc versions by date", entity="Doc", index="ByUpdated", sk=">="),
        ],
        ttl_attribute="purge_at",
    )


@pytest.fixture(scope="session")
def status_gsi_model() -> Model:
    """Tickets by status: the GSI partition key ``STATUS#{status}`` has a handful of values."""
    return Model(
        "tickets",
        entities=[
            Entity(
                "Ticket",
                pk="TICKET#{ticket_id}",
                sk="TICKET",
                fields={"ticket_id": "string", "status": "string", "opened_at": Field.timestamp()},
                indexes={"GSI1": IndexKey(pk="STATUS#{status}", sk="{opened_at}#{ticket_id}")},
            )
        ],
        indexes=[Index("GSI1")],
        access_patterns=[
            AccessPattern("ticket by id", entity="Ticket", sk="="),
            AccessPattern("tickets by status", entity="Ticket", index="GSI1"),
        ],
    )


@pytest.fixture(scope="session")
def shop_model() -> Model:
    from examples.shop.model import shop_model

    return shop_model


# Stacks ------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def new_stack() -> Callable[[str], cdk.Stack]:
    """Factory of empty stacks, each in its own app (so synthesizing one never re-synthesizes
    the others)."""

    def make(name: str = "TestStack") -> cdk.Stack:
        return cdk.Stack(cdk.App(), name)

    return make


@pytest.fixture(scope="module")
def scratch_stack(new_stack: Callable[[str], cdk.Stack]) -> cdk.Stack:
    """A stack for constructor-error tests: it is never synthesized, so constructs left
    half-built by a raising constructor do no harm. Use a distinct construct id per test."""
    return new_stack("Scratch")


# The showcase app, synthesized once ----------------------------------------------------------
@dataclass(frozen=True)
class ShopSynth:
    outdir: Path
    template: dict[str, Any]
    function_logical_id: str
    asset_dir: Path
    asset_metadata_path: str | None

    @property
    def function(self) -> dict[str, Any]:
        return self.template["Resources"][self.function_logical_id]

    def resources_of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {lid: r for lid, r in self.template["Resources"].items() if r["Type"] == cfn_type}


def _asset_path_from_manifest(outdir: Path, s3_key: str) -> Path:
    digest = s3_key.removesuffix(".zip")
    manifest = json.loads((outdir / f"{SHOP_STACK}.assets.json").read_text(encoding="utf-8"))
    return outdir / manifest["files"][digest]["source"]["path"]


@pytest.fixture(scope="session")
def shop(shop_cdk_out: Path) -> ShopSynth:
    """The template and the orders API function's asset of ``app.py``, from the one synthesis
    per session that every layer shares (``shop_cdk_out`` in tests/conftest.py).

    The asset directory comes from the function's ``Metadata["aws:asset:path"]`` (enabled
    above); if another plugin started jsii first the metadata is missing and the cloud
    assembly's asset manifest (what ``cdk deploy`` publishes from) names it instead.
    """
    outdir = shop_cdk_out
    manifest = json.loads((outdir / "manifest.json").read_text(encoding="utf-8"))
    template_file = manifest["artifacts"][SHOP_STACK]["properties"]["templateFile"]
    template = json.loads((outdir / template_file).read_text(encoding="utf-8"))
    functions = [
        lid for lid, r in template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"].startswith("orders_api.")
    ]
    assert len(functions) == 1, f"ShopStack should have one orders API function, found {functions}"
    function = template["Resources"][functions[0]]
    meta_path = function.get("Metadata", {}).get("aws:asset:path")
    if meta_path is not None:
        asset = outdir / meta_path
    else:
        asset = _asset_path_from_manifest(outdir, function["Properties"]["Code"]["S3Key"])
    return ShopSynth(outdir, template, functions[0], asset, meta_path)
