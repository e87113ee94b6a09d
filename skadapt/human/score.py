"""Human scores with the models' metric on the identical items, agreement as HUME reports it, and the
result in mteb's format under mteb's ``baseline/Human`` model.

Metrics: STS Spearman of the ratings with the gold; classification accuracy; clustering V-measure of the
free group ids; pair classification average precision of the 0/1 answers (mteb's max_ap for a binary
scorer); reranking MAP and retrieval nDCG@10 of the ranking the 0/1 answers give, ties in random order
(the expectation over 200 seeded tie-breaks). With ``leave_one_out`` a task's gold is replaced, for each
annotator, by the mean of the other annotators' answers (for gold that is itself their mean, as in
synthetic STS). Agreement: Fleiss' kappa (classification, pairs), pairwise ARI (clustering), pairwise
Spearman (STS), mean per-query Spearman and Kendall tau (reranking).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts
from skadapt.annotate.agreement import defined, fleiss_kappa, one_value, put
from skadapt.human.subset import Subset
from skadapt.results import HUMAN_SCORES

TIE_BREAKS = 200
HUMAN_MODEL = "baseline/Human"


def _average_precision(ranked_gold: list[int]) -> float:
    hits, total = 0, 0.0
    for rank, gold in enumerate(ranked_gold, 1):
        if gold:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def _ndcg_at_10(ranked_gold: list[int]) -> float:
    dcg = sum(g / math.log2(r + 1) for r, g in enumerate(ranked_gold[:10], 1))
    ideal = sum(g / math.log2(r + 1) for r, g in enumerate(sorted(ranked_gold, reverse=True)[:10], 1))
    return dcg / ideal if ideal else 0.0


def ranking_score(answers: list[int], gold: list[int], metric: str, seed: int = 0) -> float:
    """Expected MAP/nDCG@10 contribution of one query ranked by binary answers, ties in random order."""
    rng = random.Random(seed)
    score = _average_precision if metric == "map_at_1000" else _ndcg_at_10
    values = []
    for _ in range(TIE_BREAKS):
        keys = [(-a, rng.random()) for a in answers]
        order = sorted(range(len(answers)), key=keys.__getitem__)
        values.append(score([gold[i] for i in order]))
    return float(np.mean(values))


def task_score(
    subset: Subset, answers: Mapping[str, Any], gold: Mapping[str, Any]
) -> tuple[float | None, str | None]:
    """One annotator's score (points, 0-100) with the models' metric, or None and why it is not defined
    (STS answers or gold of one value only; no query with a relevant item)."""
    from scipy.stats import spearmanr
    from sklearn.metrics import accuracy_score, average_precision_score, v_measure_score

    ids = [item.item_id for item in subset.items]
    given, truth = [answers[i] for i in ids], [gold[i] for i in ids]
    if subset.type == "STS":
        reason = one_value({"answers": given, "gold": truth})
        return defined(lambda: 100 * spearmanr(given, truth).statistic, reason)
    if subset.type == "Classification":
        return 100 * float(accuracy_score(truth, given)), None
    if subset.type == "Clustering":
        return 100 * float(v_measure_score(truth, given)), None
    if subset.type == "PairClassification":
        return 100 * float(average_precision_score(truth, given)), None
    groups: dict[str, list[str]] = defaultdict(list)
    for item in subset.items:
        groups[item.group].append(item.item_id)
    per_query = [
        ranking_score([answers[i] for i in members], [gold[i] for i in members], subset.metric, seed=index)
        for index, members in enumerate(groups.values())
        if any(gold[i] for i in members)
    ]
    return defined(
        lambda: 100 * float(np.mean(per_query)) if per_query else None, "no query has a relevant item"
    )


def agreement(subset: Subset, by_annotator: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """HUME's agreement statistic for the task type (none with fewer than two annotators); one that is not
    defined is None beside a ``<name>_note`` saying why."""
    from scipy.stats import kendalltau, spearmanr
    from sklearn.metrics import adjusted_rand_score

    names = list(by_annotator)
    ids = [item.item_id for item in subset.items]
    if len(names) < 2:
        return {}
    pairs = list(itertools.combinations(names, 2))
    answers = {name: [by_annotator[name][i] for i in ids] for name in names}
    result: dict[str, Any] = {}
    if subset.type in ("Classification", "PairClassification"):
        categories = sorted({str(by_annotator[n][i]) for n in names for i in ids})
        matrix = np.array([[categories.index(str(by_annotator[n][i])) for i in ids] for n in names])
        every = [str(a) for name in names for a in answers[name]]
        put(
            result,
            "fleiss_kappa",
            lambda: fleiss_kappa(matrix),
            one_value({"all annotators": every}, "answer value"),
        )
        return result
    if subset.type == "Clustering":
        values = [adjusted_rand_score(answers[a], answers[b]) for a, b in pairs]
        return {"pairwise_ari": float(np.mean(values))}
    if subset.type == "STS":
        vectors = [(answers[a], answers[b]) for a, b in pairs]
        put(
            result,
            "pairwise_spearman",
            lambda: np.mean([spearmanr(*p).statistic for p in vectors]),
            one_value(answers),
        )
        return result
    groups: dict[str, list[str]] = defaultdict(list)
    for item in subset.items:
        groups[item.group].append(item.item_id)
    rho, tau = [], []
    for members in groups.values():
        for a, b in pairs:
            x, y = [by_annotator[a][i] for i in members], [by_annotator[b][i] for i in members]
            if len(set(x)) > 1 and len(set(y)) > 1:
                rho.append(spearmanr(x, y).statistic)
                tau.append(kendalltau(x, y).statistic)
    reason = "no query on which both annotators of a pair gave two or more answer values"
    put(result, "mean_spearman", lambda: np.mean(rho) if rho else None, reason)
    put(result, "mean_kendall_tau", lambda: np.mean(tau) if tau else None, reason)
    return result


def _others_mean(
    subset: Subset, by_annotator: Mapping[str, Mapping[str, Any]], name: str
) -> dict[str, float]:
    """The gold for annotator ``name`` under leave-one-out: the other annotators' mean per item."""
    others = [answers for other, answers in by_annotator.items() if other != name]
    if not others:
        raise ValueError(f"{subset.task}: leave-one-out needs at least two annotators")
    return {item.item_id: float(np.mean([o[item.item_id] for o in others])) for item in subset.items}


def score_subsets(
    subsets: list[Subset], answers: Mapping[str, Mapping[str, Mapping[str, Any]]], leave_one_out: set[str]
) -> dict[str, Any]:
    """Per task: each annotator's score, their mean and SD, and agreement."""
    result: dict[str, Any] = {}
    for subset in subsets:
        by_annotator = answers[subset.task]
        loo = subset.task in leave_one_out or subset.source_task in leave_one_out
        gold = {item.item_id: item.gold for item in subset.items}
        scores, notes = {}, {}
        for name, given in by_annotator.items():
            truth = _others_mean(subset, by_annotator, name) if loo else gold
            scores[name], note = task_score(subset, given, truth)
            if note is not None:
                notes[name] = note
        values = list(scores.values())
        entry: dict[str, Any] = {
            "source_task": subset.source_task,
            "type": subset.type,
            "metric": subset.metric,
            "items": len(subset.items),
            "annotators": scores,
        }
        if notes:
            entry["annotators_note"] = notes
            note = f"not defined: the score of {', '.join(notes)} is not defined"
            entry.update(mean=None, mean_note=note, sd=None, sd_note=note)
        else:
            entry["mean"] = float(np.mean(values))
            entry["sd"] = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
        entry["agreement"] = agreement(subset, by_annotator)
        entry["leave_one_out"] = loo
        result[subset.task] = entry
    return result


def write_mteb_results(scores: Mapping[str, Any], tasks: list[Any], cache_dir: Path) -> list[Path]:
    """The human mean per task as mteb ``TaskResult`` files of ``baseline/Human`` in a ``ResultCache`` (none
    for a task whose mean is not defined)."""
    import mteb
    from mteb.results import TaskResult

    meta = mteb.get_model_meta(HUMAN_MODEL)
    cache = mteb.ResultCache(cache_path=str(cache_dir))
    written = []
    for task in tasks:
        entry = scores[task.metadata.name]
        if entry["mean"] is None:  # not defined (mean_note says why): no mteb result to load
            continue
        value = entry["mean"] / 100
        split = task.eval_splits[0]
        result = TaskResult(
            dataset_revision=task.metadata.revision,
            task_name=task.metadata.name,
            mteb_version=mteb.__version__,
            scores={
                split: [
                    {
                        "hf_subset": "default",
                        "languages": list(task.metadata.eval_langs),
                        "main_score": value,
                        entry["metric"]: value,
                    }
                ]
            },
            evaluation_time=None,
        )
        cache.save_to_cache(result, meta)
        written.append(cache.get_task_result_path(task.metadata.name, meta))
    return written


def save(scores: Mapping[str, Any], directory: Path) -> None:
    """``human_scores.json``."""
    artifacts.write_json(directory / HUMAN_SCORES, dict(scores))
