"""Weighted token counts of a wordfreq word list (``wordfreq:LANG`` sources).

wordfreq lists are lowercased and have no digits or punctuation, so each word is also counted
capitalised (with ``CAPITALISED_SHARE`` of its count), and every character of ``COVERAGE_CHARACTERS`` is
counted alone and attached to a word, as are the numbers 0-2099 and decimals (see :func:`coverage_texts`),
with the count of the most frequent word. The counted texts of a word list are its word forms (each
encoded alone); the parity sample is drawn from them.
"""

from __future__ import annotations

import itertools
import string
from typing import Any

import numpy as np

from skadapt.sources.wordfreq import iter_word_forms as iter_word_forms  # read here by counting and tests
from skadapt.sources.wordfreq import iter_wordfreq, word_forms
from skadapt.trim.encoder import load_tokenizer, special_ids
from skadapt.trim.parallel import BatchHook, batched

COVERAGE_CHARACTERS = string.digits + string.punctuation + "„“”‚‘’«»–—…€§°"
"""Digits and punctuation counted for word lists (which have none) so trimming keeps them."""

CAPITALISED_SHARE = 0.1
"""Share of a word's count given to its capitalised form (sentence starts, names)."""


def count_wordfreq(
    tokenizer_json: str,
    lang: str,
    *,
    max_words: int | None = None,
    batch_size: int = 1000,
    on_batch: BatchHook | None = None,
) -> tuple[np.ndarray, int, int]:
    """Weighted token counts of a wordfreq list (counts = occurrences per billion words).

    Args:
        tokenizer_json: The serialized fast tokenizer.
        lang: wordfreq language code.
        max_words: Read at most this many words.
        batch_size: Words per encoded batch.
        on_batch: Called with the word forms of each batch, in list order (e.g. the parity sampler).

    Returns:
        (counts per token id, words, UTF-8 bytes of the words).
    """
    tokenizer = load_tokenizer(tokenizer_json)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    totals = np.zeros(size, dtype=np.float64)
    words = size_bytes = 0
    top = 0
    for chunk in batched((f"{w}\t{c}" for w, c in iter_wordfreq(lang, max_words)), batch_size):
        texts: list[str] = []
        weights: list[float] = []
        for line in chunk:
            word, count = line.rsplit("\t", 1)
            top = max(top, int(count))
            for position, form in enumerate(word_forms(word)):
                texts.append(form)
                weights.append(int(count) * (1.0 if position == 0 else CAPITALISED_SHARE))
            words += 1
            size_bytes += len(word.encode("utf-8"))
        if on_batch is not None:
            on_batch(texts)
        _add_weighted(tokenizer, texts, weights, totals)
    coverage = coverage_texts()
    _add_weighted(tokenizer, coverage, [float(max(top, 1))] * len(coverage), totals)
    counts = np.ceil(totals).astype(np.int64)
    counts[special_ids(tokenizer)] = 0
    return counts, words, size_bytes


def coverage_texts() -> list[str]:
    """Texts that cover what word lists lack: digits, punctuation, numbers (wordfreq maps 2024 to 0000)."""
    texts = [text for char in COVERAGE_CHARACTERS for text in (char, f"a{char}")]
    texts += [str(n) for n in range(2100)]
    texts += [f"0,{n:02d}" for n in range(100)] + [f"0.{n:02d}" for n in range(100)]
    return texts


def _add_weighted(tokenizer: Any, texts: list[str], weights: list[float], totals: np.ndarray) -> None:
    encodings = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
    ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encodings), dtype=np.int64)
    totals += np.bincount(ids, weights=np.repeat(np.asarray(weights), lengths), minlength=len(totals))
