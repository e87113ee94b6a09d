"""Paired statistics of robustness deltas: Hodges-Lehmann shift with its Walsh-average confidence interval
(exact signed-rank distribution) and a percentile bootstrap, Wilcoxon, Holm, Kendall's tau."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def walsh_averages(deltas: Sequence[float]) -> np.ndarray:
    """All (d_i + d_j) / 2 for i <= j, sorted."""
    d = np.asarray(deltas, dtype=float)
    i, j = np.triu_indices(len(d))
    return np.sort((d[i] + d[j]) / 2)


def hodges_lehmann(deltas: Sequence[float]) -> float:
    """The one-sample Hodges-Lehmann shift: the median of the Walsh averages."""
    return float(np.median(walsh_averages(deltas)))


@functools.cache
def signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(T+ <= t) for t = 0 .. n(n+1)/2 under the null (exact, by counting subsets of ranks)."""
    total = n * (n + 1) // 2
    counts = [1] + [0] * total
    for rank in range(1, n + 1):
        for t in range(total, rank - 1, -1):
            counts[t] += counts[t - rank]
    cumulative = np.cumsum(counts) / 2**n
    return tuple(float(x) for x in cumulative)


def walsh_interval(deltas: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The distribution-free CI of the Hodges-Lehmann shift: ``[W_(c), W_(M+1-c)]`` of the sorted Walsh
    averages, c the largest integer with P(T+ <= c-1) <= alpha/2. Returns (low, high, achieved confidence);
    with too few deltas for the requested level it is the full range at the confidence it achieves."""
    walsh = walsh_averages(deltas)
    n, m = len(deltas), len(walsh)
    if n == 0:
        return math.nan, math.nan, math.nan
    cdf = signed_rank_cdf(n)
    alpha = 1 - confidence
    c = max((k for k in range(1, m + 1) if cdf[k - 1] <= alpha / 2), default=1)
    achieved = 1 - 2 * cdf[c - 1]
    return float(walsh[c - 1]), float(walsh[m - c]), achieved


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


def wilcoxon_p(deltas: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p-value (NaN with fewer than two non-zero deltas)."""
    from scipy.stats import wilcoxon

    d = np.asarray(deltas, dtype=float)
    if np.count_nonzero(d) < 2:
        return math.nan
    return float(wilcoxon(d).pvalue)


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
