"""``export_report.json``: the deployment tiers the ``export`` stage made and what each costs."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import StageReport


class ExportReport(StageReport):
    """The export of one model (:func:`skadapt.export.stage.export_tiers` writes it).

    Attributes:
        parent: The model the tiers came from (relative to the run when inside it).
        tiers: Tier name -> its path relative to the export directory.
        speed: Tier (and ``pytorch``) -> its measurements (``texts_per_s``, ``speedup``, ``size_mb``, ...).
        dims: Matryoshka tier -> ``{dimension, bytes_per_vector, size_mb, path}`` (it runs its parent's
            encoder: no speed row of its own).
    """

    FILE = "export_report.json"

    parent: str
    tiers: dict[str, str]
    speed: dict[str, dict[str, Any]]
    dims: dict[str, dict[str, Any]] = Field(default_factory=dict)
