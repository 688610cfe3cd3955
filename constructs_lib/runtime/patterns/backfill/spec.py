"""What a backfill job does: its id, fan-out, write budget and the indexes it recomputes."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import Any

from ..._records import frozen_record
from ...exceptions import BackfillError
from ...jsontext import load_json

_JOB_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@frozen_record
class BackfillSpec:
    """A backfill job.

    Parameters
    ----------
    job_id
        Names the job's checkpoints (1-64 of ``[A-Za-z0-9_.-]``). Default ``"default"``; a new
        id starts over, the same id resumes.
    segments
        Parallel Scan segments (1-1000). Default 4.
    wcu_per_second
        Write budget of the whole job, checkpoints included: within any sliding second the job's
        writes consume at most this many WCU. Default 100.
    indexes
        Index names whose derived keys are recomputed. Default None: every index of the model.
    page_size
        Items per Scan page (a checkpoint follows each page). Default 100.
    max_attempts
        Tries per item when concurrent writes keep changing it. Default 5.
    """

    job_id: str = "default"
    segments: int = 4
    wcu_per_second: float = 100.0
    indexes: tuple[str, ...] | None = None
    page_size: int = 100
    max_attempts: int = 5

    def __init__(
        self, job_id: str = "default", segments: int = 4, wcu_per_second: float = 100.0,
        indexes: tuple[str, ...] | None = None, page_size: int = 100, max_attempts: int = 5,
    ) -> None:
        self.__dict__.update(job_id=job_id, segments=segments, wcu_per_second=wcu_per_second, indexes=indexes,
                             page_size=page_size, max_attempts=max_attempts)
        self._check()

    def _check(self) -> None:
        if not isinstance(self.job_id, str) or not _JOB_RE.match(self.job_id):
            raise BackfillError(f"backfill job_id {self.job_id!r} must be 1-64 characters of A-Z a-z 0-9 _ . -")
        if isinstance(self.segments, bool) or not isinstance(self.segments, int) or not 1 <= self.segments <= 1000:
            raise BackfillError(f"backfill segments {self.segments!r} must be an int from 1 to 1000")
        if not isinstance(self.wcu_per_second, (int, float)) or not self.wcu_per_second >= 1:
            raise BackfillError(f"backfill wcu_per_second {self.wcu_per_second!r} must be a number >= 1")
        if isinstance(self.page_size, bool) or not isinstance(self.page_size, int) or not 1 <= self.page_size <= 1000:
            raise BackfillError(f"backfill page_size {self.page_size!r} must be an int from 1 to 1000")
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise BackfillError(f"backfill max_attempts {self.max_attempts!r} must be a positive int")
        if self.indexes is not None:
            self.__dict__["indexes"] = tuple(self.indexes)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> BackfillSpec:
        try:
            data: dict[str, Any] = load_json(text, f"backfill spec {text[:40]!r}", BackfillError)
            return cls(**data)
        except (json.JSONDecodeError, TypeError) as exc:
            raise BackfillError(f"backfill spec {text[:80]!r} is not a valid spec JSON: {exc}") from exc
