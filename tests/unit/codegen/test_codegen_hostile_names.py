"""Generated typed modules for models whose names meet Python's: builtins, keywords, typing names.

A pattern named ``str`` becomes a method ``str`` of the table class; an entity named ``Any``, a key
field named ``class`` or an attribute named ``a-b`` must still give a module that compiles,
imports and passes ``mypy --strict``. The regression models below are fixed; the property test
draws random valid models from a pool of such names. mypy runs once per test over a batch of
modules (its cache in a temporary directory shared by both runs).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from constructs_lib.codegen import CodegenError, generate
from constructs_lib.codegen.options import get_parameters
from constructs_lib.model import AccessPattern, Entity, Field, Model, ModelError

ROOT = Path(__file__).resolve().parents[3]
SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
#: mypy runs (hypothesis examples: the first is its simplest) of BATCH models each, and examples
#: of the compile-and-import property.
MYPY_RUNS, BATCH = (30, 5) if SOAK else (3, 5)
EXAMPLES = 400 if SOAK else 40
CONFIG = """\
[mypy]
strict = True
follow_imports = silent
mypy_path = {root}
[mypy-aws_cdk.*,constructs.*,jsii.*,cdk_nag.*,botocore.*,boto3.*,constructs_lib.constructs.*,constructs_lib.testing.*]
follow_imports = skip
ignore_missing_imports = True
"""
_ERROR = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: (?P<message>.*)$")

#: Names a generated module must survive: those its annotations and calls use (a method or a
#: TypedDict key of the name shadows one), keywords, soft keywords, names of the generated
#: module's own members and odd strings.
ANNOTATION_NAMES = ("str", "int", "bool", "bytes", "list", "dict", "tuple", "object", "date", "datetime", "timedelta",
                    "Decimal", "Any", "Literal", "Never", "NotRequired", "TypedDict", "Sequence", "Iterator", "Set",
                    "AbstractSet", "Page", "TableClient", "Transaction", "Condition", "cast", "model_digest",
                    "ModelMismatchError")
BUILTIN_LIKE = ANNOTATION_NAMES + ("float", "set", "type", "Optional", "None", "NoneType", "null", "True",
                                   "EntityName", "PatternName", "MODEL_DIGEST", "builtins", "typing")
KEYWORDS = ("class", "from", "import", "def", "return", "lambda", "global", "not", "is", "match", "case", "_")
ODD = ("a-b", "with space", "2fa", "Ünïcode", "x all", "get user", "put User", "from environment", "client",
       "transaction", "self", "cls", "__init__", "_b", "_t", "_cast", "q\"uote", "back\\slash", '"""')
_ENTITY_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
POOL = BUILTIN_LIKE + KEYWORDS + ODD
ENTITY_NAMES = tuple(n for n in POOL if _ENTITY_NAME.match(n)) + ("User", "user", "USER")
FIELD_NAMES = tuple(n for n in POOL if _FIELD_NAME.match(n)) + (
    "limit", "cursor", "descending", "set", "remove", "add", "delete", "condition", "expected_version", "values",
    "item", "key", "pattern", "filter", "partition_at", "must_exist", "create_only", "exists",
)


def _regression_models() -> list[Model]:
    """Access patterns named like the builtins the annotations use (the reported failure), and
    entities, fields and attributes named like builtins, typing names and keywords."""
    order = Entity(
        "Order", pk="U#{user_id}", sk="O#{date}#{int}",
        fields={"user_id": "string", "date": "date", "int": "number:6"},
        attributes={"str": "string", "list": "list", "dict": "map", "Decimal": "decimal", "a-b": "integer",
                    "with space": "any", "class": "boolean", "bytes": "binary", "tuple": "string_set"},
    )
    patterns = [AccessPattern(n, entity="Order", sk="begins_with") for n in
                ("str", "int", "date", "tuple", "list", "dict", "Any", "datetime", "Decimal", "Literal", "Optional",
                 "None", "class", "from", "bool", "bytes", "object", "cast", "Page", "TableClient")]
    patterns.append(AccessPattern("date range", entity="Order", sk="between", sk_fields=("date",)))
    builtins_model = Model("str", entities=[order], access_patterns=patterns)
    keyword_entities = [
        Entity("str", pk="S#{class}", sk="X#{from}", fields={"class": "string", "from": "timestamp"}),
        Entity("Any", pk="A#{cls}", sk="Y#{limit}", fields={"cls": "string", "limit": "number:3"},
               attributes={"datetime": "string", "None": "integer"}),
        Entity("None", pk="N#{_b}", sk="Z#{_cast}", fields={"_b": "string", "_cast": "string"}, version_attribute="int"),
    ]
    keyword_model = Model("Any", entities=keyword_entities, access_patterns=[
        AccessPattern("from", entity="str", sk="begins_with"),
        AccessPattern("self", entity="Any", sk=">=", sk_fields=("limit",)),
        AccessPattern("set", entity="None", sk="="),
        AccessPattern("limit", entity="Any"),
    ])
    return [builtins_model, keyword_model]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "mypy.ini").write_text(CONFIG.format(root=ROOT), encoding="utf-8")
    return tmp


_batches = iter(range(10**6))


def _mypy(workdir: Path, sources: list[str]) -> dict[str, list[str]]:
    """Errors of one ``mypy --strict`` run over ``sources`` (each its own module), by module index."""
    batch = workdir / f"batch{next(_batches)}"
    batch.mkdir()
    files = []
    for i, text in enumerate(sources):
        (batch / f"typed_{i}.py").write_text(text, encoding="utf-8")
        files.append(str(batch / f"typed_{i}.py"))
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(workdir / "mypy.ini"), "--cache-dir",
         str(workdir / "cache"), "--no-error-summary", "--show-error-codes", *files],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode in (0, 1), run.stderr or run.stdout  # 2 would be a crash or a usage error
    errors: dict[str, list[str]] = {}
    for line in run.stdout.splitlines():
        match = _ERROR.match(line)
        if match:
            errors.setdefault(Path(match["file"]).stem, []).append(f"{match['line']}: {match['message']}")
    return errors


def _import(text: str, name: str, tmp: Path) -> ModuleType:
    path = tmp / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_compiles_and_imports(model: Model, tmp: Path) -> str:
    text = generate(model)
    compile(text, "typed.py", "exec")
    module = _import(text, "typed_probe", tmp)
    table = next(v for k, v in vars(module).items() if k.endswith("Table") and isinstance(v, type))
    # every pattern has a method that quotes its name; every entity its four methods
    docs = {(ast.get_docstring(f) or "") for f in ast.walk(ast.parse(text)) if isinstance(f, ast.FunctionDef)}
    for name in model.resolved_patterns:
        assert any(d.startswith(f"Access pattern {_quote_like(name)}") for d in docs), name
    methods = [m for m in vars(table) if not m.startswith("__")]
    assert len(methods) == len(set(methods))
    assert len([m for m in methods if m.startswith(("put_", "get_", "update_", "delete_"))]) >= 4 * len(model.entities)
    return text


def _quote_like(name: str) -> str:
    from constructs_lib.codegen.render import _quote

    return _quote(name)


# Regression: the reported failure ----------------------------------------------------------------------------
def test_names_of_builtins_keywords_and_typing_give_modules_that_pass_mypy_strict(workdir: Path) -> None:
    # GIVEN models whose patterns are named str/int/date/tuple..., whose entities, fields and
    # attributes are named like builtins, typing names and keywords
    models = _regression_models()
    # WHEN their typed modules are generated THEN each compiles and imports
    texts = [_check_compiles_and_imports(m, workdir) for m in models]
    # AND one mypy --strict run over all of them reports no error
    assert _mypy(workdir, texts) == {}


def test_a_key_field_named_like_an_option_or_keyword_becomes_a_distinct_parameter() -> None:
    # GIVEN key fields named class, from, _b (a module alias) and limit (an option of a query method)
    (model,) = [m for m in _regression_models() if m.name == "Any"]
    text = generate(model)
    tree = ast.parse(text)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AnyTable"]
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    # WHEN generated THEN the parameter takes a trailing underscore and the key keeps the field's name
    assert [a.arg for a in methods["get_str"].args.kwonlyargs][:2] == ["class_", "from_"]
    assert [a.arg for a in methods["self"].args.kwonlyargs][:3] == ["cls", "limit_", "limit"]
    assert "{'cls': cls, 'limit': limit_}" in ast.unparse(methods["self"])
    assert [a.arg for a in methods["get_none"].args.kwonlyargs][:2] == ["_b_", "_cast"]


def test_a_get_key_field_named_like_an_option_of_table_client_get_is_refused() -> None:
    # GIVEN a table-key field TableClient.get takes as an option (it takes the key as keywords)
    model = Model("m", entities=[Entity("E", pk="E#{consistent}", fields=["consistent"])])
    # WHEN generated THEN refused, naming the field and the rule
    with pytest.raises(CodegenError, match=r"field .consistent. has the name of a parameter of TableClient.get"):
        generate(model)


# Property: any valid model -----------------------------------------------------------------------------------
@st.composite
def models(draw: st.DrawFn) -> Model:
    """A valid model whose every name comes from the pool of builtin-like, keyword and odd names."""
    kinds = st.sampled_from(["string", "number:4", "string", "timestamp", "date", Field.enum("a", "b")])
    entities = []
    for i, name in enumerate(draw(st.lists(st.sampled_from(ENTITY_NAMES), min_size=1, max_size=3, unique=True))):
        pk_f, sk_f = draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=2, max_size=2, unique=True))
        fields = {pk_f: draw(kinds), sk_f: draw(kinds)}
        attributes = draw(st.dictionaries(st.sampled_from(BUILTIN_LIKE) | st.sampled_from(POOL), st.sampled_from(
            ["string", "number", "integer", "decimal", "boolean", "binary", "string_set", "number_set", "list", "map",
             "any"]), max_size=6))
        attributes = {k: v for k, v in attributes.items() if k not in fields}
        version = draw(st.none() | st.sampled_from(POOL).filter(lambda v, taken={*fields, *attributes}: v not in taken))
        entities.append(Entity(name, pk=f"P{i}#{{{pk_f}}}", sk=f"S{i}#{{{sk_f}}}", fields=fields, attributes=attributes,
                               version_attribute=version))
    patterns = []
    # Most of the names the generated annotations use (a method named like one is what would shadow
    # it; the simplest example takes the first ones, str first), then any others of the pool.
    used = draw(st.permutations(ANNOTATION_NAMES))[: draw(st.integers(6, len(ANNOTATION_NAMES)))]
    for name in dict.fromkeys([*used, *draw(st.lists(st.sampled_from(POOL), max_size=6, unique=True))]):
        entity = draw(st.sampled_from(entities))
        patterns.append(AccessPattern(name, entity=entity.name, sk=draw(st.sampled_from([None, "begins_with", "=",
                                                                                           "between", ">="]))))
    try:
        return Model(draw(st.sampled_from([n for n in POOL + ("my-model",) if re.match(r"^[A-Za-z][A-Za-z0-9_-]*$", n)])),
                     entities=entities, access_patterns=patterns, ttl_attribute=draw(st.none() | st.just("ttl")))
    except ModelError:
        assume(False)
        raise  # unreachable


def _generable(model: Model) -> bool:
    """False only where TableClient.get itself cannot take a table-key field (it takes the key
    as keywords beside its own options): the generator refuses those, naming the field."""
    return not any(f in get_parameters() for e in model.entities.values() for f in e.table_key_fields)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                      HealthCheck.too_slow])
@given(models())
def test_any_valid_model_gives_a_module_that_compiles_and_imports(model: Model) -> None:
    # GIVEN any valid model named from builtins, keywords and odd strings
    # WHEN generated THEN it compiles and imports (or, only for a get option as key field, is refused)
    import tempfile

    if not _generable(model):
        with pytest.raises(CodegenError):
            generate(model)
        return
    with tempfile.TemporaryDirectory() as tmp:
        _check_compiles_and_imports(model, Path(tmp))


@settings(max_examples=MYPY_RUNS, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=st.lists(models().filter(_generable), min_size=BATCH, max_size=BATCH))
def test_batches_of_random_models_pass_mypy_strict_one_run_each(workdir: Path, batch: list[Model]) -> None:
    # GIVEN a batch of random valid models WHEN their modules are checked by one mypy --strict run
    # THEN no error (no shrinking, one mypy run per step would take minutes: a failure prints each
    # failing module's first errors and its model's JSON instead)
    errors = _mypy(workdir, [generate(m) for m in batch])
    assert errors == {}, "\n".join(
        f"{k}: {e}" for k, v in errors.items() for e in [*v[:5], f"model: {batch[int(k.split('_')[1])].to_json()}"]
    )
