"""``renorm_report.json``: how the ``renorm`` stage estimated mu, and which method it chose.

The stage builds these models and writes them (:func:`skadapt.renorm.stage.renormalize`); the fields are in
the order the file holds them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import Part, StageReport


class Candidate(Part):
    """One method scored on the dev sets: its score per set and their mean."""

    name: str
    scores: dict[str, float | None]
    mean: float | None


class Selection(Part):
    """The dev-set choice between none, R1 and R2.

    Attributes:
        metrics: Dev set name -> the metric it is scored on.
        candidates: One per method, in the stage's order of preference on a tie (none, r1, r2).
        choice: The kept candidate (``none``, ``r1`` or ``r2``).
        sets: Per dev set: name, kind, source, rows read, examples scored, rows dropped (by reason, and
            those holding an evaluation test text, by task).
    """

    metrics: dict[str, str]
    candidates: list[Candidate]
    choice: str
    sets: list[dict[str, Any]] = Field(default_factory=list)


class RenormReport(StageReport):
    """What a renormalization did (:func:`skadapt.renorm.stage.renormalize` writes it and returns it).

    Attributes:
        method: The method the output model carries (``none``: the stage kept its input, ``kept`` False).
        kept: Whether the stage made a model.
        corpus: The corpus mu was estimated on; ``samples`` sentences of a ``pool`` from ``documents`` texts.
        prompt: The prompt setting (``none``, ``query``, ``passage``); ``prompt_text`` the string it is.
        dropped_eval_overlap: Sentences left out because evaluation data holds them.
        mu_norm, mean_cos_to_mu_before, mean_cos_to_mu_after: The size of the mean and what removing it did.
        dimension: The embedding dimension.
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
    seed: int
    selection: Selection | None = None
    seconds: dict[str, float] | None = None


class RenormSummary(Part):
    """The part of the ``renorm`` stage's manifest ``result`` the run's summary prints (the stage records
    its whole report there)."""

    selection: Selection | None = None
