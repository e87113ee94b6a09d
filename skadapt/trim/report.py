"""``trim_report.json``: what was trimmed, from what, and how well the result matches the original."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.results import TrimReport
from skadapt.trim.coverage import CorpusCoverage
from skadapt.trim.parity import PARITY_TOLERANCE, ParityResult

REPORT_FILE = TrimReport.FILE


def fidelity(
    coverage: CorpusCoverage, parity: ParityResult, vocab_size: int, min_frequency: int
) -> tuple[bool, str]:
    """Whether the trim is exact on the corpus, and a one-line verdict for logs, console and the report.

    Exact means: every counted token is kept and every sampled corpus text tokenized identically and
    embedded within the tolerance. Nothing else is called exact.
    """
    diff = f"max |Δ| {parity.max_abs_diff:.2g}"
    if coverage.complete:
        if parity.texts == 0:
            return False, (
                "every counted corpus token is kept (corpus coverage 100%), but exactness was not checked "
                "(parity_documents = 0)"
            )
        exact = parity.all_identical and parity.passed
        return exact, (
            f"{'exact' if exact else 'NOT exact'}: every counted corpus token is kept and "
            f"{parity.identical:,} of {parity.texts:,} sampled corpus texts tokenize identically "
            f"({diff}, tolerance {PARITY_TOLERANCE:g})"
        )
    sampled = (
        f"{parity.identical_fraction:.1%} of {parity.texts:,} sampled corpus texts tokenize identically"
        + (f" ({diff} on those)" if parity.identical else "")
        if parity.texts
        else "no parity sample checked (parity_documents = 0)"
    )
    return False, (
        f"not exact: vocab_size {vocab_size:,} (min_frequency {min_frequency}) drops "
        f"{coverage.dropped:,} of {coverage.distinct:,} distinct counted tokens, corpus coverage "
        f"{coverage.share:.2%} of counted token occurrences; {sampled}"
    )


def build_report(
    *,
    model: str,
    config: dict[str, Any],
    tokenizer_kind: str,
    counts: dict[str, Any],
    extra_counts: dict[str, Any] | None,
    selection: dict[str, Any],
    vocab_before: int,
    rows_before: int,
    rows_after: int,
    parameters_before: int,
    parameters_after: int,
    parity: dict[str, Any],
    coverage: dict[str, Any],
    exact: bool,
    verdict: str,
    corpus_language: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report as a dict (see :func:`write_report`).

    ``exact`` and ``verdict`` come from :func:`fidelity`; ``coverage`` is the corpus coverage of the kept
    vocabulary (:class:`skadapt.trim.coverage.CorpusCoverage`), ``parity`` the check on the sample of
    counted texts; ``corpus_language`` whether the corpus is in the run's language
    (:func:`skadapt.trim.language.corpus_language`; None without a language).
    """
    return {
        "model": model,
        "tokenizer": tokenizer_kind,
        "config": config,
        "source": (config.get("corpus") or {}).get("source"),
        "vocab_size": config.get("vocab_size"),
        "min_frequency": config.get("min_frequency"),
        "counts": counts,
        "extra_counts": extra_counts,
        "counts_fingerprint": counts.get("fingerprint"),
        "selection": selection,
        "vocab": {"before": vocab_before, "after": rows_after},
        "embedding_rows": {"before": rows_before, "after": rows_after},
        "parameters": {
            "before": parameters_before,
            "after": parameters_after,
            "ratio": round(parameters_after / parameters_before, 6) if parameters_before else None,
        },
        "exact": exact,
        "verdict": verdict,
        "coverage": coverage,
        "parity": parity,
        **({"corpus_language": corpus_language} if corpus_language is not None else {}),
        "versions": artifacts.library_versions(),
    }


def write_report(out_dir: Path, report: dict[str, Any]) -> Path:
    """Write ``trim_report.json`` into ``out_dir``."""
    TrimReport.write_data(out_dir, report)
    return out_dir / REPORT_FILE
