"""``renorm_report.json``: how the ``renorm`` stage estimated mu, and which method it chose."""

from __future__ import annotations

from skadapt.results.base import Part, StageReport


class Candidate(Part):
    """One method scored on the dev sets: its score per set and their mean."""

    name: str
    scores: dict[str, float | None]
    mean: float | None


class Selection(Part):
    """The dev-set choice between none, R1 and R2."""

    choice: str
    candidates: list[Candidate]


class RenormReport(StageReport):
    """What a renormalization did (:func:`skadapt.renorm.stage.renormalize` writes it).

    Attributes:
        method: The method the output model carries (``none``: the stage kept its input, ``kept`` False).
        kept: Whether the stage made a model.
        corpus: The corpus mu was estimated on; ``samples`` sentences of a ``pool`` from ``documents`` texts.
        prompt_text: The prompt the sample was encoded with.
        dropped_eval_overlap: Sentences left out because evaluation data holds them.
        mu_norm, mean_cos_to_mu_before, mean_cos_to_mu_after: The size of the mean and what removing it did.
        seed: The sample's seed.
        selection: The dev-set choice, or None (``select: method``).
    """

    FILE = "renorm_report.json"

    method: str
    kept: bool
    corpus: str
    prompt_text: str
    samples: int
    pool: int
    documents: int
    dropped_eval_overlap: int
    mu_norm: float
    mean_cos_to_mu_before: float
    mean_cos_to_mu_after: float
    seed: int
    selection: Selection | None = None


class RenormSummary(Part):
    """The part of the ``renorm`` stage's manifest ``result`` the run's summary prints (the stage records
    its whole report there)."""

    selection: Selection | None = None
