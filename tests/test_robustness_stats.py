"""Robustness statistics equal hand-computed or library values on fixed vectors (random cases against
independent implementations: tests/test_stats_oracles.py)."""

from __future__ import annotations

import itertools
import math

import pytest
from scipy.stats import wilcoxon

from skadapt.robustness.diversity import length_ratio, word_edit_distance
from skadapt.robustness.stats import (
    bootstrap_interval,
    hodges_lehmann,
    holm,
    kendall_tau,
    signed_rank_cdf,
    walsh_averages,
    walsh_interval,
    wilcoxon_p,
)

DELTAS = [-0.5, 0.3, 1.1, 1.4, 2.0, 2.2, 2.9, 3.1, 3.8, 4.5]


def test_hodges_lehmann_by_hand() -> None:
    # Walsh averages of 1, 2, 3: 1, 1.5, 2, 2, 2.5, 3 -> median 2
    assert list(walsh_averages([3, 1, 2])) == [1, 1.5, 2, 2, 2.5, 3]
    assert hodges_lehmann([1, 2, 3]) == 2
    assert hodges_lehmann([0, 0, 10]) == 2.5  # averages 0, 0, 0, 5, 5, 10


def test_signed_rank_distribution_by_hand() -> None:
    # subsets of {1..10} with rank sum k = 0..8: 1, 1, 1, 2, 2, 3, 4, 5, 6 -> 25 of 1024
    assert signed_rank_cdf(10)[8] == pytest.approx(25 / 1024)
    assert signed_rank_cdf(10)[9] == pytest.approx(33 / 1024)
    brute = sum(1 for r in range(11) for s in itertools.combinations(range(1, 11), r) if sum(s) <= 8)
    assert brute == 25


def test_signed_rank_distribution_is_exact_beyond_int64() -> None:
    # from n = 63 the counts exceed int64 (the issue: inverted intervals for n = 64..71)
    for n in (63, 64, 71, 120):
        cdf = signed_rank_cdf(n)
        assert cdf[0] == 2.0**-n and cdf[1] == 2 * 2.0**-n and cdf[-1] == 1.0
        assert all(a <= b for a, b in itertools.pairwise(cdf))
    # 2^-100 * (subsets of 1..100 summing to at most 3: {}, {1}, {2}, {3}, {1, 2})
    assert signed_rank_cdf(100)[3] == 5 / 2**100
    d = [(-1) ** k * math.sqrt(k + 2) / 4 + 0.05 for k in range(64)]  # no ties, no repeated Walsh averages
    low, high, achieved = walsh_interval(d)
    assert low < hodges_lehmann(d) < high and achieved == pytest.approx(0.95, abs=1e-3)


def test_ties_and_zeros_by_hand() -> None:
    # The vector: |d| all tied (midrank 5.5), 7 positive: T+ = 38.5 = 5.5 * 7, null distribution
    # 5.5 * Bin(10, 1/2); p = 2 P(Bin >= 7) = 2 * 176/1024. Any shift theta in (-1, 0) makes the 3
    # negatives the 3 smallest |d - theta| (ranks 1-3) and the 7 positives ranks 4-10: T+ = 49, reached only
    # when all 7 are positive: p = 2/128, rejected; in (0, 1) T+ = 28 of 55, p ~ 1. So the 95% interval is
    # [0, 1] (R's wilcox.exact says [-1, 1]; tests/data/r_wilcox).
    d = [-1, 1, -1, 1, 1, 1, 1, -1, 1, 1]
    assert wilcoxon_p(d) == 2 * 176 / 1024
    assert walsh_interval(d)[:2] == (0.0, 1.0)
    # Pratt's zeros: d = 0, -1, -1, 2, 2 -> |d| ranks 1, 2.5, 2.5, 4.5, 4.5; the zero's rank is left out:
    # T+ = 9 of 14; of the 16 sign patterns of (2.5, 2.5, 4.5, 4.5), 6 have T+ >= 9 -> p = 2 * 6/16.
    # (Wilcoxon's zeros would rank -1, -1, 2, 2 as 1.5, 1.5, 3.5, 3.5: p = 2 * 4/16.)
    assert wilcoxon_p([0, -1, -1, 2, 2]) == 0.75
    assert math.isnan(wilcoxon_p([0, 0, 3]))  # fewer than two non-zero deltas


def test_walsh_interval_uses_the_tabled_critical_value() -> None:
    # n = 10, two-sided 95%: the signed-rank table's lower critical value is 8, so the CI is
    # [W_(9), W_(47)] of the 55 sorted Walsh averages, at confidence 1 - 2 * 25/1024
    walsh = sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(DELTAS, 2))
    low, high, achieved = walsh_interval(DELTAS)
    assert (low, high) == (walsh[8], walsh[46])
    assert achieved == pytest.approx(1 - 50 / 1024)
    # too few deltas for 95%: the full range, at the confidence it has (n = 4: 1 - 2/16)
    low, high, achieved = walsh_interval([1.0, 2.0, 3.0, 4.0])
    assert (low, high, achieved) == (1.0, 4.0, pytest.approx(0.875))


def test_bootstrap_wilcoxon_holm_kendall() -> None:
    low, high = bootstrap_interval(DELTAS, samples=500, seed=3)
    assert low <= hodges_lehmann(DELTAS) <= high
    assert (low, high) == bootstrap_interval(DELTAS, samples=500, seed=3)
    assert wilcoxon_p(DELTAS) == pytest.approx(wilcoxon(DELTAS).pvalue)
    # Holm by hand: 0.01*3 = 0.03; 0.03*2 = 0.06; 0.04*1 -> max(0.06, 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)  # 2 concordant, 1 discordant


def test_diversity_measures_by_hand() -> None:
    assert word_edit_distance("Mačka spí na gauči.", "Mačka leží na gauči.") == pytest.approx(1 / 4)
    assert word_edit_distance("a b c", "a b c d e") == pytest.approx(2 / 5)
    assert length_ratio("a b", "a b c d") == 2.0


def test_variants_with_too_few_survivors_are_skipped() -> None:
    from skadapt.robustness.run import enough_survivors

    assert enough_survivors(10, 5) and not enough_survivors(10, 6)  # at least 5 items
    assert enough_survivors(100, 90) and not enough_survivors(100, 91)  # and at least 10%
