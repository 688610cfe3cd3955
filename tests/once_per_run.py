"""Build something once per test run and share it between the pytest-xdist workers."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """A directory holding what ``build(directory)`` wrote into it, built once per run.

    Without pytest-xdist it is a fresh temporary directory. Under xdist the first worker to ask
    builds it into the run's shared temporary directory while the others wait on a lock, then every
    worker reads the same directory; nothing may write into it after. A build that failed midway
    is started again from scratch by the next worker to ask.
    """
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        directory = tmp_path_factory.mktemp(name)
        build(directory)
        return directory
    shared = tmp_path_factory.getbasetemp().parent / name
    done = shared.parent / f"{name}.done"  # written last: the build finished
    with (shared.parent / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.is_file():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            build(shared)
            done.touch()
    return shared
