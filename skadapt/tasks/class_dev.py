"""The classification dev set: mteb's classifier on labelled texts, cross-validated, as an evaluator.

mteb's classification tasks (``AbsTaskClassification``) fit a logistic regression
(``LogisticRegression(max_iter=100, random_state=seed)``, sklearn's defaults otherwise: lbfgs, C=1, on the
embeddings as encoded, unscaled) on the embeddings of a train split and score its accuracy on the test
split. A dev set has one split, so the same classifier is fitted and scored by stratified
:data:`FOLDS`-fold cross-validation over it (``StratifiedKFold(shuffle=True, random_state=seed)``, the set's
``seed``, mteb's task seed 42 by default): every text is predicted once, by the classifier fitted on the
folds without it. The main score is the accuracy of those predictions over the whole set (the mean of the
per-text correctness, which is what the dev scores keep per example, :mod:`skadapt.tasks.dev_scores`; not
the mean of the folds' accuracies, which differs when the folds differ in size). The training folds are not
undersampled as mteb undersamples a train split (``samples_per_label``): the dev score measures how well
the embedding separates the labels, with every dev text used.

Every label needs :data:`FOLDS` texts at least (one per fold; building the set checks it). Texts carry
the query prompt, as the other symmetric dev sets do (and as the demo's evaluation encodes Classification).
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from skadapt.tasks.cluster_dev import label_codes

log = logging.getLogger(__name__)

FOLDS = 5
"""Cross-validation folds (mteb's ``n_splits``)."""
MAX_ITER = 100
"""The logistic regression's iterations (mteb's classifier)."""


def cross_validated(embeddings: np.ndarray, labels: np.ndarray, seed: int) -> np.ndarray:
    """Each text's label as predicted by the classifier fitted on the other folds.

    Args:
        embeddings: One row per text (used as float32, what a model's ``encode`` gives).
        labels: Each text's label code.
        seed: Seed of the folds and the classifier.

    Returns:
        The predicted label codes.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    x = np.asarray(embeddings, dtype=np.float32)
    predicted = np.empty(len(labels), dtype=np.int64)
    splitter = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    for train, test in splitter.split(np.zeros(len(labels)), labels):
        model = LogisticRegression(max_iter=MAX_ITER, random_state=seed)
        with warnings.catch_warnings():  # as mteb: 100 iterations, converged or not
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x[train], labels[train])
        predicted[test] = model.predict(x[test])
    return predicted


@functools.cache
def class_evaluator() -> type:
    """``ClassificationDevEvaluator``: a sentence-transformers evaluator of the classification dev set
    (built lazily: sentence-transformers is imported only when a dev set is built)."""
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator

    from skadapt.tasks.encode_once import encode_distinct

    class ClassificationDevEvaluator(SentenceEvaluator):
        """Cross-validated accuracy of mteb's classifier on ``texts`` (with their prompt) and ``labels``
        (primary metric ``accuracy``; also macro ``f1``).

        Attributes:
            texts: The texts as encoded.
            label_names: The distinct labels, sorted.
            labels: Each text's index in ``label_names``.
            seed: Seed of the folds and the classifier.
        """

        def __init__(
            self, texts: list[str], labels: Sequence[Any], batch_size: int, name: str, seed: int = 42
        ) -> None:
            super().__init__()
            if len(texts) != len(labels):
                raise ValueError("classification dev set: one label per text")
            self.texts = list(texts)
            self.label_names, self.labels = label_codes(labels)
            self.batch_size, self.name, self.seed = batch_size, name, seed
            self.primary_metric = "accuracy"

        def __call__(
            self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
        ) -> dict[str, float]:
            from sklearn.metrics import f1_score

            embeddings = encode_distinct(model.encode, self.texts, self.batch_size)
            predicted = cross_validated(embeddings, self.labels, self.seed)
            metrics = {
                "accuracy": float(np.mean(predicted == self.labels)),
                "f1": float(f1_score(self.labels, predicted, average="macro")),
            }
            log.info("classification dev set %s: accuracy %.4f", self.name, metrics["accuracy"])
            metrics = self.prefix_name_to_metrics(metrics, self.name)
            self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
            return metrics

    return ClassificationDevEvaluator
