"""Token counts of a text stream, encoded in batches by worker processes.

Texts are encoded in batches by worker processes (``multiprocessing``); each worker sends back only the
distinct ids of its batch with their counts, and the parent adds them into one count vector of
vocabulary size. Memory is therefore bounded by the vocabulary size and the number of batches in flight,
never by the corpus. Special tokens are not counted (texts are encoded without them).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

import numpy as np

from skadapt.trim.encoder import load_tokenizer, special_ids

ProgressHook = Callable[[int, int], None]
"""Called with (documents, bytes) done so far."""

BatchHook = Callable[[list[str]], None]
"""Called in the parent process with each batch, in stream order, before it is counted."""

BatchCounts = tuple[np.ndarray, np.ndarray, int, int]
"""Distinct token ids of a batch, their counts, the batch's texts and UTF-8 bytes."""


def _batch_counts(tokenizer: Any, texts: list[str]) -> BatchCounts:
    """Distinct non-special token ids of a batch with their counts, and the batch size in texts and bytes.

    Bytes are measured here, in the worker, so the parent process only moves batches.
    """
    encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encodings), dtype=np.int64)
    unique, counts = np.unique(ids, return_counts=True)
    return unique, counts, len(texts), sum(len(t.encode("utf-8")) for t in texts)


_WORKER_TOKENIZER: Any = None


def _init_worker(tokenizer_json: str) -> None:
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core per worker process
    global _WORKER_TOKENIZER
    if _WORKER_TOKENIZER is None:  # spawned; a forked worker inherits the parent's parsed tokenizer
        _WORKER_TOKENIZER = load_tokenizer(tokenizer_json)


def _worker_count(texts: list[str]) -> BatchCounts:
    return _batch_counts(_WORKER_TOKENIZER, texts)


def batched(texts: Iterable[str], batch_size: int) -> Iterator[list[str]]:
    """Lists of up to ``batch_size`` texts."""
    iterator = iter(texts)
    while batch := list(itertools.islice(iterator, batch_size)):
        yield batch


def _observed(batches: Iterator[list[str]], on_batch: BatchHook | None) -> Iterator[list[str]]:
    for batch in batches:
        if on_batch is not None:
            on_batch(batch)
        yield batch


def count_texts(
    tokenizer_json: str,
    texts: Iterable[str],
    *,
    batch_size: int = 1000,
    workers: int | None = None,
    on_progress: ProgressHook | None = None,
    on_batch: BatchHook | None = None,
) -> tuple[np.ndarray, int, int]:
    """Count non-special tokens of ``texts``.

    Args:
        tokenizer_json: The serialized fast tokenizer.
        texts: Texts to count (streamed; never held in memory all at once).
        batch_size: Texts per batch sent to a worker.
        workers: Worker processes; ``None`` = all cores, 1 = count in this process.
        on_progress: Called after each batch with (documents, bytes) so far.
        on_batch: Called with each batch before it is counted (e.g. the parity sampler).

    Returns:
        (counts per token id, documents, UTF-8 bytes).
    """
    tokenizer = load_tokenizer(tokenizer_json)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    counts = np.zeros(size, dtype=np.int64)
    documents = size_bytes = 0

    def add(result: BatchCounts) -> None:
        nonlocal documents, size_bytes
        ids, id_counts, batch_documents, batch_bytes = result
        counts[ids] += id_counts
        documents += batch_documents
        size_bytes += batch_bytes
        if on_progress:
            on_progress(documents, size_bytes)

    workers = workers or os.cpu_count() or 1
    batches = _observed(batched(texts, batch_size), on_batch)
    if workers == 1:
        for batch in batches:
            add(_batch_counts(tokenizer, batch))
    else:
        _count_parallel(tokenizer, tokenizer_json, batches, workers, add)
    counts[special_ids(tokenizer)] = 0
    return counts, documents, size_bytes


def _count_parallel(
    tokenizer: Any,
    tokenizer_json: str,
    batches: Iterator[list[str]],
    workers: int,
    add: Callable[[BatchCounts], None],
) -> None:
    """Feed batches to a process pool with at most ``2 * workers`` batches in flight.

    Workers are forked where the platform allows (fast start, no re-import of the caller's ``__main__``,
    which a spawned worker would re-run in a script without a main guard); they only run ``tokenizers``
    and numpy, never torch.
    """
    import multiprocessing

    global _WORKER_TOKENIZER
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    if "fork" in methods:
        _WORKER_TOKENIZER = tokenizer  # parsed once, inherited by the forked workers
    try:
        _run_pool(context, tokenizer_json, batches, workers, add)
    finally:
        _WORKER_TOKENIZER = None


def _run_pool(
    context: Any,
    tokenizer_json: str,
    batches: Iterator[list[str]],
    workers: int,
    add: Callable[[BatchCounts], None],
) -> None:
    with ProcessPoolExecutor(workers, context, initializer=_init_worker, initargs=(tokenizer_json,)) as pool:
        pending: set[Future[BatchCounts]] = set()
        for batch in batches:
            pending.add(pool.submit(_worker_count, batch))
            if len(pending) >= 2 * workers:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    add(future.result())
        for future in pending:
            add(future.result())
