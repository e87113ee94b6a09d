"""Distributed launches: where this process sits, and how ranks other than 0 follow rank 0's stages."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.errors import SkadaptError

log = logging.getLogger("skadapt")


@dataclass(frozen=True)
class Launch:
    """Where this process sits in a distributed launch (a single process is rank 0 of 1).

    Attributes:
        rank: Global rank (``RANK``).
        world_size: Number of processes (``WORLD_SIZE``).
        run_id: Id shared by the ranks of one launch (``TORCHELASTIC_RUN_ID``), recorded in manifests so
            the other ranks recognise the stages rank 0 finished in this launch.
        poll_seconds: How often a waiting rank looks for rank 0's manifest.
    """

    rank: int = 0
    world_size: int = 1
    run_id: str | None = None
    poll_seconds: float = 2.0

    @classmethod
    def from_env(cls) -> Launch:
        """The launch described by the torchrun/accelerate environment variables."""
        return cls(
            rank=int(os.environ.get("RANK", "0")),
            world_size=int(os.environ.get("WORLD_SIZE", "1")),
            run_id=os.environ.get("TORCHELASTIC_RUN_ID"),
        )

    @property
    def is_main(self) -> bool:
        """Whether this process writes artifacts (rank 0)."""
        return self.rank == 0


class PipelineError(SkadaptError):
    """A run cannot proceed (e.g. ``--only`` a stage whose inputs are not finished)."""


def failure_marker(run_dir: Path, stage: str, key: str, launch: Launch) -> Path:
    """The file rank 0 leaves when ``stage`` failed in this launch (the other ranks stop waiting)."""
    return run_dir / f".failed-{stage}-{key[:12]}-{launch.run_id}"


RANK_DONE_TIMEOUT_S = 600.0
"""How long rank 0 waits for the other ranks to leave a distributed stage before keeping its scratch."""


def _rank_done_marker(work_dir: Path, rank: int) -> Path:
    return work_dir / f".done-rank{rank}"


def other_ranks_done(work_dir: Path, stage: str, distributed: bool, launch: Launch) -> bool:
    """Whether every other rank has left the distributed ``stage`` (so its scratch may be deleted)."""
    if launch.world_size == 1 or not distributed:
        return True
    deadline = time.monotonic() + RANK_DONE_TIMEOUT_S
    while not all(_rank_done_marker(work_dir, r).exists() for r in range(1, launch.world_size)):
        if time.monotonic() > deadline:
            log.warning("stage %s: other ranks did not finish; keeping %s", stage, work_dir)
            return False
        time.sleep(launch.poll_seconds)
    return True


def follow_rank0(
    run_dir: Path,
    stage: str,
    key: str,
    work_dir: Path,
    launch: Launch,
    join: Callable[[Path], dict[str, Any]] | None,
) -> dict[str, Any]:
    """A non-zero rank: take part in a distributed stage (``join`` runs it into a private scratch
    directory), then wait for rank 0's manifest of this launch; returns the stage result.

    Raises:
        PipelineError: Rank 0 failed the stage.
    """
    result: dict[str, Any] = {}
    if join is not None:
        scratch = Path(tempfile.mkdtemp(prefix=f"skadapt-{stage}-rank{launch.rank}-"))
        try:
            result = join(scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        _rank_done_marker(work_dir, launch.rank).touch()
    marker = failure_marker(run_dir, stage, key, launch)
    while True:
        manifest = artifacts.read_manifest(run_dir / stage)
        if manifest is not None and manifest["key"] == key and manifest.get("run_id") == launch.run_id:
            return dict(manifest.get("result", result))
        if marker.exists():
            raise PipelineError(f"stage {stage!r} failed on rank 0; see {run_dir / 'run.log'}")
        time.sleep(launch.poll_seconds)
