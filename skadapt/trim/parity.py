"""The built-in parity check: does the trimmed model behave like the original on corpus text?

On a sample of counted corpus texts it measures the fraction tokenized identically (same token strings),
the token coverage (share of the original's tokens that the trimmed vocabulary keeps) and the largest
absolute difference between the original and trimmed embeddings over the identically tokenized texts;
that difference must not exceed ``PARITY_TOLERANCE``. When every counted token was kept, every sampled
text must also tokenize identically (``require_identical``): anything else is a bug of the rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.console import Bar, counting_forward_passes, progress_group
from skadapt.trim.errors import ParityError

PARITY_TOLERANCE = 1e-5


@dataclass
class ParityResult:
    """Outcome of a parity check."""

    texts: int
    identical: int
    token_coverage: float
    max_abs_diff: float
    identical_required: bool = False
    first_difference: tuple[str, list[str], list[str]] | None = None

    @property
    def identical_fraction(self) -> float:
        """Share of texts tokenized identically."""
        return self.identical / self.texts if self.texts else 1.0

    @property
    def all_identical(self) -> bool:
        """Whether every text tokenized identically."""
        return self.identical == self.texts

    @property
    def passed(self) -> bool:
        """Whether the embedding difference is within tolerance (and all texts are identical if required)."""
        return self.max_abs_diff <= PARITY_TOLERANCE and (self.all_identical or not self.identical_required)

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {
            "texts": self.texts,
            "identically_tokenized": self.identical,
            "identical_fraction": round(self.identical_fraction, 6),
            "token_coverage": round(self.token_coverage, 6),
            "max_abs_embedding_diff": self.max_abs_diff,
            "tolerance": PARITY_TOLERANCE,
            "identical_required": self.identical_required,
            "passed": self.passed,
        }


@dataclass
class TokenizationComparison:
    """How two tokenizers split the same texts.

    Attributes:
        identical: Indices of the texts tokenized identically (same token strings).
        token_coverage: Share of the original's tokens that the trimmed vocabulary has.
        first_difference: The first differing text with its original and trimmed tokens, or None.
    """

    identical: list[int]
    token_coverage: float
    first_difference: tuple[str, list[str], list[str]] | None


def compare_tokenization(original: Any, trimmed: Any, texts: list[str]) -> TokenizationComparison:
    """Compare how two fast tokenizers (``tokenizers.Tokenizer``) split ``texts``."""
    before = original.encode_batch_fast(texts)
    after = trimmed.encode_batch_fast(texts)
    vocab = trimmed.get_vocab(with_added_tokens=True)
    total = covered = 0
    identical = []
    first: tuple[str, list[str], list[str]] | None = None
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        original_tokens = [original.id_to_token(i) for i in old.ids]
        trimmed_tokens = [trimmed.id_to_token(i) for i in new.ids]
        total += len(original_tokens)
        covered += sum(token in vocab for token in original_tokens)
        if trimmed_tokens == original_tokens:
            identical.append(index)
        elif first is None:
            first = (texts[index], original_tokens, trimmed_tokens)
    return TokenizationComparison(identical, covered / total if total else 1.0, first)


def _difference(first: tuple[str, list[str], list[str]] | None) -> str:
    if first is None:
        return ""
    text, before, after = first
    start = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), 0)
    window = slice(max(start - 2, 0), start + 6)
    return f"; e.g. {text[:120]!r}: {before[window]} -> {after[window]}"


def _encode(model: Any, texts: list[str], batch_size: int, bar: Bar) -> Any:
    """Embed ``texts`` in one ``encode`` call, advancing ``bar`` after every batch."""
    with counting_forward_passes(model, bar.advance, enabled=bar.enabled):
        return model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)


def check_parity(
    original_dir: Path,
    trimmed_dir: Path,
    texts: list[str],
    *,
    batch_size: int = 32,
    enforce: bool = True,
    require_identical: bool = False,
    show_progress: bool | None = None,
) -> ParityResult:
    """Compare the original and trimmed sentence-transformers models on ``texts``.

    Args:
        original_dir: The original model directory.
        trimmed_dir: The trimmed model directory.
        texts: Sample texts (a sample of the counted corpus texts).
        batch_size: Encoding batch size.
        enforce: Raise when the check fails.
        require_identical: Every text must tokenize identically (every counted token was kept).
        show_progress: Progress bars (texts encoded, texts/s) for both models; default: on a terminal
            (see ``skadapt.console.progress_enabled``).

    Raises:
        ParityError: ``enforce`` and identically tokenized text embeds differently, or
            ``require_identical`` and some text tokenizes differently.
    """
    from sentence_transformers import SentenceTransformer

    if not texts:
        return ParityResult(0, 0, 1.0, 0.0, require_identical)
    original = SentenceTransformer(str(original_dir), device="cpu")
    trimmed = SentenceTransformer(str(trimmed_dir), device="cpu")
    compared = compare_tokenization(
        original.tokenizer.backend_tokenizer, trimmed.tokenizer.backend_tokenizer, texts
    )
    identical = compared.identical
    diff = 0.0
    if identical:
        sample = [texts[i] for i in identical]
        with progress_group(show_progress) as bars:
            before = bars.bar("parity check: original model", total=len(sample), unit="texts")
            after = bars.bar("parity check: trimmed model", total=len(sample), unit="texts")
            a = _encode(original, sample, batch_size, before)
            b = _encode(trimmed, sample, batch_size, after)
        diff = float(abs(a - b).max())
    result = ParityResult(
        len(texts),
        len(identical),
        compared.token_coverage,
        diff,
        require_identical,
        compared.first_difference,
    )
    if enforce and require_identical and not result.all_identical:
        raise ParityError(
            f"parity check failed: every token counted in the corpus is kept, so every counted text must "
            f"tokenize exactly as before, but {result.texts - result.identical} of {result.texts} sampled "
            f"corpus texts tokenize differently{_difference(result.first_difference)}; the tokenizer "
            "rewrite is wrong - please report this with the model name"
        )
    if enforce and not result.passed:
        raise ParityError(
            f"parity check failed: on {len(identical)} identically tokenized texts the trimmed model's "
            f"embeddings differ from the original's by up to {diff:.3g} (tolerance {PARITY_TOLERANCE}); "
            "the model rewrite is wrong - please report this with the model name"
        )
    return result
