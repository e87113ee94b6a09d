"""``skadapt llm judge-eval``'s work: a candidate LLM judge's ratings of STS pairs against their gold
ratings, written into a directory (atomically)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from skadapt.artifacts import atomic_dir, write_json
from skadapt.languages import Language
from skadapt.llm.config import JudgeConfig, LLMConfig
from skadapt.llm.judge import Judge, agreement, agreement_markdown
from skadapt.tasks.gold import GoldPair


def judge_against_gold(
    config: JudgeConfig,
    llm: LLMConfig,
    pairs: list[GoldPair],
    lang: Language,
    out_dir: Path,
    *,
    seed: int,
    overwrite: bool = False,
) -> str:
    """Rate ``pairs`` with the judge; write ``judge_eval.json``, ``judge_eval.md`` and ``ratings.jsonl``
    into ``out_dir`` (which appears only when complete); the agreement table (markdown).

    Raises:
        OutputExistsError: ``out_dir`` is not empty and ``overwrite`` is not given.
    """
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
    return table


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"
