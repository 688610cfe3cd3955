"""What bundling learns from a module's source, kept on disk by content for later processes.

Slimming a module and finding its imports are pure functions of its bytes, of the code doing it
and of the synth interpreter's version. Their results are stored under
``<cache>/analysis/<key>/<kind>/<sha256 of the source>.json`` (``<cache>``: :func:`.cache.cache_root`;
``<key>``: a hash of that code and version), so a fresh ``cdk synth`` does not analyse again what an
earlier one did. An entry that cannot be read or parsed is recomputed; a cache that cannot be
written is skipped. ``CONSTRUCTS_LIB_ANALYSIS_CACHE=0`` turns it off. See docs/adr/0063-analysis-cache.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import TypeVar

from .cache import cache_root

__all__ = ["ENV_DISABLE", "cached", "directory"]

#: Set to ``0`` to analyse every module in every process (nothing read or written on disk).
ENV_DISABLE = "CONSTRUCTS_LIB_ANALYSIS_CACHE"
#: The modules whose code decides what is stored: a change to any of them starts a new key.
_ANALYSING_MODULES = ("analysis_cache.py", "slim.py", "bytecode.py")

T = TypeVar("T")


@cache
def _key() -> str:
    digest = hashlib.sha256(sys.version.encode())
    here = Path(__file__).parent
    for name in _ANALYSING_MODULES:
        digest.update(name.encode() + b"\0" + (here / name).read_bytes())
    return digest.hexdigest()[:24]


def directory() -> Path:
    """Where entries of this code and interpreter version live (not created here)."""
    return cache_root() / "analysis" / _key()


def cached(kind: str, source: bytes, compute: Callable[[], T], encode: Callable[[T], object],
           decode: Callable[[object], T]) -> T:
    """``compute()``, or what an earlier process stored for ``kind`` and these ``source`` bytes.

    ``encode`` turns the value into JSON data and ``decode`` back; a stored entry ``decode``
    rejects (any exception) is computed again and replaced.
    """
    if os.environ.get(ENV_DISABLE) == "0":
        return compute()
    digest = hashlib.sha256(source).hexdigest()
    path = directory() / kind / f"{digest}.json"
    try:
        entry = json.loads(path.read_bytes())
        if entry["source"] == digest:
            return decode(entry["value"])
    except Exception:  # noqa: BLE001 - missing, unreadable or stale: compute it again
        pass
    value = compute()
    _store(path, {"source": digest, "value": encode(value)})
    return value


def _store(path: Path, entry: dict[str, object]) -> None:
    """Write ``entry`` whole or not at all (rename into place); a read-only cache only costs time."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(entry, separators=(",", ":")), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        with suppress(OSError):
            partial.unlink(missing_ok=True)
