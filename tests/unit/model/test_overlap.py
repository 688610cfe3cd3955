"""The isolation analysis (model/overlap.py) against brute force: whenever real keys of another
entity, built by the runtime from adversarial values, satisfy a pattern's key condition as the
runtime sends it, the model must not have proved the pattern isolated — and it must still prove
a fair share of random cases isolated (it is not "always filter")."""

from __future__ import annotations

import itertools
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, KeyTemplate, Model, overlap
from constructs_lib.runtime import KeyValueError, key_segments, request_params
from constructs_lib.runtime.items import ItemMapper, ItemValidationError

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 2000 if SOAK else 200

LITERALS = ["A", "EU", "ORDERS", "1", "01", "2026", "2026-01", "2026-W01", "ID"]
CHOICES = ["A", "EU", "1", "a#b", "x%y", "ORDERS", "2026"]
FIELD_NAMES = ("f", "g", "h")
BUCKETS = {"timestamp": ("year", "month", "day", "hour", "minute", "week"), "date": ("year", "month", "day", "week")}


@st.composite
def fields(draw: Any) -> dict[str, Field]:
    out = {}
    for name in FIELD_NAMES:
        kind = draw(st.sampled_from(["string", "string", "string", "enum", "number", "date", "timestamp"]))
        if kind == "enum":
            out[name] = Field.enum(*draw(st.lists(st.sampled_from(CHOICES), min_size=1, max_size=3, unique=True)))
        elif kind == "number":
            out[name] = Field.number(draw(st.integers(1, 3)))
        else:
            out[name] = Field(kind)  # type: ignore[arg-type]
    return out


@st.composite
def template(draw: Any, spec: dict[str, Field], max_segments: int = 3) -> str:
    segments = []
    for _ in range(draw(st.integers(1, max_segments))):
        if draw(st.booleans()):
            segments.append(draw(st.sampled_from(LITERALS)))
            continue
        name = draw(st.sampled_from(FIELD_NAMES))
        buckets = BUCKETS.get(spec[name].kind, ())
        bucket = draw(st.sampled_from((None, *buckets))) if buckets else None
        segments.append("{" + name + (f":{bucket}" if bucket else "") + "}")
    return "#".join(segments)


@st.composite
def near(draw: Any, source: str, spec: dict[str, Field]) -> str:
    """Often a template close to ``source`` (collisions are likelier): segments kept, turned into
    a literal or a placeholder, and one maybe added or dropped; else a fresh one."""
    if draw(st.booleans()):
        return draw(template(spec))
    segments = []
    for seg in source.split("#"):
        choice = draw(st.sampled_from(["keep", "keep", "literal", "field"]))
        if choice == "literal":
            seg = draw(st.sampled_from(LITERALS))
        elif choice == "field" or (choice == "keep" and seg.startswith("{")):
            seg = draw(template(spec, max_segments=1).filter(lambda t: t.startswith("{")))
        segments.append(seg)
    change = draw(st.sampled_from(["none", "none", "add", "drop"]))
    if change == "add":
        segments.append(draw(template(spec, max_segments=1)))
    elif change == "drop" and len(segments) > 1:
        segments.pop()
    return "#".join(segments)


@dataclass
class Case:
    model: Model
    op: str
    sharded: bool

    def __repr__(self) -> str:
        def keys(name: str) -> str:
            entity = self.model.entities[name]
            pk, sk = entity.indexes["GSI"].pk_template, entity.indexes["GSI"].sk_template
            kinds = {f: (s.kind, s.width or s.choices) for f, s in entity.fields.items() if f != "id"}
            return f"{name} {pk} / {sk} {kinds}"

        pattern = self.model.resolved_patterns["p"]
        return (f"Case({keys('A')}; {keys('B')}; pattern of A: {self.op} sk_fields={pattern.sk_fields}"
                f"{', sharded' if self.sharded else ''})")


@st.composite
def cases(draw: Any) -> Case:
    spec_a, spec_b = draw(fields()), draw(fields())
    pk_a, sk_a = draw(template(spec_a)), draw(template(spec_a))
    pk_b, sk_b = draw(near(pk_a, spec_b)), draw(near(sk_a, spec_b))
    sharded = draw(st.booleans())
    n_fields = len(KeyTemplate.parse(sk_a).placeholders)
    op = draw(st.sampled_from(["=", "begins_with", "between"] if n_fields else ["=", "begins_with"]))
    given_fields = None
    fields_a = [p.field for p in KeyTemplate.parse(sk_a).placeholders]
    if op == "begins_with":
        # an empty prefix (a template starting with a field, no field given) is refused by the model
        starts_with_field = KeyTemplate.parse(sk_a).segments[0] != sk_a.split("#")[0]
        given_fields = tuple(fields_a[: draw(st.integers(1 if starts_with_field else 0, n_fields))])
    elif op == "between":
        given_fields = tuple(fields_a[: draw(st.integers(1, n_fields))])

    def key(pk: str, sk: str, by: str) -> IndexKey:
        return IndexKey(pk=pk + "#{shard}", sk=sk, shards=2, shard_by=by) if sharded else IndexKey(pk=pk, sk=sk)

    model = Model(
        "overlap",
        entities=[
            Entity("A", pk="TA#{id}", sk="TA", fields={"id": "string", **spec_a}, indexes={"GSI": key(pk_a, sk_a, "id")}),
            Entity("B", pk="TB#{id}", sk="TB", fields={"id": "string", **spec_b}, indexes={"GSI": key(pk_b, sk_b, "id")}),
        ],
        indexes=[Index("GSI")],
        access_patterns=[AccessPattern("p", entity="A", index="GSI", sk=op, sk_fields=given_fields)],  # type: ignore[arg-type]
    )
    return Case(model, op, sharded)


# Brute force ------------------------------------------------------------------------------------
def literals_of(entity: Entity) -> list[str]:
    key = entity.indexes["GSI"]
    return [s for _, t in key.written for s in t.segments if isinstance(s, str)]


def pool(spec: Field, other: Entity, *, stored: bool) -> list[Any]:
    """Adversarial values of a field: the other entity's literals and choices, '#', '%', digits."""
    if spec.kind == "number":
        return sorted({v for v in (0, 1, 12, 100, 10 ** spec.width - 1) if v < 10 ** spec.width})  # type: ignore[operator]
    if spec.kind == "date":
        return ["2026-01-01", "2026-01-02"]
    if spec.kind == "timestamp":
        return ["2026-01-01T00:00:00Z", "2026-01-04T05:06:07.000008Z"]
    if stored and spec.choices:
        return list(spec.choices)
    theirs = literals_of(other) + [c for f in other.fields.values() for c in (f.choices or ())]  # type: ignore[union-attr]
    return list(dict.fromkeys([*theirs[:3], *(spec.choices or ()), *theirs, "a#b", "%", "1", "01"]))[:6]


def assignments(entity: Entity, other: Entity, names: list[str], *, stored: bool) -> list[dict[str, Any]]:
    pools = [pool(entity.field(n), other, stored=stored) for n in names]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*pools)]


def stored_keys(model: Model, entity: Entity, other: Entity) -> dict[str, list[str]]:
    """Every (pk -> sks) the entity's items built from adversarial values carry in the GSI."""
    item_codec = ItemMapper(model)
    names = list(dict.fromkeys(f for _, t in entity.indexes["GSI"].written for f in t.fields))
    out: dict[str, list[str]] = {}
    for n, values in enumerate(assignments(entity, other, names, stored=True)):
        try:
            item = item_codec.build_item(entity, {"id": f"i{n}", **values})
        except (KeyValueError, ItemValidationError):
            continue  # e.g. an hour bucket of a date: refused on write
        out.setdefault(item["GSIPK"], []).append(item["GSISK"])
    return out


def conditions(model: Model, case: Case, *, first: bool = False) -> list[dict[str, Any]]:
    """Every Query the runtime sends for pattern "p" over adversarial values of A's fields."""
    resolved = model.resolved_patterns["p"]
    a, b = model.entities["A"], model.entities["B"]
    item_codec = ItemMapper(model)
    names = list(dict.fromkeys(resolved.pk_fields + resolved.sk_fields))
    out = []
    ranged = resolved.sk_fields[-1] if case.op == "between" else None
    for values in assignments(a, b, names, stored=False)[:1 if first else None]:
        variants = [values]
        if ranged is not None:  # each value alone, and the widest range of the pool
            lows = pool(a.field(ranged), b, stored=False)
            pairs = [(v, v) for v in lows] + [(min(lows, key=str), max(lows, key=str))]
            variants = [{**values, ranged: pair} for pair in pairs]
        for vals in variants:
            # a partition key bucketing the range field is built from an instant of the range
            partitions = sorted({*vals[ranged]}, key=str) if ranged is not None else [None]
            for shard, at in itertools.product((0, 1) if case.sharded else (None,), partitions):
                try:
                    out.append(request_params.query_params(
                        item_codec, "t", resolved, vals if shard is None else {**vals, "shard": shard}, at))
                except KeyValueError:
                    continue  # low above high, the range field in the partition key unbucketed, ...
    return out


def satisfies(params: dict[str, Any], pk: str, sk: str) -> bool:
    """DynamoDB's evaluation of the sent KeyConditionExpression on one key."""
    values = {k: v["S"] for k, v in params["ExpressionAttributeValues"].items()}
    match = re.fullmatch(r"#n\d+ = (:v\d+) AND (.*)", params["KeyConditionExpression"])
    assert match is not None, params["KeyConditionExpression"]
    if values[match[1]] != pk:
        return False
    rest = match[2]
    if m := re.fullmatch(r"#n\d+ = (:v\d+)", rest):
        return sk == values[m[1]]
    if m := re.fullmatch(r"begins_with\(#n\d+, (:v\d+)\)", rest):
        return sk.startswith(values[m[1]])
    m = re.fullmatch(r"#n\d+ BETWEEN (:v\d+) AND (:v\d+)", rest)
    assert m is not None, rest
    low, high = values[m[1]].encode(), values[m[2]].encode()
    return low <= sk.encode() <= high


def collision(model: Model, case: Case) -> tuple[dict[str, Any], str, str] | None:
    theirs = stored_keys(model, model.entities["B"], model.entities["A"])
    for params in conditions(model, case):
        pk = params["ExpressionAttributeValues"][":v0"]["S"]
        for sk in theirs.get(pk, ()):
            if satisfies(params, pk, sk):
                return params, pk, sk
    return None


# Properties ---------------------------------------------------------------------------------------
def test_the_analysis_never_claims_isolation_the_brute_force_refutes() -> None:
    seen: Counter[str] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not SOAK,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(case=cases())
    def check(case: Case) -> None:
        # GIVEN two entities overloading one GSI with random templates, and a random pattern of A
        resolved = case.model.resolved_patterns["p"]
        # WHEN B's real keys (adversarial values) are matched against every condition A's pattern sends
        found = collision(case.model, case)
        isolated = not resolved.entity_filter
        seen["isolated" if isolated else "filtered"] += 1
        # THEN a collision means the model filters, naming B
        if found is not None:
            seen["collision"] += 1
            params, pk, sk = found
            assert not isolated and resolved.intruders == ("B",), (
                f"{case!r}: the model claims pattern {case.op!r} of A isolated, but B's key {pk!r} / {sk!r} satisfies "
                f"{params['KeyConditionExpression']} with {params['ExpressionAttributeValues']}"
            )
        # AND a filtered pattern sends the entity filter
        sent = conditions(case.model, case, first=True)
        assert all(("FilterExpression" in params) == resolved.entity_filter for params in sent)

    check()
    # AND the analysis proves a fair share of the random cases isolated (it is not "always filter"),
    # while the brute force finds collisions in a fair share too (it is not vacuous)
    total = seen["isolated"] + seen["filtered"]
    assert seen["isolated"] >= 0.2 * total and seen["collision"] >= 0.1 * total, seen
    print(f"isolation analysis vs brute force: {dict(seen)}")


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not SOAK)
@given(data=st.data())
def test_identical_keys_are_always_warned(data: Any) -> None:
    # GIVEN two entities with random GSI keys
    spec_a, spec_b = data.draw(fields()), data.draw(fields())
    keys_a = [data.draw(template(spec_a)) for _ in range(2)]
    keys_b = [data.draw(near(t, spec_b)) for t in keys_a]
    model = Model("w", entities=[
        Entity("A", pk="TA#{id}", sk="TA", fields={"id": "string", **spec_a}, indexes={"GSI": tuple(keys_a)}),
        Entity("B", pk="TB#{id}", sk="TB", fields={"id": "string", **spec_b}, indexes={"GSI": tuple(keys_b)}),
    ], indexes=[Index("GSI")])
    # WHEN both entities' real keys are built from adversarial values
    ours = stored_keys(model, model.entities["A"], model.entities["B"])
    theirs = stored_keys(model, model.entities["B"], model.entities["A"])
    shared = [(pk, sk) for pk, sks in ours.items() for sk in set(sks) & set(theirs.get(pk, ()))]
    # THEN a key both build is always warned about
    warned = [w for w in model.warnings() if w.code == "IdenticalIndexKeys"]
    if shared:
        assert warned, f"A and B both build key {shared[0]!r}, but the model does not warn"


@given(st.text())
def test_the_models_escape_is_the_codecs(value: str) -> None:
    # GIVEN any text the codec can escape, THEN the model's copy of the escaping agrees
    try:
        expected = key_segments.escape(value)
    except KeyValueError:
        return  # lone surrogates: refused before any key is built
    assert overlap.escape(value) == expected


# Examples ----------------------------------------------------------------------------------------
def entity(name: str, pk: str, sk: str, **fields: Any) -> Entity:
    return Entity(name, pk=f"T{name}#{{id}}", sk="T", fields={"id": "string", **fields},
                  indexes={"GSI": IndexKey(pk=pk, sk=sk)})


@pytest.mark.parametrize(("ours", "theirs", "op", "sk_fields", "intrudes"), [
    # distinct literal first segments: proved isolated
    (("ORDER#{id}", "ID#{id}"), ("REFUND#{id}", "ID#{id}"), "=", None, False),
    # identical templates: the two shapes of the defect
    (("EMAIL#{e}", "ID#{id}"), ("EMAIL#{e}", "ID#{id}"), "=", None, True),
    (("{e}#ORDERS", "AT#{d}"), ("EU#{e}", "AT#{d}"), "begins_with", None, True),
    (("{e}#ORDERS", "AT#{d}"), ("EU#{e}", "AT#{d}"), "between", ("d",), True),
    # a number of width 3 never equals one of width 2, nor a literal of letters
    (("P#{n}", "X"), ("P#{m}", "X"), "=", None, False),
    (("P#{n}", "X"), ("P#ID", "X"), "=", None, False),
    # an enum whose choices are not the literal; a date never equals a month bucket
    (("P#{s}", "X"), ("P#EU", "X"), "=", None, True),  # the query side is not held to choices
    (("P#EU", "X"), ("P#{s}", "X"), "=", None, False),  # the stored side is
    (("P#{d}", "X"), ("P#{at:month}", "X"), "=", None, False),
    # begins_with a prefix needs one more segment; "=" needs as many
    (("P", "A#{e}"), ("P", "A"), "begins_with", None, False),
    (("P", "A#{e}"), ("P", "A#{e}#B"), "=", None, False),
    (("P", "A#{e}"), ("P", "A#{e}#B"), "begins_with", ("e",), True),
])
def test_examples(ours: tuple[str, str], theirs: tuple[str, str], op: str, sk_fields: Any, intrudes: bool) -> None:
    # GIVEN two entities on one GSI
    spec = {"e": "string", "d": "date", "n": "number:3", "m": "number:2", "s": Field.enum("US", "UK"),
            "at": "timestamp"}
    a, b = entity("A", *ours, **spec), entity("B", *theirs, **spec)
    model = Model("ex", entities=[a, b], indexes=[Index("GSI")],
                  access_patterns=[AccessPattern("p", entity="A", index="GSI", sk=op, sk_fields=sk_fields)])  # type: ignore[arg-type]
    # THEN the analysis names B exactly when B's keys may satisfy the condition
    assert model.resolved_patterns["p"].intruders == (("B",) if intrudes else ())
