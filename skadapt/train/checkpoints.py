"""Training checkpoints that count only when complete, and the choice of the one a rerun resumes from.

The trainer writes a checkpoint's files in place, one after the other (weights, optimizer, scheduler, RNG
states, ``trainer_state.json``): a run killed meanwhile leaves a ``checkpoint-N`` directory that looks like
any other. So the last thing written into a checkpoint is its completion marker (:data:`MARKER`: every
file with its size, written atomically), and a rerun resumes from the newest checkpoint whose marker is
there and whose files still match it. A newer one that does not is named in one line and set aside:
renamed next to the scratch directory, never deleted (it outlives the scratch, which goes once the stage
completes), and out of the trainer's ``checkpoint-*`` rotation.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from skadapt.artifacts import read_json, write_json
from skadapt.errors import SkadaptError

log = logging.getLogger(__name__)

MARKER = "checkpoint_complete.json"
"""A checkpoint's completion marker: ``{"files": {relative path: size in bytes}}``, written last."""
TRAINER_STATE = "trainer_state.json"
PREFIX = "checkpoint-"


class CheckpointError(SkadaptError):
    """A damaged checkpoint cannot be set aside (e.g. its directory cannot be renamed)."""


def mark_complete(checkpoint: Path) -> None:
    """Write the completion marker of a fully written ``checkpoint`` directory (its files and sizes)."""
    files = {
        path.relative_to(checkpoint).as_posix(): path.stat().st_size
        for path in sorted(checkpoint.rglob("*"))
        if path.is_file() and path.name != MARKER and not path.name.startswith(f".{MARKER}.")
    }
    write_json(checkpoint / MARKER, {"files": files})


def checkpoint_problem(checkpoint: Path) -> str | None:
    """What makes ``checkpoint`` unusable for resuming (None: complete, its files as they were saved)."""
    marker = checkpoint / MARKER
    if not marker.is_file():
        return (
            f"it has no completion marker ({MARKER}): its save did not finish (the run was stopped while "
            "writing it), or an older skadapt wrote it"
        )
    recorded = read_json(marker)
    files = recorded.get("files") if isinstance(recorded, dict) else None
    if not isinstance(files, dict) or not files:
        return f"its completion marker {MARKER} is unreadable"
    for name, size in files.items():
        path = checkpoint / name
        if not path.is_file():
            return f"{name} is missing"
        found = path.stat().st_size
        if found != size:
            return f"{name} has {found} bytes of the {size} it was saved with (cut short or overwritten)"
    try:
        json.loads((checkpoint / TRAINER_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return f"{TRAINER_STATE} cannot be read ({type(error).__name__}: {error})"
    return None


def _step(path: Path) -> int | None:
    suffix = path.name.removeprefix(PREFIX)
    return int(suffix) if path.name.startswith(PREFIX) and suffix.isdigit() and path.is_dir() else None


def set_aside(checkpoint: Path, beside: Path, problem: str) -> Path:
    """Rename a damaged ``checkpoint`` to ``<beside>.<checkpoint-N>.damaged`` (``-2``, ... when taken);
    ``problem``: what is wrong with it, for the message of a failed rename.

    Raises:
        CheckpointError: The rename failed.
    """
    target = beside.with_name(f"{beside.name}.{checkpoint.name}.damaged")
    number = 1
    while target.exists():
        number += 1
        target = beside.with_name(f"{beside.name}.{checkpoint.name}.damaged-{number}")
    try:
        checkpoint.rename(target)
    except OSError as error:
        raise CheckpointError(
            f"checkpoint {checkpoint} cannot be resumed from ({problem}) nor set aside as {target} "
            f"({type(error).__name__}: {error.strerror or error}); move it out of {checkpoint.parent} by "
            "hand and run the same command again"
        ) from None
    return target


def resume_point(directory: Path, beside: Path | None) -> Path | None:
    """The newest complete ``checkpoint-N`` in ``directory``, or None (training starts over).

    Each newer one that is not complete (:func:`checkpoint_problem`) is skipped; with ``beside`` (the
    saving process of a launch: the others only skip) it is also named in a warning and set aside next to
    ``beside`` (:func:`set_aside`), and a second warning says where training resumes.

    Raises:
        CheckpointError: A damaged checkpoint cannot be set aside.
    """
    found = [(step, path) for path in directory.glob(f"{PREFIX}*") if (step := _step(path)) is not None]
    damaged = False
    for _, path in sorted(found, reverse=True):
        problem = checkpoint_problem(path)
        if problem is None:
            if damaged and beside is not None:
                log.warning("finetune: resuming from the previous complete checkpoint %s", path)
            return path
        damaged = True
        if beside is not None:
            aside = set_aside(path, beside, problem)
            log.warning(
                "finetune: checkpoint %s cannot be resumed from: %s; set aside as %s (kept, not deleted)",
                path,
                problem,
                aside,
            )
    if damaged and beside is not None:
        log.warning("finetune: no complete checkpoint is left in %s: training starts over", directory)
    return None
