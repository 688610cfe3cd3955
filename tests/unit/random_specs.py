"""Random small models as plain data, shared by the fingerprint and slice property tests.

A spec is ``{"entities": {name: {"kind": at's kind, "extra": [fields], "indexes": {index:
when_present or None}, optional "sk" / "gsi_pk": templates}}, "indexes": {name: projection}}``
plus the test's own ``"patterns"``. Entity ``E`` has pk ``E#{id}``, sk ``E#{at}`` and, per
index ``G``, keys ``E#{grp}`` (or its ``gsi_pk``) / ``E#{at}``, sparse on ``flag`` when the rule
says so.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from constructs_lib.model import Entity, Field, Index, IndexKey

KINDS = ("string", "number", "timestamp", "date")
PROJECTIONS: tuple[Any, ...] = ("ALL", "KEYS_ONLY", ("note",))
Spec = dict[str, Any]


def build_tables(spec: Spec) -> tuple[list[Entity], list[Index]]:
    """The entities and indexes ``spec`` describes."""
    entities = []
    for name, e in spec["entities"].items():
        fields = {"id": Field(), "at": Field(e["kind"], width=12 if e["kind"] == "number" else None),
                  "grp": Field(), **{f: Field() for f in e["extra"]}}
        indexes = {g: IndexKey(pk=e.get("gsi_pk", f"{name}#{{grp}}"), sk=f"{name}#{{at}}", when_present=rule)
                   for g, rule in e["indexes"].items()}
        entities.append(Entity(name, pk=f"{name}#{{id}}", sk=e.get("sk", f"{name}#{{at}}"), fields=fields,
                               indexes=indexes))
    return entities, [Index(g, projection=p) for g, p in spec["indexes"].items()]


@st.composite
def table_specs(draw: st.DrawFn) -> Spec:
    """1-3 entities, 0-3 GSIs each written by at least one entity (sparse or not), random projections."""
    names = [f"E{n}" for n in range(draw(st.integers(1, 3)))]
    gsis = [f"GSI{n}" for n in range(draw(st.integers(0, 3)))]
    entities: dict[str, Any] = {
        name: {"kind": draw(st.sampled_from(KINDS)), "extra": draw(st.lists(st.sampled_from(["a", "b"]), unique=True)),
               "indexes": {}} for name in names
    }
    for n, g in enumerate(gsis):  # every index has a writer, maybe more
        writers = {names[n % len(names)]} | set(draw(st.lists(st.sampled_from(names), unique=True)))
        for writer in writers:
            entities[writer]["indexes"][g] = draw(st.sampled_from([None, "flag"]))
    return {"entities": entities, "indexes": {g: draw(st.sampled_from(PROJECTIONS)) for g in gsis}}
