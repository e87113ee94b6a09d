"""The power of a dev set for a model, as the ``finetune`` and ``renorm`` reports record it
(:mod:`skadapt.tasks.dev_power` computes it)."""

from __future__ import annotations

from skadapt.results.base import Part


class DevSetPower(Part):
    """How well one dev set can tell models apart, measured on one model (the one the stage starts from).

    Attributes:
        name: The set's evaluator name (as in the report's ``sets``).
        kind: Its kind (``sts``, ``retrieval``, ``triplets``, ...).
        size: Examples scored: pairs, queries or triplets.
        metric: The key of its main score in the evaluator's results.
        score: The model's main score on it (None: the kind has no per-example scores).
        se: The score's bootstrap standard error.
        mde: The smallest difference it detects with 80% power at alpha 0.05 (two-sided).
        chance: The score of a model that ranks at random (None: unknown for the kind).
        saturated: No room above the score for a difference as large as ``mde``.
        below_chance: ``score`` is below ``chance``.
        saturated_for_all: Every candidate the stage scored on it is at the metric's top, so it chose
            nothing (None: not checked).
        summary: One line for people.
    """

    name: str
    kind: str
    size: int
    metric: str = ""
    score: float | None = None
    se: float | None = None
    mde: float | None = None
    chance: float | None = None
    saturated: bool = False
    below_chance: bool = False
    saturated_for_all: bool | None = None
    summary: str = ""
