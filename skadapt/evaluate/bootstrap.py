"""Per-task bootstrap confidence intervals for local suites, paired across models.

mteb reports one number per task. To tell whether a one-point difference between two models is real,
each local task is reduced to per-item statistics computed from the model's embeddings (encoded with the
same prompts as the mteb run) and the items are resampled with replacement (seeded, the same resamples
for every model, so differences are paired):

================== ======== ===================================================================
type               item     statistic (x100)
================== ======== ===================================================================
STS                pair     Spearman correlation of cosine similarity with the gold score
PairClassification pair     average precision of cosine similarity
Retrieval          query    nDCG@10 over the whole corpus (cosine)
Reranking          query    average precision of the query's candidates (cosine), i.e. MAP
Classification     text     accuracy of logistic regressions on ``samples_per_label`` undersampled
                            train sets (``n_experiments`` of them), averaged per text
Clustering         text     V-measure of k-means (k = number of labels, 10 inits) fitted on the texts
BitextMining       pair     accuracy of nearest-neighbour matching of sentence1 to sentence2
================== ======== ===================================================================

The statistics follow mteb's main scores; where mteb takes a maximum over similarity functions or draws
its own subsamples the point value can differ from the mteb score in the tables, so every interval is
reported with its own point: the statistic on all items.

The intervals are percentile intervals of ``resamples`` draws of the items with replacement, except for
clustering. The V-measure is an entropy ratio, not a mean over texts: on a resample with duplicates it
rises by several points (whether the k-means is refit or not), so resampled values are not spread around
the statistic and their percentile interval can miss it. Clustering is refit on label-stratified
half-samples drawn without replacement (at most ``HALF_SAMPLES`` of them, the same for every model) and
gets the m-out-of-n interval of :func:`half_sample_interval`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from skadapt.tasks.suite import LocalTask, Suite

Encode = Callable[[list[str], str | None], np.ndarray]
"""(texts, role 'query' | 'document' | None for symmetric tasks) -> the model's embeddings."""


HALF_SAMPLES = 200
"""Half-samples per clustering task at most (each refits k-means for every model: about 20 ms per fit on
the demo's 160 texts; the number of resamples, when lower, is used)."""


@dataclass
class ItemStatistic:
    """A task reduced to items: ``value(indices)`` is the task statistic on those items (x100).

    ``strata`` (clustering): each item's label; the statistic is then refit on label-stratified
    half-samples (:func:`half_samples`) instead of evaluated on resampled items.
    """

    task: str
    items: int
    value: Callable[[np.ndarray], float]
    strata: np.ndarray | None = None


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic) if len(set(y.tolist())) > 1 else 0.0


def _average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(labels, scores)) if labels.any() else 0.0


def _ndcg_at_10(ranked_relevance: np.ndarray, ideal: np.ndarray) -> float:
    discounts = 1 / np.log2(np.arange(2, 12))
    dcg = float(np.sum(ranked_relevance[:10] * discounts[: len(ranked_relevance[:10])]))
    best = np.sort(ideal)[::-1][:10]
    idcg = float(np.sum(best * discounts[: len(best)]))
    return dcg / idcg if idcg > 0 else 0.0


def _rows(suite: Suite, name: str) -> list[dict[str, Any]]:
    from skadapt.sources import iter_jsonl

    return [row for _, row in iter_jsonl(suite.data_path(name))]


def _sts(spec: Any, suite: Suite, encode: Encode) -> ItemStatistic:
    rows = _rows(suite, spec.data)
    sims = _cos(encode([r["sentence1"] for r in rows], None), encode([r["sentence2"] for r in rows], None))
    gold = np.array([float(r["score"]) for r in rows])
    return ItemStatistic(spec.name, len(rows), lambda i: 100 * _spearman(sims[i], gold[i]))


def _pairs(spec: Any, suite: Suite, encode: Encode) -> ItemStatistic:
    rows = _rows(suite, spec.data)
    sims = _cos(encode([r["sentence1"] for r in rows], None), encode([r["sentence2"] for r in rows], None))
    labels = np.array([int(r["label"]) for r in rows])
    return ItemStatistic(spec.name, len(rows), lambda i: 100 * _average_precision(sims[i], labels[i]))


def _retrieval(spec: Any, suite: Suite, encode: Encode) -> ItemStatistic:
    corpus = _rows(suite, spec.corpus)
    queries = _rows(suite, spec.queries)
    relevant: dict[str, dict[str, float]] = {}
    for row in _rows(suite, spec.qrels):
        relevant.setdefault(str(row["query-id"]), {})[str(row["corpus-id"])] = float(row["score"])
    ids = [str(r["id"]) for r in corpus]
    texts = [f"{r['title']} {r['text']}".strip() if r.get("title") else r["text"] for r in corpus]
    docs = encode(texts, "document")
    asked = [q for q in queries if relevant.get(str(q["id"]))]
    sims = encode([q["text"] for q in asked], "query") @ docs.T
    per_query = []
    for row, scores in zip(asked, sims, strict=True):
        rel = relevant[str(row["id"])]
        order = np.argsort(-scores, kind="stable")
        gains = np.array([rel.get(ids[j], 0.0) for j in order])
        per_query.append(_ndcg_at_10(gains, np.array(list(rel.values()))))
    values = np.array(per_query)
    return ItemStatistic(spec.name, len(values), lambda i: 100 * float(values[i].mean()))


def _reranking(spec: Any, suite: Suite, encode: Encode) -> ItemStatistic:
    rows = _rows(suite, spec.data)
    texts = sorted({text for row in rows for text in [*row["positive"], *row["negative"]]})
    index = {text: i for i, text in enumerate(texts)}
    docs = encode(texts, "document")
    queries = encode([row["query"] for row in rows], "query")
    per_query = []
    for row, query in zip(rows, queries, strict=True):
        candidates = [index[t] for t in [*row["positive"], *row["negative"]]]
        labels = np.array([1] * len(row["positive"]) + [0] * len(row["negative"]))
        per_query.append(_average_precision(docs[candidates] @ query, labels))
    values = np.array(per_query)
    return ItemStatistic(spec.name, len(values), lambda i: 100 * float(values[i].mean()))


def _classification(spec: Any, suite: Suite, encode: Encode, seed: int) -> ItemStatistic:
    from sklearn.linear_model import LogisticRegression

    train, test = _rows(suite, spec.train), _rows(suite, spec.test)
    x_train = encode([r["text"] for r in train], None)
    x_test = encode([r["text"] for r in test], None)
    y_train = np.array([str(r["label"]) for r in train])
    y_test = np.array([str(r["label"]) for r in test])
    rng = np.random.default_rng(seed)
    correct = np.zeros(len(test))
    for _ in range(spec.n_experiments):
        chosen = np.concatenate(
            [
                rng.permutation(np.flatnonzero(y_train == label))[: spec.samples_per_label]
                for label in np.unique(y_train)
            ]
        )
        classifier = LogisticRegression(max_iter=100).fit(x_train[chosen], y_train[chosen])
        correct += classifier.predict(x_test) == y_test
    per_item = correct / spec.n_experiments
    return ItemStatistic(spec.name, len(test), lambda i: 100 * float(per_item[i].mean()))


def clustering_statistic(task: str, embeddings: np.ndarray, labels: np.ndarray, seed: int) -> ItemStatistic:
    """V-measure (x100) of k-means fitted on the chosen texts: k = the labels among them, 10 k-means++
    inits, ``seed``; on all texts it is the clustering of the whole set."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import v_measure_score

    def value(indices: np.ndarray) -> float:
        chosen = labels[indices]
        k = len(np.unique(chosen))
        predicted = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(embeddings[indices])
        return 100 * float(v_measure_score(chosen, predicted))

    return ItemStatistic(task, len(labels), value, strata=labels)


def _clustering(spec: Any, suite: Suite, encode: Encode, seed: int) -> ItemStatistic:
    rows = _rows(suite, spec.data)
    labels = np.array([str(r["label"]) for r in rows])
    return clustering_statistic(spec.name, encode([r["text"] for r in rows], None), labels, seed)


def _bitext(spec: Any, suite: Suite, encode: Encode) -> ItemStatistic:
    rows = _rows(suite, spec.data)
    source = encode([r["sentence1"] for r in rows], None)
    target = encode([r["sentence2"] for r in rows], None)
    correct = (np.argmax(source @ target.T, axis=1) == np.arange(len(rows))).astype(float)
    return ItemStatistic(spec.name, len(rows), lambda i: 100 * float(correct[i].mean()))


def item_statistic(spec: LocalTask, suite: Suite, encode: Encode, seed: int = 42) -> ItemStatistic:
    """Reduce one local task to per-item statistics for a model (its ``encode``)."""
    if spec.type == "STS":
        return _sts(spec, suite, encode)
    if spec.type == "PairClassification":
        return _pairs(spec, suite, encode)
    if spec.type == "Retrieval":
        return _retrieval(spec, suite, encode)
    if spec.type == "Reranking":
        return _reranking(spec, suite, encode)
    if spec.type == "Classification":
        return _classification(spec, suite, encode, seed)
    if spec.type == "Clustering":
        return _clustering(spec, suite, encode, seed)
    return _bitext(spec, suite, encode)


def resamples(items: int, count: int, seed: int) -> np.ndarray:
    """``count`` bootstrap index draws of ``items`` items (the same for every model of a task)."""
    return np.random.default_rng(seed).integers(0, items, size=(count, items))


def half_samples(strata: np.ndarray, count: int, seed: int) -> np.ndarray:
    """``count`` label-stratified half-samples without replacement: ``ceil(n_c / 2)`` of the ``n_c`` items
    of every label, sorted indices, one row per half-sample (the same for every model of a task)."""
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(strata == label) for label in np.unique(strata)]
    rows = [
        np.sort(np.concatenate([rng.choice(g, (len(g) + 1) // 2, replace=False) for g in groups]))
        for _ in range(count)
    ]
    return np.array(rows, dtype=int).reshape(count, sum((len(g) + 1) // 2 for g in groups))


def half_sample_scale(items: int, size: int) -> float:
    """``sqrt(m / (n - m))``: the factor that gives the spread of the statistic on m of n items drawn
    without replacement the spread of the statistic on all n (:func:`half_sample_interval`); 0 when the
    half-samples are the whole set (every label has one item)."""
    return float(np.sqrt(size / (items - size))) if items > size else 0.0


def interval(values: np.ndarray, alpha: float) -> tuple[float, float]:
    """Two-sided (1 - alpha) percentile interval."""
    low, high = np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def bootstrap_values(statistic: ItemStatistic, draws: np.ndarray) -> np.ndarray:
    """The statistic on every resample (one row of item indices each)."""
    return np.array([statistic.value(row) for row in draws])


def half_sample_interval(point: float, values: np.ndarray, scale: float, alpha: float) -> tuple[float, float]:
    """The m-out-of-n (half-sampling) interval of a statistic refit on subsamples without replacement.

    ``point`` is the statistic on all n items (theta_n), ``values`` its refits on m-item subsamples
    (theta*_m), ``scale`` = sqrt(m / (n - m)) (:func:`half_sample_scale`).

    Why that scale: for a statistic that behaves like a mean of the items with variance sigma^2 / n, a
    subsample of m drawn without replacement from the n has, given the n, Var(theta*_m) =
    (sigma^2 / m)(1 - m / n) = sigma^2 (n - m) / (m n) (the finite-population correction), so
    sqrt(m / (n - m)) (theta*_m - centre) spreads like theta_n - theta. This is the delete-d jackknife
    (d = n - m items left out) of Shao and Wu (1989) for the variance and its histogram (Wu 1990) for the
    distribution; both hold also for non-smooth statistics when the left-out fraction stays away from 0,
    as half-samples do. The sqrt(m / n) of the m-out-of-n bootstrap and of subsampling with m / n -> 0
    (Politis and Romano 1994) is the limit of this factor for small m / n; at m = n / 2 the factor is 1,
    and sqrt(m / n) = 0.71 would narrow the interval by 1/sqrt(2) (for a normal statistic, 83% coverage
    at a nominal 95%; 89% measured on Gaussian clusters, where this interval covers 95%).

    Centre: the spread is taken around the refits' median, not around theta_n. The V-measure depends on
    the sample size (on fewer texts a clustering agrees with the labels more by chance), so refits on m
    texts sit systematically away from theta_n; that shift is no sampling error of theta_n, and keeping it
    would move the interval off its own point. With q_lo, q_hi the alpha/2 and 1 - alpha/2 quantiles of
    theta*_m - median(theta*_m), the interval is [theta_n - scale q_hi, theta_n - scale q_lo] (the basic
    form, reflected as the root theta_n - theta requires); q_lo <= 0 <= q_hi, so it holds theta_n.

    It covers the expected statistic on sets of n texts with the same label counts drawn from the same
    population (tests/test_verdicts.py checks the coverage on Gaussian clusters).
    """
    low, high = interval(values - np.median(values), alpha)
    return point - scale * high, point - scale * low


@dataclass
class SuiteIntervals:
    """Bootstrap results of the local suite tasks.

    Attributes:
        scores: task -> model -> ``{value, low, high}`` (the statistic on all items and its interval).
        deltas: (a, b) -> task -> ``{delta, low, high}``: the difference b - a of the statistic on all
            items and its interval, from the same resamples (half-samples) of both models.
        resamples: Draws per task.
        half_samples: Clustering tasks -> the number of half-samples (their intervals are
            :func:`half_sample_interval`'s, the others percentile intervals).
    """

    scores: dict[str, dict[str, dict[str, float]]]
    deltas: dict[tuple[str, str], dict[str, dict[str, float]]]
    resamples: int
    half_samples: dict[str, int] = field(default_factory=dict)


@dataclass
class ModelDraws:
    """One model's statistic per task: on all items, and on each resample (half-sample).

    ``scales``: the tasks drawn as half-samples -> :func:`half_sample_scale`.
    """

    points: dict[str, float] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    scales: dict[str, float] = field(default_factory=dict)

    def add(self, statistic: ItemStatistic, count: int, seed: int) -> None:
        """Evaluate ``statistic`` on all items and on ``count`` resamples of them (at most
        ``HALF_SAMPLES`` half-samples where it has strata); the draws depend only on the items and
        ``seed``, so every model gets the same ones."""
        task = statistic.task
        self.points[task] = statistic.value(np.arange(statistic.items))
        if statistic.strata is None:
            self.values[task] = bootstrap_values(statistic, resamples(statistic.items, count, seed))
            return
        rows = half_samples(statistic.strata, min(count, HALF_SAMPLES), seed)
        self.values[task] = bootstrap_values(statistic, rows)
        self.scales[task] = half_sample_scale(statistic.items, rows.shape[1])

    def interval(self, task: str, point: float, values: np.ndarray, alpha: float) -> tuple[float, float]:
        """The interval of a task's statistic (or of a paired difference) from its draws ``values``."""
        if task in self.scales:
            return half_sample_interval(point, values, self.scales[task], alpha)
        return interval(values, alpha)


def model_encoder(
    model: Any, task_type: str, policy: dict[str, str], batch_size: int, name: str = ""
) -> Encode:
    """Encode like the mteb run: the policy's prompt for the task type, else the model's role prompt
    (its own, or its family's defaults by ``name``, as in :func:`skadapt.tasks.runner.role_prompts`)."""
    from skadapt.tasks.runner import role_prompts

    own = role_prompts(model.prompts or {}, name)

    def encode(texts: list[str], role: str | None) -> np.ndarray:
        prompt = policy.get(task_type) or (own.get(role, "") if role else "")
        routed = {"task": role} if role else {}  # as encode_query/encode_document, which mteb calls
        embeddings = model.encode(
            list(texts), prompt=prompt, batch_size=batch_size, show_progress_bar=False, **routed
        )
        return np.asarray(embeddings, dtype=np.float64)

    return encode


def model_draws(
    model: Any,
    suites: list[Suite],
    *,
    policy: dict[str, str],
    count: int,
    seed: int = 42,
    batch_size: int = 32,
    name: str = "",
) -> ModelDraws:
    """Every local task's statistic for one loaded model, on all items and on ``count`` resamples
    (:meth:`ModelDraws.add`); every model gets the same resamples, so differences between models are
    paired."""
    draws = ModelDraws()
    for suite in suites:
        for spec in suite.tasks:
            encode = model_encoder(model, spec.type, policy, batch_size, name)
            draws.add(item_statistic(spec, suite, encode, seed), count, seed)
    return draws


def combine(
    draws: dict[str, ModelDraws],
    *,
    count: int,
    alpha: float = 0.05,
    pairs: list[tuple[str, str]] | None = None,
) -> SuiteIntervals:
    """Intervals per model and task, and paired intervals of the differences of ``pairs`` (default:
    consecutive models), each with its point: the statistic (difference) on all items."""
    scores: dict[str, dict[str, dict[str, float]]] = {}
    deltas: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    labels = list(draws)
    for label in labels:
        model = draws[label]
        for task, values in model.values.items():
            point = model.points[task]
            low, high = model.interval(task, point, values, alpha)
            scores.setdefault(task, {})[label] = {"value": point, "low": low, "high": high}
    for a, b in pairs if pairs is not None else pairwise(labels):
        if a not in draws or b not in draws:
            continue
        for task in draws[a].values:
            delta = draws[b].points[task] - draws[a].points[task]
            diffs = draws[b].values[task] - draws[a].values[task]
            low, high = draws[a].interval(task, delta, diffs, alpha)
            deltas.setdefault((a, b), {})[task] = {"delta": delta, "low": low, "high": high}
    half = {task: len(values) for model in draws.values() for task, values in model.values.items()}
    scaled = {task for model in draws.values() for task in model.scales}
    return SuiteIntervals(scores, deltas, count, {task: half[task] for task in scaled})


def suite_intervals(
    models: dict[str, str],
    suites: list[Suite],
    *,
    policy: dict[str, str],
    count: int,
    alpha: float = 0.05,
    seed: int = 42,
    batch_size: int = 32,
) -> SuiteIntervals:
    """Load each model (label -> path) and bootstrap every local task; see :func:`model_draws`."""
    from skadapt.tasks.backends import load_sentence_model

    draws = {
        label: model_draws(
            load_sentence_model(path),
            suites,
            policy=policy,
            count=count,
            seed=seed,
            batch_size=batch_size,
            name=path,
        )
        for label, path in models.items()
    }
    return combine(draws, count=count, alpha=alpha)


def experiment_deltas(
    scores: list[Any],
    *,
    count: int,
    alpha: float = 0.05,
    seed: int = 42,
    pairs: list[tuple[str, str]] | None = None,
) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
    """Paired intervals of the models' differences (``pairs``, default: consecutive models) from mteb's
    per-experiment scores.

    For tasks where mteb keeps repeated experiments (``TaskScore.experiments``: classification train-set
    draws, clustering bootstrap clusterings — the same draws for every model), the per-experiment
    differences b - a are resampled ``count`` times (seeded) and their mean's percentile interval is
    returned: (a, b) -> task -> ``{delta, low, high}`` with ``delta`` the mean of the differences (mteb's
    main score is the mean of its experiments: the difference of the main scores, up to their rounding).
    """
    by_model: dict[str, dict[str, Any]] = {}
    for score in scores:
        by_model.setdefault(score.model, {})[score.task] = score
    deltas: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for a, b in pairs if pairs is not None else pairwise(by_model):
        for task, first in by_model.get(a, {}).items():
            second = by_model.get(b, {}).get(task)
            if second is None or not first.experiments or not second.experiments:
                continue
            if len(first.experiments) != len(second.experiments):
                continue
            diffs = np.asarray(second.experiments) - np.asarray(first.experiments)
            draws = resamples(len(diffs), count, seed)
            low, high = interval(diffs[draws].mean(axis=1), alpha)
            deltas.setdefault((a, b), {})[task] = {
                "delta": float(diffs.mean()),
                "low": low,
                "high": high,
            }
    return deltas
