"""Agreement statistics equal values computed by hand on a small fixed example."""

from __future__ import annotations

import json

import numpy as np
import pytest

from skadapt.annotate.agreement import agreement_markdown, agreement_report

# Three annotators, six items, ratings 0-5.
RATINGS = {
    "A": [0, 1, 2, 3, 4, 5],
    "B": [0, 1, 2, 3, 5, 5],
    "C": [1, 1, 2, 2, 4, 5],
}
ITEMS = [f"i{k}" for k in range(6)]


def as_mapping(ratings: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    return {name: dict(zip(ITEMS, map(float, values), strict=True)) for name, values in ratings.items()}


def pearson_by_hand(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return cov / (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** 0.5


def test_agreement_equals_hand_computed_values() -> None:
    report = agreement_report(as_mapping(RATINGS))
    pairs = {tuple(p["annotators"]): p for p in report["pairs"]}
    # exact agreement: A/B differ on item 4; A/C on items 0 and 3; B/C on items 0, 3 and 4
    assert pairs[("A", "B")]["accuracy"] == pytest.approx(5 / 6)
    assert pairs[("A", "C")]["accuracy"] == pytest.approx(4 / 6)
    assert pairs[("B", "C")]["accuracy"] == pytest.approx(3 / 6)
    # Cohen's kappa A/B: p_o = 5/6; p_e = sum_k pA(k) pB(k) = (1/6)(1+1+1+1+0+2)/6 = 1/6 -> (4/6)/(5/6)
    assert pairs[("A", "B")]["cohen_kappa"] == pytest.approx(0.8)
    assert pairs[("A", "B")]["pearson"] == pytest.approx(pearson_by_hand(RATINGS["A"], RATINGS["B"]))
    # Spearman A/C: Pearson of the rank vectors (ties get their average rank)
    ranks_c = [1.5, 1.5, 3.5, 3.5, 5, 6]  # C = 1,1,2,2,4,5
    assert pairs[("A", "C")]["spearman"] == pytest.approx(pearson_by_hand([1, 2, 3, 4, 5, 6], ranks_c))
    # Fleiss' kappa: P_i = (sum n_ij^2 - 3)/6 = 1/3, 1, 1, 1/3, 1/3, 1 -> mean 2/3; category shares
    # 2,4,4,2,2,4 of 18 -> P_e = 60/324 = 5/27; kappa = (2/3 - 5/27)/(1 - 5/27) = 13/22
    assert report["fleiss_kappa"] == pytest.approx(13 / 22)
    # Krippendorff's alpha (interval): D_o = 6/18 (units 0, 3 and 4 each add 2); over all 18 values
    # sum_{i<j} (v_i - v_j)^2 = 18 * 170 - 46^2 = 944, so D_e = 2 * 944 / (18 * 17); alpha = 1 - D_o/D_e
    assert report["krippendorff_alpha_interval"] == pytest.approx(1 - (6 / 18) / (2 * 944 / (18 * 17)))


def test_against_the_intended_scores() -> None:
    reference = dict(zip(ITEMS, map(float, RATINGS["A"]), strict=True))
    report = agreement_report(as_mapping(RATINGS), reference)
    by_name = {row["annotator"]: row for row in report["vs_reference"]}
    assert by_name["A"]["accuracy"] == 1.0 and by_name["A"]["cohen_kappa"] == pytest.approx(1.0)
    assert by_name["B"]["cohen_kappa"] == pytest.approx(0.8)


def test_agreement_needs_two_annotators_and_common_items() -> None:
    with pytest.raises(ValueError, match="two annotators"):
        agreement_report(as_mapping({"A": RATINGS["A"]}))
    partial = as_mapping(RATINGS)
    partial["C"] = {"i0": 1.0}
    with pytest.raises(ValueError, match="rated by every annotator"):
        agreement_report(partial)
    assert np.isfinite(agreement_report(as_mapping(RATINGS))["fleiss_kappa"])


def strict_json(report: object) -> object:
    """``report`` through JSON as a strict parser reads it (NaN is not JSON)."""
    return json.loads(json.dumps(report), parse_constant=lambda token: pytest.fail(f"{token} in the JSON"))


def test_an_annotator_with_one_rating_value_makes_correlations_not_defined() -> None:
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import cohen_kappa_score

    constant = {**RATINGS, "C": [3] * 6}
    report = agreement_report(as_mapping(constant), dict.fromkeys(ITEMS, 3.0))
    pairs = {tuple(p["annotators"]): p for p in strict_json(report)["pairs"]}
    with pytest.warns(RuntimeWarning):  # the oracle: scipy's correlations of a constant vector are NaN
        assert np.isnan(pearsonr(RATINGS["A"], [3] * 6).statistic)
    for pair in (("A", "C"), ("B", "C")):
        for name in ("pearson", "spearman"):
            assert pairs[pair][name] is None
            assert pairs[pair][f"{name}_note"] == "not defined: one rating value only (C: 3)"
        # Cohen's kappa stays defined (p_e = share of 3 in the other ratings): equal to sklearn's, bit for bit
        assert pairs[pair]["cohen_kappa"] == cohen_kappa_score(constant[pair[0]], constant["C"])
    assert pairs[("A", "B")]["pearson"] == pearsonr(RATINGS["A"], RATINGS["B"]).statistic
    assert pairs[("A", "B")]["spearman"] == spearmanr(RATINGS["A"], RATINGS["B"]).statistic
    assert "pearson_note" not in pairs[("A", "B")]
    intended = {row["annotator"]: row for row in report["vs_reference"]}  # the intended level is 3 throughout
    assert intended["A"]["pearson_note"] == "not defined: one rating value only (intended: 3)"
    assert intended["A"]["cohen_kappa"] == cohen_kappa_score(RATINGS["A"], [3] * 6)  # defined: p_e = 1/6
    with pytest.warns(UserWarning):  # sklearn: both raters use one label, chance agreement 1 -> NaN
        assert np.isnan(cohen_kappa_score([3] * 6, [3] * 6))
    assert intended["C"]["cohen_kappa"] is None
    assert intended["C"]["cohen_kappa_note"] == "not defined: one rating value only (C: 3, intended: 3)"
    assert report["mean_rating_vs_reference"]["spearman"] is None
    text = agreement_markdown(report)
    assert "| A / C | 0.167 | not defined | not defined | 0.000 |" in text
    assert "- A / C: Pearson, Spearman not defined: one rating value only (C: 3)" in text
    assert (
        "- C / intended: Pearson, Spearman, Cohen's κ not defined: one rating value only (C: 3, intended: 3)"
        in text
    )
    assert "nan" not in text.lower()
