"""``renorm_report.json``: how the ``renorm`` stage estimated mu, and which method it chose.

The stage builds these models and writes them (:func:`skadapt.renorm.stage.renormalize`); the fields are in
the order the file holds them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import Part, StageReport, StageResult
from skadapt.results.dev import DevSetPower


class Candidate(Part):
    """One candidate scored on the dev sets: its score per set, their mean, and how it compares to none.

    Attributes:
        name: ``none``, ``r1``, ``r2``, ``proj-<d>`` (the corpus-basis projection to ``d``) or
            ``r1+proj-<d>`` / ``r2+proj-<d>`` (renormalized, then projected on the basis of the
            renormalized embeddings).
        scores: Dev set name -> its main metric (as its evaluator computes it on the full set).
        mean: The mean of ``scores``.
        dimension: The candidate's embedding dimension.
        difference: ``mean`` minus none's mean (None for none itself).
        interval: The paired bootstrap interval of ``difference`` (lower end: the one-sided bound at the
            selection's per-candidate level); None for none.
        beats_none: Whether the lower end is above 0: better than none beyond the noise.
        lower_bounds: The one-sided lower bounds of ``difference`` at 90% and 95% (``"90%"``, ``"95%"``),
            beside the selection's stricter level: how far a candidate is from beating none; None for none.
    """

    name: str
    scores: dict[str, float | None]
    mean: float | None
    dimension: int | None = None
    difference: float | None = None
    interval: list[float] | None = None
    beats_none: bool = False
    lower_bounds: dict[str, float] | None = None


class Selection(Part):
    """The dev-set choice between none, R1, R2 and the corpus-basis projections.

    Attributes:
        metrics: Dev set name -> the metric it is scored on.
        candidates: In the stage's order of preference on a tie (none, r1, r2, proj-<d> by decreasing d,
            r1+proj-<d>, r2+proj-<d>).
        choice: The kept candidate: the best mean among those that beat none beyond the noise, else ``none``.
        reason: Why, in words (the difference to none with its interval, or that nothing beat the noise).
        confidence: The family-wise one-sided confidence of "beats none" over all candidates (Bonferroni:
            each candidate's bound is at ``1 - (1 - confidence) / (candidates - 1)``).
        replicates: Paired bootstrap resamples of the dev examples.
        basis: What the projection basis was fitted on (training-side corpus sentences, prompts, energy
            kept), or None without projection candidates.
        sets: Per dev set: name, kind, source, rows read, examples scored, rows dropped (by reason, and
            those holding an evaluation test text, by task).
        power: Per dev set, its power for the input model (none), and ``saturated_for_all``: every
            candidate at the metric's top on it.
    """

    metrics: dict[str, str]
    candidates: list[Candidate]
    choice: str
    reason: str = ""
    confidence: float | None = None
    replicates: int | None = None
    basis: dict[str, Any] | None = None
    sets: list[dict[str, Any]] = Field(default_factory=list)
    power: list[DevSetPower] = Field(default_factory=list)


class RenormReport(StageReport):
    """What a renormalization did (:func:`skadapt.renorm.stage.renormalize` writes it and returns it).

    Attributes:
        method: The candidate the output model carries (``r1``, ``r2``, ``proj-<d>``, ``r2+proj-<d>``, ...;
            ``none``: the stage kept its input, ``kept`` False).
        kept: Whether the stage made a model.
        corpus: The corpus mu was estimated on; ``samples`` sentences of a ``pool`` from ``documents`` texts.
        prompt: The prompt setting (``none``, ``query``, ``passage``); ``prompt_text`` the string it is.
        dropped_eval_overlap: Sentences left out because evaluation data holds them.
        mu_norm, mean_cos_to_mu_before, mean_cos_to_mu_after: The size of the mean and what removing it did
            (after the renormalization, before any projection).
        dimension: The input model's embedding dimension; ``output_dimension`` the output model's.
        seed: The sample's seed.
        selection: The dev-set choice, or None (``select: method``).
        seconds: Wall time of reading and sampling the corpus (``sample``) and of encoding it (``encode``).
    """

    FILE = "renorm_report.json"

    method: str
    kept: bool
    corpus: str
    prompt: str
    prompt_text: str
    samples: int
    pool: int
    documents: int
    dropped_eval_overlap: int
    mu_norm: float
    mean_cos_to_mu_before: float
    mean_cos_to_mu_after: float
    dimension: int
    output_dimension: int | None = None
    seed: int
    selection: Selection | None = None
    seconds: dict[str, float] | None = None


class RenormSummary(StageResult):
    """The part of the ``renorm`` stage's manifest ``result`` the run's summary prints (the stage records
    its whole report there)."""

    selection: Selection | None = None
