"""Fixtures of the packaging tests: one wheel per run (shared by the pytest-xdist workers), and a
clock per module whose steps and figures are printed when the module is done (set ``CLOCK_TITLE``
in the module)."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _apps import REPO, Clock, clean_env, kb

#: The sources a wheel is built from (pyproject's ``readme`` needs README.md).
SOURCES = ("pyproject.toml", "README.md", "constructs_lib")
_SETUP_HINT = "run `make setup` (it installs the dev extra, which holds the build requirements)"


@dataclass(frozen=True)
class BuiltWheel:
    path: Path
    seconds: float


@pytest.fixture(scope="module")
def clock(request: pytest.FixtureRequest) -> Iterator[Clock]:
    timer = Clock(getattr(request.module, "CLOCK_TITLE", request.module.__name__))
    yield timer
    text = timer.summary()
    print(text)  # in the captured output (-rP, junit)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:  # and on the terminal, even when captured
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\n{text}")


@pytest.fixture(scope="session")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package sources (so the build writes nothing into the working tree)."""
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=ignore)
        else:
            shutil.copy2(REPO / name, src / name)
    return src


def _build(sources: Path, dist: Path) -> BuiltWheel:
    timer = Clock("build wheel")
    timer.run("build wheel", [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                              "--no-index", "--quiet", "-w", dist, sources], cwd=dist, env=clean_env())
    (wheel,) = dist.glob("constructs_lib-*.whl")
    return BuiltWheel(wheel, time.monotonic() - timer.start)


@pytest.fixture(scope="session")
def built_wheel(sources: Path, tmp_path_factory: pytest.TempPathFactory) -> BuiltWheel:
    """The wheel, built once per run offline (``--no-build-isolation --no-index``): under
    pytest-xdist the first worker to need it builds it into the run's shared temporary directory
    while the others wait on a lock (as ``shop_cdk_out`` in tests/conftest.py); nothing writes
    into it after."""
    missing = [name for name in ("setuptools", "wheel") if importlib.util.find_spec(name) is None]
    assert not missing, f"{', '.join(missing)} missing from {sys.prefix}: {_SETUP_HINT}"
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return _build(sources, tmp_path_factory.mktemp("dist"))
    shared = tmp_path_factory.getbasetemp().parent / "packaging-dist"
    done = shared.parent / "packaging-dist.seconds"  # written last: the build finished
    with (shared.parent / "packaging-dist.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.is_file():
            shutil.rmtree(shared, ignore_errors=True)  # a worker that failed midway left it half-written
            shared.mkdir()
            done.write_text(str(_build(sources, shared).seconds), encoding="utf-8")
    (wheel,) = shared.glob("constructs_lib-*.whl")
    return BuiltWheel(wheel, float(done.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def wheel_file(built_wheel: BuiltWheel, clock: Clock) -> Path:
    clock.note("wheel", f"{built_wheel.path.name}, {kb(built_wheel.path.stat().st_size)}, "
                        f"built in {built_wheel.seconds:.1f} s (once per run)")
    return built_wheel.path
