"""The synthetic-STS dataset on disk: ``datasets`` splits, failures, the generation report and a card.

Layout::

    <out>/dataset/          DatasetDict (``load_from_disk``): train, heldout (the sources kept for humans)
    <out>/annotation/       sheets for the heldout pairs (see skadapt.annotate.sheets) + key.jsonl
    <out>/failures.jsonl    sources whose generation failed every attempt, with the reasons
    <out>/generation_report.json, <out>/README.md (dataset card)

After annotation, ``skadapt annotate split`` writes ``train`` + ``test`` (the annotated pairs, score = the
annotators' mean rating) with a one-task evaluation suite.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from skadapt.annotate.sheets import read_key, read_sheets

STS_COLUMNS = ("sentence1", "sentence2", "score")


def save_splits(splits: dict[str, Sequence[dict[str, Any]]], directory: Path) -> None:
    """Save rows as a ``DatasetDict`` (an empty split keeps the columns of the others)."""
    from datasets import Dataset, DatasetDict

    columns = next((list(rows[0]) for rows in splits.values() if rows), list(STS_COLUMNS))
    DatasetDict(
        {
            name: Dataset.from_list(list(rows)) if rows else Dataset.from_dict({c: [] for c in columns})
            for name, rows in splits.items()
        }
    ).save_to_disk(str(directory))


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """One JSON object per line."""
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def card(report: dict[str, Any], error_table: str, language: str) -> str:
    """The dataset card (Hub metadata + how it was made + the checks' error rates)."""
    meta = {
        "language": [report.get("language_iso639_1") or language],
        "task_categories": ["sentence-similarity"],
        "tags": ["sts", "synthetic", "skadapt"],
        "size_categories": ["n<1K" if report["pairs"] < 1000 else "1K<n<10K"],
    }
    llm = report["llm"]
    sources = report["sources"]
    judged = _judge_card(report["judge"]) if report.get("judge") else ""
    return f"""---
{yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip()}
---

# Synthetic STS ({report["language_name"]})

Sentence pairs scored 0-5 for semantic similarity, made as in SkMTEB: for each source sentence an LLM
wrote six variants, one per similarity level, with an explanation. Made by `skadapt synth-sts`.

- Source sentences: {sources["selected"]} sentences of {sources["min_chars"]}-{sources["max_chars"]}
  characters from `{report["sources"]["spec"]}` (seeded sample of unique sentences, language-checked).
- Generator: `{llm["model"]}` ({llm["backend"]} backend), temperature {report["sampling"]["temperature"]},
  top_p {report["sampling"]["top_p"]}, seed {report["seed"]} (each request has its own derived seed),
  prompt template `{report["template_version"]}`.
- Pairs: {report["pairs"]} ({sources["generated"]} sources x 6 levels); train {report["splits"]["train"]},
  held out for human annotation {report["splits"]["heldout"]} ({report["heldout_sources"]} sources; none of
  their variants is in train).
- Sources whose generation failed every attempt: {report["failed_sources"]} (listed in `failures.jsonl`).
{judged}
## Output checks

{error_table}

## Human check

The held-out pairs are exported as annotation sheets (`annotation/`). Until they are rated, the scores are
the intended levels, not human judgements; `skadapt annotate agreement` reports agreement and
`skadapt annotate split` makes the human-scored test split.

## License

The generated sentences derive from the source corpus: its license applies. Check the generating model's
terms of use before redistribution.
"""


def _judge_card(judge: dict[str, Any]) -> str:
    """The card's judge section: agreement with the intended levels, drops, confusion."""
    from skadapt.llm.judge import confusion_markdown

    def num(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    dropped = ", ".join(f"level {level}: {n}" for level, n in judge["dropped"].items())
    gap = (
        f"Pairs rated more than {judge['max_gap']:g} from their level were dropped "
        f"({judge['dropped_total']}: {dropped}); the pair counts above are after dropping."
        if judge["max_gap"] is not None
        else "No pair was dropped (no max_gap)."
    )
    return f"""
## Judge

Every pair was rated 0-5 by `{judge["model"]}` ({judge["backend"]} backend, temperature
{judge["temperature"]}, prompt `{judge["prompt_version"]}`); {judge["rated"]} of {judge["pairs"]} pairs got a
valid rating (`judge_score`; empty where none). Against the intended level: Spearman {num(judge["spearman"])},
Pearson {num(judge["pearson"])}, mean absolute difference {num(judge["mae"])}. {gap}

{confusion_markdown(judge["confusion"])}
"""


def build_test_split(dataset_dir: Path, annotation_dir: Path, out_dir: Path, language: str) -> dict[str, Any]:
    """``train`` + ``test`` (annotated pairs, score = mean rating) and a local evaluation suite.

    Every source sentence of the test split leaves the train split with all its variants.
    """
    from datasets import load_from_disk

    ratings = read_sheets(annotation_dir)
    key = read_key(annotation_dir)
    dataset = load_from_disk(str(dataset_dir))
    by_pair = {row["pair_id"]: row for split in dataset.values() for row in split}
    test = []
    for item, entry in sorted(key.items()):
        scores = [sheet[item] for sheet in ratings.values() if item in sheet]
        row = by_pair[entry["pair_id"]]
        test.append(
            {**row, "intended_score": row["score"], "score": sum(scores) / len(scores), "ratings": scores}
        )
    test_sources = {row["source_id"] for row in test}
    train = [row for row in dataset["train"] if row["source_id"] not in test_sources]
    out_dir.mkdir(parents=True, exist_ok=True)
    save_splits({"train": train, "test": test}, out_dir / "dataset")
    write_jsonl(out_dir / "test.jsonl", [{c: row[c] for c in STS_COLUMNS} for row in test])
    suite = {
        "language": language,
        "tasks": [{"name": "SynthSTS", "type": "STS", "data": "test.jsonl", "score_range": [0, 5]}],
    }
    (out_dir / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return {"train": len(train), "test": len(test), "annotators": len(ratings)}
