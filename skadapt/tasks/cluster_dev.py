"""The clustering dev set: mteb's clustering score on labelled texts, as a sentence-transformers evaluator.

mteb's clustering tasks (``AbsTaskClustering``: the evaluation's Clustering type, such as
SIB200ClusteringS2S and the local suites' Clustering tasks) score a model so: the texts are encoded once;
then :data:`EXPERIMENTS` times a draw of the texts with replacement (one ``random.Random(seed)`` for all
the draws, ``choices`` of as many texts as the set has, as the local suites' tasks draw; an mteb Hub task
draws 16,384) is clustered by ``MiniBatchKMeans`` (k = the number of distinct labels of the whole set,
batch 512, k-means++, one init, ``random_state=seed``) and the V-measure of the draw's clusters against its
gold labels taken; the main score is the mean over the experiments. This evaluator does the same on a dev
set's texts with the set's ``seed`` (mteb's task seed, 42, by default), so that a dev score moves as the
test score does.

One difference in form, not in value: each experiment's k-means, fitted on its draw, then assigns *every*
dev text to its nearest centre (``predict``); the draw's clusters are its texts' assignments, which is what
mteb's ``fit_predict`` gives. Every text's cluster in every experiment is what the dev scores keep per
example (:mod:`skadapt.tasks.dev_scores`): their bootstrap resamples the texts and scores each
experiment's draw of the resample with the experiments' clusterings held fixed
(:func:`replicate_v_measures`), so that the identity resample gives the evaluator's score exactly.

Texts carry the query prompt, as the other symmetric dev sets do (and as the demo's evaluation encodes
Clustering).
"""

from __future__ import annotations

import functools
import logging
import random
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

EXPERIMENTS = 10
"""Clusterings averaged (mteb's ``AbsTaskClustering.n_clusters``)."""
KMEANS_BATCH = 512
"""MiniBatchKMeans batch size (mteb's ``k_mean_batch_size``)."""
CELLS_PER_CHUNK = 4_000_000
"""Drawn texts (or contingency cells) scored at once by :func:`replicate_v_measures` (bounds the arrays
held)."""


def label_codes(labels: Sequence[Any]) -> tuple[list[str], np.ndarray]:
    """The distinct labels (sorted, as text) and each example's index among them."""
    names, codes = np.unique(np.asarray([str(label) for label in labels]), return_inverse=True)
    return [str(name) for name in names], codes.astype(np.int64)


def draws(size: int, seed: int, experiments: int = EXPERIMENTS) -> np.ndarray:
    """mteb's draws of a set of ``size`` texts: ``experiments`` rows of ``size`` indices drawn with
    replacement by one ``random.Random(seed)``."""
    rng = random.Random(seed)
    return np.asarray([rng.choices(range(size), k=size) for _ in range(experiments)], dtype=np.int64)


def assignments(embeddings: np.ndarray, clusters: int, drawn: np.ndarray, seed: int) -> np.ndarray:
    """Each text's cluster in each experiment: column ``e`` is the k-means fitted on draw ``drawn[e]``
    assigning every row of ``embeddings`` (as float32, what a model's ``encode`` gives)."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.exceptions import ConvergenceWarning

    x = np.asarray(embeddings, dtype=np.float32)
    out = np.empty((len(x), len(drawn)), dtype=np.int64)
    for experiment, draw in enumerate(drawn):
        model = MiniBatchKMeans(
            n_clusters=clusters,
            batch_size=KMEANS_BATCH,
            init="k-means++",
            n_init=1,
            random_state=seed,
        )
        with warnings.catch_warnings():  # a draw with fewer distinct texts than clusters: as mteb, go on
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x[draw])
        out[:, experiment] = model.predict(x)
    return out


def v_measures(gold: np.ndarray, assigned: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """Each experiment's V-measure: its draw's gold labels against their clusters (sklearn's
    ``v_measure_score``, as mteb computes it)."""
    from sklearn.metrics import v_measure_score

    return np.asarray(
        [v_measure_score(gold[draw], assigned[draw, e]) for e, draw in enumerate(drawn)], dtype=np.float64
    )


def _entropy(counts: np.ndarray, total: int) -> np.ndarray:
    from scipy.special import xlogy

    p = counts / total
    return -xlogy(p, p).sum(axis=1)


def v_measure_rows(gold: np.ndarray, assigned: np.ndarray, classes: int, clusters: int) -> np.ndarray:
    """The V-measure of each row of ``gold`` (label codes below ``classes``) against the same row of
    ``assigned`` (cluster codes below ``clusters``), with sklearn's conventions (a row of one class and one
    cluster scores 1; one class and several clusters, or the reverse, 0)."""
    rows, size = gold.shape
    cells = classes * clusters
    codes = gold * clusters + assigned + (np.arange(rows) * cells)[:, None]
    table = np.bincount(codes.ravel(), minlength=rows * cells).reshape(rows, classes, clusters)
    table = table.astype(np.float64)
    h_class = _entropy(table.sum(axis=2), size)
    h_cluster = _entropy(table.sum(axis=1), size)
    mutual = np.maximum(h_class + h_cluster - _entropy(table.reshape(rows, cells), size), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        homogeneity = np.where(h_class > 0, mutual / h_class, 1.0)
        completeness = np.where(h_cluster > 0, mutual / h_cluster, 1.0)
        total = homogeneity + completeness
        return np.where(total > 0, 2.0 * homogeneity * completeness / total, 0.0)


def replicate_v_measures(
    gold: np.ndarray, assigned: np.ndarray, drawn: np.ndarray, indices: np.ndarray
) -> np.ndarray:
    """The clustering score of each resample (a row of ``indices``): each experiment's draw applied to the
    resample (the texts mteb would have drawn, had the dev set been the resample), scored against the
    clusters the experiment's fixed k-means gave those texts; the mean over the experiments. The identity
    resample gives :func:`v_measures`' mean. A draw of a resample repeats texts more than a draw of the
    set, and V-measure runs higher on repeated texts, so the replicates sit a little above the set's score
    (a few hundredths on 2,000 texts of 20 labels); the paired bootstrap compares candidates on the same
    resamples, where that shift is common to both."""
    experiments, size = drawn.shape
    classes, clusters = int(gold.max()) + 1, int(assigned.max()) + 1
    chunk = max(1, CELLS_PER_CHUNK // (experiments * max(size, classes * clusters)))
    column = np.arange(experiments)[None, :, None]
    out = np.empty(len(indices))
    for start in range(0, len(indices), chunk):
        texts = indices[start : start + chunk][:, drawn]  # (resamples, experiments, size)
        rows = v_measure_rows(
            gold[texts].reshape(-1, size), assigned[texts, column].reshape(-1, size), classes, clusters
        )
        out[start : start + chunk] = rows.reshape(len(texts), experiments).mean(axis=1)
    return out


@functools.cache
def cluster_evaluator() -> type:
    """``ClusteringDevEvaluator``: a sentence-transformers evaluator of the clustering dev set (built
    lazily: sentence-transformers is imported only when a dev set is built)."""
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator

    from skadapt.tasks.encode_once import encode_distinct

    class ClusteringDevEvaluator(SentenceEvaluator):
        """mteb's clustering score of ``texts`` (with their prompt) against ``labels`` (primary metric
        ``v_measure``; also ``v_measure_std`` over the experiments).

        Attributes:
            texts: The texts as encoded.
            label_names: The distinct labels, sorted.
            labels: Each text's index in ``label_names``.
            seed: Seed of the draws and the k-means.
            draws: The experiments' draws (rows of text indices).
        """

        def __init__(
            self, texts: list[str], labels: Sequence[Any], batch_size: int, name: str, seed: int = 42
        ) -> None:
            super().__init__()
            if len(texts) != len(labels):
                raise ValueError("clustering dev set: one label per text")
            self.texts = list(texts)
            self.label_names, self.labels = label_codes(labels)
            self.batch_size, self.name, self.seed = batch_size, name, seed
            self.draws = draws(len(self.texts), seed)
            self.primary_metric = "v_measure"

        def __call__(
            self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
        ) -> dict[str, float]:
            embeddings = encode_distinct(model.encode, self.texts, self.batch_size)
            assigned = assignments(embeddings, len(self.label_names), self.draws, self.seed)
            scores = v_measures(self.labels, assigned, self.draws)
            metrics = {"v_measure": float(np.mean(scores)), "v_measure_std": float(np.std(scores))}
            log.info("clustering dev set %s: V-measure %.4f", self.name, metrics["v_measure"])
            metrics = self.prefix_name_to_metrics(metrics, self.name)
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
            return metrics

    return ClusteringDevEvaluator
