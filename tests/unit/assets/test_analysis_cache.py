"""The on-disk cache of the bundler's source analysis: same answers as analysing, never a wrong one."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import constructs_lib
from constructs_lib.assets import analysis_cache, bytecode, slim
from constructs_lib.assets.bundling import bundle
from constructs_lib.assets.cache import ENV_CACHE_DIR
from constructs_lib.model import Entity, Model

PACKAGE = Path(constructs_lib.__file__).resolve().parent
SHIPPED = sorted(p for sub in ("model", "runtime") for p in (PACKAGE / sub).rglob("*.py") if "__pycache__" not in p.parts)
SOURCE = (b"import os\nfrom .sibling import x as y\nif False:\n    import json\n"
          b"def f():\n    from . import later\n    return 'pkg.named'\n")


def forget() -> None:
    """What a fresh process knows: nothing analysed in memory."""
    slim.slim_source.cache_clear()
    bytecode.module_facts.cache_clear()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(analysis_cache.ENV_DISABLE, raising=False)
    forget()
    yield tmp_path / "cache"
    forget()


def entry(kind: str, source: bytes) -> Path:
    return analysis_cache.directory() / kind / f"{hashlib.sha256(source).hexdigest()}.json"


def test_a_later_process_reads_the_analysis_from_disk_instead_of_analysing(cache_dir: Path, monkeypatch) -> None:
    # GIVEN a module analysed and slimmed once
    facts = bytecode.module_facts(SOURCE)
    slimmed = slim.slim_source(SOURCE.decode())
    assert entry("imports", SOURCE).is_file() and entry("slim", SOURCE).is_file()
    assert entry("imports", SOURCE).is_relative_to(cache_dir / "analysis")
    # WHEN a fresh process asks again, unable to analyse anything
    forget()

    def refuse(*_: object) -> None:
        raise AssertionError("analysed again")

    monkeypatch.setattr(bytecode, "_analyse", refuse)
    monkeypatch.setattr(slim, "_slim", refuse)
    # THEN it gets the same answers, from the entries
    assert bytecode.module_facts(SOURCE) == facts
    assert slim.slim_source(SOURCE.decode()) == slimmed
    assert facts.strings == {"pkg.named"} and [s.names for s in facts.imports] == [("os",), ("x",), ("json",)]


def test_every_shipped_module_reads_back_exactly_as_analysed(cache_dir: Path) -> None:
    # GIVEN every module the bundler ships, slimmed and analysed (raw and slimmed) into an empty cache
    assert not analysis_cache.directory().exists()
    analysed = {}
    for p in SHIPPED:
        slimmed = slim.slim_source(p.read_text(encoding="utf-8"))
        analysed[p] = (slimmed, bytecode.module_facts(p.read_bytes()), bytecode.module_facts(slimmed.encode()))
    # WHEN a fresh process asks for them again
    forget()
    # THEN what it reads back is what was analysed: text, statements, names and strings alike
    for p, (slimmed, facts, slimmed_facts) in analysed.items():
        assert slim.slim_source(p.read_text(encoding="utf-8")) == slimmed, p
        assert bytecode.module_facts(p.read_bytes()) == facts, p
        assert bytecode.module_facts(slimmed.encode()) == slimmed_facts, p
    assert len(list((analysis_cache.directory() / "slim").iterdir())) == len(SHIPPED)


@pytest.mark.parametrize("damage", [
    pytest.param(lambda text: text[: len(text) // 2], id="truncated"),
    pytest.param(lambda text: "not json", id="not-json"),
    pytest.param(lambda text: json.dumps({"source": "0" * 64, "value": json.loads(text)["value"]}), id="other-source"),
    pytest.param(lambda text: json.dumps({**json.loads(text), "value": {"imports": [[1, 2]], "imports_at_call": [],
                                                                         "strings": []}}), id="wrong-shape"),
    pytest.param(lambda text: json.dumps({**json.loads(text), "value": {"imports": [], "imports_at_call": [],
                                                                         "strings": "ab"}}), id="strings-not-a-list"),
])
def test_a_damaged_entry_is_analysed_again_and_replaced(cache_dir: Path, damage) -> None:
    # GIVEN a stored entry, damaged
    facts = bytecode.module_facts(SOURCE)
    path = entry("imports", SOURCE)
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    forget()
    # WHEN a fresh process asks  THEN it gets the analysis, never the damaged value
    assert bytecode.module_facts(SOURCE) == facts
    # AND the entry is whole again
    assert json.loads(path.read_text(encoding="utf-8"))["source"] == hashlib.sha256(SOURCE).hexdigest()


def test_a_slimmed_entry_that_is_not_text_is_slimmed_again(cache_dir: Path) -> None:
    # GIVEN a slim entry whose value is not text
    slimmed = slim.slim_source(SOURCE.decode())
    path = entry("slim", SOURCE)
    path.write_text(json.dumps({"source": hashlib.sha256(SOURCE).hexdigest(), "value": 42}), encoding="utf-8")
    forget()
    # WHEN a fresh process asks  THEN it slims again
    assert slim.slim_source(SOURCE.decode()) == slimmed


def test_a_cache_path_that_is_a_file_only_costs_time(cache_dir: Path) -> None:
    # GIVEN the cache directory's path taken by a file (so nothing can be created below it)
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    cache_dir.write_text("a file", encoding="utf-8")
    # WHEN a module is analysed and slimmed  THEN the answers come, and no partial file is left
    assert bytecode.module_facts(SOURCE) == bytecode._analyse(SOURCE)
    assert slim.slim_source(SOURCE.decode()) == slim._slim(SOURCE.decode())
    assert cache_dir.read_text(encoding="utf-8") == "a file"


def test_switched_off_nothing_is_read_or_written(cache_dir: Path, monkeypatch) -> None:
    # GIVEN the cache switched off and an entry holding a wrong (but well-formed) answer
    bytecode.module_facts(SOURCE)
    path = entry("imports", SOURCE)
    path.write_text(json.dumps({"source": hashlib.sha256(SOURCE).hexdigest(),
                                "value": {"imports": [], "imports_at_call": [], "strings": []}}), encoding="utf-8")
    monkeypatch.setenv(analysis_cache.ENV_DISABLE, "0")
    forget()
    # WHEN a module is analysed  THEN the answer is analysed, not read
    assert bytecode.module_facts(SOURCE) == bytecode._analyse(SOURCE)
    # AND a new module leaves no entry behind
    other = SOURCE + b"import sys\n"
    bytecode.module_facts(other)
    assert not entry("imports", other).exists()


def test_the_key_covers_every_module_whose_code_decides_a_stored_value() -> None:
    # GIVEN the asset modules that store values through the cache
    users = {p.name for p in (PACKAGE / "assets").glob("*.py")
             if re.search(r"\bcached\(", p.read_text(encoding="utf-8")) and p.name != "analysis_cache.py"}
    # THEN each is hashed into the key, so changing how it analyses never reads an older answer
    assert users == {"slim.py", "bytecode.py"}
    assert users <= set(analysis_cache._ANALYSING_MODULES)


def test_a_bundle_staged_from_cached_analysis_is_the_bundle_staged_without(cache_dir: Path, monkeypatch) -> None:
    # GIVEN a generated handler's bundle staged with the cache off, then with it on, cold and warm
    monkeypatch.setenv(bytecode.ENV_DISABLE, "0")
    model = Model("ac", entities=[Entity("Thing", pk="THING#{id}", fields=["id"])])
    handler = "constructs_lib.runtime.handlers.audit.handler"

    def staged() -> tuple[Path, tuple[str, ...]]:
        forget()
        result = bundle(model, handler=handler)
        return result.directory, result.runtime_files

    monkeypatch.setenv(analysis_cache.ENV_DISABLE, "0")
    without = staged()
    monkeypatch.delenv(analysis_cache.ENV_DISABLE)
    cold, warm = staged(), staged()
    # THEN all three are the same directory (named by content) with the same files
    assert without == cold == warm
    assert any((analysis_cache.directory() / "imports").iterdir())
