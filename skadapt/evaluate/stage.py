"""The ``evaluate`` stage and the shared entry point of ``skadapt evaluate``."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.config import is_tier
from skadapt.devices import encode_batch_size
from skadapt.errors import SkadaptError
from skadapt.evaluate.aggregate import Table, comparison_pairs
from skadapt.evaluate.bootstrap import ModelDraws, combine, model_draws
from skadapt.evaluate.card import card_section
from skadapt.evaluate.config import EvaluateConfig
from skadapt.evaluate.plan import plan_evaluate
from skadapt.evaluate.report import write_report
from skadapt.evaluate.stats import Comparison
from skadapt.evaluate.verdicts import HARMS
from skadapt.languages import Language
from skadapt.results import HUMAN_SCORES, EvaluationReport, EvaluationSummary
from skadapt.results.base import StageResult
from skadapt.results.evaluate import HumanRow, Verdict
from skadapt.stage import Input, RunFacts, Stage, StageContext, TaskReads, path_input, task_inputs
from skadapt.tasks.backends import tier_parents
from skadapt.tasks.runner import evaluate_models, validate_prompt_policy
from skadapt.tasks.selection import select_tasks, suite_files, suites_in

log = logging.getLogger("skadapt.evaluate")


class EvaluateStageError(SkadaptError):
    """The evaluate section asks for a model the run does not have."""


def default_cache_dir() -> Path:
    """mteb result cache of standalone runs: ``$SKADAPT_MTEB_CACHE``, else ``$SKADAPT_CACHE/mteb``."""
    from skadapt.paths import cache_path

    return cache_path("mteb")


def run_evaluation(
    config: EvaluateConfig,
    models: dict[str, str],
    out_dir: Path | None,
    *,
    language: str | None,
    cache_dir: Path | None,
    seed: int = 42,
    human_dir: Path | None = None,
    parents: dict[str, str] | None = None,
    recompute: bool = False,
    show_progress: bool = False,
) -> tuple[Table, list[Comparison], list[Verdict]]:
    """Evaluate labelled models as ``config`` says; write results and the report into ``out_dir``.

    ``config`` is the evaluate section (its tasks, the excluded ones, prompt policy, mirrors, batch size,
    TOST margin, alpha, bootstrap resamples; its ``models`` and ``fail_on_harm`` are the caller's to apply).
    The other arguments are what the run decides: the language filter, the mteb result cache (``recompute``
    ignores and refreshes it), the seed, the human baseline and the tiers.

    ``out_dir`` gets ``results/<model>/<task>.json`` (mteb's result files), ``report.md``, ``report.json``
    and ``report.png``. Without ``out_dir`` the report is built in memory only. With ``human_dir`` (a
    ``skadapt human`` directory with scored sheets) the models are also scored on the human subset and the
    report gets the human comparison (``human.md``/``human.png``, a section of report.md, ``human`` in
    report.json). ``parents`` marks deployment tiers (tier label -> the label of the model it came from):
    their verdict compares them with that model and states the loss. ``config.exclude_tasks`` leaves named
    tasks of the selection out; the averages then say what they are over ("30 of 31 tasks").
    """
    task_specs, excluded = list(config.tasks), list(config.exclude_tasks)
    prompt_policy, bootstrap = dict(config.prompt_policy), config.bootstrap
    batch_size = encode_batch_size(config.batch_size)
    mirrors = dict(config.dataset_mirrors)
    tasks = select_tasks(task_specs, language=language, mirrors=mirrors, seed=seed, exclude=excluded)
    if excluded:
        log.warning(
            "evaluate: %s left out (evaluate.exclude_tasks): every average is over %d of %d tasks",
            ", ".join(excluded),
            len(tasks),
            len(tasks) + len(excluded),
        )
    suites = [  # the item bootstrap of the local suites' tasks, less the excluded ones
        suite.model_copy(update={"tasks": kept})
        for suite in (suites_in(task_specs) if bootstrap else [])
        if (kept := [t for t in suite.tasks if t.name not in excluded])
    ]
    policy = validate_prompt_policy(prompt_policy, "evaluate.prompt_policy")
    draws: dict[str, ModelDraws] = {}

    def bootstrap_model(label: str, model: Any) -> None:  # while mteb's embeddings are in the model's memo
        draws[label] = model_draws(
            model,
            suites,
            policy=policy,
            count=bootstrap,
            seed=seed,
            batch_size=batch_size,
            name=models[label],
        )

    scores = evaluate_models(
        models,
        tasks,
        cache_dir=cache_dir,
        results_dir=out_dir / "results" if out_dir is not None else None,
        prompt_policy=prompt_policy,
        batch_size=batch_size,
        show_progress=show_progress,
        on_model=bootstrap_model if suites else None,
        recompute=recompute,
    )
    pairs = comparison_pairs(list(models), parents)
    intervals = combine(draws, count=bootstrap, alpha=0.05, pairs=pairs) if draws else None
    settings = {
        "bootstrap_resamples": bootstrap,
        "models": {  # paths relative to the report directory's parent (the run), so that the run can move
            label: artifacts.recorded_path(ref, out_dir.parent) if out_dir is not None else ref
            for label, ref in models.items()
        },
        "tasks": task_specs,
        "exclude_tasks": excluded,
        "prompt_policy": prompt_policy,
        "language": language,
    }
    report = {
        "margin": config.tost_margin,
        "alpha": config.alpha,
        "intervals": intervals,
        "extra": settings,
        "bootstrap": bootstrap,
        "seed": seed,
        "parents": parents,
        "excluded": excluded,
    }
    if out_dir is None:
        scratch = Path(os.environ.get("TMPDIR", "/tmp")) / f"skadapt-eval-{os.getpid()}"
        scratch.mkdir(parents=True, exist_ok=True)
        try:
            return write_report(scores, scratch, **report)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    written = write_report(scores, out_dir, **report)
    if human_dir is not None:
        _human_comparison(
            models,
            human_dir,
            out_dir,
            language=language,
            cache_dir=cache_dir,
            prompt_policy=prompt_policy,
            batch_size=batch_size,
        )
    return written


def _human_comparison(
    models: dict[str, str],
    human_dir: Path,
    out_dir: Path,
    *,
    language: str,
    cache_dir: Path | None,
    prompt_policy: dict[str, str] | None,
    batch_size: int,
) -> None:
    """Score the models on the human subset; add the comparison to the report."""
    from skadapt.evaluate.human import comparison, figure, markdown

    human = artifacts.read_json(human_dir / HUMAN_SCORES)
    if not isinstance(human, dict):
        raise EvaluateStageError(
            f"{human_dir}: no {HUMAN_SCORES}; fill the sheets and run `skadapt human score {human_dir}`"
        )
    tasks = select_tasks([str(human_dir / "subset" / "suite.yaml")], language=language)
    scores = evaluate_models(
        models, tasks, cache_dir=cache_dir, prompt_policy=prompt_policy, batch_size=batch_size
    )
    rows = comparison(human, scores)
    text = markdown(rows)
    (out_dir / "human.md").write_text(text, encoding="utf-8")
    figure(rows, out_dir / "human.png")
    with (out_dir / EvaluationReport.MARKDOWN).open("a", encoding="utf-8") as handle:
        handle.write("\n" + text + "\n![human](human.png)\n")
    report = EvaluationReport.read(out_dir)
    if report is not None:
        report.human = [HumanRow.parse(row) for row in rows]
        report.write(out_dir)


def _selected_models(
    config: EvaluateConfig, available: dict[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The models to score (label -> reference) and the tiers among them (tier -> its parent's label).

    Every deployment tier of the run is scored, after the listed models and beside the final model it
    came from (added when not listed).
    """
    refs = [ref for ref in config.models if not is_tier(ref)]
    tiers = [t for t in available if is_tier(t)]
    missing = [t for t in config.models if is_tier(t) and t not in available]
    if missing:
        raise EvaluateStageError(
            f"evaluate.models: {', '.join(missing)} is not a tier of this run; add it to export.tiers"
        )
    if tiers and available["final"] not in [available[r] for r in refs if r in available]:
        refs.append("final")
    selected: dict[str, str] = {}
    for ref in refs:
        if ref not in available:
            have = ", ".join(k for k in available if k != "final")
            raise EvaluateStageError(
                f"evaluate.models: {ref!r} is not a model of this run (it has: {have}); "
                "add the stage to the recipe or remove it from evaluate.models"
            )
        if available[ref] in selected.values():
            same = next(label for label, path in selected.items() if path == available[ref])
            if ref != "final":  # "final" is the newest kept stage; any other repeat is a stage that kept none
                log.warning(
                    "evaluate: %s is the same model as %s (the stage kept its input); scored once", ref, same
                )
            continue
        selected[ref] = available[ref]
    parent = next(label for label, path in selected.items() if path == available["final"]) if tiers else ""
    selected.update({tier: available[tier] for tier in tiers})
    return selected, dict.fromkeys(tiers, parent)


def _human_dir(run: RunFacts) -> Path | None:
    """The run's human baseline directory once its sheets are scored, else None."""
    directory = run.human_dir
    return directory if directory is not None and (directory / HUMAN_SCORES).is_file() else None


def input_files(config: EvaluateConfig, run: RunFacts) -> list[Path]:
    """Data files of the local suites evaluated and the human scores (the pipeline fingerprints them:
    scoring the human sheets re-runs the evaluation)."""
    human = [run.human_dir / HUMAN_SCORES] if run.human_dir is not None else []
    return [*suite_files(list(config.tasks)), *human]


def run_stage(
    ctx: StageContext[EvaluateConfig],
    *,
    models: dict[str, str] | None = None,
    cache_dir: Path | None = None,
    recompute: bool = False,
    parents: dict[str, str] | None = None,
) -> EvaluationSummary:
    """Pipeline entry: evaluate ``evaluate.models`` of the run; the mteb cache lives in the run directory.

    ``skadapt evaluate`` gives the labelled ``models`` to score instead (the tiers among them found by
    their export reports: :func:`~skadapt.tasks.backends.tier_parents`), its mteb result cache
    (``cache_dir``) and ``recompute`` (ignore and refresh that cache); ``parents`` (tier label -> the
    label of the model it came from) names the tiers among them instead.
    """
    config = ctx.config
    if models is None:
        models, parents = _selected_models(config, ctx.models)
    elif parents is None:
        parents = tier_parents(models)
    language = ctx.run.language.code if ctx.run.language is not None else None
    table, items, verdicts = run_evaluation(
        config,
        models,
        ctx.out_dir,
        language=language,
        cache_dir=cache_dir or ctx.run.run_dir / ".cache" / "mteb",
        seed=ctx.run.seed,
        human_dir=_human_dir(ctx.run),
        parents=parents,
        recompute=recompute,
    )
    for verdict in verdicts:
        below = (
            f"; below -{verdict.margin:g} on {', '.join(verdict.harmed_tasks)}"
            if verdict.harmed_tasks
            else ""
        )
        log.info(
            "verdict %s -> %s: %s (mean %+.2f%s)",
            verdict.a,
            verdict.b,
            verdict.verdict,
            verdict.mean_diff,
            below,
        )
    return EvaluationSummary.of(
        {
            "verdicts": {f"{v.a}->{v.b}": v.verdict for v in verdicts},
            "harms": [f"{v.a}->{v.b}" for v in verdicts if v.verdict == HARMS],
            "harmed_tasks": {f"{v.a}->{v.b}": v.harmed_tasks for v in verdicts if v.harmed_tasks},
            "models": {label: artifacts.recorded_path(ref, ctx.run.run_dir) for label, ref in models.items()},
            "tiers": parents,
            "tasks": len(table.task_types),
            "excluded_tasks": table.excluded,
            "averaged_over": table.coverage,
            "All": {r.model: round(r.All, 4) for r in table.rows},
            "Type": {r.model: round(r.Type, 4) for r in table.rows},
            "comparisons": [c.to_dict() for c in items],
        }
    )


def inputs(config: EvaluateConfig, run: RunFacts) -> list[Input]:
    """Its tasks, the names ``exclude_tasks`` leaves out (each a task of them), the local dataset mirrors."""
    from skadapt.tasks.probe import probe_excluded

    language = run.language.code if run.language is not None else None  # a command's: no filter
    found = task_inputs("evaluate.tasks", list(config.tasks), language, dict(config.dataset_mirrors))
    found += [
        path_input(f"evaluate.dataset_mirrors.{task}", path, "directory")
        for task, path in config.dataset_mirrors.items()
    ]
    if config.exclude_tasks:
        specs, exclude = list(config.tasks), list(config.exclude_tasks)
        found.append(
            Input(
                "evaluate.exclude_tasks",
                ", ".join(exclude),
                "tasks of evaluate.tasks",
                lambda: probe_excluded(specs, exclude, language),
            )
        )
    return found


def harm_halt(config: EvaluateConfig, result: EvaluationSummary) -> str | None:
    """``fail_on_harm``: the run stops when the evaluation cannot exclude harm beyond the margin."""
    harms = result.harms if config.fail_on_harm else []
    if not harms:
        return None
    return f"evaluate.fail_on_harm: harm beyond the margin cannot be excluded for {', '.join(harms)}"


def provides(config: EvaluateConfig, language: Language | None) -> dict[str, Any]:
    """What evaluation scores (its tasks, else the language's), leaves out, mirrors and prompts with: what
    the other stages keep apart from their data and score the same way."""
    return {
        "eval_tasks": tuple(config.tasks or (language.eval_tasks if language is not None else ())),
        "excluded_tasks": tuple(config.exclude_tasks),
        "dataset_mirrors": dict(config.dataset_mirrors),
        "prompt_policy": dict(config.prompt_policy),
    }


def defaults(config: EvaluateConfig, run: RunFacts) -> None:
    """The tasks: the language's evaluation tasks, unless the section names some.

    Raises:
        ValueError: It names none and the language has none.
    """
    if not config.tasks:
        if not run.eval_tasks:
            code = run.language.code if run.language is not None else None
            raise ValueError(f"evaluate.tasks is empty and language {code!r} has no default tasks")
        config.tasks = list(run.eval_tasks)


def task_data(config: EvaluateConfig, run: RunFacts) -> list[TaskReads]:
    """Its tasks' data (``exclude_tasks`` leaves a task out)."""
    return [TaskReads("evaluation task", list(config.tasks), excludable=True)]


def summary(config: EvaluateConfig, result: StageResult | None, stage_dir: Path) -> list[str]:
    """Where its report is, and the do-no-harm verdict of each pair with the tasks below the margin."""
    report = stage_dir / EvaluationReport.MARKDOWN
    lines = [f"evaluation report: {report}"] if report.is_file() else []
    found = EvaluationSummary.parse(result) if result is not None else EvaluationSummary()
    for pair, verdict in found.verdicts.items():
        tasks = found.harmed_tasks.get(pair)
        named = f" (below the margin on {', '.join(tasks)})" if tasks is not None else ""
        lines.append(f"do-no-harm {pair}: {verdict}{named}")
    return lines


STAGE = Stage(
    "evaluate",
    EvaluateConfig,
    run_stage,
    input_files,
    report=EvaluationReport,
    inputs=inputs,
    result=EvaluationSummary,
    halt=harm_halt,
    plan=plan_evaluate,
    defaults=defaults,
    card=card_section,
    provides=provides,
    summary=summary,
    task_data=task_data,
)
