"""Which package modules a function's asset may ship (``bundling.shipped``): the modules of one
handler only with that handler, the counters' recompute layout only where a family needs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from constructs_lib.assets import bundling

PACKAGE = Path(bundling.__file__).resolve().parents[1]
USER_HANDLER = "orders_api.handler"
RECOMPUTE = "runtime/patterns/counter/recompute.py"
HANDLER_ONLY = [(owner, rel) for owner, rels in bundling.HANDLER_ONLY.items() for rel in rels]


def test_the_lists_name_modules_of_the_package() -> None:
    # GIVEN the handler-only and recompute-only lists THEN each names a module that exists, so a
    # renamed module cannot slip out of its list unnoticed
    for rel in (*(rel for _, rel in HANDLER_ONLY), *bundling.RECOMPUTE_ONLY):
        assert (PACKAGE / rel).is_file(), rel
    # AND the aggregator's modules and the recompute layout are among them
    assert set(bundling.HANDLER_ONLY[bundling.COUNTER_HANDLER]) >= {
        "runtime/handlers/counter.py", "runtime/patterns/counter/aggregation.py",
        "runtime/patterns/counter/redrive.py", "runtime/patterns/counter/watermarks.py"}
    assert RECOMPUTE in bundling.RECOMPUTE_ONLY


@pytest.mark.parametrize(("owner", "rel"), HANDLER_ONLY, ids=[rel for _, rel in HANDLER_ONLY])
def test_a_handlers_own_modules_ship_with_that_handler_alone(owner: str, rel: str) -> None:
    # GIVEN a module listed for one handler
    others = [h for h in (*bundling.HANDLER_ONLY, bundling.BACKFILL_HANDLER, USER_HANDLER, None) if h != owner]
    # THEN it ships with that handler
    assert bundling.shipped(rel, owner)
    # AND with no other, whatever the function's options (binding a recomputed family included)
    for handler in others:
        assert not bundling.shipped(rel, handler), handler
        assert not bundling.shipped(rel, handler, contract_check=True, traffic_insight=True,
                                    recompute_counters=True), handler


def test_the_recompute_layout_ships_where_a_recomputed_family_needs_it() -> None:
    # GIVEN the counters' recompute layout
    # THEN a user's function ships it when bound to a recomputed family, and not otherwise
    assert bundling.shipped(RECOMPUTE, USER_HANDLER, recompute_counters=True)
    assert not bundling.shipped(RECOMPUTE, USER_HANDLER)
    assert not bundling.shipped(RECOMPUTE, USER_HANDLER, contract_check=True, traffic_insight=True)
    # AND the aggregator always ships it (the family it aggregates may be recomputed)
    assert bundling.shipped(RECOMPUTE, bundling.COUNTER_HANDLER)
    # AND the audit writer and the backfill job never do
    assert not bundling.shipped(RECOMPUTE, bundling.AUDIT_HANDLER)
    assert not bundling.shipped(RECOMPUTE, bundling.BACKFILL_HANDLER)


@pytest.mark.parametrize("rel", ["runtime/patterns/counter/client.py", "runtime/patterns/counter/spec.py",
                                 "runtime/patterns/counter/sizing.py", "runtime/patterns/counter/__init__.py",
                                 "runtime/handlers/__init__.py"])
def test_the_counter_client_and_its_spec_ship_with_every_function(rel: str) -> None:
    # GIVEN a module every counter user imports THEN neither list keeps it from any function
    for handler in (USER_HANDLER, bundling.COUNTER_HANDLER, bundling.AUDIT_HANDLER, bundling.BACKFILL_HANDLER):
        assert bundling.shipped(rel, handler), handler


def test_the_tenant_client_ships_with_tenant_models_alone() -> None:
    # GIVEN the tenant-confined client's module
    (tenant,) = bundling.TENANT_ONLY
    assert (PACKAGE / tenant).is_file()
    # THEN every handler ships it when its model declares a tenant field, and none otherwise
    for handler in (USER_HANDLER, bundling.COUNTER_HANDLER, bundling.AUDIT_HANDLER, bundling.BACKFILL_HANDLER):
        assert bundling.shipped(tenant, handler, tenancy=True), handler
        assert not bundling.shipped(tenant, handler, contract_check=True, traffic_insight=True,
                                    recompute_counters=True, tenancy=False), handler
    # AND the client that refuses for_tenant on such a model ships always
    assert bundling.shipped("runtime/client.py", USER_HANDLER, tenancy=False)


def test_a_functions_runtime_part_holds_the_tenant_client_when_its_model_has_tenants() -> None:
    # GIVEN the runtime part staged for the SaaS model (tenant_field) and for the shop (none)
    from examples.saas.model import saas_model
    from examples.shop.model import shop_model

    (tenant,) = bundling.TENANT_ONLY
    # WHEN the files are listed THEN the tenant client is among the SaaS function's alone
    assert f"constructs_lib/{tenant}" in bundling._runtime_files(saas_model, USER_HANDLER)
    assert f"constructs_lib/{tenant}" not in bundling._runtime_files(shop_model, USER_HANDLER)
