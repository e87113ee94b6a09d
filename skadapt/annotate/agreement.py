"""Agreement between annotators, with the libraries' own implementations: scipy (Pearson, Spearman),
sklearn (Cohen's kappa), statsmodels (Fleiss' kappa) and krippendorff (alpha)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

Ratings = Mapping[str, Mapping[str, float]]
"""annotator -> item id -> rating."""


def common_items(ratings: Ratings) -> list[str]:
    """Items every annotator rated, sorted."""
    sets = [set(items) for items in ratings.values()]
    return sorted(set.intersection(*sets)) if sets else []


def _matrix(ratings: Ratings, items: list[str]) -> np.ndarray:
    return np.array([[ratings[a][i] for i in items] for a in ratings], dtype=float)


def _integer_categories(values: np.ndarray, statistic: str) -> np.ndarray:
    """``values`` as integer categories for a kappa statistic.

    Raises:
        ValueError: Some value is not a whole number (the kappas are for the integer rating scale of the
            sheets; truncating 2.6 to 2 would silently change the rating).
    """
    values = np.asarray(values, dtype=float)
    bad = values[~np.isfinite(values) | (values != np.rint(values))]
    if bad.size:
        shown = ", ".join(f"{v:g}" for v in np.unique(bad)[:10])
        raise ValueError(f"{statistic} needs ratings on an integer scale; not whole numbers: {shown}")
    return values.astype(int)


def pair_statistics(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Exact agreement, Pearson, Spearman and Cohen's kappa of two rating vectors.

    Raises:
        ValueError: A rating is not a whole number (see ``_integer_categories``).
    """
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import cohen_kappa_score

    return {
        "accuracy": float(np.mean(x == y)),
        "pearson": float(pearsonr(x, y).statistic),
        "spearman": float(spearmanr(x, y).statistic),
        "cohen_kappa": float(
            cohen_kappa_score(
                _integer_categories(x, "Cohen's kappa"), _integer_categories(y, "Cohen's kappa")
            )
        ),
    }


FLEISS_UNDEFINED = "not defined: every rating is the same, so chance agreement is 1 (0/0)"


def fleiss_kappa(matrix: np.ndarray) -> float:
    """Fleiss' kappa of an annotators x items matrix of integer categories.

    Raises:
        ValueError: A rating is not a whole number (see ``_integer_categories``).
    """
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    table, _ = aggregate_raters(_integer_categories(matrix, "Fleiss' kappa").T)
    return float(statsmodels_fleiss(table, method="fleiss"))


def alpha_undefined(matrix: np.ndarray) -> str | None:
    """Why Krippendorff's alpha of an annotators x items matrix (NaN = not rated) is not defined, or None.

    Alpha is ``1 - D_o / D_e`` over the pairable values (those of items rated two or more times); with fewer
    than two distinct pairable values both disagreements are 0 and alpha is 0/0.
    """
    matrix = np.asarray(matrix, dtype=float)
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    values = np.unique(pairable[~np.isnan(pairable)])
    if values.size == 0:
        return "not defined: no item is rated by two or more annotators"
    if values.size == 1:
        return (
            f"not defined: every rating of the items rated by two or more annotators is {values[0]:g}, so "
            "there is no disagreement to compare with (0/0)"
        )
    return None


def krippendorff_alpha(matrix: np.ndarray, level: str = "interval") -> float | None:
    """Krippendorff's alpha of an annotators x items matrix (NaN = not rated); None where it is not defined
    (:func:`alpha_undefined` says why)."""
    import krippendorff

    if alpha_undefined(matrix) is not None:
        return None
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def agreement_report(ratings: Ratings, reference: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Per annotator pair accuracy, Pearson, Spearman and Cohen's kappa; overall Fleiss' kappa and
    Krippendorff's alpha (interval); with ``reference`` (the intended scores), each annotator against it.

    Computed on the items every annotator rated.
    """
    items = common_items(ratings)
    if len(ratings) < 2:
        raise ValueError("agreement needs at least two annotators")
    if len(items) < 3:
        raise ValueError(f"agreement needs items rated by every annotator; {len(items)} are")
    annotators = list(ratings)
    matrix = _matrix(ratings, items)
    pairs = [
        {"annotators": [a, b], **pair_statistics(matrix[i], matrix[j])}
        for (i, a), (j, b) in itertools.combinations(enumerate(annotators), 2)
    ]
    report: dict[str, Any] = {
        "annotators": annotators,
        "items": len(items),
        "pairs": pairs,
        "fleiss_kappa": fleiss_kappa(matrix) if np.unique(matrix).size > 1 else None,
        "krippendorff_alpha_interval": krippendorff_alpha(matrix),
    }
    if report["fleiss_kappa"] is None:
        report["fleiss_kappa_note"] = FLEISS_UNDEFINED
    if report["krippendorff_alpha_interval"] is None:
        report["krippendorff_alpha_interval_note"] = alpha_undefined(matrix)
    if reference is not None:
        gold = np.array([reference[i] for i in items], dtype=float)
        report["vs_reference"] = [
            {"annotator": a, **pair_statistics(matrix[k], gold)} for k, a in enumerate(annotators)
        ]
        mean = matrix.mean(axis=0)
        report["mean_rating_vs_reference"] = pair_statistics(np.rint(mean), gold)
    return report


def agreement_markdown(report: Mapping[str, Any]) -> str:
    """The agreement report as Markdown tables."""
    lines = [
        f"{len(report['annotators'])} annotators, {report['items']} items rated by all.",
        "",
        "| annotators | accuracy | Pearson | Spearman | Cohen's κ |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for pair in report["pairs"]:
        lines.append(
            f"| {' / '.join(pair['annotators'])} | {pair['accuracy']:.3f} | {pair['pearson']:.3f} | "
            f"{pair['spearman']:.3f} | {pair['cohen_kappa']:.3f} |"
        )
    for row in report.get("vs_reference", []):
        lines.append(
            f"| {row['annotator']} / intended | {row['accuracy']:.3f} | {row['pearson']:.3f} | "
            f"{row['spearman']:.3f} | {row['cohen_kappa']:.3f} |"
        )

    def overall(name: str) -> str:
        value = report[name]
        return f"{value:.3f}" if value is not None else report.get(f"{name}_note", "not defined")

    lines += [
        "",
        f"Fleiss' κ {overall('fleiss_kappa')}; Krippendorff's α (interval) "
        f"{overall('krippendorff_alpha_interval')}.",
    ]
    return "\n".join(lines)


def ordinal_weights(categories: Sequence[float]) -> np.ndarray:
    """Gwet's ordinal weights: ``1 - M(k, l) / max M`` with ``M = C(|rank k - rank l| + 1, 2)``."""
    ranks = np.arange(len(categories))
    distance = np.abs(ranks[:, None] - ranks[None, :])
    m = distance * (distance + 1) / 2
    return 1 - m / m.max() if m.max() else np.ones_like(m, dtype=float)


def gwet_ac2(matrix: np.ndarray, categories: Sequence[float], weights: np.ndarray | None = None) -> float:
    """Gwet's AC2 (AC1 with identity weights) for items x raters, NaN where a rater gave no rating.

    Stable where ratings cluster on a few categories, unlike kappa/alpha (HTEB reports it). The estimate
    of Gwet (2014, ch. 3, eqs. 3.5-3.8): agreement over the items two or more raters rated, chance agreement
    from the categories' mean shares over the items one or more rated.
    """
    categories = list(categories)
    w = ordinal_weights(categories) if weights is None else np.asarray(weights, dtype=float)
    q = len(categories)
    counts = np.stack([(matrix == c).sum(axis=1) for c in categories], axis=1).astype(float)  # items x q
    rated = counts.sum(axis=1)
    if np.any(~np.isnan(matrix) & ~np.isin(matrix, categories)):
        raise ValueError(f"ratings outside the categories {categories}")
    pairs = rated >= 2
    if not pairs.any():
        raise ValueError("AC2 needs items rated by two or more raters")
    weighted = counts @ w.T  # r*_ik = sum_l w_kl r_il
    pa = np.mean((counts[pairs] * (weighted[pairs] - 1)).sum(axis=1) / (rated[pairs] * (rated[pairs] - 1)))
    shares = (counts[rated >= 1] / rated[rated >= 1, None]).mean(axis=0)
    pe = w.sum() / (q * (q - 1)) * float((shares * (1 - shares)).sum())
    return float((pa - pe) / (1 - pe)) if pe != 1 else 1.0
