"""Mining proper: ``sentence_transformers.util.mine_hard_negatives`` with the counts of how its rules
treated the candidates, and SkMTEB's random same-domain draw (see :mod:`skadapt.train.negatives` for the
recipe side: candidates, cache, datasets, report)."""

from __future__ import annotations

import contextlib
import random
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.train.negatives_config import HardNegativesConfig

SCORE_CHUNK_CELLS = 1 << 26
"""Query-candidate similarities held at once (64M floats, 256 MB) while mining and counting."""


@dataclass
class Mined:
    """Negatives per pair of a dataset.

    Attributes:
        negatives: Per input row, indices into ``candidates`` (``-1`` where the row got none).
        scores: Per input row, the positive's and each negative's similarity (NaN where not scored).
        candidates: The candidate texts (the corpus and the positives, de-duplicated in that order).
        report: What was mined and how the candidates went (see the module docstring).
    """

    negatives: np.ndarray
    scores: np.ndarray
    candidates: list[str]
    report: dict[str, Any]


def effective_range_max(config: HardNegativesConfig, max_positives: int) -> int:
    """``range_max``, or the default ``mine_hard_negatives`` derives (see :class:`HardNegativesConfig`)."""
    if config.range_max is not None:
        return config.range_max
    spread = 10 * config.num_negatives if config.uses_margin else config.num_negatives
    return config.range_min + spread + max_positives


@contextlib.contextmanager
def seeded_random(seed: int) -> Iterator[None]:
    """Seed Python's ``random`` (``mine_hard_negatives`` samples with it) and restore its state after."""
    state = random.getstate()
    random.seed(seed)
    try:
        yield
    finally:
        random.setstate(state)


@contextlib.contextmanager
def sequence_length(model: SentenceTransformer, length: int) -> Iterator[None]:
    """Encode with ``length`` tokens at most (the training length), restoring the model's own after."""
    own = model.max_seq_length
    model.max_seq_length = length
    try:
        yield
    finally:
        model.max_seq_length = own


def _query_groups(
    anchors: list[str], positives: list[str], index: dict[str, int]
) -> tuple[list[str], list[list[int]]]:
    """The unique anchors in first-seen order and, per anchor, its positives' candidate indices."""
    groups: dict[str, list[int]] = {}
    for anchor, positive in zip(anchors, positives, strict=True):
        ids = groups.setdefault(anchor, [])
        if index[positive] not in ids:
            ids.append(index[positive])
    return list(groups), list(groups.values())


def rule_counts(
    queries: np.ndarray,
    candidates: np.ndarray,
    positives: list[list[int]],
    config: HardNegativesConfig,
    range_max: int,
) -> dict[str, Any]:
    """How ``mine_hard_negatives`` treats each ranked candidate, counted on its own embeddings.

    Args:
        queries: Normalized embeddings of the unique anchors.
        candidates: Normalized embeddings of the candidates.
        positives: Per anchor, its positives' candidate indices.
        config: The mining options.
        range_max: The effective ``range_max``.

    Returns:
        ``{ranked, removed: {positive, margin, max_score, out_of_range}, eligible, short_anchors}``.
    """
    import torch

    widest = max(len(p) for p in positives)
    k = min(range_max + widest, len(candidates))
    corpus = torch.from_numpy(np.ascontiguousarray(candidates, dtype=np.float32))
    chunk = max(1, SCORE_CHUNK_CELLS // max(1, len(candidates)))
    totals = dict.fromkeys(
        ("ranked", "positive", "margin", "max_score", "out_of_range", "eligible", "short"), 0
    )
    for start in range(0, len(queries), chunk):
        query = torch.from_numpy(np.ascontiguousarray(queries[start : start + chunk], dtype=np.float32))
        scores, index = torch.topk(query @ corpus.T, k=k, dim=1)
        own = torch.full((len(query), widest), -1, dtype=torch.long)
        for row, ids in enumerate(positives[start : start + chunk]):
            own[row, : len(ids)] = torch.tensor(ids)
        is_positive = (index.unsqueeze(2) == own.unsqueeze(1)).any(dim=2)
        gathered = (query.unsqueeze(1) * corpus[own.clamp(min=0)]).sum(-1)
        lowest = gathered.masked_fill(own < 0, float("inf")).min(dim=1, keepdim=True).values
        alive = ~is_positive
        margin = torch.zeros_like(alive)
        if config.absolute_margin is not None:
            margin |= alive & (scores + config.absolute_margin > lowest)
        if config.relative_margin is not None:
            margin |= alive & ~margin & (scores > lowest - lowest.abs() * config.relative_margin)
        alive &= ~margin
        too_high = (
            alive & (scores > config.max_score) if config.max_score is not None else torch.zeros_like(alive)
        )
        alive &= ~too_high
        left = alive.sum(dim=1)
        within = left.clamp(max=range_max)
        eligible = within - within.clamp(max=config.range_min)
        totals["ranked"] += index.numel()
        totals["positive"] += int(is_positive.sum())
        totals["margin"] += int(margin.sum())
        totals["max_score"] += int(too_high.sum())
        totals["out_of_range"] += int((left - eligible).sum())
        totals["eligible"] += int(eligible.sum())
        totals["short"] += int((eligible < config.num_negatives).sum())
    return {
        "ranked": totals["ranked"],
        "removed": {name: totals[name] for name in ("positive", "margin", "max_score", "out_of_range")},
        "eligible": totals["eligible"],
        "short_anchors": totals["short"],
    }


def mine(
    anchors: list[str],
    positives: list[str],
    corpus: list[str],
    config: HardNegativesConfig,
    model: SentenceTransformer,
    *,
    prompts: tuple[str, str],
    seed: int,
) -> Mined:
    """Mine negatives with ``sentence_transformers.util.mine_hard_negatives`` and count its rules.

    Args:
        anchors: The pairs' anchors.
        positives: The pairs' positives.
        corpus: Candidate texts besides the positives.
        config: The mining options.
        model: The mining model (encoding at its current ``max_seq_length``).
        prompts: The query prompt (anchors) and the document prompt (candidates), ``""`` for none.
        seed: Seed of ``sampling: random``.
    """
    import sentence_transformers.util as st_util
    from datasets import Dataset

    candidates = list(dict.fromkeys(corpus + positives))  # mine_hard_negatives' own candidate order
    index = {text: i for i, text in enumerate(candidates)}
    unique, groups = _query_groups(anchors, positives, index)
    range_max = effective_range_max(config, max(len(g) for g in groups))
    with tempfile.TemporaryDirectory() as tmp, seeded_random(seed):
        mined = st_util.mine_hard_negatives(
            Dataset.from_dict({"anchor": anchors, "positive": positives}),
            model,
            anchor_column_name="anchor",
            positive_column_name="positive",
            corpus=corpus or None,
            range_min=config.range_min,
            range_max=range_max,
            max_score=config.max_score,
            absolute_margin=config.absolute_margin,
            relative_margin=config.relative_margin,
            num_negatives=config.num_negatives,
            sampling_strategy=config.sampling,
            query_prompt=prompts[0],
            corpus_prompt=prompts[1],
            output_format="n-tuple",
            output_scores=True,
            batch_size=config.batch_size,
            faiss_batch_size=max(1, SCORE_CHUNK_CELLS // len(candidates)),
            verbose=False,
            cache_folder=tmp,
        )
        [query_file] = Path(tmp).glob("query_embeddings_*.npy")
        [corpus_file] = Path(tmp).glob("corpus_embeddings_*.npy")
        counts = rule_counts(np.load(query_file), np.load(corpus_file), groups, config, range_max)
    found: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    columns = [f"negative_{i}" for i in range(1, config.num_negatives + 1)]
    for row in mined:
        found[row["anchor"], row["positive"]] = ([index[row[c]] for c in columns], list(row["scores"]))
    negatives, scores = _aligned(anchors, positives, found, config.num_negatives)
    report = {"range_max": range_max, "queries": len(unique), "candidates": len(candidates), **counts}
    return Mined(negatives, scores, candidates, report)


def draw_random(
    anchors: list[str], positives: list[str], corpus: list[str], config: HardNegativesConfig, *, seed: int
) -> Mined:
    """SkMTEB's construction: per anchor, ``num_negatives`` candidates drawn uniformly at random (seeded)
    from the corpus and the positives, never one of the anchor's own positives."""
    candidates = list(dict.fromkeys(corpus + positives))
    index = {text: i for i, text in enumerate(candidates)}
    unique, groups = _query_groups(anchors, positives, index)
    rng = random.Random(seed)
    drawn: dict[str, list[int]] = {}
    for anchor, own in zip(unique, groups, strict=True):
        if len(candidates) - len(own) < config.num_negatives:
            continue
        taken: list[int] = []
        while len(taken) < config.num_negatives:
            pick = rng.randrange(len(candidates))
            if pick not in own and pick not in taken:
                taken.append(pick)
        drawn[anchor] = taken
    nan = float("nan")
    found = {
        (a, p): (drawn[a], [nan] * (config.num_negatives + 1))
        for a, p in zip(anchors, positives, strict=True)
        if a in drawn
    }
    negatives, scores = _aligned(anchors, positives, found, config.num_negatives)
    short = len(unique) - len(drawn)
    report = {
        "queries": len(unique),
        "candidates": len(candidates),
        "ranked": len(unique) * len(candidates),
        "removed": {"positive": sum(len(g) for g in groups)},
        "eligible": sum(len(candidates) - len(g) for g in groups),
        "short_anchors": short,
    }
    return Mined(negatives, scores, candidates, report)


def _aligned(
    anchors: list[str],
    positives: list[str],
    found: dict[tuple[str, str], tuple[list[int], list[float]]],
    count: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Negatives and scores per input row (``-1`` / NaN for the rows without negatives)."""
    negatives = np.full((len(anchors), count), -1, dtype=np.int64)
    scores = np.full((len(anchors), count + 1), np.nan, dtype=np.float32)
    for row, pair in enumerate(zip(anchors, positives, strict=True)):
        if pair in found:
            negatives[row], scores[row] = found[pair]
    return negatives, scores
