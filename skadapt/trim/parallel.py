"""Token counts of a text stream, encoded in batches with the tokenizer's own threads.

Each batch goes through ``tokenizers``' ``encode_batch_fast`` (Rust, parallel over the batch's texts on
every core unless ``workers=1``) and its ids are added into one count vector of vocabulary size with
``np.bincount`` — the fastest counting ``tokenizers`` offers (``benchmark/trim_counting.py`` compares
them). Memory is bounded by the vocabulary size and one batch, never by the corpus. Special tokens are not
counted (texts are encoded without them).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from skadapt.trim.encoder import load_tokenizer, special_ids

ProgressHook = Callable[[int, int], None]
"""Called with (documents, bytes) done so far."""

BatchHook = Callable[[list[str]], None]
"""Called in stream order with each batch before it is counted."""

PARALLELISM_ENV = "TOKENIZERS_PARALLELISM"


def batched(texts: Iterable[str], batch_size: int) -> Iterator[list[str]]:
    """Lists of up to ``batch_size`` texts."""
    iterator = iter(texts)
    while batch := list(itertools.islice(iterator, batch_size)):
        yield batch


@contextlib.contextmanager
def tokenizers_parallelism(enabled: bool) -> Iterator[None]:
    """Let ``tokenizers`` use its thread pool (or not) for the block; the setting is restored after.

    ``tokenizers`` reads ``TOKENIZERS_PARALLELISM`` at every batch call (its pool has as many threads as
    cores, or ``RAYON_NUM_THREADS``).
    """
    before = os.environ.get(PARALLELISM_ENV)
    os.environ[PARALLELISM_ENV] = "true" if enabled else "false"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PARALLELISM_ENV, None)
        else:
            os.environ[PARALLELISM_ENV] = before


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
        batch_size: Texts encoded per call.
        workers: 1 encodes on one thread; anything else lets ``tokenizers`` use its thread pool (every
            core; ``RAYON_NUM_THREADS`` caps it).
        on_progress: Called after each batch with (documents, bytes) so far.
        on_batch: Called with each batch before it is counted (e.g. the parity sampler).

    Returns:
        (counts per token id, documents, UTF-8 bytes).
    """
    tokenizer = load_tokenizer(tokenizer_json)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    counts = np.zeros(size, dtype=np.int64)
    documents = size_bytes = 0
    with tokenizers_parallelism(workers != 1):
        for batch in batched(texts, batch_size):
            if on_batch is not None:
                on_batch(batch)
            encodings = tokenizer.encode_batch_fast(batch, add_special_tokens=False)
            ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encodings), dtype=np.int64)
            counts += np.bincount(ids, minlength=size)
            documents += len(batch)
            size_bytes += sum(len(t.encode("utf-8")) for t in batch)
            if on_progress:
                on_progress(documents, size_bytes)
    counts[special_ids(tokenizer)] = 0
    return counts, documents, size_bytes
