"""Fixtures of the packaging tests: one sdist and wheel per run (``python -m build``, as ``make
dist`` builds them; shared by the pytest-xdist workers), and a clock per module whose steps and
figures are printed when the module is done (set ``CLOCK_TITLE`` in the module)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _apps import REPO, Clock, clean_env, kb
from once_per_run import once_per_run

#: The sources the sdist and the wheel are built from (pyproject's ``readme`` and ``license-files``
#: need README.md and LICENSE; MANIFEST.in adds CHANGELOG.md to the sdist).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "CHANGELOG.md", "constructs_lib")
_SETUP_HINT = "run `make setup` (it installs the dev extra, which holds the build requirements)"


@dataclass(frozen=True)
class BuiltWheel:
    path: Path
    seconds: float

    @property
    def sdist(self) -> Path:
        """The sdist built beside the wheel."""
        (sdist,) = self.path.parent.glob("constructs_lib-*.tar.gz")
        return sdist


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
    """The sdist, then the wheel from it, as ``make dist`` builds them (offline: the build
    requirements are this environment's, ``--no-isolation``)."""
    timer = Clock("build sdist and wheel")
    timer.run("build", [sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, sources], cwd=dist,
              env=clean_env())
    (wheel,) = dist.glob("constructs_lib-*.whl")
    return BuiltWheel(wheel, time.monotonic() - timer.start)


@pytest.fixture(scope="session")
def built_wheel(sources: Path, tmp_path_factory: pytest.TempPathFactory) -> BuiltWheel:
    """The wheel (and the sdist beside it), built once per run offline (``python -m build
    --no-isolation``) and shared by the pytest-xdist workers (``once_per_run`` in tests/once_per_run.py)."""
    missing = [name for name in ("setuptools", "wheel", "build") if importlib.util.find_spec(name) is None]
    assert not missing, f"{', '.join(missing)} missing from {sys.prefix}: {_SETUP_HINT}"

    def build(dist: Path) -> None:
        (dist / "build-seconds").write_text(str(_build(sources, dist).seconds), encoding="utf-8")

    dist = once_per_run(tmp_path_factory, "packaging-dist", build)
    (wheel,) = dist.glob("constructs_lib-*.whl")
    return BuiltWheel(wheel, float((dist / "build-seconds").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def wheel_file(built_wheel: BuiltWheel, clock: Clock) -> Path:
    clock.note("wheel", f"{built_wheel.path.name}, {kb(built_wheel.path.stat().st_size)}, "
                        f"built in {built_wheel.seconds:.1f} s (once per run)")
    return built_wheel.path
