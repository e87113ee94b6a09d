"""The built-in parity check: does the trimmed model behave like the original on corpus text?

On a sample of texts it measures the fraction tokenized identically (same token strings), the token
coverage (share of the original's tokens that the trimmed vocabulary keeps) and the largest absolute
difference between the original and trimmed embeddings over the identically tokenized texts; that
difference must not exceed ``PARITY_TOLERANCE``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.trim.errors import ParityError

PARITY_TOLERANCE = 1e-5


@dataclass
class ParityResult:
    """Outcome of a parity check."""

    texts: int
    identical: int
    token_coverage: float
    max_abs_diff: float

    @property
    def identical_fraction(self) -> float:
        """Share of texts tokenized identically."""
        return self.identical / self.texts if self.texts else 1.0

    @property
    def passed(self) -> bool:
        """Whether the embedding difference is within tolerance."""
        return self.max_abs_diff <= PARITY_TOLERANCE

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {
            "texts": self.texts,
            "identically_tokenized": self.identical,
            "identical_fraction": round(self.identical_fraction, 6),
            "token_coverage": round(self.token_coverage, 6),
            "max_abs_embedding_diff": self.max_abs_diff,
            "tolerance": PARITY_TOLERANCE,
            "passed": self.passed,
        }


def compare_tokenization(original: Any, trimmed: Any, texts: list[str]) -> tuple[list[int], float]:
    """Indices of texts tokenized identically by two fast tokenizers, and the token coverage."""
    before = original.encode_batch_fast(texts)
    after = trimmed.encode_batch_fast(texts)
    vocab = trimmed.get_vocab(with_added_tokens=True)
    total = covered = 0
    identical = []
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        tokens = original_tokens = [original.id_to_token(i) for i in old.ids]
        total += len(original_tokens)
        covered += sum(token in vocab for token in tokens)
        if [trimmed.id_to_token(i) for i in new.ids] == original_tokens:
            identical.append(index)
    return identical, (covered / total if total else 1.0)


def check_parity(
    original_dir: Path, trimmed_dir: Path, texts: list[str], *, batch_size: int = 32, enforce: bool = True
) -> ParityResult:
    """Compare the original and trimmed sentence-transformers models on ``texts``.

    Args:
        original_dir: The original model directory.
        trimmed_dir: The trimmed model directory.
        texts: Sample texts (e.g. held-out corpus texts).
        batch_size: Encoding batch size.
        enforce: Raise when the embedding difference exceeds the tolerance.

    Raises:
        ParityError: ``enforce`` and identically tokenized text embeds differently.
    """
    from sentence_transformers import SentenceTransformer

    if not texts:
        return ParityResult(0, 0, 1.0, 0.0)
    original = SentenceTransformer(str(original_dir), device="cpu")
    trimmed = SentenceTransformer(str(trimmed_dir), device="cpu")
    identical, coverage = compare_tokenization(
        original.tokenizer.backend_tokenizer, trimmed.tokenizer.backend_tokenizer, texts
    )
    diff = 0.0
    if identical:
        sample = [texts[i] for i in identical]
        a = original.encode(sample, batch_size=batch_size, convert_to_numpy=True)
        b = trimmed.encode(sample, batch_size=batch_size, convert_to_numpy=True)
        diff = float(abs(a - b).max())
    result = ParityResult(len(texts), len(identical), coverage, diff)
    if enforce and not result.passed:
        raise ParityError(
            f"parity check failed: on {len(identical)} identically tokenized texts the trimmed model's "
            f"embeddings differ from the original's by up to {diff:.3g} (tolerance {PARITY_TOLERANCE}); "
            "the model rewrite is wrong - please report this with the model name"
        )
    return result
