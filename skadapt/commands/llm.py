"""``skadapt llm judge-eval``: a candidate LLM judge against the gold similarity ratings of STS tasks."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any

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
    language: Annotated[str, typer.Option(help="ISO 639-3 language of the texts (required).")],
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
    from skadapt.artifacts import atomic_dir, write_json
    from skadapt.languages import get_language
    from skadapt.llm.judge import Judge, agreement, agreement_markdown
    from skadapt.tasks.gold import sts_gold_pairs
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
    with atomic_dir(out_dir, overwrite=overwrite) as tmp:
        with Judge(config, llm) as judge:
            ratings = judge.rate([(p.text_a, p.text_b) for p in pairs], lang, seed=seed)
            described = judge.describe()
        by_task: dict[str, list[int]] = defaultdict(list)
        for index, pair in enumerate(pairs):
            by_task[pair.task].append(index)
        scores = ratings.scores
        results = {
            name: agreement([pairs[i].gold for i in rows], [scores[i] for i in rows], config.threshold)
            for name, rows in by_task.items()
        }
        if len(results) > 1:
            results["all"] = agreement([p.gold for p in pairs], scores, config.threshold)
        report: dict[str, Any] = {
            "judge": described,
            "language": lang.code,
            "seed": seed,
            "threshold": config.threshold,
            "tasks": results,
            "generation": ratings.stats.to_dict(),
        }
        write_json(tmp / "judge_eval.json", report)
        with (tmp / "ratings.jsonl").open("w", encoding="utf-8") as handle:
            for pair, rating in zip(pairs, ratings.ratings, strict=True):
                row = {
                    "task": pair.task,
                    "subset": pair.subset,
                    "text_a": pair.text_a,
                    "text_b": pair.text_b,
                    "gold": pair.gold,
                    "rating": rating.score,
                }
                if rating.reason:
                    row["failed"] = rating.reason
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        table = agreement_markdown(results)
        markdown = "\n".join(
            [
                "# LLM judge against gold similarity ratings",
                "",
                f"Judge: {described['backend']} `{described['model']}`, temperature "
                f"{described['temperature']}, prompt `{described['prompt_version']}`. Gold rescaled to 0-5; "
                "MAE per gold band with the rated pairs in parentheses; failed: no valid rating after every "
                "attempt.",
                "",
                table,
                "",
                "## Pass/fail at the threshold",
                "",
                f"Rating >= {config.threshold:g} against gold >= {config.threshold:g}.",
                "",
                "| task | accuracy | passed, gold below | failed, gold above |",
                "|---|---|---|---|",
                *(
                    f"| {name} | {_pct(r['threshold']['accuracy'])} | {r['threshold']['passed_below']} | "
                    f"{r['threshold']['failed_above']} |"
                    for name, r in results.items()
                ),
                "",
                "## Output checks",
                "",
                ratings.stats.markdown(),
                "",
            ]
        )
        (tmp / "judge_eval.md").write_text(markdown, encoding="utf-8")
    out.print(table, markup=False)
    out.print(f"saved {out_dir / 'judge_eval.json'}, {out_dir / 'judge_eval.md'}")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"
