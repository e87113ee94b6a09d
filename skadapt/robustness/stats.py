"""Paired statistics of robustness deltas: Hodges-Lehmann shift with its Walsh-average confidence interval
and a percentile bootstrap, Wilcoxon signed-rank p-value, Holm, Kendall's tau.

One signed-rank test gives both the p-value and the interval, so that they agree: the exact conditional
test with Pratt's zeros of :mod:`skadapt.signedrank` (the test, and why Pratt's zeros), the test the
evaluation's verdicts use too.

The interval is the test's inversion, the closure of {theta : p(d - theta) > alpha}. The signs and ranks of
``d - theta`` do not change between consecutive distinct Walsh averages, so the test is evaluated on those
stretches, scanning from the classic order-statistic ends; the accepted stretches form one run, whose
closure is the interval. Without ties or zeros it is exactly the classic ``[W_(c), W_(M+1-c)]``. ``0``
inside the interval implies ``p > alpha``, ``0`` outside it ``p <= alpha``; ``0`` at an end (then a Walsh
average: a zero delta or two opposite deltas) belongs to the interval by closure while the test at exactly
0 may reject, as the classic closed interval does at its ends.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from skadapt.signedrank import EXACT_MAX, ranked_p_value, signed_rank_cdf, wilcoxon_p


def walsh_averages(deltas: Sequence[float]) -> np.ndarray:
    """All (d_i + d_j) / 2 for i <= j, sorted."""
    d = np.asarray(deltas, dtype=float)
    i, j = np.triu_indices(len(d))
    return np.sort((d[i] + d[j]) / 2)


def hodges_lehmann(deltas: Sequence[float]) -> float:
    """The one-sample Hodges-Lehmann shift: the median of the Walsh averages."""
    return float(np.median(walsh_averages(deltas)))


def _shifted_p_value(d: np.ndarray, walsh: np.ndarray, above: np.ndarray) -> float:
    """The test of ``d - theta`` from comparisons alone: ``walsh[i, j] = (d_i + d_j) / 2`` and ``above`` its
    sign against theta (-1, 0, 1). No arithmetic on theta, so no rounding creates or hides ties.

    For x = d - theta: x_i = 0 where above[i, i] = 0; |x_j| < |x_i| iff x_j lies strictly between -x_i and
    x_i, i.e. (d_j < d_i and walsh_ij > theta) for x_i > 0, (d_j > d_i and walsh_ij < theta) for x_i < 0;
    |x_j| = |x_i| iff d_j = d_i or walsh_ij = theta.
    """
    signs = np.diagonal(above)
    smaller = np.where(
        signs[:, None] > 0,
        (d[None, :] < d[:, None]) & (above > 0),
        (signs[:, None] < 0) & (d[None, :] > d[:, None]) & (above < 0),
    )
    tied = (d[None, :] == d[:, None]) | (above == 0)
    ranks = 2 * smaller.sum(axis=1) + tied.sum(axis=1) + 1
    return ranked_p_value(ranks, signs)


def _classic_index(n: int, alpha: float) -> int:
    """The classic c: the largest with P(T+ <= c - 1) <= alpha/2 (normal approximation beyond EXACT_MAX)."""
    m = n * (n + 1) // 2
    if n > EXACT_MAX:
        z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
        return max(1, min(m, math.floor(m / 2 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24))))
    cdf = signed_rank_cdf(n)
    return max((k for k in range(1, m + 1) if cdf[k - 1] <= alpha / 2), default=1)


def walsh_interval(deltas: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The distribution-free CI of the Hodges-Lehmann shift: the shifts the signed-rank test does not
    reject (module docstring); without ties or zeros the classic ``[W_(c), W_(M+1-c)]`` of the sorted Walsh
    averages, c the largest integer with P(T+ <= c-1) <= alpha/2.

    Returns:
        (low, high, achieved): ``achieved`` is 1 minus the largest p-value of a shift outside the interval,
        so the interval is the same at every confidence from ``confidence`` to ``achieved``; without ties it
        is the classic 1 - 2 P(T+ <= c-1). With too few deltas for the requested level no shift is
        rejected: then it is the range of the Walsh averages at the confidence it has. NaNs without deltas.
    """
    d = np.asarray(deltas, dtype=float)
    n = len(d)
    if n == 0:
        return math.nan, math.nan, math.nan
    alpha = 1 - confidence
    walsh = (d[:, None] + d[None, :]) / 2
    ordered = walsh_averages(d)
    points = np.unique(ordered)
    top = len(points)  # stretch k lies between points[k - 1] and points[k]; 0 and top are unbounded

    @functools.cache
    def p(k: int) -> float:
        above = np.where(walsh >= points[k], 1, -1) if k < top else np.full_like(walsh, -1)
        return _shifted_p_value(d, walsh, above)

    if p(0) > alpha:
        return float(points[0]), float(points[-1]), 1 - max(p(0), p(top))
    c = _classic_index(n, alpha)
    low = _first_accepted(p, int(np.searchsorted(points, ordered[c - 1], "right")), 1, alpha, top)
    high = _first_accepted(p, int(np.searchsorted(points, ordered[len(ordered) - c], "left")), -1, alpha, top)
    if low is not None and high is not None:
        return float(points[low - 1]), float(points[high]), 1 - max(p(low - 1), p(high + 1))
    # every stretch between Walsh averages is rejected: only some Walsh averages themselves may be accepted
    accepted = [v for v in points if _shifted_p_value(d, walsh, np.sign(walsh - v).astype(int)) > alpha]
    if not accepted:
        return math.nan, math.nan, math.nan
    return float(min(accepted)), float(max(accepted)), 1 - max(p(k) for k in range(top + 1))


def _first_accepted(p: Any, start: int, inward: int, alpha: float, top: int) -> int | None:
    """The outermost accepted stretch, scanning from ``start`` (``inward`` is +1 from below); None if the
    scan finds no accepted stretch."""
    k = min(max(start, 1), top - 1)
    if p(k) > alpha:
        while p(k - inward) > alpha:
            k -= inward
        return k
    while 0 < k < top:
        if p(k) > alpha:
            return k
        k += inward
    return None


def bootstrap_interval(
    deltas: Sequence[float], samples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the Hodges-Lehmann shift (resampling the deltas)."""
    d = np.asarray(deltas, dtype=float)
    if len(d) == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    estimates = [hodges_lehmann(d[rng.integers(0, len(d), len(d))]) for _ in range(samples)]
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return float(low), float(high)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (statsmodels); NaN stays NaN."""
    from statsmodels.stats.multitest import multipletests

    values = np.asarray(p_values, dtype=float)
    adjusted = np.full(len(values), math.nan)
    finite = ~np.isnan(values)
    if finite.any():
        adjusted[finite] = multipletests(values[finite], method="holm")[1]
    return [float(v) for v in adjusted]


def kendall_tau(original: Sequence[float], transformed: Sequence[float]) -> float:
    """Kendall's tau between two rankings of the same models."""
    from scipy.stats import kendalltau

    return float(kendalltau(original, transformed).statistic)


def summarize(
    deltas_by_task: dict[str, float], deltas_by_seed: dict[int, float], *, seed: int = 0
) -> dict[str, Any]:
    """Mean, SD across seeds, Wilcoxon and Hodges-Lehmann (Walsh + bootstrap CIs) of task-level deltas."""
    task_deltas = list(deltas_by_task.values())
    seed_means = list(deltas_by_seed.values())
    low, high, achieved = walsh_interval(task_deltas)
    b_low, b_high = bootstrap_interval(task_deltas, seed=seed)
    return {
        "mean_delta": float(np.mean(task_deltas)) if task_deltas else math.nan,
        "sd_across_seeds": float(np.std(seed_means, ddof=1)) if len(seed_means) > 1 else math.nan,
        "tasks": len(task_deltas),
        "wilcoxon_p": wilcoxon_p(task_deltas),
        "hl_shift": hodges_lehmann(task_deltas) if task_deltas else math.nan,
        "hl_ci_walsh": [low, high],
        "hl_ci_walsh_confidence": achieved,
        "hl_ci_bootstrap": [b_low, b_high],
    }
