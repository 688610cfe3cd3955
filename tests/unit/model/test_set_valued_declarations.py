"""Set-valued declarations are sets (ADR 0046): the order they are written in and repeated values
change neither the model JSON nor any fingerprint — ``when_equals`` values, INCLUDE projections,
``Field`` choices and ``required``. Models written by an older constructs_lib, which kept the
declared order, still read, and their fingerprints change exactly where a set was out of order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.model import fingerprints as fp
from constructs_lib.model.contract_file import build_contract, contract_json, read_contract
from constructs_lib.model.slices import PublishedFingerprints, check_slice, published_json, read_published, slice_of

GOLDEN = Path(__file__).parent / "golden"


def orders(status: Sequence[str], pending: Sequence[str], projection: Sequence[str],
           required: Sequence[str] = ("status",)) -> Model:
    """A model whose set-valued declarations are the arguments, passed through as written."""
    order = Entity(
        "Order", pk="USER#{user_id}", sk="ORDER#{order_id}",
        fields={"user_id": "string", "order_id": "string", "status": Field.enum(*status)},
        indexes={"GSI1": IndexKey(pk="STATUS#{status}", sk="{order_id}", when_equals={"status": pending}),
                 "ByStatus": IndexKey(sk="{status}#{order_id}", when_equals={"status": pending})},
        required=required, attributes={"total": "number", "note": "string"},
    )
    return Model("shop", entities=[order],
                 indexes=[Index("GSI1", projection=tuple(projection)), Index("ByStatus", kind="LSI")],
                 access_patterns=[AccessPattern("pending", entity="Order", index="GSI1")])


def every_print(model: Model) -> tuple[Any, ...]:
    return (model.to_json(), fp.fingerprint(model), fp.entity_fingerprints(model), fp.index_fingerprints(model),
            published_json(model))


def test_the_order_of_sparse_values_an_include_projection_and_choices_changes_nothing() -> None:
    # GIVEN one model declared twice, each set-valued declaration in another order (the reported cases)
    first = orders(status=("NEW", "PAID"), pending=["PAID", "NEW"], projection=("total", "note"))
    second = orders(status=("PAID", "NEW"), pending=["NEW", "PAID"], projection=("note", "total"))
    # WHEN serialized and fingerprinted
    # THEN the JSON and every fingerprint are the same, and the resolved forms are sorted
    assert every_print(first) == every_print(second)
    assert first.entity("Order").fields["status"].choices == ("NEW", "PAID")
    assert first.entity("Order").indexes["GSI1"].when_equals == {"status": ("NEW", "PAID")}
    assert first.index("GSI1").projection == ("note", "total")
    # AND a consumer built with one is compatible with a contract of the other (no refusal at cold start)
    assert check_slice(slice_of(first), read_published(published_json(second), source="test"), model=first) == []


def test_repeated_values_normalize_away() -> None:
    # GIVEN a sparse value, a projected attribute, a choice and a required name each given twice
    twice = orders(status=("NEW", "PAID", "NEW"), pending=["NEW", "PAID", "NEW"], projection=("note", "total", "note"),
                   required=("status", "status"))
    once = orders(status=("NEW", "PAID"), pending=["NEW", "PAID"], projection=("note", "total"))
    # WHEN serialized / THEN it is the model with each value once
    assert every_print(twice) == every_print(once)
    assert twice.entity("Order").required == ("status",)


def test_the_order_of_required_attributes_changes_nothing() -> None:
    # GIVEN required attributes in two orders / WHEN serialized / THEN the JSON is the same, sorted
    a = orders(("NEW",), ["NEW"], ("note",), required=("status", "note", "total"))
    b = orders(("NEW",), ["NEW"], ("note",), required=["total", "status", "note"])
    assert a.to_json() == b.to_json() and a.entity("Order").required == ("note", "status", "total")


def test_the_declarations_keep_what_was_written() -> None:
    # GIVEN declarations out of order / WHEN a model is built from them
    status = Field.enum("PAID", "NEW")
    index = Index("GSI1", projection=("total", "note"))
    key = IndexKey(pk="S#{status}", sk="{order_id}", when_equals={"status": ["PAID", "NEW"]})
    Model("m", entities=[Entity("Order", pk="O#{order_id}", sk="O", fields={"order_id": "string", "status": status},
                                indexes={"GSI1": key}, required=["status", "order_id"])], indexes=[index])
    # THEN each declared object is as written (only the resolved model is sorted)
    assert status.choices == ("PAID", "NEW") and index.projection == ("total", "note")
    assert key.when_equals == {"status": ["PAID", "NEW"]}


def test_a_required_name_given_as_one_string_is_refused() -> None:
    # GIVEN required="email" (one string, which would read as its letters) / WHEN declared / THEN it is refused
    try:
        Entity("User", pk="U#{id}", fields=["id"], required="email")
    except ValueError as exc:
        assert "required 'email'" in str(exc) and "('email',)" in str(exc)
    else:  # pragma: no cover - the assertion of the test
        raise AssertionError("required='email' was accepted")


# The property ------------------------------------------------------------------------------------
_VALUES = st.sampled_from(["NEW", "PAID", "SHIPPED", "CANCELLED", "HELD", "B", "a", "Z9"])
_ATTRS = st.sampled_from(["total", "note", "channel", "b", "A", "zeta"])


@st.composite
def written(draw: st.DrawFn, values: frozenset[str]) -> Any:
    """``values`` as a user may write them: in any order, some repeated, as a list, tuple or set."""
    items = draw(st.permutations(sorted(values)))
    repeats = draw(st.lists(st.sampled_from(sorted(values)), max_size=3))
    mixed = draw(st.permutations([*items, *repeats]))
    form = draw(st.sampled_from(["list", "tuple", "set"]))
    return list(mixed) if form == "list" else tuple(mixed) if form == "tuple" else set(mixed)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.frozensets(_VALUES, min_size=1, max_size=5), st.frozensets(_ATTRS, min_size=1, max_size=4),
       st.frozensets(st.sampled_from(["status", "note", "total"]), min_size=1))
def test_every_permutation_and_repetition_gives_one_model(
    data: st.DataObject, choices: frozenset[str], projection: frozenset[str], required: frozenset[str],
) -> None:
    # GIVEN a model whose sets are written sorted, each value once
    pending = data.draw(st.frozensets(st.sampled_from(sorted(choices)), min_size=1))
    reference = orders(sorted(choices), sorted(pending), sorted(projection), sorted(required))
    # WHEN each set is written in another order, with repeats, as a list, tuple or set
    other = orders(tuple(data.draw(written(choices))), data.draw(written(pending)),
                   tuple(data.draw(written(projection))), data.draw(written(required)))
    # THEN the model JSON, the whole, per-entity and per-index fingerprints and the published document agree
    assert every_print(other) == every_print(reference)
    # AND the model reads back from its JSON as itself
    assert Model.from_json(other.to_json()) == reference


# Older files and parameters ----------------------------------------------------------------------
def test_models_an_older_version_wrote_read_as_their_sorted_form() -> None:
    # GIVEN every example model's JSON and fingerprints as written before sets were sorted
    before = json.loads((GOLDEN / "models_declared_order.json").read_text())
    now = json.loads((GOLDEN / "models.json").read_text())
    changed = []
    for name, old in before.items():
        data = json.loads(old["compact"])
        # WHEN read / THEN it is today's model (its sets sorted), and canonical() says the same
        assert Model.from_json(old["compact"]).to_json(compact=True) == now[name]["compact"]
        assert fp.canonical(data) == json.loads(now[name]["compact"])
        # AND a fingerprint changed exactly where a part it hashes held a set out of order
        for kind, schema in (("entities", fp.entity_schema), ("indexes", fp.index_schema)):
            for part, digest in old[kind].items():
                in_order = schema(data, part) == schema(fp.canonical(data), part)
                assert (digest == now[name][kind][part]) is in_order, (name, part)
                if not in_order:
                    changed.append(f"{name} {part}")
        assert (old["fingerprint"] == now[name]["fingerprint"]) is (fp.key_schema(data) == fp.key_schema(
            fp.canonical(data)))
    # (the examples that declared a set out of order: Order's status choices, kitchen sink's when_equals)
    assert "shop Order" in changed and "iot Sensor" not in changed and "viral Video" not in changed


def legacy_contract(tmp_path: Path) -> tuple[Path, Model]:
    """A contract file as an older constructs_lib wrote it: sets in declared order, hashed so."""
    model = orders(("PAID", "NEW"), ["PAID", "NEW"], ("total", "note"))
    document = build_contract(model)
    data = document["model"]
    data["entities"][0]["fields"]["status"]["choices"] = ["PAID", "NEW"]
    data["entities"][0]["indexes"]["GSI1"]["when_equals"] = {"status": ["PAID", "NEW"]}
    data["indexes"][0]["projection"] = ["total", "note"]
    document["fingerprints"] = {"model": fp.fingerprint(data), "entities": fp.entity_fingerprints(data),
                                "indexes": fp.index_fingerprints(data)}
    document["table"]["indexes"][0]["projection"]["non_key_attributes"] = ["_type", "total", "note"]
    path = tmp_path / "shop.contract.json"
    path.write_text(contract_json(document), encoding="utf-8")
    return path, model


def test_a_contract_file_an_older_version_wrote_still_reads(tmp_path: Path) -> None:
    # GIVEN a committed pin written before sets were sorted (its fingerprints hash the declared order)
    path, model = legacy_contract(tmp_path)
    written = json.loads(path.read_text())["fingerprints"]
    assert written["entities"]["Order"] != fp.entity_fingerprints(model)["Order"]
    # WHEN read / THEN it is accepted (it was not edited), and reports the fingerprints of its sorted model
    contract = read_contract(path, Model)
    assert contract.model == model and contract.entity_fingerprints == fp.entity_fingerprints(model)
    assert contract.fingerprint == fp.fingerprint(model)
    # AND a consumer built from it holds against the producer's current contract
    assert check_slice(slice_of(contract.model), read_published(published_json(model), source="now")) == []


def test_a_parameter_an_older_producer_published_serves_a_consumer_of_the_same_model(tmp_path: Path) -> None:
    # GIVEN the published fingerprints of an older producer (declared order) with its model
    path, model = legacy_contract(tmp_path)
    old = json.loads(path.read_text())
    published = PublishedFingerprints("shop", old["fingerprints"]["model"], old["fingerprints"]["entities"],
                                      old["fingerprints"]["indexes"], old["model"], "older producer")
    # WHEN a consumer of this version checks its slice against them
    # THEN it holds: the same model, sorted, is what the consumer was built with
    assert check_slice(slice_of(model), published, model=model) == []
    # AND a real change still breaks it
    changed = orders(("PAID", "NEW"), ["PAID"], ("total", "note"))
    assert [b.name for b in check_slice(slice_of(changed), published, model=changed)] == ["Order", "ByStatus", "GSI1"]
