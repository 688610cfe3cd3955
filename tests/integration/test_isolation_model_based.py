"""Random overloaded models on DynamoDB Local: every pattern returns exactly the items its key
condition selects, filtered by entity — never another entity's (tables from synthesized
templates; ``CONSTRUCTS_LIB_SOAK=1`` runs 10x the examples)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, KeyTemplate, Model
from constructs_lib.runtime import TableClient, _aws, request_params

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = 80 if SOAK else 8

# GSI key templates that meet in every way the analysis reasons about: identical keys, a field
# facing a literal, a partition starting with a field, prefixes one segment longer.
PKS = ["P#{a}", "{a}#ORDERS", "EU#{a}", "EU#ORDERS", "{b}#ORDERS", "P#{n}"]
SKS = ["ID#{n}", "{n}", "ID#{n}#X", "ID#{a}", "{a}#{n}", "X"]
FIELDS = {"id": "string", "a": "string", "b": Field.enum("EU", "ORDERS"), "n": "number:2"}
VALUES = {"a": ["EU", "ORDERS"], "b": ["EU", "ORDERS"], "n": [1, 12]}


def build_model(keys: list[tuple[str, str]]) -> Model:
    entities, patterns = [], []
    for i, (pk, sk) in enumerate(keys):
        name = f"E{i}"
        entities.append(Entity(name, pk=f"{name}#{{id}}", sk=name, fields=FIELDS,
                               indexes={"GSI": IndexKey(pk=pk, sk=sk)}))
        sk_t = KeyTemplate.parse(sk)
        first = [p.field for p in sk_t.placeholders][:1]
        patterns.append(AccessPattern(f"{name} =", entity=name, index="GSI", sk="="))
        if isinstance(sk_t.segments[0], str):  # (DynamoDB refuses begins_with an empty prefix)
            patterns.append(AccessPattern(f"{name} begins_with", entity=name, index="GSI", sk="begins_with"))
        if first and first[0] not in KeyTemplate.parse(pk).fields:  # (a range of a partition-key field reads no partition)
            patterns.append(AccessPattern(f"{name} between", entity=name, index="GSI", sk="between", sk_fields=first))
    return Model("isolation", entities=entities, indexes=[Index("GSI")], access_patterns=patterns)


def reference(table: TableClient, pattern: str, vals: dict[str, Any]) -> list[str]:
    """The ids the key condition selects (the same Query without its entity filter, read to the
    end), kept when they are of the pattern's entity."""
    resolved = table.model.resolved_patterns[pattern]
    params = request_params.query_params(table.mapper, table.table_name, replace(resolved, entity_filter=False), vals)
    ids, start = [], None
    while True:
        resp = table.client.query(**params, **({"ExclusiveStartKey": start} if start else {}))
        ids += [i["id"]["S"] for i in resp["Items"] if i["_type"]["S"] == resolved.entities[0]]
        start = resp.get("LastEvaluatedKey")
        if not start:
            return sorted(ids)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not SOAK,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(keys=st.lists(st.tuples(st.sampled_from(PKS), st.sampled_from(SKS)), min_size=2, max_size=3))
def test_each_pattern_returns_its_key_conditions_items_of_its_entity_only(
    keys: list[tuple[str, str]], synth_table_template: Callable[..., dict[str, Any]], dynamodb_client: Any,
) -> None:
    from constructs_lib.testing.local_deploy import deploy_template

    # GIVEN a random overloaded model on a table from its synthesized template, and every entity's
    # items for every combination of adversarial values
    model = build_model(keys)
    deployment = deploy_template(synth_table_template(model), client=dynamodb_client, name_prefix="iso-mbt-")
    try:
        (name,) = deployment.tables.values()
        table = TableClient(model, name, client=dynamodb_client)
        combos = [dict(zip(VALUES, c, strict=True)) for c in itertools.product(*VALUES.values())]
        table.batch_write(puts=[(e, {"id": f"{e}-{k}", **v}) for e in model.entities for k, v in enumerate(combos)])
        for pattern, resolved in model.resolved_patterns.items():
            fields = list(dict.fromkeys(resolved.pk_fields + resolved.sk_fields))
            for combo in dict.fromkeys(tuple(c[f] for f in fields) for c in combos):
                vals = dict(zip(fields, combo, strict=True))
                if resolved.sk == "between":
                    last = resolved.sk_fields[-1]
                    vals[last] = (min(VALUES[last], key=str), max(VALUES[last], key=str))
                # WHEN the pattern is read to the end, and in pages of 2
                every = list(table.query_all(pattern, vals))
                paged, cursor = [], None
                while True:
                    page = table.query(pattern, vals, limit=2, cursor=cursor)
                    paged += page.items
                    if (cursor := page.cursor) is None:
                        break
                # THEN both hold exactly the reference's items: of its entity, as the key condition selects
                expected = reference(table, pattern, vals)
                assert sorted(i["id"] for i in every) == expected, (pattern, vals, keys)
                assert sorted(i["id"] for i in paged) == expected, (pattern, vals, keys)
                assert {i["_type"] for i in every} <= {resolved.entities[0]}
    finally:
        deployment.delete()


def test_the_reference_sees_other_entities_where_the_model_filters(
    synth_table_template: Callable[..., dict[str, Any]], dynamodb_client: Any,
) -> None:
    from constructs_lib.testing.local_deploy import deploy_template

    # GIVEN two entities with identical GSI keys (the model filters their "=" patterns)
    model = build_model([("P#{a}", "ID#{n}"), ("P#{a}", "ID#{n}")])
    deployment = deploy_template(synth_table_template(model), client=dynamodb_client, name_prefix="iso-ref-")
    try:
        (name,) = deployment.tables.values()
        table = TableClient(model, name, client=dynamodb_client)
        table.batch_write(puts=[("E0", {"id": "x", "a": "EU", "n": 1}), ("E1", {"id": "y", "a": "EU", "n": 1})])
        resolved = model.resolved_patterns["E0 ="]
        assert resolved.entity_filter
        params = request_params.query_params(table.mapper, name, replace(resolved, entity_filter=False), {"a": "EU", "n": 1})
        # WHEN the key condition is read without the entity filter
        raw = _aws.call(dynamodb_client, "query", **params)["Items"]
        # THEN it selects both entities' items (so the property above is not vacuous)
        assert sorted(i["_type"]["S"] for i in raw) == ["E0", "E1"]
        assert [i["id"] for i in table.query("E0 =", a="EU", n=1).items] == ["x"]
    finally:
        deployment.delete()
