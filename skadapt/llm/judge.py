"""An LLM judge: how similar in meaning two texts are, rated 0-5 through the checked, cached and seeded
generation layer, and the judge's agreement with gold ratings (Spearman, MAE by gold band).

Used by the robustness stage (rewrites rated below a threshold fail), synthetic STS (each pair's rating
against its intended level) and ``skadapt llm judge-eval`` (a candidate judge against an STS task's gold).
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from skadapt.languages import Language
from skadapt.llm.checks import CheckFailure, parse_json_object
from skadapt.llm.config import JudgeConfig, LLMConfig
from skadapt.llm.generate import GenerationItem, GenerationStats, Generator
from skadapt.llm.session import LLMSession

JUDGE_VERSION = "judge-v1"
"""Bump when the judge prompt or schema changes (part of every cache key)."""
SCALE = (0.0, 5.0)
BANDS: tuple[tuple[float, float], ...] = ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5))
"""Gold bands of the MAE table: [0, 1), [1, 2), [2, 3), [3, 4), [4, 5] (5 falls in the last)."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": SCALE[0], "maximum": SCALE[1]}},
    "required": ["score"],
    "additionalProperties": False,
}

PROMPT = """Rate how similar in meaning two texts are. Text A is in {language}. Text B may be in \
{language} or in another language; judge the meaning only, not the wording, style, length or language.

5 - completely equivalent: the same meaning, all important information kept
4 - mostly equivalent: only unimportant details differ
3 - roughly equivalent: some important information differs or is missing
2 - not equivalent, but they share some details
1 - not equivalent, but on the same topic
0 - on different topics

<text_a>
{text_a}
</text_a>

<text_b>
{text_b}
</text_b>

Answer with a JSON object only: {"score": <a number from 0 to 5>}"""


def judge_prompt(text_a: str, text_b: str, language: Language) -> str:
    """The judge's instruction for one pair (English, naming the language)."""
    return PROMPT.replace("{language}", language.name).replace("{text_a}", text_a).replace("{text_b}", text_b)


def pair_id(text_a: str, text_b: str) -> str:
    """A stable id of a pair (the judge's request seeds derive from it)."""
    return "judge|" + hashlib.sha256(f"{text_a}\x1f{text_b}".encode()).hexdigest()[:24]


def validate_score(item: GenerationItem, output: str) -> tuple[float | None, list[CheckFailure]]:
    """The score of a judge's answer: a JSON object with a number ``score`` in 0-5.

    Broken JSON is ``broken_json`` (text around it ``reasoning_leak``), no number ``score``
    ``missing_fields``, a number outside 0-5 ``out_of_range``.
    """
    parsed = parse_json_object(output)
    if isinstance(parsed, CheckFailure):
        return None, [parsed]
    score = parsed.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        detail = "no score" if score is None else f"score {score!r} is not a number"
        return None, [CheckFailure("missing_fields", detail)]
    if not math.isfinite(score) or not SCALE[0] <= score <= SCALE[1]:
        return None, [CheckFailure("out_of_range", f"score {score} outside 0-5")]
    return float(score), []


@dataclass(frozen=True)
class Rating:
    """The judge's rating of one pair, or why there is none."""

    score: float | None
    reason: str = ""


@dataclass
class JudgeRatings:
    """Ratings in the order of the pairs asked, and the generation counts behind them."""

    ratings: list[Rating]
    stats: GenerationStats

    @property
    def scores(self) -> list[float | None]:
        """Each pair's score, None where the judge gave no valid rating."""
        return [r.score for r in self.ratings]


def rate_pairs(
    generator: Generator, pairs: Sequence[tuple[str, str]], language: Language, label: str = "judging"
) -> JudgeRatings:
    """Rate every ``(text_a, text_b)`` pair 0-5 (a pair asked twice is rated once)."""
    unique = list(dict.fromkeys(pairs))
    items = [
        GenerationItem(
            pair_id(a, b), ({"role": "user", "content": judge_prompt(a, b, language)},), JUDGE_SCHEMA
        )
        for a, b in unique
    ]
    outcomes, stats = generator.run(items, validate_score, label)
    found = {
        pair: Rating(o.value if o.ok else None, "" if o.ok else o.reason)
        for pair, o in zip(unique, outcomes, strict=True)
    }
    return JudgeRatings([found[pair] for pair in pairs], stats)


class Judge:
    """The judge's LLM, opened once: the run's session when the judge has no LLM of its own (an in-process
    model is not loaded twice), else a session of its own. Close it (or use ``with``) when done."""

    def __init__(self, config: JudgeConfig, llm: LLMConfig, session: LLMSession | None = None) -> None:
        self.config = config
        self.llm = config.llm or llm
        self._own = session is None or self.llm != session.llm
        self.session = LLMSession(self.llm) if self._own else session

    def rate(
        self, pairs: Sequence[tuple[str, str]], language: Language, *, seed: int, label: str = "judging"
    ) -> JudgeRatings:
        """Rate pairs with the judge's temperature (greedy by default) and prompt version."""
        assert self.session is not None
        generator = self.session.generator(
            seed=seed, template_version=JUDGE_VERSION, temperature=self.config.temperature
        )
        return rate_pairs(generator, pairs, language, label)

    def describe(self) -> dict[str, Any]:
        """What rated: model, prompt version and settings (for reports)."""
        return {
            "backend": self.llm.backend,
            "model": self.llm.model,
            "revision": self.llm.revision,
            "temperature": self.config.temperature,
            "prompt_version": JUDGE_VERSION,
        }

    def close(self) -> None:
        """Close the judge's own session (a shared one stays open)."""
        if self._own and self.session is not None:
            self.session.close()

    def __enter__(self) -> Judge:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def score_summary(scores: Sequence[float | None]) -> dict[str, Any]:
    """Rated and unrated counts, mean and median of the ratings given."""
    given = [s for s in scores if s is not None]
    return {
        "rated": len(given),
        "unrated": len(scores) - len(given),
        "mean": statistics.fmean(given) if given else None,
        "median": statistics.median(given) if given else None,
    }


def _correlations(gold: list[float], rated: list[float]) -> tuple[float | None, float | None]:
    if len(gold) < 2 or len(set(gold)) < 2 or len(set(rated)) < 2:
        return None, None  # undefined: too few pairs or a constant side
    from scipy.stats import pearsonr, spearmanr

    return float(spearmanr(gold, rated)[0]), float(pearsonr(gold, rated)[0])


def band_of(gold: float) -> int:
    """Index in :data:`BANDS` of a gold score on 0-5."""
    return min(max(math.floor(gold), 0), len(BANDS) - 1)


def band_label(index: int) -> str:
    """``"0-1"`` ... ``"4-5"``."""
    low, high = BANDS[index]
    return f"{low:g}-{high:g}"


def agreement(
    gold: Sequence[float], ratings: Sequence[float | None], threshold: float | None = None
) -> dict[str, Any]:
    """A judge's agreement with gold scores on 0-5 over the pairs it rated.

    Returns:
        ``pairs``, ``rated``, ``failed`` (no valid rating), ``spearman``/``pearson`` (None when undefined),
        ``mae``, ``bands`` (per gold band: pairs, rated, MAE, mean gold and rating) and, with a
        ``threshold``, how often the pass/fail decision (rating >= threshold) matches gold >= threshold.
    """
    if len(gold) != len(ratings):
        raise ValueError(f"{len(gold)} gold scores but {len(ratings)} ratings")
    pairs = [(float(g), float(r)) for g, r in zip(gold, ratings, strict=True) if r is not None]
    golds, rated = [g for g, _ in pairs], [r for _, r in pairs]
    spearman, pearson = _correlations(golds, rated)
    bands = []
    for index in range(len(BANDS)):
        inside = [i for i, g in enumerate(gold) if band_of(float(g)) == index]
        mine = [(g, r) for g, r in pairs if band_of(g) == index]
        bands.append(
            {
                "band": band_label(index),
                "pairs": len(inside),
                "rated": len(mine),
                "mae": statistics.fmean(abs(g - r) for g, r in mine) if mine else None,
                "mean_gold": statistics.fmean(g for g, _ in mine) if mine else None,
                "mean_rating": statistics.fmean(r for _, r in mine) if mine else None,
            }
        )
    result: dict[str, Any] = {
        "pairs": len(gold),
        "rated": len(pairs),
        "failed": len(gold) - len(pairs),
        "spearman": spearman,
        "pearson": pearson,
        "mae": statistics.fmean(abs(g - r) for g, r in pairs) if pairs else None,
        "bands": bands,
    }
    if threshold is not None:
        passed_low = sum(g < threshold <= r for g, r in pairs)
        failed_high = sum(r < threshold <= g for g, r in pairs)
        result["threshold"] = {
            "threshold": threshold,
            "accuracy": (len(pairs) - passed_low - failed_high) / len(pairs) if pairs else None,
            "passed_below": passed_low,
            "failed_above": failed_high,
        }
    return result


def rounded(score: float) -> int:
    """A rating rounded half up to a whole level."""
    return math.floor(score + 0.5)


def confusion(levels: Sequence[int], ratings: Sequence[float | None]) -> dict[str, dict[str, int]]:
    """Level -> rounded rating (``"unrated"`` for none) -> pairs."""
    table: dict[str, dict[str, int]] = {}
    for level, rating in zip(levels, ratings, strict=True):
        column = "unrated" if rating is None else str(rounded(rating))
        row = table.setdefault(str(level), {})
        row[column] = row.get(column, 0) + 1
    return {level: table[level] for level in sorted(table, key=int)}


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def agreement_markdown(by_task: dict[str, dict[str, Any]]) -> str:
    """One row per task (each an :func:`agreement` result): pairs, failed, Spearman, Pearson, MAE, MAE
    per gold band."""
    header = " | ".join(f"MAE {band_label(i)}" for i in range(len(BANDS)))
    lines = [
        f"| task | pairs | failed | Spearman | Pearson | MAE | {header} |",
        "|---" * (6 + len(BANDS)) + "|",
    ]
    for name, found in by_task.items():
        bands = " | ".join(
            f"{_num(b['mae'], 2)} ({b['rated']})" if b["pairs"] else "–" for b in found["bands"]
        )
        lines.append(
            f"| {name} | {found['pairs']} | {found['failed']} | {_num(found['spearman'])} | "
            f"{_num(found['pearson'])} | {_num(found['mae'], 2)} | {bands} |"
        )
    return "\n".join(lines)


def confusion_markdown(table: dict[str, dict[str, int]]) -> str:
    """The level x rounded-rating table in Markdown."""
    columns = [str(level) for level in range(int(SCALE[0]), int(SCALE[1]) + 1)]
    if any("unrated" in row for row in table.values()):
        columns.append("unrated")
    lines = [
        "| level \\ rating | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    lines += [
        f"| {level} | " + " | ".join(str(row.get(c, 0)) for c in columns) + " |"
        for level, row in table.items()
    ]
    return "\n".join(lines)
