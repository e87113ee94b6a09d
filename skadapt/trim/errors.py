"""Errors of the trim stage; each message names what is wrong and what to do."""

from __future__ import annotations

from skadapt.errors import SkadaptError


class TrimError(SkadaptError, ValueError):
    """A trim that cannot be done as asked (vocab size too small, unusable model)."""


class UnsupportedTokenizerError(TrimError):
    """The model's tokenizer is not a fast Unigram, WordPiece or BPE tokenizer."""


class ParityError(TrimError):
    """The trimmed model embeds identically tokenized text differently from the original."""
