"""The ``robustness`` recipe stage: the run's models under LLM transformations of the evaluation texts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError
from skadapt.llm.config import LLMConfig
from skadapt.results import RobustnessReport, RobustnessSummary
from skadapt.robustness.card import card_section
from skadapt.robustness.config import RobustnessConfig
from skadapt.robustness.plan import plan_robustness
from skadapt.robustness.run import RobustnessPlan, axis_table, run_robustness
from skadapt.robustness.transforms import resolve_settings
from skadapt.stage import Input, RunFacts, Stage, StageContext, TaskReads, judge_inputs, task_inputs
from skadapt.tasks.selection import select_tasks, suite_files


class RobustnessStageError(SkadaptError, ValueError):
    """The stage asks for a model the run does not make, or the run has no LLM."""


def validated_settings(
    config: RobustnessConfig, settings: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings with only the transformations a human validation accepted (``robustness.validated``),
    and the rejected ones with their mean ratings; unchanged without a verdict.

    Raises:
        RobustnessStageError: The verdict accepts none of the transformations asked for.
    """
    if config.validated is None:
        return settings, {}
    from skadapt.annotate.rewrites import validated_transforms

    kept, rejected = validated_transforms(Path(config.validated), list(settings["transforms"]))
    if not kept:
        raise RobustnessStageError(
            f"robustness.validated: {config.validated} accepts none of {', '.join(settings['transforms'])}"
        )
    return {**settings, "transforms": kept}, rejected


def run_stage(
    ctx: StageContext[RobustnessConfig], *, models: dict[str, str] | None = None
) -> RobustnessSummary:
    """Score ``robustness.models`` on ``robustness.tasks`` and their rewrites; the LLM answers and mteb
    results are cached in ``ctx.work_dir``, so an interrupted stage resumes. ``skadapt robustness`` gives
    the labelled ``models`` to score instead."""
    _llm(ctx.run)
    if models is not None:
        return RobustnessSummary.of(score_models(ctx, models))
    missing = [ref for ref in ctx.config.models if ref not in ctx.models]
    if missing:
        made = ", ".join(ctx.models)
        raise RobustnessStageError(
            f"robustness.models: {', '.join(missing)} not made by this recipe (it has {made})"
        )
    return RobustnessSummary.of(score_models(ctx, {ref: ctx.models[ref] for ref in ctx.config.models}))


def _llm(run: RunFacts) -> LLMConfig:
    if run.llm is None:
        raise RobustnessStageError("the robustness stage generates text with an LLM: add an llm: section")
    return run.llm


def score_models(ctx: StageContext[RobustnessConfig], models: dict[str, str]) -> dict[str, Any]:
    """The stage's work on ``models`` (label -> model): :func:`run_stage` picks the run's models named by
    ``robustness.models``, or takes those ``skadapt robustness`` is given."""
    config, run, llm = ctx.config, ctx.run, _llm(ctx.run)
    settings, rejected = validated_settings(
        config,
        resolve_settings(config.preset, config.transforms, config.seeds, config.temperature, config.top_p),
    )
    inherited = not config.tasks and bool(run.eval_tasks)  # evaluate's tasks, less those it leaves out
    tasks = select_tasks(
        config.tasks or list(run.eval_tasks) or run.language.eval_tasks,
        language=run.language.code,
        mirrors=dict(run.dataset_mirrors) or None,
        seed=run.seed,
        exclude=run.excluded_tasks if inherited else (),
    )
    prompt_policy = run.prompt_policy if config.prompt_policy is None else config.prompt_policy
    plan = RobustnessPlan(
        models=models,
        prompt_policy=dict(prompt_policy),
        batch_size=config.batch_size,
        rejected=rejected,
        judge=config.judge,
        **settings,  # type: ignore[arg-type]
    )
    report = run_robustness(tasks, plan, llm, run.language, ctx.work_dir, anchor=run.run_dir)
    shutil.copytree(ctx.work_dir, ctx.out_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("cache"))
    return {"profile": axis_table(report["statistics"]), "texts_encoded": report["texts_encoded"]}


def input_files(config: RobustnessConfig, run: RunFacts) -> list[Path]:
    """Data files of the local suites it scores (the pipeline fingerprints them: editing one re-runs it)."""
    return suite_files(config.tasks or list(run.eval_tasks) or list(run.language.eval_tasks))


def inputs(config: RobustnessConfig, run: RunFacts) -> list[Input]:
    """Its tasks and its judge's LLM."""
    language = run.language.code if run.language is not None else None
    found = task_inputs("robustness.tasks", list(config.tasks), language, dict(run.dataset_mirrors))
    return found + judge_inputs("robustness.judge", config.judge)


def defaults(config: RobustnessConfig, run: RunFacts) -> None:
    """Its tasks: the evaluation's, else the language's; its prompt policy: the evaluation's."""
    if not config.tasks:
        config.tasks = list(run.eval_tasks) or (run.language.eval_tasks if run.language is not None else [])
    if config.prompt_policy is None:
        config.prompt_policy = dict(run.prompt_policy)


def task_data(config: RobustnessConfig, run: RunFacts) -> list[TaskReads]:
    """Its tasks' data."""
    return [TaskReads("robustness task", list(config.tasks))]


STAGE = Stage(
    "robustness",
    RobustnessConfig,
    run_stage,
    input_files,
    uses_llm=True,
    reads=("eval_tasks", "excluded_tasks", "dataset_mirrors", "prompt_policy"),
    report=RobustnessReport,
    inputs=inputs,
    result=RobustnessSummary,
    plan=plan_robustness,
    defaults=defaults,
    card=card_section,
    task_data=task_data,
)
