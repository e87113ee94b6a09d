"""Counting a text stream in checkpointed segments, so a killed count resumes where it stopped.

After every ``CHECKPOINT_TEXTS`` texts the partial counts, the stream position and the parity sampler's
state are saved (see :mod:`skadapt.trim.cache`). A run killed mid-way resumes from the last saved segment:
the texts already counted are skipped (read again, not tokenized again) and the sampler continues, so the
counts and the parity sample equal those of an uninterrupted run.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from typing import Any

import numpy as np

from skadapt.trim import cache, parallel
from skadapt.trim.sampling import ParitySampler

log = logging.getLogger("skadapt.trim")

CHECKPOINT_TEXTS = 200_000
"""Texts of a source counted between two checkpoints of the partial counts (resume after a kill)."""


class _Consumed:
    """An iterator that counts how many items were taken from it."""

    def __init__(self, items: Iterator[str]) -> None:
        self.items = items
        self.taken = 0

    def __iter__(self) -> Iterator[str]:
        for item in self.items:
            self.taken += 1
            yield item


def _restore_sampler(
    saved: dict[str, Any] | None, sampler: ParitySampler, position: int
) -> ParitySampler | None:
    """The sampler to continue with after resuming at ``position``; None when the saved one cannot be."""
    if not position:
        return sampler
    if saved is not None:
        restored = ParitySampler.from_state(saved)
        if restored.matches(sampler.size, sampler.seed) and restored.position == position:
            return restored
    log.info("the interrupted count drew another parity sample; it is drawn again by re-reading the source")
    return None


def count_resumable(
    tokenizer_json: str,
    texts: Iterator[str],
    key: str,
    sampler: ParitySampler,
    *,
    use_cache: bool,
    on_progress: parallel.ProgressHook | None,
    **count_options: Any,
) -> tuple[np.ndarray, int, int, ParitySampler | None]:
    """Count every text of ``texts`` in segments, saving partial counts after each full segment.

    Args:
        tokenizer_json: The serialized fast tokenizer.
        texts: The source's texts from its start.
        key: Cache key of the counts (names the partial file).
        sampler: A fresh parity sampler; every counted text is offered to it.
        use_cache: Resume from and save checkpoints.
        on_progress: Progress hook (documents, bytes) over the whole stream.
        **count_options: ``batch_size`` and ``workers`` of :func:`skadapt.trim.parallel.count_texts`.

    Returns:
        (counts, documents, UTF-8 bytes, the sampler holding the sample of every counted text - None when
        a resumed count cannot continue the interrupted run's sampler and the sample must be re-drawn).
    """
    partial = cache.load_partial(key) if use_cache else None
    counts: np.ndarray | None = None
    position = documents = size = 0
    saved_sampler = None
    if partial is not None:
        counts, meta, saved_sampler = partial
        position, documents, size = meta["position"], meta["documents"], meta["bytes"]
    active = _restore_sampler(saved_sampler, sampler, position)
    if position:
        log.info("resuming the count at text %d (%d counted before the interruption)", position, documents)
        texts = itertools.islice(texts, position, None)
    observe = active.observe if active is not None else None

    def progress(segment_documents: int, segment_bytes: int) -> None:
        if on_progress:
            on_progress(documents + segment_documents, size + segment_bytes)

    while True:
        segment = _Consumed(itertools.islice(texts, CHECKPOINT_TEXTS))
        segment_counts, segment_documents, segment_bytes = parallel.count_texts(
            tokenizer_json, segment, on_progress=progress, on_batch=observe, **count_options
        )
        if segment.taken == 0:
            break
        counts = segment_counts if counts is None else counts + segment_counts
        position, documents, size = (
            position + segment.taken,
            documents + segment_documents,
            size + segment_bytes,
        )
        if use_cache and segment.taken == CHECKPOINT_TEXTS:
            meta = {"position": position, "documents": documents, "bytes": size}
            cache.save_partial(key, counts, meta, active.state() if active is not None else None)
        if segment.taken < CHECKPOINT_TEXTS:
            break
    if counts is None:
        counts = segment_counts
    cache.drop_partial(key)
    return counts, documents, size, active
