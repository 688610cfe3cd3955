"""The typed-module generator: deterministic text, names and their collisions, types, the one
list of options kept in step with ``TableClient``, the command line, and the shop's module."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.__main__ import main
from constructs_lib.codegen import CodegenError, generate
from constructs_lib.codegen.names import snake
from constructs_lib.codegen.options import OMITTED, OPTIONS, accepted
from constructs_lib.model import AccessPattern, Entity, Field, Model, ModelValidationError
from constructs_lib.runtime import TableClient, request_params
from examples.shop.model import shop_model

ROOT = Path(__file__).resolve().parents[3]
SHOP_MODULE = ROOT / "examples" / "shop" / "models_typed.py"


def _model(*patterns: AccessPattern, entities: tuple[Entity, ...] = ()) -> Model:
    return Model(
        "demo",
        entities=entities or (
            Entity("User", pk="USER#{user_id}", sk="PROFILE", fields={"user_id": "string"}),
            Entity("Event", pk="USER#{user_id}", sk="EVENT#{at}", fields={"user_id": "string", "at": "timestamp"}),
        ),
        access_patterns=list(patterns),
    )


def _methods(source: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(source)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Table")]
    return {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}


def _params(fn: ast.FunctionDef) -> dict[str, str]:
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return {a.arg: ast.unparse(a.annotation) for a in args if a.annotation is not None}


# Determinism and shape ----------------------------------------------------------------------------
def test_same_model_gives_the_same_bytes() -> None:
    # GIVEN the shop model and its JSON round trip WHEN generated twice THEN byte-identical
    first = generate(shop_model, target="examples.shop.model")
    assert generate(shop_model, target="examples.shop.model") == first
    assert generate(Model.from_json(shop_model.to_json()), target="examples.shop.model") == first


def test_the_module_imports_only_the_standard_library_and_the_runtime() -> None:
    tree = ast.parse(generate(shop_model))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert modules and all(m.split(".")[0] in {"__future__", "builtins", "collections", "datetime", "decimal", "typing"}
                           or m.startswith("constructs_lib.runtime") for m in modules), modules


@pytest.mark.parametrize("model", [shop_model, _model()], ids=["shop", "small"])
def test_every_runtime_name_the_module_uses_is_public(model: Model) -> None:
    # GIVEN a generated module and the runtime's public surface
    import constructs_lib.runtime as runtime

    tree = ast.parse(generate(model))
    aliases = {a.asname for n in tree.body if isinstance(n, ast.Import) for a in n.names
               if a.name == "constructs_lib.runtime" and a.asname}
    # WHEN every attribute it reads through the runtime's alias is collected
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id in aliases}
    # THEN each is in constructs_lib.runtime.__all__ (a name dropped from it would break every
    # generated module at import or at its first refusal)
    assert aliases and used and used <= set(runtime.__all__), sorted(used - set(runtime.__all__))


@pytest.mark.parametrize("model", [shop_model, _model()], ids=["shop", "small"])
def test_every_import_is_used(model: Model) -> None:
    tree = ast.parse(generate(model))
    imported = {(a.asname or a.name) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
                and getattr(n, "module", None) != "__future__" for a in n.names}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    # every module is imported under an alias, so no model name can shadow a type it provides
    assert all(name.startswith("_") for name in imported), imported
    # annotations are strings under `from __future__ import annotations` only at run time: ast sees them
    assert imported - used == set()


def test_lines_are_short_and_the_header_names_model_and_fingerprint() -> None:
    text = generate(shop_model, target="examples.shop.model")
    assert max(len(line) for line in text.splitlines()) <= 120
    long_words = "a description " * 20 + 'with "quotes", a \\ backslash and """triple quotes"""'
    described = _model(AccessPattern("events", entity="Event", sk="begins_with", description=long_words))
    wrapped = generate(described)
    assert max(len(line) for line in wrapped.splitlines()) <= 120
    assert (ast.get_docstring(_methods(wrapped)["events"]) or "").split(".", 1)[1].split() == long_words.split()
    assert text.startswith("# Generated by `python -m constructs_lib codegen` from data model \"shop\"")
    from constructs_lib.runtime.contract import fingerprint, model_digest

    assert f'MODEL_FINGERPRINT = "{fingerprint(shop_model)}"' in text
    assert f'MODEL_DIGEST = "{model_digest(shop_model)}"' in text


def test_the_committed_shop_module_is_not_stale() -> None:
    # `python -m constructs_lib codegen examples.shop.model -o examples/shop/models_typed.py` regenerates it
    assert SHOP_MODULE.read_text(encoding="utf-8") == generate(shop_model, target="examples.shop.model")


# Names ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "name"), [
    ("user's orders newest first", "users_orders_newest_first"),
    ("OrderItem", "order_item"),
    ("HTTPRequest", "http_request"),
    ("Pending orders (by date)", "pending_orders_by_date"),
    ("2fa codes", "p_2fa_codes"),
    ("class", "class_"),
    ("café menu", "cafe_menu"),
    ("!!!", "pattern"),
])
def test_snake_names(text: str, name: str) -> None:
    assert snake(text) == name


def test_collisions_resolve_in_declaration_order_and_keep_the_name_in_the_docstring() -> None:
    # GIVEN patterns whose names meet each other, an entity method and a member of the class
    model = _model(
        AccessPattern("events of a user", entity="Event", sk="begins_with"),
        AccessPattern("Events of a user!", entity="Event", sk="begins_with"),
        AccessPattern("events of a user all", entity="Event", sk="begins_with"),
        AccessPattern("get user", entity="User", sk="="),
        AccessPattern("client", entity="User", sk="="),
    )
    methods = _methods(generate(model))
    # THEN each gets the first free suffix, deterministically, and says which pattern it runs
    for method, pattern in [("events_of_a_user", "events of a user"), ("events_of_a_user_2", "Events of a user!"),
                            ("events_of_a_user_all_2", "events of a user all"), ("get_user_2", "get user"),
                            ("client_2", "client")]:
        assert f'"{pattern}"' in (ast.get_docstring(methods[method]) or ""), method
    assert {"events_of_a_user_all", "events_of_a_user_2_all", "events_of_a_user_all_2_all", "get_user"} <= set(methods)


def test_entities_whose_names_meet_get_distinct_methods() -> None:
    model = _model(entities=(
        Entity("Order", pk="O#{id}", fields=["id"]), Entity("ORDER", pk="X#{id}", fields=["id"]),
    ))
    methods = _methods(generate(model))
    assert {"put_order", "put_order_2", "get_order_2", "update_order_2", "delete_order_2"} <= set(methods)


# Types -----------------------------------------------------------------------------------------------
def test_field_and_attribute_types() -> None:
    entity = Entity(
        "Reading", pk="SENSOR#{sensor}", sk="{at}#{seq}",
        fields={"sensor": Field.enum("a", "b"), "at": "timestamp", "seq": "number:6", "day": "date"},
        required=("value",),
        attributes={"value": "decimal", "tags": "string_set", "raw": "binary", "ok": "boolean", "extra": "map"},
        version_attribute="v",
    )
    text = generate(_model(AccessPattern("readings in a range", entity="Reading", sk="between"),
                           entities=(entity,)))
    item = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == "ReadingItem")
    keys = {s.target.id: ast.unparse(s.annotation) for s in item.body if isinstance(s, ast.AnnAssign)}  # type: ignore[union-attr]
    assert keys == {
        "sensor": "_t.Literal['a', 'b']", "at": "_dt.datetime | _b.str", "seq": "_b.int",
        "day": "_t.NotRequired[_dt.date | _b.str]", "value": "_decimal.Decimal", "tags": "_t.NotRequired[_abc.Set[_b.str]]",
        "raw": "_t.NotRequired[_b.bytes]", "ok": "_t.NotRequired[_b.bool]",
        "extra": "_t.NotRequired[_b.dict[_b.str, _t.Any]]", "v": "_t.NotRequired[_b.int]",
        "_type": "_t.NotRequired[_t.Literal['Reading']]",
    }
    methods = _methods(text)
    # the range field of a between pattern takes a (low, high) pair; the table-key fields are typed
    assert _params(methods["readings_in_a_range"])["at"] == "_b.tuple[_dt.datetime | _b.str, _dt.datetime | _b.str]"
    projection = {"attributes": "_abc.Sequence[ReadingAttribute] | None"} if "attributes" in accepted("get") else {}
    assert _params(methods["get_reading"]) == {"sensor": "_t.Literal['a', 'b']", "at": "_dt.datetime | _b.str",
                                               "seq": "_b.int", "consistent": "_b.bool", **projection}
    assert ast.unparse(methods["readings_in_a_range"].returns) == "_rt.Page[ReadingItem]"  # type: ignore[arg-type]


def test_multi_entity_patterns_return_a_union_and_gsi_patterns_take_no_consistent_read() -> None:
    text = generate(shop_model)
    methods = _methods(text)
    assert ast.unparse(methods["user_with_orders"].returns) == "_rt.Page[UserItem | OrderItem]"  # type: ignore[arg-type]
    assert ast.unparse(methods["user_with_orders_all"].returns) == "_abc.Iterator[UserItem | OrderItem]"  # type: ignore[arg-type]
    assert "consistent" not in _params(methods["user_by_email"])
    assert "consistent" in _params(methods["users_orders_newest_first"])
    # a GetItem pattern has no pages: no cursor, no limit, no filter, no _all method
    projection = {"attributes"} & accepted("query")
    assert set(_params(methods["user_profile"])) == {"user_id", "consistent", *projection}
    assert "user_profile_all" not in methods


def test_partition_at_only_on_a_bucketed_range() -> None:
    model = Model("iot", entities=[Entity(
        "Reading", pk="SENSOR#{sensor}#{at:month}", sk="{at}", fields={"sensor": "string", "at": "timestamp"},
    )], access_patterns=[AccessPattern("readings in a range", entity="Reading", sk="between"),
                         AccessPattern("latest readings", entity="Reading", sk=">=", sk_fields=("at",))])
    methods = _methods(generate(model))
    assert _params(methods["readings_in_a_range"])["partition_at"] == "_dt.datetime | None"
    assert "partition_at" not in _params(methods["latest_readings"])


def test_literal_names_of_entities_and_patterns() -> None:
    text = generate(shop_model)
    assert 'EntityName = _t.Literal["User", "Order", "OrderItem", "Product", "Session"]' in text
    assert '    "user\'s orders newest first",' in text


# Key fields as parameters ---------------------------------------------------------------------------------
def test_a_keyword_field_becomes_a_parameter_with_a_trailing_underscore() -> None:
    # GIVEN a table-key field named like a Python keyword WHEN generated THEN its parameter is
    # class_, and the key (and get's keywords) still name the field
    methods = _methods(generate(_model(entities=(Entity("Thing", pk="T#{class}", fields=["class"]),))))
    assert set(_params(methods["get_thing"])) >= {"class_"}
    assert "**_t.cast('_b.dict[_b.str, _t.Any]', {'class': class_})" in ast.unparse(methods["get_thing"])
    assert "{'class': class_}" in ast.unparse(methods["delete_thing"])


def test_a_field_named_like_an_option_gets_its_own_parameter() -> None:
    # GIVEN a key field named like an option of the query method WHEN generated THEN the field's
    # parameter is limit_, passed in the key mapping, and the option keeps its name
    model = _model(AccessPattern("pages", entity="Page", sk="begins_with"),
                   entities=(Entity("Page", pk="P#{limit}", sk="X#{n}", fields=["limit", "n"]),))
    method = _methods(generate(model))["pages"]
    assert list(_params(method))[:2] == ["limit_", "limit"]
    assert "self.client.query('pages', {'limit': limit_}, limit=limit" in ast.unparse(method)


def test_a_field_that_table_client_get_cannot_take_is_refused_with_its_name() -> None:
    model = _model(entities=(Entity("Thing", pk="T#{consistent}", fields=["consistent"]),))
    with pytest.raises(CodegenError, match=r"field 'consistent' has the name of a parameter of TableClient.get"):
        generate(model)


# Entity attributes in the model ----------------------------------------------------------------------------
def test_entity_attributes_are_checked_and_round_trip() -> None:
    with pytest.raises(ModelValidationError, match=r"attribute 'price' has kind 'float'"):
        Entity("P", pk="P#{id}", fields=["id"], attributes={"price": "float"})
    with pytest.raises(ModelValidationError, match=r"attribute 'id' is a declared field"):
        Entity("P", pk="P#{id}", fields=["id"], attributes={"id": "string"})
    with pytest.raises(ModelValidationError, match=r"attribute 'v' is the version attribute"):
        Entity("P", pk="P#{id}", fields=["id"], attributes={"v": "integer"}, version_attribute="v")
    entity = Model("m", entities=[Entity("P", pk="P#{id}", fields=["id"], attributes={"price": "decimal"})]).entity("P")
    assert Entity.from_dict(entity.to_dict()) == entity.declared()
    assert Entity.from_dict(entity.to_dict()).attributes == {"price": "decimal"}
    # an entity without attributes keeps the JSON it had (no new key)
    assert "attributes" not in Model("q", entities=[Entity("Q", pk="Q#{id}", fields=["id"])]).entity("Q").to_dict()


# The one list of options ----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", sorted(OPTIONS))
def test_options_list_every_keyword_of_table_client_with_its_default(method: str) -> None:
    # GIVEN TableClient's signature WHEN compared with the generator's list THEN every keyword is
    # either exposed (with the same default) or listed as omitted, and nothing else is listed
    # (query_all passes its keywords on to query, a transaction's actions to the request builders)
    if method.startswith("transaction."):
        signature = inspect.signature(getattr(request_params, method.removeprefix("transaction.")))
    else:
        signature = inspect.signature(getattr(TableClient, "query" if method == "query_all" else method))
    keywords = {n: p for n, p in signature.parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY or (p.default is not inspect.Parameter.empty
                                                                and p.kind is not inspect.Parameter.POSITIONAL_ONLY)}
    exposed = {o.name: o for o in OPTIONS[method] if o.name in keywords}  # (the rest: a later runtime's)
    omitted = {k for k in OMITTED[method] if k in keywords}
    if method == "query_all":  # a subset: pages, cursors and single partitions are query()'s
        assert set(exposed) <= set(keywords)
    else:
        assert set(keywords) == set(exposed) | omitted, (set(keywords) ^ (set(exposed) | omitted))
    for name, option in exposed.items():
        assert eval(option.default) == keywords[name].default, name  # noqa: S307 (a literal from our own table)


# Command line -----------------------------------------------------------------------------------------------
def test_codegen_command_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "typed.py"
    assert main(["codegen", "examples.shop.model", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == generate(shop_model, target="examples.shop.model")
    assert main(["codegen", "examples.shop.model", "-o", str(out), "--check"]) == 0
    out.write_text(out.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert main(["codegen", "examples.shop.model", "-o", str(out), "--check"]) == 1
    assert "is stale: regenerate it" in capsys.readouterr().out
    assert main(["codegen", "examples.shop.model", "--check"]) == 2  # nothing to compare with


def test_codegen_of_a_target_with_several_models_asks_for_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "two.py"
    target.write_text(
        "from constructs_lib.model import Entity, Model\n"
        "a = Model('a', entities=[Entity('A', pk='A#{x}', fields=['x'])])\n"
        "b = Model('b', entities=[Entity('B', pk='B#{x}', fields=['x'])])\n",
        encoding="utf-8",
    )
    assert main(["codegen", str(target)]) == 2
    assert "holds 2 data models" in capsys.readouterr().err
    assert main(["codegen", f"{target}:b", "-o", str(tmp_path / "b.py")]) == 0
    assert "class BItem(_t.TypedDict)" in (tmp_path / "b.py").read_text(encoding="utf-8")


# Names, as a property ------------------------------------------------------------------------------------

_PATTERN_NAMES = st.lists(
    st.text(alphabet=st.sampled_from("ab _-'é2A"), min_size=1, max_size=8).filter(str.strip),
    min_size=1, max_size=8, unique=True,
)


@settings(max_examples=60, deadline=None)
@given(_PATTERN_NAMES)
def test_any_pattern_names_give_distinct_identifiers_naming_their_pattern(names: list[str]) -> None:
    # GIVEN patterns with arbitrary (colliding) names WHEN generated THEN every method is a distinct
    # identifier, compiled, and each pattern's query method quotes exactly its own name
    model = _model(*(AccessPattern(n, entity="Event", sk="begins_with") for n in names))
    text = generate(model)
    compile(text, "typed.py", "exec")
    methods = _methods(text)
    quoted = {m: doc for m, fn in methods.items() if (doc := ast.get_docstring(fn) or "").startswith("Access pattern ")}
    assert len(quoted) == len(names)
    for name in names:
        owners = [m for m, doc in quoted.items() if ast.literal_eval(doc.split(": ")[0][len("Access pattern "):]) == name]
        assert len(owners) == 1 and f"{owners[0]}_all" in methods
    assert generate(model) == text
