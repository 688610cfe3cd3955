"""Consumer views by property, against brute force: for random models and random extra patterns,
the view accepts exactly the patterns the producer's model would accept declared directly (the
reference: the producer's ``Model(...)`` rebuilt with the pattern added), resolves them identically,
refuses the others with the same resolution message, and leaves every fingerprint unchanged.
``CONSTRUCTS_LIB_SOAK=1`` runs ten times the examples."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import CONDITIONS, AccessPattern, AccessPatternError, Entity, Index, IndexKey, Model
from constructs_lib.model.fingerprints import entity_fingerprints, fingerprint, index_fingerprints

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 2000 if SOAK else 200
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = {"id": "string", "at": "timestamp", "grp": "string", "n": "number:6", "flag": "string"}
#: Sort-key shapes: each entity's literal first, so no two entities build the same table key.
SK_SHAPES = ("{e}", "{e}#{{at}}", "{e}#{{at}}#{{id}}", "{e}#{{n}}")
GSI_SK_SHAPES = ("{{at}}", "{e}#{{at}}#{{id}}", "{e}", "{{n}}#{{id}}")
PK_SHAPES = ("{e}#{{id}}", "GRP#{{grp}}")


@st.composite
def models(draw: st.DrawFn) -> dict[str, Any]:
    """Model arguments: 1-3 entities on shared or own partitions, 0-3 GSIs (overloaded, sparse,
    various projections), an optional LSI, and a few producer patterns."""
    names = [f"E{n}" for n in range(draw(st.integers(1, 3)))]
    gsis = [f"GSI{n}" for n in range(draw(st.integers(0, 3)))]
    lsi = draw(st.booleans())
    keys: dict[str, dict[str, IndexKey]] = {name: {} for name in names}
    for n, g in enumerate(gsis):
        writers = {names[n % len(names)]} | set(draw(st.lists(st.sampled_from(names), unique=True)))
        shared_pk = draw(st.booleans())
        for e in sorted(writers):
            pk = "X#{grp}" if shared_pk else f"{e}#{{grp}}"
            sk = draw(st.sampled_from(GSI_SK_SHAPES)).format(e=e)
            keys[e][g] = IndexKey(pk=pk, sk=sk, when_present=draw(st.sampled_from([None, "flag"])))
    if lsi:
        for e in names:
            keys[e]["LSI0"] = IndexKey(sk=f"{e}#{{n}}#{{id}}")
    entities = [
        Entity(e, pk=draw(st.sampled_from(PK_SHAPES)).format(e=e), sk=draw(st.sampled_from(SK_SHAPES)).format(e=e),
               fields=FIELDS, indexes=keys[e])
        for e in names
    ]
    indexes = [Index(g, projection=draw(st.sampled_from(["ALL", "KEYS_ONLY", ("grp",)]))) for g in gsis]
    indexes += [Index("LSI0", kind="LSI")] if lsi else []
    producer_patterns = [AccessPattern(f"whole partition of {e}", entity=e)
                         for e in draw(st.lists(st.sampled_from(names), unique=True))]
    return {"name": "m", "entities": entities, "indexes": indexes, "access_patterns": producer_patterns}


@st.composite
def patterns(draw: st.DrawFn, args: dict[str, Any]) -> AccessPattern:
    """Any extra pattern over the model's names (and, rarely, unknown ones): valid or not."""
    names = [e.name for e in args["entities"]]
    entity = draw(st.one_of(st.sampled_from(names), st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True)
                            .map(tuple) if len(names) > 1 else st.sampled_from(names), st.just("Ghost")))
    index = draw(st.sampled_from(["table", *(i.name for i in args["indexes"]), "GSI9"]))
    sk = draw(st.sampled_from([None, *CONDITIONS]))
    sk_fields = draw(st.sampled_from([None, ("at",), ("at", "id"), ("n",), ("n", "id"), ("id",), ()])) if sk else None
    return AccessPattern("the consumer's read", entity=entity, index=index, sk=sk, sk_fields=sk_fields,
                         descending=draw(st.booleans()))


def prints(model: Model) -> tuple[str, dict[str, str], dict[str, str]]:
    return fingerprint(model), entity_fingerprints(model), index_fingerprints(model)


@PROPERTY
@given(data=st.data())
def test_a_view_resolves_like_the_producer_and_keeps_every_fingerprint(data: st.DataObject) -> None:
    # GIVEN a random producer model and a random extra pattern
    args = data.draw(models(), label="model")
    producer = Model(**args)
    pattern = data.draw(patterns(args), label="pattern")
    # AND the brute-force reference: the producer's model with the pattern declared directly
    try:
        reference: Model | None = Model(**{**args, "access_patterns": [*args["access_patterns"], pattern]})
        refused: AccessPatternError | None = None
    except AccessPatternError as exc:
        reference, refused = None, exc
    # WHEN a consumer views the producer's model with it
    try:
        view: Model | None = producer.view(extra_patterns=[pattern])
        error: AccessPatternError | None = None
    except AccessPatternError as exc:
        view, error = None, exc
    # THEN the view refuses exactly what the reference refuses, with the same resolution message
    if refused is not None:
        assert error is not None, f"the view accepted {pattern!r}, which the producer's model refuses: {refused}"
        assert str(error) == f"consumer view of model 'm': {refused}"
        return
    assert view is not None and reference is not None, f"the view refused {pattern!r}: {error}"
    # AND resolves it identically, marked consumer-only
    assert view.resolved_patterns[pattern.name] == reference.resolved_patterns[pattern.name]
    assert view.resolved_patterns == reference.resolved_patterns and view.consumer_patterns == (pattern.name,)
    # AND every fingerprint — whole, per entity, per index — is the producer's
    assert prints(view) == prints(producer) == prints(reference)
    # AND the model JSON a function bundles gives the same view back
    back = Model.from_json(view.to_json())
    assert back.resolved_patterns == view.resolved_patterns and back.consumer_patterns == (pattern.name,)
