"""Runtime value classes generate no code at import and behave as the dataclasses they replace (ADR 0057)."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructs_lib.runtime._records import frozen_record, record

REPO = Path(__file__).resolve().parents[3]

#: Every runtime module a bundled handler can load at cold start, and the exports handlers use.
COLD_PATH = textwrap.dedent(
    """
    import constructs_lib.runtime.handlers.audit, constructs_lib.runtime.handlers.backfill
    import constructs_lib.runtime.handlers.counter
    from constructs_lib.runtime import (AuditClient, ConditionNotMetError, CounterClient, Page, TableClient, Transaction,
                                        attr, new_ulid)
    import constructs_lib.runtime.merged_reads, constructs_lib.runtime.replication, constructs_lib.runtime.tenant
    """
)


# Twins: the same fields declared as a dataclass and as a record ---------------------------------------
@dataclasses.dataclass(frozen=True)
class FrozenDataclass:
    name: str
    count: int
    tags: tuple[str, ...] = ()


@frozen_record
class FrozenRecord:
    name: str
    count: int
    tags: tuple[str, ...] = ()

    def __init__(self, name: str, count: int, tags: tuple[str, ...] = ()) -> None:
        self.__dict__.update(name=name, count=count, tags=tags)


@dataclasses.dataclass
class MutableDataclass:
    name: str
    count: int = 0


@record
class MutableRecord:
    name: str
    count: int = 0

    def __init__(self, name: str, count: int = 0) -> None:
        self.name, self.count = name, count


def _shown(obj: Any) -> str:
    """``repr`` with the class name left out (the twins' names differ)."""
    return repr(obj).partition("(")[2]


values = st.tuples(st.text(max_size=5), st.integers(-3, 3), st.lists(st.text(max_size=3), max_size=3).map(tuple))


@given(values, values)
def test_frozen_record_behaves_as_a_frozen_dataclass(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    # GIVEN two field tuples, each built as a frozen dataclass and as a frozen record
    da, db, ra, rb = FrozenDataclass(*a), FrozenDataclass(*b), FrozenRecord(*a), FrozenRecord(*b)
    # THEN equality, hash, repr and the dataclasses functions agree with the dataclass's
    assert (ra == rb) == (da == db) and (ra != rb) == (da != db)
    assert (hash(ra) == hash(rb)) == (hash(da) == hash(db)) and hash(ra) == hash(da)
    assert _shown(ra) == _shown(da)
    assert dataclasses.asdict(ra) == dataclasses.asdict(da) and dataclasses.astuple(ra) == dataclasses.astuple(da)
    assert dataclasses.replace(ra, count=b[1]) == FrozenRecord(a[0], b[1], a[2])
    assert [f.name for f in dataclasses.fields(ra)] == [f.name for f in dataclasses.fields(da)]
    assert pickle.loads(pickle.dumps(ra)) == ra
    # AND a record never equals the other class's instance with the same fields
    assert ra != da and ra.__eq__(da) is NotImplemented


def test_frozen_record_refuses_assignment_as_a_frozen_dataclass() -> None:
    # GIVEN a frozen record
    value = FrozenRecord("a", 1)
    # WHEN a field is assigned or deleted, or a new attribute set THEN FrozenInstanceError, nothing changes
    for act in (lambda: setattr(value, "count", 2), lambda: delattr(value, "count"),
                lambda: setattr(value, "other", 1)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            act()
    assert value == FrozenRecord("a", 1) and not hasattr(value, "other")


@given(st.text(max_size=5), st.integers(), st.integers())
def test_record_behaves_as_a_mutable_dataclass(name: str, count: int, other: int) -> None:
    # GIVEN a mutable dataclass and a record with the same fields
    data, rec = MutableDataclass(name, count), MutableRecord(name, count)
    # WHEN a field is assigned on both
    data.count, rec.count = other, other
    # THEN both changed alike, compare alike and neither is hashable
    assert _shown(rec) == _shown(data) and rec == MutableRecord(name, other)
    assert (rec == MutableRecord(name, count)) == (data == MutableDataclass(name, count))
    for obj in (rec, data):
        with pytest.raises(TypeError, match="unhashable"):
            hash(obj)


def test_a_method_the_class_writes_stays() -> None:
    # GIVEN a record that writes its own repr
    @frozen_record
    class Named:
        name: str

        def __init__(self, name: str) -> None:
            self.__dict__["name"] = name

        def __repr__(self) -> str:
            return f"<{self.name}>"

    # THEN the record keeps it, as @dataclass does
    assert repr(Named("x")) == "<x>" and Named("x") == Named("x")


def test_importing_the_runtime_generates_no_method() -> None:
    # GIVEN a fresh interpreter recording every compile of source text given as a string (audit event
    # "compile" with filename "<string>"; modules compiled from their files are not counted)
    program = textwrap.dedent(
        """
        import json, sys
        compiled = []
        sys.addaudithook(lambda event, args: compiled.append(args[0]) if event == "compile" and isinstance(
            args[0], (str, bytes)) and args[1] == "<string>" else None)
        """
    ) + COLD_PATH + "print(json.dumps([c if isinstance(c, str) else c.decode() for c in compiled]))"
    # WHEN it imports every runtime module a handler loads at cold start
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", program], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    compiled = json.loads(proc.stdout.strip().splitlines()[-1])
    # THEN no source text defining a method was compiled: each record's dataclass processing runs an
    # empty function factory, and nothing else is compiled
    methods = [source for source in compiled if "def " in source and "return ()" not in source]
    assert compiled and not methods, methods[:1]


def test_a_record_without_a_docstring_is_named_without_inspecting_its_signature(monkeypatch) -> None:
    # GIVEN classes as the shipped bytecode defines them (no docstring), and one with its docstring,
    # where computing a signature fails (so @dataclass writing a docstring from one would show)
    import inspect

    def no_signature(*_: object, **__: object) -> None:
        raise AssertionError("inspect.signature called")

    monkeypatch.setattr(inspect, "signature", no_signature)

    class Bare:
        name: str

        def __init__(self, name: str) -> None:
            self.__dict__["name"] = name

    class Documented:
        """Kept as written."""

        count: int

        def __init__(self, count: int) -> None:
            self.count = count

    # WHEN they become records  THEN none needs a signature: the bare one is documented by its name,
    # the other keeps its docstring, and both are dataclasses still
    assert frozen_record(Bare).__doc__ == "Bare" and record(Documented).__doc__ == "Kept as written."
    assert [f.name for f in dataclasses.fields(Bare)] == ["name"] and dataclasses.is_dataclass(Documented)
