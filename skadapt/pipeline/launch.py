"""Distributed launches: how ranks other than 0 take part in rank 0's stages and follow them.

:class:`~skadapt.stage.Launch` (where this process sits; ``Launch.from_env``) is part of the stage contract.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError
from skadapt.results import StageManifest
from skadapt.stage import Launch

log = logging.getLogger("skadapt")


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


def take_part(stage: str, work_dir: Path, launch: Launch, join: Callable[[Path], Any]) -> Any:
    """A non-zero rank's part in a distributed stage: ``join`` runs it into a private scratch directory
    (removed after); then this rank marks itself done in ``work_dir`` (rank 0 waits for that before
    deleting it). Returns what ``join`` returned."""
    scratch = Path(tempfile.mkdtemp(prefix=f"skadapt-{stage}-rank{launch.rank}-"))
    try:
        result = join(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _rank_done_marker(work_dir, launch.rank).touch()
    return result


def follow_rank0(
    run_dir: Path,
    stage: str,
    key: str,
    work_dir: Path,
    launch: Launch,
    join: Callable[[Path], Any] | None,
) -> dict[str, Any]:
    """A non-zero rank: take part in a distributed stage (``join`` runs it into a private scratch
    directory), then wait for rank 0's manifest of this launch; returns the stage result it records.

    Raises:
        PipelineError: Rank 0 failed the stage.
    """
    if join is not None:
        take_part(stage, work_dir, launch, join)
    marker = failure_marker(run_dir, stage, key, launch)
    while True:
        manifest = StageManifest.read(run_dir / stage)
        if manifest is not None and manifest.key == key and manifest.run_id == launch.run_id:
            return manifest.result
        if marker.exists():
            raise PipelineError(f"stage {stage!r} failed on rank 0; see {run_dir / 'run.log'}")
        time.sleep(launch.poll_seconds)
