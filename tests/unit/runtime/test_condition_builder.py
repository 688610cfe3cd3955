"""The condition builder without DynamoDB: expression text, placeholders that never meet the
request's own, values encoded like on write, and every refusal naming its value."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import ItemValidationError, attr, size
from constructs_lib.runtime import request_params as rq
from constructs_lib.runtime.conditions import Attributes, Path, Placeholders, projection, render
from constructs_lib.runtime.exceptions import InvalidConditionError, UnknownAttributeError
from constructs_lib.runtime.items import ItemMapper

UTC = UTC

MODEL = Model(
    "cond_unit",
    entities=[
        Entity("Order", pk="USER#{user_id}", sk="ORDER#{created_at}#{order_id}",
               fields={"user_id": "string", "order_id": "string", "created_at": Field.timestamp(),
                       "status": Field.enum("PAID", "SHIPPED"), "qty": Field.number(width=4)},
               indexes={"ByStatus": IndexKey(pk="STATUS#{status}", sk="{order_id}"),
                        "Slim": IndexKey(pk="S#{user_id}", sk="{order_id}")},
               version_attribute="version"),
    ],
    indexes=[Index("ByStatus"), Index("Slim", projection=("total",))],
    access_patterns=[
        AccessPattern("orders", entity="Order", sk="begins_with"),
        AccessPattern("orders before", entity="Order", sk="<", sk_fields=("created_at",)),
        AccessPattern("by status", entity="Order", index="ByStatus"),
        AccessPattern("slim", entity="Order", index="Slim"),
    ],
)
ORDER = MODEL.entities["Order"]
SCOPE = Attributes(MODEL, [ORDER])


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"[#:][a-z]+[0-9]+", text))


@pytest.mark.parametrize(("condition", "text"), [
    (attr("total") == 3, "#c0 = :c0"),
    (attr("total") != 3, "#c0 <> :c0"),
    (attr("total") < 3, "#c0 < :c0"),
    (attr("total") <= 3, "#c0 <= :c0"),
    (attr("total") > 3, "#c0 > :c0"),
    (attr("total") >= 3, "#c0 >= :c0"),
    (attr("total").between(1, 2), "#c0 BETWEEN :c0 AND :c1"),
    (attr("total").is_in(1, 2, 3), "#c0 IN (:c0, :c1, :c2)"),
    (attr("note").begins_with("a"), "begins_with(#c0, :c0)"),
    (attr("note").contains("a"), "contains(#c0, :c0)"),
    (attr("note").exists(), "attribute_exists(#c0)"),
    (attr("note").not_exists(), "attribute_not_exists(#c0)"),
    (size(attr("tags")) > 3, "size(#c0) > :c0"),
    (attr("a.b[2].c") == 1, "#c0.#c1[2].#c2 = :c0"),
    (attr("total") > attr("limit"), "#c0 > #c1"),
    ((attr("a") == 1) & (attr("b") == 2) | ~(attr("a") == 3), "((#c0 = :c0) AND (#c1 = :c1)) OR (NOT (#c0 = :c2))"),
])
def test_rendering(condition: Any, text: str) -> None:
    # WHEN a condition is rendered THEN names and values are placeholders, names reused
    out = render(condition, SCOPE, "c")
    assert out.text == text
    assert placeholders(out.text) == set(out.names) | set(out.values)


def test_values_are_encoded_like_on_write() -> None:
    # GIVEN declared fields of several kinds
    at = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=1)))
    out = render((attr("created_at") > at) & (attr("qty") == 7) & (attr("price") == 1.5), SCOPE, "c")
    # THEN a timestamp is the stored ISO UTC text, numbers are as a put stores them
    assert out.values == {":c0": "2024-01-02T02:04:05.000000Z", ":c1": 7, ":c2": __import__("decimal").Decimal("1.5")}


@pytest.mark.parametrize(("make", "error", "match"), [
    (lambda: attr(""), InvalidConditionError, "non-empty"),
    (lambda: attr("a..b"), InvalidConditionError, "segment ''"),
    (lambda: attr("a[x]"), InvalidConditionError, "segment 'a\\[x\\]'"),
    (lambda: attr("a").is_in(), InvalidConditionError, "1 to 100"),
    (lambda: attr("a").is_in(*range(101)), InvalidConditionError, "1 to 100"),
    (lambda: bool(attr("a") == 1), InvalidConditionError, "no truth value"),
    (lambda: (attr("a") == 1) and (attr("b") == 2), InvalidConditionError, "no truth value"),
    (lambda: 1 < attr("a") < 3, InvalidConditionError, "between"),
    (lambda: (attr("a") == 1) & "b = 2", InvalidConditionError, "combines conditions"),
    (lambda: size(3), InvalidConditionError, "size\\(\\) takes"),  # type: ignore[arg-type]
    (lambda: {attr("a")}, TypeError, "unhashable"),
])
def test_builder_refusals(make: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(("condition", "error", "match"), [
    (attr("PK") == "x", UnknownAttributeError, "'PK', an attribute the model manages on Order"),
    (attr("_type") == "Order", UnknownAttributeError, "manages"),
    (attr("ByStatusPK").exists(), UnknownAttributeError, "manages"),
    (attr("status") == "LOST", InvalidConditionError, "not one of the declared choices"),
    (attr("qty") == -1, InvalidConditionError, "Order.qty"),
    (attr("created_at") == "yesterday", InvalidConditionError, "Order.created_at"),
    (attr("qty").begins_with("1"), InvalidConditionError, "number field"),
    (attr("note") == None, InvalidConditionError, "None never matches"),  # noqa: E711
    (attr("note") == datetime(2024, 1, 1, tzinfo=UTC), ItemValidationError, "declare it as a timestamp"),
    (size(attr("tags")) > -1, InvalidConditionError, "non-negative int"),
    (size(attr("tags")) == "3", InvalidConditionError, "non-negative int"),
    (attr("a") == (attr("b") == 1), InvalidConditionError, "not a value"),
])
def test_render_refusals(condition: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        render(condition, SCOPE, "c")


def test_unknown_attribute_error_names_attribute_and_entity() -> None:
    with pytest.raises(UnknownAttributeError) as caught:
        render(attr("SK") > "a", SCOPE, "f", what="filter")
    assert (caught.value.attribute, caught.value.entity) == ("SK", "Order")
    assert "status" in str(caught.value) and "created_at" in str(caught.value) and "filter names" in str(caught.value)


def test_write_condition_is_anded_and_never_meets_the_requests_placeholders() -> None:
    mapper = ItemMapper(MODEL)
    # WHEN an update with a version check carries a caller's condition
    req = rq.update(mapper, "t", ORDER, {"user_id": "u", "order_id": "o", "created_at": datetime(2024, 1, 1, tzinfo=UTC)},
                    set={"total": 5}, expected_version=3, condition=attr("total") < 5)
    p = req.params
    # THEN the model's conditions stay, ANDed with the caller's, and every placeholder is defined once
    assert p["ConditionExpression"].startswith("(#n") and p["ConditionExpression"].endswith(") AND (#c0 < :c0)")
    used = placeholders(p["ConditionExpression"] + " " + p["UpdateExpression"])
    assert used == set(p["ExpressionAttributeNames"]) | set(p["ExpressionAttributeValues"])
    assert p["ExpressionAttributeValues"][":c0"] == {"N": "5"} and req.own == ("version", "version", 3)
    # WHEN a plain delete carries a condition THEN it is the whole ConditionExpression
    plain = rq.delete(mapper, "t", ORDER, {"user_id": "u", "order_id": "o", "created_at": datetime(2024, 1, 1, tzinfo=UTC)},
                      condition=attr("status") == "PAID")
    assert plain.params["ConditionExpression"] == "#c0 = :c0" and plain.own is None


def test_query_filter_and_projection_placeholders() -> None:
    mapper = ItemMapper(MODEL)
    resolved = MODEL.resolved_patterns["orders before"]
    # WHEN a pattern that already filters on the entity gets a caller's filter and a projection
    p = rq.query_params(mapper, "t", resolved, {"user_id": "u", "created_at": datetime(2024, 1, 1, tzinfo=UTC)},
                        filter=attr("total") > 1, attributes=["total", "address.city"])
    # THEN the filters are ANDed, and names/values of key condition, filter and projection never clash
    assert p["FilterExpression"] == "(#n2 IN (:v2)) AND (#f0 > :f0)"
    assert p["ProjectionExpression"] == "#p0, #p1.#p2, #p3, #p4, #p5"
    assert [p["ExpressionAttributeNames"][k] for k in ("#p3", "#p4", "#p5")] == ["_type", "PK", "SK"]
    used = placeholders(" ".join(p[k] for k in ("KeyConditionExpression", "FilterExpression", "ProjectionExpression")))
    assert used == set(p["ExpressionAttributeNames"]) | set(p["ExpressionAttributeValues"])
    # WHEN an index is read with a projection THEN its key attributes are kept for the cursor
    idx = rq.query_params(mapper, "t", MODEL.resolved_patterns["by status"], {"status": "PAID"}, attributes=["total"])
    kept = {idx["ExpressionAttributeNames"][n] for n in re.findall(r"#p[0-9]+", idx["ProjectionExpression"])}
    assert kept == {"total", "_type", "PK", "SK", "ByStatusPK", "ByStatusSK"}
    assert rq.cursor_attributes(MODEL, MODEL.resolved_patterns["by status"]) == ["PK", "SK", "ByStatusPK", "ByStatusSK"]


def test_index_projection_limits_filters_and_projections() -> None:
    mapper = ItemMapper(MODEL)
    slim = MODEL.resolved_patterns["slim"]
    # GIVEN an index projecting only "total" WHEN filtered on it THEN fine; on another attribute THEN refused
    rq.query_params(mapper, "t", slim, {"user_id": "u"}, filter=attr("total") > 1)
    with pytest.raises(UnknownAttributeError, match="'note', which index 'Slim' does not project"):
        rq.query_params(mapper, "t", slim, {"user_id": "u"}, filter=attr("note") > 1)
    # WHEN a projection names a key field THEN it comes back from the keys (not asked of the index)
    p = rq.query_params(mapper, "t", slim, {"user_id": "u"}, attributes=["order_id", "total"])
    assert "order_id" not in p["ExpressionAttributeNames"].values()


def test_projection_refusals() -> None:
    with pytest.raises(InvalidConditionError, match="overlap"):
        projection(["a.b", "a"], SCOPE, ["PK"])
    with pytest.raises(InvalidConditionError, match="projects nothing"):
        projection([], SCOPE, ["PK"])
    with pytest.raises(InvalidConditionError, match="list of attribute names"):
        projection("total", SCOPE, ["PK"])  # type: ignore[arg-type]
    with pytest.raises(UnknownAttributeError, match="manages"):
        projection(["GSI1PK", "PK"][1:], SCOPE, ["PK"])
    # list elements of one attribute do not overlap each other
    assert projection(["a[0]", "a[1]"], SCOPE, ["PK"]).text == "#p0[0], #p0[1], #p1"


def test_placeholders_by_prefix() -> None:
    ph = Placeholders("f")
    assert (ph.name("a"), ph.name("b"), ph.name("a"), ph.value(1), ph.value(1)) == ("#f0", "#f1", "#f0", ":f0", ":f1")
    assert ph.path(Path("x.y[3]")) == "#f2.#f3[3]"


def test_own_condition_precedence() -> None:
    held = rq.own_condition_held
    assert held(None, None) and held(("absent",), None) and not held(("absent",), {"a": 1})
    assert held(("present",), {"a": 1}) and not held(("present",), None)
    assert held(("version", "v", 2), {"v": 2}) and not held(("version", "v", 2), {"v": 3})
    assert not held(("version", "v", 2), None) and held(("unversioned", "v"), {"a": 1})
    assert not held(("unversioned", "v"), {"v": 1}) and not held(("never",), {"v": 1})


def test_declared_attributes_close_the_names_conditions_filters_and_projections_take() -> None:
    # GIVEN an entity declaring its other attributes, and one that does not
    declared = Model(
        "cond_declared",
        entities=[
            Entity("Product", pk="PRODUCT#{sku}", fields=["sku"], attributes={"stock": "integer", "title": "string"},
                   version_attribute="rev"),
            Entity("Note", pk="NOTE#{id}", fields=["id"]),
        ],
        ttl_attribute="expires",
        access_patterns=[AccessPattern("product", entity="Product")],
    )
    product = Attributes(declared, [declared.entities["Product"]])
    # WHEN a condition, filter or projection names a declared field, attribute, version or TTL attribute THEN fine
    for name in ("sku", "stock", "title", "rev", "expires"):
        render(attr(name).exists(), product, "c")
    assert projection(["stock", "title"], product, ["PK"]).text.startswith("#p0")
    # WHEN it names anything else (a typo) THEN a typed error names the attribute, the entity and what it declares
    with pytest.raises(UnknownAttributeError, match=r"'stok', which Product does not declare; its attributes: "
                                                    r"expires, rev, sku, stock, title") as caught:
        render(attr("stok") >= 1, product, "c")
    assert (caught.value.attribute, caught.value.entity) == ("stok", "Product")
    with pytest.raises(UnknownAttributeError, match="'titel', which Product does not declare"):
        projection(["titel"], product, ["PK"])
    # AND nested paths are checked by their top-level attribute only
    render(attr("title.en") == "x", product, "c")
    # AND an entity declaring no attributes keeps free-form items: any name goes
    render(attr("anything") == 1, Attributes(declared, [declared.entities["Note"]]), "c")
