"""The ``synth_sts`` recipe stage: generate the synthetic STS dataset into ``<run_dir>/synth_sts``."""

from __future__ import annotations

from skadapt.annotate.sheetio import SheetError, filled_sheets
from skadapt.results import SynthSummary
from skadapt.stage import (
    Input,
    RunFacts,
    Stage,
    StageContext,
    TaskReads,
    corpus_input,
    judge_inputs,
    path_input,
)
from skadapt.synth.config import SynthSTSConfig
from skadapt.synth.plan import plan_synth
from skadapt.synth.run import REVIEW_ANSWERS, synthesize_sts


def run_stage(ctx: StageContext[SynthSTSConfig], *, pilot: int | None = None) -> SynthSummary:
    """Generate with the run's ``llm``; the answers are cached, so an interrupted stage resumes.

    ``pilot``: generate for that many sources and write the review sheet only (``skadapt synth-sts
    --pilot``).

    Raises:
        SheetError: The stage's previous output holds filled sheets (the new output would replace them).
    """
    run = ctx.run
    if run.llm is None:
        raise ValueError("the synth_sts stage generates text with an LLM: add an llm: section")
    previous = ctx.previous_dir
    filled = filled_sheets(previous, REVIEW_ANSWERS) if previous.is_dir() else []
    if filled:
        names = ", ".join(path.relative_to(previous).as_posix() for path in filled)
        raise SheetError(
            f"{previous} holds filled sheets ({names}) that running the stage again would replace; move "
            f"{previous / 'annotation'} out of the run first (`skadapt annotate agreement|split` read it "
            "from anywhere)"
        )
    report = synthesize_sts(ctx.config, run.llm, run.language, ctx.out_dir, seed=run.seed, pilot=pilot)
    generation = report["generation"]
    return SynthSummary.of(
        {
            "pairs": report["pairs"],
            "splits": report.get("splits"),
            "failed_sources": report["failed_sources"],
            "requests_sent": generation["requests_sent"],
            "cache_hits": generation["cache_hits"],
            "dataset": str(ctx.out_dir.name + "/dataset"),
        }
    )


def inputs(config: SynthSTSConfig, run: RunFacts) -> list[Input]:
    """Its source corpus, its prompt file, its judge's LLM."""
    found = [corpus_input("synth_sts.corpus", config.corpus)]
    if config.prompt_template:
        found.append(path_input("synth_sts.prompt_template", config.prompt_template))
    return found + judge_inputs("synth_sts.judge", config.judge)


def defaults(config: SynthSTSConfig, run: RunFacts) -> None:
    """The contamination check's tasks: the language's evaluation tasks, unless the section names them."""
    if config.contamination_tasks is None and run.language is not None:
        config.contamination_tasks = run.language.eval_tasks


def task_data(config: SynthSTSConfig, run: RunFacts) -> list[TaskReads]:
    """Its contamination check's tasks' data."""
    return [TaskReads("synth_sts's contamination check", list(config.contamination_tasks or []))]


STAGE = Stage(
    "synth_sts",
    SynthSTSConfig,
    run_stage,
    uses_llm=True,
    inputs=inputs,
    result=SynthSummary,
    plan=plan_synth,
    defaults=defaults,
    task_data=task_data,
)
