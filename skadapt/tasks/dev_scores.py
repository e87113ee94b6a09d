"""Dev sets scored from embeddings: every text encoded once, any map of the embeddings scored per example.

A choice between maps of a model's embedding (renormalization, projection) need not run the dev
evaluators once per candidate: the dev texts are encoded once by the model exactly as each evaluator of
:func:`skadapt.tasks.dev.build_dev_sets` encodes them (``encode`` / ``encode_query`` / ``encode_document``
with its prompts), and a candidate is a function of those embeddings. Each set's main metric is then
computed as its evaluator computes it on the full set:

- sts (``EmbeddingSimilarityEvaluator``): Spearman correlation of the cosines with the gold scores;
- triplets (``TripletEvaluator``): the share of triplets whose positive is closer (cosine) than the negative;
- rte (``BinaryClassificationEvaluator``): average precision of the cosines for entailment;
- retrieval (``InformationRetrievalEvaluator``): mean nDCG@10 over the queries, the corpus ranked by cosine
  with ties broken by corpus id, as the evaluator breaks them;
- bitext (:mod:`skadapt.tasks.bitext_dev`): mteb's BitextMining F1 of each sentence1's nearest sentence2;
- clustering (:mod:`skadapt.tasks.cluster_dev`): mteb's V-measure, the mean over its k-means experiments;
- classification (:mod:`skadapt.tasks.class_dev`): the cross-validated accuracy of mteb's classifier.

What is kept per example: the cosine (sts, rte), 1/0 for a correct triplet, the query's nDCG@10, the index of
the sentence2 each sentence1 is matched to (bitext), 1/0 for a correctly predicted text (classification: the
prediction of the classifier fitted on the other folds, which a resample leaves as it is), and for
clustering the cluster each text is given in each k-means experiment (a row per text, a column per
experiment: V-measure is no mean over texts, but with the clusterings held fixed it can be recomputed on any
resample of the texts; see :func:`skadapt.tasks.cluster_dev.replicate_v_measures`). A resample refits no
k-means and no classifier: its spread is that of the examples scored, not of the fits.

The per-example values also give a **paired bootstrap**: the examples of each set are resampled (the same
resample for every candidate), each set's metric recomputed, and the candidates' mean over the sets
compared with the reference's on the same resample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from skadapt.tasks.encode_once import encode_distinct

Transform = Callable[[np.ndarray], np.ndarray]
NDCG_AT = 10
QUERY_CHUNK = 256
"""Queries ranked at once against the whole corpus (bounds the score matrix held)."""
CONFIDENCE = 0.95
"""Family-wise one-sided confidence that a candidate beats the reference it would replace (Bonferroni over
the candidates): what renormalization and WiSE-FT keep a candidate on."""
REPLICATES = 2000
"""Paired bootstrap resamples of the dev examples."""


@dataclass
class EncodedSet:
    """One dev set's embeddings (by the model, before any candidate map) and what scores them.

    Attributes:
        name: The evaluator's name (``sts-0``, ...).
        kind: ``sts``, ``triplets``, ``rte``, ``retrieval``, ``bitext``, ``clustering`` or
            ``classification``.
        metric: The key of the main score in the evaluator's results.
        embeddings: Role -> embeddings: ``first``/``second`` (sts, rte, bitext pairs),
            ``anchor``/``positive``/``negative`` (triplets), ``query``/``corpus`` (retrieval), ``text``
            (clustering, classification).
        gold: Gold scores (sts) or labels (rte; clustering and classification: label codes).
        relevant: Retrieval: per query, the indices of its relevant corpus texts.
        tie_rank: Retrieval: each corpus text's place in the order of corpus ids (the evaluator's tie-break).
        draws: Clustering: the k-means experiments' draws (rows of text indices).
        seed: Clustering and classification: the seed of the k-means or of the folds and the classifier.
    """

    name: str
    kind: str
    metric: str
    embeddings: dict[str, np.ndarray]
    gold: np.ndarray | None = None
    relevant: list[np.ndarray] | None = None
    tie_rank: np.ndarray | None = None
    draws: np.ndarray | None = None
    seed: int = 42

    @property
    def size(self) -> int:
        """Examples scored: pairs, triplets, queries or texts."""
        first = next(iter(self.embeddings.values()))
        return len(first)


def encode_dev_set(model: Any, dev_set: Any, batch_size: int = 32) -> EncodedSet:
    """Encode a built dev set (:class:`skadapt.tasks.dev.DevSet`) with ``model`` as its evaluator would.

    Raises:
        TypeError: An evaluator of another kind.
    """
    from sentence_transformers.sentence_transformer.evaluation import (
        BinaryClassificationEvaluator,
        EmbeddingSimilarityEvaluator,
        InformationRetrievalEvaluator,
        TripletEvaluator,
    )

    from skadapt.tasks.bitext_dev import bitext_evaluator
    from skadapt.tasks.class_dev import class_evaluator
    from skadapt.tasks.cluster_dev import cluster_evaluator

    ev = dev_set.evaluator
    name, metric = ev.name, dev_set.metric
    for kind, evaluator in (("clustering", cluster_evaluator()), ("classification", class_evaluator())):
        if isinstance(ev, evaluator):
            embeddings = {"text": encode_distinct(model.encode, ev.texts, batch_size)}  # prompt in the texts
            draws = getattr(ev, "draws", None)
            return EncodedSet(name, kind, metric, embeddings, gold=ev.labels, draws=draws, seed=ev.seed)
    if isinstance(ev, bitext_evaluator()):
        first, second = (
            encode_distinct(model.encode, list(s), batch_size) for s in (ev.sentences1, ev.sentences2)
        )
        return EncodedSet(name, "bitext", metric, {"first": first, "second": second})
    if isinstance(ev, EmbeddingSimilarityEvaluator):
        first, second = (
            encode_distinct(model.encode, list(s), batch_size) for s in (ev.sentences1, ev.sentences2)
        )
        gold = np.asarray(ev.scores, dtype=np.float64)
        return EncodedSet(name, "sts", metric, {"first": first, "second": second}, gold=gold)
    if isinstance(ev, TripletEvaluator):
        embeddings = {
            role: encode_distinct(
                model.encode, list(texts), batch_size
            )  # symmetric: the query prompt is in the texts
            for role, texts in (
                ("anchor", ev.anchors),
                ("positive", ev.positives),
                ("negative", ev.negatives),
            )
        }
        return EncodedSet(name, "triplets", metric, embeddings)
    if isinstance(ev, BinaryClassificationEvaluator):
        both = encode_distinct(model.encode, [*ev.sentences1, *ev.sentences2], batch_size)
        count = len(ev.sentences1)
        gold = np.asarray(ev.labels, dtype=np.int64)
        return EncodedSet(name, "rte", metric, {"first": both[:count], "second": both[count:]}, gold=gold)
    if isinstance(ev, InformationRetrievalEvaluator):
        queries = encode_distinct(
            model.encode_query,
            list(ev.queries),
            batch_size,
            prompt_name=ev.query_prompt_name,
            prompt=ev.query_prompt,
        )
        corpus = encode_distinct(
            model.encode_document,
            list(ev.corpus),
            batch_size,
            prompt_name=ev.corpus_prompt_name,
            prompt=ev.corpus_prompt,
        )
        index = {cid: i for i, cid in enumerate(ev.corpus_ids)}
        relevant = [
            np.asarray(sorted(index[c] for c in ev.relevant_docs[q] if c in index), dtype=np.int64)
            for q in ev.queries_ids
        ]
        tie_rank = np.empty(len(ev.corpus_ids), dtype=np.int64)
        order = np.argsort(np.asarray(ev.corpus_ids, dtype=object), kind="stable")
        tie_rank[order] = np.arange(len(tie_rank))
        embeddings = {"query": queries, "corpus": corpus}
        return EncodedSet(name, "retrieval", metric, embeddings, relevant=relevant, tie_rank=tie_rank)
    raise TypeError(f"dev set {name}: no per-example scoring for {type(ev).__name__}")


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return np.sum(a64 * b64, axis=1) / (np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1))


def _unit(x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    return x64 / np.linalg.norm(x64, axis=1, keepdims=True)


def _ndcg(queries: np.ndarray, corpus: np.ndarray, encoded: EncodedSet) -> np.ndarray:
    """nDCG@10 of each query (binary relevance, ties in score broken by corpus id)."""
    assert encoded.relevant is not None and encoded.tie_rank is not None
    q, c = _unit(queries), _unit(corpus)
    discounts = 1.0 / np.log2(np.arange(NDCG_AT) + 2)
    out = np.empty(len(q))
    for start in range(0, len(q), QUERY_CHUNK):
        scores = q[start : start + QUERY_CHUNK] @ c.T
        ties = np.broadcast_to(encoded.tie_rank, scores.shape)
        top = np.lexsort((ties, -scores), axis=-1)[:, :NDCG_AT]
        for row, hits in enumerate(top):
            relevant = encoded.relevant[start + row]
            gains = np.isin(hits, relevant).astype(np.float64)
            ideal = discounts[: min(len(relevant), NDCG_AT)].sum()
            out[start + row] = float(gains @ discounts[: len(gains)]) / ideal if ideal else 0.0
    return out


def example_values(encoded: EncodedSet, transform: Transform | None = None) -> np.ndarray:
    """Per example, what the set's metric is made of after ``transform`` (None: the embeddings as they
    are): the cosine (sts, rte), 1/0 for a correct triplet, the query's nDCG@10 (retrieval), the index of
    the sentence2 each sentence1 is matched to (bitext), 1/0 for a correctly predicted text
    (classification), and (clustering) a row per text of its cluster in each k-means experiment."""
    mapped = {role: (e if transform is None else transform(e)) for role, e in encoded.embeddings.items()}
    if encoded.kind == "clustering":
        from skadapt.tasks.cluster_dev import assignments

        assert encoded.gold is not None and encoded.draws is not None
        return assignments(mapped["text"], int(encoded.gold.max()) + 1, encoded.draws, encoded.seed)
    if encoded.kind == "classification":
        from skadapt.tasks.class_dev import cross_validated

        assert encoded.gold is not None
        return (cross_validated(mapped["text"], encoded.gold, encoded.seed) == encoded.gold).astype(
            np.float64
        )
    if encoded.kind == "bitext":
        from skadapt.tasks.bitext_dev import nearest

        return nearest(mapped["first"], mapped["second"])
    if encoded.kind in ("sts", "rte"):
        return _cosine(mapped["first"], mapped["second"])
    if encoded.kind == "triplets":
        return (
            _cosine(mapped["anchor"], mapped["positive"]) > _cosine(mapped["anchor"], mapped["negative"])
        ).astype(np.float64)
    return _ndcg(mapped["query"], mapped["corpus"], encoded)


def set_metric(encoded: EncodedSet, values: np.ndarray) -> float:
    """The set's main metric on all its examples, computed as its evaluator computes it."""
    if encoded.kind == "sts":
        from scipy.stats import spearmanr

        return float(spearmanr(encoded.gold, values)[0])
    if encoded.kind == "rte":
        from sklearn.metrics import average_precision_score

        return float(average_precision_score(encoded.gold, values))
    if encoded.kind == "bitext":
        from skadapt.tasks.bitext_dev import weighted_f1

        return float(weighted_f1(values))
    if encoded.kind == "clustering":
        from skadapt.tasks.cluster_dev import v_measures

        assert encoded.gold is not None and encoded.draws is not None
        return float(np.mean(v_measures(encoded.gold, values, encoded.draws)))
    return float(np.mean(values))


def _rank_rows(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x, axis=1)


def replicate_metrics(encoded: EncodedSet, values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The set's metric on each resample (a row of ``indices``); NaN where it is undefined (a constant
    resample, one class only)."""
    if encoded.kind in ("triplets", "retrieval", "classification"):
        return values[indices].mean(axis=1)
    if encoded.kind == "clustering":  # each experiment's draw of the resample, its clustering held fixed
        from skadapt.tasks.cluster_dev import replicate_v_measures

        assert encoded.gold is not None and encoded.draws is not None
        return replicate_v_measures(encoded.gold, values, encoded.draws, indices)
    if encoded.kind == "bitext":  # the resampled pairs as drawn: gold labels and matches repeated
        from skadapt.tasks.bitext_dev import weighted_f1

        replicates, n = indices.shape
        offsets = (indices + n * np.arange(replicates)[:, None]).ravel()
        counts = np.bincount(offsets, minlength=replicates * n).reshape(replicates, n)
        return np.asarray(weighted_f1(values, counts))
    assert encoded.gold is not None
    if encoded.kind == "sts":
        a, b = _rank_rows(values[indices]), _rank_rows(encoded.gold[indices])
        a -= a.mean(axis=1, keepdims=True)
        b -= b.mean(axis=1, keepdims=True)
        denominator = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denominator > 0, (a * b).sum(axis=1) / denominator, np.nan)
    from sklearn.metrics import average_precision_score

    out = np.full(len(indices), np.nan)
    for row, sample in enumerate(indices):
        labels = encoded.gold[sample]
        if 0 < labels.sum() < len(labels):
            out[row] = average_precision_score(labels, values[sample])
    return out


def resamples(sets: list[EncodedSet], replicates: int, seed: int) -> list[np.ndarray]:
    """Per set, ``replicates`` resamples of its example indices (with replacement), seeded."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, s.size, size=(replicates, s.size)) for s in sets]


@dataclass
class Scored:
    """A candidate's dev scores: per set on all examples, their mean, and the mean on each resample."""

    scores: dict[str, float]
    mean: float
    replicates: np.ndarray


def score_candidate(sets: list[EncodedSet], transform: Transform | None, indices: list[np.ndarray]) -> Scored:
    """Score ``transform`` on every set (see :func:`example_values`) and on the shared ``indices``."""
    scores: dict[str, float] = {}
    per_set = []
    for encoded, sample in zip(sets, indices, strict=True):
        values = example_values(encoded, transform)
        scores[encoded.name] = set_metric(encoded, values)
        per_set.append(replicate_metrics(encoded, values, sample))
    return Scored(scores, float(np.mean(list(scores.values()))), np.mean(per_set, axis=0))


def paired_quantiles(candidate: Scored, reference: Scored, levels: list[float]) -> list[float]:
    """The ``levels`` quantiles of (candidate - reference) over the shared resamples (percentile
    bootstrap): the ``a`` quantile is a one-sided ``1 - a`` lower bound."""
    differences = candidate.replicates - reference.replicates
    return [float(value) for value in np.nanquantile(differences, levels)]


def paired_interval(candidate: Scored, reference: Scored, alpha: float) -> tuple[float, float]:
    """The ``alpha`` and ``1 - alpha`` quantiles of (candidate - reference) over the shared resamples: the
    lower end is a one-sided ``1 - alpha`` bound (percentile bootstrap)."""
    low, high = paired_quantiles(candidate, reference, [alpha, 1 - alpha])
    return low, high
