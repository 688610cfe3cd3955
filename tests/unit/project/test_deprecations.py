"""Names removed or renamed before 0.2.0 answer from their old place until 1.0.0 (docs/releases.md).

Every deprecated name (the runtime's in ``runtime/_deprecated.py``, which the bundler reads too,
the constructs' in their modules' ``_DEPRECATED``) is checked in a fresh interpreter: the old name gives the object
the new import gives, its first use warns once with a ``DeprecationWarning`` attributed to the
caller and naming the new import (which is run and compared) and the version removing it, and it
is neither in ``__all__`` nor in ``dir()``. Importing a package loads none of the modules its old
names went to. Every name 0.1.0 made public (``surface_0_1_0.txt``) still imports.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from scripts.api_report import deprecated_names

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "constructs_lib"
SURFACE = Path(__file__).with_name("surface_0_1_0.txt")
#: The version every deprecation of 0.x is removed in (docs/releases.md).
REMOVED_IN = "1.0.0"
#: Modules importing the AWS CDK (their tables are checked in an interpreter of their own).
CDK_MODULES = ("constructs_lib", "constructs_lib.constructs.operations", "constructs_lib.constructs.stream_audit")


def tables() -> dict[str, list[str]]:
    """Module name -> its deprecated names, read from the sources (``runtime/_deprecated.py``'s
    ``TABLES`` and every module's ``_DEPRECATED``), as the API report reads them."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        if names := [old for old, *_ in deprecated_names(REPO, module)]:
            found[module] = names
    return found


TABLES = tables()
ENTRIES = [(module, name) for module, names in TABLES.items() for name in names]

CHECK = textwrap.dedent('''
    import importlib, json, re, sys, warnings
    results = {}
    for module_name, names in MODULES:
        module = importlib.import_module(module_name)
        for name in names:
            with warnings.catch_warnings(record=True) as first:
                warnings.simplefilter("always")
                value = getattr(module, name)
            with warnings.catch_warnings(record=True) as second:
                warnings.simplefilter("always")
                again = getattr(module, name)
            message = str(first[0].message) if first else ""
            found = re.search(r"(?:it is now ([\\w.]+): )?`(from [\\w.]+ import \\w+)`$", message)
            namespace = {}
            if found:
                exec(found.group(2), namespace)
            head = found.group(2).rsplit(" ", 1)[1] if found else None
            new = namespace.get(head)
            for part in (found.group(1) or "").split(".")[1:] if found else ():
                new = getattr(new, part, None)
            results[f"{module_name}.{name}"] = {
                "categories": [w.category.__name__ for w in first], "second": len(second),
                "caller": first[0].filename if first else None, "message": message,
                "same_object": value is again is new and new is not None,
                "in_all": name in getattr(module, "__all__", ()), "in_dir": name in dir(module),
            }
    print(json.dumps(results))
''')


def run(code: str, **replace: Any) -> Any:
    for key, value in replace.items():
        code = code.replace(key, repr(value))
    env = {**os.environ, "PYTHONPATH": str(REPO), "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def checked() -> dict[str, Any]:
    plain = [(m, n) for m, n in TABLES.items() if m not in CDK_MODULES]
    cdk = [(m, n) for m, n in TABLES.items() if m in CDK_MODULES]
    return {**run(CHECK, MODULES=plain), **run(CHECK, MODULES=cdk)}


def test_the_tables_hold_every_name_removed_before_0_2_0() -> None:
    # GIVEN the deprecation tables read from the sources
    # THEN they are those of the packages and modules that lost names (docs/releases.md lists them)
    assert {m: len(n) for m, n in TABLES.items()} == {
        "constructs_lib": 1, "constructs_lib.constructs.operations": 1, "constructs_lib.constructs.stream_audit": 1,
        "constructs_lib.runtime": 46, "constructs_lib.runtime.cursors": 1, "constructs_lib.runtime.items": 2,
        "constructs_lib.runtime.patterns.backfill": 4,
        "constructs_lib.runtime.stats": 1,
    }
    assert "OutOfScopeError" in TABLES["constructs_lib.runtime"]


@pytest.mark.parametrize(("module", "name"), ENTRIES, ids=[f"{m}.{n}" for m, n in ENTRIES])
def test_an_old_name_is_the_new_object_and_warns_once(checked: dict[str, Any], module: str, name: str) -> None:
    # GIVEN a fresh interpreter
    result = checked[f"{module}.{name}"]
    # WHEN the old name is used twice
    # THEN the first use warns once, a DeprecationWarning pointing at the caller, the second not at all
    assert result["categories"] == ["DeprecationWarning"] and result["second"] == 0
    assert result["caller"] == "<string>"
    # AND it names the old name, since when, the version removing it and the import to use, which
    # gives the very object the old name gave
    assert result["message"].startswith(f"{module}.{name} is deprecated since constructs_lib 0.2.0 and will be "
                                        f"removed in {REMOVED_IN}; ")
    assert result["same_object"], result["message"]
    # AND the name is not part of the public surface
    assert not result["in_all"] and not result["in_dir"]


def test_importing_a_package_loads_none_of_the_modules_its_old_names_went_to() -> None:
    # GIVEN a fresh interpreter WHEN the runtime and its packages answering for old names are imported
    loaded = run("import json, sys\nimport constructs_lib.runtime, constructs_lib.runtime.stats\n"
                 "import constructs_lib.runtime.patterns.backfill\n"
                 "print(json.dumps(sorted(m for m in sys.modules if m.startswith('constructs_lib'))))")
    # THEN nothing but the packages and the export helper is loaded (the old names load on use)
    assert loaded == ["constructs_lib", "constructs_lib.runtime", "constructs_lib.runtime._exports",
                      "constructs_lib.runtime.exceptions", "constructs_lib.runtime.patterns",
                      "constructs_lib.runtime.patterns.backfill", "constructs_lib.runtime.stats"]


def test_every_name_0_1_0_made_public_still_imports() -> None:
    # GIVEN every name 0.1.0 exported from a public package, or its guides and examples imported
    names = [line.split() for line in SURFACE.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(names) >= 250
    # WHEN each is imported from where it was, in a fresh interpreter
    failed = run(textwrap.dedent('''
        import importlib, json, warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        failed = []
        for module, name in NAMES:
            try:
                getattr(importlib.import_module(module), name)
            except Exception as exc:
                failed.append(f"{module}.{name}: {type(exc).__name__}: {exc}")
        print(json.dumps(failed))
    '''), NAMES=names)
    # THEN every one answers, public still or deprecated
    assert failed == []


def test_the_releases_page_lists_every_deprecated_name_and_where_it_went() -> None:
    # GIVEN the table of deprecated names on docs/releases.md
    page = (REPO / "docs" / "releases.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| `([\w.]+)` \| `([\w.]+)` \|$", page, flags=re.MULTILINE))
    # THEN it lists exactly the names of the tables, each with where it went
    expected = {f"{module}.{old}": where for module in TABLES for old, where, _, _ in deprecated_names(REPO, module)}
    assert listed == expected
