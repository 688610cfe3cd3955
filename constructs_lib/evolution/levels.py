"""The levels of a model change, mildest first: ``safe``, ``backfill``, ``breaking``.

Rationale: docs/adr/0110-model-evolution.md, docs/adr/0038-model-diff-is-complete.md.
"""

from __future__ import annotations

from typing import Literal

Level = Literal["safe", "backfill", "breaking"]
SAFE: Level = "safe"
BACKFILL: Level = "backfill"
BREAKING: Level = "breaking"
LEVELS: tuple[Level, ...] = (SAFE, BACKFILL, BREAKING)


def worst(*levels: Level) -> Level:
    """The most severe of ``levels`` (``safe`` when none is given)."""
    return max(levels, key=LEVELS.index, default=SAFE)
