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

import hashlib
import logging
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skadapt import artifacts
from skadapt.paths import cache_path
from skadapt.tasks.contamination import overlapping_rows
from skadapt.train.config import PAIRS_SUFFIX
from skadapt.train.datasets import TaskDataset
from skadapt.train.loading import load_model
from skadapt.train.mining import Mined, draw_random, mine, sequence_length

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from skadapt.train.negatives_config import HardNegativesConfig

log = logging.getLogger(__name__)

NEGATIVES_VERSION = 1
"""Bump when the meaning of cached mined sets changes."""
SAMPLE_SIZE = 3
SAMPLE_CHARS = 200


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
    """What identifies a model for the cache: a local directory's contents (wherever it lies), else the
    Hub id with the commit its main branch is at (None when it cannot be told)."""
    from skadapt.sources.commits import model_commit

    path = Path(ref)
    if path.exists():
        return {"files": artifacts.path_fingerprint(path)}
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
    from skadapt.sources import corpus_texts

    texts = [text for text in corpus_texts(config.corpus) if text.strip()]
    keep, _ = overlapping_rows({"corpus": [(text,) for text in texts]}, test_texts)
    kept = [text for text, ok in zip(texts, keep["corpus"], strict=True) if ok]
    dropped = len(texts) - len(kept)
    return kept, {"source": config.corpus.source, "texts": len(kept), "dropped_eval_overlap": dropped}


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
    from skadapt.model_sources import HUB_ID, resolve_model
    from skadapt.prompts import model_prompts, role_prompt
    from skadapt.sources.commits import model_at_commit

    ref = resolve_model(config.model)
    if ref == config.model and HUB_ID.fullmatch(ref) and not Path(ref).exists():  # mined at one commit
        ref = model_at_commit(ref)[1] or ref
    model = load_model(ref)
    own = model_prompts(model.prompts, config.model)
    return model, ref, (role_prompt(own, "query"), role_prompt(own, "document"))
