"""Generate six variants per source sentence, validate them, and lay the pairs out as an STS dataset."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any

from skadapt.languages import Language
from skadapt.llm.checks import CheckFailure, check_text, parse_json_object
from skadapt.llm.generate import GenerationItem, GenerationStats, Generator, ItemOutcome
from skadapt.llm.judge import JudgeRatings, agreement, confusion
from skadapt.synth.prompts import JSON_SCHEMA, LEVELS, render
from skadapt.synth.sources import SourceSentence
from skadapt.textsample import normalize_text


def generation_items(
    sources: Sequence[SourceSentence], template: str, language: Language
) -> list[GenerationItem]:
    """One chat request per source sentence."""
    return [
        GenerationItem(
            source.id,
            ({"role": "user", "content": render(template, source.text, language)},),
            JSON_SCHEMA,
        )
        for source in sources
    ]


def validate_variants(source: str, answer: str, language: Language) -> tuple[Any, list[CheckFailure]]:
    """The six variants of an answer, or why it is unusable.

    Exactly the keys ``"0"``-``"5"``, each an object with a non-empty ``sentence`` and an ``explanation``;
    every sentence passes the text checks against the source (language, identity, length, leaks), and no
    two variants are the same sentence.
    """
    parsed = parse_json_object(answer)
    if isinstance(parsed, CheckFailure):
        return None, [parsed]
    missing = [level for level in LEVELS if level not in parsed]
    extra = sorted(set(parsed) - set(LEVELS))
    if missing or extra:
        detail = ", ".join(
            filter(
                None,
                [
                    missing and f"levels {', '.join(missing)} missing",
                    extra and f"unexpected keys {', '.join(extra)}",
                ],
            )
        )
        return None, [CheckFailure("missing_fields", detail)]
    variants: dict[str, dict[str, str]] = {}
    failures: list[CheckFailure] = []
    for level in LEVELS:
        entry = parsed[level]
        sentence = entry.get("sentence") if isinstance(entry, dict) else None
        explanation = entry.get("explanation", "") if isinstance(entry, dict) else None
        if not isinstance(sentence, str) or not isinstance(explanation, str):
            failures.append(
                CheckFailure("missing_fields", f"level {level} needs a sentence and an explanation")
            )
            continue
        variants[level] = {"sentence": sentence.strip(), "explanation": explanation.strip()}
        for failure in check_text(sentence, source, language):
            failures.append(
                CheckFailure(
                    failure.check, f"level {level}" + (f": {failure.detail}" if failure.detail else "")
                )
            )
    seen: dict[str, str] = {}
    for level, variant in variants.items():
        key = normalize_text(variant["sentence"])
        if key in seen:
            failures.append(
                CheckFailure("identical", f"levels {seen[key]} and {level} are the same sentence")
            )
        seen.setdefault(key, level)
    return (None if failures else variants), failures


def generate_variants(
    sources: Sequence[SourceSentence], generator: Generator, template: str, language: Language
) -> tuple[list[ItemOutcome], GenerationStats]:
    """Generate and validate the variants of every source sentence."""
    texts = {source.id: source.text for source in sources}

    def validate(item: GenerationItem, answer: str) -> tuple[Any, list[CheckFailure]]:
        return validate_variants(texts[item.id], answer, language)

    return generator.run(generation_items(sources, template, language), validate, "synthetic STS")


def pair_rows(
    sources: Sequence[SourceSentence], outcomes: Sequence[ItemOutcome], metadata: dict[str, Any]
) -> list[dict[str, Any]]:
    """Six STS rows per successful source: ``source_id, sentence1, sentence2, score, explanation, ...``."""
    rows = []
    for source, outcome in zip(sources, outcomes, strict=True):
        if not outcome.ok:
            continue
        for level in LEVELS:
            variant = outcome.value[level]
            rows.append(
                {
                    "pair_id": f"{source.id}-{level}",
                    "source_id": source.id,
                    "sentence1": source.text,
                    "sentence2": variant["sentence"],
                    "score": float(level),
                    "explanation": variant["explanation"],
                    "seed": outcome.seed,
                    "attempts": outcome.attempts,
                    **metadata,
                }
            )
    return rows


def apply_judge(
    rows: Sequence[dict[str, Any]], ratings: JudgeRatings, max_gap: float | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each row with its ``judge_score``, less the rows rated farther than ``max_gap`` from their level
    (unrated rows are kept: nothing says they are off), and the judge's agreement with the levels.

    Returns:
        The kept rows and a report: Spearman/Pearson/MAE of rating vs level, per level the pairs, mean
        rating and MAE, the confusion level x rounded rating, and the pairs dropped per level.
    """
    levels = [int(row["score"]) for row in rows]
    scores = ratings.scores
    kept: list[dict[str, Any]] = []
    dropped = dict.fromkeys(LEVELS, 0)
    for row, level, score in zip(rows, levels, scores, strict=True):
        if max_gap is not None and score is not None and abs(score - level) > max_gap:
            dropped[str(level)] += 1
        else:
            kept.append({**row, "judge_score": score})
    found = agreement(levels, scores)
    by_level = {}
    for level in LEVELS:
        given = [s for lv, s in zip(levels, scores, strict=True) if str(lv) == level and s is not None]
        by_level[level] = {
            "pairs": levels.count(int(level)),
            "rated": len(given),
            "mean_rating": statistics.fmean(given) if given else None,
            "mae": statistics.fmean(abs(s - int(level)) for s in given) if given else None,
        }
    return kept, {
        "max_gap": max_gap,
        **{k: found[k] for k in ("pairs", "rated", "failed", "spearman", "pearson", "mae")},
        "by_level": by_level,
        "confusion": confusion(levels, scores),
        "dropped": dropped,
        "dropped_total": sum(dropped.values()),
        "generation": ratings.stats.to_dict(),
    }


def hold_out_sources(rows: Sequence[dict[str, Any]], count: int, seed: int) -> set[str]:
    """A seeded choice of ``count`` source ids (each with all six levels) for the human-rated test split."""
    sources = sorted({row["source_id"] for row in rows})
    if count > len(sources):
        raise ValueError(f"{count} sources wanted for annotation, only {len(sources)} generated")
    return set(random.Random(seed).sample(sources, count))
