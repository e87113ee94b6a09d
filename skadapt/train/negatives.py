"""Hard negatives for ``pairs`` datasets: mined (sentence-transformers' ``util.mine_hard_negatives``) or
drawn at random from the same corpus (SkMTEB's construction, for comparison), cached on disk.

The candidates are the dataset's own positives plus, with ``corpus``, the texts of a source (those that
are evaluation test texts, compared as the contamination check compares, are left out first). A mined
set is cached in ``$SKADAPT_CACHE/negatives`` under a key made of the mining model's identity (its files'
fingerprint, or a Hub id's commit), the prompts and training length it encodes with, a fingerprint of
the pairs and of the candidates, the seed and every mining option; a rerun with the same key reads it
back instead of mining again.

Besides the negatives, the report says how the candidates went, as ``mine_hard_negatives`` filters them
(its own counters are only printed): of the ``ranked`` candidates (per anchor the best
``range_max`` + its positives, by cosine similarity on the mining model's embeddings) how many were the
anchor's own ``positive``, how many the ``margin`` (positive-aware, absolute then relative) and
``max_score`` rules removed, how many fell ``out_of_range`` (the first ``range_min`` of those left, and
those beyond ``range_max``), and how many were ``eligible``. Pairs whose anchor has fewer eligible
candidates than ``num_negatives`` keep training as pairs, in the dataset ``<name>_pairs``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import random
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skadapt import artifacts
from skadapt.paths import cache_path
from skadapt.tasks.contamination import overlapping_rows
from skadapt.train.config import PAIRS_SUFFIX
from skadapt.train.datasets import TaskDataset

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.train.negatives_config import HardNegativesConfig

log = logging.getLogger(__name__)

NEGATIVES_VERSION = 1
"""Bump when the meaning of cached mined sets changes."""
SAMPLE_SIZE = 3
SAMPLE_CHARS = 200
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


def cache_dir() -> Path:
    """Where mined sets are cached: ``$SKADAPT_CACHE/negatives``."""
    return cache_path("negatives")


def negative_columns(count: int) -> list[str]:
    """The training columns of ``count`` negatives: ``negative``, or ``negative_1`` ... ``negative_N``."""
    return ["negative"] if count == 1 else [f"negative_{i}" for i in range(1, count + 1)]


def text_digest(texts: Iterator[str] | list[str]) -> str:
    """sha256 over a sequence of texts (each length-prefixed, so boundaries count)."""
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def model_identity(ref: str) -> dict[str, Any]:
    """What identifies a model for the cache: a local directory's files (names, sizes, times), else the
    Hub id with the commit its main branch is at (None when it cannot be told)."""
    from skadapt.sources.commits import model_commit

    path = Path(ref)
    if path.exists():
        return {"path": str(path.resolve()), "files": artifacts.path_fingerprint(path)}
    return {"hub": ref, "commit": model_commit(ref).commit}


def read_corpus(
    config: HardNegativesConfig, test_texts: dict[str, list[str]]
) -> tuple[list[str], dict[str, Any]]:
    """The texts of ``config.corpus`` (none without one), less blanks and evaluation test texts.

    Returns:
        The texts, and their report (``source``, ``texts`` kept, ``dropped_eval_overlap``).
    """
    if config.corpus is None:
        return [], {"source": "positives", "texts": 0, "dropped_eval_overlap": 0}
    from skadapt.sources import iter_texts

    texts = [
        text
        for text in iter_texts(config.corpus, config.corpus_column, max_documents=config.corpus_max_texts)
        if text.strip()
    ]
    keep, _ = overlapping_rows({"corpus": [(text,) for text in texts]}, test_texts)
    kept = [text for text, ok in zip(texts, keep["corpus"], strict=True) if ok]
    return kept, {"source": config.corpus, "texts": len(kept), "dropped_eval_overlap": len(texts) - len(kept)}


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


def load_cached(key: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]] | None:
    """A cached mined set (negatives, scores, report), or None when absent or unreadable."""
    report = artifacts.read_json(cache_dir() / f"{key}.json")
    path = cache_dir() / f"{key}.npz"
    if not isinstance(report, dict) or not path.is_file():
        return None
    try:
        with np.load(path) as data:
            return data["negatives"].copy(), data["scores"].copy(), report
    except (OSError, ValueError, KeyError):
        return None


def save_cached(key: str, mined: Mined) -> Path:
    """Store a mined set atomically (temp file + rename); returns the ``.npz`` path."""
    import os
    import uuid

    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{key}.npz"
    tmp = directory / f".{key}.tmp-{uuid.uuid4().hex[:8]}.npz"
    np.savez_compressed(tmp, negatives=mined.negatives, scores=mined.scores)
    os.replace(tmp, path)
    artifacts.write_json(directory / f"{key}.json", mined.report)
    return path


def mining_key(parts: dict[str, Any]) -> str:
    """Stable key of everything that determines a mined set."""
    return artifacts.hash_json({"version": NEGATIVES_VERSION, **parts})


def negatives_for(
    dataset: TaskDataset,
    config: HardNegativesConfig,
    *,
    model: SentenceTransformer | None,
    model_ref: str | None,
    prompts: tuple[str, str],
    max_seq_length: int,
    seed: int,
    test_texts: dict[str, list[str]],
) -> tuple[Mined, bool, float]:
    """The dataset's negatives, from the cache when its key matches, else mined (or drawn) and cached.

    Args:
        dataset: A built pairs dataset (columns anchor, positive).
        config: Its ``hard_negatives`` options.
        model: The mining model (None for ``random_same_domain``).
        model_ref: What identifies it (a directory or Hub id).
        prompts: Query and document prompts the mining model encodes with.
        max_seq_length: Tokens the mining model encodes at most (the training length).
        seed: The run's seed.
        test_texts: Evaluation test texts; corpus texts among them are never candidates.

    Returns:
        The mined set, whether it came from the cache, and the seconds it took.
    """
    started = time.perf_counter()
    anchors, positives = dataset.data["anchor"], dataset.data["positive"]
    corpus, corpus_report = read_corpus(config, test_texts)
    candidates = list(dict.fromkeys(corpus + positives))
    mining = config.strategy == "mined"
    key = mining_key(
        {
            "strategy": config.strategy,
            "options": config.model_dump(mode="json", exclude={"model", "corpus", "batch_size"}),
            "model": model_identity(model_ref) if mining and model_ref else None,
            "prompts": list(prompts) if mining else None,
            "max_seq_length": max_seq_length if mining else None,
            "pairs": text_digest(text for pair in zip(anchors, positives, strict=True) for text in pair),
            "candidates": text_digest(candidates),
            "seed": seed,
        }
    )
    cached = load_cached(key)
    if cached is not None:
        negatives, scores, report = cached
        mined = Mined(negatives, scores, candidates, report)
        return mined, True, time.perf_counter() - started
    if mining:
        assert model is not None
        with sequence_length(model, max_seq_length):
            mined = mine(anchors, positives, corpus, config, model, prompts=prompts, seed=seed)
    else:
        mined = draw_random(anchors, positives, corpus, config, seed=seed)
    mined.report = {"key": key, "corpus": corpus_report, **mined.report}
    save_cached(key, mined)
    return mined, False, time.perf_counter() - started


def with_negatives(
    dataset: TaskDataset, mined: Mined, config: HardNegativesConfig, summary: dict[str, Any]
) -> list[TaskDataset]:
    """The dataset with its negatives (triplets or n-tuples), and its pairs without negatives as
    ``<name>_pairs`` when there are any; ``summary`` goes to the first one's ``stats["hard_negatives"]``
    (when no pair got negatives, the dataset stays as it is, with the summary)."""
    columns = negative_columns(config.num_negatives)
    has = (mined.negatives >= 0).all(axis=1)
    rows = np.flatnonzero(has)
    if not len(rows):
        dataset.stats = {**dataset.stats, "hard_negatives": summary}
        return [dataset]
    data: dict[str, list[Any]] = {
        "anchor": [dataset.data["anchor"][i] for i in rows],
        "positive": [dataset.data["positive"][i] for i in rows],
    }
    for j, column in enumerate(columns):
        data[column] = [mined.candidates[mined.negatives[i, j]] for i in rows]
    document = dataset.prompts.get("positive", "")
    stats = {**dataset.stats, "examples": len(rows), "hard_negatives": summary}
    parts = [
        TaskDataset(
            dataset.name,
            dataset.kind,
            dataset.loss,
            list(data),
            data,
            {**dataset.prompts, **dict.fromkeys(columns, document)},
            stats,
            entry=dataset.entry,
        )
    ]
    rest = np.flatnonzero(~has)
    if len(rest):
        pairs = {c: [dataset.data[c][i] for i in rest] for c in ("anchor", "positive")}
        parts.append(
            TaskDataset(
                dataset.name + PAIRS_SUFFIX,
                dataset.kind,
                dataset.loss,
                ["anchor", "positive"],
                pairs,
                {c: dataset.prompts.get(c, "") for c in ("anchor", "positive")},
                {"examples": len(rest)},
                entry=dataset.entry,
            )
        )
    return [part for part in parts if len(part)]


def summarize(
    mined: Mined, config: HardNegativesConfig, *, model: str | None, cached: bool, seconds: float, seed: int
) -> dict[str, Any]:
    """The report of one dataset's negatives: the mining report, what trains, and a sample of the sets."""
    has = (mined.negatives >= 0).all(axis=1)
    rows = [int(i) for i in np.flatnonzero(has)]
    sample = sorted(random.Random(seed).sample(rows, min(SAMPLE_SIZE, len(rows))))
    return {
        "strategy": config.strategy,
        "model": model,
        "cached": cached,
        "seconds": round(seconds, 3),
        **mined.report,
        "pairs": len(has),
        "pairs_with_negatives": int(has.sum()),
        "pairs_without_negatives": int((~has).sum()),
        "negatives": int(has.sum()) * config.num_negatives,
        "sample_rows": sample,
    }


def sample_sets(dataset: TaskDataset, mined: Mined, rows: list[int]) -> list[dict[str, Any]]:
    """The mined sets of ``rows``: texts cut to ``SAMPLE_CHARS`` and the similarities (when mined)."""

    def cut(text: str) -> str:
        return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"

    sets = []
    for row in rows:
        scores = [round(float(s), 4) for s in mined.scores[row]]
        entry: dict[str, Any] = {
            "anchor": cut(dataset.data["anchor"][row]),
            "positive": cut(dataset.data["positive"][row]),
            "negatives": [cut(mined.candidates[i]) for i in mined.negatives[row]],
        }
        if not any(np.isnan(mined.scores[row])):
            entry["scores"] = {"positive": scores[0], "negatives": scores[1:]}
        sets.append(entry)
    return sets


def report_line(name: str, summary: dict[str, Any]) -> str:
    """One line on a dataset's negatives for the console."""
    removed = ", ".join(f"{n:,} {rule}" for rule, n in summary.get("removed", {}).items())
    source = "cached" if summary["cached"] else f"{summary['seconds']:.1f}s"
    return (
        f"{summary['strategy']} negatives for {summary['pairs_with_negatives']:,} of {summary['pairs']:,} "
        f"pairs ({source}); of {summary['ranked']:,} ranked candidates removed: {removed}; "
        f"{summary['pairs_without_negatives']:,} pairs train without negatives ({name}{PAIRS_SUFFIX})"
    )


def add_hard_negatives(
    dataset: TaskDataset,
    config: HardNegativesConfig,
    *,
    starting_model: SentenceTransformer,
    starting_ref: str,
    max_seq_length: int,
    seed: int,
    test_texts: dict[str, list[str]],
) -> list[TaskDataset]:
    """Give a built pairs dataset its hard negatives (see the module docstring).

    Args:
        dataset: The dataset, prompts resolved (columns anchor, positive).
        config: Its ``hard_negatives`` options.
        starting_model: The model being fine-tuned (the default mining model).
        starting_ref: Its directory or Hub id.
        max_seq_length: The training length (mining encodes at most this many tokens).
        seed: The run's seed.
        test_texts: Evaluation test texts (never candidates from ``corpus``).

    Returns:
        The dataset with negatives, then ``<name>_pairs`` when some pairs got none.
    """
    model, ref = None, None
    prompts = ("", "")
    if config.strategy == "mined":
        model, ref, prompts = _mining_model(dataset, config, starting_model, starting_ref)
    mined, cached, seconds = negatives_for(
        dataset,
        config,
        model=model,
        model_ref=ref,
        prompts=prompts,
        max_seq_length=max_seq_length,
        seed=seed,
        test_texts=test_texts,
    )
    summary = summarize(mined, config, model=ref, cached=cached, seconds=seconds, seed=seed)
    summary["sample"] = sample_sets(dataset, mined, summary.pop("sample_rows"))
    log.info("finetune: dataset %s: %s", dataset.name, report_line(dataset.name, summary))
    if not summary["pairs_with_negatives"]:
        log.warning(
            "finetune: dataset %s: no pair got %d negative(s); relax range_max, the margin or max_score",
            dataset.name,
            config.num_negatives,
        )
    return with_negatives(dataset, mined, config, summary)


def _mining_model(
    dataset: TaskDataset, config: HardNegativesConfig, starting: SentenceTransformer, starting_ref: str
) -> tuple[SentenceTransformer, str, tuple[str, str]]:
    """The mining model, its reference and its (query, document) prompts: the starting model with the
    dataset's own prompts, or the named model with its own."""
    if config.model is None:
        return (
            starting,
            starting_ref,
            (dataset.prompts.get("anchor", ""), dataset.prompts.get("positive", "")),
        )
    from skadapt.model_sources import resolve_model
    from skadapt.prompts import model_prompts, role_prompt
    from skadapt.train.trainer import load_model

    ref = resolve_model(config.model)
    model = load_model(ref)
    own = model_prompts(model.prompts, config.model)
    return model, ref, (role_prompt(own, "query"), role_prompt(own, "document"))
