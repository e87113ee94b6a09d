"""What a failed stage reports: one message naming the stage, its inputs and what to do; and what an
interrupted run says: where it stopped, what it kept and what a rerun starts from."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skadapt.errors import LOG_ONLY, SkadaptError, StageFailedError, describe_error, original_error
from skadapt.stop import signal_name

log = logging.getLogger("skadapt")


SOURCE_FIELDS = frozenset({"corpus", "extra_corpus", "source", "tasks"})
"""Config fields naming what a stage reads; a stage failure names them."""


def stage_sources(config: BaseModel | None) -> list[str]:
    """``field: value`` for every source a stage config names (``corpus``, ``datasets[0].source``, ...)."""
    found: list[str] = []

    def walk(data: Any, path: str) -> None:
        if isinstance(data, dict):
            for name, value in data.items():
                where = f"{path}.{name}" if path else name
                if isinstance(value, dict) and "source" in value:  # a corpus: its source names it
                    value = value["source"]
                if name in SOURCE_FIELDS and value and not isinstance(value, dict):
                    shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
                    found.append(f"{where}: {shown}")
                else:
                    walk(value, where)
        elif isinstance(data, list):
            for index, value in enumerate(data):
                walk(value, f"{path}[{index}]")

    if config is not None:
        walk(config.model_dump(mode="json"), "")
    return found


@functools.cache
def _failure_type(original: type[BaseException]) -> type[StageFailedError]:
    """A ``StageFailedError`` that is also an ``original`` (so ``except original`` still catches it)."""
    try:
        return type(f"StageFailed{original.__name__}", (StageFailedError, original), {"__module__": __name__})
    except TypeError:  # a final type or an incompatible layout
        return StageFailedError


def stage_failure(
    stage: str, config: BaseModel | None, run_dir: Path, input_model: str, error: BaseException
) -> StageFailedError | None:
    """The error to raise for a stage that failed with ``error``, after logging it (traceback) to run.log.

    skadapt's own errors (their message already says what to do), ``KeyboardInterrupt`` and other
    non-``Exception`` exits pass through unchanged (None). Any other error becomes one
    :class:`StageFailedError` naming the stage, its input model, the sources its config reads and the
    original error's type and message, with what to do for a full disk, a missing permission or an
    unreachable network.
    """
    if not isinstance(error, Exception):
        cause = signal_name(error) if isinstance(error, KeyboardInterrupt) else type(error).__name__
        log.error("stage %s: stopped (%s)", stage, cause, extra=LOG_ONLY)
        return None
    log.error("stage %s failed: %s", stage, original_error(error), exc_info=error, extra=LOG_ONLY)
    if isinstance(error, SkadaptError):
        if not isinstance(error, StageFailedError):
            error.stage = stage  # type: ignore[attr-defined]  # the CLI names it beside the message
        return None
    inputs = [f"input model {input_model}", *stage_sources(config)]
    explained = describe_error(error, output=run_dir / stage, output_option="output_dir")
    message = (
        f"stage {stage} failed ({'; '.join(inputs)}): {explained}; the traceback is in {run_dir / 'run.log'}"
    )
    try:
        failure = _failure_type(type(error))(message, stage=stage, cause=error)
    except Exception:  # the original type's constructor wants other arguments
        failure = StageFailedError(message, stage=stage, cause=error)
    if isinstance(error, OSError) and isinstance(failure, OSError):
        failure.errno, failure.strerror, failure.filename = error.errno, error.strerror, error.filename
    return failure


def resume_point(stage: str, work_dir: Path) -> str:
    """What a rerun of the interrupted ``stage`` starts from: its newest complete training checkpoint in
    ``work_dir`` (one with its trainer state), else what it cached there (answers, partial results)."""
    saved = list(work_dir.glob("**/checkpoint-*/trainer_state.json")) if work_dir.is_dir() else []
    if saved:
        newest = max(saved, key=lambda state: state.stat().st_mtime).parent
        return f"{stage} resumes from its checkpoint {newest}"
    if work_dir.is_dir() and any(work_dir.iterdir()):
        return f"{stage} had saved no complete checkpoint; what it cached in {work_dir} is kept"
    return f"{stage} had saved no checkpoint yet"


def run_interruption(
    stop: KeyboardInterrupt, run_dir: Path, finished: list[str], running: tuple[str, Path] | None
) -> str:
    """The line an interrupted run prints and logs: the stage it stopped in (``running``: the stage and its
    work directory) or after, the ``finished`` stages it keeps and what the interrupted stage resumes from."""
    kept = f"finished stages kept in {run_dir}: {', '.join(finished) or 'none'}"
    if running is not None:
        stage, work_dir = running
        where = f"during stage {stage}; {kept}; {resume_point(stage, work_dir)}"
    else:
        where = f"{f'after stage {finished[-1]}' if finished else 'before any stage ran'}; {kept}"
    return f"interrupted by {signal_name(stop)} {where}; run the same command again to resume"


def alone_interruption(stop: KeyboardInterrupt, stage: str, out_dir: Path, work_dir: Path | None) -> str:
    """The line an interrupted stage command prints: during ``stage`` (``work_dir``: its work directory;
    nothing was written to ``out_dir``), or after it finished (None: ``out_dir`` is complete)."""
    signal = signal_name(stop)
    if work_dir is None:
        return f"interrupted by {signal} after stage {stage} finished: its output {out_dir} is complete"
    return (
        f"interrupted by {signal} during stage {stage}; nothing was written to {out_dir}; "
        f"{resume_point(stage, work_dir)}; run the same command again to resume"
    )
