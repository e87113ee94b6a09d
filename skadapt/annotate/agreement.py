"""Agreement between annotators, with the libraries' own implementations: scipy (Pearson, Spearman),
sklearn (Cohen's kappa), statsmodels (Fleiss' kappa) and krippendorff (alpha).

A statistic that is 0/0 on the ratings at hand (a constant rating vector, one category only) is "not
defined": ``None`` beside a ``<name>_note`` with the reason (:func:`put`), never NaN (JSON has none).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

Ratings = Mapping[str, Mapping[str, float]]
"""annotator -> item id -> rating."""

NOT_DEFINED = "not defined"


def defined(statistic: Callable[[], float | None], reason: str | None) -> tuple[float | None, str | None]:
    """Run a statistic: ``(value, None)``, or ``(None, "not defined: <reason>")`` where it gives NaN or None.

    The libraries' warnings about such input (scipy's constant input, sklearn's single label, numpy's 0/0)
    are not shown; the note says it.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        value = statistic()
    if value is None or math.isnan(value):
        return None, f"{NOT_DEFINED}: {reason or '0/0 on these ratings'}"
    return float(value), None


def put(target: dict[str, Any], name: str, statistic: Callable[[], float | None], reason: str | None) -> None:
    """``target[name]`` = the statistic; or None, and ``target[name + "_note"]`` says why (``defined``)."""
    target[name], note = defined(statistic, reason)
    if note is not None:
        target[f"{name}_note"] = note


def shown(value: float | None, note: str | None = None, digits: int = 3) -> str:
    """A statistic as a sentence shows it: the number, or its "not defined" note."""
    return f"{value:.{digits}f}" if value is not None else note or NOT_DEFINED


class Notes:
    """Table cells of statistics: the number, or "not defined" with the note kept for a line below the
    table (one line per row and reason, naming the statistics it applies to)."""

    def __init__(self) -> None:
        self._notes: dict[tuple[str, str], list[str]] = {}

    def cell(self, value: float | None, note: str | None, row: str, column: str, digits: int = 3) -> str:
        """``value`` formatted, or "not defined" (``note`` is kept under ``row`` and ``column``)."""
        if value is not None:
            return f"{value:.{digits}f}"
        self._notes.setdefault((row, note or NOT_DEFINED), []).append(column)
        return NOT_DEFINED

    def lines(self) -> list[str]:
        """``- row: columns not defined: reason`` for each row and reason, in the order met."""
        return [f"- {row}: {', '.join(columns)} {note}" for (row, note), columns in self._notes.items()]


def one_value(named: Mapping[str, Sequence[Any] | np.ndarray], what: str = "rating value") -> str:
    """Why a correlation or kappa of these vectors is 0/0: the ones with a single value, e.g. ``"one rating
    value only (B: 4)"``."""
    constant = [
        f"{name}: {_text(np.unique(np.asarray(values))[0])}"
        for name, values in named.items()
        if np.unique(np.asarray(values)).size == 1
    ]
    return f"one {what} only ({', '.join(constant)})" if constant else "0/0 on these ratings"


def _text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, int | float | np.number) else str(value)


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


def pair_statistics(x: np.ndarray, y: np.ndarray, names: tuple[str, str] = ("x", "y")) -> dict[str, Any]:
    """Exact agreement, Pearson, Spearman and Cohen's kappa of two rating vectors; each one that is not
    defined (a constant vector) None with a ``<name>_note`` naming who gave one value only.

    Raises:
        ValueError: A rating is not a whole number (see ``_integer_categories``).
    """
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import cohen_kappa_score

    categories = _integer_categories(x, "Cohen's kappa"), _integer_categories(y, "Cohen's kappa")
    reason = one_value(dict(zip(names, (x, y), strict=True)))
    result: dict[str, Any] = {"accuracy": float(np.mean(x == y))}
    put(result, "pearson", lambda: pearsonr(x, y).statistic, reason)
    put(result, "spearman", lambda: spearmanr(x, y).statistic, reason)
    put(result, "cohen_kappa", lambda: cohen_kappa_score(*categories), reason)
    return result


def fleiss_kappa(matrix: np.ndarray) -> float:
    """Fleiss' kappa of an annotators x items matrix of integer categories (NaN where every rating is the
    same: chance agreement is 1, 0/0).

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
        return "no item is rated by two or more annotators"
    if values.size == 1:
        return (
            f"every rating of the items rated by two or more annotators is {values[0]:g}, so "
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
        {"annotators": [a, b], **pair_statistics(matrix[i], matrix[j], (a, b))}
        for (i, a), (j, b) in itertools.combinations(enumerate(annotators), 2)
    ]
    report: dict[str, Any] = {"annotators": annotators, "items": len(items), "pairs": pairs}
    put(report, "fleiss_kappa", lambda: fleiss_kappa(matrix), one_value({"all annotators": matrix}))
    put(report, "krippendorff_alpha_interval", lambda: krippendorff_alpha(matrix), alpha_undefined(matrix))
    if reference is not None:
        gold = np.array([reference[i] for i in items], dtype=float)
        report["vs_reference"] = [
            {"annotator": a, **pair_statistics(matrix[k], gold, (a, "intended"))}
            for k, a in enumerate(annotators)
        ]
        mean = matrix.mean(axis=0)
        report["mean_rating_vs_reference"] = pair_statistics(np.rint(mean), gold, ("mean rating", "intended"))
    return report


def agreement_markdown(report: Mapping[str, Any]) -> str:
    """The agreement report as Markdown tables; below them, why a statistic is not defined."""
    notes = Notes()

    def row(label: str, source: Mapping[str, Any]) -> str:
        stats = " | ".join(
            notes.cell(source[name], source.get(f"{name}_note"), label, title)
            for name, title in (
                ("pearson", "Pearson"),
                ("spearman", "Spearman"),
                ("cohen_kappa", "Cohen's κ"),
            )
        )
        return f"| {label} | {source['accuracy']:.3f} | {stats} |"

    def overall(name: str) -> str:
        return shown(report[name], report.get(f"{name}_note"))

    lines = [
        f"{len(report['annotators'])} annotators, {report['items']} items rated by all.",
        "",
        "| annotators | accuracy | Pearson | Spearman | Cohen's κ |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(row(" / ".join(pair["annotators"]), pair) for pair in report["pairs"]),
        *(row(f"{r['annotator']} / intended", r) for r in report.get("vs_reference", [])),
    ]
    lines += ["", *notes.lines()] if notes.lines() else []
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
    from the categories' mean shares over the items one or more rated. NaN where it is not defined
    (:func:`ac2_undefined` says why).
    """
    categories = list(categories)
    w = ordinal_weights(categories) if weights is None else np.asarray(weights, dtype=float)
    q = len(categories)
    counts = np.stack([(matrix == c).sum(axis=1) for c in categories], axis=1).astype(float)  # items x q
    rated = counts.sum(axis=1)
    if np.any(~np.isnan(matrix) & ~np.isin(matrix, categories)):
        raise ValueError(f"ratings outside the categories {categories}")
    pairs = rated >= 2
    if not pairs.any() or q < 2:
        return math.nan
    weighted = counts @ w.T  # r*_ik = sum_l w_kl r_il
    pa = np.mean((counts[pairs] * (weighted[pairs] - 1)).sum(axis=1) / (rated[pairs] * (rated[pairs] - 1)))
    shares = (counts[rated >= 1] / rated[rated >= 1, None]).mean(axis=0)
    pe = w.sum() / (q * (q - 1)) * float((shares * (1 - shares)).sum())
    return float((pa - pe) / (1 - pe)) if pe != 1 else math.nan


def ac2_undefined(matrix: np.ndarray) -> str:
    """Why Gwet's AC2 of items x raters is NaN: no item rated twice (no agreement to measure), else chance
    agreement 1 (a scale of one category, or weights that count every pair as agreeing: 0/0)."""
    if not ((~np.isnan(np.asarray(matrix, dtype=float))).sum(axis=1) >= 2).any():
        return "no item is rated by two or more raters"
    return "chance agreement is 1 (0/0)"
