"""Consumer views (``Model.view``): the producer's model plus consumer-only access patterns,
resolved like the producer's, refused with typed errors otherwise, under the producer's
fingerprints; they survive the model JSON, and describe and codegen show them."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from constructs_lib.codegen import generate
from constructs_lib.docgen.describe import describe
from constructs_lib.model import (
    AccessPattern,
    AccessPatternError,
    Entity,
    Index,
    IndexKey,
    Model,
    ModelFormatError,
    ModelValidationError,
    ViewError,
)
from constructs_lib.model.contract_file import build_contract
from constructs_lib.model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints
from constructs_lib.runtime.contract import verify
from examples.shop.model import shop_model

SINCE = AccessPattern("pending orders since", entity="Order", index="GSI2", sk=">=",
                      description="the consumer's report")
LINES_FROM = AccessPattern("order lines from", entity="OrderItem", sk=">=")


def producer() -> Model:
    """The shop's model as a consumer has it: read from the contract document, not the package."""
    return Model.from_contract(build_contract(shop_model, stream_view_type="NEW_AND_OLD_IMAGES"))


def prints(model: Model) -> tuple[str, dict[str, str], dict[str, str]]:
    return fingerprint(model), entity_fingerprints(model), index_fingerprints(model)


# What a view adds ------------------------------------------------------------------------------------
def test_a_view_adds_the_consumer_patterns_resolved_like_the_producers() -> None:
    # GIVEN the producer's model from its contract
    shop = producer()
    # WHEN a consumer views it with two patterns of its own
    view = shop.view(extra_patterns=[SINCE, LINES_FROM])
    # THEN the view has every producer pattern and the two, which are named consumer-only
    assert list(view.access_patterns) == [*shop.access_patterns, "pending orders since", "order lines from"]
    assert view.consumer_patterns == ("pending orders since", "order lines from") and shop.consumer_patterns == ()
    # AND each resolves to its index and key condition as if the producer had declared it
    resolved = view.resolved_patterns["pending orders since"]
    assert (resolved.index.name if resolved.index else None, resolved.pk_fields, resolved.sk_fields) == (
        "GSI2", ("status",), ("created_at",))
    direct = Model.from_dict({**shop.to_dict(), "access_patterns": [
        *shop.to_dict()["access_patterns"], SINCE.to_dict(), LINES_FROM.to_dict()]})
    assert view.resolved_patterns == direct.resolved_patterns
    # AND the producer's model is left as it was
    assert "pending orders since" not in shop.access_patterns


def test_a_view_keeps_every_fingerprint_of_the_producer() -> None:
    # GIVEN the producer's model
    shop = producer()
    # WHEN viewed with consumer patterns
    view = shop.view(extra_patterns=[SINCE, LINES_FROM])
    # THEN whole-model, per-entity and per-index fingerprints are the producer's
    assert prints(view) == prints(shop)
    # AND a function bundling the view passes the deployed-fingerprint check of an imported table
    verify(view, environ={"CONSTRUCTS_LIB_MODEL_FINGERPRINT": fingerprint(shop)})


def test_views_compose_and_a_single_pattern_is_accepted() -> None:
    # GIVEN a view with one pattern, passed alone
    first = producer().view(SINCE)
    # WHEN it is viewed again with another
    second = first.view(extra_patterns=[LINES_FROM])
    # THEN both are consumer-only, under the same fingerprints
    assert second.consumer_patterns == ("pending orders since", "order lines from")
    assert prints(second) == prints(shop_model)


# What a view refuses ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("pattern", "rule"), [
    (AccessPattern("by ghost", entity="Ghost"), "entity 'Ghost' does not exist"),
    (AccessPattern("by gsi9", entity="Order", index="GSI9"), "index 'GSI9' does not exist"),
    (AccessPattern("profile after", entity="User", index="GSI1", sk=">"),
     "range condition '>' on constant sort key 'USER'"),
    (AccessPattern("orders by sku", entity="Order", sk="=", sk_fields=("order_id",)),
     "must be a leading run of the sort-key template"),
    (AccessPattern("products by status", entity="Product", index="GSI2"),
     "entity 'Product' has no keys in index 'GSI2', so its items are not in it; reading them there would need a Scan"),
    (AccessPattern("users and products", entity=("User", "Product")), "entities share no partition"),
], ids=["unknown entity", "unknown index", "condition not served", "sk_fields not leading", "needs a scan",
        "no shared partition"])
def test_an_unservable_pattern_is_refused_naming_it_and_the_rule(pattern: AccessPattern, rule: str) -> None:
    # GIVEN the producer's model
    shop = producer()
    # WHEN a view adds a pattern no key or index serves
    with pytest.raises(AccessPatternError) as raised:
        shop.view(extra_patterns=[pattern])
    # THEN the error names the view, the pattern and the rule — the producer's own resolution message
    message = str(raised.value)
    assert message.startswith(f"consumer view of model 'shop': access pattern {pattern.name!r} cannot be served")
    assert rule in message
    with pytest.raises(AccessPatternError) as direct:
        Model.from_dict({**shop.to_dict(), "access_patterns": [*shop.to_dict()["access_patterns"], pattern.to_dict()]})
    assert message.endswith(str(direct.value))


def test_a_name_clash_with_a_producer_pattern_is_refused() -> None:
    # GIVEN the producer's model, which declares "order by id"
    shop = producer()
    # WHEN a view declares a pattern of that name (even a servable one)
    with pytest.raises(ViewError) as raised:
        shop.view(extra_patterns=[AccessPattern("order by id", entity="Order", index="GSI1", sk="=")])
    # THEN it is refused, naming the pattern and the rule
    assert "access pattern 'order by id' clashes with a pattern the producer declares" in str(raised.value)
    assert "never redefines" in str(raised.value)


def test_a_name_clash_within_the_view_or_with_an_earlier_view_is_refused() -> None:
    # GIVEN a view that added "pending orders since"
    view = producer().view(extra_patterns=[SINCE])
    # WHEN the same name is added again, by a later view or twice in one call
    with pytest.raises(ViewError, match="'pending orders since' clashes with a pattern this view already adds"):
        view.view(extra_patterns=[SINCE])
    with pytest.raises(ViewError, match="'order lines from' clashes with a pattern this view already adds"):
        producer().view(extra_patterns=[LINES_FROM, LINES_FROM])


@pytest.mark.parametrize("argument", [
    {"indexes": [Index("GSI9")]},
    {"entities": [Entity("Ghost", pk="GHOST#{id}", sk="G", fields={"id": "string"})]},
    {"ttl_attribute": "gone_at"},
    {"pk_attribute": "pk"},
    {"tenant_field": "tenant_id"},
    {"access_patterns": [SINCE]},
], ids=lambda a: next(iter(a)))
def test_any_other_argument_is_refused(argument: dict[str, Any]) -> None:
    # GIVEN the producer's model
    shop = producer()
    # WHEN a view is asked to change anything but access patterns
    with pytest.raises(ViewError) as raised:
        shop.view(extra_patterns=[SINCE], **argument)
    # THEN it is refused, naming the argument and the rule
    (name,) = argument
    assert f"consumer view of model 'shop': {name}= cannot be given; a view only adds access patterns" in str(raised.value)
    assert isinstance(raised.value, ModelValidationError)


@pytest.mark.parametrize(("extra", "named"), [
    ([Index("GSI9")], "extra_patterns[0] (Index 'GSI9') is not an AccessPattern"),
    ([SINCE, IndexKey(pk="X#{id}")], "extra_patterns[1] (IndexKey("),
    ([SINCE.to_dict()], "extra_patterns[0] ({'name': 'pending orders since'"),
    ("pending orders since", "extra_patterns 'pending orders since' must be a list of AccessPattern"),
], ids=["an index", "an index key", "a dict", "a string"])
def test_anything_but_access_patterns_in_extra_patterns_is_refused(extra: Any, named: str) -> None:
    # GIVEN the producer's model
    shop = producer()
    # WHEN extra_patterns holds something else
    with pytest.raises(ViewError) as raised:
        shop.view(extra_patterns=extra)
    # THEN it is refused, naming the item
    assert named in str(raised.value)


# The model JSON bundled into functions ---------------------------------------------------------------
def test_the_view_round_trips_through_the_model_json() -> None:
    # GIVEN a view
    view = producer().view(extra_patterns=[SINCE, LINES_FROM])
    # WHEN it is written as the model JSON a function bundles and read back
    text = view.to_json()
    back = Model.from_json(text)
    # THEN the consumer patterns are listed, and come back consumer-only, resolved the same
    assert json.loads(text)["consumer_patterns"] == ["pending orders since", "order lines from"]
    assert back == view and back.consumer_patterns == view.consumer_patterns
    assert back.resolved_patterns == view.resolved_patterns
    assert Model.from_json(view.to_json(compact=True)).consumer_patterns == view.consumer_patterns


def test_a_producers_model_json_has_no_consumer_patterns_key() -> None:
    # GIVEN the producer's model WHEN serialized THEN its JSON is as before views existed
    assert "consumer_patterns" not in producer().to_dict()


@pytest.mark.parametrize(("value", "rule"), [
    (["no such pattern"], "names ['no such pattern'], which are not among its access_patterns"),
    ("pending orders since", "must be a list of distinct pattern names"),
    (["pending orders since", "pending orders since"], "must be a list of distinct pattern names"),
])
def test_a_damaged_consumer_patterns_list_is_refused(value: Any, rule: str) -> None:
    # GIVEN a view's JSON whose consumer_patterns was edited
    data = producer().view(extra_patterns=[SINCE]).to_dict()
    data["consumer_patterns"] = value
    # WHEN read THEN a ModelFormatError names the value and the rule
    with pytest.raises(ModelFormatError, match="model JSON consumer_patterns") as raised:
        Model.from_dict(data)
    assert rule in str(raised.value)


# Documentation and typed code ------------------------------------------------------------------------
def test_describe_marks_the_consumer_patterns() -> None:
    # GIVEN a view
    view = producer().view(extra_patterns=[SINCE])
    # WHEN described
    text = describe(view)
    # THEN its pattern row is marked and the mark is explained; the producer's rows are not marked
    rows = [line for line in text.splitlines() if line.startswith("| ") and "*(consumer)*" in line]
    assert len(rows) == 1 and rows[0].startswith("| pending orders since *(consumer)* | Order | GSI GSI2 |")
    assert "*(consumer)*: declared by this consumer's view of model `shop`" in text
    assert "*(consumer)*" not in describe(producer())


def test_codegen_generates_typed_methods_for_the_consumer_patterns() -> None:
    # GIVEN a view
    view = producer().view(extra_patterns=[SINCE, LINES_FROM])
    # WHEN its typed module is generated
    tree = ast.parse(generate(view))
    (table,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ShopTable"]
    methods = {f.name: f for f in table.body if isinstance(f, ast.FunctionDef)}
    # THEN each consumer pattern has its query methods, with the key fields it needs, marked consumer-only
    since = methods["pending_orders_since"]
    assert [a.arg for a in since.args.kwonlyargs][:2] == ["status", "created_at"]
    assert "Consumer-only" in (ast.get_docstring(since) or "")
    assert "pending_orders_since_all" in methods and "order_lines_from" in methods
    assert "Consumer-only" not in (ast.get_docstring(methods["order_by_id"]) or "")
