"""``export_report.json``: the deployment tiers the ``export`` stage made and what each costs."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import Part, StageReport


class DimsTier(Part):
    """One dims tier: the parent reduced to ``dimension`` components (``basis``: ``corpus``, the top
    directions of its corpus embeddings, ``parallel``, those of the corpus and parallel text, or ``first``,
    truncation) and renormalized."""

    dimension: int
    basis: str = "first"
    bytes_per_vector: int
    size_mb: float
    path: str


class BasisCandidate(Part):
    """A basis for one dims tier as scored on the dev sets (main scores, 0-1)."""

    name: str
    scores: dict[str, float]
    """Dev set -> its main score."""
    mean: float
    difference: float | None = None
    """Its mean minus the default basis' (None for the default)."""
    interval: list[float] | None = None
    """Paired bootstrap interval of the difference (one-sided lower end at the report's confidence)."""
    beats_default: bool = False


class DimsChoice(Part):
    """The basis of the tier of ``dimension``: the candidates (none when not chosen on dev) and why."""

    dimension: int
    chosen: str
    reason: str
    candidates: list[BasisCandidate] = Field(default_factory=list)


class DimsBasisChoice(Part):
    """How the dims tiers' bases were chosen (:mod:`skadapt.export.dims_choice`).

    Attributes:
        mode: ``export.dims_basis`` (auto, corpus, parallel, first).
        default: The basis kept unless another beats it on dev (corpus, else parallel, else first).
        bases: Fitted basis -> what it was fitted on: texts (corpus), parallel_texts, prompts, seconds, the
            share of energy the top d keep, the dev texts left out of its text (``dropped_dev_overlap``).
        choices: Per tier dimension, the chosen basis, why, and each candidate's dev scores.
        dev_sets: The dev sets' reports (sizes, rows dropped), None when not chosen on dev.
    """

    mode: str = "corpus"
    default: str = "corpus"
    bases: dict[str, dict[str, Any]] = Field(default_factory=dict)
    choices: list[DimsChoice] = Field(default_factory=list)
    dev_sets: list[dict[str, Any]] | None = None
    confidence: float | None = None
    replicates: int | None = None
    seconds: float | None = None


class StaticTier(Part):
    """How the static tier was made: ``method`` ``distilled`` (model2vec alone) or ``trained`` (on the
    parent)."""

    method: str = "distilled"


class Int8Candidate(Part):
    """A variant as measured: speed-up over the PyTorch parent, dev score and agreement with the parent."""

    name: str
    settings: str
    speedup: float | None = None
    """Its texts/s over the parent's (None: not timed, no finalist on agreement and dev)."""
    texts_per_s: float | None = None
    dev: float | None = None
    """Mean main score of the dev sets, x100 (None without dev sets)."""
    agreement: float | None = None
    """Mean cosine of its embeddings to the parent's on the agreement texts (None without texts)."""


class Int8Choice(Part):
    """The kept variant and why (``worth``: True deployable, False not worth deploying, None not judged)."""

    kept: str
    family: str
    parent_dev: float | None
    agreement_texts: str
    candidates: list[Int8Candidate]
    worth: bool | None
    reason: str


class ExportReport(StageReport):
    """The export of one model (:func:`skadapt.export.stage.export_tiers` writes it).

    Attributes:
        parent: The model the tiers came from (relative to the run when inside it).
        tiers: Tier name -> its path relative to the export directory.
        speed: Tier (and ``pytorch``) -> its measurements (``texts_per_s``, ``speedup``, ``size_mb``, ...).
        dims: Dims tier -> what it is (it runs its parent's encoder: no speed row of its own).
        static: How the static tier was made, None without one.
        machine: Where the speed was measured: ``cpu`` (its name), ``cores``, ``family`` (int8's CPU family).
        int8: The int8 variants tried and the one kept, None without an int8 tier.
        dims_basis: How the dims tiers' bases were chosen, None without dims tiers.
        speed_rounds: How the speed rounds went: ``rounds`` run, ``max_rounds``, ``budget_s``, ``seconds``,
            ``why`` they stopped (``decided``, ``budget``, ``rounds``), the int8 ``finalists`` timed.
    """

    FILE = "export_report.json"

    parent: str
    tiers: dict[str, str]
    speed: dict[str, dict[str, Any]]
    dims: dict[str, DimsTier] = Field(default_factory=dict)
    static: StaticTier | None = None
    machine: dict[str, Any] = Field(default_factory=dict)
    int8: Int8Choice | None = None
    dims_basis: DimsBasisChoice | None = None
    speed_rounds: dict[str, Any] = Field(default_factory=dict)

    def deploy_notes(self, where: str = "this machine") -> dict[str, str]:
        """Tier -> a plain line, for each tier slower than its parent where it was measured and for the int8
        tier's verdict, e.g. ``onnx-int8: 0.85x of the PyTorch model on this machine (Intel Xeon, 16 cores,
        16 threads): slower, not worth deploying here``."""
        parts = [
            self.machine.get("cpu"),
            f"{self.machine['cores']} cores" if "cores" in self.machine else None,
        ]
        notes = {}
        for label, row in self.speed.items():
            speedup = row.get("speedup")
            if label == "pytorch" or not isinstance(speedup, int | float):
                continue
            threads = f"{row['threads']} threads" if row.get("threads") else None
            at = f"{where} ({', '.join(p for p in [*parts, threads] if p)})"
            if speedup < 1.0:
                notes[label] = (
                    f"{label}: {speedup:.2f}x of the PyTorch model on {at}: slower, not worth deploying here"
                )
            elif label == "onnx-int8" and self.int8 is not None:
                notes[label] = self._int8_note(label, speedup, at)
        return notes

    def _int8_note(self, label: str, speedup: float, at: str) -> str:
        assert self.int8 is not None
        kept = f"{label} (variant {self.int8.kept})"
        if self.int8.worth is False:
            return f"{kept}: {self.int8.reason}: not worth deploying"
        if self.int8.worth is None:
            return f"{kept}: {speedup:.2f}x the PyTorch model on {at}; {self.int8.reason}"
        dev = next(c.dev for c in self.int8.candidates if c.name == self.int8.kept)
        parent = self.int8.parent_dev
        delta = f", {dev - parent:+.2f} dev points" if dev is not None and parent is not None else ""
        return f"{kept}: {speedup:.2f}x the PyTorch model on {at}{delta}: worth deploying here"
