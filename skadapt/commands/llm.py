"""``skadapt llm judge-eval``: a candidate LLM judge against the gold similarity ratings of STS tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.errors import SkadaptError
from skadapt.llm.config import JudgeConfig, LLMConfig

app = typer.Typer(
    help="The LLM: choose the generator by measurement (select); measure a candidate judge against gold "
    "ratings (judge-eval).",
    no_args_is_help=True,
)


class JudgeEvalError(SkadaptError):
    """No STS task among the tasks given."""


@app.command("judge-eval")
@handle_errors
@config_command
def judge_eval(
    tasks: Annotated[
        list[str],
        typer.Option(
            "--tasks", "-t", help="STS tasks: a suite .yaml, an mteb task or benchmark (repeatable)."
        ),
    ],
    language: Annotated[str, typer.Option(help="ISO 639-3 or 639-1 language of the texts (required).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for judge_eval.json/.md and ratings.")],
    config: Annotated[JudgeConfig, Options("judge", exclude=frozenset({"llm", "max_gap"}), file=False)],
    llm: Annotated[LLMConfig, Options("llm")],
    seed: Annotated[int, typer.Option(help="Run seed of the judge's requests.")] = 42,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Rate every pair of the STS tasks with the judge (--llm-*) and report its agreement with the gold
    ratings rescaled to 0-5: Spearman, Pearson, MAE overall and per gold band, failed ratings, and how often
    its pass/fail decision at --threshold matches the gold. The answers are cached: a rerun sends nothing.
    """
    from skadapt.languages import get_language
    from skadapt.tasks.gold import sts_gold_pairs
    from skadapt.tasks.judge_eval import judge_against_gold
    from skadapt.tasks.selection import select_tasks

    lang = get_language(language)
    selected = select_tasks(tasks, language=lang.code, seed=seed)
    sts = [t for t in selected if t.metadata.type == "STS"]
    others = [t.metadata.name for t in selected if t.metadata.type != "STS"]
    if not sts:
        raise JudgeEvalError(
            f"--tasks {' '.join(tasks)}: no STS task among {', '.join(others)}; judge-eval needs pairs with "
            "gold similarity ratings"
        )
    if others:
        console.print(f"judge-eval: not STS, skipped: {', '.join(others)}")
    pairs = []
    for task in sts:
        task.load_data()
        pairs.extend(sts_gold_pairs(task))
    console.print(
        f"judge-eval: {len(pairs)} pairs of {len(sts)} STS task(s); judge {llm.backend}:{llm.model}, "
        f"temperature {config.temperature}"
    )
    table = judge_against_gold(config, llm, pairs, lang, out_dir, seed=seed, overwrite=overwrite)
    out.print(table, markup=False)
    out.print(f"saved {out_dir / 'judge_eval.json'}, {out_dir / 'judge_eval.md'}")
