"""``function_slice``: the part of a model a function with a declared scope uses, as ``describe``
shows it, checked against brute force — every call the runtime's scope guard lets through."""

from __future__ import annotations

import os
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.docgen.tables import function_slice
from constructs_lib.model import Model
from constructs_lib.model.scope import ANY_TENANT, WRITE_KINDS, AccessScope
from constructs_lib.runtime.exceptions import OutOfScopeError
from constructs_lib.runtime.scope import ScopeGuard
from examples.iot.model import iot_model
from examples.saas.model import saas_model
from examples.shop.model import shop_model
from examples.viral.model import viral_model

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 2000 if SOAK else 200
MODELS = (shop_model, saas_model, iot_model, viral_model)


def _allowed(call: Callable[[], None]) -> bool:
    try:
        call()
    except OutOfScopeError:
        return False
    return True


def brute_force(model: Model, scope: AccessScope) -> tuple[set[str], set[str], set[str], set[str]]:
    """(patterns, entities read, entities written, indexes read) over every call the guard allows."""
    guard = ScopeGuard(model, scope)
    values = {model.tenant_field: "t-1"} if model.tenant_field else {}
    patterns, reads, writes, indexes = set(), set(), set(), set()
    for name, resolved in model.resolved_patterns.items():
        if _allowed(lambda: guard.pattern(name, values)):  # noqa: B023 - called at once
            patterns.add(name)
            reads.update(resolved.entities)
            indexes.add(resolved.index.name if resolved.index is not None else "table")
    for entity in model.entities:
        for read in (lambda: guard.get(entity, values), lambda: guard.batch_get([(entity, values)])):  # noqa: B023
            if _allowed(read):
                reads.add(entity)
                indexes.add("table")
        if any(_allowed(lambda: guard.write(kind, entity, values)) for kind in WRITE_KINDS):  # noqa: B023
            writes.add(entity)
    return patterns, reads, writes, indexes


@st.composite
def model_and_scope(draw: st.DrawFn) -> tuple[Model, AccessScope]:
    model = draw(st.sampled_from(MODELS))
    entities = list(model.entities)
    patterns = draw(st.lists(st.sampled_from(list(model.resolved_patterns)), unique=True))
    writes = draw(st.dictionaries(st.sampled_from(entities),
                                  st.lists(st.sampled_from(WRITE_KINDS), min_size=1, unique=True), max_size=3))
    batch_gets = draw(st.lists(st.sampled_from(entities), unique=True, max_size=2))
    if not (patterns or writes or batch_gets):
        patterns = [next(iter(model.resolved_patterns))]
    tenant = ANY_TENANT if model.tenant_field else None
    return model, AccessScope(patterns=patterns, writes=writes, batch_gets=batch_gets, tenant=tenant).validate(model)


@settings(max_examples=EXAMPLES, deadline=None)
@given(model_and_scope())
def test_slice_is_what_the_scope_guard_lets_through(case: tuple[Model, AccessScope]) -> None:
    # GIVEN a model and a random declared scope on it
    model, scope = case
    # WHEN its slice is computed, and every call the runtime may make is tried against the guard
    part = function_slice(model, scope)
    patterns, reads, writes, indexes = brute_force(model, scope)
    # THEN the slice names exactly what the guard allows, in the model's order
    assert set(part.patterns) == patterns
    assert set(part.reads) == reads
    assert set(part.writes) == writes
    assert set(part.indexes) == indexes
    assert list(part.reads) == [e for e in model.entities if e in reads]
    assert list(part.indexes) == [i for i in ("table", *model.indexes) if i in indexes]
    assert not part.everything


def test_no_declared_scope_uses_every_entity_and_index() -> None:
    # WHEN a function declares no scope
    part = function_slice(shop_model, None)
    # THEN its slice is the whole model, and says so
    assert part.everything
    assert part.reads == part.writes == tuple(shop_model.entities)
    assert part.indexes == ("table", *shop_model.indexes)
    assert part.patterns == tuple(shop_model.resolved_patterns)
