"""``describe``'s capacity section and cost warnings: the figures are the estimates', table and
every index, with the item sizes they assume."""

from __future__ import annotations

import re

from capacity_models import collection_model, projected_model

from constructs_lib.capacity import read_estimate, typical_item_bytes, write_estimate
from constructs_lib.capacity.warnings import PAGE_ITEMS
from constructs_lib.docgen.describe import describe
from examples.shop.model import shop_model


def section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    end = text.find("\n#", start + len(heading))
    return text[start:] if end == -1 else text[start:end]


def rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]] for line in lines[2:]]


def test_the_write_table_is_the_estimates_per_index() -> None:
    # GIVEN the shop's description
    doc = describe(shop_model)
    table = rows(section(doc, "### WCU per write"))
    # THEN each row is the estimate of that entity and write: table, GSI1..GSI3 (— where not written), total
    assert len(table) == 3 * len(shop_model.entities)
    for entity, kind, *cells in table:
        estimate = write_estimate(shop_model, entity, kind)  # type: ignore[arg-type]
        want = [f"{estimate.table:g}"] + [
            f"{estimate.index(i):g}" if i in estimate.global_indexes else "—" for i in shop_model.indexes
        ] + [f"{estimate.total:g}"]
        assert cells == want, (entity, kind)
    # AND the write amplification of an order shows: 1 on the table, 3 more across its GSIs
    assert ["Order", "put", "1", "1", "1", "1", "4"] in table


def test_the_read_table_is_the_estimates_per_page() -> None:
    doc = describe(shop_model)
    table = rows(section(doc, "### RCU per page"))
    assert [r[0] for r in table] == [n.replace("|", "\\|") for n in shop_model.resolved_patterns]
    for name, _operation, where, items, eventual, strong in table:
        assert eventual == f"{read_estimate(shop_model, name, items=PAGE_ITEMS).total:g}"
        assert strong == ("—" if where.startswith("GSI") else
                          f"{read_estimate(shop_model, name, items=PAGE_ITEMS, consistent=True).total:g}")
        assert items == ("1" if name in ("user profile", "product by sku", "session by id") else str(PAGE_ITEMS))
    assert ["orders by status newest first", "4 Queries", "GSI GSI3", "25", "2", "—"] in table


def test_the_item_sizes_are_stated_with_their_source() -> None:
    # GIVEN a model with a declared size, and the shop without
    sizes = rows(section(describe(projected_model(3000)), "## Capacity"))
    assert sizes == [["User", "3000", "declared `typical_item_bytes`"]]
    shop = rows(section(describe(shop_model), "## Capacity"))
    assert ["Order", str(typical_item_bytes(shop_model, "Order")), "example item"] in shop


def test_cost_warnings_are_listed_with_the_design_warnings() -> None:
    # GIVEN a model whose pattern reads a whole item collection
    warnings = section(describe(collection_model()), "## Warnings")
    # THEN its cost warning is listed, with its figure
    assert "- **CollectionRead** — access pattern 'user alone' reads the table" in warnings
    assert "RCU wasted" in warnings
