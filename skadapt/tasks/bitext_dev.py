"""The bitext dev set: mteb's BitextMining main score on parallel pairs, as a sentence-transformers evaluator.

Each ``sentence1`` is matched to its nearest ``sentence2`` by cosine similarity; the score is the F1 of
those matches against the true pairs, weighted by label support, exactly as mteb's ``AbsTaskBitextMining``
computes its main score (``f1_score(gold, predicted, average="weighted")`` with the gold of pair ``i``
being ``i``). With every pair its own label, the weighted F1 is the mean over pairs of ``2 c_i / (1 + p_i)``,
``c_i`` 1 when pair ``i`` is matched correctly and ``p_i`` the number of sentences matched to ``i``'s
target: a target many sentences collapse onto costs every one of them. Both sides carry the query prompt,
as the other symmetric dev sets do (and as the demo's evaluation encodes bitext mining).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

CHUNK = 256
"""Rows of the similarity matrix (or of resamples) computed at once."""


def nearest(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """For each row of ``first``, the index of the row of ``second`` with the highest cosine similarity."""
    a = first.astype(np.float64) / np.linalg.norm(first, axis=1, keepdims=True)
    b = second.astype(np.float64) / np.linalg.norm(second, axis=1, keepdims=True)
    out = np.empty(len(a), dtype=np.int64)
    for start in range(0, len(a), CHUNK):
        out[start : start + CHUNK] = np.argmax(a[start : start + CHUNK] @ b.T, axis=1)
    return out


def weighted_f1(predicted: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray | float:
    """mteb's BitextMining F1 of the matches ``predicted`` (pair ``i`` matched to target ``predicted[i]``;
    the gold of pair ``i`` is ``i``).

    Args:
        predicted: Per pair, the index of the target it was matched to.
        counts: Optional resamples as counts (rows: resamples, columns: how often each pair was drawn): the
            F1 of each resample, the drawn pairs repeated as drawn (a pair drawn twice is two gold labels
            and two predictions), as ``sklearn.metrics.f1_score(..., average="weighted")`` gives it.

    Returns:
        The F1 (a float), or with ``counts`` one F1 per resample.
    """
    n = len(predicted)
    correct = (predicted == np.arange(n)).astype(np.float64)
    if counts is None:
        predicted_count = np.bincount(predicted, minlength=n).astype(np.float64)
        return float(np.mean(2.0 * correct / (1.0 + predicted_count)))
    out = np.empty(len(counts))
    onehot = np.zeros((n, n))
    onehot[np.arange(n), predicted] = 1.0
    for start in range(0, len(counts), CHUNK):
        drawn = counts[start : start + CHUNK].astype(np.float64)
        predicted_count = drawn @ onehot  # per target, the drawn sentences matched to it
        true_positive = drawn * correct
        denominator = drawn + predicted_count
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(denominator > 0, 2.0 * true_positive / denominator, 0.0)
        out[start : start + CHUNK] = (drawn * f1).sum(axis=1) / drawn.sum(axis=1)
    return out


@functools.cache
def bitext_evaluator() -> type:
    """``BitextMiningEvaluator``: a sentence-transformers evaluator of the bitext dev set (built lazily:
    sentence-transformers is imported only when a dev set is built)."""
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator

    class BitextMiningEvaluator(SentenceEvaluator):
        """Nearest-neighbour matching of ``sentences1`` to ``sentences2`` (texts with their prompt), scored
        with mteb's BitextMining F1 (primary metric ``f1``; also ``accuracy``)."""

        def __init__(self, sentences1: list[str], sentences2: list[str], batch_size: int, name: str) -> None:
            super().__init__()
            if len(sentences1) != len(sentences2):
                raise ValueError("bitext dev set: both sides need as many sentences")
            self.sentences1, self.sentences2 = list(sentences1), list(sentences2)
            self.batch_size, self.name = batch_size, name
            self.primary_metric = "f1"

        def __call__(
            self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
        ) -> dict[str, float]:
            first, second = (
                np.asarray(
                    model.encode(
                        texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
                    ),
                    dtype=np.float32,
                )
                for texts in (self.sentences1, self.sentences2)
            )
            predicted = nearest(first, second)
            metrics = {
                "f1": float(weighted_f1(predicted)),
                "accuracy": float(np.mean(predicted == np.arange(len(predicted)))),
            }
            log.info("bitext dev set %s: F1 %.4f", self.name, metrics["f1"])
            metrics = self.prefix_name_to_metrics(metrics, self.name)
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
            return metrics

    return BitextMiningEvaluator
