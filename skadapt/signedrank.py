"""The paired signed-rank test of the project: the verdicts over tasks (``evaluate``) and the robustness
deltas (``robustness``, which also inverts it into the Hodges-Lehmann interval) use this one test.

The test of deltas ``x`` is the exact conditional signed-rank test with Pratt's zeros: ``|x|`` is ranked
with midranks for ties, zeros included (they take the lowest ranks, then count for neither side); T+ is the
sum of the ranks of the positive deltas; its null distribution given these ranks comes from the 2^k equally
likely signs of the k non-zero deltas, counted exactly with Python integers (doubled midranks are
integers); two-sided ``p = min(1, 2 min(P(T+ <= t), P(T+ >= t)))``. With more than ``EXACT_MAX`` deltas it
is the normal approximation with the same tie-corrected conditional mean and variance, without continuity
correction. Without zeros or ties it is the classic exact test (scipy's ``wilcoxon(method="exact")``).

Pratt's zeros rather than Wilcoxon's (dropping the zeros before ranking; scipy's default,
``zero_method="wilcox"``), for both uses:

- A zero is a result, not a missing value: two models that score the same on a task (as an exported tier
  often does) were compared there. Pratt ranks every compared task, so the zeros stay in the ranking and
  count for neither side; dropping them tests a smaller set, as if those tasks had not been compared.
- Dropping zeros is not monotone in a shift of the deltas (Pratt 1959): the shifts theta it does not
  reject for ``x - theta`` need not form an interval (with random tied integer deltas, about 1 sample in
  150 at 95%), so no interval can agree with it. Pratt's
  T+ - E[T+] = (#{Walsh averages > theta} - #{Walsh averages < theta}) / 2 is monotone in theta, so
  robustness inverts this same test into its Hodges-Lehmann interval, and a verdict's p-value and a
  robustness p-value mean the same thing.

The same test: R's ``coin::wilcoxsign_test(distribution = "exact")`` (zero.method "Pratt" is its default)
and scipy's ``wilcoxon(zero_method="pratt", method=PermutationMethod())``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

import numpy as np

EXACT_MAX = 300
"""Up to this many deltas the signed-rank test is exact; beyond it, the normal approximation."""


@functools.lru_cache(maxsize=32)
def _lower_cumulative_counts(ranks: tuple[int, ...]) -> tuple[bytes, int]:
    """How many of the 2^k sign patterns of ``ranks`` have a positive-rank sum <= t, t = 0 .. sum // 2.

    Exact: the generating polynomial prod(1 + x^r) is evaluated at x = 2^bits (every count is at most 2^k
    < 2^bits), so its coefficients are the bit fields of one Python integer; terms above sum // 2 are cut.

    Returns:
        The cumulative counts packed as ``width``-byte little-endian integers, and ``width``.
    """
    half = sum(ranks) // 2
    width = len(ranks) // 8 + 1
    bits = 8 * width
    mask = (1 << (bits * (half + 1))) - 1
    poly = 1
    for rank in ranks:
        if rank <= half:
            poly = (poly + (poly << (bits * rank))) & mask
    raw = poly.to_bytes(width * (half + 1), "little")
    counts = (int.from_bytes(raw[k * width : (k + 1) * width], "little") for k in range(half + 1))
    packed = b"".join(c.to_bytes(width, "little") for c in itertools.accumulate(counts))
    return packed, width


def _lower_tail_count(ranks: tuple[int, ...], t: int) -> int:
    """Sign patterns of ``ranks`` with positive-rank sum <= t, for t <= sum(ranks) // 2."""
    if t < 0:
        return 0
    packed, width = _lower_cumulative_counts(ranks)
    return int.from_bytes(packed[t * width : (t + 1) * width], "little")


@functools.cache
def signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(T+ <= t) for t = 0 .. n(n+1)/2 under the null (exact integer counts, divided at the end)."""
    ranks = tuple(range(1, n + 1))
    total, patterns = n * (n + 1) // 2, 2**n
    half = total // 2
    return tuple(
        _lower_tail_count(ranks, t) / patterns
        if t <= half
        else (patterns - _lower_tail_count(ranks, total - t - 1)) / patterns
        for t in range(total + 1)
    )


def _doubled_midranks(values: np.ndarray) -> np.ndarray:
    """Twice the midranks of ``values`` (ties share the average rank), as integers."""
    _, group, sizes = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(sizes)
    return (2 * ends - sizes + 1)[group.ravel()]


def ranked_p_value(ranks: np.ndarray, signs: np.ndarray) -> float:
    """Two-sided p-value of the signed-rank test (module docstring), given the doubled midranks of
    ``|x|`` (zeros included) and the signs of ``x``."""
    nonzero = ranks[signs != 0]
    if len(nonzero) == 0:
        return 1.0
    total = int(nonzero.sum())
    positive = int(ranks[signs > 0].sum())
    lower = min(positive, total - positive)
    if len(ranks) > EXACT_MAX:
        sd = math.sqrt(float(np.sum(nonzero.astype(float) ** 2))) / 2
        return min(1.0, math.erfc((total / 2 - lower) / sd / math.sqrt(2)))
    unit = math.gcd(*nonzero.tolist())
    key = tuple(sorted(int(r) // unit for r in nonzero))
    return min(1.0, 2 * _lower_tail_count(key, lower // unit) / 2 ** len(key))


def signed_rank_test(deltas: Sequence[float]) -> tuple[float, float]:
    """The signed-rank test of ``deltas`` (module docstring).

    Returns:
        (W, p): ``W = min(T+, T-)``, the rank sums of the positive and of the negative deltas (midranks
        of ``|x|`` with the zeros ranked, then left out), scipy's two-sided statistic; ``p`` two-sided,
        1.0 when every delta is zero.
    """
    x = np.asarray(deltas, dtype=float)
    ranks, signs = _doubled_midranks(np.abs(x)), np.sign(x)
    positive, negative = int(ranks[signs > 0].sum()), int(ranks[signs < 0].sum())
    return min(positive, negative) / 2, ranked_p_value(ranks, signs)


def wilcoxon_p(deltas: Sequence[float]) -> float:
    """Two-sided signed-rank p-value of the deltas: exact conditional, Pratt's zeros, midranks (module
    docstring); NaN with fewer than two non-zero deltas."""
    d = np.asarray(deltas, dtype=float)
    if np.count_nonzero(d) < 2:
        return math.nan
    return signed_rank_test(d)[1]
