"""Backfill of derived keys: rewrite existing items' index keys with a (new) model's item mapper.

:class:`BackfillSpec` describes a job, :class:`BackfillWorker` runs one Scan segment of it
(resumable from checkpoints kept in the table), :func:`run_job` runs every segment in threads
of this process, :func:`progress` reports on a job. Generated Lambda functions use the same
code (:mod:`constructs_lib.runtime.handlers.backfill`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._exports import lazy_exports

#: The public surface: name -> the submodule defining it.
EXPORTS = {
    "BackfillSpec": "spec",
    "BackfillWorker": "worker",
    "SegmentState": "worker",
    "WriteBudget": "budget",
    "progress": "jobs",
    "run_job": "jobs",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

if TYPE_CHECKING:
    from .budget import WriteBudget as WriteBudget
    from .jobs import progress as progress
    from .jobs import run_job as run_job
    from .spec import BackfillSpec as BackfillSpec
    from .worker import BackfillWorker as BackfillWorker
    from .worker import SegmentState as SegmentState
