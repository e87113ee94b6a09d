"""Every statistic of the project against an independent implementation, on seeded random cases with ties,
zeros and (for Krippendorff's alpha) missing ratings.

Oracles: scipy (exact signed-rank distribution, permutation tests, normal approximation), brute-force
enumeration of sign patterns and pairs, hand formulas, and R outputs recorded in tests/data/r_wilcox/
(made by make_r_outputs.R there; CI has no R).
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from skadapt.annotate.agreement import agreement_report, fleiss_kappa, krippendorff_alpha, pair_statistics
from skadapt.evaluate.stats import compare
from skadapt.robustness.stats import (
    hodges_lehmann,
    holm,
    kendall_tau,
    signed_rank_cdf,
    walsh_interval,
    wilcoxon_p,
)

R_OUTPUTS = json.loads((Path(__file__).parent / "data" / "r_wilcox" / "r_outputs.json").read_text())
R_VECTORS = sorted(name for name in R_OUTPUTS if not name.startswith("_"))


# ---- independent implementations -------------------------------------------------------------------


def brute_force_p(x: np.ndarray, zero_method: str = "pratt") -> float:
    """Two-sided exact conditional signed-rank p by enumerating every sign pattern of the non-zero values
    (midranks of |x|; Pratt: zeros ranked, then left out; Wilcoxon: zeros dropped before ranking)."""
    x = np.asarray(x, dtype=float)
    if zero_method == "wilcox":
        x = x[x != 0]
    ranks = sps.rankdata(np.abs(x))
    free = ranks[x != 0]
    observed = ranks[x > 0].sum()
    signs = (np.arange(2 ** len(free))[:, None] >> np.arange(len(free))) & 1
    null = signs @ free
    low, high = np.mean(null <= observed + 1e-9), np.mean(null >= observed - 1e-9)
    return min(1.0, 2 * min(low, high))


def scipy_lower_tail(n: int, t: int) -> float:
    """P(T+ <= t) for n untied ranks, t below the mean: half of scipy's exact two-sided p of a vector whose
    T+ is t."""
    positive, rest = set(), t
    for rank in range(n, 0, -1):
        if rank <= rest:
            positive.add(rank)
            rest -= rank
    d = [r if r in positive else -r for r in range(1, n + 1)]
    return float(sps.wilcoxon(d, method="exact").pvalue) / 2


def classic_interval(d: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """[W_(c), W_(M+1-c)] with c the largest integer with P(T+ <= c-1) <= alpha/2 (scipy's distribution,
    binary search), and its confidence 1 - 2 P(T+ <= c-1)."""
    n = len(d)
    walsh = sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(d.tolist(), 2))
    half_alpha = (1 - confidence) / 2
    lo, hi = 1, (n * (n + 1) // 2 + 1) // 2  # invariant: P(T+ <= lo-1) <= alpha/2 unless lo = 1
    if scipy_lower_tail(n, 0) > half_alpha:
        return walsh[0], walsh[-1], 1 - 2 * scipy_lower_tail(n, 0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if scipy_lower_tail(n, mid - 1) <= half_alpha else (lo, mid - 1)
    return walsh[lo - 1], walsh[len(walsh) - lo], 1 - 2 * scipy_lower_tail(n, lo - 1)


def inversion_by_brute_force(d: np.ndarray, alpha: float) -> tuple[float, float, float, bool]:
    """The closure of the shifts brute_force_p does not reject, over the distinct Walsh averages and the
    midpoints between them; achieved from the rejected midpoints; whether the accepted shifts are one run."""
    points = np.unique([(a + b) / 2 for a, b in itertools.combinations_with_replacement(d.tolist(), 2)])
    mids = (points[:-1] + points[1:]) / 2
    grid = np.concatenate([[points[0] - 1], np.ravel(np.column_stack([points, [*mids, np.nan]]))[:-1]])
    grid = np.append(grid, points[-1] + 1)
    p = np.array([brute_force_p(d - theta) for theta in grid])
    accepted = np.flatnonzero(p > alpha)
    if accepted[0] == 0:
        return points[0], points[-1], 1 - p[0], True
    low = points[points <= grid[accepted[0]]].max()
    high = points[points >= grid[accepted[-1]]].min()
    stretches = grid[0::2], p[0::2]
    outside = stretches[1][(stretches[0] < low) | (stretches[0] > high)]
    contiguous = bool(np.all(np.diff(accepted) == 1))
    return low, high, 1 - outside.max(), contiguous


def tied_integers(rng: np.random.Generator, n: int, low: int = -3, high: int = 5) -> np.ndarray:
    """Integer deltas with ties and zeros, at least two non-zero."""
    while True:
        d = rng.integers(low, high + 1, n).astype(float)
        if np.count_nonzero(d) >= 2:
            return d


# ---- signed-rank distribution and p-values ---------------------------------------------------------


@pytest.mark.parametrize("n", [5, 12, 33, 62, 63, 64, 71, 100, 150, 200])
def test_signed_rank_distribution_equals_scipy_exact(n: int) -> None:
    cdf = signed_rank_cdf(n)
    total = n * (n + 1) // 2
    assert len(cdf) == total + 1 and cdf[0] == 2.0**-n and cdf[-1] == 1.0
    assert all(a <= b for a, b in itertools.pairwise(cdf))
    assert cdf[total // 3] + cdf[total - total // 3 - 1] == pytest.approx(1, abs=1e-15)  # symmetry
    critical = next(t for t in range(total) if cdf[t] > 0.025)
    for t in {0, 1, n, max(critical - 1, 0), critical, total // 4, (total - 1) // 2}:
        assert cdf[t] == pytest.approx(scipy_lower_tail(n, t), rel=1e-9, abs=0)


@pytest.mark.parametrize("seed", range(6))
def test_untied_p_values_equal_scipy_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in rng.integers(5, 201, 3):
        d = rng.normal(0.15, 1, n)
        assert wilcoxon_p(d) == pytest.approx(sps.wilcoxon(d, method="exact").pvalue, rel=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_tied_p_values_equal_full_enumeration(seed: int) -> None:
    """Ties and zeros, n <= 12: ours = brute-force enumeration = scipy's permutation test over all 2^n sign
    flips with Pratt's zeros."""
    rng = np.random.default_rng(seed)
    for n in rng.integers(5, 13, 3):
        d = tied_integers(rng, n, -2, 4)
        exact = brute_force_p(d)
        assert wilcoxon_p(d) == pytest.approx(exact, rel=1e-12)
        method = sps.PermutationMethod(n_resamples=2**n)
        assert sps.wilcoxon(d, zero_method="pratt", method=method).pvalue == pytest.approx(exact, abs=1e-12)


def test_large_samples_use_scipys_normal_approximation() -> None:
    rng = np.random.default_rng(11)
    d = rng.integers(-4, 7, 400).astype(float)  # beyond EXACT_MAX, ties and zeros
    expected = sps.wilcoxon(d, zero_method="pratt", method="asymptotic").pvalue
    assert wilcoxon_p(d) == pytest.approx(expected, rel=1e-9)
    # at n = 250 the exact test and the normal approximation nearly agree
    d = rng.integers(-4, 6, 250).astype(float)
    approx = sps.wilcoxon(d, zero_method="pratt", method="asymptotic").pvalue
    assert wilcoxon_p(d) == pytest.approx(approx, abs=0.01)
    # the exact 2.5% point of T+ for n = 200 is where the normal distribution puts it
    cdf, mean, sd = signed_rank_cdf(200), 200 * 201 / 4, math.sqrt(200 * 201 * 401 / 24)
    critical = next(t for t in range(len(cdf)) if cdf[t] > 0.025)
    assert critical == pytest.approx(mean - 1.959964 * sd, abs=2)


# ---- Walsh interval -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_untied_interval_is_the_classic_order_statistic_interval(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 201))
    d = rng.normal(rng.uniform(-0.5, 0.5), 1, n)
    confidence = [0.95, 0.9, 0.99][seed % 3]
    low, high, achieved = walsh_interval(d, confidence)
    c_low, c_high, c_achieved = classic_interval(d, confidence)
    assert (low, high) == (c_low, c_high)
    assert achieved == pytest.approx(c_achieved, rel=1e-9)
    assert low <= hodges_lehmann(d) <= high


@pytest.mark.parametrize("n", [63, 64, 65, 71])
def test_no_overflow_from_n_63(n: int) -> None:
    d = np.random.default_rng(n).normal(0.1, 1, n)
    low, high, achieved = walsh_interval(d)
    assert low <= hodges_lehmann(d) <= high
    assert (low, high) == classic_interval(d, 0.95)[:2]
    assert 0.95 <= achieved < 0.951


@pytest.mark.parametrize("seed", range(8))
def test_tied_interval_is_the_inversion_of_the_enumerated_test(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    for n in rng.integers(5, 13, 2):
        d = tied_integers(rng, n, -2, 4) / (2 if seed % 2 else 1)
        confidence = [0.95, 0.9][seed % 2]
        expected_low, expected_high, expected_achieved, contiguous = inversion_by_brute_force(
            d, 1 - confidence
        )
        low, high, achieved = walsh_interval(d, confidence)
        assert contiguous
        assert (low, high) == (expected_low, expected_high)
        assert achieved == pytest.approx(expected_achieved, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_zero_inside_the_interval_iff_the_test_does_not_reject(seed: int) -> None:
    """0 inside the interval: p > alpha; outside: p <= alpha. At an end (0 a Walsh average, common with
    integer deltas) the interval includes it by closure while the test at exactly 0 may reject."""
    rng = np.random.default_rng(300 + seed)
    seen = {"inside": 0, "outside": 0, "end": 0}
    for _ in range(12):
        d = tied_integers(rng, int(rng.integers(5, 41)), -3, int(rng.integers(3, 7)))
        low, high, _ = walsh_interval(d)
        p = wilcoxon_p(d)
        if low < 0 < high:
            assert p > 0.05, (d.tolist(), low, high, p)
            seen["inside"] += 1
        elif not low <= 0 <= high:
            assert p <= 0.05, (d.tolist(), low, high, p)
            seen["outside"] += 1
        else:
            seen["end"] += 1
    assert seen["inside"] >= 2 and seen["outside"] >= 1, seen


# ---- R ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", R_VECTORS)
def test_against_r(name: str) -> None:
    r = R_OUTPUTS[name]
    d = np.array(r["d"])
    low, high, achieved = walsh_interval(d)
    if name.startswith("untied"):  # R's exact wilcox.test: same p, interval, confidence and estimate
        assert r["wilcox_test"]["method"] == "Wilcoxon signed rank exact test"
        assert wilcoxon_p(d) == pytest.approx(r["wilcox_test"]["p"], rel=1e-9)
        assert [low, high] == pytest.approx(r["wilcox_test"]["conf_int"], rel=1e-12, abs=1e-12)
        assert achieved == pytest.approx(r["wilcox_test"]["achieved_exact"], rel=1e-9)
        assert hodges_lehmann(d) == pytest.approx(r["wilcox_test"]["estimate"], rel=1e-12)
    if "coin_pratt_p" in r:  # coin's exact conditional test with Pratt's zeros, and its inversion in R
        assert wilcoxon_p(d) == pytest.approx(r["coin_pratt_p"], rel=1e-9)
        inversion = r["coin_inversion"]
        assert inversion["contiguous"]
        assert [low, high] == pytest.approx([inversion["low"], inversion["high"]], abs=1e-9)


def test_the_tied_vector_of_the_issue_against_r() -> None:
    """R 4.2's wilcox.test cannot be exact with ties: normal approximation with continuity correction and an
    80% interval (95% is "not achievable"); exactRankTests::wilcox.exact has our p but compares the statistic
    at each Walsh average with the null of the data at 0, giving [-1, 1]. Inverting the test gives [0, 1]:
    any shift in (-1, 0) leaves 7 positive deltas larger than 3 negative ones, p = 2/128."""
    r = R_OUTPUTS["tied_signs"]
    d = np.array(r["d"])
    assert walsh_interval(d)[:2] == (0.0, 1.0)
    assert wilcoxon_p(d) == r["wilcox_exact"]["p"] == r["coin_pratt_p"] == 2 * 176 / 1024
    assert r["wilcox_exact"]["conf_int"] == [-1, 1]
    assert r["wilcox_test"]["conf_level"] == pytest.approx(0.8)
    assert r["wilcox_test"]["conf_int"] == pytest.approx([0, 1], abs=1e-3)
    assert brute_force_p(d + 0.5) == 2 / 128  # theta = -0.5


# ---- Hodges-Lehmann, Holm, Kendall ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_hodges_lehmann_is_the_median_of_pairwise_averages(seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    for n in (1, 2, int(rng.integers(3, 60))):
        d = rng.integers(-5, 6, n) / 2 if seed % 2 else rng.normal(0, 1, n)
        pairs = [(a + b) / 2 for a, b in itertools.combinations_with_replacement(d.tolist(), 2)]
        assert hodges_lehmann(d) == statistics.median(pairs)


def holm_by_hand(p: list[float]) -> list[float]:
    finite = [i for i, v in enumerate(p) if not math.isnan(v)]
    order = sorted(finite, key=lambda i: p[i])
    adjusted, running = [math.nan] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * p[i]))
        adjusted[i] = running
    return adjusted


@pytest.mark.parametrize("seed", range(5))
def test_holm_equals_a_hand_implementation(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    p = rng.uniform(0, 0.2, int(rng.integers(1, 12))).round(3).tolist()  # rounding makes ties
    p[int(rng.integers(len(p)))] = math.nan
    assert holm(p) == pytest.approx(holm_by_hand(p), nan_ok=True)


def tau_b_by_pairs(x: list[float], y: list[float]) -> float:
    concordant = discordant = only_x = only_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            only_x += 1
        elif dy == 0:
            only_y += 1
        elif dx * dy > 0:
            concordant += 1
        else:
            discordant += 1
    c, d = concordant, discordant
    return (c - d) / math.sqrt((c + d + only_x) * (c + d + only_y))


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_equals_pair_counting(seed: int) -> None:
    rng = np.random.default_rng(600 + seed)
    n = int(rng.integers(5, 30))
    x, y = rng.integers(0, 6, n).tolist(), rng.integers(0, 6, n).tolist()
    assert kendall_tau(x, y) == pytest.approx(tau_b_by_pairs(x, y), rel=1e-12)


# ---- paired comparison of models (skadapt.evaluate.stats) --------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_compare_equals_enumeration_and_hand_tost(seed: int) -> None:
    rng = np.random.default_rng(700 + seed)
    n = int(rng.integers(5, 14))  # scipy's default is exact up to 13 pairs, with ties and zeros too
    a = rng.integers(60, 70, n) / 2
    b = a + rng.integers(-3, 5, n) / 2
    margin, alpha = [2.0, 1.0][seed % 2], [0.05, 0.1][seed % 2]
    result = compare("a", a.tolist(), "b", b.tolist(), margin=margin, alpha=alpha)
    diffs = b - a
    assert result.wilcoxon_p == pytest.approx(brute_force_p(diffs, "pratt"), rel=1e-9)
    mean, se = diffs.mean(), diffs.std(ddof=1) / math.sqrt(n)
    half = sps.t.ppf(1 - alpha, n - 1) * se
    assert (result.ci_low, result.ci_high) == pytest.approx((mean - half, mean + half), rel=1e-12)
    tost = max(sps.t.sf((mean + margin) / se, n - 1), sps.t.cdf((mean - margin) / se, n - 1))
    assert result.tost_p == pytest.approx(tost, rel=1e-9)
    assert result.equivalent == (tost < alpha)


@pytest.mark.parametrize("seed", range(6))
def test_verdicts_and_robustness_use_one_wilcoxon_convention_on_zero_differences(seed: int) -> None:
    """Tasks on which two models score the same (zero differences, as an exported tier often has): the
    verdicts' test over tasks is scipy's signed-rank test with Pratt's zeros, exact over all 2^n sign
    flips — the robustness test — not scipy's default of dropping the zeros."""
    rng = np.random.default_rng(900 + seed)
    n = int(rng.integers(6, 13))
    a = np.round(rng.uniform(40, 80, n), 2)
    diffs = rng.integers(-2, 5, n) / 4
    diffs[: int(rng.integers(2, 4))] = 0.0
    b = a + diffs
    result = compare("a", a.tolist(), "b", b.tolist())
    d = b - a  # as compare computes it (float rounding included)
    pratt = sps.wilcoxon(d, zero_method="pratt", method=sps.PermutationMethod(n_resamples=2**n))
    assert result.wilcoxon_p == pytest.approx(pratt.pvalue, abs=1e-12)
    assert result.wilcoxon_statistic == pytest.approx(pratt.statistic)
    assert result.wilcoxon_p == pytest.approx(wilcoxon_p(d), abs=1e-15)


def test_the_zero_convention_changes_the_verdicts_p_value() -> None:
    """The case that tells the conventions apart (scipy as oracle for both)."""
    d = [0.0, 0.0, 2.0, -0.5, -1.0, 2.0, -1.0]  # zeros dropped: p = 0.75; Pratt: p = 1
    a = [50.0] * len(d)
    b = [50.0 + x for x in d]
    pratt = sps.wilcoxon(d, zero_method="pratt", method=sps.PermutationMethod(n_resamples=2 ** len(d)))
    dropped = sps.wilcoxon(d)  # scipy's default: zeros dropped
    assert pratt.pvalue != pytest.approx(dropped.pvalue)
    assert compare("a", a, "b", b).wilcoxon_p == pytest.approx(pratt.pvalue, abs=1e-12)


# ---- agreement ---------------------------------------------------------------------------------------


def cohen_by_hand(x: list[int], y: list[int]) -> float:
    n = len(x)
    observed = sum(a == b for a, b in zip(x, y, strict=True)) / n
    expected = sum(x.count(k) * y.count(k) for k in set(x) | set(y)) / n**2
    return (observed - expected) / (1 - expected)


def fleiss_by_hand(matrix: np.ndarray) -> float:
    raters, items = matrix.shape
    categories = np.unique(matrix)
    counts = np.array([[np.sum(matrix[:, i] == c) for c in categories] for i in range(items)])
    shares = counts.sum(axis=0) / (items * raters)
    agreement = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    expected = np.sum(shares**2)
    return (agreement.mean() - expected) / (1 - expected)


def krippendorff_interval_by_hand(matrix: np.ndarray) -> float:
    """Coincidence-matrix form: D_o from the value pairs within units (weight 1/(m_u - 1)), D_e from all
    pairs of pairable values."""
    units = [col[~np.isnan(col)] for col in matrix.T]
    units = [u for u in units if len(u) >= 2]
    values = np.concatenate(units)
    total = len(values)
    observed = sum(np.sum((u[:, None] - u[None, :]) ** 2) / (len(u) - 1) for u in units) / total
    expected = np.sum((values[:, None] - values[None, :]) ** 2) / (total * (total - 1))
    return 1 - observed / expected


@pytest.mark.parametrize("seed", range(6))
def test_agreement_equals_hand_formulas(seed: int) -> None:
    rng = np.random.default_rng(800 + seed)
    raters, items = int(rng.integers(2, 6)), int(rng.integers(10, 60))
    truth = rng.integers(0, 6, items)
    matrix = np.clip(truth + rng.integers(-1, 2, (raters, items)), 0, 5).astype(float)
    x, y = matrix[0], matrix[1]
    assert pair_statistics(x, y)["cohen_kappa"] == pytest.approx(
        cohen_by_hand(x.astype(int).tolist(), y.astype(int).tolist()), rel=1e-12
    )
    assert fleiss_kappa(matrix) == pytest.approx(fleiss_by_hand(matrix), rel=1e-12)
    missing = matrix.copy()
    missing[rng.random(missing.shape) < 0.2] = np.nan
    assert krippendorff_alpha(missing) == pytest.approx(krippendorff_interval_by_hand(missing), rel=1e-9)
    assert krippendorff_alpha(matrix) == pytest.approx(krippendorff_interval_by_hand(matrix), rel=1e-9)


def test_kappas_reject_ratings_that_are_not_whole_numbers() -> None:
    x, y = np.array([0.0, 2.6, 3.0, 4.0]), np.array([0.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"Cohen's kappa needs ratings on an integer scale.*2\.6"):
        pair_statistics(x, y)
    with pytest.raises(ValueError, match=r"Fleiss' kappa .*integer scale.*2\.6"):
        fleiss_kappa(np.vstack([x, y]))
    ratings = {name: dict(zip("abcd", values, strict=True)) for name, values in (("A", x), ("B", y))}
    with pytest.raises(ValueError, match="integer scale"):
        agreement_report(ratings)
    assert pair_statistics(y, np.array([0.0, 2.0, 3.0, 3.0]))["cohen_kappa"] == pytest.approx(
        cohen_by_hand([0, 2, 3, 4], [0, 2, 3, 3])
    )


def test_agreement_statistics_are_the_libraries_or_none_where_the_libraries_give_nan() -> None:
    """Few items on a scale of 1-3 values, so constant ratings are frequent: each statistic equals the
    library's bit for bit where that is a number, and is None with a "not defined" note where it is NaN."""
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats import inter_rater

    rng = np.random.default_rng(31)
    undefined = defined = 0
    for _ in range(300):
        raters, items, values = int(rng.integers(2, 4)), int(rng.integers(3, 7)), int(rng.integers(1, 4))
        matrix = rng.integers(0, values, (raters, items)).astype(float)
        ratings = {f"r{k}": dict(zip("abcdef", row, strict=False)) for k, row in enumerate(matrix)}
        report = agreement_report(ratings)
        json.dumps(report, allow_nan=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table, _ = inter_rater.aggregate_raters(matrix.T.astype(int))
            oracles = [(report, "fleiss_kappa", inter_rater.fleiss_kappa(table, method="fleiss"))]
            for pair, (x, y) in zip(report["pairs"], itertools.combinations(matrix, 2), strict=True):
                oracles += [
                    (pair, "pearson", sps.pearsonr(x, y).statistic),
                    (pair, "spearman", sps.spearmanr(x, y).statistic),
                    (pair, "cohen_kappa", cohen_kappa_score(x.astype(int), y.astype(int))),
                ]
        for source, name, oracle in oracles:
            if np.isnan(oracle):
                undefined += 1
                assert source[name] is None, (name, matrix)
                assert source[f"{name}_note"].startswith("not defined: one rating value only ("), name
            else:
                defined += 1
                assert source[name] == float(oracle) and f"{name}_note" not in source, (name, matrix)
    assert undefined > 100 and defined > 100  # both cases were met
