"""Cost warnings (``capacity.warnings``) become synth-time warnings on the ``SingleTable``, as the
design warnings do."""

from __future__ import annotations

from aws_cdk.assertions import Annotations, Match
from capacity_models import collection_model, projected_model

from constructs_lib import SingleTable


def test_cost_warnings_are_shown_at_synth(new_stack) -> None:  # type: ignore[no-untyped-def]
    # GIVEN 3,000-byte users in two ALL-projected GSIs, and a pattern reading a whole collection
    stack = new_stack("Costly")
    SingleTable(stack, "People", model=projected_model(3000))
    SingleTable(stack, "Activity", model=collection_model())
    # WHEN the stack is synthesized
    annotations = Annotations.from_stack(stack)
    # THEN each table carries its cost warning, naming the units
    annotations.has_warning("/Costly/People", Match.string_like_regexp(r"ALL-projected GSIs.*4 WCU saved per put"))
    annotations.has_warning("/Costly/Activity", Match.string_like_regexp(r"access pattern 'user alone'.*RCU wasted"))


def test_a_cheap_model_has_no_cost_warning(new_stack) -> None:  # type: ignore[no-untyped-def]
    # GIVEN the same users under 1 KB (keys only would cost as much) THEN no warning at all
    stack = new_stack("Cheap")
    SingleTable(stack, "People", model=projected_model(900))
    Annotations.from_stack(stack).has_no_warning("*", Match.any_value())
