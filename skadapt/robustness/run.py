"""A robustness run: rewrite each task's texts per transformation and seed, score every model on the
originals and on the transformed copies through mteb, and compute paired statistics.

Layout of the output directory::

    robustness.json / robustness.md   profiles (model x axis, model x transformation), statistics
    figures/                          delta heatmap, Hodges-Lehmann forest plot, dumbbell per model
    rewrites/<transform>_s<seed>.jsonl   every original text, its rewrite or why it failed
    cache/                            mteb results, each variant under its own task name (or cache_dir)
"""

from __future__ import annotations

import copy
import json
import logging
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skadapt import artifacts
from skadapt.languages import Language
from skadapt.llm.config import JudgeConfig, LLMConfig
from skadapt.llm.generate import GenerationStats
from skadapt.llm.judge import Judge, score_summary
from skadapt.llm.session import LLMSession, sampling_of
from skadapt.results import RobustnessReport
from skadapt.robustness.diversity import diversity
from skadapt.robustness.rewrite import PROMPT_VERSION, Rewrites, judge_rewrites, rewrite
from skadapt.robustness.stats import holm, kendall_tau, summarize
from skadapt.robustness.tasks import as_v2, texts_to_transform, transformed_copy, transforms_task
from skadapt.robustness.transforms import AXES, LANGUAGE_TRANSFORMS, axis_of

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask

log = logging.getLogger(__name__)


@dataclass
class Variant:
    """One task under one transformation and seed: the transformed copy and, when items were dropped, the
    original on the same surviving items."""

    task: str
    transform: str
    seed: int
    transformed: Any
    survivors: Any | None
    items: int
    excluded: int
    emptied: int = 0


@dataclass
class RobustnessPlan:
    """What is run: models, tasks, transformations, seeds."""

    models: dict[str, str]
    transforms: list[str]
    seeds: list[int]
    temperature: float | None = None
    top_p: float | None = None
    prompt_policy: dict[str, str] = field(default_factory=dict)
    batch_size: int = 32
    bootstrap: int = 1000
    rejected: dict[str, Any] = field(default_factory=dict)
    """Transformations a human validation rejected (not scored), with their mean ratings."""
    judge: JudgeConfig | None = None
    """An LLM judge whose low ratings fail rewrites (None: no judge)."""


def build_variants(
    tasks: list[AbsTask], plan: RobustnessPlan, llm: LLMConfig, language: Language, out_dir: Path
) -> tuple[list[Variant], dict[str, Any]]:
    """Rewrite the texts and build the transformed tasks; returns them with the generation report.

    With ``plan.judge``, every rewrite that passed its checks is rated against its original, and those
    rated below the threshold (or not rated) are excluded like failed ones; the report then has ``judge``.
    """
    session = LLMSession(llm)
    texts = {t.metadata.name: texts_to_transform(t) for t in tasks}
    variants: list[Variant] = []
    skipped: list[dict[str, Any]] = []
    generation: dict[str, Any] = {}
    total = GenerationStats()
    judge_total = GenerationStats()
    judge_scores: dict[str, dict[int, list[float | None]]] = defaultdict(dict)
    judge = None
    (out_dir / "rewrites").mkdir(parents=True, exist_ok=True)
    try:
        judge = Judge(plan.judge, llm, session) if plan.judge is not None else None
        for transform in plan.transforms:
            applicable = [t for t in tasks if transforms_task(t, transform, LANGUAGE_TRANSFORMS)]
            unique = list(dict.fromkeys(x for t in applicable for x in texts[t.metadata.name]))
            for seed in plan.seeds:
                generator = session.generator(
                    seed=seed, template_version=PROMPT_VERSION, temperature=plan.temperature, top_p=plan.top_p
                )
                rewrites = rewrite(unique, transform, seed, language, generator)
                generation[f"{transform}_s{seed}"] = {**rewrites.stats.to_dict(), "texts": len(unique)}
                total.add(rewrites.stats)
                if judge is not None and plan.judge is not None:
                    ratings = judge_rewrites(
                        rewrites,
                        judge,
                        plan.judge.threshold,
                        language,
                        seed=seed,
                        label=f"judging {transform} (seed {seed})",
                    )
                    judge_total.add(ratings.stats)
                    judge_scores[transform][seed] = ratings.scores
                    generation[f"{transform}_s{seed}"]["judge"] = {
                        **judge_summary(ratings.scores, plan.judge.threshold),
                        "generation": ratings.stats.to_dict(),
                    }
                _write_rewrites(out_dir / "rewrites" / f"{transform}_s{seed}.jsonl", rewrites)
                for task in applicable:
                    variant = _variant(task, transform, seed, rewrites)
                    if enough_survivors(variant.items, variant.excluded) and not variant.emptied:
                        variants.append(variant)
                    else:
                        skipped.append(
                            {
                                "task": variant.task,
                                "transform": transform,
                                "seed": seed,
                                "items": variant.items,
                                "excluded": variant.excluded,
                                "emptied_splits": variant.emptied,
                            }
                        )
                        log.warning(
                            "robustness: %s under %s (seed %d) skipped: %d of %d items survived",
                            variant.task,
                            transform,
                            seed,
                            variant.items - variant.excluded,
                            variant.items,
                        )
    finally:
        if judge is not None:
            judge.close()
        session.close()
    report: dict[str, Any] = {
        "per_run": generation,
        "total": total.to_dict(),
        "markdown": total.markdown(),
        "skipped": skipped,
    }
    if judge is not None and plan.judge is not None:
        threshold = plan.judge.threshold
        report["judge"] = {
            **judge.describe(),
            "threshold": threshold,
            "transforms": {
                transform: {
                    **judge_summary([s for scores in by_seed.values() for s in scores], threshold),
                    "seeds": {
                        str(seed): judge_summary(scores, threshold) for seed, scores in by_seed.items()
                    },
                }
                for transform, by_seed in judge_scores.items()
            },
            "generation": judge_total.to_dict(),
        }
        report["judge_markdown"] = judge_total.markdown()
    return variants, report


def judge_summary(scores: list[float | None], threshold: float) -> dict[str, Any]:
    """The judge's ratings of a set of rewrites: rated, unrated, mean, median, and how many failed (rated
    below ``threshold``, or not rated) and were excluded."""
    summary = score_summary(scores)
    below = sum(s is not None and s < threshold for s in scores)
    return {**summary, "below_threshold": below, "excluded": below + summary["unrated"]}


MIN_SURVIVING_ITEMS = 5
MIN_SURVIVING_SHARE = 0.1


def enough_survivors(items: int, excluded: int) -> bool:
    """Whether a transformed task keeps enough items to be scored (at least 5 and 10% of them); a task
    whose rewrites mostly failed is skipped and listed, not scored on a handful of items."""
    left = items - excluded
    return left >= MIN_SURVIVING_ITEMS and left >= MIN_SURVIVING_SHARE * items


def _variant(task: AbsTask, transform: str, seed: int, rewrites: Rewrites) -> Variant:
    name = task.metadata.name
    transformed, counts = transformed_copy(task, rewrites.mapping, f"{name}__{transform}__s{seed}")
    survivors = None
    if counts.excluded:
        survivors, _ = transformed_copy(
            task, rewrites.mapping, f"{name}__original__{transform}__s{seed}", keep_text=True
        )
    return Variant(
        name, transform, seed, transformed, survivors, counts.items, counts.excluded, counts.emptied
    )


def _write_rewrites(path: Path, rewrites: Rewrites) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for original, new in rewrites.mapping.items():
            row = {"original": original, "rewritten": new, "languages": rewrites.targets.get(original)}
            if original in rewrites.judged:
                row["judge_score"] = rewrites.judged[original]
            if original in rewrites.reasons:
                row["failed"] = rewrites.reasons[original]
            if original in rewrites.rejected:
                row["rejected_rewrite"] = rewrites.rejected[original]
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def score_models(
    tasks: list[AbsTask], variants: list[Variant], plan: RobustnessPlan, cache_dir: Path
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score every model on the originals (once) and on every variant; one encoder per model, so texts a
    variant did not change are not encoded again. Returns one row per (model, task, transform, seed)."""
    from skadapt.tasks.runner import evaluate_model, load_encoder

    rows: list[dict[str, Any]] = []
    encoded: dict[str, int] = {}
    first_model = None
    for label, path in plan.models.items():
        encoder = load_encoder(path, label, plan.prompt_policy)
        every = [copy.deepcopy(t) for t in tasks]
        for variant in variants:
            every.append(copy.deepcopy(variant.transformed))
            if variant.survivors is not None:
                every.append(copy.deepcopy(variant.survivors))
        scores = evaluate_model(
            path,
            label,
            every,
            cache_dir=cache_dir,
            prompt_policy=plan.prompt_policy,
            batch_size=plan.batch_size,
            encoder=encoder,
        )
        by_name = {s.task: s.score for s in scores}
        for variant in variants:
            original = by_name[
                variant.survivors.metadata.name if variant.survivors is not None else variant.task
            ]
            transformed = by_name[variant.transformed.metadata.name]
            rows.append(
                {
                    "model": label,
                    "task": variant.task,
                    "transform": variant.transform,
                    "seed": variant.seed,
                    "original": original,
                    "original_full": by_name[variant.task],
                    "transformed": transformed,
                    "delta": transformed - original,
                    "items": variant.items,
                    "excluded": variant.excluded,
                }
            )
        memo = getattr(encoder.model, "encode_memo", None)
        encoded[label] = memo.misses if memo is not None else -1
        if first_model is None:
            first_model = encoder.model
    return rows, {"texts_encoded": encoded, "first_model": first_model}


def statistics(rows: list[dict[str, Any]], plan: RobustnessPlan, alpha: float = 0.05) -> dict[str, Any]:
    """Per model and transformation: mean delta, SD across seeds, Wilcoxon over task-level deltas,
    Hodges-Lehmann with Walsh and bootstrap CIs, Holm across transformations; per axis and Total; Kendall's
    tau between the models' original and transformed rankings (>= 3 models)."""
    by_model: dict[str, Any] = {}
    for label in plan.models:
        per_transform: dict[str, Any] = {}
        for transform in plan.transforms:
            mine = [r for r in rows if r["model"] == label and r["transform"] == transform]
            if not mine:
                continue
            by_task: dict[str, list[float]] = defaultdict(list)
            by_seed: dict[int, list[float]] = defaultdict(list)
            for row in mine:
                by_task[row["task"]].append(row["delta"])
                by_seed[row["seed"]].append(row["delta"])
            summary = summarize(
                {t: sum(v) / len(v) for t, v in by_task.items()},
                {s: sum(v) / len(v) for s, v in by_seed.items()},
            )
            summary["mean_original"] = sum(r["original"] for r in mine) / len(mine)
            summary["mean_transformed"] = sum(r["transformed"] for r in mine) / len(mine)
            summary["excluded_items"] = sum(r["excluded"] for r in mine)
            per_transform[transform] = summary
        names = list(per_transform)
        for name, adjusted in zip(names, holm([per_transform[n]["wilcoxon_p"] for n in names]), strict=True):
            per_transform[name]["holm_p"] = adjusted
            per_transform[name]["significant"] = bool(adjusted < alpha) if not math.isnan(adjusted) else False
        axes = {
            axis: sum(per_transform[n]["mean_delta"] for n in present) / len(present)
            for axis, members in AXES.items()
            if (present := [n for n in members if n in per_transform])
        }
        by_model[label] = {
            "transforms": per_transform,
            "axes": axes,
            "total": sum(axes.values()) / len(axes) if axes else math.nan,
        }
    return {"models": by_model, "kendall_tau": _kendall(rows, plan)}


def _kendall(rows: list[dict[str, Any]], plan: RobustnessPlan) -> dict[str, Any]:
    if len(plan.models) < 3:
        return {}
    result = {}
    for transform in plan.transforms:
        taus = []
        groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            if row["transform"] == transform:
                groups[(row["task"], row["seed"])].append(row)
        for group in groups.values():
            if len(group) >= 3:
                taus.append(kendall_tau([r["original"] for r in group], [r["transformed"] for r in group]))
        finite = [t for t in taus if not math.isnan(t)]
        if finite:
            mean = sum(finite) / len(finite)
            sd = (sum((t - mean) ** 2 for t in finite) / (len(finite) - 1)) ** 0.5 if len(finite) > 1 else 0.0
            result[transform] = {"mean": mean, "sd": sd, "datasets": len(finite)}
    return result


def diversity_report(out_dir: Path, plan: RobustnessPlan, model: Any) -> dict[str, Any]:
    """Word edit distance, length ratio and embedding drift (first model) per transformation over its
    seeds; kept in ``diversity.json`` and reused while the rewrites and the model are the same."""
    files = [out_dir / "rewrites" / f"{t}_s{s}.jsonl" for t in plan.transforms for s in plan.seeds]
    key = artifacts.hash_json(
        [next(iter(plan.models.values())), [artifacts.path_fingerprint(f) for f in files]]
    )
    cached = artifacts.read_json(out_dir / "diversity.json")
    if isinstance(cached, dict) and cached.get("key") == key:
        return cached["diversity"]
    pairs: dict[str, list[tuple[str, str]]] = {}
    for path in files:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        transform = path.stem.rsplit("_s", 1)[0]
        pairs.setdefault(transform, []).extend(
            (r["original"], r["rewritten"]) for r in rows if r["rewritten"]
        )
    result = {name: diversity(found, model) for name, found in pairs.items()}
    artifacts.write_json(out_dir / "diversity.json", {"key": key, "diversity": result})
    return result


def axis_table(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows model x (axes..., Total) of mean deltas."""
    return [
        {"model": label, **{axis: data["axes"].get(axis, math.nan) for axis in AXES}, "total": data["total"]}
        for label, data in stats["models"].items()
    ]


def run_robustness(
    tasks: list[AbsTask],
    plan: RobustnessPlan,
    llm: LLMConfig,
    language: Language,
    out_dir: Path,
    cache_dir: Path | None = None,
    anchor: Path | None = None,
) -> dict[str, Any]:
    """The whole run; writes the reports and figures into ``out_dir`` and returns the JSON report.

    The report records the models' paths relative to ``anchor`` (the run directory; default: ``out_dir``'s
    parent) when inside it, else absolute.

    ``cache_dir`` holds mteb's results of every variant (default ``out_dir/cache``): a rerun with the same
    rewrites scores nothing again.
    """
    from skadapt.robustness.report import write_reports

    out_dir.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        task.load_data()
        as_v2(task)
    variants, generation = build_variants(tasks, plan, llm, language, out_dir)
    rows, scoring = score_models(tasks, variants, plan, cache_dir or out_dir / "cache")
    report = {
        "models": {
            label: artifacts.recorded_path(p, anchor or out_dir.parent) for label, p in plan.models.items()
        },
        "transforms": plan.transforms,
        "axes": {axis_of(t): [n for n in AXES[axis_of(t)] if n in plan.transforms] for t in plan.transforms},
        "seeds": plan.seeds,
        "tasks": [t.metadata.name for t in tasks],
        "llm": {"backend": llm.backend, "model": llm.model, "revision": llm.revision},
        "sampling": vars(sampling_of(llm, plan.temperature, plan.top_p)),
        "generation": {
            k: v for k, v in generation.items() if k not in ("markdown", "skipped", "judge", "judge_markdown")
        },
        "judge": generation.get("judge"),
        "skipped_variants": generation["skipped"],
        "rejected_transforms": plan.rejected,
        "rows": rows,
        "statistics": statistics(rows, plan),
        "diversity": diversity_report(out_dir, plan, scoring["first_model"]),
        "texts_encoded": scoring["texts_encoded"],
    }
    RobustnessReport.write_data(out_dir, report)
    write_reports(report, generation["markdown"], out_dir, judge_table=generation.get("judge_markdown", ""))
    return report
