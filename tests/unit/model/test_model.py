"""Unit tests for constructs_lib.model: validation catalogue, pattern resolution, warnings, JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from constructs_lib.model import (
    FORMAT,
    MAX_GSIS,
    MAX_LSIS,
    VERSION,
    AccessPattern,
    AccessPatternError,
    Entity,
    Field,
    Index,
    IndexKey,
    Model,
    ModelError,
    ModelFormatError,
    ModelValidationError,
    TemplateError,
)
from examples.shop.model import shop_model

# --------------------------------------------------------------------------- helpers


def user(**overrides: Any) -> Entity:
    spec: dict[str, Any] = {"pk": "USER#{user_id}", "sk": "PROFILE", "fields": {"user_id": "string"}}
    spec.update(overrides)
    return Entity("User", **spec)


def order(**overrides: Any) -> Entity:
    spec: dict[str, Any] = {
        "pk": "USER#{user_id}",
        "sk": "ORDER#{created_at}#{order_id}",
        "fields": {"user_id": "string", "order_id": "string", "created_at": "timestamp"},
    }
    spec.update(overrides)
    return Entity("Order", **spec)


def model(
    entities: Sequence[Entity] | None = None,
    *,
    indexes: Sequence[Index] = (),
    access_patterns: Sequence[AccessPattern] = (),
    **kw: Any,
) -> Model:
    return Model(
        "m",
        entities=list(entities) if entities is not None else [user(), order()],
        indexes=indexes,
        access_patterns=access_patterns,
        **kw,
    )


def rejects(exc_type: type[ModelError], build: Callable[[], object], *needles: str) -> str:
    """Assert ``build()`` raises ``exc_type`` whose message contains every needle."""
    with pytest.raises(exc_type) as info:
        build()
    message = str(info.value)
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    return message


# --------------------------------------------------------------------------- names and limits


def test_duplicate_entity_name() -> None:
    # GIVEN two entities with the same name
    # WHEN a model is built / THEN the duplicate name is reported
    rejects(ModelValidationError, lambda: model([user(), user()]), "duplicate entity name 'User'")


def test_duplicate_index_name() -> None:
    # GIVEN two indexes named GSI1
    e = user(indexes={"GSI1": IndexKey(pk="EMAIL#{user_id}", sk="USER")})
    # WHEN a model is built / THEN the duplicate index name is reported
    rejects(
        ModelValidationError, lambda: model([e], indexes=[Index("GSI1"), Index("GSI1")]), "duplicate index name 'GSI1'"
    )


def test_duplicate_access_pattern_name() -> None:
    # GIVEN two access patterns with the same name
    patterns = [AccessPattern("get user", entity="User", sk="="), AccessPattern("get user", entity="User")]
    # WHEN a model is built / THEN the duplicate pattern name is reported
    rejects(
        ModelValidationError,
        lambda: model(access_patterns=patterns),
        "duplicate access pattern name 'get user'",
    )


def test_model_without_entities() -> None:
    # GIVEN no entities / WHEN a model is built / THEN the model name and the rule are reported
    rejects(ModelValidationError, lambda: Model("empty", entities=[]), "'empty'", "no entities")


def test_more_than_20_gsis() -> None:
    # GIVEN 21 GSIs, each used by an entity (so only the limit is broken)
    n = MAX_GSIS + 1
    entities = [
        Entity(f"E{i}", pk=f"E{i}#{{id}}", fields=["id"], indexes={f"GSI{i}": IndexKey(pk=f"X{i}#{{id}}", sk="S")})
        for i in range(n)
    ]
    indexes = [Index(f"GSI{i}") for i in range(n)]
    # WHEN a model is built / THEN the count and the limit are named
    rejects(ModelValidationError, lambda: model(entities, indexes=indexes), "21 GSIs", "at most 20")


def test_exactly_20_gsis_is_allowed() -> None:
    # GIVEN 20 GSIs, each used by an entity
    entities = [
        Entity(f"E{i}", pk=f"E{i}#{{id}}", fields=["id"], indexes={f"GSI{i}": IndexKey(pk=f"X{i}#{{id}}", sk="S")})
        for i in range(MAX_GSIS)
    ]
    # WHEN a model is built
    m = model(entities, indexes=[Index(f"GSI{i}") for i in range(MAX_GSIS)])
    # THEN it holds all of them
    assert len(m.gsis) == MAX_GSIS


def test_more_than_5_lsis() -> None:
    # GIVEN 6 LSIs on a table with a sort key, each used by the entity
    n = MAX_LSIS + 1
    e = user(
        fields={"user_id": "string", "a": "string"},
        indexes={f"LSI{i}": IndexKey(sk=f"L{i}#{{a}}") for i in range(n)},
    )
    # WHEN a model is built / THEN the count and the limit are named
    rejects(
        ModelValidationError,
        lambda: model([e], indexes=[Index(f"LSI{i}", kind="LSI") for i in range(n)]),
        "6 LSIs",
        "at most 5",
    )


def test_lsi_with_pk_attribute() -> None:
    # GIVEN an LSI with its own partition-key attribute
    # WHEN it is declared / THEN the attribute and the rule are named
    rejects(ModelValidationError, lambda: Index("LSI1", kind="LSI", pk_attribute="LSI1PK"), "'LSI1PK'", "shares")


def test_lsi_without_sort_key_flag() -> None:
    # GIVEN an LSI declared without a sort key / WHEN declared / THEN rejected naming it
    rejects(ModelValidationError, lambda: Index("LSI1", kind="LSI", sort_key=False), "'LSI1'", "sort key")


def test_lsi_on_table_without_sort_key() -> None:
    # GIVEN entities without sk templates (a table without sort key) and an LSI
    e = Entity("User", pk="USER#{user_id}", fields=["user_id"], indexes={"LSI1": IndexKey(sk="A")})
    # WHEN a model is built / THEN the LSI is named with the rule
    rejects(
        ModelValidationError,
        lambda: model([e], indexes=[Index("LSI1", kind="LSI")]),
        "'LSI1'",
        "needs a table sort key",
    )


def test_lsi_key_with_pk_template() -> None:
    # GIVEN an entity giving a pk template for an LSI
    e = user(indexes={"LSI1": IndexKey(pk="X#{user_id}", sk="A")})
    # WHEN a model is built / THEN the template is named
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("LSI1", kind="LSI")]), "'X#{user_id}'", "LSI")


@pytest.mark.parametrize("name", ["ab", "table", "has space", "", None])
def test_bad_index_name(name: object) -> None:
    # GIVEN an invalid index name / WHEN declared / THEN the name is reported
    rejects(ModelValidationError, lambda: Index(name), repr(name))  # type: ignore[arg-type]


@pytest.mark.parametrize("projection", ["SOME", (), ("a", ""), ("a", 1)])
def test_bad_projection(projection: object) -> None:
    # GIVEN an invalid projection / WHEN declared / THEN it is reported
    rejects(ModelValidationError, lambda: Index("GSI1", projection=projection), repr(projection))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["1User", "", "a-b", "x" * 65, None])
def test_bad_entity_name(name: object) -> None:
    # GIVEN an invalid entity name / WHEN declared / THEN the name is reported
    rejects(ModelValidationError, lambda: Entity(name, pk="X#{id}", fields=["id"]), repr(name))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["1m", "", "a b", None])
def test_bad_model_name(name: object) -> None:
    # GIVEN an invalid model name / WHEN a model is built / THEN the name is reported
    rejects(ModelValidationError, lambda: Model(name, entities=[user()]), repr(name))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- entities and templates


def test_constant_table_pk() -> None:
    # GIVEN an entity whose table PK has no placeholder
    e = Entity("Config", pk="CONFIG", sk="GLOBAL")
    # WHEN a model is built / THEN the template and the hot-partition rule are named
    rejects(ModelValidationError, lambda: model([e]), "'CONFIG'", "constant")


def test_bad_template_surfaces_at_entity_declaration() -> None:
    # GIVEN an entity with a glued placeholder / WHEN declared / THEN TemplateError names entity and template
    rejects(TemplateError, lambda: Entity("User", pk="USER{user_id}", fields=["user_id"]), "'User'", "'USER{user_id}'")


def test_bad_index_template_surfaces_where_the_entity_is_declared() -> None:
    # GIVEN an index template with an empty segment
    # WHEN the entity is declared / THEN TemplateError names the index and the template
    rejects(TemplateError, lambda: user(indexes={"GSI1": IndexKey(pk="EMAIL##{user_id}", sk="USER")}),
            "'GSI1'", "'EMAIL##{user_id}'")


def test_unknown_template_field() -> None:
    # GIVEN a template that uses an undeclared field
    e = user(sk="PROFILE#{region}")
    # WHEN a model is built / THEN the field and the template are named
    rejects(ModelValidationError, lambda: model([e]), "unknown field 'region'", "'PROFILE#{region}'")


def test_unknown_index_template_field() -> None:
    # GIVEN a GSI template using an undeclared field
    e = user(indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="USER")})
    # WHEN a model is built / THEN the field is named
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("GSI1")]), "unknown field 'email'", "'GSI1'")


def test_bucket_on_string_field() -> None:
    # GIVEN a bucket applied to a string field
    e = Entity("Sensor", pk="SENSOR#{sensor_id}#{at:month}", fields=["sensor_id", "at"])
    # WHEN a model is built / THEN the bucket, field and kind are named
    rejects(ModelValidationError, lambda: model([e]), "'month'", "'at'", "string field")


def test_bucket_on_date_field_is_allowed() -> None:
    # GIVEN a month bucket of a date field
    e = Entity("Day", pk="DAY#{d:month}", sk="{d}", fields={"d": "date"})
    # WHEN a model is built / THEN it is accepted
    assert model([e]).entities["Day"].pk_template.placeholders[0].bucket == "month"


def test_entity_without_sk_when_others_have_one() -> None:
    # GIVEN one entity with an sk template and one without
    e = Entity("Product", pk="PRODUCT#{sku}", fields=["sku"])
    # WHEN a model is built / THEN the entity without sk is named
    rejects(ModelValidationError, lambda: model([user(), e]), "entity 'Product'", "no sk template")


def test_index_key_for_undeclared_index() -> None:
    # GIVEN an entity with keys for an index the model does not declare
    e = user(indexes={"GSI9": IndexKey(pk="X#{user_id}", sk="Y")})
    # WHEN a model is built / THEN the index is named
    rejects(ModelValidationError, lambda: model([e]), "'GSI9'", "does not declare")


def test_gsi_key_without_pk() -> None:
    # GIVEN a GSI key with only a sort-key template
    e = user(indexes={"GSI1": IndexKey(sk="USER")})
    # WHEN a model is built / THEN the index and the rule are named
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("GSI1")]), "'GSI1'", "needs a pk template")


def test_sk_for_index_without_sort_key() -> None:
    # GIVEN a GSI without sort key, and an entity giving an sk template for it
    e = user(indexes={"GSI1": IndexKey(pk="X#{user_id}", sk="USER")})
    # WHEN a model is built / THEN the sk template is named
    rejects(
        ModelValidationError, lambda: model([e], indexes=[Index("GSI1", sort_key=False)]), "'USER'", "no sort key"
    )


def test_missing_sk_for_index_with_sort_key() -> None:
    # GIVEN a GSI with sort key, and an entity giving only a pk template
    e = user(indexes={"GSI1": IndexKey(pk="X#{user_id}")})
    # WHEN a model is built / THEN the sort-key attribute is named
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("GSI1")]), "'GSI1SK'", "give an sk template")


def test_index_declared_but_unused() -> None:
    # GIVEN an index no entity has keys for / WHEN a model is built / THEN it is named
    rejects(ModelValidationError, lambda: model(indexes=[Index("GSI1")]), "'GSI1'", "no entity has keys")


def test_bad_index_key_spec() -> None:
    # GIVEN an index key that is neither IndexKey nor a (pk, sk) tuple / WHEN declared / THEN it is named
    rejects(ModelValidationError, lambda: user(indexes={"GSI1": "EMAIL#{e}"}), "'GSI1'", "'EMAIL#{e}'")


def test_index_key_tuple_form() -> None:
    # GIVEN a (pk, sk) tuple for an index key / WHEN declared / THEN it stays as written and resolves to an IndexKey
    e = user(indexes={"GSI1": ("X#{user_id}", "Y")})
    assert e.indexes["GSI1"] == ("X#{user_id}", "Y")
    assert e.parts().indexes["GSI1"] == IndexKey(pk="X#{user_id}", sk="Y")


@pytest.mark.parametrize("values", [(), ("",), 3])
def test_bad_when_equals(values: object) -> None:
    # GIVEN a sparse condition with no usable values / WHEN declared / THEN the attribute is named
    rejects(ModelValidationError, lambda: IndexKey(pk="X", sk="Y", when_equals={"status": values}), "'status'")


def test_when_equals_must_be_a_mapping() -> None:
    # GIVEN when_equals given as a bare string / WHEN declared / THEN rejected naming it
    rejects(ModelValidationError, lambda: IndexKey(pk="X", sk="Y", when_equals="PENDING"), "'PENDING'", "mapping")


def test_when_equals_normalizes_values() -> None:
    # GIVEN sparse conditions as a string, a set and a list holding a value twice
    key = IndexKey(pk="X", sk="Y", when_equals={"b": {"Z", "A", "M"}, "a": "ONE", "c": ["Q", "P", "Q"]})
    # WHEN normalized / THEN attributes are sorted, values become sorted tuples, each value once
    assert key.frozen_when_equals() == {"a": ("ONE",), "b": ("A", "M", "Z"), "c": ("P", "Q")}
    assert list(key.frozen_when_equals()) == ["a", "b", "c"]


# --------------------------------------------------------------------------- attributes


@pytest.mark.parametrize("ttl", ["PK", "SK", "_type", "GSI1PK", "GSI1SK"])
def test_ttl_attribute_equal_to_key_attribute(ttl: str) -> None:
    # GIVEN a TTL attribute that is also a key/entity attribute
    e = user(indexes={"GSI1": IndexKey(pk="X#{user_id}", sk="Y")})
    # WHEN a model is built / THEN the clashing name is reported
    rejects(
        ModelValidationError,
        lambda: model([e], indexes=[Index("GSI1")], ttl_attribute=ttl),
        f"attribute name {ttl!r}",
        "ttl_attribute",
    )


def test_ttl_attribute_equal_to_template_field() -> None:
    # GIVEN a TTL attribute that is a key-template input
    # WHEN a model is built / THEN the field and its clash with the TTL attribute are reported
    rejects(ModelValidationError, lambda: model(ttl_attribute="created_at"), "'created_at'", "ttl_attribute")


def test_ttl_attribute_may_be_required() -> None:
    # GIVEN an entity that requires the TTL attribute on every item (it is no key input)
    e = user(required=("expires_at",))
    # WHEN a model is built
    m = model([e], ttl_attribute="expires_at")
    # THEN it is accepted
    assert m.entities["User"].required == ("expires_at",)


def test_ttl_attribute_as_version_or_sparse_input_is_rejected() -> None:
    # GIVEN the TTL attribute reused as version attribute, or as a sparse-index condition
    as_version = user(version_attribute="expires_at")
    as_sparse = user(indexes={"GSI1": IndexKey(pk="X#{user_id}", sk="Y", when_present="expires_at")})
    # WHEN models are built / THEN both are rejected naming the attribute
    rejects(ModelValidationError, lambda: model([as_version], ttl_attribute="expires_at"), "'expires_at'", "ttl")
    rejects(
        ModelValidationError,
        lambda: model([as_sparse], indexes=[Index("GSI1")], ttl_attribute="expires_at"),
        "'expires_at'",
        "ttl",
    )


def test_version_attribute_used_as_key_input() -> None:
    # GIVEN a version attribute that also feeds a GSI template
    e = user(
        fields={"user_id": "string", "rev": "number:6"},
        indexes={"GSI1": IndexKey(pk="X#{user_id}", sk="REV#{rev}")},
        version_attribute="rev",
    )
    # WHEN a model is built / THEN the version attribute is named
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("GSI1")]), "version_attribute 'rev'", "key input")


def test_version_attribute_used_as_sparse_condition() -> None:
    # GIVEN a version attribute used as a sparse-index condition
    e = user(
        indexes={"GSI1": IndexKey(pk="X#{user_id}", sk="Y", when_present="version")}, version_attribute="version"
    )
    # WHEN a model is built / THEN the version attribute is named
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("GSI1")]), "'version'", "key input")


@pytest.mark.parametrize("name", ["PK", "SK", "_type"])
def test_reserved_field_name(name: str) -> None:
    # GIVEN a declared field named like a key/entity attribute
    e = user(fields={"user_id": "string", name: "string"})
    # WHEN a model is built / THEN the field and its reserved role are named
    rejects(ModelValidationError, lambda: model([e]), f"attribute {name!r}", "reserved")


def test_reserved_gsi_key_attribute_as_required() -> None:
    # GIVEN an entity requiring an attribute that is a GSI key attribute
    e = user(indexes={"GSI1": IndexKey(pk="X#{user_id}", sk="Y")}, required=("GSI1PK",))
    # WHEN a model is built / THEN it is named as reserved
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("GSI1")]), "'GSI1PK'", "reserved")


def test_duplicate_custom_key_attributes() -> None:
    # GIVEN a GSI whose pk attribute equals the table's sk attribute
    e = user(indexes={"GSI1": IndexKey(pk="X#{user_id}", sk="Y")})
    # WHEN a model is built / THEN the clash is named
    rejects(ModelValidationError, lambda: model([e], indexes=[Index("GSI1", pk_attribute="SK")]), "'SK'", "both")


# --------------------------------------------------------------------------- fields


@pytest.mark.parametrize("width", [0, 39, True, False, None, "10", 1.5])
def test_number_field_width(width: object) -> None:
    # GIVEN an invalid number width / WHEN a Field is declared / THEN the width is named
    rejects(ModelValidationError, lambda: Field("number", width=width), f"width {width!r}")  # type: ignore[arg-type]


@pytest.mark.parametrize("width", [1, 38])
def test_number_field_width_bounds_are_inclusive(width: int) -> None:
    # GIVEN the extreme legal widths / WHEN declared / THEN accepted
    assert Field.number(width).width == width


def test_width_on_non_number_field() -> None:
    # GIVEN a width on a string field / WHEN declared / THEN rejected naming it
    rejects(ModelValidationError, lambda: Field("string", width=4), "width 4", "'string'")


def test_unknown_field_kind() -> None:
    # GIVEN an unknown kind / WHEN declared / THEN it is named
    rejects(ModelValidationError, lambda: Field("blob"), "'blob'")  # type: ignore[arg-type]


@pytest.mark.parametrize("choices", [(), ("",), ("A", 1)])
def test_bad_choices(choices: tuple) -> None:
    # GIVEN unusable enum choices / WHEN declared / THEN rejected
    rejects(ModelValidationError, lambda: Field("string", choices=choices), "choices")


def test_choices_on_number_field() -> None:
    # GIVEN choices on a number field / WHEN declared / THEN rejected
    rejects(ModelValidationError, lambda: Field("number", width=2, choices=("1",)), "string field")


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("number", "needs a width"),
        ("number:", "needs a width"),
        ("number:x", "needs a width"),
        ("number:\u00b2", "needs a width"),
        ("number:-1", "needs a width"),
        ("number:0", "width 0"),
        ("number:39", "width 39"),
        ("string:5", "only number fields"),
        ("timestamp:3", "only number fields"),
        ("blob", "must be a Field"),
        ("", "must be a Field"),
        (5, "must be a Field"),
        (None, "must be a Field"),
    ],
)
def test_bad_field_spec(spec: object, needle: str) -> None:
    # GIVEN a bad field spec string in an entity's fields / WHEN declared / THEN entity, field and spec are named
    message = rejects(ModelValidationError, lambda: Entity("User", pk="U#{f}", fields={"f": spec}), needle)
    assert "'User'" in message or "width" in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("string", Field()),
        ("timestamp", Field.timestamp()),
        ("date", Field.date()),
        ("number:8", Field.number(8)),
        (Field.enum("A", "B"), Field("string", choices=("A", "B"))),
    ],
)
def test_good_field_specs(spec: object, expected: Field) -> None:
    # GIVEN a good field spec / WHEN coerced / THEN it becomes the expected Field
    assert Field.coerce(spec, where="test") == expected


def test_fields_as_plain_string_rejected() -> None:
    # GIVEN fields passed as one string (a common slip for a one-element list)
    # WHEN declared / THEN rejected naming the value
    rejects(ModelValidationError, lambda: Entity("User", pk="U#{user_id}", fields="user_id"), "'user_id'")


# --------------------------------------------------------------------------- access patterns


def test_pattern_unknown_index() -> None:
    # GIVEN a pattern on an index the model lacks
    p = AccessPattern("by email", entity="User", index="GSI7")
    # WHEN a model is built / THEN the pattern and index are named
    rejects(AccessPatternError, lambda: model(access_patterns=[p]), "'by email'", "'GSI7'", "does not exist")


def test_pattern_unknown_entity() -> None:
    # GIVEN a pattern on an entity the model lacks
    p = AccessPattern("get invoice", entity="Invoice")
    # WHEN a model is built / THEN the pattern and entity are named
    rejects(AccessPatternError, lambda: model(access_patterns=[p]), "'get invoice'", "'Invoice'")


def test_pattern_entity_without_keys_in_index_needs_scan() -> None:
    # GIVEN GSI1 used by Order only, and a pattern reading Users there
    o = order(indexes={"GSI1": IndexKey(pk="ORDER#{order_id}", sk="ORDER")})
    p = AccessPattern("users by email", entity="User", index="GSI1")
    # WHEN a model is built
    message = rejects(
        AccessPatternError, lambda: model([user(), o], indexes=[Index("GSI1")], access_patterns=[p]), "'users by email'"
    )
    # THEN the message explains that only a Scan could serve it
    assert "Scan" in message
    assert "'User'" in message and "'GSI1'" in message


def test_range_condition_on_constant_sk() -> None:
    # GIVEN a range condition on the constant sort key PROFILE
    p = AccessPattern("profiles after", entity="User", sk=">")
    # WHEN a model is built / THEN pattern and template are named
    rejects(AccessPatternError, lambda: model(access_patterns=[p]), "'profiles after'", "'PROFILE'", "constant")


def test_sk_condition_on_index_without_sort_key() -> None:
    # GIVEN a GSI without sort key and a pattern with an sk condition on it
    u = user(fields={"user_id": "string", "email": "string"}, indexes={"GSI1": IndexKey(pk="EMAIL#{email}")})
    p = AccessPattern("by email", entity="User", index="GSI1", sk="=")
    # WHEN a model is built / THEN the pattern and condition are named
    rejects(
        AccessPatternError,
        lambda: model([u], indexes=[Index("GSI1", sort_key=False)], access_patterns=[p]),
        "'by email'",
        "'='",
        "needs a sort key",
    )


def test_sk_condition_on_table_without_sort_key() -> None:
    # GIVEN a pk-only table and a pattern with an sk condition
    u = Entity("User", pk="USER#{user_id}", fields=["user_id"])
    p = AccessPattern("user", entity="User", sk="begins_with")
    # WHEN a model is built / THEN the pattern is named
    rejects(AccessPatternError, lambda: model([u], access_patterns=[p]), "'user'", "needs a sort key")


def test_sk_fields_not_a_leading_run() -> None:
    # GIVEN sk_fields that skip the first sort-key field
    p = AccessPattern("orders by id", entity="Order", sk="begins_with", sk_fields=("order_id",))
    # WHEN a model is built / THEN the fields and the template are named
    rejects(
        AccessPatternError,
        lambda: model(access_patterns=[p]),
        "'orders by id'",
        "['order_id']",
        "leading run",
        "'ORDER#{created_at}#{order_id}'",
    )


def test_sk_fields_longer_than_template() -> None:
    # GIVEN more sk_fields than the template has
    p = AccessPattern("too many", entity="Order", sk="=", sk_fields=("created_at", "order_id", "x"))
    # WHEN a model is built / THEN rejected
    rejects(AccessPatternError, lambda: model(access_patterns=[p]), "'too many'", "leading run")


def test_equals_without_every_sk_field() -> None:
    # GIVEN '=' with only the first of two sort-key fields
    p = AccessPattern("exact order", entity="Order", sk="=", sk_fields=("created_at",))
    # WHEN a model is built / THEN the pattern and the rule are named
    rejects(AccessPatternError, lambda: model(access_patterns=[p]), "'exact order'", "'=' needs every sort-key field")


def test_range_with_explicitly_no_sk_fields() -> None:
    # GIVEN a between condition with sk_fields=() (nothing to compare)
    p = AccessPattern("nothing", entity="Order", sk="between", sk_fields=())
    # WHEN a model is built / THEN rejected naming the pattern
    rejects(AccessPatternError, lambda: model(access_patterns=[p]), "'nothing'", "at least one sort-key field")


def test_multi_entity_pattern_with_different_partitions() -> None:
    # GIVEN two entities in different partitions read together
    product = Entity("Product", pk="PRODUCT#{sku}", sk="PRODUCT", fields=["sku"])
    p = AccessPattern("user and products", entity=("User", "Product"))
    # WHEN a model is built / THEN both templates and the pattern are named
    rejects(
        AccessPatternError,
        lambda: model([user(), product], access_patterns=[p]),
        "'user and products'",
        "'USER#{user_id}'",
        "'PRODUCT#{sku}'",
        "share no partition",
    )


def test_multi_entity_pattern_with_different_sk_prefix() -> None:
    # GIVEN two entities in one partition whose sort keys differ before the compared field
    line = Entity("Line", pk="USER#{user_id}", sk="LINE#{created_at}", fields={"user_id": "string", "created_at": "timestamp"})
    p = AccessPattern("mixed since", entity=("Order", "Line"), sk=">=")
    # WHEN a model is built / THEN the pattern and both templates are named
    rejects(
        AccessPatternError,
        lambda: model([user(), order(), line], access_patterns=[p]),
        "'mixed since'",
        "'LINE#{created_at}'",
        "do not share the prefix",
    )


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"name": ""}, "name ''"),
        ({"name": "p", "entity": ()}, "entity ()"),
        ({"name": "p", "entity": "User", "sk": "~"}, "'~'"),
        ({"name": "p", "entity": "User", "sk_fields": ("a",)}, "without a sort-key condition"),
    ],
)
def test_bad_access_pattern_declarations(kwargs: dict[str, Any], needle: str) -> None:
    # GIVEN an access pattern that is malformed on its own / WHEN declared / THEN it is rejected
    kwargs.setdefault("entity", "User")
    rejects(ModelValidationError, lambda: AccessPattern(**kwargs), needle)


# --------------------------------------------------------------------------- resolution (shop model)


@pytest.mark.parametrize(
    ("name", "operation", "index", "pk_fields", "sk_fields"),
    [
        ("user profile", "GetItem", None, ("user_id",), ()),
        ("user by email", "Query", "GSI1", ("email",), ()),
        ("user's orders newest first", "Query", None, ("user_id",), ()),
        ("orders in a date range", "Query", None, ("user_id",), ("created_at",)),
        ("user with orders", "Query", None, ("user_id",), ()),
        ("order by id", "Query", "GSI1", ("order_id",), ()),
        ("items of an order", "Query", None, ("order_id",), ()),
        ("pending orders by date", "Query", "GSI2", ("status",), ("created_at",)),
        ("product by sku", "GetItem", None, ("sku",), ()),
        ("session by id", "GetItem", None, ("session_id",), ()),
    ],
)
def test_shop_patterns_resolve(
    name: str, operation: str, index: str | None, pk_fields: tuple, sk_fields: tuple
) -> None:
    # GIVEN the shop model
    # WHEN its patterns are resolved at construction
    rp = shop_model.resolved_patterns[name]
    # THEN each is served by the expected operation on the expected index with default sk_fields
    assert rp.name == name
    assert rp.operation == operation
    assert (rp.index.name if rp.index else None) == index
    assert rp.pk_fields == pk_fields
    assert rp.sk_fields == sk_fields


def test_equals_default_sk_fields_are_all_fields() -> None:
    # GIVEN an '=' pattern without sk_fields on a two-field sort key
    p = AccessPattern("one order", entity="Order", sk="=")
    # WHEN resolved
    rp = model(access_patterns=[p]).resolved_patterns["one order"]
    # THEN every sort-key field is needed, and a single-entity '=' on the table is a GetItem
    assert rp.sk_fields == ("created_at", "order_id")
    assert rp.operation == "GetItem"


def test_equals_on_gsi_is_a_query() -> None:
    # GIVEN '=' on a GSI (GSI keys are not unique, so never GetItem)
    o = order(indexes={"GSI1": IndexKey(pk="ORDER#{order_id}", sk="ORDER")})
    p = AccessPattern("order", entity="Order", index="GSI1", sk="=")
    # WHEN resolved / THEN it is a Query
    assert model([user(), o], indexes=[Index("GSI1")], access_patterns=[p]).resolved_patterns["order"].operation == "Query"


def test_lsi_pattern_uses_table_partition() -> None:
    # GIVEN an LSI sorting orders by status
    o = order(
        fields={"user_id": "string", "order_id": "string", "created_at": "timestamp", "status": "string"},
        indexes={"LSI1": IndexKey(sk="STATUS#{status}#{created_at}")},
    )
    p = AccessPattern("user orders by status", entity="Order", index="LSI1", sk="begins_with", sk_fields=("status",))
    # WHEN resolved
    rp = model([user(), o], indexes=[Index("LSI1", kind="LSI")], access_patterns=[p]).resolved_patterns[p.name]
    # THEN the partition fields come from the table pk and the sk fields from the LSI template
    assert rp.pk_fields == ("user_id",)
    assert rp.sk_fields == ("status",)
    assert rp.operation == "Query"


# --------------------------------------------------------------------------- warnings


def warning_templates(m: Model) -> dict[str, str]:
    return {w.where: w.code for w in m.warnings()}


def test_shop_model_warns_about_status_gsi_only() -> None:
    # GIVEN the shop model / WHEN warnings are computed
    found = warning_templates(shop_model)
    # THEN only the sparse STATUS#{status} GSI2 partition key is flagged; USER#{user_id} is not
    assert found == {"entity 'Order' index 'GSI2' pk": "LowCardinalityPartitionKey"}


@pytest.mark.parametrize(
    ("pk", "fields"),
    [
        ("STATE#{s}", {"s": Field.enum("ON", "OFF")}),
        ("DAY#{d}", {"d": "date"}),
        ("MONTH#{at:month}", {"at": "timestamp"}),
        ("STATUS#{status}", {"status": "string"}),
        ("{is_active}", {"is_active": "string"}),
        ("{order_type}#{at:day}", {"order_type": "string", "at": "timestamp"}),
    ],
)
def test_low_cardinality_partition_keys_are_flagged(pk: str, fields: dict[str, Any]) -> None:
    # GIVEN a table PK built only from low-cardinality inputs
    e = Entity("Thing", pk=pk, sk="{id}", fields={**fields, "id": "string"})
    # WHEN warnings are computed
    warnings = model([e]).warnings()
    # THEN the table pk is flagged, naming the template
    assert [w.code for w in warnings] == ["LowCardinalityPartitionKey"]
    assert repr(pk) in warnings[0].message
    assert warnings[0].where == "entity 'Thing' table pk"


@pytest.mark.parametrize(
    ("pk", "fields"),
    [
        ("USER#{user_id}", {"user_id": "string"}),
        ("SENSOR#{sensor_id}#{at:month}", {"sensor_id": "string", "at": "timestamp"}),
        ("TENANT#{tenant}#{status}", {"tenant": "string", "status": "string"}),
        ("N#{n}", {"n": "number:10"}),
        ("{statuses}", {"statuses": "string"}),
    ],
)
def test_high_cardinality_partition_keys_are_not_flagged(pk: str, fields: dict[str, Any]) -> None:
    # GIVEN a table PK with at least one high-cardinality input
    e = Entity("Thing", pk=pk, sk="X", fields=fields)
    # WHEN warnings are computed / THEN none are raised
    assert model([e]).warnings() == []


def test_constant_gsi_pk_is_flagged() -> None:
    # GIVEN a GSI whose pk is a constant (all items in one partition)
    o = order(indexes={"GSI1": IndexKey(pk="ALL_ORDERS", sk="{created_at}")})
    # WHEN warnings are computed
    warnings = model([user(), o], indexes=[Index("GSI1")]).warnings()
    # THEN the constant GSI pk is flagged and named
    assert [(w.code, w.where) for w in warnings] == [("ConstantPartitionKey", "entity 'Order' index 'GSI1' pk")]
    assert "'ALL_ORDERS'" in warnings[0].message


# --------------------------------------------------------------------------- JSON contract


def rich_model() -> Model:
    """LSI, INCLUDE projection, KEYS_ONLY, GSI without sort key, sparse conditions, TTL, custom attributes."""
    return Model(
        "rich-model_1",
        entities=[
            Entity(
                "Ticket",
                pk="T#{tenant}#TICKET#{ticket_id}",
                sk="META",
                fields={
                    "tenant": "string",
                    "ticket_id": "string",
                    "opened": Field.timestamp(),
                    "priority": Field.number(2),
                    "state": Field.enum("OPEN", "CLOSED"),
                    "assignee": "string",
                    "day": Field.date(),
                },
                indexes={
                    "ByState": IndexKey(
                        pk="T#{tenant}#STATE#{state}", sk="{priority}#{opened}", when_equals={"state": "OPEN"}
                    ),
                    "ByAssignee": IndexKey(pk="A#{assignee}", when_present="assignee"),
                    "LocalDay": IndexKey(sk="DAY#{day}#{opened:hour}"),
                },
                required=("title",),
                version_attribute="rev",
                description="A support ticket.",
            ),
            Entity("Note", pk="T#{tenant}#TICKET#{ticket_id}", sk="NOTE#{n}",
                   fields={"tenant": "string", "ticket_id": "string", "n": "number:6"}),
        ],
        indexes=[
            Index("ByState", projection=("title", "assignee")),
            Index("ByAssignee", sort_key=False, projection="KEYS_ONLY", pk_attribute="assignee_pk"),
            Index("LocalDay", kind="LSI", sk_attribute="day_sk"),
        ],
        access_patterns=[
            AccessPattern("ticket with notes", entity=("Ticket", "Note"), description="collection"),
            AccessPattern("open by priority", entity="Ticket", index="ByState", sk="<=", descending=True),
            AccessPattern("by assignee", entity="Ticket", index="ByAssignee"),
            AccessPattern("on a day", entity="Ticket", index="LocalDay", sk="begins_with", sk_fields=("day",)),
        ],
        ttl_attribute="expires",
        pk_attribute="pk",
        sk_attribute="sk",
        entity_attribute="kind",
    )


@pytest.mark.parametrize("build", [lambda: shop_model, rich_model], ids=["shop", "rich"])
def test_json_round_trip(build: Callable[[], Model]) -> None:
    # GIVEN a model
    m = build()
    # WHEN it goes through JSON
    back = Model.from_json(m.to_json())
    # THEN the result is equal, serializes identically and resolves the same patterns
    assert back == m
    assert back.to_json() == m.to_json()
    assert {n: (r.operation, r.pk_fields, r.sk_fields) for n, r in back.resolved_patterns.items()} == {
        n: (r.operation, r.pk_fields, r.sk_fields) for n, r in m.resolved_patterns.items()
    }


def test_rich_model_round_trip_keeps_details() -> None:
    # GIVEN the rich model after a JSON round trip
    back = Model.from_json(rich_model().to_json(indent=None).encode("utf-8"))
    # THEN index kinds, projections, attributes and sparse conditions survived
    assert back.indexes["ByState"].projection == ("assignee", "title")  # declared ("title", "assignee"): a set
    assert back.indexes["ByAssignee"].projection == "KEYS_ONLY"
    assert back.indexes["ByAssignee"].pk_attribute == "assignee_pk"
    assert back.indexes["ByAssignee"].sort_key is False
    assert back.indexes["LocalDay"].kind == "LSI"
    assert back.indexes["LocalDay"].key_attributes == ("day_sk",)
    ticket = back.entities["Ticket"]
    assert ticket.indexes["ByState"].when_equals == {"state": ("OPEN",)}
    assert ticket.indexes["ByAssignee"].when_present == "assignee"
    assert ticket.fields["priority"] == Field.number(2)
    assert ticket.fields["state"].choices == ("CLOSED", "OPEN")  # declared ("OPEN", "CLOSED"): a set
    assert (back.pk_attribute, back.sk_attribute, back.entity_attribute, back.ttl_attribute) == (
        "pk", "sk", "kind", "expires",
    )
    assert back.key_attributes() == ["pk", "sk", "ByStatePK", "ByStateSK", "assignee_pk", "day_sk"]


def test_models_differ_when_content_differs() -> None:
    # GIVEN two models differing only in a pattern's sort order
    a = model(access_patterns=[AccessPattern("o", entity="Order", sk="begins_with")])
    b = model(access_patterns=[AccessPattern("o", entity="Order", sk="begins_with", descending=True)])
    # WHEN compared / THEN they are not equal
    assert a != b
    assert a == model(access_patterns=[AccessPattern("o", entity="Order", sk="begins_with")])


def test_to_json_is_deterministic() -> None:
    # GIVEN the same model built twice
    a, b = rich_model(), rich_model()
    # WHEN serialized / THEN the text is identical and keys are sorted
    assert a.to_json() == b.to_json() == a.to_json()
    assert hash(a) == hash(b)
    data = json.loads(a.to_json())
    assert list(data) == sorted(data)
    assert data["format"] == FORMAT and data["version"] == VERSION


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("not json", "not valid JSON"),
        ("[]", "not a constructs_lib.model document"),
        ('{"format": "other", "version": 1}', "format='other'"),
        ('{"version": 1}', "format=None"),
    ],
)
def test_model_format_errors(text: str, needle: str) -> None:
    # GIVEN text that is not a model document / WHEN loaded / THEN ModelFormatError explains why
    rejects(ModelFormatError, lambda: Model.from_json(text), needle)


@pytest.mark.parametrize("version", [0, 2, "1", None])
def test_unsupported_version(version: object) -> None:
    # GIVEN a model document with another version
    data = json.loads(shop_model.to_json())
    data["version"] = version
    # WHEN loaded / THEN the version is named
    rejects(ModelFormatError, lambda: Model.from_json(json.dumps(data)), f"version {version!r}", "not supported")


def test_truncated_document_is_a_format_error() -> None:
    # GIVEN a document with the right header but a missing section
    data = json.loads(shop_model.to_json())
    del data["entities"]
    # WHEN loaded / THEN it is a ModelFormatError naming what is missing
    rejects(ModelFormatError, lambda: Model.from_json(json.dumps(data)), "'entities'")


@pytest.mark.parametrize("entities", [[42], "User", [{"name": "User"}]])
def test_misshapen_document_is_a_format_error(entities: object) -> None:
    # GIVEN a document whose entities section has the wrong shape
    data = json.loads(shop_model.to_json())
    data["entities"] = entities
    # WHEN loaded / THEN it is a ModelFormatError, not a bare TypeError/KeyError
    rejects(ModelFormatError, lambda: Model.from_json(json.dumps(data)), "model JSON")


def test_invalid_content_in_document_is_a_validation_error() -> None:
    # GIVEN a well-formed document describing an invalid model (unused index)
    data = json.loads(shop_model.to_json())
    data["indexes"].append({"name": "GSI3", "kind": "GSI", "pk_attribute": None, "sk_attribute": None,
                            "sort_key": True, "projection": "ALL"})
    # WHEN loaded / THEN the same validation as construction applies
    rejects(ModelValidationError, lambda: Model.from_json(json.dumps(data)), "'GSI3'")


# --------------------------------------------------------------------------- lookups


def test_lookups_name_the_missing_value() -> None:
    # GIVEN the shop model / WHEN unknown entity and index are looked up / THEN they are named
    rejects(ModelValidationError, lambda: shop_model.entity("Invoice"), "'Invoice'", "User")
    rejects(ModelValidationError, lambda: shop_model.index("GSI9"), "'GSI9'", "GSI1")
    assert shop_model.entity("User").name == "User"
    assert shop_model.index("GSI2").projection == "KEYS_ONLY"


# --------------------------------------------------------------------------- key overlap between entities


def test_entities_that_can_build_the_same_table_key_are_rejected() -> None:
    # GIVEN two entities in one partition where B's sort-key value may equal A's literal
    a = Entity("Profile", pk="USER#{user_id}", sk="PROFILE", fields=["user_id"])
    b = Entity("Note", pk="USER#{user_id}", sk="{note_id}", fields=["user_id", "note_id"])
    # WHEN modelled together THEN rejected, naming both entities and their templates
    with pytest.raises(ModelValidationError, match=r"'Profile' .*PROFILE.* and 'Note' .*\{note_id\}.* same table key"):
        Model("m", entities=[a, b])


def test_entities_with_distinct_literals_or_lengths_do_not_overlap() -> None:
    # GIVEN literals that differ in one segment, or templates of different lengths
    a = Entity("Order", pk="ORDER#{order_id}", sk="ORDER#{order_id}", fields=["order_id"])
    b = Entity("Line", pk="ORDER#{order_id}", sk="ITEM#{line}", fields=["order_id", "line"])
    c = Entity("Note", pk="ORDER#{order_id}", sk="ORDER#{order_id}#NOTE#{n}", fields=["order_id", "n"])
    # WHEN modelled together THEN accepted
    assert set(Model("m", entities=[a, b, c]).entities) == {"Order", "Line", "Note"}


def test_pk_only_table_pattern_is_a_get_item() -> None:
    # GIVEN a table without sort key WHEN a pattern reads by partition key THEN it is a GetItem
    m = Model("m", entities=[Entity("Doc", pk="DOC#{doc_id}", fields=["doc_id"])],
              access_patterns=[AccessPattern("doc by id", entity="Doc")])
    assert m.resolved_patterns["doc by id"].operation == "GetItem"


def test_projected_attribute_limit_counts_the_entity_attribute() -> None:
    # GIVEN an INCLUDE projection of exactly 100 attributes (SingleTable also projects `_type`)
    attrs = tuple(f"a{i}" for i in range(100))
    entity = Entity("Doc", pk="DOC#{doc_id}", sk="DOC", fields=["doc_id"], indexes={"GSI1": ("X#{doc_id}", "Y")})
    # WHEN modelled THEN rejected: 101 projected attributes exceed DynamoDB's 100
    with pytest.raises(ModelValidationError, match=r"101 distinct INCLUDE attributes.*at most 100"):
        Model("m", entities=[entity], indexes=[Index("GSI1", projection=attrs)])
    # AND 99 attributes (+ `_type`) are accepted
    assert Model("m", entities=[entity], indexes=[Index("GSI1", projection=attrs[:99])]).indexes["GSI1"]
