"""One stage run alone (the stage commands): the recipe runner's stage execution, into ``--out``.

A stage command parses its options and calls the public API (:func:`skadapt.api.run_stage`), which builds
the run facts and the models the stage starts from and hands them here with the stage's config: the
stage's scratch directory is a hidden sibling of ``--out`` (``.<out>.<stage>-<key>``) keyed by
:func:`~skadapt.pipeline.keys.alone_key`, so that only the same run resumes from it, and removed once
``--out`` is written (atomically). One command at a time owns ``--out`` (a lock beside it, ``.<out>.lock``);
``--out`` must be a writable directory apart from what the stage reads. Under a distributed launch rank 0
writes; the other ranks take part in a distributed stage (fine-tuning) and write nothing.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skadapt import artifacts, stop
from skadapt.hub import require_hub
from skadapt.outputs import out_lock, owned, refuse_overlap, writable_dir
from skadapt.pipeline.failures import alone_interruption
from skadapt.pipeline.keys import alone_key
from skadapt.pipeline.launch import other_ranks_done, take_part
from skadapt.pipeline.run import StageRunner
from skadapt.stage import Launch, RunFacts, StageContext, hub_reads, model_input
from skadapt.stages import BY_NAME, every_stage


def alone_work_dir(
    stage: str, config: BaseModel, facts: RunFacts, models: dict[str, str], out_dir: Path
) -> Path:
    """The scratch directory of ``stage`` run alone into ``out_dir``: a hidden sibling keyed by its inputs
    (:func:`~skadapt.pipeline.keys.alone_key`), so that only the same run resumes from it."""
    key, _ = alone_key(stage, config, facts, models)
    return _work_dir(stage, out_dir, key)


def _work_dir(stage: str, out_dir: Path, key: str) -> Path:
    return out_dir.parent / f".{out_dir.name}.{stage}-{key[:12]}"


def hub_uses(stage: str, config: BaseModel, facts: RunFacts, models: dict[str, str]) -> list[str]:
    """What ``stage`` run alone reads from the Hub: its Hub models and what its section names
    (:func:`~skadapt.stage.hub_reads` of its declared inputs: ``hub:`` sources, Hub models, mteb tasks)."""
    refs = dict.fromkeys(models.values())
    found = [f"model {ref}" for ref in refs if model_input("model", ref).hub]
    return found + hub_reads(BY_NAME[stage].inputs(config, facts))


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
        OutputPathError: ``out_dir`` cannot be written, or is, lies inside or contains what the stage reads.
        DirectoryInUseError: Another run writes ``out_dir`` (its lock, :mod:`skadapt.outputs`).
        HubUnreachableError: The stage reads from the Hub (:func:`hub_uses`), which cannot be reached:
            probed once, before anything is loaded.
        KeyboardInterrupt: Ctrl-C or a stop signal (:class:`skadapt.stop.Stopped`), noted with where it
            stopped (:func:`skadapt.stop.where`); a stop the stage swallowed is raised once it returns.
    """
    spec = BY_NAME[stage]
    run = runner or spec.run
    launch = launch or Launch.from_env()
    key, inputs = alone_key(stage, config, facts, models)
    check_out_dir(out_dir, models, inputs)
    owner = contextlib.ExitStack()
    if launch.is_main:  # one run at a time (the other ranks of a launch join rank 0's)
        owner.enter_context(owned(out_lock(out_dir), out_dir, "--out"))
    with owner:
        if not overwrite:
            artifacts.refuse_nonempty(out_dir)
        require_hub(hub_uses(stage, config, facts, models))  # before anything is loaded
        work_dir = _work_dir(stage, out_dir, key)
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
        if (
            signum is not None
        ):  # the stage swallowed a stop: its output is whole; the command stops all the same
            stopped = stop.Stopped(signum)
            stop.say_where(stopped, alone_interruption(stopped, stage, out_dir, None))
            raise stopped
        return result


def check_out_dir(
    out_dir: Path, models: dict[str, str], inputs: dict[str, Any], *, create: bool = True
) -> None:
    """Refuse a ``--out`` that cannot be written (a file, under a file, read-only) or that is, lies inside
    or contains what the stage reads: its models and the files its key fingerprints (``inputs``).
    ``create``: make its parent (else the test write goes to its nearest existing ancestor).

    Raises:
        OutputPathError: It does.
    """
    writable_dir(out_dir, "--out", create=create, replaced=True)
    named = [
        (("input model" if label in ("base", "final") else f"model {label}"), ref)
        for label, ref in models.items()
    ]
    refuse_overlap(out_dir, [*named, *(("input", path) for path in inputs.get("data", {}))], "--out")
