"""One stage run alone (the stage commands): the recipe runner's stage execution, into ``--out``.

A stage command parses its options and calls the public API (:func:`skadapt.api.run_stage`), which builds
the run facts and the models the stage starts from and hands them here with the stage's config: the
stage's scratch directory is a hidden sibling of ``--out`` (``.<out>.<stage>-<key>``) keyed by
:func:`~skadapt.pipeline.keys.alone_key`, so that only the same run resumes from it, and removed once
``--out`` is written (atomically). Under a distributed launch rank 0 writes; the other ranks take part in a
distributed stage (fine-tuning) and write nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skadapt import artifacts, stop
from skadapt.pipeline.failures import alone_interruption
from skadapt.pipeline.keys import alone_key
from skadapt.pipeline.launch import other_ranks_done, take_part
from skadapt.pipeline.run import StageRunner
from skadapt.stage import Launch, RunFacts, StageContext
from skadapt.stages import BY_NAME, every_stage


def alone_work_dir(
    stage: str, config: BaseModel, facts: RunFacts, models: dict[str, str], out_dir: Path
) -> Path:
    """The scratch directory of ``stage`` run alone into ``out_dir``: a hidden sibling keyed by its inputs
    (:func:`~skadapt.pipeline.keys.alone_key`), so that only the same run resumes from it."""
    key, _ = alone_key(stage, config, facts, models)
    return out_dir.parent / f".{out_dir.name}.{stage}-{key[:12]}"


def run_alone(
    stage: str,
    config: BaseModel,
    facts: RunFacts,
    models: dict[str, str],
    out_dir: Path,
    *,
    overwrite: bool = False,
    runner: StageRunner | None = None,
    launch: Launch | None = None,
) -> dict[str, Any] | None:
    """Run ``stage`` with ``config`` on ``models`` into ``out_dir``; its result, or None on a rank other
    than 0 (which wrote nothing).

    Args:
        stage: The stage's name.
        config: Its config section.
        facts: The run facts (``run_dir`` is ``out_dir``'s parent).
        models: The models it starts from (``base``, ``final``, ... as in a recipe run, or labels of the
            command's own).
        out_dir: The output directory; refused when not empty unless ``overwrite``.
        overwrite: Replace an existing ``out_dir``.
        runner: Does the work instead of the stage's ``run`` (a command that picks the models itself).
        launch: Rank and world size (default: from the torchrun/accelerate environment).

    Raises:
        OutputExistsError: ``out_dir`` is not empty and ``overwrite`` is not given.
        KeyboardInterrupt: Ctrl-C or a stop signal (:class:`skadapt.stop.Stopped`), noted with where it
            stopped (:func:`skadapt.stop.where`); a stop the stage swallowed is raised once it returns.
    """
    spec = BY_NAME[stage]
    run = runner or spec.run
    launch = launch or Launch.from_env()
    if not overwrite:
        artifacts.refuse_nonempty(out_dir)
    work_dir = alone_work_dir(stage, config, facts, models, out_dir)
    work_dir.mkdir(parents=True, exist_ok=True)

    def context(target: Path) -> StageContext[Any]:
        return StageContext(
            stage, config, facts, dict(models), target, work_dir, launch, out_dir, stages=every_stage()
        )

    if not launch.is_main:
        if spec.distributed:
            take_part(stage, work_dir, launch, lambda scratch: run(context(scratch)) or {})
        return None
    artifacts.clean_stale(out_dir.parent, [out_dir.name])
    try:
        with artifacts.atomic_dir(out_dir, overwrite=True) as tmp:
            result = run(context(tmp)) or {}
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            stop.say_where(error, alone_interruption(error, stage, out_dir, work_dir))
        if work_dir.is_dir() and not any(work_dir.iterdir()):  # failed before anything was kept
            work_dir.rmdir()
        raise
    if other_ranks_done(work_dir, stage, spec.distributed, launch):
        shutil.rmtree(work_dir, ignore_errors=True)
    signum = stop.requested()
    if signum is not None:  # the stage swallowed a stop: its output is whole; the command stops all the same
        stopped = stop.Stopped(signum)
        stop.say_where(stopped, alone_interruption(stopped, stage, out_dir, None))
        raise stopped
    return result
