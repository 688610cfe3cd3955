"""Bytecode for Lambda assets: interpreter discovery, unchecked-hash pycs, the import path."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import constructs_lib
from constructs_lib.assets import bytecode
from constructs_lib.assets.bundling import bundle
from constructs_lib.assets.exceptions import AssetError
from constructs_lib.model import Entity, Model

HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"
PACKAGE = Path(constructs_lib.__file__).resolve().parent


def fresh_compiler() -> bytecode.Compiler:
    compiler = bytecode.compiler_for(HERE)
    assert compiler is not None  # the synth interpreter itself always qualifies
    return bytecode.Compiler(compiler.executable, compiler.version, compiler.full_version)


def test_pyc_path_follows_pep_3147() -> None:
    # GIVEN module paths WHEN naming their pycs THEN they sit in __pycache__ with the cache tag
    assert bytecode.pyc_path("pkg/mod.py", "cpython-313") == "pkg/__pycache__/mod.cpython-313.pyc"
    assert bytecode.pyc_path("index.py", "cpython-312") == "__pycache__/index.cpython-312.pyc"


def test_the_synth_interpreter_is_the_first_candidate_for_its_own_version() -> None:
    # GIVEN this interpreter's version WHEN looking for interpreters THEN it comes first
    assert bytecode.candidates(HERE)[0] == sys.executable
    assert bytecode.compiler_for(HERE).tag == sys.implementation.cache_tag  # type: ignore[union-attr]


def test_pycs_are_unchecked_hash_and_deterministic() -> None:
    # GIVEN a module source
    source = b"def f(x):\n    assert x\n    return x + 1\n"
    # WHEN two fresh compilers compile it
    first = fresh_compiler().compile({"pkg/mod.py": source}, what="test")["pkg/mod.py"]
    second = fresh_compiler().compile({"pkg/mod.py": source}, what="test")["pkg/mod.py"]
    # THEN the bytes are identical, and the header says: hash-based, not checked against the source
    assert first == second
    assert first[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(first[4:8], "little") == 1
    assert first[8:16] == importlib.util.source_hash(source)


def test_a_shipped_pyc_is_what_python_imports(tmp_path: Path) -> None:
    # GIVEN a module compiled into __pycache__, whose source then differs (an unchecked pyc is
    # trusted as is: proof the import read the pyc, not the source)
    pyc = fresh_compiler().compile({"mod.py": b"VALUE = 'compiled'\n"}, what="test")["mod.py"]
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / bytecode.pyc_path("mod.py", sys.implementation.cache_tag)).write_bytes(pyc)
    (tmp_path / "mod.py").write_text("VALUE = 'source'\n", encoding="utf-8")
    # WHEN a fresh interpreter that writes no bytecode (-B, like a read-only /var/task) imports it
    out = subprocess.run([sys.executable, "-B", "-c", "import mod; print(mod.VALUE)"], cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout.strip()
    # THEN the compiled module ran
    assert out == "compiled"


def test_a_module_that_does_not_compile_for_the_runtime_is_refused() -> None:
    # GIVEN a module with a syntax error WHEN it is compiled THEN the error names the file and the version
    with pytest.raises(AssetError, match=rf"broken.py does not compile for the function's Python {HERE}"):
        fresh_compiler().compile({"broken.py": b"def (:\n"}, what="test")


def test_without_an_interpreter_one_line_says_assets_ship_source_only(monkeypatch, capsys) -> None:
    # GIVEN no interpreter of a version
    monkeypatch.setattr(bytecode, "candidates", lambda version: [])
    bytecode.compiler_for.cache_clear()
    try:
        # WHEN asked twice in one process
        assert bytecode.compiler_for("3.99") is None
        assert bytecode.compiler_for("3.99") is None
        # THEN one line on stderr says so, once
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no Python 3.99 interpreter found" in err and "source only" in err
    finally:
        bytecode.compiler_for.cache_clear()


def test_import_path_follows_module_level_and_lazy_imports_only() -> None:
    # GIVEN the bundled packages and a handler importing two names the runtime exports lazily
    sources = {f"constructs_lib/{p.relative_to(PACKAGE).as_posix()}": p.read_bytes()
               for sub in ("model", "runtime") for p in (PACKAGE / sub).rglob("*.py") if "__pycache__" not in p.parts}
    sources["constructs_lib/__init__.py"] = b""
    sources["index.py"] = b"from constructs_lib.runtime import TableClient, new_ulid\ndef handler(e, c):\n    return 1\n"
    # WHEN its import path is computed
    path = bytecode.import_path(sources, ["index"])
    # THEN it holds the handler, the packages above, the modules defining the names and what they import
    assert {"index.py", "constructs_lib/__init__.py", "constructs_lib/runtime/__init__.py",
            "constructs_lib/runtime/client.py", "constructs_lib/runtime/items.py",
            "constructs_lib/runtime/ulid.py"} <= path
    # AND not what is imported only inside functions or for type checking
    assert "constructs_lib/runtime/handlers/audit.py" not in path
    assert "constructs_lib/runtime/stats/report.py" not in path


def test_import_path_follows_a_deprecated_name_to_the_module_defining_it() -> None:
    # GIVEN the bundled packages and a handler written for 0.1.0, importing names the runtime
    # package answers for only as deprecated (docs/releases.md)
    sources = {f"constructs_lib/{p.relative_to(PACKAGE).as_posix()}": p.read_bytes()
               for sub in ("model", "runtime") for p in (PACKAGE / sub).rglob("*.py") if "__pycache__" not in p.parts}
    sources["constructs_lib/__init__.py"] = b""
    sources["old.py"] = (b"from constructs_lib.runtime import TableClient, expiry, CounterSpec\n"
                         b"from constructs_lib.runtime.patterns.backfill import Backfill\n")
    # WHEN its import path is computed
    path = bytecode.import_path(sources, ["old"])
    # THEN it holds the module each old name went to, through a package to the module defining it
    assert {"constructs_lib/runtime/ttl.py", "constructs_lib/runtime/patterns/counter/__init__.py",
            "constructs_lib/runtime/patterns/counter/spec.py", "constructs_lib/runtime/patterns/backfill/worker.py",
            "constructs_lib/runtime/client.py"} <= path
    # AND a handler using none of them ships none of them
    sources["new.py"] = b"from constructs_lib.runtime import TableClient\n"
    assert not {"constructs_lib/runtime/patterns/counter/spec.py", "constructs_lib/runtime/patterns/backfill/worker.py"} \
        & bytecode.import_path(sources, ["new"])


def test_import_closure_also_follows_imports_made_at_call_time() -> None:
    # GIVEN a package whose module imports one module at module level, one inside a function (in a
    # loop of a method), one for type checking only, and one by a literal name
    sources = {
        "pkg/__init__.py": b"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .lazy import Lazy\n",
        "pkg/top.py": b"from . import eager\n",
        "pkg/eager.py": (b"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import typed\n"
                         b"class C:\n    def f(self):\n        for _ in ():\n            from .later import x\n"
                         b"def g():\n    import importlib\n    return importlib.import_module('pkg.named')\n"),
        "pkg/later.py": b"x = 1\n", "pkg/named.py": b"", "pkg/typed.py": b"", "pkg/lazy.py": b"", "pkg/unused.py": b"",
        "whole.py": b"import pkg\n", "star.py": b"from pkg import *\n",
    }
    # WHEN the closure of pkg.top is computed  THEN it holds what any call can import, not what only
    # type checkers see nor what nothing imports
    assert bytecode.import_closure(sources, ["pkg.top"]) == {
        "pkg/__init__.py", "pkg/top.py", "pkg/eager.py", "pkg/later.py", "pkg/named.py"}
    # AND the cold-start import path stays the module-level imports
    assert bytecode.import_path(sources, ["pkg.top"]) == {"pkg/__init__.py", "pkg/top.py", "pkg/eager.py"}
    # AND a package used as an object (``pkg.Lazy``, ``import *``) brings all its lazy exports
    assert "pkg/lazy.py" in bytecode.import_closure(sources, ["whole"])
    assert "pkg/lazy.py" in bytecode.import_closure(sources, ["star"])
    assert "pkg/lazy.py" not in bytecode.import_path(sources, ["whole"])


def test_a_bundle_ships_the_package_modules_its_code_and_dependencies_can_import(tmp_path: Path, monkeypatch) -> None:
    # GIVEN a counter aggregator's bundle, once alone and once with a dependency that uses the audit client
    monkeypatch.setenv(bytecode.ENV_DISABLE, "0")
    model = Model("bc", entities=[Entity("Thing", pk="THING#{id}", fields=["id"])])
    deps = tmp_path / "deps"
    (deps / "shared").mkdir(parents=True)
    (deps / "shared" / "__init__.py").write_text("def audit():\n    from constructs_lib.runtime import AuditClient\n")
    (deps / "other.py").write_text("import json\n")
    handler = "constructs_lib.runtime.handlers.counter.handler"
    alone = bundle(model, handler=handler).runtime_files
    with_dep = bundle(model, handler=handler, dependencies=deps)
    # THEN alone it holds the aggregator's modules and not the table or audit clients
    assert "constructs_lib/runtime/handlers/counter.py" in alone and "constructs_lib/model/model.py" in alone
    assert not {"constructs_lib/runtime/client.py", "constructs_lib/runtime/patterns/audit/client.py"} & set(alone)
    # AND with the dependency it also holds what the dependency can import, and the dependency itself
    assert "constructs_lib/runtime/patterns/audit/client.py" in with_dep.runtime_files
    assert {"shared/__init__.py", "other.py"} <= set(with_dep.dependency_files)
    # AND without a handler nothing is pruned (every model and runtime module but the backfill job's)
    assert "constructs_lib/runtime/client.py" in bundle(model).runtime_files


def test_a_counter_ships_the_model_bytecode_only_when_its_first_call_reads_the_model(monkeypatch) -> None:
    # GIVEN a counter aggregator, bound to a table the stack owns and to one imported with a pinned fingerprint
    monkeypatch.delenv(bytecode.ENV_DISABLE, raising=False)
    model = Model("bc", entities=[Entity("Thing", pk="THING#{id}", fields=["id"])])
    handler = "constructs_lib.runtime.handlers.counter.handler"
    owned = bundle(model, handler=handler, python_version=HERE).runtime_files
    pinned = bundle(model, handler=handler, python_version=HERE, fingerprint_check=True).runtime_files
    model_pyc = bytecode.pyc_path("constructs_lib/model/model.py", sys.implementation.cache_tag)
    # THEN both ship the model's sources (contract.verify can load it) and the handler's bytecode
    assert "constructs_lib/model/model.py" in owned and "constructs_lib/model/model.py" in pinned
    assert bytecode.pyc_path("constructs_lib/runtime/handlers/counter.py", sys.implementation.cache_tag) in owned
    # AND only the pinned one, whose first call loads the model to compare fingerprints, its bytecode
    assert model_pyc not in owned and model_pyc in pinned
    # AND importing the handler loads no model module (contract.py loads the fingerprints on use)
    loaded = bytecode.import_path({rel: (PACKAGE.parent / rel).read_bytes() for rel in owned if rel.endswith(".py")},
                                  ["constructs_lib.runtime.handlers.counter"])
    assert not [rel for rel in loaded if rel.startswith("constructs_lib/model/")]


def test_two_bundles_of_the_same_sources_are_byte_identical(tmp_path: Path, monkeypatch) -> None:
    # GIVEN a model and a generated handler's bundle, staged twice from scratch with fresh compilers
    model = Model("bc", entities=[Entity("Thing", pk="THING#{id}", fields=["id"])])

    def staged() -> dict[str, bytes]:
        run = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        run.mkdir()
        monkeypatch.setattr("tempfile.tempdir", str(run))
        bytecode.compiler_for.cache_clear()
        result = bundle(model, handler="constructs_lib.runtime.handlers.counter.handler", python_version=HERE)
        return {p.relative_to(result.directory).as_posix(): p.read_bytes()
                for p in result.directory.rglob("*") if p.is_file()}

    try:
        first, second = staged(), staged()
    finally:
        bytecode.compiler_for.cache_clear()
    # THEN they hold the same files with the same bytes, bytecode included
    assert first == second
    assert any(name.endswith(f".{sys.implementation.cache_tag}.pyc") for name in first)



def test_a_changed_compile_step_stages_a_new_asset_directory(monkeypatch) -> None:
    # GIVEN a bundle staged once (staging directories are named after their content and reused)
    model = Model("bc", entities=[Entity("Thing", pk="THING#{id}", fields=["id"])])
    handler = "constructs_lib.runtime.handlers.counter.handler"
    first = bundle(model, handler=handler, python_version=HERE).directory
    assert bundle(model, handler=handler, python_version=HERE).directory == first
    # WHEN the worker that compiles the pycs changes (another library version), the sources not
    monkeypatch.setattr(bytecode, "worker_digest", lambda: b"another worker")
    # THEN the same sources stage into another directory: pycs of the old worker are not reused
    assert bundle(model, handler=handler, python_version=HERE).directory != first

LIBRARY_SOURCE = b'''"""Module docstring."""
from __future__ import annotations


class Box:
    """Class docstring."""

    def get(self, x: int) -> int:
        """Method docstring."""
        assert x >= 0, "negative"
        return x + 1


def only_a_docstring() -> None:
    """Nothing else."""


def fails() -> None:
    raise ValueError("line 19")
'''


def load(pyc: bytes, name: str) -> dict[str, object]:
    """The namespace of a module run from its pyc bytes (the 16-byte header skipped)."""
    import marshal

    namespace: dict[str, object] = {"__name__": name}
    exec(marshal.loads(pyc[16:]), namespace)  # noqa: S102 (the pyc the test compiled)
    return namespace


def test_library_modules_ship_without_docstrings_but_with_asserts_and_line_numbers() -> None:
    # GIVEN one source compiled as a library module and as a user's module
    pycs = fresh_compiler().compile({"constructs_lib/runtime/mod.py": LIBRARY_SOURCE, "handler.py": LIBRARY_SOURCE},
                                    what="test")
    library, user = load(pycs["constructs_lib/runtime/mod.py"], "lib"), load(pycs["handler.py"], "user")
    # THEN the library's bytecode holds no docstring, the user's keeps every one
    assert [library.get("__doc__"), library["Box"].__doc__, library["Box"].get.__doc__,  # type: ignore[attr-defined]
            library["only_a_docstring"].__doc__] == [None] * 4  # type: ignore[attr-defined]
    assert (user["__doc__"], user["Box"].get.__doc__) == ("Module docstring.", "Method docstring.")  # type: ignore[attr-defined]
    assert len(pycs["constructs_lib/runtime/mod.py"]) < len(pycs["handler.py"])
    # AND behaves the same: the result, the assert (not stripped, unlike -OO), the function left empty
    box = library["Box"]()  # type: ignore[operator]
    assert box.get(1) == 2
    with pytest.raises(AssertionError, match="negative"):
        box.get(-1)
    assert library["only_a_docstring"]() is None  # type: ignore[operator]
    # AND a traceback names the source's own line
    with pytest.raises(ValueError) as raised:
        library["fails"]()  # type: ignore[operator]
    assert raised.traceback[-1].lineno + 1 == 19
    # AND the header still hashes the source as written
    assert pycs["constructs_lib/runtime/mod.py"][8:16] == importlib.util.source_hash(LIBRARY_SOURCE)
