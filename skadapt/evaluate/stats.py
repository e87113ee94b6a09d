"""Paired comparison of two models over tasks: Wilcoxon signed-rank and TOST equivalence."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from skadapt.signedrank import signed_rank_test


@dataclass
class Comparison:
    """Model ``b`` against model ``a`` over the same tasks (differences are b - a, in points).

    Attributes:
        a: Reference model.
        b: Compared model.
        n: Number of paired tasks.
        mean_diff: Mean of b - a.
        wilcoxon_statistic: The signed-rank statistic min(T+, T-) (Pratt's zeros: see :func:`wilcoxon`).
        wilcoxon_p: Its two-sided p-value (1.0 when every difference is zero).
        margin: TOST equivalence margin (± points).
        ci_low: Lower end of the (1 - 2 alpha) confidence interval of the mean difference.
        ci_high: Upper end of it.
        tost_p: TOST p-value (the larger of the two one-sided tests).
        equivalent: Whether TOST shows equivalence within ±margin at level alpha.
        alpha: Significance level.
    """

    a: str
    b: str
    n: int
    mean_diff: float
    wilcoxon_statistic: float
    wilcoxon_p: float
    margin: float
    ci_low: float
    ci_high: float
    tost_p: float
    equivalent: bool
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def wilcoxon(a: list[float], b: list[float]) -> tuple[float, float]:
    """Two-sided paired signed-rank test of b - a: the exact conditional test with Pratt's zeros of
    :mod:`skadapt.signedrank`, the one robustness uses (a task where both models score the same is ranked
    and counts for neither side; why Pratt's zeros: that module).

    Returns:
        (W, p) with W = min(T+, T-); (0, 1.0) when all differences are 0.
    """
    return signed_rank_test([y - x for x, y in zip(a, b, strict=True)])


def tost(a: list[float], b: list[float], margin: float, alpha: float) -> tuple[float, float, float]:
    """Paired TOST (statsmodels ``ttost_paired``) of b - a within ±margin.

    Returns:
        (p-value, CI low, CI high) with the (1 - 2 alpha) t-interval of the mean difference.
    """
    from scipy.stats import t as student_t
    from statsmodels.stats.weightstats import ttost_paired

    n = len(a)
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    mean = sum(diffs) / n
    if n < 2:
        return float("nan"), float("nan"), float("nan")
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    if sd == 0:
        inside = -margin < mean < margin
        return (0.0 if inside else 1.0), mean, mean
    pvalue, _, _ = ttost_paired(np.asarray(b, float), np.asarray(a, float), -margin, margin)
    half = student_t.ppf(1 - alpha, n - 1) * sd / math.sqrt(n)
    return float(pvalue), mean - half, mean + half


def compare(
    a_name: str, a: list[float], b_name: str, b: list[float], *, margin: float = 2.0, alpha: float = 0.05
) -> Comparison:
    """Compare paired per-task scores of two models (SkMTEB: margin ±2 points, 90% CI for alpha 0.05).

    Raises:
        ValueError: The score lists differ in length or are empty.
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"need the same non-empty task set for {a_name} and {b_name}")
    statistic, p = wilcoxon(a, b) if len(a) > 1 else (float("nan"), float("nan"))
    tost_p, low, high = tost(a, b, margin, alpha)
    mean_diff = sum(y - x for x, y in zip(a, b, strict=True)) / len(a)
    equivalent = bool(tost_p < alpha) if not math.isnan(tost_p) else False
    return Comparison(
        a_name, b_name, len(a), mean_diff, statistic, p, margin, low, high, tost_p, equivalent, alpha
    )
