"""Which token ids a trimmed vocabulary keeps.

``vocab_size`` (N) counts the tokens that can appear in encoded text: the corpus tokens plus the special
tokens the tokenizer itself emits (the post-processor's ``<s>``/``</s>`` or ``[CLS]``/``[SEP]``, and the
unknown token). Special tokens that never appear in encoded text (padding, mask, other added specials) are
kept on top of N. For multilingual-e5 (``<s> <pad> </s> <unk> <mask>``) N = 60,000 therefore gives
59,997 corpus tokens + ``<s> </s> <unk>`` + ``<pad> <mask>`` = 60,002 embedding rows: the same vocabulary
size as vocabtrimmer (which counts ``<s>``/``</s>``/``<unk>`` as corpus tokens) and the SkMTEB e5-sk models.

Always kept (inside N): special and added tokens, the pieces needed to spell every character seen in the
corpus, the keep list and the pieces of the model's prompts (``query: ``). The rest of N is filled with
corpus tokens by frequency (ties: lower id first) among those seen at least ``min_frequency`` times; for
BPE a token brings the tokens it is merged from. Then up to ``extra_vocab_size`` of the most frequent
tokens of a second source are added on top of N.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skadapt.trim.errors import TrimError
from skadapt.trim.tokenizer import TokenizerInfo, bpe_closure, spelling_ids, strip_marker

log = logging.getLogger("skadapt.trim")


@dataclass
class Selection:
    """The kept ids and how they were chosen.

    Attributes:
        keep: Kept old ids, ascending (new id = position).
        requested: The asked ``vocab_size``.
        counted_in_n: Kept tokens that count towards N.
        on_top: Special tokens kept on top of N (padding, mask, ...).
        by_reason: Number of kept ids per reason (specials, spelling, keep list, corpus, extra corpus).
        supported: How many tokens (within N) the corpus supports: forced ones + distinct corpus tokens
            seen at least ``min_frequency`` times.
        warnings: Human-readable notes (e.g. the corpus supports fewer tokens than asked).
    """

    keep: list[int]
    requested: int
    counted_in_n: int
    on_top: int
    by_reason: dict[str, int] = field(default_factory=dict)
    supported: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {
            "vocab_size_requested": self.requested,
            "vocab_size_kept": self.counted_in_n,
            "special_tokens_on_top": self.on_top,
            "total_tokens": len(self.keep),
            "supported_by_corpus": self.supported,
            "by_reason": self.by_reason,
            "warnings": self.warnings,
        }


def seen_characters(info: TokenizerInfo, counts: np.ndarray) -> set[str]:
    """Characters of every token seen in the corpus (markers stripped, special tokens excluded)."""
    chars: set[str] = set()
    for index in np.flatnonzero(counts):
        if index < info.size and index not in info.special_ids:
            chars.update(strip_marker(info, info.tokens[index]))
    return chars


def keep_list_ids(info: TokenizerInfo, encode: Callable[[str], list[int]], items: Iterable[str]) -> set[int]:
    """Ids for a keep list: an item that is a token keeps that token; every item keeps its pieces."""
    ids: set[int] = set()
    for item in items:
        exact = info.token_id(item)
        if exact is not None:
            ids.add(exact)
        ids.update(encode(item))
    return ids


def ranked(counts: np.ndarray, min_frequency: int) -> np.ndarray:
    """Ids with ``count >= min_frequency``, most frequent first, ties by lower id."""
    ids = np.flatnonzero(counts >= min_frequency)
    order = np.lexsort((ids, -counts[ids]))
    return ids[order]


def _fill(info: TokenizerInfo, kept: set[int], candidates: np.ndarray, budget: int, counted: set[int]) -> int:
    """Add candidates (with their BPE parents) to ``kept`` until ``counted`` reaches ``budget``."""
    added = 0
    if info.kind != "BPE":
        fresh = [int(i) for i in candidates if int(i) not in kept]
        take = fresh[: max(budget - len(counted), 0)]
        kept.update(take)
        counted.update(take)
        return len(take)
    for candidate in candidates:
        if len(counted) >= budget:
            break
        index = int(candidate)
        if index in kept:
            continue
        new = bpe_closure(info, {index}) - kept
        if len(counted) + len(new) > budget:
            continue
        kept.update(new)
        counted.update(new)
        added += len(new)
    return added


def check_vocab_size(info: TokenizerInfo, vocab_size: int) -> None:
    """Fail early when N is smaller than the tokenizer's special/added tokens.

    Raises:
        TrimError: ``vocab_size`` is too small.
    """
    specials = info.special_ids | info.added_ids
    if vocab_size < len(specials):
        names = ", ".join(info.tokens[i] for i in sorted(specials))
        raise TrimError(
            f"vocab_size {vocab_size} is smaller than the {len(specials)} special/added tokens of the "
            f"tokenizer ({names}); use a vocab_size of at least {len(specials)} (typically tens of thousands)"
        )


def select_vocabulary(
    info: TokenizerInfo,
    counts: np.ndarray,
    *,
    vocab_size: int,
    min_frequency: int = 1,
    keep_ids: set[int] | None = None,
    extra_counts: np.ndarray | None = None,
    extra_vocab_size: int = 0,
) -> Selection:
    """Choose the kept token ids.

    Args:
        info: The analysed tokenizer.
        counts: Corpus counts per id.
        vocab_size: N, see the module docstring.
        min_frequency: Corpus tokens seen fewer times are not chosen by frequency.
        keep_ids: Ids always kept (keep list).
        extra_counts: Counts of a second source.
        extra_vocab_size: How many of its most frequent tokens to add on top of N.

    Raises:
        TrimError: N is smaller than the special tokens, or than the tokens that must be kept.
    """
    check_vocab_size(info, vocab_size)
    specials = info.special_ids | info.added_ids
    on_top = info.special_ids - info.encoding_special_ids
    kept = set(specials)
    counted = kept - on_top
    reasons = {"special_and_added": len(kept)}
    spelling = bpe_closure(info, spelling_ids(info, seen_characters(info, counts))) - kept
    reasons["spelling"] = len(spelling)
    kept |= spelling
    forced_keep = bpe_closure(info, set(keep_ids or ())) - kept
    reasons["keep_list"] = len(forced_keep)
    kept |= forced_keep
    counted = kept - on_top
    if len(counted) > vocab_size:
        raise TrimError(
            f"vocab_size {vocab_size} is too small: the tokens that must be kept (special/added tokens, "
            "pieces spelling the characters seen in the corpus, keep list, prompts) already number "
            f"{len(counted)}; "
            f"use a vocab_size of at least {len(counted)}"
        )
    candidates = ranked(counts[: info.size], min_frequency)
    reasons["corpus"] = _fill(info, kept, candidates, vocab_size, counted)
    supported = len(set(candidates.tolist()) | counted)
    warnings = []
    if len(counted) < vocab_size:
        message = (
            f"the corpus supports only {len(counted):,} of the {vocab_size:,} tokens asked "
            f"(distinct tokens seen at least {min_frequency} time(s) + always-kept tokens); "
            f"kept {len(counted):,}"
        )
        warnings.append(message)
        log.warning(message)
    reasons["extra_corpus"] = 0
    if extra_counts is not None and extra_vocab_size > 0:
        extra_ranked = ranked(extra_counts[: info.size], 1)
        before = len(kept)
        _fill(info, kept, extra_ranked, len(counted) + extra_vocab_size, counted)
        reasons["extra_corpus"] = len(kept) - before
    return Selection(
        keep=sorted(kept),
        requested=vocab_size,
        counted_in_n=len(kept - on_top) - reasons["extra_corpus"],
        on_top=len(on_top),
        by_reason=reasons,
        supported=supported,
        warnings=warnings,
    )
