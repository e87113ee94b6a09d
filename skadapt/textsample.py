"""Seeded sentence samples from a text stream: sentence splitting (pysbd) and reservoir sampling.

Used by renormalization (the corpus sample μ is estimated on) and by fine-tuning's anchor (texts the
starting model's embeddings are kept on). The sample is a uniform reservoir sample (Algorithm R) of the
unique eligible sentences of everything read, so it does not depend on where in the stream a sentence
stands; the same source, limits and seed give the same sample.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

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
    """
    exclude = exclude or set()
    counts = {"documents": 0, "dropped": 0}

    def eligible() -> Iterator[str]:
        seen: set[str] = set()
        for text in texts:
            counts["documents"] += 1
            for sentence in split_sentences(text, language):
                if not min_chars <= len(sentence) <= max_chars:
                    continue
                key = normalize_text(sentence)
                if key in seen:
                    continue
                seen.add(key)
                if key in exclude:
                    counts["dropped"] += 1
                    continue
                yield sentence

    sentences, total = reservoir_sample(eligible(), size, seed)
    return SentenceSample(sentences, total, counts["dropped"], counts["documents"])
