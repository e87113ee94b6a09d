"""Choosing the generator by measurement (HTEB, PTEB): every candidate LLM rewrites the same seeded sample
with the recipe's transformations and writes synthetic STS for the same sources, one attempt per item, so
its error rates are HTEB's (an item counts once, whatever it got wrong); the lowest-error candidates are
then judged crossover — each one's rewrites rated 0-5 by the *other* candidates — with bootstrap intervals.
The report ranks them and says which is chosen and why; nothing is picked silently.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from skadapt import artifacts
from skadapt.config import Section
from skadapt.languages import Language
from skadapt.llm.config import LLMConfig
from skadapt.llm.generate import GenerationStats
from skadapt.llm.session import LLMSession
from skadapt.llm.types import LLMUnavailableError

FIELD_OF_CANDIDATE = "llm.{field} of the candidate"
"""Where a candidate's LLM setting is, when the candidates file is not known (``{field}``: its name)."""


class Candidate(Section):
    """One candidate generator: a name for the tables and its LLM."""

    name: str = Field(min_length=1)
    llm: LLMConfig


class Candidates(BaseModel):
    """The candidates file: ``candidates: [{name, llm: {...}}, ...]``."""

    candidates: list[Candidate] = Field(min_length=2)


def _field_in_file(index: int, source: str) -> str:
    """Where the ``index``-th candidate's LLM settings are in the candidates file ``source``."""
    return f"candidates[{index}].llm.{{field}} in {source}"


@contextmanager
def _blaming(name: str, where: str = FIELD_OF_CANDIDATE, role: str = "") -> Iterator[None]:
    """An unusable LLM named as the candidate's, with the field of it to fix (``where``, not an option:
    ``llm select`` has no ``--llm-*`` options)."""
    try:
        yield
    except LLMUnavailableError as error:
        fix = where.format(field=error.field) if error.field else None
        raise LLMUnavailableError(f"candidate {name!r}{role}: {error.message(fix)}") from None


@dataclass
class Measured:
    """One candidate's measurement."""

    name: str
    per_task: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    stats: GenerationStats = field(default_factory=GenerationStats)

    @property
    def total_error_rate(self) -> float:
        """Share of items (rewrites and synthetic-STS sources) whose one output failed any check."""
        return self.stats.failed_items / self.stats.items if self.stats.items else float("nan")

    @property
    def tokens_per_second(self) -> float | None:
        """Generated tokens per second of generation (None where the backend reports no token counts or
        every answer came from the cache)."""
        if not self.stats.completion_tokens or not self.seconds or self.stats.answers_requested == 0:
            return None
        return self.stats.completion_tokens / self.seconds


def measure(
    candidate: Candidate,
    texts: Sequence[str],
    transforms: Sequence[str],
    language: Language,
    *,
    seed: int,
    sts_sources: int = 0,
    where: str = FIELD_OF_CANDIDATE,
) -> Measured:
    """Rewrite ``texts`` with each transformation and write synthetic STS for the first ``sts_sources``
    texts, one attempt per item; error rates per check and task, runtime, tokens.

    Raises:
        LLMUnavailableError: The candidate's LLM cannot be used; the message names the candidate and
            its setting to fix (``where``, with ``{field}``).
    """
    from skadapt.robustness.rewrite import PROMPT_VERSION, rewrite
    from skadapt.synth.prompts import load_template, template_version
    from skadapt.synth.sources import SourceSentence
    from skadapt.synth.sts import generate_variants

    llm = candidate.llm.model_copy(update={"attempts": 1})  # HTEB: the first output of every item counts
    found = Measured(candidate.name)
    start = time.perf_counter()
    with _blaming(candidate.name, where), LLMSession(llm) as session:
        for transform in transforms:
            result = rewrite(
                list(texts),
                transform,
                seed,
                language,
                session.generator(seed=seed, template_version=PROMPT_VERSION),
            )
            found.per_task[transform] = _rates(result.stats)
            found.stats.add(result.stats)
            found.outputs += [(o, r) for o, r in result.mapping.items() if r is not None]
        if sts_sources:
            template = load_template(language)
            sources = [SourceSentence(f"s{i}", text) for i, text in enumerate(texts[:sts_sources])]
            generator = session.generator(seed=seed, template_version=template_version(template))
            _, stats = generate_variants(sources, generator, template, language)
            found.per_task["synthetic_sts"] = _rates(stats)
            found.stats.add(stats)
    found.seconds = time.perf_counter() - start
    return found


def _rates(stats: GenerationStats) -> dict[str, Any]:
    return {
        "items": stats.items,
        "failed_items": stats.failed_items,
        "total_error_rate": stats.failed_items / stats.items if stats.items else None,
        "checks": {row["check"]: row["rate"] for row in stats.error_rates() if row["failed"]},
    }


def crossover(
    measured: Sequence[Measured],
    judges: dict[str, LLMConfig],
    language: Language,
    *,
    seed: int,
    resamples: int = 1000,
    alpha: float = 0.05,
    where: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Each candidate's rewrites rated 0-5 by every *other* candidate; per candidate the mean over judges
    of their mean rating, with a percentile bootstrap interval over the rewrites (the judges' ratings of a
    resampled rewrite move together). A candidate none of whose ratings succeeded has no score
    (``mean`` None, every rating ``unrated``).

    Raises:
        LLMUnavailableError: A judge's LLM cannot be used; the message names that candidate and its
            setting to fix (``where[name]``, with ``{field}``).
    """
    from skadapt.llm.config import JudgeConfig
    from skadapt.llm.judge import Judge

    scores: dict[str, dict[str, Any]] = {}
    rng = np.random.default_rng(seed)
    for candidate in measured:
        pairs = candidate.outputs
        by_judge = {}
        for judge_name, judge_llm in judges.items():
            if judge_name == candidate.name or not pairs:
                continue
            located = (where or {}).get(judge_name, FIELD_OF_CANDIDATE)
            role = f" (judging {candidate.name!r})"
            with _blaming(judge_name, located, role), Judge(JudgeConfig(), judge_llm) as judge:
                ratings = judge.rate(
                    pairs, language, seed=seed, label=f"{judge_name} judges {candidate.name}"
                )
            by_judge[judge_name] = np.array([np.nan if r is None else r for r in ratings.scores], dtype=float)
        if not by_judge:
            scores[candidate.name] = {"mean": None, "ci": [None, None], "judges": [], "rewrites": len(pairs)}
            continue
        matrix = np.vstack(list(by_judge.values()))  # judges x rewrites
        if np.isnan(matrix).all():  # every rating failed: no score, not NaN
            scores[candidate.name] = {
                "mean": None,
                "ci": [None, None],
                "judges": sorted(by_judge),
                "rewrites": len(pairs),
                "unrated": int(matrix.size),
            }
            continue
        point = float(np.nanmean(np.nanmean(matrix, axis=1)))
        draws = []
        for _ in range(resamples):
            index = rng.integers(0, matrix.shape[1], matrix.shape[1])
            draws.append(np.nanmean(np.nanmean(matrix[:, index], axis=1)))
        low, high = np.nanpercentile(draws, [100 * alpha / 2, 100 * (1 - alpha / 2)])
        scores[candidate.name] = {
            "mean": point,
            "ci": [float(low), float(high)],
            "judges": sorted(by_judge),
            "rewrites": len(pairs),
            "unrated": int(np.isnan(matrix).sum()),
        }
    return scores


def select(
    candidates: Sequence[Candidate],
    texts: Sequence[str],
    transforms: Sequence[str],
    language: Language,
    *,
    seed: int,
    sts_sources: int = 0,
    top_k: int = 5,
    resamples: int = 1000,
    source: str = "the candidates file",
) -> dict[str, Any]:
    """Measure every candidate, judge the ``top_k`` lowest-error ones crossover, rank and choose.

    The ranking: the judged candidates by judge score (best first; those without one after them), then
    the others by total error rate. The choice is the first of the ranking, with the reason -- the
    lowest total error rate when no judge result exists.

    Raises:
        LLMUnavailableError: A candidate's LLM cannot be used; the message names the candidate and its
            field in the candidates file (``source``).
    """
    where = {c.name: _field_in_file(i, source) for i, c in enumerate(candidates)}
    measured = [
        measure(c, texts, transforms, language, seed=seed, sts_sources=sts_sources, where=where[c.name])
        for c in candidates
    ]
    by_error = sorted(measured, key=lambda m: (np.nan_to_num(m.total_error_rate, nan=1.0), m.name))
    judged = by_error[: max(2, top_k)] if len(by_error) >= 2 else by_error
    llms = {c.name: c.llm for c in candidates if c.name in {m.name for m in judged}}
    judge = crossover(judged, llms, language, seed=seed, resamples=resamples, where=where)

    def score(m: Measured) -> float:
        mean = judge[m.name]["mean"]
        return -1.0 if mean is None else mean

    ranked = sorted(judged, key=lambda m: -score(m)) + [m for m in by_error if m not in judged]
    rows = [
        {
            "rank": rank,
            "name": m.name,
            "total_error_rate": m.total_error_rate,
            "per_task": m.per_task,
            "judge": judge.get(m.name),
            "seconds": round(m.seconds, 2),
            "tokens_per_second": m.tokens_per_second,
            "requests": m.stats.requests_sent,
            "cache_hits": m.stats.cache_hits,
        }
        for rank, m in enumerate(ranked, start=1)
    ]
    best = rows[0]
    return {
        "language": language.code,
        "seed": seed,
        "texts": len(texts),
        "transforms": list(transforms),
        "sts_sources": sts_sources,
        "top_k": top_k,
        "ranking": rows,
        "chosen": best["name"],
        "reason": _reason(best, [judge[m.name] for m in judged]),
    }


def _reason(best: dict[str, Any], judged: list[dict[str, Any]]) -> str:
    """Why ``best`` is chosen: its judge score, else (no judge result exists) its total error rate."""
    errors = f"{best['total_error_rate']:.1%}"
    if best["judge"] and best["judge"]["mean"] is not None:
        return (
            f"{best['name']}: the best judge score ({best['judge']['mean']:.2f}) among the {len(judged)} "
            f"lowest-error candidates (its total error rate {errors})"
        )
    if any(j["judges"] for j in judged):
        why = f"every judge rating of the {len(judged)} lowest-error candidates failed"
    else:
        why = f"the {len(judged)} lowest-error candidates wrote no rewrite to judge"
    return f"{best['name']}: no judge result exists ({why}); chosen by the lowest total error rate ({errors})"


def markdown(report: dict[str, Any]) -> str:
    """The ranking table with each candidate's error rates, judge score, runtime and speed."""

    def pct(value: Any) -> str:
        return "–" if value is None or value != value else f"{value:.1%}"

    tasks = report["transforms"] + (["synthetic_sts"] if report["sts_sources"] else [])
    header = ["rank", "candidate", "total error", *tasks, "judge (0-5) [95% CI]", "s", "tokens/s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in report["ranking"]:
        judge = row["judge"]
        shown = (
            f"{judge['mean']:.2f} [{judge['ci'][0]:.2f}, {judge['ci'][1]:.2f}]"
            if judge and judge["mean"] is not None
            else "–"
        )
        speed = "–" if row["tokens_per_second"] is None else f"{row['tokens_per_second']:.1f}"
        cells = [str(row["rank"]), row["name"], pct(row["total_error_rate"])]
        cells += [pct(row["per_task"].get(t, {}).get("total_error_rate")) for t in tasks]
        cells += [shown, f"{row['seconds']:.1f}", speed]
        lines.append("| " + " | ".join(cells) + " |")
    checks = sorted({c for row in report["ranking"] for t in row["per_task"].values() for c in t["checks"]})
    if checks:
        lines += ["", "Error rate per check (share of outputs):", ""]
        lines += ["| candidate | " + " | ".join(checks) + " |", "|" + "---|" * (len(checks) + 1)]
        for row in report["ranking"]:
            merged: dict[str, list[float]] = {}
            for task in row["per_task"].values():
                for check, rate in task["checks"].items():
                    merged.setdefault(check, []).append(rate or 0.0)
            lines.append(
                f"| {row['name']} | "
                + " | ".join(pct(np.mean(merged[c])) if c in merged else "–" for c in checks)
                + " |"
            )
    lines += ["", f"**Chosen: {report['chosen']}** — {report['reason']}."]
    return "\n".join(lines)


def load_candidates(path: Path) -> list[Candidate]:
    """The candidates of a YAML file (``candidates: [{name, llm: {...}}, ...]``).

    Raises:
        RecipeError: An unreadable file or an invalid candidate, naming the field.
    """
    from pydantic import ValidationError

    from skadapt.recipe import RecipeError, format_validation_error, load_recipe_data

    data = load_recipe_data(path, "candidates file")
    try:
        return Candidates.model_validate(data).candidates
    except ValidationError as error:
        raise RecipeError(format_validation_error(error, str(path), Candidates, "candidates")) from None


def save(report: dict[str, Any], out_dir: Path, *, overwrite: bool = False) -> str:
    """Write ``llm_select.json`` and ``llm_select.md`` into ``out_dir`` (which appears only when complete);
    the markdown.

    Raises:
        OutputExistsError: ``out_dir`` is not empty and ``overwrite`` is not given.
    """
    text = markdown(report)
    with artifacts.atomic_dir(out_dir, overwrite=overwrite) as tmp:
        artifacts.write_json(tmp / "llm_select.json", report)
        (tmp / "llm_select.md").write_text(text + "\n", encoding="utf-8")
    return text
