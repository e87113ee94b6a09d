"""Rewrite texts with one transformation and one seed: chained steps, checked outputs, failures kept."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from skadapt.languages import Language
from skadapt.llm.checks import CheckFailure, check_text
from skadapt.llm.generate import GenerationItem, GenerationStats, Generator
from skadapt.llm.judge import Judge, JudgeRatings
from skadapt.robustness.transforms import steps

PROMPT_VERSION = "robustness-v1"
"""Bump when a transformation prompt changes (part of every cache key)."""


def text_key(text: str) -> str:
    """A stable id of a text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class Rewrites:
    """The result of one transformation at one seed.

    Attributes:
        mapping: original text -> transformed text, or None where it failed.
        reasons: original text -> why it failed.
        stats: Generation counts and check failures over every step.
        targets: original text -> the languages its steps wrote in (ISO 639-1), e.g. ``["de", "sk"]``.
        judged: original text -> the judge's rating of its rewrite (None: the judge gave none); only
            rewrites that passed the output checks are judged.
        rejected: original text -> its rewrite, where the judge failed it.
    """

    mapping: dict[str, str | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    stats: GenerationStats = field(default_factory=GenerationStats)
    targets: dict[str, list[str]] = field(default_factory=dict)
    judged: dict[str, float | None] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)


def rewrite(
    texts: list[str], transform: str, seed: int, language: Language, generator: Generator
) -> Rewrites:
    """Apply ``transform`` to every text (seeded per text through the generator's run seed)."""
    plans = {t: steps(transform, language, seed, text_key(t)) for t in texts}
    current = {t: t for t in texts}
    result = Rewrites(targets={t: [s.language.iso639_1 or s.language.code for s in plans[t]] for t in texts})
    alive = list(texts)
    for index in range(max((len(p) for p in plans.values()), default=0)):
        by_id = {f"{transform}|{index}|{text_key(t)}": t for t in alive}

        def validate(
            item: GenerationItem, output: str, by_id: dict[str, str] = by_id, index: int = index
        ) -> tuple[Any, list[CheckFailure]]:
            original = by_id[item.id]
            step = plans[original][index]
            text = output.strip()
            failures = check_text(
                text, current[original], step.language, expands=step.expands, summarises=step.summarises
            )
            last = index == len(plans[original]) - 1
            if last and index > 0 and text.casefold() == original.strip().casefold():
                failures.append(CheckFailure("identical", "the chain returned the original"))
            return text, failures

        items = [
            GenerationItem(
                item_id, ({"role": "user", "content": plans[t][index].prompt.replace("{text}", current[t])},)
            )
            for item_id, t in by_id.items()
        ]
        outcomes, stats = generator.run(items, validate, label=f"{transform} (seed {seed}, step {index + 1})")
        result.stats.add(stats)
        for outcome in outcomes:
            original = by_id[outcome.id]
            if outcome.ok:
                current[original] = outcome.value
            else:
                result.reasons[original] = f"step {index + 1}: {outcome.reason}"
        alive = [t for t in alive if t not in result.reasons]
    result.mapping = {t: (None if t in result.reasons else current[t]) for t in texts}
    result.stats.items = len(texts)  # per text, not per step
    result.stats.failed_items = len(result.reasons)
    return result


def judge_rewrites(
    rewrites: Rewrites, judge: Judge, threshold: float, language: Language, *, seed: int, label: str
) -> JudgeRatings:
    """Have the judge rate every surviving (original, rewrite) pair; a rewrite rated below ``threshold``, or
    not rated at all, fails like a failed check: its mapping becomes None, with the reason."""
    alive = [(original, new) for original, new in rewrites.mapping.items() if new is not None]
    ratings = judge.rate(alive, language, seed=seed, label=label)
    for (original, new), rating in zip(alive, ratings.ratings, strict=True):
        rewrites.judged[original] = rating.score
        if rating.score is None:
            rewrites.reasons[original] = f"judge: not rated ({rating.reason})"
        elif rating.score < threshold:
            rewrites.reasons[original] = f"judge: score {rating.score:g} < {threshold:g}"
        else:
            continue
        rewrites.mapping[original] = None
        rewrites.rejected[original] = new
    return ratings
