"""A function's own code, resolved at synth: file or directory entries, what a directory ships,
and the static check that the handler module defines the handler (no CDK involved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from constructs_lib.assets.exceptions import AssetError
from constructs_lib.assets.handler_code import (
    DEFAULT_INDEX,
    defined_names,
    resolve_handler_code,
)

WHAT = "TableFunction 'Api'"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def resolve(entry: Path, *, index: str | None = None, function: str = "handler", requirements: Path | None = None):
    return resolve_handler_code(entry=entry, index=index, function=function, requirements=requirements, what=WHAT)


# Directory entries --------------------------------------------------------------------------------
def test_directory_ships_modules_subpackages_and_data_but_not_tests_caches_or_dotfiles(tmp_path: Path) -> None:
    # GIVEN a handler directory with a sibling module, a sub-package, a data file, and what never ships
    root = write(tmp_path / "api", {
        "index.py": "from formatting import title\ndef handler(event, context):\n    return title('x')\n",
        "formatting.py": "def title(s):\n    return s.title()\n",
        "helpers/__init__.py": "", "helpers/maths.py": "def double(n):\n    return 2 * n\n",
        "templates/mail.txt": "Hello",
        "tests/test_index.py": "def test(): pass\n", "test_local.py": "", "conftest.py": "",
        "__pycache__/index.cpython-313.pyc": "", "helpers/__pycache__/maths.cpython-313.pyc": "",
        ".env": "SECRET=1", ".venv/lib/x.py": "", "node_modules/x/index.js": "", "cdk.out/manifest.json": "{}",
        "requirements.txt": "tabulate\n", "pyproject.toml": "", "pkg.egg-info/PKG-INFO": "",
    })
    # WHEN it is resolved with the default index
    code = resolve(root)
    # THEN exactly the code and data files ship, sorted, at the asset root
    assert [rel for rel, _ in code.files] == [
        "formatting.py", "helpers/__init__.py", "helpers/maths.py", "index.py", "templates/mail.txt"]
    # AND the handler is index.handler; the directory's requirements.txt is its dependency list
    assert code.handler == "index.handler" and DEFAULT_INDEX == "index.py"
    assert code.requirements == root / "requirements.txt"


def test_index_in_a_sub_package_gives_a_dotted_handler(tmp_path: Path) -> None:
    # GIVEN a handler module two levels down
    root = write(tmp_path / "svc", {"api/__init__.py": "", "api/routes.py": "async def on_event(event, context):\n    pass\n"})
    # WHEN it is named with index= and handler=
    code = resolve(root, index="api/routes.py", function="on_event")
    # THEN the Lambda handler string is the dotted module path
    assert code.handler == "api.routes.on_event"


def test_pyproject_dependencies_are_used_when_there_is_no_requirements_txt(tmp_path: Path) -> None:
    # GIVEN a directory with a pyproject.toml only
    root = write(tmp_path / "api", {"index.py": "handler = print\n", "pyproject.toml": "[project]\nname='x'\n"})
    # WHEN it is resolved
    # THEN the pyproject is the dependency source
    assert resolve(root).requirements == root / "pyproject.toml"


def test_a_file_entry_ships_only_that_file_and_has_no_implicit_requirements(tmp_path: Path) -> None:
    # GIVEN a handler file next to a sibling module and a requirements.txt
    root = write(tmp_path, {"orders_api.py": "def handler(e, c):\n    pass\n", "other.py": "", "requirements.txt": "x\n"})
    # WHEN the file is the entry
    code = resolve(root / "orders_api.py")
    # THEN only it ships (today's behaviour) and nothing is installed unless requirements= says so
    assert [rel for rel, _ in code.files] == ["orders_api.py"]
    assert code.handler == "orders_api.handler" and code.requirements is None
    assert resolve(root / "orders_api.py", requirements=root / "requirements.txt").requirements == root / "requirements.txt"


# The static handler check ---------------------------------------------------------------------------
@pytest.mark.parametrize("source", [
    "def handler(event, context):\n    pass\n",
    "async def handler(event, context):\n    pass\n",
    "handler = lambda event, context: None\n",
    "handler: object = print\n",
    "from app import make\nhandler = make()\n",
    "from app import lambda_handler as handler\n",
    "try:\n    from fast import handler\nexcept ImportError:\n    def handler(e, c):\n        pass\n",
    "if True:\n    handler = print\n",
])
def test_top_level_definitions_count(source: str) -> None:
    # GIVEN a module that binds `handler` at its top level in one of the usual ways
    # WHEN its names are read statically
    # THEN `handler` is among them
    assert "handler" in defined_names(source, filename="index.py")


def test_names_inside_functions_and_classes_do_not_count() -> None:
    # GIVEN `handler` bound only inside a function and as a class attribute
    source = "def make():\n    handler = 1\nclass App:\n    handler = 2\n"
    # WHEN its names are read
    names = defined_names(source, filename="index.py")
    # THEN only the top-level names are found
    assert names == {"make", "App"}


def test_a_handler_name_the_module_does_not_define_is_rejected_with_the_names_it_defines(tmp_path: Path) -> None:
    # GIVEN a module defining `main` and `helper`, not `handler`
    root = write(tmp_path / "api", {"index.py": "import json\ndef main(e, c):\n    pass\ndef _private():\n    pass\n"})
    # WHEN the function is resolved with the default handler name
    with pytest.raises(AssetError) as info:
        resolve(root)
    # THEN the error names the module, the missing name, the rule and what the module defines
    message = str(info.value)
    assert WHAT in message and "handler module 'index'" in message and "does not define 'handler'" in message
    assert "top-level def" in message and "it defines: json, main" in message


def test_a_missing_index_module_is_rejected_listing_the_modules_found(tmp_path: Path) -> None:
    # GIVEN a directory without index.py
    root = write(tmp_path / "api", {"app.py": "def handler(e, c):\n    pass\n", "tests/test_app.py": ""})
    # WHEN it is resolved with the default index
    with pytest.raises(AssetError) as info:
        resolve(root)
    # THEN the error names the module, says it is not in the bundle and lists what is
    assert "handler module 'index' (index.py) is not in the bundle" in str(info.value)
    assert "modules found: app.py" in str(info.value)


def test_an_index_inside_an_excluded_directory_is_rejected(tmp_path: Path) -> None:
    # GIVEN a handler module inside tests/ (never shipped)
    root = write(tmp_path / "api", {"tests/index.py": "def handler(e, c):\n    pass\n"})
    # WHEN it is named as the index
    # THEN the error says it is missing or excluded
    with pytest.raises(AssetError,
                       match=r"'tests\.index' \(tests/index\.py\) is not in the bundle .*missing or excluded"):
        resolve(root, index="tests/index.py")


def test_a_handler_module_with_a_syntax_error_is_rejected(tmp_path: Path) -> None:
    # GIVEN a handler module that does not parse
    root = write(tmp_path / "api", {"index.py": "def handler(:\n"})
    # WHEN it is resolved
    # THEN the error names the module and the line
    with pytest.raises(AssetError, match=r"handler module 'index' .* is not valid Python: .* on line 1"):
        resolve(root)


@pytest.mark.parametrize("index", ["index", "../index.py", "/abs/index.py", "my-api/index.py", "2fa.py"])
def test_an_index_that_is_not_a_module_path_is_rejected(tmp_path: Path, index: str) -> None:
    # GIVEN a directory entry and an index that is not a relative path of an importable module
    root = write(tmp_path / "api", {"index.py": "handler = print\n"})
    # WHEN it is resolved
    # THEN the error names the index and the rule
    with pytest.raises(AssetError, match=rf"index {index!r} must be a relative path of a \.py module"):
        resolve(root, index=index)


def test_index_with_a_file_entry_is_rejected(tmp_path: Path) -> None:
    # GIVEN a file entry
    entry = write(tmp_path, {"api.py": "handler = print\n"}) / "api.py"
    # WHEN index= is also given
    # THEN the error says index applies to a directory entry
    with pytest.raises(AssetError, match=r"index 'index\.py' applies to a directory entry; entry .*api\.py.* is a file"):
        resolve(entry, index="index.py")


@pytest.mark.parametrize("name", ["missing.py", "missing_dir"])
def test_a_missing_entry_is_rejected(tmp_path: Path, name: str) -> None:
    # GIVEN an entry path that does not exist
    # WHEN it is resolved
    # THEN the error names it and says what an entry must be
    with pytest.raises(AssetError,
                       match=rf"entry '.*{name}' does not exist; it must be a handler \.py file or a directory"):
        resolve(tmp_path / name)


def test_a_non_python_entry_file_is_rejected(tmp_path: Path) -> None:
    # GIVEN a file entry that is not a .py module
    entry = write(tmp_path, {"handler.js": "exports.handler = 1"}) / "handler.js"
    # WHEN it is resolved
    # THEN the error names it and the rule
    with pytest.raises(AssetError, match=r"entry file '.*handler\.js' must be a \.py module"):
        resolve(entry)


@pytest.mark.parametrize("shadow", ["constructs_lib/__init__.py", "constructs_lib.py", "model.json"])
def test_a_file_that_would_shadow_the_bundled_runtime_is_refused(tmp_path: Path, shadow: str) -> None:
    # GIVEN a handler directory holding a file where the construct puts its runtime or model
    root = write(tmp_path / "api", {"index.py": "handler = print\n", shadow: "{}"})
    # WHEN it is resolved
    # THEN the error names the file and the rule
    with pytest.raises(AssetError,
                       match=rf"{shadow.replace('.', '[.]')} in entry .* would shadow what the construct bundles"):
        resolve(root)


def test_a_handler_name_that_is_not_an_identifier_is_rejected(tmp_path: Path) -> None:
    # GIVEN a handler name with a dot
    entry = write(tmp_path, {"api.py": "handler = print\n"}) / "api.py"
    # WHEN it is resolved
    # THEN the error names it and the rule
    with pytest.raises(AssetError, match=r"handler 'api\.handler' must be a Python function name"):
        resolve(entry, function="api.handler")


def test_explicit_requirements_must_exist(tmp_path: Path) -> None:
    # GIVEN a requirements path that does not exist
    entry = write(tmp_path, {"api.py": "handler = print\n"}) / "api.py"
    # WHEN it is resolved
    # THEN the error names it and what it must be
    with pytest.raises(AssetError,
                       match=r"requirements '.*reqs\.txt' must be an existing requirements \.txt file or a pyproject\.toml"):
        resolve(entry, requirements=tmp_path / "reqs.txt")
