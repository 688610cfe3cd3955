"""The per-user cache shared by synth-time installs and the test helpers.

Python dependencies installed for Lambda assets (``python-deps/``) and the DynamoDB Local
provisioned by the pytest plugin (``dynamodb-local/``) live under one directory:

1. ``$CONSTRUCTS_LIB_CACHE_DIR`` if set,
2. else ``$XDG_CACHE_HOME/constructs_lib`` if ``XDG_CACHE_HOME`` is set,
3. else ``~/.cache/constructs_lib``.

Standard library only; importing it never imports the AWS CDK.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ENV_CACHE_DIR", "cache_root", "locked"]

#: Environment variable naming the cache directory (overrides the XDG location).
ENV_CACHE_DIR = "CONSTRUCTS_LIB_CACHE_DIR"


def cache_root() -> Path:
    """The cache directory (not created here); see the module docstring for the search order."""
    explicit = os.environ.get(ENV_CACHE_DIR)
    if explicit:
        return Path(explicit).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "constructs_lib").resolve()


@contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on *lock_file* (created with its parents if missing).

    Parallel processes (pytest-xdist workers, two synths) installing the same thing wait for each
    other instead of racing. Where ``fcntl`` does not exist (Windows) nothing is locked: callers
    still install into a private directory and rename it into place, so a race only costs time.
    """
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(lock_file, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
