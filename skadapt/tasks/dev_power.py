"""The power of the dev sets: how small a difference each can detect, and whether it can tell models apart.

Every choice made on the dev sets (the best checkpoint, WiSE-FT's coefficient, a renormalization) is only as
good as the sets' power to tell two models apart. For one model, each set is encoded once
(:func:`skadapt.tasks.dev_scores.encode_dev_set`) and gets:

- its main score and the score's **standard error**: the standard deviation of the score over bootstrap
  resamples of its examples (:data:`REPLICATES`, seeded);
- its **minimum detectable effect** ``mde = (1.96 + 0.84) * sqrt(2) * se``: the smallest difference between
  two models it detects with 80% power at alpha 0.05 (two-sided). This treats the two models' errors as
  independent, each with this ``se``: the stages compare models paired on the same examples, whose
  difference has a smaller standard error when their errors correlate, so it is conservative;
- its **chance level** (:data:`CHANCE`): what a model that ranks at random scores;
- two flags: ``saturated`` when ``1 - score < mde / 2`` (1: every metric's top): less than half the
  smallest difference the set detects is left above the score, so a better model has almost nowhere to
  show it (a set at 1.000 has no room at all; a set far from the top that detects only large differences
  is low-powered, which its ``mde`` says, not saturated); ``below_chance`` when ``score < chance``.

Without a model (the preflight), :func:`size_mde` estimates the ``mde`` from the kind and size alone.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from skadapt.results.dev import DevSetPower
from skadapt.tasks.dev_scores import (
    EncodedSet,
    encode_dev_set,
    example_values,
    replicate_metrics,
    resamples,
    set_metric,
)

if TYPE_CHECKING:
    from skadapt.tasks.dev import DevSet

log = logging.getLogger(__name__)

REPLICATES = 1000
"""Bootstrap resamples of each set's examples for its standard error."""
Z_ALPHA, Z_POWER = 1.96, 0.84
"""Two-sided alpha 0.05; power 0.8."""
MDE_FACTOR = (Z_ALPHA + Z_POWER) * math.sqrt(2)
TOP = 1.0
"""Every dev metric's maximum (Spearman, accuracy, average precision, nDCG@10, F1)."""
AT_TOP = 1e-6
"""How close to :data:`TOP` a score (reports round to 6 digits) counts as at the top."""
NDCG_AT = 10
TYPICAL_ACCURACY = 0.75
TYPICAL_SPEARMAN = 0.75
SPEARMAN_Z_VARIANCE = 1.06
"""Fieller, Hartley and Pearson (1957): Fisher's z of a Spearman correlation has variance ~1.06 / (n - 3)."""
QUERY_SD = 0.3
"""The standard deviation of a query's nDCG@10 the size-only estimate assumes."""
ACCURACY_LIKE = ("triplets", "nli", "rte", "bitext", "classification")
"""Kinds whose size-only estimate treats the score as a binomial share at :data:`TYPICAL_ACCURACY`."""

METRICS = {
    "sts": "Spearman",
    "retrieval": "nDCG@10",
    "triplets": "accuracy",
    "nli": "accuracy",
    "rte": "AP",
    "bitext": "F1",
    "classification": "accuracy",
    "clustering": "V-measure",
}
"""Kind -> its main metric in words."""
UNITS = {
    "sts": "pairs",
    "rte": "pairs",
    "bitext": "pairs",
    "retrieval": "queries",
    "triplets": "triplets",
    "nli": "triplets",
}
"""Kind -> what its examples are (other kinds: ``examples``)."""
ADVICE = {
    "retrieval": "add distractor passages or a larger set",
    "triplets": "use harder negatives or a larger set",
    "nli": "use a larger set or harder contradictions",
    "bitext": "add distractor sentences or a larger set",
}
"""Kind -> what makes a saturated set useful again (other kinds: a harder or larger set)."""
BELOW_CHANCE_ADVICE = {
    "triplets": "its negatives look closer than its positives; check that the positive and negative columns "
    "are not swapped, and the prompts",
    "nli": "check its label_map (entailment and contradiction swapped?) and the prompts",
    "rte": "check its label_map (what is entailment?) and the prompts",
    "sts": "check its score column and score_range (similarity, not distance?)",
}
"""Kind -> what to check when a model scores below chance (other kinds: its columns and labels)."""


def _positive_share(encoded: EncodedSet) -> float | None:
    return None if encoded.gold is None else float(np.mean(encoded.gold))


def _majority_share(encoded: EncodedSet) -> float | None:
    if encoded.gold is None or not len(encoded.gold):
        return None
    _, counts = np.unique(encoded.gold, return_counts=True)
    return float(counts.max() / counts.sum())


def random_ndcg(relevant: int, corpus: int, k: int = NDCG_AT) -> float:
    """The expected nDCG@k of a random ranking of ``corpus`` texts of which ``relevant`` are relevant
    (binary gains): each of the top ``min(k, corpus)`` places holds a relevant text with probability
    ``relevant / corpus``, so E[DCG] is that times the discounts' sum (exact, by linearity)."""
    if relevant <= 0 or corpus <= 0:
        return 0.0
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = relevant / corpus * float(discounts[: min(k, corpus)].sum())
    return dcg / float(discounts[: min(relevant, k)].sum())


def _random_retrieval(encoded: EncodedSet) -> float | None:
    if encoded.relevant is None or "corpus" not in encoded.embeddings:
        return None
    corpus = len(encoded.embeddings["corpus"])
    return float(np.mean([random_ndcg(len(r), corpus) for r in encoded.relevant]))


def _one_in_targets(encoded: EncodedSet) -> float | None:
    targets = encoded.embeddings.get("second")
    return None if targets is None or not len(targets) else 1.0 / len(targets)


CHANCE: dict[str, Callable[[EncodedSet], float | None]] = {
    "triplets": lambda _: 0.5,
    "nli": lambda _: 0.5,
    "rte": _positive_share,
    "sts": lambda _: 0.0,
    "retrieval": _random_retrieval,
    "bitext": _one_in_targets,
    "classification": _majority_share,
    "clustering": lambda _: 0.0,
}
"""Kind -> the chance level of a set of that kind: triplets/nli 0.5; rte the share of entailed pairs (the
average precision of random scores); sts 0 (no correlation); retrieval the expected nDCG@10 of a random
ranking of its corpus (:func:`random_ndcg`, averaged over the queries); bitext 1/n of its n targets (the
accuracy of a random match); classification the majority class's share; clustering 0. A kind not listed
has no chance level (its ``below_chance`` is never set)."""


def chance_level(kind: str, encoded: EncodedSet) -> float | None:
    """The chance level of ``encoded`` as a set of ``kind`` (see :data:`CHANCE`); None for another kind."""
    level = CHANCE.get(kind)
    return None if level is None else level(encoded)


def mde_of(se: float) -> float:
    """The smallest difference detectable with 80% power at alpha 0.05 (two-sided) between two models each
    scored with standard error ``se``, their errors taken as independent (conservative when paired)."""
    return MDE_FACTOR * se


def _saturated(score: float, mde: float | None) -> bool:
    """Whether the room above ``score`` is less than half of ``mde`` (None: only a score at the top is)."""
    return TOP - score < max((mde or 0.0) / 2, AT_TOP)


def at_top_everywhere(scores: Iterable[float | None]) -> bool:
    """Whether every score given is at the metric's top (and there is one): the set ranked no candidate."""
    found = [s for s in scores if s is not None]
    return bool(found) and all(s >= TOP - AT_TOP for s in found)


def _label(name: str, kind: str) -> str:
    """``dev set retrieval-1``; a name without its kind gets it: ``dev set dev (retrieval)``."""
    return f"dev set {name}" if kind in name else f"dev set {name} ({kind})"


def _summary(power: DevSetPower) -> str:
    unit = UNITS.get(power.kind, "examples")
    head = f"{power.name}: {power.size} {unit}"
    if power.score is None:
        return f"{head}, no per-example scores for kind {power.kind}: power not computed"
    head += f", {METRICS.get(power.kind, 'score')} {power.score:.3f}"
    if power.se is not None and power.mde is not None and power.se > 0:
        head += f" ± {power.se:.3f} (se), detects differences >= {power.mde:.2g}"
    flags = []
    if power.saturated:
        flags.append("SATURATED, cannot rank candidates")
    if power.below_chance and power.chance is not None:
        flags.append(f"BELOW CHANCE ({power.chance:.3f})")
    return f"{head}: {'; '.join(flags)}" if flags else f"{head}; ok"


def set_power(
    encoded: EncodedSet,
    kind: str | None = None,
    *,
    replicates: int = REPLICATES,
    seed: int = 0,
) -> DevSetPower:
    """The power of one encoded dev set (see the module docstring).

    Args:
        encoded: The set as the model encoded it.
        kind: Its kind as configured (``nli`` is encoded as ``triplets``); None: ``encoded.kind``.
        replicates: Bootstrap resamples for the standard error.
        seed: Seed of the resamples.
    """
    kind = kind or encoded.kind
    values = example_values(encoded)
    score = set_metric(encoded, values)
    (indices,) = resamples([encoded], replicates, seed)
    spread = replicate_metrics(encoded, values, indices)
    spread = spread[np.isfinite(spread)]
    se = float(np.std(spread, ddof=1)) if len(spread) > 1 else None
    mde = None if se is None else mde_of(se)
    chance = chance_level(kind, encoded)
    power = DevSetPower(
        name=encoded.name,
        kind=kind,
        size=encoded.size,
        metric=encoded.metric,
        score=round(score, 6),
        se=None if se is None else round(se, 6),
        mde=None if mde is None else round(mde, 6),
        chance=None if chance is None else round(chance, 6),
        saturated=_saturated(score, mde),
        below_chance=chance is not None and score < chance,
    )
    power.summary = _summary(power)
    return power


def _kind(dev_set: DevSet) -> str | None:
    return dev_set.report[0].get("kind") if len(dev_set.report) == 1 else None


def dev_power(
    model: Any,
    sets: list[DevSet],
    batch_size: int = 32,
    *,
    replicates: int = REPLICATES,
    seed: int = 0,
) -> list[DevSetPower]:
    """The power of each built dev set (:func:`skadapt.tasks.dev.build_dev_sets`, or a combined one's
    :attr:`~skadapt.tasks.dev.DevSet.sets`) for ``model``: each set encoded once; its score, standard error,
    ``mde``, chance level and flags (see the module docstring). A set of a kind without per-example scores
    gets an entry without them.
    """
    found = []
    for dev_set in sets:
        kind = _kind(dev_set)
        try:
            encoded = encode_dev_set(model, dev_set, batch_size)
        except TypeError:  # a kind dev_scores does not score per example
            name = getattr(dev_set.evaluator, "name", "") or "dev"
            entry = DevSetPower(name=name, kind=kind or "unknown", size=dev_set.size, metric=dev_set.metric)
            entry.summary = _summary(entry)
            found.append(entry)
            continue
        found.append(set_power(encoded, kind, replicates=replicates, seed=seed))
    for entry in found:
        log.info("dev power: %s", entry.summary)
    return found


def flag_lines(power: list[DevSetPower], who: str) -> list[str]:
    """One line per flag raised for ``who`` (e.g. ``the starting model``), in the words the log gives."""
    lines = []
    for entry in power:
        if entry.score is None:
            continue
        label, metric = _label(entry.name, entry.kind), METRICS.get(entry.kind, "score")
        if entry.saturated:
            room = TOP - entry.score
            why = (
                f"{metric} {entry.score:.3f}"
                if room <= AT_TOP
                else f"{metric} {entry.score:.3f}: {room:.3f} below the top, less than half the "
                f"{entry.mde:.2g} it can detect"
            )
            advice = ADVICE.get(entry.kind, "use a harder or larger set")
            lines.append(f"{label} is saturated for {who} ({why}): it cannot tell candidates apart; {advice}")
        if entry.below_chance and entry.chance is not None:
            advice = BELOW_CHANCE_ADVICE.get(entry.kind, "check its columns and labels, and the prompts")
            lines.append(
                f"{label} scores below chance for {who} ({metric} {entry.score:.3f}, chance "
                f"{entry.chance:.3f}): {advice}"
            )
    return lines


def saturated_for_all_line(entry: DevSetPower, candidates: str) -> str:
    """The warning for a set at the metric's top for every one of ``candidates`` (e.g. ``"all 9
    candidates"``)."""
    return (
        f"{_label(entry.name, entry.kind)} scored the top ({METRICS.get(entry.kind, 'score')} 1.000) for "
        f"{candidates}: it chose nothing; {ADVICE.get(entry.kind, 'use a harder or larger set')}"
    )


def size_mde(kind: str, size: int) -> float | None:
    """The ``mde`` a set of ``kind`` and ``size`` examples would have for a typical model (no model needed):

    - accuracy-like kinds (:data:`ACCURACY_LIKE`: a share of examples right, or a score that behaves like
      one): a binomial share at 0.75, ``se = sqrt(0.75 * 0.25 / n)``;
    - sts: a Spearman correlation of 0.75 through Fisher's z, ``se = (1 - 0.75^2) * sqrt(1.06 / (n - 3))``;
    - retrieval: each query's nDCG@10 bounded in [0, 1] with standard deviation 0.3, ``se = 0.3 / sqrt(n)``.

    None for another kind (clustering's score is not made of per-example parts) or too few examples.
    """
    if size <= 0:
        return None
    if kind in ACCURACY_LIKE:
        se = math.sqrt(TYPICAL_ACCURACY * (1 - TYPICAL_ACCURACY) / size)
    elif kind == "sts" and size > 3:
        se = (1 - TYPICAL_SPEARMAN**2) * math.sqrt(SPEARMAN_Z_VARIANCE / (size - 3))
    elif kind == "retrieval":
        se = QUERY_SD / math.sqrt(size)
    else:
        return None
    return mde_of(se)


def size_line(kind: str, size: int) -> str:
    """The size-only estimate in words, e.g. ``"dev sts (90 pairs): detects differences >= ~0.19"``."""
    head = f"dev {kind} ({size} {UNITS.get(kind, 'examples')})"
    mde = size_mde(kind, size)
    return head if mde is None else f"{head}: detects differences >= ~{mde:.2g}"
