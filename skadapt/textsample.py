"""Seeded sentence samples from a text stream: sentence splitting (pysbd) and reservoir sampling.

Used by renormalization (the corpus sample μ is estimated on) and by fine-tuning's anchor (texts the
starting model's embeddings are kept on). The sample is a uniform reservoir sample (Algorithm R) of the
unique eligible sentences of everything read, so it does not depend on where in the stream a sentence
stands; the same source, limits and seed give the same sample.

Sentence splitting is pure Python (pysbd, ~150k characters per second and core): past the first
:data:`PARALLEL_AFTER` texts a stream is split in worker processes, one per core (results in stream order,
so the sample is the same). Duplicates are recognized by a 128-bit hash of each sentence's key, not the
key itself: the set of keys grows with the corpus (200,000 web documents hold millions of sentences), at
~250 bytes per key as a string and under 150 as a hash (``tests/test_renorm.py``).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import random
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any

PARALLEL_AFTER = 2_000
"""Texts split in this process before the rest of a stream goes to worker processes (small inputs never
pay for starting them)."""
BATCH = 256
"""Texts per worker task."""

PYSBD_FALLBACK = "en"
"""pysbd rules used for languages pysbd has no rules for (its English rules are the most general)."""


def normalize_text(text: str) -> str:
    """Key for overlap checks: whitespace-collapsed, case-folded."""
    return " ".join(text.split()).casefold()


@cache
def _segmenter(language: str) -> Any:
    import pysbd
    from pysbd.languages import LANGUAGE_CODES

    code = language if language in LANGUAGE_CODES else PYSBD_FALLBACK
    return pysbd.Segmenter(language=code, clean=False)


def split_sentences(text: str, language: str = PYSBD_FALLBACK) -> list[str]:
    """Sentences of ``text`` by pysbd's rules for ``language`` (ISO 639-1); every line is split alone."""
    segmenter = _segmenter(language)
    sentences = []
    for line in text.splitlines():
        if line.strip():
            sentences.extend(s.strip() for s in segmenter.segment(line) if s.strip())
    return sentences


def split_workers() -> int:
    """Worker processes for sentence splitting: the cores this process may use, at most 16."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 16))


def _split_batch(batch: list[str], language: str) -> list[list[str]]:
    return [split_sentences(text, language) for text in batch]


def split_stream(texts: Iterable[str], language: str, workers: int | None = None) -> Iterator[list[str]]:
    """The sentences of each text of ``texts``, in stream order; past the first :data:`PARALLEL_AFTER`
    texts split by ``workers`` processes (default :func:`split_workers`; 1: all in this process). At most
    two rounds of batches are in flight, so memory is bounded by them, not by the stream."""
    iterator = iter(texts)
    for text in itertools.islice(iterator, PARALLEL_AFTER):
        yield split_sentences(text, language)
    workers = split_workers() if workers is None else workers
    if workers <= 1:
        yield from (split_sentences(text, language) for text in iterator)
        return
    import multiprocessing

    rounds = (list(itertools.islice(iterator, BATCH * workers)) for _ in itertools.count())
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        pending: Iterator[list[list[str]]] | None = None
        for texts_round in rounds:
            if not texts_round:
                break
            batches = [texts_round[i : i + BATCH] for i in range(0, len(texts_round), BATCH)]
            submitted = pool.map(_split_batch, batches, itertools.repeat(language))  # submits them all now
            if pending is not None:
                yield from itertools.chain.from_iterable(pending)
            pending = submitted
        if pending is not None:
            yield from itertools.chain.from_iterable(pending)


def _key_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=16).digest(), "little")


@dataclass
class SentenceSample:
    """A seeded sample of sentences.

    Attributes:
        sentences: The sample (at most the requested size), in reservoir order.
        eligible: Unique sentences within the length window that were candidates.
        dropped: Eligible sentences left out because they occur in the excluded (evaluation) texts.
        documents: Texts read from the source.
    """

    sentences: list[str]
    eligible: int
    dropped: int
    documents: int


def reservoir_sample(items: Iterable[str], size: int, seed: int) -> tuple[list[str], int]:
    """Uniform sample of ``size`` items of a stream of unknown length (Algorithm R); also the count."""
    rng = random.Random(seed)
    reservoir: list[str] = []
    seen = 0
    for item in items:
        if seen < size:
            reservoir.append(item)
        else:
            slot = rng.randrange(seen + 1)
            if slot < size:
                reservoir[slot] = item
        seen += 1
    return reservoir, seen


def sample_sentences(
    texts: Iterable[str],
    size: int,
    *,
    min_chars: int,
    max_chars: int,
    seed: int,
    language: str = PYSBD_FALLBACK,
    exclude: set[str] | None = None,
    workers: int | None = None,
) -> SentenceSample:
    """Seeded uniform sample of unique sentences with ``min_chars <= len <= max_chars``, not in ``exclude``.

    Args:
        texts: The source texts (read to the end: bound the source with its own read limits).
        size: Sentences wanted.
        min_chars: Shortest sentence kept.
        max_chars: Longest sentence kept.
        seed: Seed of the sample.
        language: ISO 639-1 code for the sentence splitter.
        exclude: Normalized texts (see :func:`normalize_text`) that must not be sampled.
        workers: Sentence-splitting processes (:func:`split_stream`).
    """
    exclude = exclude or set()
    counts = {"documents": 0, "dropped": 0}

    def eligible() -> Iterator[str]:
        seen: set[int] = set()
        for sentences in split_stream(texts, language, workers):
            counts["documents"] += 1
            for sentence in sentences:
                if not min_chars <= len(sentence) <= max_chars:
                    continue
                key = normalize_text(sentence)
                digest = _key_hash(key)
                if digest in seen:
                    continue
                seen.add(digest)
                if key in exclude:
                    counts["dropped"] += 1
                    continue
                yield sentence

    sentences, total = reservoir_sample(eligible(), size, seed)
    return SentenceSample(sentences, total, counts["dropped"], counts["documents"])
