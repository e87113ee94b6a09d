"""``export_report.json``: the deployment tiers the ``export`` stage made and what each costs."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import Part, StageReport


class DimsTier(Part):
    """One dims tier: the parent reduced to ``dimension`` components (``basis``: ``corpus``, the top
    directions of its corpus embeddings, or ``first``, truncation) and renormalized."""

    dimension: int
    basis: str = "first"
    bytes_per_vector: int
    size_mb: float
    path: str


class StaticTier(Part):
    """How the static tier was made: ``method`` ``distilled`` (model2vec alone) or ``trained`` (on the
    parent)."""

    method: str = "distilled"


class ExportReport(StageReport):
    """The export of one model (:func:`skadapt.export.stage.export_tiers` writes it).

    Attributes:
        parent: The model the tiers came from (relative to the run when inside it).
        tiers: Tier name -> its path relative to the export directory.
        speed: Tier (and ``pytorch``) -> its measurements (``texts_per_s``, ``speedup``, ``size_mb``, ...).
        dims: Dims tier -> what it is (it runs its parent's encoder: no speed row of its own).
        static: How the static tier was made, None without one.
    """

    FILE = "export_report.json"

    parent: str
    tiers: dict[str, str]
    speed: dict[str, dict[str, Any]]
    dims: dict[str, DimsTier] = Field(default_factory=dict)
    static: StaticTier | None = None
